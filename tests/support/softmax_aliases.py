"""Notebook 02's three exercises answered through another name for the implementation each
asks for: torch's other spellings and operators, a kernel reached through another function,
TorchScript, scipy, attnlib's other helpers, and autograd's other routes.

Each entry: (exercise id, what the answer does, the answer, the label its refusal names).
``tests/checks/test_checks_aliases.py`` checks them in this process,
``tests/checks/test_grading_stand_ins.py`` across the grading sandbox's wall, where only the
sandbox's watch sees the call.
"""

from __future__ import annotations

import warnings
from typing import Any

import scipy.special
import torch
import torch.nn.functional as F
from torch.autograd import forward_ad

import attnlib
from attnlib.softmax import softmax_unchecked


def _softmax_along(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.softmax(x, dim=dim)


with warnings.catch_warnings():  # torch.jit.script is deprecated; a learner may still use it
    warnings.simplefilter("ignore", DeprecationWarning)
    _scripted_softmax = torch.jit.script(_softmax_along)


def _softmax_by_cross_entropy(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    nll = F.cross_entropy(
        rows.repeat_interleave(n, dim=0), torch.arange(n).repeat(rows.shape[0]), reduction="none"
    )
    return torch.exp(-nll).reshape(x.shape)


def _softmax_backward_by_dual_numbers(p: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    with forward_ad.dual_level():
        z = forward_ad.make_dual(p.log(), g)
        e = torch.exp(z - z.amax(dim=-1, keepdim=True))
        return forward_ad.unpack_dual(e / e.sum(dim=-1, keepdim=True)).tangent


ALIASES_02: list[tuple[str, str, Any, str]] = [
    ("ex1_softmax_from_formula", "torch.special.softmax",
     lambda x: torch.special.softmax(x, -1), "torch.special.softmax"),
    ("ex1_softmax_from_formula", "torch.ops.aten._softmax.default",
     lambda x: torch.ops.aten._softmax.default(x, -1, False), "torch's softmax"),
    ("ex1_softmax_from_formula", "scipy.special.softmax",
     lambda x: torch.from_numpy(scipy.special.softmax(x.numpy(), -1)), "scipy.special.softmax"),
    ("ex1_softmax_from_formula", "attnlib.online_softmax",
     lambda x: attnlib.online_softmax(x, max(x.shape[-1], 1)), "attnlib.online_softmax"),
    ("ex1_softmax_from_formula", "attnlib's softmax_unchecked",
     lambda x: softmax_unchecked(x), "attnlib.softmax.softmax_unchecked"),
    ("ex1_softmax_from_formula", "F.cross_entropy", _softmax_by_cross_entropy,
     "torch's log_softmax (aten._log_softmax)"),
    ("ex2_stable_softmax", "torch.special.softmax",
     lambda x, dim=-1: torch.special.softmax(x, dim), "torch.special.softmax"),
    ("ex2_stable_softmax", "torch._safe_softmax",
     lambda x, dim=-1: torch._safe_softmax(x, dim), "torch._safe_softmax"),
    ("ex2_stable_softmax", "torch.special.logsumexp",
     lambda x, dim=-1: (x - torch.special.logsumexp(x, dim, keepdim=True)).exp(),
     "torch.special.logsumexp"),
    ("ex2_stable_softmax", "torch.logcumsumexp",
     lambda x, dim=-1: torch.exp(x - x.logcumsumexp(dim).narrow(dim, x.shape[dim] - 1, 1)),
     "torch.logcumsumexp"),
    ("ex2_stable_softmax", "scipy.special.log_softmax",
     lambda x, dim=-1: torch.from_numpy(scipy.special.log_softmax(x.numpy(), dim)).exp(),
     "scipy.special.log_softmax"),
    ("ex2_stable_softmax", "TorchScript", lambda x, dim=-1: _scripted_softmax(x, dim),
     "torch's softmax (aten._softmax)"),
    ("ex2_stable_softmax", "attnlib's softmax_unchecked",
     lambda x, dim=-1: softmax_unchecked(x, dim), "attnlib.softmax.softmax_unchecked"),
    ("ex3_softmax_backward", "torch.ops.aten._softmax_backward_data.default",
     lambda p, g: torch.ops.aten._softmax_backward_data.default(g, p, -1, p.dtype),
     "torch's softmax backward"),
    ("ex3_softmax_backward", "log_softmax's backward of g·p",
     lambda p, g: torch._log_softmax_backward_data(g * p, p.log(), -1, p.dtype),
     "torch's log_softmax backward"),
    ("ex3_softmax_backward", "torch.func.jvp (J is symmetric)",
     lambda p, g: torch.func.jvp(lambda z: z.exp() / z.exp().sum(-1, keepdim=True),
                                 (p.log(),), (g,))[1],
     "torch.func.jvp"),
    ("ex3_softmax_backward", "forward-mode autograd", _softmax_backward_by_dual_numbers,
     "torch.autograd.forward_ad.make_dual"),
]  # fmt: skip
