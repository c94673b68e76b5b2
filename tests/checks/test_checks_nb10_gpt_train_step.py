"""Notebook 10, Exercise 3: the training-step checker against its table of mistakes.

Each mistake is written here again, as a learner would write it (not the table's function), and
must be caught and named; right steps written differently from the worked solution must pass;
one that hands its work to attnlib's step must be refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb10_gpt import train_step as check_module
from attnlib.course.char_gpt import train_step

Tensor = torch.Tensor


def right(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
    x, y = windows[:, :-1], windows[:, 1:]
    logits = model(x)
    B, T, V = logits.shape
    loss = F.cross_entropy(logits.view(B * T, V), y.reshape(B * T))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def right_cleared_first(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
    """Right: cleared before the forward pass (model.zero_grad, to zeros), the logits
    transposed for F.cross_entropy, float() of the loss."""
    model.zero_grad(set_to_none=False)
    loss = F.cross_entropy(model(windows[:, :-1]).transpose(1, 2), windows[:, 1:])
    loss.backward()
    nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], max_norm=max_norm)
    optimizer.step()
    scheduler.step()
    return float(loss)


def right_cleared_twice(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
    """Right: cleared at the start and again at the end, flatten(), a detached loss kept."""
    optimizer.zero_grad()
    logits = model(windows[:, :-1]).flatten(0, 1)
    loss = F.cross_entropy(logits, windows[:, 1:].flatten())
    loss.backward()
    nn.utils.clip_grad_norm_(list(model.parameters()), max_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return loss.detach().item()


RIGHT: dict[str, Callable[..., Any]] = {
    "as most learners write it": right,
    "cleared first, transposed, float()": right_cleared_first,
    "cleared twice, flatten": right_cleared_twice,
}


def step_with(**how: Any) -> Callable[..., Any]:
    """A step as a learner writes it, with one thing done differently."""

    def step(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
        x, y = windows[:, :-1], windows[:, 1:]
        if how.get("targets") == "same":
            y = x
        elif how.get("targets") == "whole":
            x = windows
        elif how.get("targets") == "previous":
            x, y = windows[:, 1:], windows[:, :-1]
        if how.get("no_grad"):
            with torch.no_grad():
                logits = model(x)
        else:
            logits = model(x)
        if how.get("flatten") == "view":
            B, T, V = logits.shape
            loss = F.cross_entropy(logits.view(B * T, V), y.view(B * T))
        elif how.get("flatten", True):
            loss = F.cross_entropy(
                logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction=how.get("red", "mean")
            )
        else:
            loss = F.cross_entropy(logits, y)
        if how.get("zero", "first") == "first":
            optimizer.zero_grad()
        if how.get("clip") == "early":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        loss.backward()
        if how.get("zero") == "after backward":
            optimizer.zero_grad()
        clip = how.get("clip", "norm")
        if clip == "norm":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        elif clip == "one":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        elif clip == "value":
            nn.utils.clip_grad_value_(model.parameters(), clip_value=max_norm)
        if how.get("schedule") == "first":
            scheduler.step()
        if how.get("step", True):
            optimizer.step()
        if how.get("schedule", "after") == "after":
            scheduler.step()
        if clip == "late":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if how.get("zero") == "last":
            optimizer.zero_grad()
        returned = how.get("returned", "item")
        if returned == "tensor":
            return loss
        if returned == "none":
            return None
        if returned == "method":
            return loss.item
        if returned == "after":
            with torch.no_grad():
                out = model(windows[:, :-1])
                return F.cross_entropy(
                    out.reshape(-1, out.size(-1)), windows[:, 1:].reshape(-1)
                ).item()
        return loss.item()

    return step


WRONG: dict[str, tuple[Callable[..., Any], str]] = {
    "never cleared": (step_with(zero="never"), "never cleared"),
    "cleared after backward": (step_with(zero="after backward"), "after backward()"),
    "cleared at the end": (step_with(zero="last"), "after step(), not before"),
    "clip before backward": (step_with(clip="early"), "clipped before backward()"),
    "no clipping": (step_with(clip="none"), "clipped before backward() (or not at all)"),
    "clip after step": (step_with(clip="late"), "clipped after step()"),
    "clip to one": (step_with(clip="one"), "to 1.0 instead"),
    "clip values": (step_with(clip="value"), "clip_grad_value_"),
    "schedule first": (step_with(schedule="first"), "schedule before the optimizer's step()"),
    "no schedule": (step_with(schedule="never"), "never advanced the schedule"),
    "no step": (step_with(step=False), "never called the optimizer's step()"),
    "no_grad": (step_with(no_grad=True), "under torch.no_grad()"),
    "unflattened": (step_with(flatten=False), "without flattening"),
    "unshifted": (step_with(targets="same"), "their own targets"),
    "whole window": (step_with(targets="whole"), "the whole window"),
    "previous token": (step_with(targets="previous"), "the wrong way"),
    "summed": (step_with(red="sum"), "summed the cross-entropy"),
    "tensor": (step_with(returned="tensor"), "the loss as a tensor"),
    "method": (step_with(returned="method"), "item method"),
    "view": (step_with(flatten="view"), "with .view"),
    "nothing": (step_with(returned="none"), "returned nothing"),
    "loss after": (step_with(returned="after"), "computed after the step"),
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_steps_pass(name: str) -> None:
    report = checks.check_my_train_step(RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", WRONG)
def test_each_step_mistake_is_caught_and_named(name: str) -> None:
    fn, words = WRONG[name]
    report = str(checks.check_my_train_step(fn))
    mistake = report.split("The mistake: ", 1)[-1].split("\n")[0] if "The mistake" in report else ""
    assert words in mistake, report


@pytest.mark.slow
def test_every_mistake_of_the_table_is_named_when_made() -> None:
    for mistake in known_mistakes("ex3_my_train_step"):
        report = checks.check_my_train_step(mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


def test_every_mistake_of_the_table_is_also_written_again_here() -> None:
    words = [w for _, w in WRONG.values()]
    for mistake in known_mistakes("ex3_my_train_step"):
        assert any(w in mistake.name for w in words), mistake.name


def test_clipping_and_the_schedule_change_every_step_of_the_check() -> None:
    # Each order mistake shows only if clipping (to max_norm, and to 1) and the warm-up change
    # every call: every gradient the right step clips is longer than 1.
    for kind in check_module.KINDS:
        model, optimizer, scheduler, windows = check_module._setup(kind)
        rates = []
        for w in windows:
            logits = model(w[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), check_module.MAX_NORM)
            assert norm > 1.0 > check_module.MAX_NORM, (kind, float(norm))
            rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
        assert len(set(rates)) == len(rates), rates
        assert all(w.shape[1] - 1 != check_module.V for w in windows)


def test_the_checks_schedule_is_torchs_warm_up() -> None:
    params = [torch.zeros(1, requires_grad=True)]
    ours = torch.optim.SGD(params, lr=0.5)
    theirs = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
    schedule = check_module.WarmUp(ours, 4)
    lambda_lr = torch.optim.lr_scheduler.LambdaLR(theirs, lambda i: min(1.0, (i + 1) / 4))
    for _ in range(6):
        assert schedule.get_last_lr() == pytest.approx(lambda_lr.get_last_lr())
        ours.step()
        theirs.step()
        schedule.step()
        lambda_lr.step()


def test_a_step_that_hands_its_work_to_attnlibs_is_refused() -> None:
    report = checks.check_my_train_step(train_step)
    assert not report.passed and "does not accept it" in str(report), report

    def wraps(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
        return train_step(model, optimizer, scheduler, windows, max_norm)

    assert "does not accept it" in str(checks.check_my_train_step(wraps))


def test_a_stub_is_not_done_and_a_crash_is_reported() -> None:
    def stub(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
        """One step."""
        raise NotImplementedError()

    assert not checks.check_my_train_step(stub).done

    def crashes(model, optimizer, scheduler, windows, max_norm):  # type: ignore[no-untyped-def]
        return model(windows).backward()

    report = str(checks.check_my_train_step(crashes))
    assert "raised" in report and "Traceback" not in report
    assert "expected a function" in str(checks.check_my_train_step(42))


def test_the_check_leaves_the_notebooks_random_numbers_and_threads_alone() -> None:
    torch.manual_seed(123)
    before, threads = torch.rand(3), torch.get_num_threads()
    torch.manual_seed(123)
    assert checks.check_my_train_step(right).passed
    assert not checks.check_my_train_step(WRONG["no step"][0]).passed
    assert torch.equal(torch.rand(3), before) and torch.get_num_threads() == threads


def test_no_hint_or_report_prints_code() -> None:
    exercise = checks.check_my_train_step.exercise
    texts = [*exercise.hints[:2], *(m.name + m.why for m in known_mistakes(exercise.id))]
    for text in texts:
        for code in (
            "clip_grad_norm_(model",
            "loss.backward()",
            "optimizer.zero_grad()",
            ".item()",
        ):
            assert code not in text, (code, text)
