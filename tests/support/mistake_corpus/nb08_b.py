"""Corpus b for notebook 08 (the Transformer block), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

# ----------------------------------------------------------- Exercise 1: gated_feed_forward


def ex1_wrong_gelu_on_up(x, w_gate, w_up, w_down):
    gate = x @ w_gate.T
    up = F.gelu(x @ w_up.T)  # bent the wrong branch
    return (gate * up) @ w_down.T


def ex1_wrong_tanh_gelu(x, w_gate, w_up, w_down):
    # the GELU formula from the BERT code: the tanh approximation
    h = x @ w_gate.T
    gate = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_relu(x, w_gate, w_up, w_down):
    return (torch.relu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def ex1_wrong_swiglu(x, w_gate, w_up, w_down):
    # copied from the LLaMA code: SiLU gate
    return (F.silu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def ex1_wrong_gelu_after_product(x, w_gate, w_up, w_down):
    hidden = F.gelu((x @ w_gate.T) * (x @ w_up.T))
    return hidden @ w_down.T


def ex1_wrong_add_not_multiply(x, w_gate, w_up, w_down):
    hidden = F.gelu(x @ w_gate.T) + x @ w_up.T
    return hidden @ w_down.T


def ex1_wrong_mm_2d(x, w_gate, w_up, w_down):
    gate = F.gelu(torch.mm(x, w_gate.t()))
    up = torch.mm(x, w_up.t())
    return torch.mm(gate * up, w_down.t())


def ex1_wrong_erf_no_sqrt2(x, w_gate, w_up, w_down):
    h = x @ w_gate.T
    gate = h * 0.5 * (1 + torch.erf(h / 2))  # Φ(x) written from memory
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_gate_weights_twice(x, w_gate, w_up, w_down):
    gate = F.gelu(x @ w_gate.T)
    up = x @ w_gate.T  # copy-paste: w_gate again
    return (gate * up) @ w_down.T


def ex1_wrong_float64_and_extra_gelu(x, w_gate, w_up, w_down):
    x64 = x.double()
    hidden = F.gelu(x64 @ w_gate.T.double()) * (x64 @ w_up.T.double())
    return F.gelu(hidden @ w_down.T.double()).to(x.dtype)  # an activation at the end as well


def ex1_right_einsum_erf(x, w_gate, w_up, w_down):
    g = torch.einsum("...d,fd->...f", x, w_gate)
    u = torch.einsum("...d,fd->...f", x, w_up)
    hidden = g * 0.5 * (1.0 + torch.erf(g / math.sqrt(2.0))) * u
    return torch.einsum("...f,df->...d", hidden, w_down)


def ex1_right_linear(x, w_gate, w_up, w_down):
    return F.linear(F.gelu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def ex1_right_flatten(x, w_gate, w_up, w_down):
    d = x.shape[-1]
    flat = x.reshape(-1, d)
    hidden = F.gelu(flat.matmul(w_gate.transpose(0, 1))) * flat.matmul(w_up.transpose(0, 1))
    return hidden.matmul(w_down.transpose(0, 1)).reshape(x.shape)


# ------------------------------------------------------------------- Exercise 2: layer_norm


def ex2_wrong_last_dim_only(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_unbiased(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True)  # torch's default: divides by n - 1
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_one_pass_variance(x, gamma, beta, eps=1e-5):
    dims = [-(i + 1) for i in range(gamma.dim())]
    mean = x.mean(dim=dims, keepdim=True)
    var = (x * x).mean(dim=dims, keepdim=True) - mean * mean  # E[x²] − E[x]²
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_eps_outside_sqrt(x, gamma, beta, eps=1e-5):
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    std = ((x - mean) ** 2).mean(dim=dims, keepdim=True).sqrt()
    return gamma * (x - mean) / (std + eps) + beta


def ex2_wrong_batch_statistics(x, gamma, beta, eps=1e-5):
    # one mean per feature, over the batch (BatchNorm)
    mean = x.mean(dim=0, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_gamma_beta_swapped(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dims, keepdim=True)
    var = (x - mean).pow(2).mean(dims, keepdim=True)
    return beta * (x - mean) / torch.sqrt(var + eps) + gamma


def ex2_wrong_leading_dims(x, gamma, beta, eps=1e-5):
    dims = tuple(range(gamma.dim()))  # the first gamma.dim() dimensions
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_no_eps(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    std = torch.sqrt(((x - mean) ** 2).mean(dim=dims, keepdim=True))
    return gamma * (x - mean) / std + beta


def ex2_wrong_per_sample(x, gamma, beta, eps=1e-5):
    # everything but the batch dimension is one "layer"
    flat = x.reshape(x.shape[0], -1)
    mean = flat.mean(dim=1, keepdim=True)
    var = flat.var(dim=1, unbiased=False, keepdim=True)
    normed = ((flat - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    return gamma * normed + beta


def ex2_wrong_in_place(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    x -= x.mean(dim=dims, keepdim=True)  # centre in place
    var = (x**2).mean(dim=dims, keepdim=True)
    return gamma * x / torch.sqrt(var + eps) + beta


def ex2_right_flatten(x, gamma, beta, eps=1e-5):
    lead = x.shape[: x.dim() - gamma.dim()]
    flat = x.reshape(*lead, -1)
    mu = flat.mean(-1, keepdim=True)
    var = (flat - mu).square().mean(-1, keepdim=True)
    normed = ((flat - mu) * torch.rsqrt(var + eps)).reshape(x.shape)
    return normed * gamma + beta


def ex2_right_var_mean(x, gamma, beta, eps=1e-5):
    dims = list(range(x.dim() - gamma.dim(), x.dim()))
    var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * gamma + beta


def ex2_right_float64(x, gamma, beta, eps=1e-5):
    x64 = x.double()
    dims = tuple(range(-gamma.dim(), 0))
    centred = x64 - x64.mean(dim=dims, keepdim=True)
    var = centred.pow(2).mean(dim=dims, keepdim=True)
    out = centred / torch.sqrt(var + eps) * gamma.double() + beta.double()
    return out.to(x.dtype)


# --------------------------------------------------------------- Exercise 3: residual_block


def ex3_wrong_wirings_swapped(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return norm(x + dropout(sublayer(x)))
    return x + dropout(sublayer(norm(x)))


def ex3_wrong_dropout_on_sum(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(x + sublayer(norm(x)))
    return norm(dropout(x + sublayer(x)))


def ex3_wrong_no_dropout(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


def ex3_wrong_normalised_skip(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        x = norm(x)  # normalise first, then the usual residual
        return x + dropout(sublayer(x))
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_dropout_on_input(x, sublayer, norm, dropout, norm_first):
    dropped = dropout(x)
    if norm_first:
        return x + sublayer(norm(dropped))
    return norm(x + sublayer(dropped))


def ex3_wrong_post_norm_twice(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(norm(x))))


def ex3_wrong_pre_norm_final_norm(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return norm(x + dropout(sublayer(norm(x))))  # a LayerNorm at the end, to be safe
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_dropout_after_norm(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return dropout(norm(x + sublayer(x)))


def ex3_wrong_norm_skip_only(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x) + dropout(sublayer(x))


def ex3_wrong_always_post(x, sublayer, norm, dropout, norm_first):
    if norm_first == "pre":
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


def ex3_right_one_expression(x, sublayer, norm, dropout, norm_first):
    inner = norm(x) if norm_first else x
    total = x + dropout(sublayer(inner))
    return total if norm_first else norm(total)


def ex3_right_not(x, sublayer, norm, dropout, norm_first):
    if not norm_first:
        out = sublayer(x)
        out = dropout(out)
        return norm(out + x)
    normed = norm(x)
    return dropout(sublayer(normed)) + x


# ------------------------------------------------------------- Exercise 4: MyEncoderLayer


class _Encoder(nn.Module):
    """A right layer whose forward the wrong ones below change."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


