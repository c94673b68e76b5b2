"""Label smoothing against PyTorch, the warm-up schedule by hand, and the seeded training loop."""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
import sys

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from attnlib.training import (
    NonFiniteLossError,
    TrainingHistory,
    fit,
    label_smoothed_cross_entropy,
    warmup_inverse_sqrt,
    warmup_scheduler,
)


def _logits_and_target(shape: tuple[int, ...], vocab: int, seed: int, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(*shape, vocab, generator=g, dtype=torch.float64) * 3).to(dtype)
    return logits, torch.randint(0, vocab, shape, generator=g)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3, 0.9])
@pytest.mark.parametrize(("shape", "vocab"), [((7,), 5), ((3, 4), 11), ((2, 3, 5), 2)])
def test_label_smoothing_equals_torch(smoothing: float, shape: tuple[int, ...], vocab: int) -> None:
    logits, target = _logits_and_target(shape, vocab, seed=0)
    ours = label_smoothed_cross_entropy(logits, target, smoothing)
    theirs = F.cross_entropy(
        logits.reshape(-1, vocab), target.reshape(-1), label_smoothing=smoothing
    )
    torch.testing.assert_close(ours, theirs)
    assert ours.shape == ()


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("ignore_index", [0, 3, -100])
def test_label_smoothing_with_ignored_targets_equals_torch(
    smoothing: float, ignore_index: int
) -> None:
    logits, target = _logits_and_target((4, 6), 7, seed=1)
    target[0, 2:] = ignore_index  # padding at the end of a sequence
    target[2, 4] = ignore_index
    ours = label_smoothed_cross_entropy(logits, target, smoothing, ignore_index=ignore_index)
    theirs = F.cross_entropy(
        logits.reshape(-1, 7),
        target.reshape(-1),
        label_smoothing=smoothing,
        ignore_index=ignore_index,
    )
    torch.testing.assert_close(ours, theirs)
    # Ignored positions are left out of the mean, not counted as zero loss.
    keep = target != ignore_index
    alone = label_smoothed_cross_entropy(logits[keep], target[keep], smoothing)
    torch.testing.assert_close(ours, alone)


def test_label_smoothing_gradient_equals_torch() -> None:
    logits, target = _logits_and_target((5, 6), 9, seed=2, dtype=torch.float64)
    target[1, :2] = 0
    ours_input = logits.clone().requires_grad_()
    theirs_input = logits.clone().requires_grad_()
    label_smoothed_cross_entropy(ours_input, target, 0.1, ignore_index=0).backward()
    F.cross_entropy(
        theirs_input.reshape(-1, 9), target.reshape(-1), label_smoothing=0.1, ignore_index=0
    ).backward()
    torch.testing.assert_close(ours_input.grad, theirs_input.grad)


def test_label_smoothing_keeps_float64() -> None:
    logits, target = _logits_and_target((6,), 4, seed=3, dtype=torch.float64)
    ours = label_smoothed_cross_entropy(logits, target, 0.2)
    assert ours.dtype == torch.float64
    torch.testing.assert_close(ours, F.cross_entropy(logits, target, label_smoothing=0.2))


def test_label_smoothing_computes_half_precision_in_float32() -> None:
    logits, target = _logits_and_target((8,), 5, seed=4, dtype=torch.float16)
    ours = label_smoothed_cross_entropy(logits, target, 0.1)
    assert ours.dtype == torch.float32
    expected = F.cross_entropy(logits.float(), target, label_smoothing=0.1)
    torch.testing.assert_close(ours, expected)


def test_label_smoothing_by_hand() -> None:
    # p = (1/4, 3/4); target 1; ε = 0.2 spreads 0.1 on each of the two classes.
    logits = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
    target = torch.tensor([1])
    nll, uniform = -math.log(0.75), (-math.log(0.25) - math.log(0.75)) / 2
    loss = label_smoothed_cross_entropy(logits, target, smoothing=0.2)
    assert loss.item() == pytest.approx(0.8 * nll + 0.2 * uniform, rel=1e-12)
    assert label_smoothed_cross_entropy(logits, target, 0.0).item() == pytest.approx(nll, rel=1e-12)
    # A uniform prediction costs log V whatever the smoothing.
    flat = torch.zeros(3, 5)
    for smoothing in (0.0, 0.1, 0.7):
        assert label_smoothed_cross_entropy(
            flat, torch.tensor([0, 2, 4]), smoothing
        ).item() == pytest.approx(math.log(5), rel=1e-6)


