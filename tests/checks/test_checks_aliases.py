"""Every exercise that forbids calls refuses an answer that reaches its implementation through
another name, and says which (issue 39); answers that use what the exercise allows still pass.

Most aliases are ones the first watch missed: torch's other spellings (``torch.special``,
``torch.ops.aten``, a kernel reached through another function), scipy's, numpy's, sklearn's and
transformers' equivalents, and attnlib's other functions (its unchecked inner versions
included). Where an exercise has no such alias, one of the old ones stands for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.spatial.distance
import scipy.stats
import sentence_transformers.util
import sklearn.metrics.pairwise
import sklearn.preprocessing
import torch
import torch.nn.functional as F
import transformers
import transformers.generation.logits_process as logits_process
import transformers.models.bert.modeling_bert as modeling_bert
from nb11_learner_modules import modules
from softmax_aliases import ALIASES_02
from torch.nn.attention.bias import causal_lower_right

import attnlib
from attnlib import checks
from attnlib.attention import attend
from attnlib.course import inspection
from attnlib.gpt import GPTBlock
from attnlib.multi_head import _merge_heads, _split_heads
from attnlib.positional import _angles
from attnlib.sampling import _next_token_probs, _nucleus
from attnlib.training import fit

Tensor = torch.Tensor
CHECKERS: dict[str, Callable[..., Any]] = {
    f.exercise.id: f
    for f in (getattr(checks, name) for name in checks.__all__)
    if getattr(f, "exercise", None) is not None
}
# The exercises whose checkers forbid calls: every one of them has an alias below.
WITH_A_LIST = {
    "ex1_normalise_columns", "ex3_mix_positions", "ex4_masked_cross_entropy",
    "ex1_dot_product", "ex2_cosine", "ex3_most_similar_other",
    "ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward",
    "ex3_local_self_attention",
    "ex1_my_attention", "ex2_my_cross_attention", "ex3_my_attention_pool",
    "ex1_my_split_qkv", "ex3_my_multi_head_attention",
    "ex1_sinusoidal_table", "ex2_rotary_embedding",
    "ex1_cached_causal_mask", "ex2_padding_mask", "ex3_masked_attention",
    "ex2_layer_norm", "ex3_residual_block", "ex4_my_encoder_layer", "ex5_my_decoder_layer",
    "ex1_smoothed_loss", "ex2_warmup_linear_decay", "ex3_beam_search_gnmt",
    "ex1_my_gpt_block", "ex2_my_gpt_forward", "ex3_my_train_step",
    "ex4_my_temperature_probs", "ex5_my_top_k_logits",
    "ex6_my_top_p_probs", "ex7_my_sample", "ex8_my_generate_cached",
    "ex1_my_max_pool", "ex2_my_previous_token_share", "ex3_my_semantic_search",
    "ex4_my_layer_norm", "ex5_my_multi_head_attention", "ex6_my_feed_forward",
    "ex7_my_encoder_layer",
    "ex2_merge_parts", "ex3_my_tiled_attention",
}  # fmt: skip


def _by_hand(q: Tensor, k: Tensor) -> Tensor:
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)


def _window(x: Tensor, window: int) -> Tensor:
    position = torch.arange(x.shape[-2])
    behind = position[:, None] - position[None, :]
    return (behind >= 0) & (behind < window)  # (T, T), True = may attend


def _per_position_nll(logits: Tensor, targets: Tensor) -> Tensor:
    log_p = logits.log_softmax(-1).flatten(0, -2)
    nll, _ = torch.ops.aten.nll_loss_forward.default(log_p, targets.flatten(), None, 0, -100)
    return nll.view(targets.shape)


def _layer_norm_dims(gamma: Tensor) -> tuple[int, ...]:
    return tuple(range(-gamma.dim(), 0))


def _lambda_lr(step: int, peak_lr: float, warmup: int, n_steps: int, floor: float) -> float:
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=peak_lr)

    def factor(s: int) -> float:
        return min(s / warmup, max(floor, 1 - (1 - floor) * (s - warmup) / (n_steps - warmup)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    for _ in range(step):
        optimizer.step()
        schedule.step()
    return schedule.get_last_lr()[0]


def _beam_of_attnlib(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
    tokens, scores = attnlib.beam_search_with_scores(
        model, src, bos, eos, max_new_tokens, k, length_penalty=alpha, penalty="gnmt"
    )
    return tokens[0].tolist(), float(scores[0])


class _SubclassOfAttnlibsEncoderLayer(attnlib.EncoderLayer):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=False)


class _SubclassOfAttnlibsDecoderLayer(attnlib.DecoderLayer):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=False)

    def forward(self, y: Tensor, memory: Tensor, memory_mask: Tensor | None = None) -> Any:
        return super().forward(y, memory, attnlib.causal_mask(y.shape[1]), memory_mask)


class _SubclassOfGPTBlock(GPTBlock):
    pass


def _forward_by_the_loss(gpt, idx):  # type: ignore[no-untyped-def]
    gpt.loss(torch.cat([idx, idx[:, :1]], dim=1))  # runs the model's own pass
    return torch.zeros(*idx.shape, gpt.config.vocab_size, dtype=torch.float64)


def _one_step_by_fit(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
    def loss(generator: torch.Generator) -> Tensor:
        logits = model(windows[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())

    return fit(model, loss, 1, optimizer, scheduler, clip_norm=max_norm).losses[0]


def _sample_by_attnlib(logits, temperature, top_k, top_p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = _next_token_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, 1, generator=generator)


class _RmsNormOfTheCentred(modules(None).MyLayerNorm):  # type: ignore[misc]
    def forward(self, x: Tensor) -> Tensor:
        centred = x - x.mean(-1, keepdim=True)
        return F.rms_norm(centred, centred.shape[-1:], self.weight, self.eps) + self.bias


class _AtenLayerNorm(modules(None).MyLayerNorm):  # type: ignore[misc]
    def forward(self, x: Tensor) -> Tensor:
        shape = [x.shape[-1]]
        return torch.ops.aten.native_layer_norm.default(x, shape, self.weight, self.bias, self.eps)[
            0
        ]


class _AttentionByAttend(modules(None).MyMultiHeadAttention):  # type: ignore[misc]
    def forward(self, x: Tensor, token_mask: Tensor) -> tuple[Tensor, Tensor]:
        b, t, c = x.shape

        def split(y: Tensor) -> Tensor:
            return y.view(b, t, self.heads, -1).transpose(1, 2)  # (B, h, T, d_k)

        q, k, v = split(self.w_q(x)), split(self.w_k(x)), split(self.w_v(x))
        out, weights = attend(q, k, v, token_mask[:, None, None, :])
        return self.w_o(out.transpose(1, 2).reshape(b, t, c)), weights


class _HalfOfBertsNetwork(modules(None).MyFeedForward):  # type: ignore[misc]
    def forward(self, x: Tensor) -> Tensor:
        config = transformers.BertConfig(
            hidden_size=self.linear1.in_features, intermediate_size=self.linear1.out_features
        )
        intermediate = modeling_bert.BertIntermediate(config).to(x.dtype)
        intermediate.dense = self.linear1
        return self.linear2(intermediate(x))


class _LayerOfRmsNorms(modules(None).MyEncoderLayer):  # type: ignore[misc]
    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__(d_model, num_heads, d_ff, eps)
        self.norm_1, self.norm_2 = (
            _RmsNormOfTheCentred(d_model, eps),
            _RmsNormOfTheCentred(d_model, eps),
        )


# (exercise, what it calls, the answer, the name its report must give)
ALIASES: list[tuple[str, str, Any, str]] = [
    # -- 00 ---------------------------------------------------------------------------------
    ("ex1_normalise_columns", "torch.masked.normalize",
     lambda x: torch.masked.normalize(x, 1.0, -2), "torch.masked.normalize"),
    ("ex1_normalise_columns", "sklearn's normalize",
     lambda x: torch.from_numpy(sklearn.preprocessing.normalize(x.numpy(), "l1", axis=0)),
     "sklearn.preprocessing.normalize"),
    ("ex3_mix_positions", "torch.ops.aten.linear.default",
     lambda x, w, b: torch.ops.aten.linear.default(x.transpose(-2, -1), w, b).transpose(-2, -1),
     "torch.nn.functional.linear"),
    ("ex4_masked_cross_entropy", "aten.nll_loss_forward",
     lambda logits, targets, mask: _per_position_nll(logits, targets)[mask].mean(),
     "torch's nll_loss (aten.nll_loss_forward)"),
    # -- 01 ---------------------------------------------------------------------------------
    ("ex1_dot_product", "numpy.linalg.vecdot",
     lambda a, b: torch.from_numpy(np.linalg.vecdot(a.numpy(), b.numpy())),
     "numpy.linalg.vecdot"),
    ("ex1_dot_product", "torch.ops.aten.linalg_vecdot.default",
     lambda a, b: torch.ops.aten.linalg_vecdot.default(a, b), "torch.linalg.vecdot"),
    ("ex2_cosine", "F.cosine_embedding_loss",
     lambda a, b: 1 - F.cosine_embedding_loss(a, b, torch.ones(()), reduction="none"),
     "torch's cosine_embedding_loss (1 − the cosine)"),
    ("ex2_cosine", "scipy.spatial.distance.cosine",
     lambda a, b: torch.tensor(1 - scipy.spatial.distance.cosine(a.numpy(), b.numpy())),
     "scipy.spatial.distance.cosine"),
    ("ex3_most_similar_other", "sentence_transformers.util.cos_sim",
     lambda X: sentence_transformers.util.cos_sim(X, X).fill_diagonal_(-math.inf).argmax(-1),
     "sentence_transformers.util.cos_sim"),
    ("ex3_most_similar_other", "sklearn's cosine_similarity",
     lambda X: torch.from_numpy(sklearn.metrics.pairwise.cosine_similarity(X.numpy())).argmax(-1),
     "sklearn.metrics.pairwise.cosine_similarity"),
    # -- 02 ---------------------------------------------------------------------------------
    *ALIASES_02,
    # -- 03, 04, 05 -------------------------------------------------------------------------
    ("ex3_local_self_attention", "attnlib.attention.attend",
     lambda x, window: attend(x, x, x, _window(x, window), scale=1.0), "attnlib.attention.attend"),
    ("ex3_local_self_attention", "torch.ops.aten._scaled_dot_product_attention_math.default",
     lambda x, window: torch.ops.aten._scaled_dot_product_attention_math.default(
         x, x, x, attn_mask=_window(x, window), scale=1.0),
     "torch's scaled dot-product attention"),
    ("ex1_my_attention", "attnlib.attention.attend",
     lambda q, k, v: attend(q, k, v), "attnlib.attention.attend"),
    ("ex1_my_attention", "torch.ops.aten.scaled_dot_product_attention.default",
     lambda q, k, v: (torch.ops.aten.scaled_dot_product_attention.default(q, k, v),
                      _by_hand(q, k)),
     "torch.nn.functional.scaled_dot_product_attention"),
    ("ex2_my_cross_attention", "torch.ops.aten._scaled_dot_product_attention_math.default",
     lambda y, x, w_q, w_k, w_v: torch.ops.aten._scaled_dot_product_attention_math.default(
         y @ w_q.T, x @ w_k.T, x @ w_v.T),
     "torch's scaled dot-product attention"),
    ("ex3_my_attention_pool", "torch.ops.aten.scaled_dot_product_attention.default",
     lambda x, query, key_proj, value_proj: (
         torch.ops.aten.scaled_dot_product_attention.default(
             query.expand(x.shape[0], 1, -1), key_proj(x), value_proj(x))[:, 0],
         _by_hand(query.expand(x.shape[0], 1, -1), key_proj(x))[:, 0]),
     "torch.nn.functional.scaled_dot_product_attention"),
    ("ex1_my_split_qkv", "attnlib.multi_head._split_heads",
     lambda qkv, h: tuple(_split_heads(part, h) for part in qkv.chunk(3, dim=-1)),
     "attnlib.split_heads"),
    ("ex3_my_multi_head_attention", "attnlib's unchecked split, attend and merge",
     lambda y, x, w_q, w_k, w_v, w_o, h: (
         lambda out, w: (_merge_heads(out) @ w_o, w))(
             *attend(_split_heads(y @ w_q, h), _split_heads(x @ w_k, h), _split_heads(x @ w_v, h))),
     "attnlib.split_heads"),
    # -- 06, 07 -----------------------------------------------------------------------------
    ("ex1_sinusoidal_table", "attnlib.positional._angles",
     lambda positions, d: torch.stack(
         ((a := _angles(positions, d, 10000.0)).sin(), a.cos()), -1).flatten(-2)[..., :d],
     "attnlib's sinusoid angles (attnlib.positional._angles)"),
    ("ex2_rotary_embedding", "attnlib.positional._angles",
     lambda x: (lambda c, s, e, o: torch.stack((e * c - o * s, e * s + o * c), -1).flatten(-2))(
         (a := _angles(torch.arange(x.shape[-2]), x.shape[-1], 10000.0)).cos().to(x.dtype),
         a.sin().to(x.dtype), x[..., 0::2], x[..., 1::2]),
     "attnlib's sinusoid angles (attnlib.positional._angles)"),
    ("ex1_cached_causal_mask", "torch.nn.attention.bias.causal_lower_right",
     lambda t_q, t_k: causal_lower_right(t_q, t_k)._materialize(),
     "torch.nn.attention.bias.causal_lower_right"),
    ("ex1_cached_causal_mask", "torch's _generate_square_subsequent_mask",
     lambda t_q, t_k: torch.nn.modules.transformer._generate_square_subsequent_mask(t_k)[
         t_k - t_q:] == 0,
     "torch.nn.Transformer.generate_square_subsequent_mask"),
    ("ex2_padding_mask", "attnlib.padding_mask",
     lambda lengths, seq_len: attnlib.padding_mask(lengths, seq_len), "attnlib.padding_mask"),
    ("ex3_masked_attention", "attnlib.attention.attend",
     lambda q, k, v, mask: attend(q, k, v, mask), "attnlib.attention.attend"),
    # -- 08 ---------------------------------------------------------------------------------
    ("ex2_layer_norm", "F.rms_norm of the centred x",
     lambda x, gamma, beta, eps=1e-5: F.rms_norm(
         x - x.mean(_layer_norm_dims(gamma), keepdim=True), gamma.shape, gamma, eps) + beta,
     "torch.nn.functional.rms_norm"),
    ("ex2_layer_norm", "torch.ops.aten.native_layer_norm.default",
     lambda x, gamma, beta, eps=1e-5: torch.ops.aten.native_layer_norm.default(
         x, list(gamma.shape), gamma, beta, eps)[0],
     "torch.native_layer_norm"),
    ("ex2_layer_norm", "scipy.stats.zscore",
     lambda x, gamma, beta, eps=1e-5: gamma * torch.from_numpy(
         scipy.stats.zscore(x.numpy(), axis=-1)) + beta,
     "scipy.stats.zscore"),
    ("ex3_residual_block", "attnlib.residual_connection",
     lambda x, sublayer, norm, dropout, norm_first: attnlib.residual_connection(
         x, sublayer, norm, dropout, norm_first),
     "attnlib.residual_connection"),
    ("ex4_my_encoder_layer", "a subclass of attnlib.EncoderLayer",
     _SubclassOfAttnlibsEncoderLayer, "attnlib.EncoderLayer"),
    ("ex5_my_decoder_layer", "a subclass of attnlib.DecoderLayer",
     _SubclassOfAttnlibsDecoderLayer, "attnlib.DecoderLayer"),
    # -- 09 ---------------------------------------------------------------------------------
    ("ex1_smoothed_loss", "torch.ops.aten.cross_entropy_loss.default",
     lambda logits, target, smoothing, pad_id: torch.ops.aten.cross_entropy_loss.default(
         logits.flatten(0, 1), target.flatten(), None, 1, pad_id, smoothing),
     "F.cross_entropy"),
    ("ex2_warmup_linear_decay", "a LambdaLR", _lambda_lr, "a torch.optim.lr_scheduler scheduler"),
    ("ex3_beam_search_gnmt", "attnlib.beam_search_with_scores",
     _beam_of_attnlib, "attnlib.beam_search_with_scores"),
    # -- 10 ---------------------------------------------------------------------------------
    ("ex1_my_gpt_block", "a subclass of GPTBlock",
     _SubclassOfGPTBlock, "attnlib's GPT block (GPTBlock)"),
    ("ex2_my_gpt_forward", "the model's inner pass, GPT._run",
     lambda gpt, idx: gpt._run(idx)[0], "the model's own forward pass (gpt(idx))"),
    ("ex2_my_gpt_forward", "the model's loss, its logits unused",
     _forward_by_the_loss, "the model's own forward pass (gpt.loss)"),
    ("ex3_my_train_step", "attnlib.training.fit, for one step",
     _one_step_by_fit, "attnlib.training.fit"),
    ("ex4_my_temperature_probs", "torch.special.softmax",
     lambda logits, t: torch.special.softmax(logits / t, -1), "torch.special.softmax"),
    ("ex4_my_temperature_probs", "attnlib.sampling._next_token_probs",
     lambda logits, t: _next_token_probs(logits, t), "attnlib.next_token_probs"),
    ("ex5_my_top_k_logits", "transformers' TopKLogitsWarper",
     lambda logits, k: logits_process.TopKLogitsWarper(k)(None, logits),
     "transformers' TopKLogitsWarper"),
    ("ex6_my_top_p_probs", "attnlib.sampling._nucleus",
     lambda probs, top_p: _nucleus(probs, top_p), "attnlib.sampling.nucleus"),
    ("ex6_my_top_p_probs", "transformers' TopPLogitsWarper",
     lambda probs, top_p: logits_process.TopPLogitsWarper(top_p)(None, probs.log()).softmax(-1),
     "transformers' TopPLogitsWarper"),
    ("ex7_my_sample", "attnlib.sampling._next_token_probs",
     _sample_by_attnlib, "attnlib.next_token_probs"),
    ("ex8_my_generate_cached", "gpt.generate",
     lambda gpt, idx, n: gpt.generate(idx, n, temperature=0.0), "gpt.generate"),
    # -- 11 ---------------------------------------------------------------------------------
    ("ex1_my_max_pool", "torch.masked.amax",
     lambda hidden, token_mask: torch.masked.amax(
         hidden, 1, mask=token_mask[..., None].expand_as(hidden)),
     "torch.masked.amax"),
    ("ex2_my_previous_token_share", "attnlib's previous_token_share",
     lambda weights: inspection.previous_token_share(weights),
     "attnlib.course.inspection.previous_token_share"),
    ("ex3_my_semantic_search", "sentence_transformers.util.semantic_search",
     lambda query, corpus, k: torch.tensor([
         hit["corpus_id"] for hit in sentence_transformers.util.semantic_search(
             query[None], corpus, top_k=k)[0]]),
     "sentence_transformers.util.semantic_search"),
    ("ex4_my_layer_norm", "F.rms_norm of the centred x",
     _RmsNormOfTheCentred, "torch.nn.functional.rms_norm"),
    ("ex4_my_layer_norm", "torch.ops.aten.native_layer_norm.default",
     _AtenLayerNorm, "torch.native_layer_norm"),
    ("ex5_my_multi_head_attention", "attnlib.attention.attend",
     _AttentionByAttend, "attnlib.attention.attend"),
    ("ex6_my_feed_forward", "transformers' BertIntermediate",
     _HalfOfBertsNetwork, "transformers' BertIntermediate"),
    ("ex7_my_encoder_layer", "norms by F.rms_norm",
     _LayerOfRmsNorms, "torch.nn.functional.rms_norm"),
    # -- 12 ---------------------------------------------------------------------------------
    ("ex2_merge_parts", "attnlib.online_softmax_step",
     lambda a, b: attnlib.online_softmax_step(attnlib.OnlineSoftmaxState(a[0], a[1]), b[1]),
     "attnlib.online_softmax_step"),
    ("ex3_my_tiled_attention", "attnlib.attention.attend",
     lambda q, k, v, mask, tile_size: attend(q, k, v, mask)[0], "attnlib.attention.attend"),
    ("ex3_my_tiled_attention", "torch.ops.aten._scaled_dot_product_attention_math.default",
     lambda q, k, v, mask, tile_size: torch.ops.aten._scaled_dot_product_attention_math.default(
         q, k, v, attn_mask=mask)[0],
     "torch's scaled dot-product attention"),
]  # fmt: skip


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    ("exercise_id", "what", "answer", "label"), ALIASES, ids=[f"{a[0]}: {a[1]}" for a in ALIASES]
)
def test_an_answer_that_calls_an_alias_is_refused_and_named(
    exercise_id: str, what: str, answer: Any, label: str
) -> None:
    report = CHECKERS[exercise_id](answer)
    assert not report.passed and "The check does not accept it" in str(report), report
    assert report.mistake.startswith("calls "), report
    assert label in report.mistake.removeprefix("calls ").split(", "), report
    assert f"calls {label}" in str(report), report


def test_every_exercise_that_forbids_calls_has_an_alias_here() -> None:
    assert {exercise_id for exercise_id, *_ in ALIASES} == WITH_A_LIST
    assert set(CHECKERS) >= WITH_A_LIST


def _masked_loss_by_log_softmax(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    picked = torch.take_along_dim(F.log_softmax(logits, -1), targets[..., None], -1)[..., 0]
    return -picked[mask].mean()


def _smoothed_loss_by_nll(logits: Tensor, target: Tensor, smoothing: float, pad_id: int) -> Tensor:
    log_p = logits.log_softmax(-1)  # (B, T, V)
    right = F.nll_loss(log_p.transpose(1, 2), target, reduction="none")  # (B, T): -log p_target
    others = -(log_p.sum(-1) - log_p[..., pad_id]) - right  # every token but <pad> and the target
    per_position = (1 - smoothing) * right + smoothing / (logits.shape[-1] - 2) * others
    return per_position[target != pad_id].mean()


def _sample_by_softmax(logits, temperature, top_k, top_p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        z = z.masked_fill(z < z.topk(top_k, dim=-1).values[..., -1:], -math.inf)
    probs = torch.softmax(z, dim=-1)
    if top_p is not None:
        ranked, order = probs.sort(dim=-1, descending=True)
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(
            -1, order, ranked.cumsum(-1) - ranked < top_p
        )
        probs = probs * keep / (probs * keep).sum(-1, keepdim=True)
    return torch.multinomial(probs, 1, generator=generator)


# Right answers that use what their exercise allows, some of it run by the same kernels as what
# it forbids: they pass.
ALLOWED: list[tuple[str, str, Any]] = [
    ("ex1_softmax_from_formula", "exp(x − logsumexp(x))",
     lambda x: torch.exp(x - torch.logsumexp(x, -1, keepdim=True))),
    ("ex2_stable_softmax", "exp of x − amax, float64 sums",
     lambda x, dim=-1: (e := (x - x.amax(dim, keepdim=True)).exp()) / e.sum(dim, keepdim=True)),
    ("ex3_softmax_backward", "Jᵀg by its formula",
     lambda p, g: p * (g - (p * g).sum(-1, keepdim=True))),
    ("ex4_masked_cross_entropy", "F.log_softmax and take_along_dim", _masked_loss_by_log_softmax),
    ("ex1_smoothed_loss", "F.nll_loss for the right token", _smoothed_loss_by_nll),
    ("ex1_dot_product", "einsum", lambda a, b: torch.einsum("...i,...i->...", a, b)),
    ("ex2_cosine", "F.normalize", lambda a, b: (F.normalize(a, dim=-1) * F.normalize(b, dim=-1))
     .sum(-1)),
    ("ex1_my_attention", "torch.softmax", lambda q, k, v: ((w := _by_hand(q, k)) @ v, w)),
    ("ex2_my_cross_attention", "attnlib.scaled_dot_product_attention",
     lambda y, x, w_q, w_k, w_v: attnlib.scaled_dot_product_attention(
         y @ w_q.T, x @ w_k.T, x @ w_v.T)),
    ("ex3_my_attention_pool", "attnlib.scaled_dot_product_attention",
     lambda x, query, key_proj, value_proj: tuple(
         t[:, 0] for t in attnlib.scaled_dot_product_attention(
             query.expand(x.shape[0], 1, -1), key_proj(x), value_proj(x)))),
    ("ex2_layer_norm", "torch.var_mean",
     lambda x, gamma, beta, eps=1e-5: gamma * (x - (vm := torch.var_mean(
         x, _layer_norm_dims(gamma), correction=0, keepdim=True))[1]) / (vm[0] + eps).sqrt()
     + beta),
    ("ex4_my_temperature_probs", "the shift by hand",
     lambda logits, t: (e := ((logits - logits.amax(-1, keepdim=True)) / t).exp())
     / e.sum(-1, keepdim=True) if t > 0 else (top := (logits == logits.amax(-1, keepdim=True))
     .to(logits.dtype)) / top.sum(-1, keepdim=True)),
    ("ex7_my_sample", "torch.softmax and torch.multinomial", _sample_by_softmax),
    ("ex4_my_layer_norm", "the learner's module", modules(None).MyLayerNorm),
]  # fmt: skip


@pytest.mark.parametrize(
    ("exercise_id", "what", "answer"), ALLOWED, ids=[f"{a[0]}: {a[1]}" for a in ALLOWED]
)
def test_an_answer_that_uses_what_its_exercise_allows_passes(
    exercise_id: str, what: str, answer: Any
) -> None:
    report = CHECKERS[exercise_id](answer)
    assert report.passed, report