class Ex4WrongPreNorm(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex4WrongNoDropout(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex4WrongDropoutEverywhere(nn.Module):
    # the attention and the FFN get the dropout rate too
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, dropout=dropout)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongOneNorm(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_1(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongMaskInverted(_Encoder):
    def forward(self, x, mask=None):
        if mask is not None:
            mask = ~mask  # PyTorch's padding mask marks what to ignore
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongMaskIgnored(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongParallel(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        f = self.feed_forward(x)  # both sublayers read the input
        return self.norm_2(h + self.dropout(f)), w


class Ex4WrongSkipFromInput(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(h))), w


class Ex4WrongNormsSwapped(_Encoder):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_2(x + self.dropout(a))
        return self.norm_1(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongOutputOnly(_Encoder):
    def forward(self, x, mask=None):
        a, _ = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h)))


class Ex4RightBlockHelper(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(p=dropout)

    def _add_norm(self, x, out, norm):
        return norm(x + self.dropout(out))

    def forward(self, x, mask=None):
        out, weights = self.self_attention(x, x, x, mask)
        x = self._add_norm(x, out, self.norm_1)
        x = self._add_norm(x, self.feed_forward(x), self.norm_2)
        return x, weights


class Ex4RightLoop(_Encoder):
    def forward(self, x, mask=None):
        saved = {}

        def attend(t):
            out, saved["w"] = self.self_attention(t, mask=mask)
            return out

        for sub, norm in ((attend, self.norm_1), (self.feed_forward, self.norm_2)):
            x = norm(x + self.dropout(sub(x)))
        return x, saved["w"]


# ------------------------------------------------------------- Exercise 5: MyDecoderLayer


class _Decoder(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def _rest(self, y, h1, memory, memory_mask, sw):
        r, cw = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5WrongNoCausal(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y)
        return self._rest(y, self.norm_1(y + self.dropout(a)), memory, memory_mask, sw)


class Ex5WrongCausalInverted(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        future = torch.triu(torch.ones(T, T), diagonal=1).bool()  # the positions to hide
        a, sw = self.self_attention(y, mask=future)
        return self._rest(y, self.norm_1(y + self.dropout(a)), memory, memory_mask, sw)


class Ex5WrongCrossSwapped(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y, mask=attnlib.causal_mask(y.size(1)))
        h1 = self.norm_1(y + self.dropout(a))
        r, cw = self.cross_attention(memory, h1, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5WrongCrossReadsInput(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a))
        r, cw = self.cross_attention(y, memory, mask=memory_mask)  # queries from y
        h2 = self.norm_2(h1 + self.dropout(r))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5WrongMasksSwapped(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        causal = attnlib.causal_mask(y.shape[1])
        a, sw = self.self_attention(y, mask=memory_mask)
        h1 = self.norm_1(y + self.dropout(a))
        r, cw = self.cross_attention(h1, memory, mask=causal)
        h2 = self.norm_2(h1 + self.dropout(r))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5WrongPreNorm(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(self.norm_1(y), mask=attnlib.causal_mask(y.shape[1]))
        h1 = y + self.dropout(a)
        r, cw = self.cross_attention(self.norm_2(h1), memory, mask=memory_mask)
        h2 = h1 + self.dropout(r)
        return h2 + self.dropout(self.feed_forward(self.norm_3(h2))), sw, cw


class Ex5WrongNoCrossDropout(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a))
        r, cw = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + r)
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5WrongCausalFromMemory(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y, mask=attnlib.causal_mask(memory.shape[1]))
        return self._rest(y, self.norm_1(y + self.dropout(a)), memory, memory_mask, sw)


class Ex5WrongStrictlyLower(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # only the past
        a, sw = self.self_attention(y, mask=mask)
        return self._rest(y, self.norm_1(y + self.dropout(a)), memory, memory_mask, sw)


class Ex5WrongNoMemoryMask(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        a, sw = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        return self._rest(y, self.norm_1(y + self.dropout(a)), memory, None, sw)


class Ex5RightByHand(_Decoder):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=y.device).tril()[None, None]
        a, sw = self.self_attention(y, y, y, mask=causal)
        h1 = self.norm_1(y + self.dropout(a))
        r, cw = self.cross_attention(h1, memory, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), sw, cw


class Ex5RightBlocks(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        for i in (1, 2, 3):
            setattr(self, f"norm_{i}", nn.LayerNorm(d_model))
        self.dropout = nn.Dropout(dropout)

    def block(self, x, out, norm):
        return norm(x + self.dropout(out))

    def forward(self, y, memory, memory_mask=None):
        mask = attnlib.causal_mask(y.shape[-2])
        sa, self_w = self.self_attention(y, mask=mask)
        y = self.block(y, sa, self.norm_1)
        ca, cross_w = self.cross_attention(y, key=memory, value=memory, mask=memory_mask)
        y = self.block(y, ca, self.norm_2)
        y = self.block(y, self.feed_forward(y), self.norm_3)
        return y, self_w, cross_w


E1, E2, E3 = "ex1_gated_feed_forward", "ex2_layer_norm", "ex3_residual_block"
E4, E5 = "ex4_my_encoder_layer", "ex5_my_decoder_layer"

ENTRIES = [
    Entry(
        E1,
        "put the GELU on the up branch instead of the gate",
        ex1_wrong_gelu_on_up,
        named="put GELU on the up branch instead of the gate",
    ),
    Entry(
        E1,
        "wrote GELU with BERT's tanh approximation",
        ex1_wrong_tanh_gelu,
        named="used GELU's tanh approximation",
    ),
    Entry(
        E1,
        "used ReLU as the gate's activation",
        ex1_wrong_relu,
        named="used ReLU as the gate's non-linearity instead of GELU",
    ),
    Entry(
        E1,
        "used SiLU (SwiGLU, as in LLaMA) instead of GELU",
        ex1_wrong_swiglu,
        named="used SiLU (x·σ(x), SwiGLU's gate) instead of GELU",
    ),
    Entry(
        E1,
        "applied GELU after multiplying the two branches",
        ex1_wrong_gelu_after_product,
        named="applied GELU after multiplying the two branches",
    ),
    Entry(
        E1,
        "added the two branches instead of multiplying",
        ex1_wrong_add_not_multiply,
        named="added the two branches instead of multiplying them",
    ),
    Entry(
        E1,
        "used torch.mm: works for 2-D x only",
        ex1_wrong_mm_2d,
        named="wrote it for a 2-D x only (torch.mm, or .t() of x)",
    ),
    Entry(
        E1,
        "wrote Φ with erf(x / 2) instead of erf(x / √2)",
        ex1_wrong_erf_no_sqrt2,
        named="wrote GELU by hand with erf(z / 2): the √2 is missing",
    ),
    Entry(
        E1,
        "used w_gate for the up branch as well",
        ex1_wrong_gate_weights_twice,
        named="used w_gate for the up branch as well: w_up never enters",
    ),
    Entry(
        E1,
        "float64 inside, and a GELU after w_down too",
        ex1_wrong_float64_and_extra_gelu,
        named="applied a non-linearity to the output as well",
    ),
    Entry(E1, "einsum and GELU by hand with erf", ex1_right_einsum_erf, right=True),
    Entry(E1, "F.linear, which takes (out, in) weights", ex1_right_linear, right=True),
    Entry(E1, "flatten the leading dimensions, then reshape", ex1_right_flatten, right=True),
    Entry(
        E2,
        "normalised over the last dimension only",
        ex2_wrong_last_dim_only,
        named="normalised over the last dimension only, whatever the shape of γ",
    ),
    Entry(
        E2,
        "used torch's var, which divides by n − 1",
        ex2_wrong_unbiased,
        named="used the unbiased variance (dividing by n − 1)",
    ),
    Entry(
        E2,
        "variance as E[x²] − E[x]²",
        ex2_wrong_one_pass_variance,
        named="computed the variance as mean(x²) − mean(x)², which cancels in float32",
    ),
    Entry(
        E2,
        "added eps to the standard deviation, not the variance",
        ex2_wrong_eps_outside_sqrt,
        named="added ε outside the square root",
    ),
    Entry(
        E2,
        "took the statistics over the batch dimension",
        ex2_wrong_batch_statistics,
        named="normalised along dim 0, across the batch (as BatchNorm does)",
    ),
    Entry(
        E2,
        "multiplied by beta and added gamma",
        ex2_wrong_gamma_beta_swapped,
        named="swapped γ and β",
    ),
    Entry(
        E2,
        "reduced over the first gamma.dim() dimensions",
        ex2_wrong_leading_dims,
        named="took the statistics over the leading dimensions, not the trailing ones γ covers",
    ),
    Entry(E2, "left eps out", ex2_wrong_no_eps, named="left ε out"),
    Entry(
        E2,
        "normalised everything but the batch dimension",
        ex2_wrong_per_sample,
        named="normalised everything after the first dimension, whatever the shape of γ",
    ),
    Entry(
        E2,
        "centred x in place with -=",
        ex2_wrong_in_place,
        named="changed x in place (x -= …, x /= …)",
    ),
    Entry(E2, "flatten the trailing dimensions, rsqrt", ex2_right_flatten, right=True),
    Entry(E2, "torch.var_mean with correction=0", ex2_right_var_mean, right=True),
    Entry(E2, "computed in float64, cast back", ex2_right_float64, right=True),
    Entry(
        E3,
        "swapped the two wirings",
        ex3_wrong_wirings_swapped,
        named="swapped the two wirings: norm_first=True is pre-norm",
    ),
    Entry(
        E3,
        "applied dropout to the sum, not the sublayer's output",
        ex3_wrong_dropout_on_sum,
        named="applied dropout to the sum, skip path included",
    ),
    Entry(E3, "left dropout out", ex3_wrong_no_dropout, named="left dropout out"),
    Entry(
        E3,
        "pre-norm adds the normalised x on the skip path",
        ex3_wrong_normalised_skip,
        named="in pre-norm, carried the normalised x on the skip path",
    ),
    Entry(
        E3,
        "applied dropout to the input x",
        ex3_wrong_dropout_on_input,
        named="applied dropout to the block's input x, before the norm",
    ),
    Entry(
        E3,
        "post-norm also normalises the sublayer's input",
        ex3_wrong_post_norm_twice,
        named="in post-norm, gave the sublayer the normalised x",
    ),
    Entry(
        E3,
        "pre-norm with a LayerNorm at the end too",
        ex3_wrong_pre_norm_final_norm,
        named="in pre-norm, normalised the sum as well",
    ),
    Entry(
        E3,
        "post-norm: dropout after the LayerNorm",
        ex3_wrong_dropout_after_norm,
        named="applied dropout to the block's output, after the norm",
    ),
    Entry(
        E3,
        "post-norm normalises only the skip x",
        ex3_wrong_norm_skip_only,
        named="in post-norm, normalised x and then added the sublayer's output, not the sum",
    ),
    Entry(
        E3,
        "tested norm_first == 'pre': always post-norm",
        ex3_wrong_always_post,
        named="always used post-norm, whatever norm_first was",
    ),
    Entry(E3, "one expression with two conditionals", ex3_right_one_expression, right=True),
    Entry(E3, "post-norm branch first, steps on their own lines", ex3_right_not, right=True),
    Entry(
        E4,
        "wired it pre-norm (attnlib's default)",
        Ex4WrongPreNorm,
        named="wired it pre-norm, x + f(LN(x)): the paper's layer is post-norm",
    ),
    Entry(E4, "never used the residual dropout", Ex4WrongNoDropout, named="left dropout out"),
    Entry(
        E4,
        "gave the attention and the FFN the dropout too",
        Ex4WrongDropoutEverywhere,
        named="gave the attention or the feed-forward network a dropout of its own",
    ),
    Entry(E4, "used norm_1 for both blocks", Ex4WrongOneNorm, named="used norm_1 for both blocks"),
    Entry(
        E4,
        "inverted the padding mask (PyTorch's polarity)",
        Ex4WrongMaskInverted,
        named="inverted the padding mask",
    ),
    Entry(
        E4,
        "did not pass the mask to the attention",
        Ex4WrongMaskIgnored,
        named="did not pass the padding mask to the self-attention",
    ),
    Entry(
        E4,
        "the FFN reads the layer's input, not h",
        Ex4WrongParallel,
        named="gave the feed-forward network the layer's input x instead of h",
    ),
    Entry(
        E4,
        "the second block adds x instead of h",
        Ex4WrongSkipFromInput,
        named="added the layer's input x, not h, on the feed-forward block's skip path",
    ),
    Entry(
        E4,
        "used norm_2 in the first block and norm_1 in the second",
        Ex4WrongNormsSwapped,
        named="put norm_1 and norm_2 in each other's place",
    ),
    Entry(
        E4,
        "returned only y, not (y, weights)",
        Ex4WrongOutputOnly,
        named="returned only y, not (y, weights)",
    ),
    Entry(E4, "an add-and-norm helper, attention called with x, x, x", Ex4RightBlockHelper, True),
    Entry(E4, "a loop over the two blocks", Ex4RightLoop, right=True),
    Entry(
        E5,
        "no causal mask in the self-attention",
        Ex5WrongNoCausal,
        named="gave the self-attention no causal mask",
    ),
    Entry(
        E5,
        "built the causal mask with True on the future",
        Ex5WrongCausalInverted,
        named="inverted the causal mask",
    ),
    Entry(
        E5,
        "cross-attention queries from memory, keys from the target",
        Ex5WrongCrossSwapped,
        named="swapped the cross-attention's roles: queries from memory, keys and values from h1",
    ),
    Entry(
        E5,
        "cross-attention queries from y instead of h1",
        Ex5WrongCrossReadsInput,
        named="gave the cross-attention the layer's input y as its queries, not h1",
    ),
    Entry(
        E5,
        "gave the self-attention the memory mask and cross the causal",
        Ex5WrongMasksSwapped,
        named="gave the memory mask to the self-attention and the causal mask to the "
        "cross-attention",
    ),
    Entry(
        E5,
        "wired it pre-norm",
        Ex5WrongPreNorm,
        named="wired it pre-norm, y + f(LN(y)): the paper's layer is post-norm",
    ),
    Entry(
        E5,
        "no dropout on the cross-attention block",
        Ex5WrongNoCrossDropout,
        named="left the cross-attention block without dropout",
    ),
    Entry(
        E5,
        "built the causal mask from the memory's length",
        Ex5WrongCausalFromMemory,
        named="built the causal mask for the source's length instead of the target's",
    ),
    Entry(
        E5,
        "causal mask without the diagonal (tril, diagonal=-1)",
        Ex5WrongStrictlyLower,
        named="hid each position from itself too (a mask strictly below the diagonal)",
    ),
    Entry(
        E5,
        "did not pass memory_mask to the cross-attention",
        Ex5WrongNoMemoryMask,
        named="did not pass the memory mask to the cross-attention",
    ),
    Entry(E5, "causal mask by hand, (1, 1, T, T), q, k, v given", Ex5RightByHand, right=True),
    Entry(E5, "a block helper, norms made with setattr", Ex5RightBlocks, right=True),
]