@given(st.floats(0.01, 0.9), st.integers(0, 2**31 - 1))
def test_label_smoothing_never_rewards_certainty(smoothing: float, seed: int) -> None:
    """With ε > 0 the loss of an ever more confident correct prediction grows again."""
    target = torch.tensor([0])
    losses = [
        label_smoothed_cross_entropy(torch.tensor([[margin, 0.0, 0.0]]), target, smoothing).item()
        for margin in (0.0, 5.0, 50.0, 500.0)
    ]
    assert losses[-1] > losses[-2] > min(losses)
    assert losses[-1] >= smoothing * 500.0 / 3 - 1e-3  # ε/V of the -log p of the others


def test_all_ignored_targets_give_zero_not_nan() -> None:
    logits, _ = _logits_and_target((2, 3), 4, seed=5)
    loss = label_smoothed_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), ignore_index=0)
    assert loss.item() == 0.0


def test_label_smoothing_bad_inputs() -> None:
    logits, target = _logits_and_target((3, 4), 5, seed=6)
    with pytest.raises(ValueError, match=r"must agree, got \(3, 4, 5\) and \(3, 5\)"):
        label_smoothed_cross_entropy(logits, torch.zeros(3, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"smoothing must be in \[0, 1\), got 1.0"):
        label_smoothed_cross_entropy(logits, target, smoothing=1.0)
    with pytest.raises(ValueError, match=r"smoothing must be in \[0, 1\), got -0.1"):
        label_smoothed_cross_entropy(logits, target, smoothing=-0.1)


def _with(target: torch.Tensor, index: tuple[int, ...], value: int) -> torch.Tensor:
    target = target.clone()
    target[index] = value
    return target


_LOGITS, _TARGET = _logits_and_target((3, 4), 5, seed=6)


@pytest.mark.parametrize(
    ("logits", "target", "kwargs", "error", "match"),
    [
        (
            _LOGITS,
            _TARGET.float(),
            {},
            TypeError,
            "target must hold integer ids .*got dtype torch.float32",
        ),
        (
            _LOGITS,
            _TARGET.bool(),
            {},
            TypeError,
            "target must hold integer ids .*got dtype torch.bool",
        ),
        (_LOGITS, _TARGET.tolist(), {}, TypeError, "target must be a torch.Tensor, got list"),
        (_LOGITS.long(), _TARGET, {}, TypeError, "logits must have a floating-point dtype"),
        (_LOGITS.tolist(), _TARGET, {}, TypeError, "logits must be a torch.Tensor, got list"),
        (
            torch.tensor(1.0),
            torch.tensor(0),
            {},
            ValueError,
            r"logits must have shape \(\.\.\., V\)",
        ),
        (
            _LOGITS,
            _with(_TARGET, (1, 2), 5),
            {},
            ValueError,
            r"target holds ids outside \[0, 5\): 5 at index \(1, 2\), 1 of 12 in all",
        ),
        (
            _LOGITS,
            _with(_TARGET, (2, 0), -1),
            {},
            ValueError,
            r"target holds ids outside \[0, 5\): -1 at index \(2, 0\)",
        ),
        (
            _LOGITS,
            _with(_with(_TARGET, (0, 0), -100), (0, 3), 7),
            {"ignore_index": -100},
            ValueError,
            r"outside \[0, 5\) \(or ignore_index=-100\): 7 at index \(0, 3\), 1 of 12",
        ),
        (
            _LOGITS,
            _TARGET,
            {"ignore_index": 0.0},
            TypeError,
            "ignore_index must be an int, got float",
        ),
        (_LOGITS, _TARGET, {"smoothing": "0.1"}, TypeError, "smoothing must be a number, got str"),
    ],
)
def test_label_smoothing_refuses_bad_targets(
    logits, target, kwargs: dict, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        label_smoothed_cross_entropy(logits, target, **kwargs)


@pytest.mark.parametrize("ignore_index", [-100, 5, 0])
def test_an_ignored_id_may_lie_outside_the_vocabulary(ignore_index: int) -> None:
    target = _with(_TARGET, (1, 1), ignore_index)
    ours = label_smoothed_cross_entropy(_LOGITS, target, 0.1, ignore_index=ignore_index)
    theirs = F.cross_entropy(
        _LOGITS.reshape(-1, 5), target.reshape(-1), label_smoothing=0.1, ignore_index=ignore_index
    )
    torch.testing.assert_close(ours, theirs)


def test_integer_targets_of_any_width_are_ids() -> None:
    ours = label_smoothed_cross_entropy(_LOGITS, _TARGET.int(), 0.1)
    torch.testing.assert_close(ours, label_smoothed_cross_entropy(_LOGITS, _TARGET, 0.1))


def test_warmup_inverse_sqrt_by_hand() -> None:
    d, w = 512, 4000
    assert warmup_inverse_sqrt(1, d, w) == pytest.approx(1 / math.sqrt(512) / 4000**1.5)
    assert warmup_inverse_sqrt(2000, d, w) == pytest.approx(2000 / math.sqrt(512) / 4000**1.5)
    assert warmup_inverse_sqrt(4000, d, w) == pytest.approx(1 / math.sqrt(512 * 4000))
    assert warmup_inverse_sqrt(16000, d, w) == pytest.approx(1 / math.sqrt(512 * 16000))
    # The peak of the paper's schedule: about 7.0e-4.
    assert warmup_inverse_sqrt(4000, d, w) == pytest.approx(6.988e-4, rel=1e-3)
    # d=16, w=4: step 1 → 1/4 · 1/8; step 4 → 1/4 · 1/2; step 16 → 1/4 · 1/4.
    assert warmup_inverse_sqrt(1, 16, 4) == pytest.approx(1 / 32)
    assert warmup_inverse_sqrt(4, 16, 4) == pytest.approx(1 / 8)
    assert warmup_inverse_sqrt(16, 16, 4) == pytest.approx(1 / 16)


@pytest.mark.parametrize(("d_model", "warmup"), [(512, 4000), (64, 10), (128, 1), (8, 37)])
def test_warmup_rises_linearly_peaks_at_warmup_then_decays(d_model: int, warmup: int) -> None:
    steps = range(1, 3 * warmup + 10)
    values = [warmup_inverse_sqrt(s, d_model, warmup) for s in steps]
    peak = max(range(len(values)), key=values.__getitem__) + 1
    assert peak == warmup
    assert values[warmup - 1] == pytest.approx((d_model * warmup) ** -0.5)
    rising, falling = values[:warmup], values[warmup - 1 :]
    assert all(a < b for a, b in itertools.pairwise(rising))
    assert all(a > b for a, b in itertools.pairwise(falling))
    if warmup > 1:  # linear: equal increments
        assert values[1] - values[0] == pytest.approx(values[0])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 512, 4000), "step must be >= 1, got 0"),
        ((1, 512, 0), "warmup_steps must be >= 1, got 0"),
        ((1, 0, 10), "d_model must be a positive int, got 0"),
    ],
)
def test_warmup_bad_arguments(args: tuple[int, int, int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        warmup_inverse_sqrt(*args)
    with pytest.raises(TypeError, match="step must be an int, got float"):
        warmup_inverse_sqrt(1.0, 512, 4000)  # type: ignore[arg-type]


@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_warmup_scheduler_drives_the_learning_rate(factor: float) -> None:
    parameter = nn.Parameter(torch.zeros(3))
    optimizer = torch.optim.SGD([parameter], lr=1.0)
    scheduler = warmup_scheduler(optimizer, d_model=64, warmup_steps=5, factor=factor)
    seen = []
    for _ in range(12):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    expected = [factor * warmup_inverse_sqrt(s, 64, 5) for s in range(1, 13)]
    assert seen == pytest.approx(expected)
    assert max(seen) == seen[4]  # step 5 = warmup_steps


class _Regression(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _task(model: nn.Module, scale: float = 1.0):
    """Fit y = Σ x on batches drawn from the generator fit passes in."""

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        x = torch.randn(32, 4, generator=generator)
        return scale * F.mse_loss(model(x)[:, 0], x.sum(-1))

    return loss_on_batch


def _run(seed: int, steps: int = 15, **kwargs) -> tuple[TrainingHistory, _Regression]:
    torch.manual_seed(123)  # the initial weights
    model = _Regression()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    return fit(model, _task(model), steps, optimizer, seed=seed, **kwargs), model


def test_fit_is_reproducible_and_seeded() -> None:
    first, model_a = _run(seed=0)
    second, model_b = _run(seed=0)
    assert first.losses == second.losses
    for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(a, b)
    other, _ = _run(seed=1)
    assert other.losses != first.losses  # other batches and other dropout
    assert len(first.losses) == len(first.learning_rates) == 15
    assert first.seconds > 0
    assert first.losses[-1] < first.losses[0]  # it learns


def test_fit_returns_the_model_in_eval_mode_and_trains_in_train_mode() -> None:
    torch.manual_seed(0)
    model = _Regression().eval()
    modes = []
    task = _task(model)

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        modes.append(model.training)
        return task(generator)

    fit(model, loss_on_batch, 3, torch.optim.SGD(model.parameters(), lr=0.01))
    assert modes == [True, True, True]
    assert not model.training


def test_fit_leaves_the_model_in_eval_mode_after_an_error() -> None:
    model = _Regression()

    def failing(generator: torch.Generator) -> torch.Tensor:
        raise RuntimeError("bad batch")

    with pytest.raises(RuntimeError, match="bad batch"):
        fit(model, failing, 2, torch.optim.SGD(model.parameters(), lr=0.1))
    assert not model.training


@pytest.mark.parametrize("clip_norm", [0.5, 2.0])
def test_fit_clips_the_gradient_norm(clip_norm: float) -> None:
    torch.manual_seed(0)
    model = _Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    norms: list[float] = []

    def record(optimizer: torch.optim.Optimizer, args, kwargs) -> None:  # before each step
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]]
        norms.append(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])).item())

    optimizer.register_step_pre_hook(record)
    fit(model, _task(model, scale=1e6), 4, optimizer, clip_norm=clip_norm)  # a huge loss
    assert norms == pytest.approx([clip_norm] * 4, rel=1e-4)  # clipped down to the limit
    norms.clear()
    fit(model, _task(model, scale=1e6), 2, optimizer, clip_norm=None)
    assert min(norms) > 1e3  # not clipped


