"""Notebook 10, Exercise 2: the learner's GPT forward pass, ``my_gpt_forward(gpt, idx)``.

The check builds a small GPT of its own (2 blocks, float64, random weights everywhere, the
LayerNorms and both embeddings included, so that every part left out or misplaced shows) and
runs the answer on four token batches: three in eval mode, one as long as the model's context,
and one in training mode, each call after the same seed, so that a right forward pass draws
attnlib's dropout masks. What it returns is compared with the worked forward pass.

Two mistakes give the right numbers or random ones, so they are seen inside the call instead: a
forward pre-hook on every block keeps the masks the blocks receive (one forward pass, one
mask), and a watch sees a layer built inside the function. The hook is an object of this
package, so that what it kept comes back when the answer runs in the grader's sandbox
(:mod:`attnlib.grading.wire.mirror`). A failing answer is named by the first usual mistake
(:mod:`.forward_mistakes`) that computes what it computed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._exercise import (
    Exercise,
    Mistake,
    checker_of,
    failed,
    not_done,
    passed,
    refused,
    register,
)
from attnlib.checks._framework import (
    CheckResult,
    compare_outputs,
    fixed_generator,
    randn64,
    task_of,
    tensor_subclass_in,
)
from attnlib.checks._outcomes import Outcome, same_behaviour
from attnlib.checks._threads import one_thread
from attnlib.checks.nb10_gpt.forward_mistakes import (
    MASK_PER_BLOCK,
    MISTAKES,
    NEW_EMBEDDING,
    NEW_HEAD,
    NOT_BY_VALUE,
    worked,
)
from attnlib.course.char_gpt import forward_pass
from attnlib.gpt import GPT, GPTConfig

Tensor = torch.Tensor
Forward = Callable[[GPT, Tensor], Any]

CONFIG = GPTConfig(vocab_size=11, max_len=12, d_model=16, num_heads=4, num_layers=2, dropout=0.1)
TOLERANCE = (1e-8, 1e-6)  # atol, rtol: float64 forward passes that compute the same agree closely
SEED = 10  # set before every call: a right forward pass draws attnlib's dropout masks

GPT_FORWARD = register(
    Exercise(
        id="ex2_my_gpt_forward",
        notebook="10",
        number=2,
        name="my_gpt_forward",
        hints=(
            "Follow a token through the model of section 1: what it is and where it stands each "
            "give a vector, and their sum is the stream; the stream passes through every block "
            "in turn, then the final LayerNorm, and the tied head turns each position's vector "
            "into one score per character. The mask is the caller's job: one for the whole pass.",
            "Positions are the whole numbers 0 to T - 1, one per column of idx, looked up in "
            "gpt.position_embedding; the sum of the two lookups goes through gpt.dropout. Build "
            "the (T, T) causal mask with attnlib.causal_mask before the loop over gpt.blocks. "
            "Each block returns a pair: the first is the stream that flows on.",
            "x is gpt.dropout of token_embedding(idx) plus position_embedding(torch.arange(T)); "
            "mask is attnlib.causal_mask(T); for each block, x is the first of block(x, mask); "
            "the result is gpt.head(gpt.final_norm(x)), with no softmax after it: the loss and "
            "the samplers take logits.",
        ),
    )
)

# What the answer may not call: the model's own forward pass, or attnlib's written-out one.
FORWARD_IMPLEMENTATIONS = Forbidden(
    python={
        GPT.forward: "the model's own forward pass (gpt(idx))",
        GPT._run: "the model's own forward pass (gpt(idx))",
        GPT.loss: "the model's own forward pass (gpt.loss)",
        GPT.attention_weights: "the model's own forward pass (gpt.attention_weights)",
        forward_pass: "attnlib.course.char_gpt.forward_pass",
    }
)
# Layers built inside the forward pass: seen, to name the mistake (their weights are random).
BUILT_INSIDE = Forbidden(
    python={nn.Linear.__init__: "a new nn.Linear", nn.Embedding.__init__: "a new nn.Embedding"}
)


class MaskSpy:
    """A forward pre-hook on every block of the check's model: the mask each block receives,
    kept alive so that two masks are two objects, and their ids, in block order."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.kinds: list[str] = []
        self.held: dict[int, object] = {}

    def __call__(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        mask = args[1] if len(args) > 1 else kwargs.get("mask")
        self.held[id(mask)] = mask
        self.ids.append(id(mask))
        self.kinds.append("none" if mask is None else "tensor")

    def reset(self) -> None:
        self.ids, self.kinds, self.held = [], [], {}

    def masks_built(self) -> int:
        """How many different mask tensors the blocks received."""
        return len({i for i, kind in zip(self.ids, self.kinds, strict=True) if kind == "tensor"})


@dataclass(frozen=True)
class ForwardCase:
    """One call of a forward pass: its token ids and the model's mode."""

    description: str
    idx: Tensor  # (B, T)
    training: bool = False


def cases() -> list[ForwardCase]:
    g = fixed_generator()
    specs = [
        ("a batch of 2 texts of 5 tokens", 2, 5, False),
        (f"one text of {CONFIG.max_len} tokens, the whole context", 1, CONFIG.max_len, False),
        ("a batch of 3 texts of 1 token", 3, 1, False),
        ("a batch of 2 texts of 7 tokens in training mode (dropout on)", 2, 7, True),
    ]
    return [
        ForwardCase(description, torch.randint(CONFIG.vocab_size, (b, t), generator=g), training)
        for description, b, t, training in specs
    ]


def model() -> GPT:
    """attnlib's GPT in float64 with random weights everywhere (LayerNorms too), its head tied
    to the token embedding, and a :class:`MaskSpy` on every block."""
    torch.manual_seed(0)  # GPT draws its initial weights; they are all replaced below
    gpt = GPT(CONFIG).double()
    g = fixed_generator()
    with torch.no_grad():
        for name, parameter in gpt.named_parameters():
            noise = randn64(*parameter.shape, generator=g)
            if "norm" in name:
                parameter.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * noise)
            elif "embedding" in name:
                parameter.copy_(noise)
            elif parameter.dim() == 2:
                parameter.copy_(noise / parameter.shape[1] ** 0.5)
            else:
                parameter.copy_(0.1 * noise)
    spy = MaskSpy()
    for block in gpt.blocks:
        block.register_forward_pre_hook(spy, with_kwargs=True)
    return gpt


