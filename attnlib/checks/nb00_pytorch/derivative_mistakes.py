"""Notebook 00, Exercise 5: the mistakes learners make on the derivative at many points (the
checker is :mod:`attnlib.checks.nb00_pytorch.derivative`), each written as a learner would write
it."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor
Function = Callable[[Tensor], Tensor]


def _copy(x: Tensor) -> Tensor:
    return x.detach().clone().requires_grad_(True)


def _summed(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).sum().backward()
    return x.grad


def _non_scalar_backward(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).backward()
    return x.grad


def _mean(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).mean().backward()
    return x.grad


def _no_requires_grad(f: Function, x: Tensor) -> Tensor:
    x = x.detach().clone()
    f(x).sum().backward()
    return x.grad


def _twice(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).sum().backward()
    f(x).sum().backward()
    return x.grad


def _grad_of_the_original(f: Function, x: Tensor) -> Tensor | None:
    f(_copy(x)).sum().backward()
    return x.grad


def _autograd_tuple(f: Function, x: Tensor) -> tuple[Tensor, ...]:
    x = _copy(x)
    return torch.autograd.grad(f(x).sum(), x)


def _changes_x(f: Function, x: Tensor) -> Tensor:
    x.requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def _under_no_grad(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    with torch.no_grad():
        y = f(x)
    y.sum().backward()
    return x.grad


def _in_float32(f: Function, x: Tensor) -> Tensor:
    x = x.detach().float().requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def _grad_of_the_output(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    y = f(x)
    y.retain_grad()  # as torch's warning about a non-leaf .grad suggests
    y.sum().backward()
    return y.grad


def _the_copy(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).sum().backward()
    return x


def _loop_over_first_dimension(f: Function, x: Tensor) -> Tensor:
    slopes = []
    for i in range(len(x)):
        xi = x[i].detach().clone().requires_grad_(True)
        f(xi).backward()
        slopes.append(xi.grad)
    return torch.stack(slopes)


def _finite_difference(f: Function, x: Tensor) -> Tensor:
    h = 1e-6
    with torch.no_grad():
        return (f(x + h) - f(x)) / h


MISTAKES = (
    Mistake(
        "called backward() on f(x) itself, which holds many numbers",
        "backward() starts from one number (a loss): for a tensor of many it does not know how "
        "to weigh them and refuses. Make one number whose gradient is the list you want.",
        _non_scalar_backward,
    ),
    Mistake(
        "took the mean of f(x) before backward()",
        "the mean divides every term by the number of entries n, and so every derivative: "
        "the gradient of the mean is f'(x_i) / n.",
        _mean,
    ),
    Mistake(
        "did not ask for gradients before calling f",
        "autograd records only operations on tensors that require gradients, and only from "
        "then on: without it, backward() finds nothing to differentiate.",
        _no_requires_grad,
    ),
    Mistake(
        "returned f(x), not its derivative",
        "the values of f are not its slopes: backward() stores the derivatives in the .grad of "
        "the tensor you differentiate by.",
        lambda f, x: f(x),
    ),
    Mistake(
        "ran backward() twice, so the gradients added up",
        "each backward() adds to .grad rather than replacing it (section 4's second "
        "prediction): the result is twice the derivative.",
        _twice,
    ),
    Mistake(
        "returned a .grad that backward() never filled (it is None)",
        "backward() fills the .grad of the tensor that required gradients and went through f, "
        "the copy; any other tensor's .grad, the x you were given or f(x) itself, stays None.",
        _grad_of_the_original,
    ),
    Mistake(
        "returned the tuple that torch.autograd.grad gives",
        "torch.autograd.grad returns one gradient per input, in a tuple, even for a single "
        "input: the answer is the tensor inside it.",
        _autograd_tuple,
    ),
    Mistake(
        "made the x you were given require gradients, instead of a copy",
        "the caller's tensor comes back changed: it now requires gradients and holds a .grad, "
        "so every later operation on it is recorded and a later backward() adds to that .grad.",
        _changes_x,
    ),
    Mistake(
        "estimated the slopes with a finite difference",
        "(f(x + h) − f(x)) / h is only close to f'(x), off by about h·f''(x)/2 plus rounding "
        "error; autograd gives the derivative itself, exact to the last digits.",
        _finite_difference,
    ),
    Mistake(
        "called f under torch.no_grad(), so nothing was recorded",
        "no_grad switches autograd's recording off for everything inside it, even for a tensor "
        "that requires gradients: f(x) comes out with no history, and backward() finds nothing "
        "to differentiate.",
        _under_no_grad,
    ),
    Mistake(
        "turned x into float32 (or a smaller float) before differentiating",
        "float32 keeps about 7 significant digits where x's float64 keeps 16: every derivative "
        "comes out rounded, and converting the result back cannot restore the lost digits.",
        _in_float32,
    ),
    Mistake(
        "returned the whole Jacobian, every output against every input",
        "for n entries the Jacobian is an n × n table (for a (2, 3) x, (2, 3, 2, 3)) in which "
        "only the entries of an output against its own input are not 0: the derivatives asked "
        "for, one per entry, in the shape of x.",
        lambda f, x: torch.autograd.functional.jacobian(f, x),
    ),
    Mistake(
        "took the Jacobian's diagonal, which holds the derivatives only when x is a vector",
        "for a vector x the Jacobian is n × n and its diagonal is the list of f'(x_i); for a "
        "(2, 3) x it is (2, 3, 2, 3), and a diagonal of two of its dimensions is something else.",
        lambda f, x: torch.autograd.functional.jacobian(f, x).diagonal(),
    ),
    Mistake(
        "returned the .grad of f(x), the output, which is all ones",
        "backward() of the sum gives every entry of f(x) a gradient of 1, whatever f is: the "
        "derivatives of f are stored in the .grad of the input copy that went through f.",
        _grad_of_the_output,
    ),
    Mistake(
        "returned the copy of x, not its .grad",
        "the copy still holds the points x_i themselves; backward() puts the derivatives at "
        "those points in the copy's .grad.",
        _the_copy,
    ),
    Mistake(
        "looped over x[i], which are single entries only when x is a vector",
        "for a matrix, x[i] is a whole row and f of it holds many numbers, which backward() "
        "refuses; x may have any shape, and one backward() from one number built from all of "
        "f(x) gives every derivative at once.",
        _loop_over_first_dimension,
    ),
)
NO_REQUIRES_GRAD, CHANGES_X, FINITE_DIFFERENCE = MISTAKES[2], MISTAKES[7], MISTAKES[8]
UNDER_NO_GRAD, IN_FLOAT32 = MISTAKES[9], MISTAKES[10]
