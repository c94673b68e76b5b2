"""Notebook 10, Exercise 1: the learner's pre-norm GPT block, against attnlib's.

attnlib's weights (random, LayerNorms too, so that every wrong wiring differs) are loaded into
the learner's block; both run in float64, in eval mode on two cases and in training mode on a
third, each call after the same seed, so that the dropout masks of a right block are attnlib's
own. One case's caller passes a mask that blocks more than the future (a sliding window): a
block uses the mask it is given. Its submodules' names and shapes are looked at first; then the
engine's class check (:func:`attnlib.checks.engine.check_module`) runs it on the cases and names
a wrong block by running each usual mistake (:mod:`.block_mistakes`) with the same weights on the
same cases: the first that computes what the learner's block computed (on the eval cases alone
when one of them is wrong: a block may draw its random numbers in another order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

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
)
from attnlib.checks._outcomes import Outcome, same_behaviour
from attnlib.checks._threads import one_thread
from attnlib.checks.engine import ModuleCase, check_module, report
from attnlib.checks.nb10_gpt.block_mistakes import MISTAKES
from attnlib.gpt import GPTBlock, GPTConfig
from attnlib.masks import causal_mask

CONFIG = GPTConfig(vocab_size=11, max_len=16, d_model=16, num_heads=4, num_layers=1, dropout=0.1)
TOLERANCE = (1e-6, 1e-5)  # atol, rtol: float64 blocks that compute the same thing agree closely
SEED = 10  # set before every call: a right block draws attnlib's dropout masks

GPT_BLOCK = register(
    Exercise(
        id="ex1_my_gpt_block",
        notebook="10",
        number=1,
        name="MyGPTBlock",
        hints=(
            "A pre-norm block keeps a stream that flows through it: each sublayer reads a "
            "normalised copy of the stream and adds what it computes back onto the stream "
            "itself. The submodules and their names are those of attnlib's block, printed above.",
            "Two sublayers, one after the other: causal self-attention, then the feed-forward "
            "network. Each has its own LayerNorm in front (norm_1, then norm_2); each one's "
            "output passes through dropout before it is added to the stream. The attention gives "
            "back its weights with its output: keep them, they are the second thing to return.",
            "In __init__: an attnlib.MultiHeadAttention of the config's width and heads, an "
            "attnlib.FeedForward from d_model through 4·d_model with the 'gelu' activation (both "
            "with the config's dropout), two LayerNorms of width d_model and one nn.Dropout. In "
            "forward: h is x plus the dropped-out attention output of norm_1(x) under the mask "
            "as given; y is h plus the dropped-out FFN output of norm_2(h); return y and the "
            "weights.",
        ),
    )
)

# An answer may not hand the work to attnlib's block (a subclass, or its forward called).
BLOCK_IMPLEMENTATIONS = Forbidden(python={GPTBlock: "attnlib's GPT block (GPTBlock)"})


@dataclass(frozen=True)
class BlockCase:
    """One call of a block: its input, the mask the caller passes and the block's mode."""

    description: str
    x: torch.Tensor  # (B, T, C)
    training: bool
    window: int | None = None  # the caller's mask also blocks keys this many places back

    @property
    def mask(self) -> torch.Tensor:
        causal = causal_mask(self.x.shape[1])  # (T, T), True = may attend
        return causal if self.window is None else causal.triu(1 - self.window)


def cases() -> list[BlockCase]:
    g = fixed_generator()
    window = "a batch of 3 sequences of 7 under a mask that lets each see itself and 2 before it"
    specs = [("one sequence of 5", 1, 5, False, None), (window, 3, 7, False, 3)]
    specs.append(("a batch of 2 sequences of 6 in training mode (dropout on)", 2, 6, True, None))
    return [
        BlockCase(description, randn64(batch, length, CONFIG.d_model, generator=g), training, w)
        for description, batch, length, training, w in specs
    ]


def reference() -> GPTBlock:
    """attnlib's block with random weights (LayerNorms too), so every wrong wiring differs."""
    block = GPTBlock(CONFIG).double()
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


def run(block: nn.Module, case: BlockCase) -> Outcome:
    """``block(x, mask)`` in the case's mode, after the seed (NotImplementedError is raised)."""
    block.train(case.training)
    torch.manual_seed(SEED)
    try:
        with torch.no_grad():
            return Outcome(value=block(case.x.clone(), case.mask))
    except NotImplementedError:
        raise
    except Exception as error:  # the learner's bug, reported instead of a traceback
        return Outcome(error=error)


def shapes(block: nn.Module) -> dict[str, tuple[int, ...]]:
    return {name: tuple(t.shape) for name, t in block.state_dict().items()}


def _structure_problem(block: nn.Module, wanted: dict[str, tuple[int, ...]]) -> str | None:
    have = shapes(block)
    missing = [name for name in wanted if name not in have]
    extra = [name for name in have if name not in wanted]
    if missing or extra:
        parts = [f"it has no {', '.join(missing[:4])}"] if missing else []
        parts += [f"it has {', '.join(extra[:4])}, which attnlib's block does not"] if extra else []
        return "its parameters do not have the names of attnlib's block: " + "; ".join(parts)
    wrong = [f"{n} {have[n]} (attnlib's: {s})" for n, s in wanted.items() if have[n] != s]
    if wrong:
        return f"parameters of the wrong shape: {', '.join(wrong[:3])}"
    return None


