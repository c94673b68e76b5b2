"""Corpus c for notebook 08 (the Transformer block), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

# ----------------------------------------------------------- Exercise 1: gated_feed_forward


def ex1_wrong_no_transpose_down(x, w_gate, w_up, w_down):
    hidden = F.gelu(x @ w_gate.T) * (x @ w_up.T)
    return hidden @ w_down  # forgot that w_down is stored (out, in) too


def ex1_wrong_gate_on_up_linear(x, w_gate, w_up, w_down):
    gate = F.linear(x, w_gate)
    up = F.gelu(F.linear(x, w_up))
    return F.linear(gate * up, w_down)


def ex1_wrong_tanh_approx(x, w_gate, w_up, w_down):
    gate = F.gelu(x @ w_gate.T, approximate="tanh")
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_sigmoid_glu(x, w_gate, w_up, w_down):
    # the original GLU of Dauphin et al.
    return (torch.sigmoid(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def ex1_wrong_2d_einsum(x, w_gate, w_up, w_down):
    g = torch.einsum("td,fd->tf", x, w_gate)
    u = torch.einsum("td,fd->tf", x, w_up)
    return torch.einsum("tf,df->td", F.gelu(g) * u, w_down)


def ex1_wrong_gelu_at_end_too(x, w_gate, w_up, w_down):
    h = F.gelu(x @ w_gate.T) * (x @ w_up.T)
    return F.gelu(h @ w_down.T)


def ex1_wrong_sum_not_product(x, w_gate, w_up, w_down):
    return (F.gelu(x @ w_gate.T) + x @ w_up.T) @ w_down.T


def ex1_wrong_no_down(x, w_gate, w_up, w_down):
    return F.gelu(x @ w_gate.T) * (x @ w_up.T)


def ex1_right_linear(x, w_gate, w_up, w_down):
    return F.linear(F.gelu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def ex1_right_erf_einsum(x, w_gate, w_up, w_down):
    g = torch.einsum("...d,fd->...f", x, w_gate)
    u = torch.einsum("...d,fd->...f", x, w_up)
    gelu = g * 0.5 * (1.0 + torch.erf(g / math.sqrt(2.0)))
    return torch.einsum("...f,df->...d", gelu * u, w_down)


# --------------------------------------------------------------- Exercise 2: layer_norm


def ex2_wrong_last_dim_only(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_unbiased(x, gamma, beta, eps=1e-5):
    dims = list(range(x.dim() - gamma.dim(), x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_eps_outside(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    std = x.std(dim=dims, keepdim=True, unbiased=False)
    return gamma * (x - mean) / (std + eps) + beta


def ex2_wrong_one_pass(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = (x * x).mean(dim=dims, keepdim=True) - mean * mean  # E[x^2] - E[x]^2
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_leading_dims(x, gamma, beta, eps=1e-5):
    dims = tuple(range(gamma.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_flatten_start(x, gamma, beta, eps=1e-5):
    flat = x.flatten(start_dim=gamma.dim())  # meant: the last gamma.dim() dims
    mean = flat.mean(-1, keepdim=True)
    var = flat.var(-1, keepdim=True, unbiased=False)
    normed = ((flat - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    return gamma * normed + beta


def ex2_wrong_swapped_affine(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return beta * (x - mean) / torch.sqrt(var + eps) + gamma


def ex2_wrong_no_eps(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var) + beta


def ex2_right_var_mean(x, gamma, beta, eps=1e-5):
    dims = [x.dim() - 1 - i for i in range(gamma.dim())]
    var, mean = torch.var_mean(x, dim=dims, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps) * gamma + beta


def ex2_right_flat_float64(x, gamma, beta, eps=1e-5):
    lead = x.shape[: x.dim() - gamma.dim()]
    flat = x.double().reshape(*lead, -1)
    centred = flat - flat.mean(-1, keepdim=True)
    normed = centred / (centred.pow(2).mean(-1, keepdim=True) + eps).sqrt()
    return (normed.reshape(x.shape) * gamma.double() + beta.double()).to(x.dtype)


# ----------------------------------------------------------- Exercise 3: residual_block


def ex3_wrong_polarity(x, sublayer, norm, dropout, norm_first):
    if not norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_dropout_after_norm(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return dropout(norm(x + sublayer(x)))


def ex3_wrong_dropout_on_input(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + sublayer(dropout(norm(x)))
    return norm(x + sublayer(dropout(x)))


def ex3_wrong_skip_from_normed(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        h = norm(x)
        return h + dropout(sublayer(h))
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_no_dropout(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


def ex3_wrong_dropout_whole_sum(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(x + sublayer(norm(x)))
    return norm(dropout(x + sublayer(x)))


def ex3_wrong_no_skip_post(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(dropout(sublayer(x)))


def ex3_wrong_final_norm_pre(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return norm(x + dropout(sublayer(norm(x))))
    return norm(x + dropout(sublayer(x)))


def ex3_right_one_path(x, sublayer, norm, dropout, norm_first):
    update = dropout(sublayer(norm(x) if norm_first else x))
    out = x + update
    return out if norm_first else norm(out)


def ex3_right_branches(x, sublayer, norm, dropout, norm_first):
    if not norm_first:
        summed = x + dropout(sublayer(x))
        return norm(summed)
    normed = norm(x)
    return dropout(sublayer(normed)) + x


# ---------------------------------------------------------- Exercise 4: MyEncoderLayer


class _Enc(nn.Module):
    """The parts every encoder answer builds, as the task names them."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


