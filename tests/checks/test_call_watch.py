"""The call watch (``attnlib.checks._calls``): every spelling of a forbidden implementation is
seen and named as the learner wrote it, allowed work is not, the profiler and torch's dispatch
modes are given back as they were, and a list of forbidden calls survives its trip to the
grading sandbox as plain data.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.special
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import attnlib
import attnlib.checks
from attnlib.attention import attend
from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._implementations import (
    ATTENTION,
    AUTOGRAD,
    CROSS_ENTROPY,
    LAYER_NORM,
    LOG_SOFTMAX,
    LOGSUMEXP,
    NLL_LOSS,
    SOFTMAX,
    SOFTMAX_GRADIENT,
)
from attnlib.softmax import softmax_unchecked

Tensor = torch.Tensor
SOFTMAXES = SOFTMAX | LOG_SOFTMAX | LOGSUMEXP
X = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


def _seen(forbidden: Forbidden, fn: Callable[[], object]) -> list[str]:
    with CallWatch(forbidden) as watch:
        fn()
    return watch.seen


def _softmax_along_rows(x: Tensor) -> Tensor:
    return torch.softmax(x, dim=-1)


def _scripted_softmax(x: Tensor) -> Tensor:
    with warnings.catch_warnings():  # torch.jit.script is deprecated; a learner may still use it
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(_softmax_along_rows)(x)


# Each spelling, with the one name a report gives it: what the learner typed where the watch
# can tell, else the ATen operator that ran.
SOFTMAX_SPELLINGS: dict[str, tuple[Callable[[], object], str]] = {
    "torch.softmax": (lambda: torch.softmax(X, -1), "torch's softmax"),
    "Tensor.softmax": (lambda: X.softmax(-1), "torch's softmax"),
    "Tensor.softmax, unbound": (lambda: torch.Tensor.softmax(X, -1), "torch's softmax"),
    "F.softmax": (lambda: F.softmax(X, dim=-1), "torch's softmax"),
    "nn.Softmax": (lambda: nn.Softmax(dim=-1)(X), "torch's softmax"),
    "F.softmin of -x": (lambda: F.softmin(-X, dim=-1), "torch's softmax"),
    "torch.special.softmax": (lambda: torch.special.softmax(X, -1), "torch.special.softmax"),
    "torch._softmax": (lambda: torch._softmax(X, -1, False), "torch's softmax"),
    "torch.ops.aten._softmax": (lambda: torch.ops.aten._softmax(X, -1, False), "torch's softmax"),
    "torch.ops.aten._softmax.default": (
        lambda: torch.ops.aten._softmax.default(X, -1, False),
        "torch's softmax",
    ),
    "torch.ops.aten.softmax.int": (lambda: torch.ops.aten.softmax.int(X, -1), "torch's softmax"),
    "torch._safe_softmax": (lambda: torch._safe_softmax(X, -1), "torch._safe_softmax"),
    "torch._masked_softmax": (
        lambda: torch._masked_softmax(X, torch.zeros_like(X, dtype=torch.bool)),
        "torch._masked_softmax",
    ),
    "torch.jit.script": (
        lambda: _scripted_softmax(X),
        "torch's softmax (aten._softmax)",
    ),
    "log_softmax(x).exp()": (lambda: X.log_softmax(-1).exp(), "torch's log_softmax"),
    "torch.special.log_softmax": (
        lambda: torch.special.log_softmax(X, -1).exp(),
        "torch.special.log_softmax",
    ),
    "torch.ops.aten._log_softmax.default": (
        lambda: torch.ops.aten._log_softmax.default(X, -1, False).exp(),
        "torch's log_softmax",
    ),
    "exp(-F.cross_entropy) of every class": (
        lambda: torch.exp(-F.cross_entropy(X.repeat_interleave(5, 0), torch.arange(5).repeat(3))),
        "torch's log_softmax (aten._log_softmax)",
    ),
    "torch.special.logsumexp": (
        lambda: (X - torch.special.logsumexp(X, -1, keepdim=True)).exp(),
        "torch.special.logsumexp",
    ),
    "torch.logcumsumexp": (lambda: X.logcumsumexp(-1)[..., -1:], "torch.logcumsumexp"),
    "scipy.special.softmax": (
        lambda: scipy.special.softmax(X.numpy(), -1),
        "scipy.special.softmax",
    ),
    "scipy.special.log_softmax": (
        lambda: scipy.special.log_softmax(X.numpy(), -1),
        "scipy.special.log_softmax",
    ),
    "scipy.special.logsumexp": (
        lambda: scipy.special.logsumexp(X.numpy(), -1),
        "scipy.special.logsumexp",
    ),
    "attnlib.softmax": (lambda: attnlib.softmax(X), "attnlib.softmax"),
    "attnlib.softmax.softmax_unchecked": (
        lambda: softmax_unchecked(X),
        "attnlib.softmax.softmax_unchecked",
    ),
    "attnlib.online_softmax": (lambda: attnlib.online_softmax(X, 2), "attnlib.online_softmax"),
    "attnlib.next_token_probs": (
        lambda: attnlib.next_token_probs(X, temperature=1.0),
        "attnlib.next_token_probs",
    ),
    "attnlib.sampling._next_token_probs": (
        lambda: importlib.import_module("attnlib.sampling")._next_token_probs(X, 1.0),
        "attnlib.next_token_probs",
    ),
}


@pytest.mark.parametrize("spelling", SOFTMAX_SPELLINGS)
def test_every_spelling_of_a_softmax_is_seen_once_by_its_name(spelling: str) -> None:
    fn, label = SOFTMAX_SPELLINGS[spelling]
    assert _seen(SOFTMAX | LOG_SOFTMAX | LOGSUMEXP, fn) == [label]


def test_a_distribution_normalises_its_logits_with_logsumexp_before_its_softmax() -> None:
    seen = _seen(SOFTMAXES, lambda: torch.distributions.Categorical(logits=X).probs)
    assert seen == ["torch.logsumexp", "torch's softmax"]


def _leaf() -> Tensor:
    return X.clone().requires_grad_()


def _dual() -> object:
    with torch.autograd.forward_ad.dual_level():
        return torch.autograd.forward_ad.make_dual(X, X)


def _engine() -> object:
    x = _leaf()
    y = (x**2).sum()
    engine = torch.autograd.Variable._execution_engine
    return engine.run_backward((y,), (torch.ones_like(y),), False, False, (x,), False, False)


GRADIENT_SPELLINGS: dict[str, tuple[Callable[[], object], str]] = {
    "_softmax_backward_data": (
        lambda: torch._softmax_backward_data(X, X.softmax(-1).detach(), -1, X.dtype),
        "torch's softmax backward",
    ),
    "torch.ops.aten._softmax_backward_data.default": (
        lambda: torch.ops.aten._softmax_backward_data.default(X, X, -1, X.dtype),
        "torch's softmax backward",
    ),
    "torch.ops.aten._log_softmax_backward_data.default": (
        lambda: torch.ops.aten._log_softmax_backward_data.default(X, X, -1, X.dtype),
        "torch's log_softmax backward",
    ),
    "grad_fn of a softmax": (
        lambda: torch.softmax(_leaf(), -1).grad_fn(X),
        "torch's softmax backward (aten._softmax_backward_data)",
    ),
    "Tensor.backward": (lambda: (_leaf().exp() * X).sum().backward(), "Tensor.backward"),
    "torch.autograd.grad": (
        lambda: torch.autograd.grad((x := _leaf()).exp().sum(), x),
        "torch.autograd.grad",
    ),
    "torch.func.vjp": (lambda: torch.func.vjp(torch.exp, X), "torch.func.vjp"),
    "torch.func.jvp": (lambda: torch.func.jvp(torch.exp, (X,), (X,)), "torch.func.jvp"),
    "forward-mode make_dual": (_dual, "torch.autograd.forward_ad.make_dual"),
    "the engine itself": (_engine, "torch's autograd engine (backward)"),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's forward mode warns of jit
@pytest.mark.parametrize("spelling", GRADIENT_SPELLINGS)
def test_every_route_to_a_gradient_is_seen_once_by_its_name(spelling: str) -> None:
    fn, label = GRADIENT_SPELLINGS[spelling]
    assert _seen(SOFTMAX_GRADIENT | AUTOGRAD, fn) == [label]


def _log_probabilities_picked(logits: Tensor, targets: Tensor) -> Tensor:
    return -F.log_softmax(logits, dim=-1).gather(-1, targets[:, None])[:, 0].mean()


# What an exercise lets the learner use is not seen, whatever operators it runs.
ALLOWED: dict[str, tuple[Forbidden, Callable[[], object]]] = {
    "the formula, under the softmax family": (
        SOFTMAXES,
        lambda: (e := (X - X.amax(-1, keepdim=True)).exp()) / e.sum(-1, keepdim=True),
    ),
    "vmap of the formula": (SOFTMAXES, lambda: torch.vmap(lambda r: r.exp() / r.exp().sum())(X)),
    "numpy's exp": (SOFTMAXES, lambda: (e := np.exp(X.numpy())) / e.sum(-1, keepdims=True)),
    "F.log_softmax and gather, under cross-entropy and nll": (
        CROSS_ENTROPY | NLL_LOSS,
        lambda: _log_probabilities_picked(X, torch.tensor([0, 1, 2])),
    ),
    "a mean and a variance, under layer norm": (
        LAYER_NORM,
        lambda: (X - X.mean(-1, keepdim=True)) / (X.var(-1, unbiased=False, keepdim=True) + 1e-5),
    ),
    "torch.softmax inside attention, under attention": (
        ATTENTION,
        lambda: torch.softmax(X @ X.T / 5**0.5, dim=-1) @ X,
    ),
    "a softmax's forward and its gradient by hand, under autograd": (
        SOFTMAX_GRADIENT | AUTOGRAD,
        lambda: (p := X.softmax(-1)) * (X - (p * X).sum(-1, keepdim=True)),
    ),
}


@pytest.mark.parametrize("work", ALLOWED)
def test_allowed_work_is_not_seen(work: str) -> None:
    forbidden, fn = ALLOWED[work]
    assert _seen(forbidden, fn) == []


def test_a_report_names_the_outermost_call_only() -> None:
    q = X[None]
    assert _seen(ATTENTION | SOFTMAX, lambda: attnlib.scaled_dot_product_attention(q, q, q)) == [
        "attnlib.scaled_dot_product_attention"
    ]
    assert _seen(ATTENTION | SOFTMAX, lambda: attend(q, q, q)) == ["attnlib.attention.attend"]
    two = _seen(SOFTMAX, lambda: (torch.special.softmax(X, -1), attnlib.softmax(X)))
    assert two == ["torch.special.softmax", "attnlib.softmax"]


def test_the_watch_keeps_a_running_profiler_and_gives_it_back() -> None:
    events: list[str] = []

    def profiler(frame: Any, event: str, arg: Any) -> None:
        events.append(event)

    sys.setprofile(profiler)
    try:
        with CallWatch(SOFTMAXES) as watch:
            torch.special.softmax(X, -1)
        after = sys.getprofile()
    finally:
        sys.setprofile(None)
    assert after is profiler and "c_call" in events
    assert watch.seen == ["torch.special.softmax"]


class _Recording(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _dispatch_stack() -> list[object]:
    depth = torch._C._len_torch_dispatch_stack()
    return [torch._C._get_dispatch_stack_at(i) for i in range(depth)]


def test_a_dispatch_mode_already_on_sees_the_operators_and_stays_on() -> None:
    with _Recording() as outer:
        before = _dispatch_stack()
        with CallWatch(SOFTMAXES) as watch:
            torch.softmax(X, -1)
        assert _dispatch_stack() == before
    assert "_softmax" in outer.names and watch.seen == ["torch's softmax"]
    assert _dispatch_stack() == []


def test_a_dispatch_mode_the_answer_leaves_on_is_taken_off_with_the_watch() -> None:
    with _Recording() as outer:
        with CallWatch(SOFTMAXES) as watch:
            _Recording().__enter__()  # never left
            torch.ops.aten._softmax.default(X, -1, False)
        assert _dispatch_stack() == [outer]
    assert watch.seen == ["torch's softmax"]


def test_a_watch_whose_mode_the_answer_took_off_leaves_the_others_alone() -> None:
    with _Recording() as outer:
        with CallWatch(SOFTMAXES):
            torch._C._pop_torch_dispatch_stack(None)  # the watch's own mode
        assert _dispatch_stack() == [outer]


def test_a_watch_without_operators_leaves_the_dispatch_modes_alone() -> None:
    with CallWatch(Forbidden(python={attnlib.softmax: "attnlib.softmax"})):
        assert _dispatch_stack() == []


def test_a_path_is_watched_once_its_module_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"call_watch_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("def helper(x):\n    return x + 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    forbidden = Forbidden(paths={f"{name}:helper": "the probe's helper"})

    def imports_it_itself() -> None:
        importlib.import_module(name).helper(1)

    assert name not in sys.modules
    assert _seen(forbidden, imports_it_itself) == ["the probe's helper"]  # imported in the call
    assert _seen(forbidden, imports_it_itself) == ["the probe's helper"]  # imported before
    monkeypatch.delitem(sys.modules, name)


def test_a_path_whose_module_is_not_installed_is_skipped() -> None:
    sent = {
        "python": {"no_such_library_xyz.inner:softmax": "its softmax", "attnlib:softmax": "a"},
        "paths": {"no_such_library_xyz:softmax": "its other softmax"},
    }
    forbidden = Forbidden.from_paths(sent)
    assert forbidden.python == {attnlib.softmax: "a"}
    assert forbidden.paths == sent["paths"]
    assert _seen(forbidden, lambda: attnlib.softmax(X)) == ["a"]


def test_a_path_that_names_no_function_is_an_error() -> None:
    with pytest.raises(TypeError, match="names neither a function nor a class"):
        Forbidden.from_paths({"python": {"attnlib:__version__": "x"}})


def _every_list_of_the_checkers() -> dict[str, Forbidden]:
    found = {}
    for module in pkgutil.walk_packages(attnlib.checks.__path__, "attnlib.checks."):
        for name, value in vars(importlib.import_module(module.name)).items():
            if isinstance(value, Forbidden) and value:
                found[f"{module.name}.{name}"] = value
    return found


LISTS = _every_list_of_the_checkers()


@pytest.mark.parametrize("name", sorted(LISTS))
def test_a_list_comes_back_whole_from_its_trip_as_plain_data(name: str) -> None:
    forbidden = LISTS[name]
    sent = json.loads(json.dumps(forbidden.by_path()))
    back = Forbidden.from_paths(sent)
    assert back == forbidden  # the same functions, names, operators and paths
    assert back.labels() == forbidden.labels()
    assert set(back.codes()) == set(forbidden.codes())


def test_the_labels_are_every_kind_of_entry() -> None:
    mixed = Forbidden(
        python={attnlib.softmax: "a"},
        torch={"softmax": "b"},
        ops={"_softmax": "c"},
        paths={"m:f": "d"},
    )
    assert mixed.labels() == {"a", "b", "c", "d"}
    assert (Forbidden(ops={"_softmax": "c"}) | Forbidden(paths={"m:f": "d"})).labels() == {"c", "d"}
