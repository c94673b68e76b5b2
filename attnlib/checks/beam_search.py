"""The checker of notebook 09's beam search exercise, and the plain beam search it compares with.

The learner writes beam search for one source sentence, with GNMT's length penalty. The
check runs it on the hand-set toy of :mod:`attnlib.course.hand_set`, whose best sequence
depends on the beam size and the penalty, and on the stored date translator. It compares
the hypotheses and their scores with :func:`reference_beam_search` (itself tested against
attnlib's batched :func:`attnlib.decoding.beam_search_with_scores`); when they differ, it
reruns the reference with each usual mistake to name it.

Notebook 09.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnlib.checks._framework import CheckResult, not_done
from attnlib.course.hand_set import BOS, EOS, HandSetTranslator


@dataclass(frozen=True)
class BeamRules:
    """The choices a beam search makes; the defaults are the exercise's (and attnlib's)."""

    penalty: str = "gnmt"  # "gnmt": ((5 + |y|) / 6) ** alpha; "power": |y| ** alpha
    count_eos: bool = True  # |y| counts the <eos>
    keep_finished: bool = True  # a finished hypothesis stays among the beams


def reference_beam_search(
    model: torch.nn.Module,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_len: int,
    beam_size: int,
    alpha: float,
    rules: BeamRules | None = None,
) -> tuple[list[int], float]:
    """Beam search for one source ``(1, S)`` as plainly as possible; ``(tokens, score)``.

    ``tokens`` has no ``<bos>`` and ends with ``<eos>`` when one was written; ``score`` is
    the sum of log-probabilities divided by the length penalty.
    """
    rules = rules or BeamRules()

    def penalised(tokens: list[int], total: float) -> float:
        length = max(len(tokens) - (0 if rules.count_eos or eos_id not in tokens else 1), 1)
        lp = ((5 + length) / 6) ** alpha if rules.penalty == "gnmt" else length**alpha
        return total / lp

    memory, src_mask, _ = model.encode(src)
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    for _ in range(max_len):
        candidates = []
        for tokens, total in beams:
            if tokens and tokens[-1] == eos_id:
                if rules.keep_finished:
                    candidates.append((tokens, total))
                continue
            tgt = torch.tensor([[bos_id, *tokens]])  # (1, t)
            logits, _, _ = model.decode(tgt, memory, src_mask)
            log_probs = torch.log_softmax(logits[0, -1].double(), dim=-1)  # (V,)
            candidates += [([*tokens, v], total + lp) for v, lp in enumerate(log_probs.tolist())]
        if not candidates:
            break
        beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:beam_size]  # by raw sum
        if all(tokens[-1] == eos_id for tokens, _ in beams):
            break
    tokens, total = max(beams, key=lambda c: penalised(*c))
    return tokens, penalised(tokens, total)


MISTAKES = {
    "the length penalty is |y|^α; this exercise uses GNMT's ((5 + |y|) / 6)^α": BeamRules(
        penalty="power"
    ),
    "|y| should count the <eos>": BeamRules(count_eos=False),
    "a finished hypothesis was dropped from the beam; keep it, unchanged, as a candidate": (
        BeamRules(keep_finished=False)
    ),
}

BeamSearch = Callable[..., tuple[list[int], float]]


def _cases(translator: torch.nn.Module | None) -> list[tuple[str, torch.nn.Module, tuple]]:
    toy, toy_src = HandSetTranslator(), torch.zeros(1, 1, dtype=torch.long)
    cases = [
        (f"toy model, beam {k}, α = {alpha}", toy, (toy_src, BOS, EOS, 6, k, alpha))
        for k, alpha in ((1, 0.6), (2, 0.0), (2, 0.6), (2, 2.0), (3, 1.0))
    ]
    if translator is not None:
        tok = translator.tokenizer
        for text in ("21.11.2026", "the 3rd of march, 1999"):
            src, _ = tok.encode_batch([text])
            args = (src, tok.bos_id, tok.eos_id, 11, 4, 0.6)
            cases.append((f"date translator, {text!r}, beam 4, α = 0.6", translator.model, args))
    return cases


def check_beam_search(fn: BeamSearch, translator: torch.nn.Module | None = None) -> CheckResult:
    """Check ``beam(model, src, bos_id, eos_id, max_len, beam_size, alpha) -> (tokens, score)``.

    On the toy model and, given ``translator`` (a ``DateTranslator``), on two dates: the
    same tokens as :func:`reference_beam_search` and the same score to 1e-6.
    """
    name = "beam_search"
    for description, model, args in _cases(translator):
        expected = reference_beam_search(model, *args)
        try:
            with torch.no_grad():
                got = fn(model, *args)
        except NotImplementedError as error:
            return not_done(name, fn, error)
        except Exception as error:  # the learner's bug, reported instead of a traceback
            message = f"✗ {name}, case '{description}': your function raised"
            return CheckResult(name, False, f"{message} {type(error).__name__}: {error}")
        if not (isinstance(got, tuple) and len(got) == 2):
            message = f"✗ {name}: return a pair (tokens, score), got {type(got).__name__}"
            return CheckResult(name, False, message)
        tokens, score = list(got[0]), float(got[1])
        if tokens == expected[0] and abs(score - expected[1]) <= 1e-6:
            continue
        cause = next(
            (
                f"\n  likely cause: {mistake}"
                for mistake, rules in MISTAKES.items()
                if _matches((tokens, score), reference_beam_search(model, *args, rules=rules))
            ),
            "",
        )
        return CheckResult(
            name,
            False,
            f"✗ {name}, case '{description}': got {tokens} with score {score:.6f}, expected "
            f"{expected[0]} with score {expected[1]:.6f}{cause}",
        )
    return CheckResult(name, True, f"✓ {name} is correct on all {len(_cases(translator))} cases.")


def _matches(got: tuple[list[int], float], expected: tuple[list[int], float]) -> bool:
    return got[0] == expected[0] and abs(got[1] - expected[1]) <= 1e-6