class Ex4WrongPreNorm(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex4WrongDropoutUnused(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex4WrongDropoutEverywhere(nn.Module):
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


class Ex4WrongFfnReadsX(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(x))), w


class Ex4WrongNoMask(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongNormsSwapped(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_2(x + self.dropout(a))
        return self.norm_1(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongMaskPositional(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask)  # the second argument is the key
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongSkipFromX(_Enc):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(h))), w


class Ex4RightBlockHelper(_Enc):
    def _add_norm(self, x, out, norm):
        return norm(x + self.dropout(out))

    def forward(self, x, mask=None):
        attended, weights = self.self_attention(x, x, x, mask=mask)
        x = self._add_norm(x, attended, self.norm_1)
        x = self._add_norm(x, self.feed_forward(x), self.norm_2)
        return x, weights


class Ex4RightOrderedInit(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.norm_2 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm_1 = nn.LayerNorm(d_model, eps=1e-5)
        self.feed_forward = attnlib.FeedForward(d_model=d_model, d_ff=d_ff)
        self.self_attention = attnlib.MultiHeadAttention(d_model=d_model, num_heads=num_heads)

    def forward(self, x, mask=None):
        out, attn = self.self_attention(query=x, mask=mask)
        residual = x + self.dropout(out)
        h = self.norm_1(residual)
        ff = self.dropout(self.feed_forward(h))
        return self.norm_2(ff + h), attn


# ---------------------------------------------------------- Exercise 5: MyDecoderLayer


class _Dec(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def rest(self, y, a1, memory, memory_mask):
        h1 = self.norm_1(y + self.dropout(a1))
        a2, wc = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(a2))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), wc


class Ex5WrongNoCausal(_Dec):
    def forward(self, y, memory, memory_mask=None):
        a1, ws = self.self_attention(y)
        z, wc = self.rest(y, a1, memory, memory_mask)
        return z, ws, wc


class Ex5WrongMaskPolarity(_Dec):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        a1, ws = self.self_attention(y, mask=future)  # True where the future is
        z, wc = self.rest(y, a1, memory, memory_mask)
        return z, ws, wc


class Ex5WrongPeekNext(_Dec):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        mask = torch.ones(T, T).tril(diagonal=1).bool()
        a1, ws = self.self_attention(y, mask=mask)
        z, wc = self.rest(y, a1, memory, memory_mask)
        return z, ws, wc


class Ex5WrongMemoryAsQuery(_Dec):
    def forward(self, y, memory, memory_mask=None):
        a1, ws = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a1))
        a2, wc = self.cross_attention(memory, h1, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(a2))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), ws, wc


class Ex5WrongMaskOnSelf(_Dec):
    def forward(self, y, memory, memory_mask=None):
        a1, ws = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a1))
        a2, wc = self.cross_attention(h1, memory)  # the source mask went nowhere
        h2 = self.norm_2(h1 + self.dropout(a2))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), ws, wc


class Ex5WrongCrossFromY(_Dec):
    def forward(self, y, memory, memory_mask=None):
        a1, ws = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a1))
        a2, wc = self.cross_attention(y, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(a2))
        return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), ws, wc


class Ex5WrongPreNorm(_Dec):
    def forward(self, y, memory, memory_mask=None):
        a1, ws = self.self_attention(self.norm_1(y), mask=attnlib.causal_mask(y.shape[1]))
        h1 = y + self.dropout(a1)
        a2, wc = self.cross_attention(self.norm_2(h1), memory, mask=memory_mask)
        h2 = h1 + self.dropout(a2)
        return h2 + self.dropout(self.feed_forward(self.norm_3(h2))), ws, wc


