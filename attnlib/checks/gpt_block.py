"""Checker for notebook 10's build-it exercise: the learner's pre-norm GPT block.

attnlib's weights are loaded into the learner's block, both run in float64 in eval mode, and
a mismatch is named by comparing with the usual wrong blocks computed from the same weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attnlib.checks._framework import CheckResult, fixed_generator, randn64
from attnlib.gpt import GPTBlock, GPTConfig
from attnlib.masks import causal_mask

NAME = "gpt_block"
CONFIG = GPTConfig(vocab_size=11, max_len=16, d_model=16, num_heads=4, num_layers=1, dropout=0.1)
CASES = [("one sequence of 5", 1, 5), ("a batch of 3 sequences of 7", 3, 7)]
ATOL, RTOL = 1e-6, 1e-5
FORWARD = (
    "h = x + self.dropout(attention(norm_1(x), mask=mask)); "
    "y = h + self.dropout(feed_forward(norm_2(h))); return y and the attention weights."
)


def _fail(message: str, hint: str = FORWARD) -> CheckResult:
    return CheckResult(NAME, False, f"✗ {NAME}: {message}\n  hint: {hint}")


def _not_done(block_class: Any, error: NotImplementedError) -> CheckResult:
    task = str(error) or " ".join((getattr(block_class, "__doc__", None) or "").split())
    message = f"… {NAME}: not done yet{f' ({task})' if task else ''}. Fill in the class above, "
    return CheckResult(NAME, False, message + "run its cell, then run this check again.", False)


def _reference() -> GPTBlock:
    """attnlib's block with random weights (LayerNorms too), so every wrong variant differs."""
    block = GPTBlock(CONFIG).double().eval()
    g = fixed_generator()
    with torch.no_grad():
        for name, parameter in block.named_parameters():
            noise = randn64(*parameter.shape, generator=g)
            if name.startswith("norm_"):
                parameter.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * noise)
            elif parameter.dim() == 2:
                parameter.copy_(noise / parameter.shape[1] ** 0.5)
            else:
                parameter.copy_(0.1 * noise)
    return block


