"""Corpus c of notebook 10 (decoder-only GPT): learner answers written blind, see the package."""

import math

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_my_gpt_block", "ex4_my_temperature_probs", "ex5_my_top_k_logits"
E4, E5, E6 = "ex6_my_top_p_probs", "ex7_my_sample", "ex8_my_generate_cached"

# ---------------------------------------------------------------- Exercise 1: the GPT block


class Ex1Base(nn.Module):
    """A learner's right __init__; each wrong answer below changes its forward."""

    def __init__(self, config):
        super().__init__()
        d, p = config.d_model, config.dropout
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=p)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, p, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(p)


class Ex1WrongNoFfnResidual(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        x = x + self.dropout(a)
        x = self.dropout(self.feed_forward(self.norm_2(x)))
        return x, w


class Ex1WrongOneNorm(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_1(h))), w


class Ex1WrongOwnCausalMask(Ex1Base):
    def forward(self, x, mask):
        own = attnlib.causal_mask(x.shape[1])  # build the causal mask here, to be safe
        a, w = self.attention(self.norm_1(x), mask=own)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongInvertedMask(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=~mask)  # True means blocked, I thought
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongFfnReadsStream(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(h)), w


class Ex1WrongDropoutOnInput(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.dropout(self.norm_1(x)), mask=mask)
        h = x + a
        return h + self.feed_forward(self.dropout(self.norm_2(h))), w