def test_fit_records_the_scheduled_learning_rates() -> None:
    torch.manual_seed(0)
    model = _Regression()
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0)
    scheduler = warmup_scheduler(optimizer, d_model=32, warmup_steps=4)
    history = fit(model, _task(model), 10, optimizer, scheduler=scheduler)
    expected = [warmup_inverse_sqrt(s, 32, 4) for s in range(1, 11)]
    assert history.learning_rates == pytest.approx(expected)
    constant, _ = _run(seed=0, steps=3)
    assert constant.learning_rates == [1e-2] * 3


def test_fit_with_a_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    history, _ = _run(seed=0, steps=3, progress=True)
    assert "training" in capsys.readouterr().err
    assert history.losses == _run(seed=0, steps=3)[0].losses  # the bar changes nothing


def test_training_history_defaults_are_independent() -> None:
    a, b = TrainingHistory(), TrainingHistory()
    a.losses.append(1.0)
    assert b.losses == [] and b.learning_rates == [] and b.seconds == 0.0


def _other_optimizer(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    return {"optimizer": torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)}


# Each case: the arguments that differ from a good call, the error, and what it must say.
BAD_FIT_ARGUMENTS = {
    "steps 0": (lambda m, o: {"steps": 0}, ValueError, "steps must be >= 1, got 0"),
    "steps -3": (lambda m, o: {"steps": -3}, ValueError, "steps must be >= 1, got -3"),
    "steps float": (lambda m, o: {"steps": 2.0}, TypeError, "steps must be an int, got float"),
    "model None": (
        lambda m, o: {"model": None},
        TypeError,
        "model must be an nn.Module, got NoneType",
    ),
    "loss_on_batch None": (
        lambda m, o: {"loss_on_batch": None},
        TypeError,
        "loss_on_batch must be a function, got NoneType",
    ),
    "optimizer None": (
        lambda m, o: {"optimizer": None},
        TypeError,
        "optimizer must be a torch.optim.Optimizer, got NoneType",
    ),
    "optimizer parameters": (
        lambda m, o: {"optimizer": m.parameters()},
        TypeError,
        "optimizer must be a torch.optim.Optimizer, got generator",
    ),
    "optimizer of another model": (
        _other_optimizer,
        ValueError,
        "optimizer holds 2 tensors and none of model's parameters",
    ),
    "scheduler str": (
        lambda m, o: {"scheduler": "warmup"},
        TypeError,
        "scheduler must be an LRScheduler or None, got str",
    ),
    "scheduler with a metric": (
        lambda m, o: {"scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(o)},
        TypeError,
        "scheduler must step without a metric; ReduceLROnPlateau needs one",
    ),
    "scheduler of another optimizer": (
        lambda m, o: {
            "scheduler": torch.optim.lr_scheduler.StepLR(
                torch.optim.SGD(m.parameters(), lr=0.1), step_size=2
            )
        },
        ValueError,
        "scheduler drives another optimizer than optimizer",
    ),
    "clip_norm 0": (
        lambda m, o: {"clip_norm": 0},
        ValueError,
        r"clip_norm must be positive and finite \(or None\), got 0",
    ),
    "clip_norm -1": (lambda m, o: {"clip_norm": -1.0}, ValueError, "clip_norm .* got -1.0"),
    "clip_norm nan": (lambda m, o: {"clip_norm": math.nan}, ValueError, "clip_norm .* got nan"),
    "clip_norm inf": (lambda m, o: {"clip_norm": math.inf}, ValueError, "clip_norm .* got inf"),
    "clip_norm str": (
        lambda m, o: {"clip_norm": "1"},
        TypeError,
        "clip_norm must be a number, got str",
    ),
    "clip_norm bool": (
        lambda m, o: {"clip_norm": True},
        TypeError,
        "clip_norm must be a number, got bool",
    ),
    "seed -1": (lambda m, o: {"seed": -1}, ValueError, "seed must be >= 0, got -1"),
    "seed float": (lambda m, o: {"seed": 1.5}, TypeError, "seed must be an int, got float"),
    "seed None": (lambda m, o: {"seed": None}, TypeError, "seed must be an int, got NoneType"),
    "progress str": (
        lambda m, o: {"progress": "yes"},
        TypeError,
        "progress must be a bool, got str",
    ),
    "history list": (
        lambda m, o: {"history": []},
        TypeError,
        "history must be a TrainingHistory, got list",
    ),
}


@pytest.mark.parametrize(
    ("change", "error", "match"), BAD_FIT_ARGUMENTS.values(), ids=list(BAD_FIT_ARGUMENTS)
)
def test_fit_refuses_bad_arguments_before_training(change, error: type, match: str) -> None:
    torch.manual_seed(0)
    model = _Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    arguments = {"model": model, "loss_on_batch": _task(model), "steps": 3, "optimizer": optimizer}
    arguments.update(change(model, optimizer))
    before = [p.detach().clone() for p in model.parameters()]
    rng = torch.get_rng_state()
    with pytest.raises(error, match=match):
        fit(**arguments)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert torch.equal(torch.get_rng_state(), rng)


def _returning(model: nn.Module, make_loss):
    """A loss_on_batch whose loss is ``make_loss(per_example_loss)``."""

    def loss_on_batch(generator: torch.Generator) -> object:
        x = torch.randn(32, 4, generator=generator)
        return make_loss((model(x)[:, 0] - x.sum(-1)) ** 2)  # (32,)

    return loss_on_batch


@pytest.mark.parametrize(
    ("make_loss", "error", "match"),
    [
        (
            lambda per_example: per_example,  # forgot the mean
            ValueError,
            r"loss_on_batch must return a scalar loss \(shape \(\)\), got shape \(32,\)",
        ),
        (
            lambda per_example: per_example[None, :1].mean(0),  # shape (1,)
            ValueError,
            r"got shape \(1,\)",
        ),
        (
            lambda per_example: per_example.mean().item(),
            TypeError,
            "loss_on_batch must return a tensor, got float",
        ),
        (
            lambda per_example: per_example.mean().detach(),
            ValueError,
            "loss_on_batch returned a loss that does not require grad",
        ),
    ],
    ids=["per-example losses", "shape (1,)", "a float", "detached"],
)
def test_fit_refuses_a_loss_it_cannot_train_on(make_loss, error: type, match: str) -> None:
    torch.manual_seed(0)
    model = _Regression()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(error, match=match):
        fit(model, _returning(model, make_loss), 3, optimizer)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert not model.training


def _poisoned(task, at_call: int, value: float):
    """``task``, but the loss of call ``at_call`` becomes ``value`` (NaN or infinite)."""
    calls = 0

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        nonlocal calls
        calls += 1
        loss = task(generator)
        return loss * value if calls == at_call else loss

    return loss_on_batch


@pytest.mark.parametrize(("value", "shown"), [(math.nan, "nan"), (math.inf, "inf")])
@pytest.mark.parametrize("passed_history", [False, True])
def test_fit_stops_at_the_first_non_finite_loss(
    value: float, shown: str, passed_history: bool
) -> None:
    clean, clean_model = _run(seed=0, steps=3)
    torch.manual_seed(123)  # _run's initial weights
    model = _Regression()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = TrainingHistory() if passed_history else None
    rng = torch.get_rng_state()
    with pytest.raises(NonFiniteLossError, match=f"the loss of step 4 is {shown}") as caught:
        fit(model, _poisoned(_task(model), 4, value), 15, optimizer, history=history)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.step == 4 and str(error.loss) == shown
    assert error.history.losses == clean.losses  # the three steps before it
    assert error.history is history or not passed_history
    for a, b in zip(model.parameters(), clean_model.parameters(), strict=True):
        assert torch.equal(a, b)  # the bad step never reached the weights
    assert not model.training
    assert torch.equal(torch.get_rng_state(), rng)
    again = pickle.loads(pickle.dumps(error))
    assert (again.step, str(again.loss), again.history) == (4, shown, error.history)


def _trainer(with_scheduler: bool = True):
    """A model with dropout, its optimizer and (maybe) a warm-up schedule, built the same way."""
    torch.manual_seed(123)
    model = _Regression()
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0 if with_scheduler else 1e-2)
    scheduler = warmup_scheduler(optimizer, 32, 4, factor=0.5) if with_scheduler else None
    return model, optimizer, scheduler