def _variants(block: GPTBlock, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """The outputs of the usual wrong blocks, with the reference's weights, in eval mode."""

    def attend(h: torch.Tensor, m: torch.Tensor | None = mask) -> torch.Tensor:
        return block.attention(h, mask=m)[0]

    ffn, ln1, ln2 = block.feed_forward, block.norm_1, block.norm_2
    out: dict[str, torch.Tensor] = {}
    a = attend(ln1(x))
    out["missing residual around attention"] = a + ffn(ln2(a))
    h = x + a
    out["missing residual around the FFN"] = ffn(ln2(h))
    h_post = ln1(x + attend(x))
    out["post-norm instead of pre-norm"] = ln2(h_post + ffn(h_post))
    h_raw = x + attend(x)
    out["LayerNorm missing"] = h_raw + ffn(h_raw)
    out["LayerNorm missing before attention"] = h_raw + ffn(ln2(h_raw))
    out["LayerNorm missing before the FFN"] = h + ffn(h)
    out["norm_1 used before the FFN too"] = h + ffn(ln1(h))
    skip = ln1(x) + a
    out["residual adds the normalised input"] = skip + ffn(ln2(skip))
    for label, m in (("causal mask inverted", ~mask), ("no causal mask", None)):
        hm = x + attend(ln1(x), m)
        out[label] = hm + ffn(ln2(hm))
    return out


HINTS = {
    "missing residual around attention": "the attention sublayer must be added to its input: "
    "h = x + attention(norm_1(x)), not h = attention(norm_1(x)).",
    "missing residual around the FFN": "the FFN must be added to its input as well: "
    "y = h + feed_forward(norm_2(h)), not y = feed_forward(norm_2(h)).",
    "post-norm instead of pre-norm": "your block normalises after the add (the 2017 paper's "
    "post-norm, LN(x + sublayer(x))); a GPT block is pre-norm: x + sublayer(LN(x)), and the "
    "sum itself is not normalised.",
    "LayerNorm missing": "neither sublayer sees a normalised input: attention gets norm_1(x), "
    "the FFN gets norm_2(h).",
    "LayerNorm missing before attention": "the attention sublayer should read norm_1(x), not x.",
    "LayerNorm missing before the FFN": "the FFN should read norm_2(h), not h.",
    "norm_1 used before the FFN too": "each sublayer has its own LayerNorm with its own "
    "scale and shift: the FFN reads norm_2(h).",
    "residual adds the normalised input": "the skip path carries x itself: h = x + "
    "attention(norm_1(x)), not norm_1(x) + attention(norm_1(x)).",
    "causal mask inverted": "in this course True means 'may attend': pass the mask you are "
    "given as it is (attention(..., mask=mask)), without ~ or == False.",
    "no causal mask": "pass the mask on to the attention: self.attention(norm_1(x), "
    "mask=mask). Without it every position sees the future.",
}


def _call(block: nn.Module, x: torch.Tensor, mask: torch.Tensor) -> Any:
    with torch.no_grad():
        return block(x.clone(), mask.clone())


def _split_result(got: Any) -> tuple[Any, Any]:
    if isinstance(got, (tuple, list)) and len(got) == 2:
        return got[0], got[1]
    return got, None


def _first_difference(got: torch.Tensor, expected: torch.Tensor) -> str:
    close = torch.isclose(got, expected, atol=ATOL, rtol=RTOL)
    b, t, c = (int(i) for i in torch.nonzero(~close)[0])
    return (
        f"the output differs first at batch {b}, position {t}, channel {c}: got "
        f"{got[b, t, c].item():.6g}, expected {expected[b, t, c].item():.6g}"
    )


def _future_leak(block: nn.Module, x: torch.Tensor, mask: torch.Tensor) -> str | None:
    """A sentence if changing the last position changes an earlier output, else None."""
    changed = x.clone()
    changed[:, -1] = 2.0 * changed[:, -1].flip(-1)  # not a shift: LayerNorm would hide that
    try:
        before, after = (_split_result(_call(block, v, mask))[0][:, :-1] for v in (x, changed))
        moved = ~torch.isclose(before, after, atol=ATOL, rtol=RTOL)  # (B, T - 1, C)
    except Exception:  # a block that fails here fails the main comparison too
        return None
    if not bool(moved.any()):
        return None
    position = int(torch.nonzero(moved)[0][1])
    return (
        f"changing only the last token changed the output at position {position}: "
        "a future token leaks into the past"
    )


def check_gpt_block(block_class: Callable[[GPTConfig], nn.Module]) -> CheckResult:
    """Check a pre-norm GPT block class against :class:`attnlib.gpt.GPTBlock`.

    ``block_class(config)`` must build a module with attnlib's parameter names, and
    ``block(x, mask)`` (``x`` of shape ``(B, T, d_model)``, ``mask`` the ``(T, T)`` causal
    mask, True = may attend) must return ``(y, weights)`` with ``y = h + FFN(LN_2(h))``,
    ``h = x + Attn(LN_1(x))`` and ``weights`` of shape ``(B, H, T, T)``.
    """
    if not callable(block_class):
        return _fail(f"expected a class, got {type(block_class).__name__}")
    with torch.random.fork_rng(devices=[]):  # the notebook's random numbers stay its own
        return _check(block_class)


def _check(block_class: Callable[[GPTConfig], nn.Module]) -> CheckResult:
    reference = _reference()
    try:
        block = block_class(CONFIG)
    except NotImplementedError as error:
        return _not_done(block_class, error)
    except Exception as error:  # the learner's bug, reported instead of a traceback
        return _fail(
            f"building your block with a GPTConfig raised {type(error).__name__}: {error}",
            "__init__(self, config) reads config.d_model, config.num_heads and config.dropout.",
        )
    if not isinstance(block, nn.Module):
        return _fail(
            f"calling your class gave {type(block).__name__}, not an nn.Module",
            "subclass nn.Module and call super().__init__() first in __init__.",
        )
    problem = _load_weights(block, reference)
    if problem is not None:
        return problem
    block = block.double().eval()

    g = fixed_generator()
    for description, batch, length in CASES:
        x = randn64(batch, length, CONFIG.d_model, generator=g)
        mask = causal_mask(length)  # (T, T), True = may attend
        with torch.no_grad():
            expected, expected_weights = reference(x, mask)
        try:
            got = _call(block, x, mask)
        except NotImplementedError as error:
            return _not_done(block_class, error)
        except Exception as error:  # the learner's bug, reported instead of a traceback
            return _fail(
                f"case '{description}': your forward raised {type(error).__name__}: {error}",
                "forward(self, x, mask) gets x of shape (B, T, d_model) and the (T, T) causal "
                "mask; pass the mask to self.attention as mask=mask. " + FORWARD,
            )
        problem = _compare(block, got, expected, expected_weights, x, mask, description)
        if problem is not None:
            return problem
    message = f"✓ {NAME} is correct on all {len(CASES)} cases: the same output and weights as "
    message += "attnlib's GPT block, and no future token changes a past output."
    return CheckResult(NAME, True, message)


def _load_weights(block: nn.Module, reference: GPTBlock) -> CheckResult | None:
    wanted = {name: tuple(t.shape) for name, t in reference.state_dict().items()}
    have = {name: tuple(t.shape) for name, t in block.state_dict().items()}
    missing = [name for name in wanted if name not in have]
    unexpected = [name for name in have if name not in wanted]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"your block has no parameter {', '.join(missing[:4])}")
        if unexpected:
            parts.append(f"it has parameters attnlib's block does not: {', '.join(unexpected[:4])}")
        return _fail(
            "; ".join(parts),
            "name the submodules as attnlib's GPT block does: self.attention = "
            "attnlib.MultiHeadAttention(d_model, num_heads, dropout), self.feed_forward = "
            "attnlib.FeedForward(d_model, 4 * d_model, dropout, activation='gelu'), "
            "self.norm_1 and self.norm_2 = nn.LayerNorm(d_model), self.dropout = "
            "nn.Dropout(dropout).",
        )
    wrong = [f"{n} {have[n]} (expected {s})" for n, s in wanted.items() if have[n] != s]
    if wrong:
        return _fail(
            f"parameters of the wrong shape: {', '.join(wrong[:3])}",
            "the FFN is d_model → 4 · d_model → d_model; every other width is d_model.",
        )
    try:
        block.load_state_dict(reference.state_dict())
    except Exception as error:
        return _fail(f"loading attnlib's weights into your block failed: {error}")
    return None