class Ex5WrongCausalFromMemory(_Dec):
    def forward(self, y, memory, memory_mask=None):
        causal = attnlib.causal_mask(memory.shape[1])  # (S, S)
        a1, ws = self.self_attention(y, mask=causal)
        z, wc = self.rest(y, a1, memory, memory_mask)
        return z, ws, wc


class Ex5RightArange(_Dec):
    def forward(self, y, memory, memory_mask=None):
        pos = torch.arange(y.size(1), device=y.device)
        allowed = pos[:, None] >= pos[None, :]  # (T, T)
        a1, ws = self.self_attention(y, y, y, mask=allowed)
        z, wc = self.rest(y, a1, memory, memory_mask)
        return z, ws, wc


class Ex5RightBatchedMask(_Dec):
    def forward(self, y, memory, memory_mask=None):
        B, T, _ = y.shape
        mask = torch.ones(B, 1, T, T, dtype=torch.bool).tril()
        out, self_w = self.self_attention(query=y, mask=mask)
        y = self.norm_1(y + self.dropout(out))
        out, cross_w = self.cross_attention(query=y, key=memory, value=memory, mask=memory_mask)
        y = self.norm_2(y + self.dropout(out))
        y = self.norm_3(y + self.dropout(self.feed_forward(y)))
        return y, self_w, cross_w


E1, E2, E3 = "ex1_gated_feed_forward", "ex2_layer_norm", "ex3_residual_block"
E4, E5 = "ex4_my_encoder_layer", "ex5_my_decoder_layer"

