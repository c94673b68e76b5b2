"""Rounding noise: make this machine round like another one, to find outputs that are not portable.

Float results of reductions, matrix products and transcendental functions differ in their
last bits between CPUs (x86 with or without AVX-512, ARM), BLAS libraries and thread
counts: each picks its own kernel and its own summation order. A stored notebook output
that prints such a result to the digit where it happens to sit at a rounding edge, or that
prints ``1.`` because a norm landed on exactly 1.0, passes on the machine that stored it
and fails on the next one.

:class:`RoundingNoise` is a ``TorchDispatchMode`` that moves every floating-point result
of those operations by a few units in the last place (ulps), all in one direction:

- an element-wise function (exp, tanh, …) moves by 2 ulps; a sum of K terms (a matrix
  product, a reduction, a softmax or LayerNorm row) by 2 + ⌊log₂ K⌋, since two summation
  orders of K terms differ by more than one rounding;
- the move depends only on the value and the operation, so equal values stay equal (two
  computations that agree on every machine still agree here);
- results that are whole numbers (0, 1, 3.0 …) stay exact, as they do on every machine
  (a sum of ones or a count is never rounded), and a value that moves past a whole number
  stops on it: a row sum of 0.99999994 may well be exactly 1 on another machine;
- both float32 and float64 results move, each by its own ulp.

Run a notebook once moving up and once moving down: an output that survives both does not
depend on where this machine's rounding happened to fall. Only torch operations are
covered: the course does no floating-point arithmetic in numpy beyond plotting.

The notebook kernels load it through the IPython start-up file next to this module, when
``ATTNLIB_ROUNDING_NOISE`` is ``up`` or ``down`` (``make portability`` sets both in turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

aten = torch.ops.aten

# How many terms one output element sums, from an operation's arguments: the more terms,
# the more two machines' summation orders can differ.
TermCount = Callable[[Sequence[Any]], int]


def _last_dim_of(position: int) -> TermCount:
    return lambda args: args[position].shape[-1]


def _dim_size(args: Sequence[Any]) -> int:
    return args[0].shape[args[1]]


def _reduced(args: Sequence[Any]) -> int:
    # A reduction over `dim` (or everything): the size of what one output element sums.
    tensor, dims = args[0], args[1] if len(args) > 1 else None
    if isinstance(dims, int):
        dims = [dims]
    if not dims:
        return tensor.numel()
    return math.prod(tensor.shape[d] for d in dims)


def _normalized(args: Sequence[Any]) -> int:
    return math.prod(args[1])


def _keys_and_width(args: Sequence[Any]) -> int:
    query, key = args[0], args[1]
    return query.shape[-1] * key.shape[-2]


def _one(args: Sequence[Any]) -> int:
    return 1


# Operations whose float results depend on the kernel, the summation order or the
# vectorised approximation a CPU uses, each with the number of terms behind one result.
# Exactly rounded IEEE operations (+, −, ×, ÷, sqrt), copies, comparisons, indexing,
# max/min and sorting give the same bits everywhere and are left alone.
INEXACT_OPS: dict[Any, TermCount] = {
    # matrix products
    aten.mm: _last_dim_of(0),
    aten.bmm: _last_dim_of(0),
    aten.mv: _last_dim_of(0),
    aten.dot: _last_dim_of(0),
    aten.vdot: _last_dim_of(0),
    aten.addmm: _last_dim_of(1),
    aten.baddbmm: _last_dim_of(1),
    aten.addbmm: _last_dim_of(1),
    aten.addmv: _last_dim_of(1),
    aten._scaled_dot_product_flash_attention_for_cpu: _keys_and_width,
    aten._scaled_dot_product_flash_attention_for_cpu_backward: _one,
    # reductions and normalisations
    aten.sum: _reduced,
    aten.nansum: _reduced,
    aten.mean: _reduced,
    aten.prod: _reduced,
    aten.var: _reduced,
    aten.std: _reduced,
    aten.var_mean: _reduced,
    aten.std_mean: _reduced,
    aten.logsumexp: _reduced,
    aten.linalg_vector_norm: lambda args: _reduced([args[0], *args[2:3]]),
    aten.norm: lambda args: _reduced([args[0], *args[2:3]]),
    aten.cumsum: _dim_size,
    aten._softmax: _dim_size,
    aten._log_softmax: _dim_size,
    aten._softmax_backward_data: lambda args: args[0].shape[args[2]],
    aten._log_softmax_backward_data: lambda args: args[0].shape[args[2]],
    aten.native_layer_norm: _normalized,
    aten.native_layer_norm_backward: lambda args: math.prod(args[2]),
    aten.nll_loss_forward: lambda args: args[0].shape[0] if args[0].dim() > 1 else 1,
    aten.nll_loss_backward: _one,
    # transcendental functions (vectorised approximations differ between instruction sets)
    **dict.fromkeys(
        (
            aten.exp,
            aten.exp2,
            aten.expm1,
            aten.log,
            aten.log2,
            aten.log10,
            aten.log1p,
            aten.tanh,
            aten.tanh_backward,
            aten.sigmoid,
            aten.sigmoid_backward,
            aten.erf,
            aten.erfc,
            aten.gelu,
            aten.gelu_backward,
            aten.silu,
            aten.sin,
            aten.cos,
            aten.tan,
            aten.atan,
            aten.atan2,
            aten.pow,
            aten.rsqrt,
            aten.softplus,
        ),
        _one,
    ),
}

_FLOATS = (torch.float32, torch.float64)


def ulps_for(terms: int) -> int:
    """How far a result that sums ``terms`` terms moves, in ulps: 2 + ⌊log₂ terms⌋."""
    return 2 + max(terms, 1).bit_length() - 1


# A float's bits read as an integer, the bits of its exponent, and its mantissa's width.
_LAYOUT = {
    torch.float32: (torch.int32, 0x7F80_0000, 23),
    torch.float64: (torch.int64, 0x7FF0_0000_0000_0000, 52),
}


def move_by_ulps(x: torch.Tensor, direction: int, steps: int = 2) -> torch.Tensor:
    """``x`` moved by ``steps`` ulps towards ``direction`` (+1 up, −1 down).

    Equal inputs give equal outputs. Whole numbers and non-finite values are kept; a
    value that would move past a whole number stops on it.

    Shapes:
        x: any float32 or float64 tensor; returns the same shape and dtype.
    """
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if x.dtype not in _FLOATS:
        return x
    return _move_into(torch.empty_like(x), x, direction, steps)


def _move_into(out: torch.Tensor, x: torch.Tensor, direction: int, steps: int) -> torch.Tensor:
    """:func:`move_by_ulps` of ``x``, written into ``out`` (which may be ``x`` itself).

    An ulp of ``x = ±m·2**e`` (``1 <= m < 2``) is ``2**(e - mantissa bits)``, and ``2**e`` is
    ``x`` with its sign and mantissa bits cleared: one bitwise AND, then one addition of an
    exact multiple of it (rounded only where it crosses a power of two, to the nearest
    float). This runs on every inexact result of every operation, so it makes as few passes
    over the tensor as it can: ``torch.nextafter`` alone costs more than all of them. Zero
    and subnormal numbers have no exponent bits and stay where they are.
    """
    integers, exponent_bits, mantissa_bits = _LAYOUT[x.dtype]
    finite = bool(torch.isfinite(x.sum()))  # rare non-finite values: checked cheaply first
    # The one new tensor: every later step writes into it or into `out`, as a large new
    # tensor costs more to allocate than a pass over it.
    power_of_two = torch.bitwise_and(x.view(integers), exponent_bits).view(x.dtype)
    step = direction * steps * 2.0**-mantissa_bits
    moved = torch.add(x, power_of_two, alpha=step, out=power_of_two)
    if not finite:  # keep ±inf (whose ulp is infinite) and NaN
        moved = torch.where(torch.isfinite(x), moved, x)
    # Stop at the next whole number, which also keeps whole numbers where they are. `x` is
    # read for the last time here, so `out` may be `x` itself.
    if direction > 0:
        return torch.minimum(moved, torch.ceil(x, out=out), out=out)
    return torch.maximum(moved, torch.floor(x, out=out), out=out)


class RoundingNoise(TorchDispatchMode):
    """Within this mode, every inexact float result moves by a few ulps in one direction.

    ``direction`` is ``+1`` (towards +∞) or ``-1`` (towards −∞). Results written into
    ``out=`` tensors move in place, so every way of calling an operation is covered.
    ``moved_results`` counts the tensors moved (proof that the mode is active).
    """

    def __init__(self, direction: int, ops: dict[Any, TermCount] | None = None) -> None:
        super().__init__()
        if direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {direction}")
        self.direction = direction
        self.ops = INEXACT_OPS if ops is None else ops
        self.moved_results = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        result = func(*args, **(kwargs or {}))
        terms_of = self.ops.get(func.overloadpacket)
        if terms_of is None:
            return result
        steps = ulps_for(terms_of(args))

        def move(value: Any) -> Any:
            # A meta tensor (shapes only, as when a notebook counts a model's parameters)
            # has no values to move.
            if isinstance(value, torch.Tensor) and value.dtype in _FLOATS and not value.is_meta:
                self.moved_results += 1
                _move_into(value, value, self.direction, steps)
            return value

        return tree_map(move, result)


def direction_from_name(name: str) -> int:
    """``"up"`` → +1, ``"down"`` → −1."""
    directions = {"up": 1, "down": -1}
    if name not in directions:
        raise ValueError(f"rounding noise direction must be 'up' or 'down', got {name!r}")
    return directions[name]