def _interrupted(task, at_call: int):
    """``task``, interrupted in call ``at_call`` after drawing its batch and its dropout."""
    calls = 0

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        nonlocal calls
        calls += 1
        loss = task(generator)
        if calls == at_call:
            raise KeyboardInterrupt  # as "interrupt kernel" raises it, anywhere in the step
        return loss

    return loss_on_batch


@pytest.mark.parametrize("with_scheduler", [True, False])
@pytest.mark.parametrize("finished", [0, 1, 6])
def test_an_interrupted_fit_keeps_its_history_and_continues_as_if_never_stopped(
    finished: int, with_scheduler: bool
) -> None:
    model, optimizer, scheduler = _trainer(with_scheduler)
    whole = fit(model, _task(model), 10, optimizer, scheduler, seed=5)

    interrupted, optimizer_2, scheduler_2 = _trainer(with_scheduler)
    history = TrainingHistory()
    task = _interrupted(_task(interrupted), at_call=finished + 1)
    with pytest.raises(KeyboardInterrupt) as caught:  # raised on, not swallowed
        fit(interrupted, task, 10, optimizer_2, scheduler_2, seed=5, history=history)
    assert history.losses == whole.losses[:finished]
    assert history.learning_rates == whole.learning_rates[:finished]
    assert not interrupted.training
    if sys.version_info >= (3, 11):
        assert caught.value.__notes__ == [
            f"fit: interrupted after {finished} of 10 steps; `history` holds them"
        ]
    # The same call, the same history: the run goes on where it stopped.
    assert (
        fit(interrupted, _task(interrupted), 10, optimizer_2, scheduler_2, seed=5, history=history)
        is history
    )
    assert history == whole  # every loss and learning rate, exactly
    for a, b in zip(model.parameters(), interrupted.parameters(), strict=True):
        assert torch.equal(a, b)