ENTRIES = [
    Entry(
        E1,
        "did not transpose w_down",
        ex1_wrong_no_transpose_down,
        named="transposed w_gate and w_up but not w_down",
    ),
    Entry(
        E1,
        "put the GELU on the up branch (F.linear)",
        ex1_wrong_gate_on_up_linear,
        named="put GELU on the up branch instead of the gate",
    ),
    Entry(
        E1,
        "used GELU's tanh approximation",
        ex1_wrong_tanh_approx,
        named="used GELU's tanh approximation",
    ),
    Entry(
        E1,
        "gated with a sigmoid (the original GLU)",
        ex1_wrong_sigmoid_glu,
        named="used a sigmoid gate (the original GLU) instead of GELU",
    ),
    Entry(
        E1,
        "einsum written for a (T, d) input only",
        ex1_wrong_2d_einsum,
        named="wrote the einsum subscripts for a 2-D x, (positions, d), only",
    ),
    Entry(
        E1,
        "another GELU after the down projection",
        ex1_wrong_gelu_at_end_too,
        named="applied a non-linearity to the output as well",
    ),
    Entry(
        E1,
        "added gate and up instead of multiplying",
        ex1_wrong_sum_not_product,
        named="added the two branches instead of multiplying them",
    ),
    Entry(
        E1,
        "forgot the down projection",
        ex1_wrong_no_down,
        named="left out the down projection: returned the d_ff-wide hidden vector",
    ),
    Entry(E1, "F.linear all the way", ex1_right_linear, right=True),
    Entry(E1, "einsum with a hand-written erf GELU", ex1_right_erf_einsum, right=True),
    Entry(
        E2,
        "normalised over the last dimension only",
        ex2_wrong_last_dim_only,
        named="normalised over the last dimension only, whatever the shape of γ",
    ),
    Entry(
        E2,
        "used the unbiased variance",
        ex2_wrong_unbiased,
        named="used the unbiased variance (dividing by n − 1)",
    ),
    Entry(
        E2,
        "added eps to the standard deviation",
        ex2_wrong_eps_outside,
        named="added ε outside the square root",
    ),
    Entry(
        E2,
        "variance as E[x²] − E[x]² in one pass",
        ex2_wrong_one_pass,
        named="computed the variance as mean(x²) − mean(x)², which cancels in float32",
    ),
    Entry(
        E2,
        "took the first gamma.dim() dimensions",
        ex2_wrong_leading_dims,
        named="took the statistics over the leading dimensions, not the trailing ones γ covers",
    ),
    Entry(
        E2,
        "flattened from dimension gamma.dim() on",
        ex2_wrong_flatten_start,
        named="flattened x from dimension γ.dim() on, counting from the front instead of the back",
    ),
    Entry(E2, "swapped gamma and beta", ex2_wrong_swapped_affine, named="swapped γ and β"),
    Entry(E2, "forgot eps", ex2_wrong_no_eps, named="left ε out"),
    Entry(E2, "torch.var_mean with correction=0 and rsqrt", ex2_right_var_mean, right=True),
    Entry(E2, "flattened trailing dims, computed in float64", ex2_right_flat_float64, right=True),
    Entry(
        E3,
        "pre-norm and post-norm the wrong way round",
        ex3_wrong_polarity,
        named="swapped the two wirings: norm_first=True is pre-norm",
    ),
    Entry(
        E3,
        "post-norm: dropout after the LayerNorm",
        ex3_wrong_dropout_after_norm,
        named="applied dropout to the block's output, after the norm",
    ),
    Entry(
        E3,
        "dropout on the sublayer's input",
        ex3_wrong_dropout_on_input,
        named="applied dropout to the sublayer's input instead of its output",
    ),
    Entry(
        E3,
        "pre-norm: the skip adds the normalised x",
        ex3_wrong_skip_from_normed,
        named="in pre-norm, carried the normalised x on the skip path",
    ),
    Entry(E3, "no dropout at all", ex3_wrong_no_dropout, named="left dropout out"),
    Entry(
        E3,
        "dropout on the whole sum",
        ex3_wrong_dropout_whole_sum,
        named="applied dropout to the sum, skip path included",
    ),
    Entry(
        E3,
        "post-norm without the skip connection",
        ex3_wrong_no_skip_post,
        named="left out the skip path: returned the sublayer's branch only",
    ),
    Entry(
        E3,
        "pre-norm with a LayerNorm at the end too",
        ex3_wrong_final_norm_pre,
        named="in pre-norm, normalised the sum as well",
    ),
    Entry(E3, "one path with conditional norms", ex3_right_one_path, right=True),
    Entry(E3, "branches in the other order", ex3_right_branches, right=True),
    Entry(
        E4,
        "wired it pre-norm like attnlib's default",
        Ex4WrongPreNorm,
        named="wired it pre-norm, x + f(LN(x)): the paper's layer is post-norm",
    ),
    Entry(
        E4, "made the dropout but never used it", Ex4WrongDropoutUnused, named="left dropout out"
    ),
    Entry(
        E4,
        "gave attention and FFN their own dropout too",
        Ex4WrongDropoutEverywhere,
        named="gave the attention or the feed-forward network a dropout of its own",
    ),
    Entry(
        E4,
        "FFN reads x instead of h",
        Ex4WrongFfnReadsX,
        named="gave the feed-forward network the layer's input x instead of h",
    ),
    Entry(
        E4,
        "did not pass the mask",
        Ex4WrongNoMask,
        named="did not pass the padding mask to the self-attention",
    ),
    Entry(
        E4,
        "used norm_2 in the first block, norm_1 in the second",
        Ex4WrongNormsSwapped,
        named="put norm_1 and norm_2 in each other's place",
    ),
    Entry(
        E4,
        "passed the mask as the second positional argument",
        Ex4WrongMaskPositional,
        named="passed the mask as the self-attention's second argument, which is its key",
    ),
    Entry(
        E4,
        "second skip adds x instead of h",
        Ex4WrongSkipFromX,
        named="added the layer's input x, not h, on the feed-forward block's skip path",
    ),
    Entry(E4, "an add-and-norm helper method", Ex4RightBlockHelper, right=True),
    Entry(E4, "submodules made in another order, keywords", Ex4RightOrderedInit, right=True),
    Entry(E5, "no causal mask", Ex5WrongNoCausal, named="gave the self-attention no causal mask"),
    Entry(
        E5,
        "causal mask with True on the future",
        Ex5WrongMaskPolarity,
        named="inverted the causal mask",
    ),
    Entry(
        E5,
        "tril(diagonal=1): each position sees the next",
        Ex5WrongPeekNext,
        named="let a position read later target positions",
    ),
    Entry(
        E5,
        "memory as the cross-attention's query",
        Ex5WrongMemoryAsQuery,
        named="swapped the cross-attention's roles: queries from memory, keys and values from h1",
    ),
    Entry(
        E5,
        "dropped the source mask",
        Ex5WrongMaskOnSelf,
        named="did not pass the memory mask to the cross-attention",
    ),
    Entry(
        E5,
        "cross-attention queries from y, not h1",
        Ex5WrongCrossFromY,
        named="gave the cross-attention the layer's input y as its queries, not h1",
    ),
    Entry(
        E5,
        "wired it pre-norm",
        Ex5WrongPreNorm,
        named="wired it pre-norm, y + f(LN(y)): the paper's layer is post-norm",
    ),
    Entry(
        E5,
        "causal mask sized by the source length",
        Ex5WrongCausalFromMemory,
        named="built the causal mask for the source's length instead of the target's",
    ),
    Entry(E5, "causal mask from arange comparisons", Ex5RightArange, right=True),
    Entry(E5, "a (B, 1, T, T) tril mask, keywords", Ex5RightBatchedMask, right=True),
]
