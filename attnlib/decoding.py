"""Decoding an encoder–decoder Transformer: greedy and (length-normalised) beam search, batched.

Notebook 09.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attnlib._validate import (
    inputs_checked,
    require_choice,
    require_finite_number,
    require_int,
    require_positive_int,
)
from attnlib.transformer import Transformer


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: torch.Tensor, bos_id: int, eos_id: int, max_new_tokens: int
) -> torch.Tensor:
    r"""Generate each target sequence by always taking the most likely next token.

    .. math::

        y_t = \arg\max_v\, p(v \mid y_{<t}, x)

    The source is encoded once; decoding stops when every sequence has produced
    ``eos_id`` or after ``max_new_tokens`` tokens. Positions after a sequence's EOS hold
    the pad id.

    Shapes:
        src: ``(B, S)``; returns ``(B, L)`` with ``L ≤ max_new_tokens`` (no BOS; EOS included).
    """
    return beam_search(model, src, bos_id, eos_id, max_new_tokens, beam_size=1)


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_new_tokens: int,
    beam_size: int = 4,
    length_penalty: float = 1.0,
    penalty: str = "power",
) -> torch.Tensor:
    r"""Keep the ``beam_size`` most likely partial targets per source; return the best finished one.

    Each step extends every beam by every token and keeps the ``beam_size`` highest
    sums of log-probabilities. Finished beams (that produced EOS) stay as they are.
    The winner maximises the length-normalised score

    .. math::

        \frac{\sum_t \log p(y_t \mid y_{<t}, x)}{\operatorname{lp}(y)}, \qquad
        \operatorname{lp}(y) = |y|^{\alpha} \;(\texttt{"power"}) \text{ or }
        \left(\frac{5 + |y|}{6}\right)^{\alpha} \;(\texttt{"gnmt"}, \text{Wu et al. 2016}),

    with :math:`\alpha` = ``length_penalty`` and :math:`|y|` counting the EOS, so that
    short hypotheses are not preferred just for having fewer terms.
    With ``beam_size=1`` this is greedy decoding. ``max_new_tokens`` may be at most the
    model's ``config.max_len`` (the decoder reads up to ``max_new_tokens`` tokens, BOS first).
    :func:`beam_search_with_scores` also returns the winners' normalised scores.

    Shapes:
        src: ``(B, S)``; returns ``(B, L)`` (no BOS; EOS included; pad after EOS).
    """
    return beam_search_with_scores(
        model, src, bos_id, eos_id, max_new_tokens, beam_size, length_penalty, penalty
    )[0]


@torch.no_grad()
def beam_search_with_scores(
    model: Transformer,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_new_tokens: int,
    beam_size: int = 4,
    length_penalty: float = 1.0,
    penalty: str = "power",
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`beam_search`, and the length-normalised score of each winner.

    Raises:
        TypeError: ``bos_id``, ``eos_id``, ``max_new_tokens`` or ``beam_size`` is not an int,
            ``length_penalty`` is not a number, or ``penalty`` not a str.
        ValueError: a token id outside the target vocabulary, ``beam_size < 1``,
            ``max_new_tokens`` outside ``[1, config.max_len]``, a ``length_penalty`` that is NaN
            or infinite, or a ``penalty`` other than ``"power"`` and ``"gnmt"``.

    Shapes:
        src: ``(B, S)``; returns ``(B, L)`` as :func:`beam_search` and scores ``(B,)``.
    """
    vocab_size, pad_id = model.config.tgt_vocab_size, model.config.pad_id
    for name, token in (("bos_id", bos_id), ("eos_id", eos_id)):
        if not 0 <= require_int(name, token) < vocab_size:
            raise ValueError(f"{name} must be a token id in [0, {vocab_size}), got {token}")
    require_positive_int("beam_size", beam_size)
    if not 1 <= require_int("max_new_tokens", max_new_tokens) <= model.config.max_len:
        raise ValueError(
            f"max_new_tokens must be in [1, {model.config.max_len}], got {max_new_tokens}"
        )
    # A NaN or infinite alpha would make every normalised score NaN, 0 or ±inf.
    require_finite_number("length_penalty", length_penalty)
    require_choice("penalty", penalty, ("power", "gnmt"))
    was_training = model.training
    model.eval()
    memory, src_mask, _ = model.encode(src, need_weights=False)  # checks src, once
    batch, k = src.shape[0], beam_size
    memory = memory.repeat_interleave(k, dim=0)  # (B*K, S, C)
    src_mask = src_mask.repeat_interleave(k, dim=0)  # (B*K, 1, 1, S)
    sequences = torch.full((batch * k, 1), bos_id, dtype=torch.long, device=src.device)
    # Scores in the model's precision (float64 for the course's models), at least float32.
    score_dtype = torch.promote_types(memory.dtype, torch.float32)
    scores = torch.zeros(batch, k, dtype=score_dtype, device=src.device)
    scores[:, 1:] = -torch.inf  # all beams start identical: keep only one alive at first
    finished = torch.zeros(batch * k, dtype=torch.bool, device=src.device)
    lengths = torch.zeros(batch * k, dtype=score_dtype, device=src.device)
    # The loop feeds decode its own beams, the checked memory and mask: none is checked again.
    with inputs_checked():
        for _ in range(max_new_tokens):
            logits, _, _ = model.decode(sequences, memory, src_mask, need_weights=False)
            log_probs = F.log_softmax(logits[:, -1].to(score_dtype), dim=-1)  # (B*K, V)
            # A finished beam may only be extended by padding, at no cost.
            done_row = torch.full_like(log_probs[0], -torch.inf)
            done_row[pad_id] = 0.0
            log_probs = torch.where(finished[:, None], done_row, log_probs)
            candidates = (scores.reshape(-1, 1) + log_probs).reshape(batch, k * vocab_size)
            scores, flat_index = candidates.topk(k, dim=1)  # (B, K)
            beam = flat_index // vocab_size  # (B, K): which beam each survivor extends
            token = flat_index % vocab_size  # (B, K)
            source_rows = (torch.arange(batch, device=src.device)[:, None] * k + beam).reshape(-1)
            lengths = lengths[source_rows] + (~finished[source_rows]).to(score_dtype)
            finished = finished[source_rows] | (token.reshape(-1) == eos_id)
            chosen = token.reshape(-1, 1)  # (B*K, 1)
            sequences = torch.cat([sequences[source_rows], chosen], dim=1)  # (B*K, t+1)
            if bool(finished.all()):
                break
    model.train(was_training)
    lengths = lengths.reshape(batch, k)  # (B, K)
    if penalty == "gnmt":
        normalised = scores / ((5.0 + lengths) / 6.0) ** length_penalty
    else:
        normalised = scores / lengths.clamp_min(1.0) ** length_penalty
    best = normalised.argmax(dim=1)  # (B,)
    rows = torch.arange(batch, device=src.device) * k + best
    return sequences[rows, 1:], normalised.gather(1, best[:, None])[:, 0]  # drop BOS; (B,)