def _spy(gpt: GPT) -> MaskSpy:
    return next(iter(gpt.blocks[0]._forward_pre_hooks.values()))


@dataclass(frozen=True)
class Run:
    """What one call of a forward pass gave, and what happened inside it."""

    outcome: Outcome
    masks_built: int = 1
    built_inside: tuple[str, ...] = ()


def run(forward: Forward, gpt: GPT, case: ForwardCase, watch: bool = False) -> Run:
    """``forward(gpt, idx)`` in the case's mode, after the seed (NotImplementedError is raised;
    a forbidden call is left in the watches open around it)."""
    gpt.train(case.training)
    spy = _spy(gpt)
    spy.reset()
    inside = CallWatch(BUILT_INSIDE)
    torch.manual_seed(SEED)
    try:
        with inside if watch else contextlib.nullcontext():
            value = forward(gpt, case.idx.clone())
        outcome = Outcome(value=value)
    except NotImplementedError:
        raise
    except Exception as error:  # the learner's bug, reported instead of a traceback
        outcome = Outcome(error=error)
    finally:
        gpt.eval()
    return Run(outcome, _spy(gpt).masks_built(), tuple(dict.fromkeys(inside.seen)))


def _problem(outcome: Outcome, expected: Outcome, case: ForwardCase) -> str | None:
    if outcome.error is not None:
        return f"your function raised {type(outcome.error).__name__}: {outcome.error}"
    mode = "in training mode, after the same seed, " if case.training else ""
    got = outcome.value
    if isinstance(got, (tuple, list)):
        return f"it should return the logits, one tensor, got a {type(got).__name__} of {len(got)}"
    problem = compare_outputs(got, expected.value, "the logits", *TOLERANCE)
    return None if problem is None else mode + problem


def _exactly(a: Outcome, b: Outcome) -> bool:
    """The same values, or errors with the very same message (two mistakes that feed a
    LayerNorm the wrong width raise errors of one kind, whose shapes tell them apart)."""
    if a.error is not None and b.error is not None:
        return type(a.error) is type(b.error) and str(a.error) == str(b.error)
    return same_behaviour(a, b, TOLERANCE)


def _alike(a: Outcome, b: Outcome) -> bool:
    return same_behaviour(a, b, TOLERANCE)