def test_an_interrupt_says_how_to_keep_the_history() -> None:
    torch.manual_seed(0)
    model = _Regression()
    with pytest.raises(KeyboardInterrupt) as caught:
        fit(model, _interrupted(_task(model), 3), 5, torch.optim.SGD(model.parameters(), lr=0.1))
    if sys.version_info >= (3, 11):
        assert caught.value.__notes__ == [
            "fit: interrupted after 2 of 5 steps; pass history= to keep them"
        ]


def test_fit_in_pieces_is_fit_in_one_go() -> None:
    model, optimizer, scheduler = _trainer()
    whole = fit(model, _task(model), 12, optimizer, scheduler, seed=2)
    pieces, optimizer_2, scheduler_2 = _trainer()
    history = TrainingHistory()
    for steps in (3, 4, 12):  # steps counts the run's steps, those already taken included
        fit(pieces, _task(pieces), steps, optimizer_2, scheduler_2, seed=2, history=history)
        assert len(history.losses) == steps
    assert history == whole
    assert all(
        torch.equal(a, b) for a, b in zip(model.parameters(), pieces.parameters(), strict=True)
    )


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        ({"seed": 1}, "seed=1, but history's run started from seed=0"),
        ({"steps": 3}, "steps=3 counts the run's steps, and history holds 3"),
        ({"steps": 2}, "steps=2 counts the run's steps, and history holds 3"),
        ({"scheduler": "fresh"}, "scheduler has taken 0 steps, history 3: restore it too"),
        ({"history": "by hand"}, "history holds 3 steps but no random state to go on from"),
        ({"history": "uneven"}, "history holds 3 losses, 2 rates"),
    ],
)
def test_fit_refuses_a_history_it_cannot_continue(edit: dict, match: str) -> None:
    model, optimizer, scheduler = _trainer()
    history = fit(model, _task(model), 3, optimizer, scheduler, seed=0)
    arguments = {"seed": 0, "steps": 6, "scheduler": scheduler, "history": history}
    if edit.get("scheduler") == "fresh":
        edit = {"scheduler": warmup_scheduler(optimizer, 32, 4, factor=0.5)}
    if edit.get("history") == "by hand":
        edit = {"history": TrainingHistory(history.losses, history.learning_rates)}
    if edit.get("history") == "uneven":
        edit = {"history": dataclasses.replace(history, learning_rates=history.learning_rates[:2])}
    arguments.update(edit)
    with pytest.raises(ValueError, match=match):
        fit(model, _task(model), optimizer=optimizer, **arguments)
    assert len(history.losses) == 3