def _structure_mistake(block: nn.Module, wanted: dict[str, tuple[int, ...]]) -> Mistake | None:
    have = shapes(block)
    for mistake in MISTAKES:  # those that show in the parameters' names or shapes
        theirs = shapes(mistake.fn(CONFIG))
        if theirs != wanted and theirs == have:
            return mistake
    if any("in_proj" in name for name in have):
        return next(m for m in MISTAKES if "nn.MultiheadAttention" in m.name)
    if set(have) != set(wanted):
        return next(m for m in MISTAKES if m.name.startswith("named the submodules"))
    return None


def _problem(outcome: Outcome, case: ModuleCase) -> str | None:
    """What is wrong with the block's outcome on a case, in this exercise's words."""
    if outcome.error is not None:
        return f"your forward raised {type(outcome.error).__name__}: {outcome.error}"
    got, (y, weights) = outcome.value, case.expected
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        shown = f"a tensor of shape {tuple(got.shape)}" if torch.is_tensor(got) else type(got)
        return f"forward should return the pair (y, weights), got {shown}"
    mode = "in training mode, after the same seed, " if case.training else ""
    for label, mine, theirs in (("the output y", got[0], y), ("the weights", got[1], weights)):
        problem = compare_outputs(mine, theirs, label, *TOLERANCE)
        if problem is not None:
            return mode + problem
    return None


def _property_problem(block: nn.Module, case: BlockCase) -> str | None:
    """What a right block does that this one does not, when no usual mistake matched."""
    first = run(block, case)
    if not case.training and first.error is None:
        torch.manual_seed(SEED + 1)  # a block that draws random numbers in eval mode shows it
        block.eval()
        with torch.no_grad():
            other = block(case.x.clone(), case.mask)
        if not same_behaviour(first, Outcome(value=other), TOLERANCE):
            return "two calls in eval mode gave different outputs: something random is still on"
    changed = case.x.clone()
    changed[:, -1] = 2.0 * changed[:, -1].flip(-1)
    later = run(block, replace(case, x=changed))
    if first.error is None and later.error is None and isinstance(first.value, (tuple, list)):
        before, after = first.value[0][:, :-1], later.value[0][:, :-1]
        moved = ~torch.isclose(before, after, atol=TOLERANCE[0], rtol=TOLERANCE[1])
        if bool(moved.any()):
            position = int(torch.nonzero(moved)[0][1])
            return (
                f"changing only the last position's input changed the output at position "
                f"{position}: a later token reaches an earlier one"
            )
    return None


@checker_of(GPT_BLOCK, MISTAKES)
def check_my_gpt_block(block_class: Callable[[GPTConfig], nn.Module]) -> CheckResult:
    """Check a pre-norm GPT block class against attnlib's: ``block_class(config)`` with
    attnlib's submodule names, ``forward(x, mask)`` returning ``(y, weights)``.

    Shapes:
        x: ``(B, T, C)``; mask: ``(T, T)``, True = may attend; y: ``(B, T, C)``; weights:
        ``(B, H, T, T)``.
    """
    if not callable(block_class):
        problem = f"expected a class, got {type(block_class).__name__}"
        return failed(GPT_BLOCK, block_class, "as a whole", problem, None)
    with torch.random.fork_rng(devices=[]), one_thread():  # the notebook's stay its own
        return _check(block_class)


def _check(block_class: Callable[[GPTConfig], nn.Module]) -> CheckResult:
    ex = GPT_BLOCK
    watch = CallWatch(BLOCK_IMPLEMENTATIONS)
    try:
        with watch:
            block = block_class(CONFIG)
    except NotImplementedError as error:
        return not_done(ex, block_class, str(error) or task_of(block_class))
    except Exception as error:  # the learner's bug, reported instead of a traceback
        problem = f"building it with a GPTConfig raised {type(error).__name__}: {error}"
        return failed(ex, block_class, "as a whole", problem, None)
    if watch.seen:
        return refused(ex, block_class, watch.seen)
    if not isinstance(block, nn.Module):
        problem = f"calling your class gave {type(block).__name__}, not an nn.Module"
        return failed(ex, block_class, "as a whole", problem, None)
    wanted = shapes(reference())
    problem = _structure_problem(block, wanted)
    if problem is not None:
        mistake = _structure_mistake(block, wanted)
        return failed(ex, block_class, "its submodules", problem, mistake)
    block.load_state_dict(reference().state_dict())
    block = block.double()
    block_cases = cases()
    by_value = [m for m in MISTAKES if shapes(m.fn(CONFIG)) == wanted]  # the rest: by structure
    verdict = check_module(
        block_class,
        [_as_module_case(case) for case in block_cases],
        by_value,
        forbidden=BLOCK_IMPLEMENTATIONS,
        atol=TOLERANCE[0],
        rtol=TOLERANCE[1],
        judge=_problem,
        eval_first=True,
        crash_lines=False,
    )
    if verdict.kind == "passed":
        what = f"all {len(block_cases)} cases, in eval and in training mode"
        return passed(ex, block_class, what)
    if verdict.kind == "failed" and verdict.mistake is None:
        case = next(c for c in block_cases if f"case '{c.description}'" == verdict.where)
        problem = _property_problem(block, case) or verdict.problem
        return failed(ex, block_class, verdict.where, problem, None)
    return report(ex, block_class, verdict)


def _as_module_case(case: BlockCase) -> ModuleCase:
    """The case as the engine runs it: built from the config, attnlib's weights loaded, called
    on ``(x, mask)`` in the case's mode after the seed; expected, what attnlib's block gives."""
    expected = run(reference(), case)
    return ModuleCase(
        case.description,
        (CONFIG,),
        dict(reference().named_parameters()),
        (case.x, case.mask),
        expected.value,
        training=case.training,
        seed=SEED,
    )