class Ex1WrongMeanHeads(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w.mean(dim=1)


class Ex1WrongNoAttentionDropout(Ex1Base):
    def __init__(self, config):
        super().__init__(config)
        self.attention = attnlib.MultiHeadAttention(config.d_model, config.num_heads)

    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1RightKeywords(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.d_model
        self.attention = attnlib.MultiHeadAttention(
            d_model=width, num_heads=config.num_heads, dropout=config.dropout
        )
        self.feed_forward = attnlib.FeedForward(
            d_model=width, d_ff=width * 4, dropout=config.dropout, activation="gelu"
        )
        self.norm_1, self.norm_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.dropout = nn.Dropout(p=config.dropout)

    def forward(self, x, mask):
        normed = self.norm_1(x)
        result = self.attention(normed, normed, normed, mask=mask)
        stream = x + self.dropout(result[0])
        stream = stream + self.dropout(self.feed_forward(self.norm_2(stream)))
        return stream, result[1]


class Ex1RightFunctionalDropout(Ex1Base):
    def forward(self, x, mask):
        attended, weights = self.attention(self.norm_1(x), mask=mask)
        p = self.dropout.p
        x = x + F.dropout(attended, p, self.training)
        x = x + F.dropout(self.feed_forward(self.norm_2(x)), p, self.training)
        return x, weights


# ------------------------------------------------------------ Exercise 4: temperature


def ex2_wrong_no_shift(logits, temperature):
    if temperature == 0:
        top = (logits == logits.max(dim=-1, keepdim=True).values).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    e = torch.exp(logits / temperature)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_argmax_at_zero(logits, temperature):
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    z = logits / temperature
    e = (z - z.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_multiplies(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(-1, keepdim=True)
    z = logits * temperature
    e = (z - z.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def ex2_wrong_tiny_temperature(logits, temperature):
    t = max(temperature, 1e-8)  # avoid dividing by zero
    z = logits / t
    e = torch.exp(z - z.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_global_max(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(-1, keepdim=True)
    z = logits / temperature
    e = torch.exp(z - z.max())  # the largest logit of the whole tensor
    return e / e.sum(-1, keepdim=True)


def ex2_wrong_ties_not_shared(logits, temperature):
    if temperature == 0:
        return (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
    z = logits / temperature
    e = torch.exp(z - z.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def ex2_wrong_rows_loop(logits, temperature):
    out = torch.empty_like(logits)
    for i in range(logits.shape[0]):  # one row at a time
        row = logits[i]
        if temperature == 0:
            top = (row == row.max()).to(row.dtype)
            out[i] = top / top.sum()
        else:
            e = torch.exp((row - row.max()) / temperature)
            out[i] = e / e.sum()
    return out


def ex2_wrong_logsumexp_by_hand_divided_first(logits, temperature):
    if temperature == 0:
        winners = logits.eq(logits.amax(dim=-1, keepdim=True))
        return winners.to(logits.dtype) / winners.sum(dim=-1, keepdim=True).to(logits.dtype)
    z = logits / temperature
    m = z.amax(dim=-1, keepdim=True)
    log_z = m + torch.log(torch.exp(z - m).sum(dim=-1, keepdim=True))
    return torch.exp(z - log_z)


def ex2_right_float64(logits, temperature):
    x = logits.double()
    if temperature == 0:
        best = torch.where(x == x.max(-1, keepdim=True).values, 1.0, 0.0).double()
        return (best / best.sum(-1, keepdim=True)).to(logits.dtype)
    shifted = (x - x.max(-1, keepdim=True).values) / temperature
    p = shifted.exp()
    return (p / p.sum(-1, keepdim=True)).to(logits.dtype)


# ------------------------------------------------------------------ Exercise 5: top-k


def ex3_wrong_smallest(logits, k):
    kth = logits.topk(k, dim=-1, largest=False).values[..., -1:]
    return logits.masked_fill(logits > kth, float("-inf"))


def ex3_wrong_keeps_k_plus_one(logits, k):
    ordered = logits.sort(dim=-1, descending=True).values
    kth = ordered[..., k : k + 1]  # the k-th largest (counting from 0?)
    return torch.where(logits >= kth, logits, torch.tensor(float("-inf")))


def ex3_wrong_zero_not_inf(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return torch.where(logits >= kth, logits, torch.zeros_like(logits))


def ex3_wrong_minus_1e9(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, -1e9)


def ex3_wrong_global(logits, k):
    kth = logits.flatten().topk(k).values[-1]  # the k-th largest logit
    return logits.masked_fill(logits < kth, float("-inf"))


def ex3_wrong_in_place(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    logits[logits < kth] = float("-inf")
    return logits


def ex3_wrong_values_only(logits, k):
    return logits.topk(k, dim=-1).values


def ex3_wrong_dim_one(logits, k):
    values, indices = logits.topk(k, dim=1)
    out = torch.full_like(logits, float("-inf"))
    return out.scatter(1, indices, values)


def ex3_right_scatter(logits, k):
    values, indices = torch.topk(logits, k, dim=-1)
    out = torch.full_like(logits, -math.inf)
    return out.scatter(-1, indices, values)


def ex3_right_sorted_threshold(logits, k):
    threshold = torch.sort(logits, dim=-1, descending=True).values[..., k - 1].unsqueeze(-1)
    return torch.where(logits < threshold, torch.full_like(logits, -math.inf), logits)


# ------------------------------------------------------------------ Exercise 6: top-p


def _nucleus(probs, keep_sorted, order):
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_stops_before_crossing(probs, top_p):
    s, order = probs.sort(dim=-1, descending=True)
    keep_sorted = s.cumsum(dim=-1) <= top_p
    keep_sorted[..., 0] = True  # always keep the likeliest
    return _nucleus(probs, keep_sorted, order)


def ex4_wrong_no_renormalise(probs, top_p):
    s, order = probs.sort(dim=-1, descending=True)
    keep_sorted = s.cumsum(dim=-1) - s < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return probs * keep


def ex4_wrong_stays_sorted(probs, top_p):
    s, _ = probs.sort(dim=-1, descending=True)
    keep = s.cumsum(dim=-1) - s < top_p
    kept = s * keep
    return kept / kept.sum(-1, keepdim=True)


def ex4_wrong_vocab_order_cumsum(probs, top_p):
    keep = probs.cumsum(dim=-1) - probs < top_p  # no need to sort
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True)


def ex4_wrong_divides_by_p(probs, top_p):
    s, order = probs.sort(dim=-1, descending=True)
    keep_sorted = s.cumsum(dim=-1) - s < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return probs * keep / top_p


def ex4_wrong_sorted_mask_unsorted_probs(probs, top_p):
    s, _ = probs.sort(dim=-1, descending=True)
    keep = s.cumsum(dim=-1) - s < top_p
    kept = torch.where(keep, probs, 0.0)
    return kept / kept.sum(-1, keepdim=True)


def ex4_wrong_ascending(probs, top_p):
    s, order = probs.sort(dim=-1)
    keep_sorted = s.cumsum(dim=-1) - s < top_p
    return _nucleus(probs, keep_sorted, order)


def ex4_wrong_boundary_inclusive(probs, top_p):
    s, order = probs.sort(dim=-1, descending=True)
    keep_sorted = s.cumsum(dim=-1) - s <= top_p
    return _nucleus(probs, keep_sorted, order)


def ex4_right_gather_inverse(probs, top_p):
    s, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(s, dim=-1) - s
    inverse = order.argsort(dim=-1)
    keep = (before < top_p).gather(-1, inverse)
    kept = torch.where(keep, probs, torch.zeros_like(probs))
    return kept / kept.sum(-1, keepdim=True)


def ex4_right_rows_loop(probs, top_p):
    flat = probs.reshape(-1, probs.shape[-1])
    out = torch.zeros_like(flat)
    for r in range(flat.shape[0]):
        total = flat.new_zeros(())
        for j in flat[r].argsort(descending=True).tolist():
            if total >= top_p:
                break
            out[r, j] = flat[r, j]
            total = total + flat[r, j]
        out[r] = out[r] / out[r].sum()
    return out.reshape(probs.shape)


# --------------------------------------------------------------- Exercise 7: the sampler


def _top_k(z, k):
    kth = z.topk(k, dim=-1).values[..., -1:]
    return z.masked_fill(z < kth, -math.inf)


def _top_p(p, top_p):
    s, order = p.sort(dim=-1, descending=True)
    keep_sorted = s.cumsum(dim=-1) - s < top_p
    return _nucleus(p, keep_sorted, order)


def _softmax(z):
    e = torch.exp(z - z.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def ex5_wrong_top_p_first(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = _softmax(logits / temperature)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    if top_k is not None:
        probs = _softmax(_top_k(probs.log(), top_k))
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_temperature_last(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits if top_k is None else _top_k(logits, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    probs = probs ** (1 / temperature)  # now sharpen or flatten
    return torch.multinomial(probs / probs.sum(-1, keepdim=True), 1, generator=generator)


def ex5_wrong_no_greedy(logits, temperature, top_k, top_p, generator):
    z = logits / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_no_generator(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1)


def ex5_wrong_flat_shape(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1)
    z = logits / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def ex5_wrong_ignores_temperature(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits if top_k is None else _top_k(logits, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_k_or_p(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        probs = _softmax(_top_k(z, top_k))
    elif top_p is not None:
        probs = _top_p(_softmax(z), top_p)
    else:
        probs = _softmax(z)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_times_temperature(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits * temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_right_gumbel_max(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1).unsqueeze(-1)
    z = logits.double() / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    u = torch.rand(probs.shape, generator=generator, dtype=torch.float64)
    u = u.clamp(1e-300, 1 - 1e-16)
    gumbel = -torch.log(-torch.log(u))
    return (probs.log() + gumbel).argmax(dim=-1, keepdim=True)


def ex5_right_inverse_cdf(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return torch.argmax(logits, dim=1, keepdim=True)
    z = logits.double() / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    cdf = probs.cumsum(dim=-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=torch.float64)
    idx = (cdf < u * cdf[:, -1:]).sum(dim=-1, keepdim=True)
    return idx.clamp_max(probs.shape[-1] - 1)


# ------------------------------------------------------------ Exercise 8: a KV cache


def _embed(gpt, tokens, start):
    positions = torch.arange(start, start + tokens.shape[1])
    return gpt.token_embedding(tokens) + gpt.position_embedding(positions)


def ex6_wrong_recomputes(gpt, idx, n):
    with torch.no_grad():
        for _ in range(n):
            x = _embed(gpt, idx, 0)
            mask = attnlib.causal_mask(idx.shape[1])
            for block in gpt.blocks:
                x, _ = block(x, mask)
            nxt = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
    return idx


def _cached_loop(gpt, idx, n, positions_from_zero=False, prompt_mask=True, norm=True, pick=-1):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start = len(caches[0])
            x = _embed(gpt, new, 0 if positions_from_zero else start)
            length = new.shape[1]
            mask = attnlib.causal_mask(length, start + length) if prompt_mask else None
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            h = gpt.final_norm(x[:, pick]) if norm else x[:, pick]
            new = gpt.head(h).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_positions_from_zero(gpt, idx, n):
    return _cached_loop(gpt, idx, n, positions_from_zero=True)


def ex6_wrong_no_mask(gpt, idx, n):
    return _cached_loop(gpt, idx, n, prompt_mask=False)  # the cache only holds the past


def ex6_wrong_no_final_norm(gpt, idx, n):
    return _cached_loop(gpt, idx, n, norm=False)


def ex6_wrong_first_position(gpt, idx, n):
    return _cached_loop(gpt, idx, n, pick=0)


def ex6_wrong_one_cache(gpt, idx, n):
    cache = attnlib.KVCache()  # one cache for the model
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start = len(cache) // len(gpt.blocks)
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1], len(cache) + new.shape[1])
            for block in gpt.blocks:
                x, _ = block(x, mask, cache)
                mask = attnlib.causal_mask(new.shape[1], len(cache) + new.shape[1])
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_fresh_caches(gpt, idx, n):
    new = idx
    start = 0
    with torch.no_grad():
        for _ in range(n):
            caches = [attnlib.KVCache() for _ in gpt.blocks]
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1])
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            start += new.shape[1]
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_only_new_tokens(gpt, idx, n):
    out = _cached_loop(gpt, idx, n)
    return out[:, idx.shape[1] :]


def ex6_right_prompt_token_by_token(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    out = idx
    with torch.no_grad():
        logits = None
        for t in range(idx.shape[1] + n - 1):
            token = out[:, t : t + 1]  # (B, 1)
            x = _embed(gpt, token, t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, attnlib.causal_mask(1, t + 1), cache)
            logits = gpt.head(gpt.final_norm(x[:, -1]))
            if t + 1 >= out.shape[1]:
                out = torch.cat([out, logits.argmax(-1, keepdim=True)], dim=1)
    return out


def ex6_right_mask_of_ones(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    with torch.no_grad():
        x = _embed(gpt, idx, 0)
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, attnlib.causal_mask(idx.shape[1]), cache)
        tokens = [idx]
        for step in range(n):
            nxt = gpt.head(gpt.final_norm(x[:, -1:])).argmax(dim=-1)  # (B, 1)
            tokens.append(nxt)
            if step == n - 1:
                break
            t = idx.shape[1] + step
            x = _embed(gpt, nxt, t)
            ones = torch.ones(1, t + 1, dtype=torch.bool)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, ones, cache)
    return torch.cat(tokens, dim=1)


ENTRIES = [
    Entry(
        E1,
        "left out the residual around the FFN",
        Ex1WrongNoFfnResidual,
        named="left out the residual around the feed-forward network: y is its output alone",
    ),
    Entry(
        E1,
        "used norm_1 before both sublayers",
        Ex1WrongOneNorm,
        named="used norm_1 in front of both sublayers (norm_2 is never used)",
    ),
    Entry(
        E1,
        "built a causal mask in the block, ignoring the one passed",
        Ex1WrongOwnCausalMask,
        named="built its own causal mask instead of using the mask it was given",
    ),
    Entry(
        E1,
        "passed the mask inverted (True = blocked)",
        Ex1WrongInvertedMask,
        named="inverted the mask before passing it on",
    ),
    Entry(
        E1,
        "fed the FFN the stream without its LayerNorm",
        Ex1WrongFfnReadsStream,
        named="left out the LayerNorm in front of the feed-forward network",
    ),
    Entry(
        E1,
        "applied the dropout to the sublayers' inputs",
        Ex1WrongDropoutOnInput,
        named="applied dropout to the sublayers' inputs instead of their outputs",
    ),
    Entry(
        E1,
        "returned the weights averaged over the heads",
        Ex1WrongMeanHeads,
        named="returned the attention weights averaged over the heads, (B, T, T)",
    ),
    Entry(
        E1,
        "gave the attention no dropout rate",
        Ex1WrongNoAttentionDropout,
        named="built the attention without the config's dropout",
    ),
    Entry(E1, "keyword arguments, q = k = v passed", Ex1RightKeywords, right=True),
    Entry(E1, "F.dropout with the module's rate", Ex1RightFunctionalDropout, right=True),
    Entry(
        E2,
        "no max subtracted before exp",
        ex2_wrong_no_shift,
        named="exponentiated z / T without first subtracting each row's largest value",
    ),
    Entry(
        E2,
        "at T = 0 a one-hot of argmax (ties ignored)",
        ex2_wrong_argmax_at_zero,
        named="at T = 0, put all the mass on the first of the tied largest logits",
    ),
    Entry(
        E2,
        "multiplied by the temperature",
        ex2_wrong_multiplies,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(
        E2,
        "T = 0 replaced by T = 1e-8",
        ex2_wrong_tiny_temperature,
        named="divided by T plus a tiny number (such as 1e-8) instead of taking the limit at T = 0",
    ),
    Entry(
        E2,
        "subtracted the largest logit of the whole tensor",
        ex2_wrong_global_max,
        named="shifted every row by the largest value of the whole batch",
    ),
    Entry(
        E2,
        "at T = 0, 1 for every tied maximum, not shared",
        ex2_wrong_ties_not_shared,
        named="at T = 0, gave each of the tied largest logits a probability of 1",
    ),
    Entry(
        E2,
        "a loop over the rows of a 2-D tensor",
        ex2_wrong_rows_loop,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    # Written as a right answer; it divides by T before the shift, so float16 logits [70, 0]
    # at T = 0.001 give NaN, which the task ("finite and right for any finite logits",
    # float16 included) rules out: wrong since issue 40's float16 case.
    Entry(
        E2,
        "log-sum-exp by hand, z / T first",
        ex2_wrong_logsumexp_by_hand_divided_first,
        named="divided by T before subtracting each row's maximum, which overflows float16 at a "
        "small T",
    ),
    Entry(E2, "in float64, cast back", ex2_right_float64, right=True),
    Entry(
        E3,
        "kept the k smallest logits",
        ex3_wrong_smallest,
        named="kept the k smallest logits instead of the k largest",
    ),
    Entry(
        E3,
        "threshold at index k, keeping k + 1",
        ex3_wrong_keeps_k_plus_one,
        named="took the threshold at index k of the sorted row, the (k + 1)-th largest",
    ),
    Entry(
        E3,
        "set the others to 0",
        ex3_wrong_zero_not_inf,
        named="set the removed logits to 0 instead of -inf",
    ),
    Entry(
        E3,
        "set the others to -1e9",
        ex3_wrong_minus_1e9,
        named="set the removed logits to a large negative number such as -1e9 instead of -inf",
    ),
    Entry(
        E3,
        "the k largest of the whole tensor",
        ex3_wrong_global,
        named="used one threshold for the whole batch instead of one per row",
    ),
    Entry(
        E3,
        "wrote -inf into the logits in place",
        ex3_wrong_in_place,
        named="wrote -inf into the caller's logits in place",
    ),
    Entry(
        E3,
        "returned the k values only",
        ex3_wrong_values_only,
        named="returned the k largest values themselves instead of the whole row",
    ),
    Entry(
        E3,
        "topk and scatter along dim 1",
        ex3_wrong_dim_one,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(E3, "scatter the top-k into a -inf tensor", ex3_right_scatter, right=True),
    Entry(E3, "sorted, threshold at k - 1", ex3_right_sorted_threshold, right=True),
    Entry(
        E4,
        "kept only tokens while the cumulative sum <= p",
        ex4_wrong_stops_before_crossing,
        named=(
            "kept the likeliest token, then only the tokens whose running total stays within "
            "top_p, which drops the token that carries the total past top_p"
        ),
    ),
    Entry(
        E4,
        "did not renormalise",
        ex4_wrong_no_renormalise,
        named="did not renormalise the kept probabilities",
    ),
    Entry(
        E4,
        "returned the probabilities in sorted order",
        ex4_wrong_stays_sorted,
        named="left the kept probabilities in sorted order instead of at their tokens",
    ),
    Entry(
        E4,
        "cumulative sum in vocabulary order, unsorted",
        ex4_wrong_vocab_order_cumsum,
        named="took the running total in vocabulary order, without ranking the tokens first",
    ),
    Entry(
        E4,
        "divided by p instead of the kept mass",
        ex4_wrong_divides_by_p,
        named="divided the kept probabilities by top_p instead of by their own total",
    ),
    Entry(
        E4,
        "applied the sorted mask to the unsorted probs",
        ex4_wrong_sorted_mask_unsorted_probs,
        named=(
            "put the keep/drop marks of the ranked row on the tokens in vocabulary order, without "
            "mapping them back"
        ),
    ),
    Entry(
        E4,
        "sorted ascending",
        ex4_wrong_ascending,
        named="ranked the tokens from the least likely (sort's default, ascending)",
    ),
    Entry(
        E4,
        "mass above <= p (keeps one too many at equality)",
        ex4_wrong_boundary_inclusive,
        named=(
            "kept a token while the tokens ranked above it hold at most top_p (<=), so a total "
            "that reaches top_p exactly still lets the next token in"
        ),
    ),
    Entry(E4, "gather with the inverse permutation", ex4_right_gather_inverse, right=True),
    Entry(E4, "a loop over rows, greedy", ex4_right_rows_loop, right=True),
    Entry(
        E5,
        "top-p before top-k",
        ex5_wrong_top_p_first,
        named=(
            "top-p measured its share on the whole distribution, not on the tokens top-k kept "
            "(top-p before top-k, or top-k's probabilities not renormalised)"
        ),
    ),
    Entry(
        E5,
        "the temperature applied after the filters",
        ex5_wrong_temperature_last,
        named="top-p was applied before the temperature",
    ),
    Entry(
        E5,
        "no greedy case at T = 0",
        ex5_wrong_no_greedy,
        named="divided by the temperature at T = 0 too",
    ),
    Entry(
        E5,
        "drew without the generator",
        ex5_wrong_no_generator,
        named="drew without the generator it was given",
    ),
    Entry(
        E5,
        "returned shape (B,)",
        ex5_wrong_flat_shape,
        named="returned one id per row as shape (B,), without the column of shape (B, 1)",
    ),
    Entry(
        E5,
        "forgot the temperature",
        ex5_wrong_ignores_temperature,
        named="the temperature changes nothing: the logits were never divided by it",
    ),
    Entry(
        E5,
        "top-k or top-p, never both",
        ex5_wrong_k_or_p,
        named="applied top-p only when top_k was not given: with both on, top-p was skipped",
    ),
    Entry(
        E5,
        "multiplied by the temperature",
        ex5_wrong_times_temperature,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(E5, "Gumbel-max with the generator", ex5_right_gumbel_max, right=True),
    Entry(E5, "inverse CDF with one uniform per row", ex5_right_inverse_cdf, right=True),
    Entry(
        E6,
        "no cache: the whole text again at every step",
        ex6_wrong_recomputes,
        named=(
            "saved nothing: the keys and values of earlier positions were computed again at every "
            "step"
        ),
    ),
    Entry(
        E6,
        "positions counted from 0 at every step",
        ex6_wrong_positions_from_zero,
        named="gave each new token position 0 instead of its place in the text",
    ),
    Entry(
        E6,
        "no mask at all, not even on the prompt",
        ex6_wrong_no_mask,
        named="ran the prompt without the causal mask",
    ),
    Entry(
        E6,
        "forgot the final LayerNorm",
        ex6_wrong_no_final_norm,
        named="left out the final LayerNorm before the head",
    ),
    Entry(
        E6,
        "took the first position's logits",
        ex6_wrong_first_position,
        named="picked the next token from the first position's logits instead of the last's",
    ),
    Entry(
        E6,
        "one cache shared by all layers",
        ex6_wrong_one_cache,
        named="used one cache for every layer instead of one per layer",
    ),
    Entry(
        E6,
        "new caches at every step",
        ex6_wrong_fresh_caches,
        named="emptied the caches after each step",
    ),
    Entry(
        E6,
        "returned only the new tokens",
        ex6_wrong_only_new_tokens,
        named="returned only the n new tokens, without the prompt",
    ),
    Entry(E6, "the prompt fed one token at a time", ex6_right_prompt_token_by_token, right=True),
    Entry(E6, "the prompt at once, then an all-True mask", ex6_right_mask_of_ones, right=True),
]


# ------------------------------------- Exercises 4 and 3 (section 5): forward pass, training step

E_FORWARD, E_STEP = "ex2_my_gpt_forward", "ex3_my_train_step"


def ex_forward_right_device(gpt, idx):
    T = idx.shape[-1]
    x = gpt.token_embedding(idx)
    x = x + gpt.position_embedding(torch.arange(T, device=idx.device))[None]
    x = gpt.dropout(x)
    causal = attnlib.causal_mask(T).to(idx.device)
    for layer in gpt.blocks:
        out = layer(x, causal)
        x = out[0]
    logits = gpt.head(gpt.final_norm(x))
    return logits


def ex_forward_wrong_inverted(gpt, idx):
    T = idx.shape[-1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = ~attnlib.causal_mask(T)  # True where the future is: blocked
    for layer in gpt.blocks:
        x, _ = layer(x, mask)
    return gpt.head(gpt.final_norm(x))


def ex_forward_wrong_positions_from_one(gpt, idx):
    T = idx.shape[-1]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(1, T + 1))
    x = gpt.dropout(x)
    mask = attnlib.causal_mask(T)
    for layer in gpt.blocks:
        x, _ = layer(x, mask)
    return gpt.head(gpt.final_norm(x))


def ex_forward_wrong_log_softmax(gpt, idx):
    T = idx.shape[-1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for layer in gpt.blocks:
        x, _ = layer(x, mask)
    return F.log_softmax(gpt.head(gpt.final_norm(x)), dim=-1)


def ex_forward_wrong_last_only(gpt, idx):
    T = idx.shape[-1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for layer in gpt.blocks:
        x, _ = layer(x, mask)
    return gpt.head(gpt.final_norm(x))[:, -1, :]


def ex_forward_wrong_max_len_mask(gpt, idx):
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[-1]))
    x = gpt.dropout(x)
    mask = attnlib.causal_mask(gpt.config.max_len)
    for layer in gpt.blocks:
        x, _ = layer(x, mask)
    return gpt.head(gpt.final_norm(x))


def ex_step_right_enable_grad(model, optimizer, scheduler, windows, max_norm):
    with torch.enable_grad():
        inputs, targets = windows[:, :-1], windows[:, 1:]
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def ex_step_wrong_zero_between(model, optimizer, scheduler, windows, max_norm):
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    loss.backward()
    optimizer.zero_grad()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def ex_step_wrong_clip_first(model, optimizer, scheduler, windows, max_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    scheduler.step()
    return loss.item()


def ex_step_wrong_detached(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.detach()


def ex_step_wrong_sum(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1), reduction="sum"
    )
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def ex_step_wrong_value_clip(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def ex_step_wrong_no_step(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scheduler.step()  # the scheduler steps the optimizer, I thought
    return loss.item()


ENTRIES += [
    Entry(E_FORWARD, "positions on idx's device, out[0]", ex_forward_right_device, right=True),
    Entry(
        E_FORWARD,
        "~causal_mask",
        ex_forward_wrong_inverted,
        named="inverted the causal mask (True = blocked)",
    ),
    Entry(
        E_FORWARD,
        "positions 1 to T",
        ex_forward_wrong_positions_from_one,
        named="numbered the positions from 1 instead of 0",
    ),
    Entry(
        E_FORWARD,
        "log_softmax at the end, for the loss",
        ex_forward_wrong_log_softmax,
        named="returned log-probabilities (log_softmax) instead of the head's logits",
    ),
    Entry(
        E_FORWARD,
        "only the last position",
        ex_forward_wrong_last_only,
        named="returned only the last position's logits, (B, V)",
    ),
    Entry(
        E_FORWARD,
        "mask of the config's max_len",
        ex_forward_wrong_max_len_mask,
        named="built the mask for max_len positions instead of for the T tokens of idx",
    ),
    Entry(E_STEP, "everything under enable_grad", ex_step_right_enable_grad, right=True),
    Entry(
        E_STEP,
        "zero_grad between backward and clip",
        ex_step_wrong_zero_between,
        named=(
            "cleared the gradients after backward() (or never called backward()): step() had "
            "no gradient to follow"
        ),
    ),
    Entry(
        E_STEP,
        "clip at the very start",
        ex_step_wrong_clip_first,
        named="clipped before backward() (or not at all): step() used the unclipped gradient",
    ),
    Entry(
        E_STEP,
        "returned loss.detach()",
        ex_step_wrong_detached,
        named="returned the loss as a tensor instead of a float",
    ),
    Entry(
        E_STEP,
        "reduction='sum'",
        ex_step_wrong_sum,
        named="summed the cross-entropy over the positions instead of averaging it",
    ),
    Entry(
        E_STEP,
        "clip_grad_value_",
        ex_step_wrong_value_clip,
        named="clipped each gradient entry (clip_grad_value_) instead of the gradient's norm",
    ),
    Entry(
        E_STEP,
        "no optimizer.step()",
        ex_step_wrong_no_step,
        named="never called the optimizer's step()",
    ),
]