def test_fit_leaves_the_callers_random_state_alone() -> None:
    model, optimizer, scheduler = _trainer()
    torch.manual_seed(7)
    expected = torch.rand(5)  # what the caller draws next without fit in between
    torch.manual_seed(7)
    fit(model, _task(model), 4, optimizer, scheduler)
    assert torch.equal(torch.rand(5), expected)
    # Also when fit stops early, and when it continues a run.
    torch.manual_seed(7)
    history = TrainingHistory()
    with pytest.raises(KeyboardInterrupt):
        fit(model, _interrupted(_task(model), 2), 4, optimizer, history=history)
    fit(model, _task(model), 4, optimizer, history=history)
    assert torch.equal(torch.rand(5), expected)


def test_fit_draws_the_same_numbers_whatever_the_callers_state() -> None:
    runs = []
    for caller_seed in (1, 2):
        model, optimizer, scheduler = _trainer()
        torch.manual_seed(caller_seed)
        runs.append((fit(model, _task(model), 5, optimizer, scheduler, seed=3), model))
    (first, model_a), (second, model_b) = runs
    assert first == second
    assert all(
        torch.equal(a, b) for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True)
    )


def test_fit_is_the_loop_its_docstring_describes_to_the_last_bit() -> None:
    # The recipe the notebooks' stored numbers come from: torch's global generator and a
    # batch generator, both seeded with seed, then zero_grad, backward, clip, step, schedule.
    model, optimizer, scheduler = _trainer()
    history = fit(model, _task(model), 6, optimizer, scheduler, clip_norm=0.5, seed=4)
    by_hand, optimizer_2, scheduler_2 = _trainer()
    torch.manual_seed(4)
    generator = torch.Generator().manual_seed(4)
    losses = []
    by_hand.train()
    for _ in range(6):
        loss = _task(by_hand)(generator)
        optimizer_2.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(by_hand.parameters(), 0.5)
        optimizer_2.step()
        scheduler_2.step()
        losses.append(loss.item())
    assert history.losses == losses
    assert all(
        torch.equal(a, b) for a, b in zip(model.parameters(), by_hand.parameters(), strict=True)
    )