def _recognise(gpt: GPT, runs: list[tuple[ForwardCase, Run]], wrong: list[bool]) -> Mistake | None:
    """The first mistake that computes what the learner's forward computed on every case
    (errors with the same message first, then of the same kind), else on every case the
    learner's got wrong."""
    judged = [mistake for mistake in MISTAKES if mistake not in NOT_BY_VALUE]
    theirs = [[run(m.fn, gpt, case).outcome for case, _ in runs] for m in judged]
    for same in (_exactly, _alike):
        for mistake, their_outcomes in zip(judged, theirs, strict=True):
            outcomes = zip(runs, their_outcomes, strict=True)
            if all(same(got.outcome, outcome) for (_, got), outcome in outcomes):
                return mistake
    for mistake, their_outcomes in zip(judged, theirs, strict=True):
        outcomes = zip(runs, their_outcomes, wrong, strict=True)
        if all(_alike(got.outcome, outcome) for (_, got), outcome, bad in outcomes if bad):
            return mistake
    return None


def _causality_problem(forward: Forward, gpt: GPT, case: ForwardCase) -> str | None:
    """What a right forward pass does that this one does not, when no usual mistake matched."""
    if case.idx.shape[1] < 2:
        return None
    changed = case.idx.clone()
    changed[:, -1] = (changed[:, -1] + 1) % CONFIG.vocab_size
    first = run(forward, gpt, ForwardCase(case.description, case.idx)).outcome
    later = run(forward, gpt, ForwardCase(case.description, changed)).outcome
    if first.error is not None or later.error is not None:
        return None
    before, after = first.value, later.value
    if not (isinstance(before, Tensor) and isinstance(after, Tensor)) or before.dim() < 3:
        return None
    atol, rtol = TOLERANCE
    moved = ~torch.isclose(before[:, :-1], after[:, :-1], atol=atol, rtol=rtol)
    if bool(moved.any()):
        position = int(torch.nonzero(moved)[0][1])
        return (
            f"changing only the last token changed the logits at position {position}: a later "
            "token reaches an earlier one"
        )
    return None


@checker_of(GPT_FORWARD, MISTAKES)
def check_my_gpt_forward(fn: Forward) -> CheckResult:
    """Check ``my_gpt_forward(gpt, idx)``: the logits of an ``attnlib.GPT`` computed from its
    parts, one causal mask for all the blocks.

    Shapes:
        idx: ``(B, T)`` token ids, ``T <= max_len``; returns ``(B, T, vocab_size)``.
    """
    if not callable(fn):
        problem = f"expected a function, got {type(fn).__name__}"
        return failed(GPT_FORWARD, fn, "as a whole", problem, None)
    with torch.random.fork_rng(devices=[]), one_thread():  # the notebook's stay its own
        return _check(fn)


def _check(fn: Forward) -> CheckResult:
    ex = GPT_FORWARD
    gpt, runs = model(), []
    for case in cases():
        watch = CallWatch(FORWARD_IMPLEMENTATIONS)
        try:
            with watch:
                runs.append((case, run(fn, gpt, case, watch=True)))
        except NotImplementedError as error:
            return not_done(ex, fn, str(error) or task_of(fn))
        if watch.seen:
            return refused(ex, fn, watch.seen)
    for case, got in runs:
        disguised = tensor_subclass_in(got.outcome.value)
        if disguised is not None:
            problem = f"it returned a {disguised.__name__}, a subclass of torch.Tensor"
            return failed(ex, fn, f"case '{case.description}'", problem, None)
    built = next((got.built_inside for _, got in runs if got.built_inside), ())
    if built:
        mistake = NEW_HEAD if "a new nn.Linear" in built else NEW_EMBEDDING
        problem = f"it builds {built[0]} at every call, with new random weights"
        return failed(ex, fn, "as a whole", problem, mistake)
    problems = [_problem(got.outcome, run(worked, gpt, case).outcome, case) for case, got in runs]
    wrong = [problem is not None for problem in problems]
    if any(wrong):
        first = wrong.index(True)
        case = runs[first][0]
        mistake = _recognise(gpt, runs, wrong)
        problem = problems[first]
        if mistake is None:
            problem = _causality_problem(fn, gpt, case) or problem
        return failed(ex, fn, f"case '{case.description}'", str(problem), mistake)
    several = next(((case, got) for case, got in runs if got.masks_built > 1), None)
    if several is not None:
        case, got = several
        problem = (
            f"its {CONFIG.num_layers} blocks received {got.masks_built} different masks in one "
            "forward pass (the numbers are right)"
        )
        return failed(ex, fn, f"case '{case.description}'", problem, MASK_PER_BLOCK)
    return passed(ex, fn, f"all {len(runs)} cases, in eval and in training mode")