def _compare(
    block: nn.Module,
    got: Any,
    expected: torch.Tensor,
    expected_weights: torch.Tensor,
    x: torch.Tensor,
    mask: torch.Tensor,
    description: str,
) -> CheckResult | None:
    case = f"case '{description}': "
    out, weights = _split_result(got)
    if isinstance(got, torch.Tensor) or (
        isinstance(got, (tuple, list)) and len(got) == 2 and got[1] is None
    ):
        return _fail(
            case + "weights not returned: forward should return the pair (x, weights)",
            "self.attention(...) returns (output, weights); keep the weights and return "
            "them with the block's output: return y, weights.",
        )
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not isinstance(out, torch.Tensor):
        return _fail(case + f"forward should return a pair of tensors, got {type(got).__name__}")
    if tuple(out.shape) != tuple(expected.shape):
        return _fail(
            case + f"the output has shape {tuple(out.shape)}, expected {tuple(expected.shape)} "
            "(the same shape as x)",
            "each sublayer maps (B, T, d_model) to (B, T, d_model); the residual adds it to x.",
        )
    out = out.detach().to(torch.float64)
    if bool(torch.isnan(out).any()):
        return _fail(
            case + "the output contains NaN",
            "a fully masked row or a -inf reaching a sum gives NaN; use self.attention, which "
            "handles masks safely.",
        )
    if not bool(torch.isclose(out, expected, atol=ATOL, rtol=RTOL).all()):
        again = _split_result(_call(block, x, mask))[0]
        if isinstance(again, torch.Tensor) and not torch.equal(again.detach().to(out.dtype), out):
            return _fail(
                case + "two calls in eval mode gave different outputs: something random is "
                "still on",
                "use the nn.Dropout module (self.dropout), which switches itself off in eval "
                "mode, not torch.nn.functional.dropout with training=True.",
            )
        with torch.no_grad():
            variants = _variants(_reference(), x, mask)
        for label, value in variants.items():
            if bool(torch.isclose(out, value, atol=ATOL, rtol=RTOL).all()):
                return _fail(case + f"your block computes it with the {label}", HINTS[label])
        leak = _future_leak(block, x, mask)
        if leak is not None:
            return _fail(case + leak, HINTS["no causal mask"])
        return _fail(case + _first_difference(out, expected))
    right_shape = isinstance(weights, torch.Tensor) and weights.shape == expected_weights.shape
    if not right_shape or not bool(torch.isclose(weights.double(), expected_weights).all()):
        shown = (
            tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        )
        return _fail(
            case + f"the output is right but the weights, {shown}, are not the attention's "
            f"weights of shape {tuple(expected_weights.shape)} (B, H, T, T)",
            "return the weights self.attention gives back, unchanged.",
        )
    leak = _future_leak(block, x, mask)
    if leak is not None:  # only a block that ignores the mask on other inputs gets here
        return _fail(case + leak, HINTS["no causal mask"])
    return None
