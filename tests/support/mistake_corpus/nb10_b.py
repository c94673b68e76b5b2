"""Corpus b of notebook 10 (decoder-only GPT): learner answers written blind, see the package."""

import math

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: the GPT block


class Ex1WrongPostNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, w = self.attention(x, mask=mask)
        x = self.norm_1(x + self.dropout(a))
        x = self.norm_2(x + self.dropout(self.feed_forward(x)))
        return x, w


class Ex1WrongRelu(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout)
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        attn_out, weights = self.attention(self.norm_1(x), mask=mask)
        x = x + self.dropout(attn_out)
        x = x + self.dropout(self.feed_forward(self.norm_2(x)))
        return x, weights


class Ex1WrongNoResidualDropout(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)  # built, never used

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + a
        return h + self.feed_forward(self.norm_2(h)), weights


class Ex1WrongAttentionNoDropout(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class Ex1WrongOwnCausalMask(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        mask = attnlib.causal_mask(x.shape[1])  # a GPT block is causal anyway
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class Ex1WrongOneNormTwice(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_1(h))), weights


class Ex1WrongHiddenWidth(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class Ex1WrongParallel(nn.Module):
    """GPT-J style: both sublayers read the same input."""

    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        f = self.feed_forward(self.norm_2(x))
        return x + self.dropout(a) + self.dropout(f), weights


class Ex1WrongInvertedMask(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        # nn.MultiheadAttention wants True = blocked, so flip it
        a, weights = self.attention(self.norm_1(x), mask=~mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class Ex1WrongFfnResidualFromInput(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.d_model
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        y = x + self.dropout(self.feed_forward(self.norm_2(h)))  # x instead of h
        return y, weights


class Ex1RightFunctionalDropout(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.p = config.dropout
        self.norm_1 = nn.LayerNorm(config.d_model)
        self.attention = attnlib.MultiHeadAttention(
            d_model=config.d_model, num_heads=config.num_heads, dropout=config.dropout
        )
        self.norm_2 = nn.LayerNorm(config.d_model)
        self.feed_forward = attnlib.FeedForward(
            config.d_model, d_ff=4 * config.d_model, dropout=config.dropout, activation="gelu"
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):
        out, att = self.attention(self.norm_1(x), mask=mask)
        x = x + F.dropout(out, self.p, self.training)
        ff = self.feed_forward(self.norm_2(x))
        x = x + F.dropout(ff, self.p, self.training)
        return x, att


class Ex1RightSublayerHelper(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.d_model
        self.attention = attnlib.MultiHeadAttention(width, config.num_heads, config.dropout)
        self.feed_forward = attnlib.FeedForward(width, 4 * width, config.dropout, "gelu")
        self.norm_1, self.norm_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.dropout = nn.Dropout(p=config.dropout)

    def _residual(self, stream, update):
        return stream.add(self.dropout(update))

    def forward(self, x, mask):
        attended, weights = self.attention(self.norm_1(x), None, None, mask)
        stream = self._residual(x, attended)
        stream = self._residual(stream, self.feed_forward(self.norm_2(stream)))
        return stream, weights


# ---------------------------------------------------------------- Exercise 4: temperature


def ex2_wrong_unstable(logits, temperature):
    if temperature == 0:
        top = (logits == logits.max(dim=-1, keepdim=True).values).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    e = torch.exp(logits / temperature)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_argmax_one_hot_at_zero(logits, temperature):
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    z = logits / temperature
    e = (z - z.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_no_zero_case(logits, temperature):
    z = logits / temperature
    e = (z - z.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def ex2_wrong_dim_one(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=1, keepdim=True)
    z = logits / temperature
    e = (z - z.amax(dim=1, keepdim=True)).exp()
    return e / e.sum(dim=1, keepdim=True)


def ex2_wrong_times_temperature(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    z = logits * temperature
    e = (z - z.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_power_of_probs(logits, temperature):
    """softmax at T = 1, then sharpen: p ** (1 / T), renormalised."""
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    e = (logits - logits.amax(dim=-1, keepdim=True)).exp()
    p = e / e.sum(dim=-1, keepdim=True)
    p = p ** (1.0 / temperature)
    return p / p.sum(dim=-1, keepdim=True)


def ex2_wrong_global_max(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    z = logits / temperature
    e = torch.exp(z - z.max())  # one max for the whole tensor
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_ties_not_normalised(logits, temperature):
    if temperature == 0:
        return (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
    z = logits / temperature
    e = (z - z.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_rows_loop_2d(logits, temperature):
    out = torch.zeros_like(logits)
    for i in range(logits.shape[0]):
        row = logits[i]
        if temperature == 0:
            top = (row == row.max()).to(row.dtype)
            out[i] = top / top.sum()
        else:
            e = torch.exp((row - row.max()) / temperature)
            out[i] = e / e.sum()
    return out


def ex2_wrong_sum_no_keepdim(logits, temperature):
    if temperature == 0:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    z = logits / temperature
    e = (z - z.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1)


def ex2_right_log_sum_exp_by_hand(logits, temperature):
    if temperature == 0:
        is_max = logits == logits.max(dim=-1, keepdim=True).values
        count = is_max.sum(dim=-1, keepdim=True).to(logits.dtype)
        return torch.where(is_max, 1.0 / count, torch.zeros_like(logits))
    z = (logits - logits.max(dim=-1, keepdim=True).values) / temperature
    log_norm = z.exp().sum(dim=-1, keepdim=True).log()
    return (z - log_norm).exp()


def ex2_right_float64_inside(logits, temperature):
    z = logits.double()
    peak = z.amax(dim=-1, keepdim=True)
    e = torch.exp((z - peak) / temperature) if temperature > 0 else (z == peak).double()
    return (e / e.sum(dim=-1, keepdim=True)).to(logits.dtype)


# ---------------------------------------------------------------- Exercise 5: top-k


def ex3_wrong_k_smallest(logits, k):
    kth = logits.topk(k, dim=-1, largest=False).values[..., -1:]
    return logits.masked_fill(logits > kth, float("-inf"))


def ex3_wrong_off_by_one(logits, k):
    sorted_logits = logits.sort(dim=-1, descending=True).values
    kth = sorted_logits[..., k : k + 1]  # the k-th largest (0-based slip)
    return logits.masked_fill(logits < kth, float("-inf"))


def ex3_wrong_zero_instead_of_minus_inf(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return torch.where(logits >= kth, logits, torch.zeros_like(logits))


def ex3_wrong_big_negative(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, -1e9)


def ex3_wrong_global_top_k(logits, k):
    kth = logits.flatten().topk(k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))


def ex3_wrong_in_place(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    logits[logits < kth] = float("-inf")
    return logits


def ex3_wrong_returns_values(logits, k):
    return logits.topk(k, dim=-1).values


def ex3_wrong_drops_kth(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits <= kth, float("-inf"))


def ex3_wrong_scatter_dim_one(logits, k):
    idx = logits.topk(k, dim=-1).indices
    out = torch.full_like(logits, float("-inf"))
    return out.scatter(1, idx, logits.gather(1, idx))


def ex3_right_scatter_last_dim(logits, k):
    values, idx = torch.topk(logits, k)
    return torch.full_like(logits, -math.inf).scatter(-1, idx, values)


def ex3_right_kthvalue(logits, k):
    v = logits.shape[-1]
    threshold = logits.kthvalue(v - k + 1, dim=-1, keepdim=True).values
    return torch.where(logits >= threshold, logits, torch.tensor(-math.inf, dtype=logits.dtype))


def ex3_right_rows_loop(logits, k):
    flat = logits.reshape(-1, logits.shape[-1]).clone()
    for row in flat:
        order = sorted(range(len(row)), key=lambda j: row[j].item(), reverse=True)
        for j in order[k:]:
            row[j] = float("-inf")
    return flat.reshape(logits.shape)


# ---------------------------------------------------------------- Exercise 6: top-p


def _scatter_back(keep_sorted, order):
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def ex4_wrong_cumsum_at_most_p(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) <= top_p, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_not_renormalised(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) - sorted_probs < top_p, order)
    return probs * keep


def ex4_wrong_sorted_order(probs, top_p):
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    kept = sorted_probs * (sorted_probs.cumsum(dim=-1) - sorted_probs < top_p)
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_unsorted_cumsum(probs, top_p):
    mass_before = probs.cumsum(dim=-1) - probs  # in vocabulary order
    kept = torch.where(mass_before < top_p, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_at_most_p_above(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) - sorted_probs <= top_p, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_gather_instead_of_scatter(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
    keep = keep_sorted.gather(-1, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_wrong_rows_2d(probs, top_p):
    out = torch.zeros_like(probs)
    for i in range(probs.shape[0]):
        sorted_probs, order = probs[i].sort(descending=True)
        total = 0.0
        for p, j in zip(sorted_probs.tolist(), order.tolist(), strict=True):
            out[i, j] = p
            total += p
            if total >= top_p:
                break
    return out / out.sum(dim=1, keepdim=True)


def ex4_wrong_divide_by_p(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) - sorted_probs < top_p, order)
    return probs * keep / top_p


def ex4_wrong_in_place(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) - sorted_probs < top_p, order)
    probs[~keep] = 0.0
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


def ex4_right_rows_loop(probs, top_p):
    flat = probs.reshape(-1, probs.shape[-1])
    out = torch.zeros_like(flat)
    for r in range(flat.shape[0]):
        running = 0.0
        for j in flat[r].argsort(descending=True).tolist():
            if running >= top_p:
                break
            out[r, j] = flat[r, j]
            running += flat[r, j].item()
        out[r] = out[r] / out[r].sum()
    return out.reshape(probs.shape)


def ex4_right_inverse_permutation(probs, top_p):
    order = probs.argsort(dim=-1, descending=True)
    ranked = probs.gather(-1, order)
    before = torch.cumsum(ranked, dim=-1) - ranked
    keep_ranked = (before < top_p).to(probs.dtype)
    keep = keep_ranked.gather(-1, order.argsort(dim=-1))  # back to vocabulary order
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


# ---------------------------------------------------------------- Exercise 7: the sampler


def _softmax(z):
    e = (z - z.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def _top_k(z, k):
    kth = z.topk(k, dim=-1).values[..., -1:]
    return z.masked_fill(z < kth, float("-inf"))


def _top_p(probs, top_p):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = _scatter_back(sorted_probs.cumsum(dim=-1) - sorted_probs < top_p, order)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex5_wrong_top_p_before_top_k(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = _softmax(logits / temperature)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    if top_k is not None:
        probs = _softmax(_top_k(probs.log(), top_k))
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


def ex5_wrong_draws_at_zero(logits, temperature, top_k, top_p, generator):
    if temperature == 0:  # the limit distribution: ties share the mass
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        probs = top / top.sum(dim=-1, keepdim=True)
    else:
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


def ex5_wrong_always_greedy(logits, temperature, top_k, top_p, generator):
    z = logits / max(temperature, 1e-8)
    if top_k is not None:
        z = _top_k(z, top_k)
    return z.argmax(dim=-1, keepdim=True)


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


def ex5_wrong_nucleus_at_t1(logits, temperature, top_k, top_p, generator):
    """The nucleus is chosen from the model's own distribution, then the temperature."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits if top_k is None else _top_k(logits, top_k)
    probs = _softmax(z / temperature)
    if top_p is not None:
        allowed = _top_p(_softmax(z), top_p) > 0
        probs = probs * allowed
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_index_within_top_k(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is None:
        probs = _softmax(z)
        if top_p is not None:
            probs = _top_p(probs, top_p)
        return torch.multinomial(probs, 1, generator=generator)
    values, _ = z.topk(top_k, dim=-1)  # (B, k)
    probs = _softmax(values)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)  # a place in the top k


def ex5_wrong_top_k_on_unscaled(logits, temperature, top_k, top_p, generator):
    """top-k and top-p are applied, but the temperature is forgotten when either is on."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    if top_k is None and top_p is None:
        return torch.multinomial(_softmax(logits / temperature), 1, generator=generator)
    z = logits if top_k is None else _top_k(logits, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_right_inverse_cdf(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return torch.argmax(logits, dim=-1).unsqueeze(-1)
    z = logits.double() / temperature
    if top_k:
        z = _top_k(z, top_k)
    probs = _softmax(z)
    if top_p is not None:
        probs = _top_p(probs, top_p)
    cdf = probs.cumsum(dim=-1)
    u = torch.rand(logits.shape[0], 1, generator=generator, dtype=torch.float64)
    idx = (cdf < u * cdf[:, -1:]).sum(dim=-1, keepdim=True)
    return idx.clamp(max=logits.shape[-1] - 1)


def ex5_right_gumbel_max(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits.double() / temperature
    if top_k is not None:
        z = _top_k(z, top_k)
    log_p = _softmax(z)
    if top_p is not None:
        log_p = _top_p(log_p, top_p)
    log_p = log_p.log()
    u = torch.rand(log_p.shape, generator=generator, dtype=torch.float64).clamp_min(1e-300)
    return (log_p - (-u.log()).log()).argmax(dim=-1, keepdim=True)


# ---------------------------------------------------------------- Exercise 8: a KV cache


def ex6_wrong_positions_from_zero(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(t))
            mask = attnlib.causal_mask(t, start + t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_no_cache_recompute(gpt, idx, n):
    with torch.no_grad():
        for _ in range(n):
            t = idx.shape[1]
            x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t))
            for block in gpt.blocks:
                x, _ = block(x, attnlib.causal_mask(t))
            nxt = gpt.head(gpt.final_norm(x))[:, -1].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
    return idx


def ex6_wrong_new_cache_each_step(gpt, idx, n):
    new, offset = idx, 0
    with torch.no_grad():
        for _ in range(n):
            caches = [attnlib.KVCache() for _ in gpt.blocks]
            t = new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(offset, offset + t))
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, attnlib.causal_mask(t), cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            offset += t
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_no_mask(gpt, idx, n):
    """One new token needs no mask, so none at all."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + t))
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, None, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_no_final_norm(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + t))
            mask = attnlib.causal_mask(t, start + t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(x[:, -1]).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_first_position_logits(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n):
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + t))
            mask = attnlib.causal_mask(t, start + t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            logits = gpt.head(gpt.final_norm(x))  # (B, T_new, V)
            new = logits[:, 0].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_returns_new_only(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new, out = idx, []
    with torch.no_grad():
        for _ in range(n):
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + t))
            mask = attnlib.causal_mask(t, start + t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            out.append(new)
    return torch.cat(out, dim=1)


def ex6_wrong_one_shared_cache(gpt, idx, n):
    cache = attnlib.KVCache()
    new, seen = idx, 0
    with torch.no_grad():
        for _ in range(n):
            t = new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(seen, seen + t))
            for block in gpt.blocks:
                x, _ = block(x, attnlib.causal_mask(t, len(cache) + t), cache)
            seen += t
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_wrong_one_step_short(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    with torch.no_grad():
        for _ in range(n - 1):  # the last token needs no step after it
            start, t = len(caches[0]), new.shape[1]
            x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + t))
            mask = attnlib.causal_mask(t, start + t)
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def ex6_right_prefill_then_steps(gpt, idx, n):
    caches = [attnlib.KVCache() for _ in range(len(gpt.blocks))]

    def run(tokens, start):
        t = tokens.shape[1]
        h = gpt.token_embedding(tokens) + gpt.position_embedding(torch.arange(start, start + t))
        for i, block in enumerate(gpt.blocks):
            h, _ = block(h, attnlib.causal_mask(t, start + t), caches[i])
        return gpt.head(gpt.final_norm(h))[:, -1, :]

    with torch.no_grad():
        logits = run(idx, 0)
        out = [idx]
        for step in range(n):
            token = logits.argmax(dim=-1, keepdim=True)
            out.append(token)
            if step < n - 1:
                logits = run(token, idx.shape[1] + step)
    return torch.cat(out, dim=1)


def ex6_right_token_by_token(gpt, idx, n):
    """Even the prompt goes in one token at a time: each key is still computed once."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    total = idx.shape[1] + n
    seq = idx
    with torch.no_grad():
        for pos in range(total - 1):
            tok = seq[:, pos : pos + 1]
            h = gpt.token_embedding(tok) + gpt.position_embedding.weight[pos]
            for block, cache in zip(gpt.blocks, caches, strict=True):
                h, _ = block(h, None, cache)
            if pos + 1 >= idx.shape[1]:
                nxt = gpt.head(gpt.final_norm(h[:, 0])).argmax(-1, keepdim=True)
                seq = torch.cat([seq, nxt], dim=1)
    return seq


E1, E2, E3 = "ex1_my_gpt_block", "ex4_my_temperature_probs", "ex5_my_top_k_logits"
E4, E5, E6 = "ex6_my_top_p_probs", "ex7_my_sample", "ex8_my_generate_cached"

ENTRIES = [
    Entry(
        E1,
        "normed after adding, as in the 2017 paper (post-norm)",
        Ex1WrongPostNorm,
        named=(
            "normalised after adding (post-norm, LN(x + f(x)), as in notebook 08) instead of before"
        ),
    ),
    Entry(
        E1,
        "left the FFN's activation at its default, ReLU",
        Ex1WrongRelu,
        named=(
            "built the feed-forward network with FeedForward's default activation (ReLU), not GELU"
        ),
    ),
    Entry(
        E1,
        "built self.dropout but never applied it to the sublayers",
        Ex1WrongNoResidualDropout,
        named="left out the dropout on the sublayers' outputs",
    ),
    Entry(
        E1,
        "built the attention without the config's dropout",
        Ex1WrongAttentionNoDropout,
        named="built the attention without the config's dropout",
    ),
    Entry(
        E1,
        "built a causal mask in the block instead of using the one given",
        Ex1WrongOwnCausalMask,
        named="built its own causal mask instead of using the mask it was given",
    ),
    Entry(
        E1,
        "used norm_1 in front of the FFN as well",
        Ex1WrongOneNormTwice,
        named="used norm_1 in front of both sublayers (norm_2 is never used)",
    ),
    Entry(
        E1,
        "made the FFN's hidden layer d_model wide instead of 4 d_model",
        Ex1WrongHiddenWidth,
        named="made the feed-forward network's hidden layer d_model wide instead of 4·d_model",
    ),
    Entry(
        E1,
        "the FFN reads LN(x) rather than LN(h): a parallel block",
        Ex1WrongParallel,
        named=(
            "fed the feed-forward network the block's input instead of the stream after attention"
        ),
    ),
    Entry(
        E1,
        "inverted the mask as for nn.MultiheadAttention",
        Ex1WrongInvertedMask,
        named="inverted the mask before passing it on",
    ),
    Entry(
        E1,
        "added the FFN's output to x, losing the attention's",
        Ex1WrongFfnResidualFromInput,
        named=(
            "added the feed-forward network's output to the block's input x instead of to the"
            " stream after attention, which drops the attention's output"
        ),
    ),
    Entry(
        E1, "functional dropout, submodules built in another order", Ex1RightFunctionalDropout, True
    ),
    Entry(E1, "a residual helper, positional arguments", Ex1RightSublayerHelper, True),
    Entry(
        E2,
        "exp without subtracting the max",
        ex2_wrong_unstable,
        named="exponentiated z / T without first subtracting each row's largest value",
    ),
    Entry(
        E2,
        "T = 0 gives a one-hot of the argmax, ties ignored",
        ex2_wrong_argmax_one_hot_at_zero,
        named="at T = 0, put all the mass on the first of the tied largest logits",
    ),
    Entry(
        E2,
        "no special case for T = 0",
        ex2_wrong_no_zero_case,
        named="divided by the temperature at T = 0 too",
    ),
    Entry(
        E2,
        "softmax along dim 1",
        ex2_wrong_dim_one,
        named="worked along dim 1, which is the vocabulary only for a 2-D input",
    ),
    Entry(
        E2,
        "multiplied the logits by T",
        ex2_wrong_times_temperature,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(
        E2,
        "raised the T = 1 probabilities to the power 1/T",
        ex2_wrong_power_of_probs,
        named=(
            "raised the probabilities at T = 1 to the power 1/T instead of dividing the logits by T"
        ),
    ),
    Entry(
        E2,
        "subtracted the max of the whole tensor, not of each row",
        ex2_wrong_global_max,
        named="shifted every row by the largest value of the whole batch",
    ),
    Entry(
        E2,
        "T = 0: a 1 on every tied maximum, not divided by their count",
        ex2_wrong_ties_not_normalised,
        named="at T = 0, gave each of the tied largest logits a probability of 1",
    ),
    Entry(
        E2,
        "a loop over the rows of a 2-D tensor",
        ex2_wrong_rows_loop_2d,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(
        E2,
        "divided by the row sums without keepdim",
        ex2_wrong_sum_no_keepdim,
        named="summed each row without keeping its dimension",
    ),
    Entry(E2, "log-sum-exp by hand, torch.where at T = 0", ex2_right_log_sum_exp_by_hand, True),
    Entry(E2, "computed in float64, cast back", ex2_right_float64_inside, True),
    Entry(
        E3,
        "kept the k smallest logits",
        ex3_wrong_k_smallest,
        named="kept the k smallest logits instead of the k largest",
    ),
    Entry(
        E3,
        "threshold at sorted[k] instead of sorted[k - 1]",
        ex3_wrong_off_by_one,
        named="took the threshold at index k of the sorted row, the (k + 1)-th largest",
    ),
    Entry(
        E3,
        "set the others to 0 instead of -inf",
        ex3_wrong_zero_instead_of_minus_inf,
        named="set the removed logits to 0 instead of -inf",
    ),
    Entry(
        E3,
        "set the others to -1e9",
        ex3_wrong_big_negative,
        named="set the removed logits to a large negative number such as -1e9 instead of -inf",
    ),
    Entry(
        E3,
        "the k largest of the whole tensor",
        ex3_wrong_global_top_k,
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
        ex3_wrong_returns_values,
        named="returned the k largest values themselves instead of the whole row",
    ),
    Entry(
        E3,
        "dropped logits <= the k-th, so the k-th itself went",
        ex3_wrong_drops_kth,
        named=(
            "removed the logits at or below the k-th largest, which drops the k-th largest itself"
        ),
    ),
    Entry(
        E3,
        "scattered along dim 1",
        ex3_wrong_scatter_dim_one,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(E3, "scatter of the topk values into -inf", ex3_right_scatter_last_dim, True),
    Entry(E3, "kthvalue as the threshold", ex3_right_kthvalue, True),
    Entry(E3, "a loop over the rows, sorted in Python", ex3_right_rows_loop, True),
    Entry(
        E4,
        "kept the tokens whose running total is at most p",
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
        "returned the nucleus in sorted order",
        ex4_wrong_sorted_order,
        named="left the kept probabilities in sorted order instead of at their tokens",
    ),
    Entry(
        E4,
        "running total in vocabulary order, never sorted",
        ex4_wrong_unsorted_cumsum,
        named="took the running total in vocabulary order, without ranking the tokens first",
    ),
    Entry(
        E4,
        "kept a token when the mass above it is at most p",
        ex4_wrong_at_most_p_above,
        named=(
            "kept a token while the tokens ranked above it hold at most top_p (<=), so a "
            "total that reaches top_p exactly still lets the next token in"
        ),
    ),
    Entry(
        E4,
        "put the mask back with gather instead of scatter",
        ex4_wrong_gather_instead_of_scatter,
        named="brought the keep/drop marks back with gather instead of scatter",
    ),
    Entry(
        E4,
        "a loop over the rows of a 2-D tensor",
        ex4_wrong_rows_2d,
        named="assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    ),
    Entry(
        E4,
        "divided by p instead of the kept total",
        ex4_wrong_divide_by_p,
        named="divided the kept probabilities by top_p instead of by their own total",
    ),
    Entry(
        E4,
        "zeroed and renormalised probs in place",
        ex4_wrong_in_place,
        named="zeroed and renormalised the caller's probabilities in place",
    ),
    Entry(E4, "a Python loop over the flattened rows", ex4_right_rows_loop, True),
    Entry(E4, "argsort and its inverse permutation", ex4_right_inverse_permutation, True),
    Entry(
        E5,
        "top-p on the full distribution, then top-k",
        ex5_wrong_top_p_before_top_k,
        named=(
            "top-p measured its share on the whole distribution, not on the tokens top-k kept"
            " (top-p before top-k, or top-k's probabilities not renormalised)"
        ),
    ),
    Entry(
        E5,
        "multiplied the logits by the temperature",
        ex5_wrong_times_temperature,
        named="multiplied the logits by the temperature instead of dividing them",
    ),
    Entry(
        E5,
        "drew from the T = 0 limit instead of taking the argmax",
        ex5_wrong_draws_at_zero,
        named=(
            "at temperature 0, drew from the limit of the distribution (the tied largest "
            "logits sharing the mass) instead of taking the most likely token"
        ),
    ),
    Entry(
        E5,
        "never passed the generator to multinomial",
        ex5_wrong_no_generator,
        named="drew without the generator it was given",
    ),
    Entry(
        E5,
        "always took the argmax",
        ex5_wrong_always_greedy,
        named="always took the most likely token, at every temperature",
    ),
    Entry(
        E5,
        "returned shape (B,)",
        ex5_wrong_flat_shape,
        named="returned one id per row as shape (B,), without the column of shape (B, 1)",
    ),
    Entry(
        E5,
        "chose the nucleus at T = 1, then drew at T",
        ex5_wrong_nucleus_at_t1,
        named="top-p was applied before the temperature",
    ),
    Entry(
        E5,
        "returned the place within the top k, not the token id",
        ex5_wrong_index_within_top_k,
        named=(
            "returned a token's place among the top k (0 … k − 1) instead of its id in the "
            "vocabulary"
        ),
    ),
    Entry(
        E5,
        "forgot the temperature when a filter is on",
        ex5_wrong_top_k_on_unscaled,
        named="left the temperature out when top-k or top-p is on",
    ),
    Entry(E5, "inverse CDF with torch.rand, float64", ex5_right_inverse_cdf, True),
    Entry(E5, "the Gumbel-max trick", ex5_right_gumbel_max, True),
    Entry(
        E6,
        "positions counted from 0 at every step",
        ex6_wrong_positions_from_zero,
        named="gave each new token position 0 instead of its place in the text",
    ),
    Entry(
        E6,
        "no cache: the whole text through the blocks every step",
        ex6_wrong_no_cache_recompute,
        named=(
            "saved nothing: the keys and values of earlier positions were computed again at "
            "every step"
        ),
    ),
    Entry(
        E6,
        "a fresh cache at every step",
        ex6_wrong_new_cache_each_step,
        named="emptied the caches after each step",
    ),
    Entry(
        E6,
        "no mask at all, the prompt included",
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
        ex6_wrong_first_position_logits,
        named="picked the next token from the first position's logits instead of the last's",
    ),
    Entry(
        E6,
        "returned the new tokens only",
        ex6_wrong_returns_new_only,
        named="returned only the n new tokens, without the prompt",
    ),
    Entry(
        E6,
        "one cache shared by every layer",
        ex6_wrong_one_shared_cache,
        named="used one cache for every layer instead of one per layer",
    ),
    Entry(
        E6,
        "looped n - 1 times",
        ex6_wrong_one_step_short,
        named="generated n − 1 new tokens: the loop stops one step early",
    ),
    Entry(
        E6,
        "prefill, then one token a step, no step after the last",
        ex6_right_prefill_then_steps,
        True,
    ),
    Entry(E6, "the prompt fed one token at a time too", ex6_right_token_by_token, True),
]


# -- the forward pass and the training step (section 5) --------------------------------------

E_FORWARD, E_STEP = "ex2_my_gpt_forward", "ex3_my_train_step"


def fwd_right_enumerate(gpt, idx):
    t = idx.shape[1]
    pos = torch.arange(t).unsqueeze(0)  # (1, T)
    x = gpt.token_embedding(idx) + gpt.position_embedding(pos)
    x = gpt.dropout(x)
    m = attnlib.causal_mask(t, t)
    for _, blk in enumerate(gpt.blocks):
        x, _att = blk(x, m)
    return gpt.head(gpt.final_norm(x))


def fwd_right_functional_embedding(gpt, idx):
    t = idx.shape[-1]
    x = F.embedding(idx, gpt.token_embedding.weight)
    x = x + F.embedding(torch.arange(t), gpt.position_embedding.weight)
    x = gpt.dropout(x)
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x = block(x, mask=mask)[0]
    return F.linear(gpt.final_norm(x), gpt.head.weight)


def fwd_wrong_norm_after_each_block(gpt, idx):
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t)))
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x, _ = block(x, mask)
        x = gpt.final_norm(x)
    return gpt.head(x)


def fwd_wrong_weights_as_output(gpt, idx):
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t)))
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x = block(x, mask)[1]
    return gpt.head(gpt.final_norm(x))


def fwd_wrong_no_dropout(gpt, idx):
    t = idx.shape[1]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t))
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def fwd_wrong_dropout_at_the_end(gpt, idx):
    t = idx.shape[1]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t))
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.dropout(gpt.final_norm(x)))


def fwd_wrong_head_then_norm(gpt, idx):
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t)))
    mask = attnlib.causal_mask(t)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.final_norm(gpt.head(x))


def fwd_wrong_mask_none(gpt, idx):
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(t)))
    for block in gpt.blocks:
        x, _ = block(x, None)
    return gpt.head(gpt.final_norm(x))


def step_right_permute(model, optimizer, scheduler, windows, max_norm):
    model.train()
    optimizer.zero_grad(set_to_none=False)
    logits = model(windows[:, :-1])  # (B, T, V)
    loss = F.cross_entropy(logits.permute(0, 2, 1), windows[:, 1:])
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_zero_at_end(model, optimizer, scheduler, windows, max_norm):
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return loss.item()


def step_wrong_clip_after_step(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scheduler.step()
    return loss.item()


def step_wrong_forgot_scheduler(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def step_wrong_view(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    V = logits.size(-1)
    loss = F.cross_entropy(logits.view(-1, V), windows[:, 1:].view(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def step_wrong_item_not_called(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item


def step_wrong_whole_window(model, optimizer, scheduler, windows, max_norm):
    optimizer.zero_grad()
    logits = model(windows)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), windows[:, 1:].flatten())
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


ENTRIES += [
    Entry(
        E_FORWARD, "enumerate, (1, T) positions, causal_mask(t, t)", fwd_right_enumerate, right=True
    ),
    Entry(E_FORWARD, "F.embedding and F.linear", fwd_right_functional_embedding, right=True),
    Entry(
        E_FORWARD,
        "final_norm inside the loop",
        fwd_wrong_norm_after_each_block,
        named="applied the final LayerNorm after every block instead of once, after the last",
    ),
    Entry(
        E_FORWARD,
        "took block(...)[1]",
        fwd_wrong_weights_as_output,
        named="kept the attention weights as the stream instead of the block's output",
    ),
    Entry(
        E_FORWARD,
        "no dropout (the notebook's config has none)",
        fwd_wrong_no_dropout,
        named="left out the dropout after the embeddings",
    ),
    Entry(
        E_FORWARD,
        "the dropout before the head",
        fwd_wrong_dropout_at_the_end,
        named="applied the model's dropout before the head instead of after the embeddings",
    ),
    Entry(
        E_FORWARD,
        "LayerNorm on the logits",
        fwd_wrong_head_then_norm,
        named="applied the head before the final LayerNorm",
    ),
    Entry(
        E_FORWARD,
        "mask None: the blocks mask themselves, I thought",
        fwd_wrong_mask_none,
        named="passed no mask to the blocks: every position sees the tokens after it",
    ),
    Entry(E_STEP, "model.train(), zeros, permute", step_right_permute, right=True),
    Entry(
        E_STEP,
        "zero_grad at the end of the step",
        step_wrong_zero_at_end,
        named="cleared the gradients after step(), not before backward()",
    ),
    Entry(E_STEP, "clip after step", step_wrong_clip_after_step, named="clipped after step()"),
    Entry(
        E_STEP,
        "forgot scheduler.step()",
        step_wrong_forgot_scheduler,
        named="never advanced the schedule",
    ),
    Entry(
        E_STEP,
        ".view on the targets",
        step_wrong_view,
        named="flattened the targets with .view, which a slice of the windows cannot take",
    ),
    Entry(
        E_STEP,
        "return loss.item",
        step_wrong_item_not_called,
        named="returned the loss's item method without calling it",
    ),
    Entry(
        E_STEP,
        "the model reads the whole window, its last logits cut",
        step_wrong_whole_window,
        named="fed the model the whole window, T + 1 tokens, not its first T",
    ),
]
