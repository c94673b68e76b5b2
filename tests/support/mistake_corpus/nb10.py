"""Learner answers to notebook 10's exercises (the GPT block, temperature, top-k, top-p, the
sampler, the KV cache), written from the learner's edition and the worked solutions only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ---------------------------------------------------------------------------------------------
# Exercise 1: the GPT block
# ---------------------------------------------------------------------------------------------


class _Parts(nn.Module):
    """The submodules every block below builds (a learner would write them out each time)."""

    def __init__(self, config, activation="gelu", hidden=4, attention_dropout=True):
        super().__init__()
        d = config.d_model
        p = config.dropout if attention_dropout else 0.0
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=p)
        self.feed_forward = attnlib.FeedForward(d, hidden * d, config.dropout, activation)
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)


class Ex1WrongPostNorm(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(x, mask=mask)
        x = self.norm_1(x + self.dropout(a))
        x = self.norm_2(x + self.dropout(self.feed_forward(x)))
        return x, w


class Ex1WrongNoAttentionResidual(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongSameNormTwice(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        y = h + self.dropout(self.feed_forward(self.norm_1(h)))
        return y, w


class Ex1WrongRelu(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, dropout=config.dropout)
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        out, weights = self.attention(self.norm_1(x), mask=mask)
        x = x + self.dropout(out)
        x = x + self.dropout(self.feed_forward(self.norm_2(x)))
        return x, weights


class Ex1WrongIgnoresMask(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x))  # forgot to pass the mask on
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongNoAttentionDropout(_Parts):
    def __init__(self, config):
        super().__init__(config, attention_dropout=False)

    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongResidualFromNormed(_Parts):
    def forward(self, x, mask):
        x = self.norm_1(x)
        a, w = self.attention(x, mask=mask)
        x = x + self.dropout(a)
        x = self.norm_2(x)
        return x + self.dropout(self.feed_forward(x)), w


class Ex1WrongFfnReadsInput(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        y = h + self.dropout(self.feed_forward(self.norm_2(x)))
        return y, w


class Ex1WrongOwnCausalMask(_Parts):
    def forward(self, x, mask):
        T = x.shape[1]
        causal = attnlib.causal_mask(T).to(x.device)  # build it here to be safe
        a, w = self.attention(self.norm_1(x), mask=causal)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongFloat64InvertedMask(nn.Module):
    """float64 submodules (harmless: the check works in float64) and the mask flipped."""

    def __init__(self, config):
        super().__init__()
        d, h = config.d_model, config.num_heads
        self.attention = attnlib.MultiHeadAttention(d, h, dropout=config.dropout).double()
        self.feed_forward = attnlib.FeedForward(
            d, 4 * d, config.dropout, activation="gelu"
        ).double()
        self.norm_1 = nn.LayerNorm(d).double()
        self.norm_2 = nn.LayerNorm(d).double()
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        blocked = ~mask  # True = blocked, as in torch's MultiheadAttention
        a, w = self.attention(self.norm_1(x), mask=blocked)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex1WrongDropoutOnlyOnce(_Parts):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask)
        h = x + a
        y = h + self.feed_forward(self.norm_2(h))
        return self.dropout(y), w


class Ex1RightExplicitQKV(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.d_model
        self.attention = attnlib.MultiHeadAttention(
            d_model=width, num_heads=config.num_heads, dropout=config.dropout
        )
        self.feed_forward = attnlib.FeedForward(
            d_model=width, d_ff=width * 4, dropout=config.dropout, activation="gelu"
        )
        self.norm_1 = nn.LayerNorm(width)
        self.norm_2 = nn.LayerNorm(width)
        self.dropout = nn.Dropout(p=config.dropout)

    def forward(self, x, mask):
        normed = self.norm_1(x)
        attended, attn_weights = self.attention(normed, normed, normed, mask)
        stream = x + self.dropout(attended)
        ffn_out = self.feed_forward(self.norm_2(stream))
        stream = stream + self.dropout(ffn_out)
        return stream, attn_weights


class Ex1RightSublayerHelper(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, "gelu")
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, config.dropout)

    def _attend(self, x, mask):
        out, weights = self.attention(self.norm_1(x), mask=mask)
        self._weights = weights
        return out

    def forward(self, x, mask):
        x = x + self.dropout(self._attend(x, mask))
        x = x + self.dropout(self.feed_forward(self.norm_2(x)))
        return x, self._weights


# ---------------------------------------------------------------------------------------------
# Exercise 4: temperature, down to 0
# ---------------------------------------------------------------------------------------------


def ex2_wrong_no_max_shift(logits, temperature):
    if temperature == 0:
        top = (logits == logits.max(dim=-1, keepdim=True).values).float().to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    e = torch.exp(logits / temperature)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_times_temperature(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(-1, keepdim=True)
    z = logits * temperature
    z = z - z.amax(-1, keepdim=True)
    return z.exp() / z.exp().sum(-1, keepdim=True)


def ex2_wrong_argmax_one_hot(logits, temperature):
    if temperature == 0:  # greedy: all the mass on the argmax
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    z = logits / temperature
    z = z - z.max(dim=-1, keepdim=True).values
    return z.exp() / z.exp().sum(dim=-1, keepdim=True)


def ex2_wrong_no_zero_case(logits, temperature):
    z = logits / temperature
    z = z - z.max(dim=-1, keepdim=True).values
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_global_max(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    z = logits / temperature
    z = z - z.max()  # the largest logit
    e = z.exp()
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_no_keepdim(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    z = logits / temperature
    z = z - z.max(dim=-1).values
    e = z.exp()
    return e / e.sum(dim=-1)


def ex2_wrong_epsilon_temperature(logits, temperature):
    z = logits / (temperature + 1e-8)  # never divide by zero
    z = z - z.amax(dim=-1, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_ties_not_shared(logits, temperature):
    if temperature == 0:
        return (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
    z = (logits - logits.amax(dim=-1, keepdim=True)) / temperature
    return z.exp() / z.exp().sum(dim=-1, keepdim=True)


def ex2_wrong_float64_sum_over_first_dim(logits, temperature):
    z = logits.double()
    if temperature == 0:
        top = (z == z.amax(dim=-1, keepdim=True)).double()
        return (top / top.sum(dim=-1, keepdim=True)).to(logits.dtype)
    z = z / temperature
    z = z - z.amax(dim=-1, keepdim=True)
    e = z.exp()
    return (e / e.sum(dim=0, keepdim=True)).to(logits.dtype)


def ex2_wrong_float16_exp(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    e = (logits / temperature).exp()  # float16 is fine for small logits
    e = e / e.amax(dim=-1, keepdim=True)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_right_logsumexp(logits, temperature):
    if temperature == 0:
        is_max = logits == logits.max(dim=-1, keepdim=True).values
        count = is_max.sum(dim=-1, keepdim=True)
        return torch.where(is_max, 1.0, 0.0).to(logits.dtype) / count
    z = logits.double() / temperature
    return (z - torch.logsumexp(z, dim=-1, keepdim=True)).exp().to(logits.dtype)


def ex2_right_flattened_rows(logits, temperature):
    shape = logits.shape
    rows = logits.reshape(-1, shape[-1]).to(torch.float64)
    biggest = rows.max(dim=1, keepdim=True).values
    if temperature == 0:
        out = (rows == biggest).to(torch.float64)
    else:
        out = torch.exp((rows - biggest) / temperature)
    out = out / out.sum(dim=1, keepdim=True)
    return out.reshape(shape).to(logits.dtype)


# ---------------------------------------------------------------------------------------------
# Exercise 5: top-k
# ---------------------------------------------------------------------------------------------


def ex3_wrong_smallest(logits, k):
    kth = logits.topk(k, dim=-1, largest=False).values[..., -1:]
    return logits.masked_fill(logits > kth, float("-inf"))


def ex3_wrong_off_by_one(logits, k):
    ordered = logits.sort(dim=-1, descending=True).values
    if k == logits.shape[-1]:
        return logits.clone()
    kth = ordered[..., k : k + 1]  # the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def ex3_wrong_zero_not_inf(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return torch.where(logits >= kth, logits, torch.zeros_like(logits))


def ex3_wrong_minus_1e9(logits, k):
    kth = torch.topk(logits, k).values[..., [-1]]
    return logits.masked_fill(logits < kth, -1e9)


def ex3_wrong_returns_values(logits, k):
    values, _ = torch.topk(logits, k, dim=-1)
    return values


def ex3_wrong_global_threshold(logits, k):
    kth = logits.flatten().topk(k).values[-1]  # the k-th largest
    out = logits.clone()
    out[out < kth] = float("-inf")
    return out


def ex3_wrong_in_place(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    logits[logits < kth] = float("-inf")
    return logits


def ex3_wrong_two_d_scatter(logits, k):
    values, indices = logits.topk(k, dim=1)
    out = torch.full_like(logits, float("-inf"))
    return out.scatter(1, indices, values)


def ex3_wrong_less_equal(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits <= kth, float("-inf"))


def ex3_wrong_float64_inverted(logits, k):
    z = logits.double()
    kth = z.topk(k, dim=-1).values[..., -1:]
    return z.masked_fill(z >= kth, float("-inf")).to(logits.dtype)


def ex3_right_scatter(logits, k):
    values, indices = torch.topk(logits, k, dim=-1)
    out = torch.full_like(logits, -torch.inf)
    return out.scatter(-1, indices, values)


def ex3_right_sort_rows(logits, k):
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.empty_like(flat)
    for i, row in enumerate(flat):
        threshold = torch.sort(row, descending=True).values[k - 1]
        out[i] = torch.where(row >= threshold, row, torch.tensor(float("-inf"), dtype=row.dtype))
    return out.reshape(logits.shape)


# ---------------------------------------------------------------------------------------------
# Exercise 6: top-p
# ---------------------------------------------------------------------------------------------


def _unsort(keep_sorted, order):
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def ex4_wrong_cumsum_below_p(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _unsort(sorted_probs.cumsum(dim=-1) < top_p, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_cumsum_at_most_p(probs, top_p):
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    remove = cumulative > top_p
    remove = torch.zeros_like(remove).scatter(-1, order, remove)
    kept = probs.masked_fill(remove, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_not_renormalised(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
    return probs * _unsort(keep_sorted, order)


def ex4_wrong_stays_sorted(probs, top_p):
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    keep = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
    kept = sorted_probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_ascending(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1)
    keep_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
    kept = probs * _unsort(keep_sorted, order)
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_gather_to_unsort(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = (sorted_probs.cumsum(dim=-1) - sorted_probs) < top_p
    keep = keep_sorted.gather(-1, order)  # back to vocabulary order
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_global_nucleus(probs, top_p):
    flat = probs.flatten()
    sorted_probs, order = flat.sort(descending=True)
    total = probs.shape[:-1].numel()  # every row sums to 1
    keep_sorted = sorted_probs.cumsum(0) - sorted_probs < top_p * total
    keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted).reshape(probs.shape)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_in_place(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    drop = _unsort(sorted_probs.cumsum(-1) - sorted_probs >= top_p, order)
    probs[drop] = 0.0
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


def ex4_wrong_two_d_loop(probs, top_p):
    out = torch.zeros_like(probs)
    for i in range(probs.shape[0]):
        row = probs[i]
        sorted_row, order = row.sort(descending=True)
        total = 0.0
        for p, j in zip(sorted_row.tolist(), order.tolist(), strict=True):
            out[i, j] = p
            total += p
            if total >= top_p:
                break
        out[i] = out[i] / out[i].sum()
    return out


def ex4_wrong_float64_keeps_one_too_many(probs, top_p):
    p64 = probs.double()
    sorted_probs, order = p64.sort(dim=-1, descending=True)
    cumulative = sorted_probs.cumsum(dim=-1)
    n_keep = (cumulative < top_p).sum(dim=-1, keepdim=True) + 1  # the crossing one stays
    ranks = torch.arange(probs.shape[-1]).expand_as(sorted_probs)
    keep_sorted = ranks <= n_keep  # ranks 0 .. n_keep
    kept = p64 * _unsort(keep_sorted, order)
    return (kept / kept.sum(dim=-1, keepdim=True)).to(probs.dtype)


def ex4_right_count_then_rank(probs, top_p):
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    n_keep = (before < top_p).sum(dim=-1, keepdim=True)  # (..., 1), at least 1
    ranks = torch.empty_like(order).scatter_(
        -1, order, torch.arange(probs.shape[-1]).expand_as(order).contiguous()
    )
    kept = torch.where(ranks < n_keep, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_right_row_loop(probs, top_p):
    flat = probs.reshape(-1, probs.shape[-1])
    out = torch.zeros_like(flat)
    for r in range(flat.shape[0]):
        order = torch.argsort(flat[r], descending=True)
        running = 0.0
        for j in order.tolist():
            if running >= top_p:
                break
            out[r, j] = flat[r, j]
            running += flat[r, j].item()
        out[r] /= out[r].sum()
    return out.reshape(probs.shape)


# ---------------------------------------------------------------------------------------------
# Exercise 7: the sampler
# ---------------------------------------------------------------------------------------------


def _top_k(z, k):
    kth = z.topk(k, dim=-1).values[..., -1:]
    return z.masked_fill(z < kth, float("-inf"))


def _nucleus(probs, p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _unsort(sorted_probs.cumsum(-1) - sorted_probs < p, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex5_wrong_temperature_after_top_p(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits if top_k is None else _top_k(logits, top_k)
    probs = z.softmax(dim=-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    probs = probs ** (1 / temperature)  # sharpen or flatten at the end
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_top_p_before_top_k(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    if top_k is not None:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_no_generator(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = F.softmax(z, dim=-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    return torch.multinomial(probs, num_samples=1)


def ex5_wrong_times_temperature(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits * temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = z.softmax(-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_flat_shape(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1)
    z = logits / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = z.softmax(-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def ex5_wrong_always_greedy(logits, temperature, top_k, top_p, generator):
    z = logits / max(temperature, 1e-6)
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = z.softmax(dim=-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    return probs.argmax(dim=-1, keepdim=True)


def ex5_wrong_top_k_ignored_with_top_p(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_p is not None:
        probs = _nucleus(z.softmax(-1), top_p)
    elif top_k is not None:
        probs = _top_k(z, top_k).softmax(-1)
    else:
        probs = z.softmax(-1)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_top_p_on_untempered(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits if top_k is None else _top_k(logits, top_k)
    keep = torch.ones_like(z, dtype=torch.bool)
    if top_p is not None:
        keep = _nucleus(z.softmax(-1), top_p) > 0  # the nucleus of the model's own beliefs
    probs = (z / temperature).masked_fill(~keep, float("-inf")).softmax(-1)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_float64_first_row_only(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits.double() / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = z.softmax(-1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    token = torch.multinomial(probs[0], 1, generator=generator)  # (1,)
    return token.expand(logits.shape[0], 1)


def ex5_right_top_k_on_probs(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return torch.argmax(logits, dim=-1).unsqueeze(-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None:  # dropping from the probabilities is the same as from the logits
        kth = torch.topk(probs, top_k, dim=-1).values[:, -1:]
        probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
        probs = probs / probs.sum(dim=-1, keepdim=True)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_right_inverse_cdf(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=1, keepdim=True)
    z = logits.double() / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    probs = z.softmax(dim=1)
    if top_p is not None:
        probs = _nucleus(probs, top_p)
    cdf = probs.cumsum(dim=1)
    u = torch.rand(logits.shape[0], 1, generator=generator, dtype=torch.float64)
    u = u * cdf[:, -1:]
    index = torch.searchsorted(cdf, u, right=True)
    return index.clamp(max=logits.shape[1] - 1)


# ---------------------------------------------------------------------------------------------
# Exercise 8: the KV cache
# ---------------------------------------------------------------------------------------------


def _embed(gpt, tokens, start):
    positions = torch.arange(start, start + tokens.shape[1])
    return gpt.token_embedding(tokens) + gpt.position_embedding(positions)


def ex6_wrong_positions_restart(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            T = new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(T))
            mask = attnlib.causal_mask(T, len(caches[0]) + T)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_fresh_caches_each_step(gpt, idx, n):
    new = idx
    with torch.no_grad():
        for _ in range(n):
            caches = [attnlib.KVCache() for _ in gpt.blocks]
            start = idx.shape[1] - new.shape[1]
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1])
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_whole_text_into_cache(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    with torch.no_grad():
        for _ in range(n):
            T = idx.shape[1]
            x = _embed(gpt, idx, 0)
            mask = attnlib.causal_mask(T, len(caches[0]) + T)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            token = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, token], dim=1)
    return idx


def ex6_wrong_no_cache(gpt, idx, n):
    with torch.no_grad():
        for _ in range(n):
            x = _embed(gpt, idx, 0)
            mask = attnlib.causal_mask(idx.shape[1])
            for block in gpt.blocks:
                x, _ = block(x, mask)
            token = gpt.head(gpt.final_norm(x))[:, -1].argmax(-1, keepdim=True)
            idx = torch.cat([idx, token], dim=1)
    return idx


def ex6_wrong_no_mask_on_prompt(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            x = _embed(gpt, new, len(caches[0]))
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, None, cache)  # the cache only holds the past anyway
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_no_final_norm(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start = len(caches[0])
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1], start + new.shape[1])
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(x[:, -1]).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_first_position(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start = len(caches[0])
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1], start + new.shape[1])
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            logits = gpt.head(gpt.final_norm(x))  # (B, T_new, V)
            new = logits[:, 0].argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_one_cache_for_all_layers(gpt, idx, n):
    cache = attnlib.KVCache()
    new, seen = idx, 0
    with torch.no_grad():
        for _ in range(n):
            x = _embed(gpt, new, seen)
            T = new.shape[1]
            for block in gpt.blocks:
                mask = attnlib.causal_mask(T, len(cache) + T)
                x, _ = block(x, mask, cache)
            seen += T
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_one_token_short(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n - 1):
            start = len(caches[0])
            x = _embed(gpt, new, start)
            mask = attnlib.causal_mask(new.shape[1], start + new.shape[1])
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_right_prompt_first(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in range(len(gpt.blocks))]

    def step(tokens):
        start = len(caches[0])
        x = _embed(gpt, tokens, start)
        mask = None if tokens.shape[1] == 1 else attnlib.causal_mask(tokens.shape[1])
        for i, block in enumerate(gpt.blocks):
            x, _ = block(x, mask, caches[i])
        return gpt.head(gpt.final_norm(x))[:, -1]  # (B, V)

    out = [idx]
    with torch.no_grad():
        logits = step(idx)
        for i in range(n):
            token = torch.argmax(logits, dim=-1, keepdim=True)
            out.append(token)
            if i < n - 1:
                logits = step(token)
    return torch.cat(out, dim=1)


def ex6_right_while_loop(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    target = idx.shape[1] + n
    feed = idx
    while idx.shape[1] < target:
        done = len(caches[0])
        h = gpt.token_embedding(feed) + gpt.position_embedding.weight[done : done + feed.shape[1]]
        m = attnlib.causal_mask(feed.shape[1], done + feed.shape[1])
        for layer, cache in zip(gpt.blocks, caches, strict=True):
            h, _ = layer(h, m, cache)
        feed = gpt.head(gpt.final_norm(h[:, -1:])).argmax(dim=-1)  # (B, 1)
        idx = torch.cat((idx, feed), dim=-1)
    return idx.detach()


# ---------------------------------------------------------------------------------------------

E1, E2, E3 = "ex1_my_gpt_block", "ex4_my_temperature_probs", "ex5_my_top_k_logits"
E4, E5, E6 = "ex6_my_top_p_probs", "ex7_my_sample", "ex8_my_generate_cached"

ENTRIES = [
    # Exercise 1
    Entry(
        E1,
        "normalised after adding (post-norm), like the 2017 paper",
        Ex1WrongPostNorm,
        named=(
            "normalised after adding (post-norm, LN(x + f(x)), as in notebook 08) instead of before"
        ),
    ),
    Entry(
        E1,
        "forgot the residual around the attention",
        Ex1WrongNoAttentionResidual,
        named="left out the residual around the attention: h is the attention's output alone",
    ),
    Entry(
        E1,
        "used norm_1 again before the feed-forward",
        Ex1WrongSameNormTwice,
        named="used norm_1 in front of both sublayers (norm_2 is never used)",
    ),
    Entry(
        E1,
        "left FeedForward's default activation (ReLU), not GELU",
        Ex1WrongRelu,
        named=(
            "built the feed-forward network with FeedForward's default activation (ReLU), not GELU"
        ),
    ),
    Entry(
        E1,
        "never passed the mask to the attention",
        Ex1WrongIgnoresMask,
        named="did not pass the mask to the attention",
    ),
    Entry(
        E1,
        "built the attention without dropout",
        Ex1WrongNoAttentionDropout,
        named="built the attention without the config's dropout",
    ),
    Entry(
        E1,
        "added the sublayers to the normalised stream",
        Ex1WrongResidualFromNormed,
        named="added each sublayer's output to the normalised input instead of the input itself",
    ),
    Entry(
        E1,
        "the feed-forward reads the block's input, not h",
        Ex1WrongFfnReadsInput,
        named=(
            "fed the feed-forward network the block's input instead of the stream after attention"
        ),
    ),
    Entry(
        E1,
        "built my own causal mask instead of the one given",
        Ex1WrongOwnCausalMask,
        named="built its own causal mask instead of using the mask it was given",
    ),
    Entry(
        E1,
        "float64 parts, and flipped the mask to True = blocked",
        Ex1WrongFloat64InvertedMask,
        named="inverted the mask before passing it on",
    ),
    Entry(
        E1,
        "one dropout on the output instead of one per sublayer",
        Ex1WrongDropoutOnlyOnce,
        named="applied dropout once, to the block's output, instead of to each sublayer's output",
    ),
    Entry(E1, "explicit query, key, value and keyword arguments", Ex1RightExplicitQKV, right=True),
    Entry(E1, "a helper method for the attention sublayer", Ex1RightSublayerHelper, right=True),
    # Exercise 4
    Entry(
        E2,
        "exp of z / T without subtracting the max",
        ex2_wrong_no_max_shift,
        named="exponentiated z / T without first subtracting each row's largest value",
    ),
    Entry(
        E2,
        "multiplied by the temperature",
        ex2_wrong_times_temperature,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(
        E2,
        "T = 0 gives a one-hot of the argmax, ties ignored",
        ex2_wrong_argmax_one_hot,
        named="at T = 0, put all the mass on the first of the tied largest logits",
    ),
    Entry(
        E2,
        "no special case for T = 0 (divides by zero)",
        ex2_wrong_no_zero_case,
        named="divided by the temperature at T = 0 too",
    ),
    Entry(
        E2,
        "subtracted the largest logit of the whole tensor",
        ex2_wrong_global_max,
        named="shifted every row by the largest value of the whole batch",
    ),
    Entry(
        E2,
        "max and sum without keepdim",
        ex2_wrong_no_keepdim,
        named="took each row's largest value and its sum, both without keeping their dimension",
    ),
    Entry(
        E2,
        "divided by T + 1e-8 so T = 0 works",
        ex2_wrong_epsilon_temperature,
        named=(
            "divided by T plus a tiny number (such as 1e-8) instead of taking the limit at T = 0"
        ),
    ),
    Entry(
        E2,
        "T = 0: every tied maximum gets 1, not shared",
        ex2_wrong_ties_not_shared,
        named="at T = 0, gave each of the tied largest logits a probability of 1",
    ),
    Entry(
        E2,
        "float64, but summed over the first dim",
        ex2_wrong_float64_sum_over_first_dim,
        named=(
            "took a total or a maximum across the rows of the batch where each row needs its own"
        ),
    ),
    Entry(
        E2,
        "exp first, then divided by the largest exp",
        ex2_wrong_float16_exp,
        named=(
            "divided the exponentials by their largest instead of subtracting the largest "
            "value before exponentiating"
        ),
    ),
    Entry(
        E2,
        "log-sum-exp in float64: the task refuses torch.logsumexp",
        ex2_right_logsumexp,
        named=REFUSED,
    ),
    Entry(E2, "rows flattened, float64, one formula", ex2_right_flattened_rows, right=True),
    # Exercise 5
    Entry(
        E3,
        "kept the k smallest logits",
        ex3_wrong_smallest,
        named="kept the k smallest logits instead of the k largest",
    ),
    Entry(
        E3,
        "took sorted[k] as the k-th largest (off by one)",
        ex3_wrong_off_by_one,
        named="took the threshold at index k of the sorted row, the (k + 1)-th largest",
    ),
    Entry(
        E3,
        "set the others to 0 instead of -inf",
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
        "returned topk's values, shape (..., k)",
        ex3_wrong_returns_values,
        named="returned the k largest values themselves instead of the whole row",
    ),
    Entry(
        E3,
        "the k-th largest of the whole tensor, not per row",
        ex3_wrong_global_threshold,
        named="used one threshold for the whole batch instead of one per row",
    ),
    Entry(
        E3,
        "wrote -inf into the logits given",
        ex3_wrong_in_place,
        named="wrote -inf into the caller's logits in place",
    ),
    Entry(
        E3,
        "topk and scatter along dim 1 (2-D only)",
        ex3_wrong_two_d_scatter,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(
        E3,
        "masked logits <= the k-th (drops it too)",
        ex3_wrong_less_equal,
        named=(
            "removed the logits at or below the k-th largest, which drops the k-th largest itself"
        ),
    ),
    Entry(
        E3,
        "float64, and masked the kept ones instead",
        ex3_wrong_float64_inverted,
        named="removed the k largest logits and kept the others (the mask the wrong way round)",
    ),
    Entry(E3, "scatter the top-k values into -inf", ex3_right_scatter, right=True),
    Entry(E3, "a loop over rows with sort", ex3_right_sort_rows, right=True),
    # Exercise 6
    Entry(
        E4,
        "kept the tokens whose running total is below p",
        ex4_wrong_cumsum_below_p,
        named=(
            "kept the tokens whose running total stays within top_p, which drops the token "
            "that carries the total past top_p"
        ),
    ),
    Entry(
        E4,
        "removed the tokens whose running total passes p",
        ex4_wrong_cumsum_at_most_p,
        named=(
            "kept the tokens whose running total stays within top_p, which drops the token "
            "that carries the total past top_p"
        ),
    ),
    Entry(
        E4,
        "did not renormalise",
        ex4_wrong_not_renormalised,
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
        "sorted ascending",
        ex4_wrong_ascending,
        named="ranked the tokens from the least likely (sort's default, ascending)",
    ),
    Entry(
        E4,
        "gather with the sort order to go back",
        ex4_wrong_gather_to_unsort,
        named="brought the keep/drop marks back with gather instead of scatter",
    ),
    Entry(
        E4,
        "one nucleus over all rows together",
        ex4_wrong_global_nucleus,
        named="built one nucleus for the whole batch instead of one per row",
    ),
    Entry(
        E4,
        "zeroed and divided the input in place",
        ex4_wrong_in_place,
        named="zeroed and renormalised the caller's probabilities in place",
    ),
    Entry(
        E4,
        "a loop over probs.shape[0] (2-D only)",
        ex4_wrong_two_d_loop,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(
        E4,
        "float64, and one token too many kept",
        ex4_wrong_float64_keeps_one_too_many,
        named=(
            "kept one token more than the nucleus: the one after the token that carries the"
            " total past top_p"
        ),
    ),
    Entry(E4, "count the nucleus, compare ranks", ex4_right_count_then_rank, right=True),
    Entry(E4, "a running total over each row", ex4_right_row_loop, right=True),
    # Exercise 7
    Entry(
        E5,
        "temperature as a power of the filtered probs",
        ex5_wrong_temperature_after_top_p,
        named="top-p was applied before the temperature",
    ),
    Entry(
        E5,
        "top-p first, then top-k",
        ex5_wrong_top_p_before_top_k,
        named=(
            "top-p measured its share on the whole distribution, not on the tokens top-k "
            "kept (top-p before top-k, or top-k's probabilities not renormalised)"
        ),
    ),
    Entry(
        E5,
        "did not pass the generator to multinomial",
        ex5_wrong_no_generator,
        named="drew without the generator it was given",
    ),
    Entry(
        E5,
        "multiplied the logits by the temperature",
        ex5_wrong_times_temperature,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(
        E5,
        "returned shape (B,) instead of (B, 1)",
        ex5_wrong_flat_shape,
        named="returned one id per row as shape (B,), without the column of shape (B, 1)",
    ),
    Entry(
        E5,
        "took the argmax every time",
        ex5_wrong_always_greedy,
        named="always took the most likely token, at every temperature",
    ),
    Entry(
        E5,
        "top-k ignored when top-p is given",
        ex5_wrong_top_k_ignored_with_top_p,
        named="applied top-k only when top_p was not given (top-k or top-p, never both)",
    ),
    Entry(
        E5,
        "the nucleus of the untempered distribution",
        ex5_wrong_top_p_on_untempered,
        named="top-p was applied before the temperature",
    ),
    Entry(
        E5,
        "float64; drew for the first row only",
        ex5_wrong_float64_first_row_only,
        named="drew one token, from the first row, instead of one per row",
    ),
    Entry(E5, "top-k applied to the probabilities", ex5_right_top_k_on_probs, right=True),
    Entry(E5, "an inverse-CDF draw with torch.rand", ex5_right_inverse_cdf, right=True),
    # Exercise 8
    Entry(
        E6,
        "positions restart at 0 every step",
        ex6_wrong_positions_restart,
        named="gave each new token position 0 instead of its place in the text",
    ),
    Entry(
        E6,
        "new caches made inside the loop",
        ex6_wrong_fresh_caches_each_step,
        named="emptied the caches after each step",
    ),
    Entry(
        E6,
        "fed the whole text into the cache every step",
        ex6_wrong_whole_text_into_cache,
        named="fed the whole text again at every step while the caches kept everything",
    ),
    Entry(
        E6,
        "no cache: recomputed the whole text each step",
        ex6_wrong_no_cache,
        named=(
            "saved nothing: the keys and values of earlier positions were computed again at"
            " every step"
        ),
    ),
    Entry(
        E6,
        "no mask, also for the prompt",
        ex6_wrong_no_mask_on_prompt,
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
        "took the logits of the first new position",
        ex6_wrong_first_position,
        named="picked the next token from the first position's logits instead of the last's",
    ),
    Entry(
        E6,
        "one cache shared by every layer",
        ex6_wrong_one_cache_for_all_layers,
        named="used one cache for every layer instead of one per layer",
    ),
    Entry(
        E6,
        "looped n - 1 times",
        ex6_wrong_one_token_short,
        named="generated n − 1 new tokens: the loop stops one step early",
    ),
    Entry(E6, "prompt step first, mask None for one token", ex6_right_prompt_first, right=True),
    Entry(E6, "a while loop, position rows sliced", ex6_right_while_loop, right=True),
]


# ---------------------------------------------------------------------------------------------
# The forward pass and the training step (the exercises of section 5)
# ---------------------------------------------------------------------------------------------

E_FORWARD, E_STEP = "ex2_my_gpt_forward", "ex3_my_train_step"


def forward_right_loop(gpt, idx):
    T = idx.shape[1]
    tok = gpt.token_embedding(idx)  # (B, T, C)
    pos = gpt.position_embedding(torch.arange(T))  # (T, C)
    x = gpt.dropout(tok + pos)
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    x = gpt.final_norm(x)
    return gpt.head(x)


def forward_right_tril(gpt, idx):
    t = idx.size(1)
    h = gpt.token_embedding(idx) + gpt.position_embedding.weight[:t]
    h = gpt.dropout(h)
    causal = torch.ones(t, t).tril().bool()
    for blk in gpt.blocks:
        h = blk(h, causal)[0]
    return gpt.final_norm(h) @ gpt.token_embedding.weight.T


def forward_wrong_no_positions(gpt, idx):
    x = gpt.dropout(gpt.token_embedding(idx))
    mask = attnlib.causal_mask(idx.shape[1])
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def forward_wrong_whole_position_table(gpt, idx):
    x = gpt.token_embedding(idx) + gpt.position_embedding.weight  # every position's row
    x = gpt.dropout(x)
    mask = attnlib.causal_mask(idx.shape[1])
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def forward_wrong_mask_in_loop(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    for block in gpt.blocks:
        x, _ = block(x, attnlib.causal_mask(T))
    return gpt.head(gpt.final_norm(x))


def forward_wrong_mask_blocks_past(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # hide the future, I thought
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def forward_wrong_no_final_norm(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(x)


def forward_wrong_untied_head(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    lm_head = nn.Linear(gpt.config.d_model, gpt.config.vocab_size, bias=False)
    return lm_head(gpt.final_norm(x).float())


def forward_wrong_softmax(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return torch.softmax(gpt.head(gpt.final_norm(x)), dim=-1)


def forward_wrong_block_pair(gpt, idx):
    T = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T)))
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def step_right(model, optimizer, scheduler, windows, max_norm):
    inputs, targets = windows[:, :-1], windows[:, 1:]
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_right_zero_first(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad(set_to_none=True)
    logits = model(windows[:, :-1])
    B, T, V = logits.shape
    loss = F.cross_entropy(logits.view(B * T, V), windows[:, 1:].contiguous().view(B * T))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
    optimizer.step()
    scheduler.step()
    return float(loss.detach())


def step_wrong_no_zero_grad(model, optimizer, scheduler, windows, max_norm):
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_clip_before_backward(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1))
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    loss.backward()
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_scheduler_first(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scheduler.step()
    optimizer.step()
    return loss.item()


def step_wrong_returns_tensor(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss


def step_wrong_not_shifted(model, optimizer, scheduler, windows, max_norm):
    x = windows[:, :-1]
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), x.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_no_flatten(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(windows[:, :-1]), windows[:, 1:])
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_clip_fixed_one(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # as in the loop of section 5
    optimizer.step()
    scheduler.step()
    return loss.item()


ENTRIES += [
    Entry(E_FORWARD, "positions, one mask, blocks, norm, head", forward_right_loop, right=True),
    Entry(E_FORWARD, "sliced table, tril mask, matmul with W_E", forward_right_tril, right=True),
    Entry(
        E_FORWARD,
        "forgot the position embedding",
        forward_wrong_no_positions,
        named="left out the position embedding",
    ),
    Entry(
        E_FORWARD,
        "added the whole position table",
        forward_wrong_whole_position_table,
        named=(
            "added the whole position table (max_len rows) instead of the rows of positions 0 to "
            "T - 1"
        ),
    ),
    Entry(
        E_FORWARD,
        "a causal mask built inside the loop",
        forward_wrong_mask_in_loop,
        named="built a new causal mask for every block instead of one for the whole forward pass",
    ),
    Entry(
        E_FORWARD,
        "upper-triangle mask (True = blocked)",
        forward_wrong_mask_blocks_past,
        named="inverted the causal mask (True = blocked)",
    ),
    Entry(
        E_FORWARD,
        "no final LayerNorm",
        forward_wrong_no_final_norm,
        named="left out the final LayerNorm",
    ),
    Entry(
        E_FORWARD,
        "a new nn.Linear head",
        forward_wrong_untied_head,
        named=(
            "built a new nn.Linear as the head inside the function instead of using the model's "
            "tied head"
        ),
    ),
    Entry(
        E_FORWARD,
        "softmax at the end",
        forward_wrong_softmax,
        named="applied a softmax to the logits",
    ),
    Entry(
        E_FORWARD,
        "x = block(x, mask), the pair kept",
        forward_wrong_block_pair,
        named="kept the block's pair (y, weights) as the stream",
    ),
    Entry(E_STEP, "loss, zero, backward, clip, step, schedule", step_right, right=True),
    Entry(E_STEP, "zero first, view, float()", step_right_zero_first, right=True),
    Entry(
        E_STEP,
        "no zero_grad",
        step_wrong_no_zero_grad,
        named="never cleared the gradients",
    ),
    Entry(
        E_STEP,
        "clipped before backward",
        step_wrong_clip_before_backward,
        named="clipped before backward() (or not at all): step() used the unclipped gradient",
    ),
    Entry(
        E_STEP,
        "scheduler before optimizer",
        step_wrong_scheduler_first,
        named="advanced the schedule before the optimizer's step()",
    ),
    Entry(
        E_STEP,
        "returned the loss tensor",
        step_wrong_returns_tensor,
        named="returned the loss as a tensor instead of a float",
    ),
    Entry(
        E_STEP,
        "targets are the inputs",
        step_wrong_not_shifted,
        named="used the inputs as their own targets (not shifted by one)",
    ),
    Entry(
        E_STEP,
        "cross_entropy on (B, T, V)",
        step_wrong_no_flatten,
        named=(
            "passed the (B, T, V) logits and (B, T) targets to F.cross_entropy without "
            "flattening them"
        ),
    ),
    Entry(
        E_STEP,
        "clipped to 1.0 as section 5 does",
        step_wrong_clip_fixed_one,
        named="clipped the norm to 1.0 instead of the max_norm given",
    ),
]
