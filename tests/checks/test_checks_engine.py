"""What the engine (``attnlib.checks.engine``, ``_crash``, ``_slips``) names for every checker: a
result in another dtype than its input's and a float32 constant that breaks float64 (the dtype
probe), a float where a whole number is asked for, a crash reported at the learner's own line
with its operation and shapes and named by the slip it shows, a ``.T`` on a batch named as what
the learner wrote, and the families of epsilons.
"""

from __future__ import annotations

import warnings

import torch

from attnlib.checks._crash import TRANSPOSE_BATCH, crash_of, slip_in_report
from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case
from attnlib.checks._slips import EPSILONS, transposed_batch, with_epsilons
from attnlib.checks.engine import check_function
from attnlib.checks.engine.kinds import INTEGER_TENSOR, WHOLE_NUMBER

Tensor = torch.Tensor

# A toy exercise under an id no notebook uses: the softmax of every row, any float dtype.
ROWS = Exercise(
    id="test_engine_rows",
    notebook="99",
    number=2,
    name="rows",
    hints=("each row on its own", "exp over the row's total", "divide by the sum"),
)


def _softmax(x: Tensor) -> Tensor:
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _cases() -> list[Case]:
    x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])  # float32
    batch = torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(0))
    return [
        Case("two rows", (x,), _softmax(x.double())),
        Case("a batch", (batch,), _softmax(batch)),
    ]


def _check(fn: object, mistakes: tuple[Mistake, ...] = (), **options: object):
    return check_function(ROWS, fn, _cases(), mistakes, **options)  # type: ignore[arg-type]


def test_the_probe_names_a_result_in_another_dtype() -> None:
    def upcast(x: Tensor) -> Tensor:
        return _softmax(x.float())

    report = _check(upcast, dtypes=(torch.float16, torch.float64))
    assert not report.passed and report.mistake == "returns float32 for float16 input", report
    assert "case 'two rows, in float16'" in str(report)
    assert _check(_softmax, dtypes=(torch.float16, torch.float64)).passed
    assert _check(upcast).passed  # without the probe, a task that names no dtype lets it be


def test_the_probe_names_a_float32_constant_that_breaks_float64() -> None:
    def with_an_eye(x: Tensor) -> Tensor:
        eye = torch.eye(x.shape[-1])  # float32, whatever x is
        return _softmax(x) @ eye

    report = _check(with_an_eye, dtypes=(torch.float64,))
    assert report.mistake == "a float32 constant breaks float64", report
    text = str(report)
    assert "`_softmax(x) @ eye`" in text and "eye is (3, 3) float32" in text, text


def test_a_kernel_torch_lacks_in_float16_is_not_the_learners_slip() -> None:
    def half_unsupported(x: Tensor) -> Tensor:
        if x.dtype == torch.float16:
            raise RuntimeError("\"erfinv\" not implemented for 'Half'")
        return _softmax(x)

    assert _check(half_unsupported, dtypes=(torch.float16,)).passed


def test_the_regular_cases_must_keep_their_dtype_with_the_option_on() -> None:
    report = _check(lambda x: _softmax(x.double()), dtypes=())
    assert report.mistake == "returns float64 for float32 input", report


WHOLE = Exercise(
    id="test_engine_whole",
    notebook="99",
    number=3,
    name="count",
    hints=("count them", "a whole number", "return an int"),
)


def test_a_float_where_a_whole_number_is_asked_for_is_named() -> None:
    cases = [Case("3 and 4", (3, 4), 12), Case("5 and 6", (5, 6), 30)]
    assert check_function(WHOLE, lambda a, b: a * b, cases).passed
    assert check_function(WHOLE, lambda a, b: torch.tensor(a * b), cases).passed  # int64
    report = check_function(WHOLE, lambda a, b: a * b / 1, cases)
    assert report.mistake == WHOLE_NUMBER.name and "12.0, a float" in str(report), report


def test_float_indices_where_integers_are_asked_for_are_named() -> None:
    x = torch.tensor([[0.1, 0.9], [0.7, 0.2]])
    cases = [Case("two rows", (x,), x.argmax(dim=-1))]
    report = check_function(WHOLE, lambda t: t.argmax(dim=-1).float(), cases)
    assert report.mistake == INTEGER_TENSOR.name, report


# -- crashes -------------------------------------------------------------------------------------


def batch_transposed(x: Tensor) -> Tensor:
    scores = x @ x.T  # right for one matrix; a batch turns back to front
    return _softmax(scores)


def test_a_crash_names_the_learners_line_its_operation_and_shapes() -> None:
    square = Exercise(
        id="test_engine_square",
        notebook="99",
        number=4,
        name="square",
        hints=("one score per pair", "x times its transpose", "the last two dimensions"),
    )
    batch = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(1))
    cases = [Case("a batch (2, 3, 4)", (batch,), _softmax(batch @ batch.mT))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = check_function(square, batch_transposed, cases)
    text = str(report)
    assert "your function raised RuntimeError" in text
    assert "of your batch_transposed, `x @ x.T`: x is (2, 3, 4) float32" in text, text
    assert "x.T is (4, 3, 2) float32" in text
    assert report.mistake == TRANSPOSE_BATCH.name


def test_a_dot_t_on_a_batch_wins_over_a_mistake_that_only_crashes_alike() -> None:
    # A table's mistake that crashes the same way on a batch, but is not a .T: the line decides.
    other = Mistake("took the wrong width", "…", lambda x: x @ x[..., :2, :])
    batch = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(2))
    cases = [Case("a batch", (batch,), _softmax(batch @ batch.mT))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = check_function(ROWS, batch_transposed, cases, (other,))
    assert report.mistake == TRANSPOSE_BATCH.name, report


def test_crash_of_reads_the_innermost_frame_of_the_learners_code() -> None:
    def inner(t: Tensor) -> Tensor:
        return t.view(-1, 5)

    def outer(t: Tensor) -> Tensor:
        return inner(t * 2)

    try:
        outer(torch.zeros(2, 3))
    except RuntimeError as error:
        crash = crash_of(error)
    assert crash is not None and crash.function == "inner" and crash.code == "t.view(-1, 5)"
    assert crash.operation == "t.view" and crash.operands == (("t", "(2, 3) float32"),)


def test_a_crash_message_alone_names_its_slip_in_any_checkers_report() -> None:
    problem = "forward raised TypeError: mask must be a bool torch.Tensor (True = may attend)"
    mistake = slip_in_report(problem)
    assert mistake is not None and "float mask" in mistake.name
    assert failed(ROWS, None, "case 'x'", problem, None).mistake == mistake.name
    index = "raised RuntimeError: Index tensor must have the same number of dimensions as input"
    assert "index with fewer dimensions" in slip_in_report(index).name  # type: ignore[union-attr]
    assert slip_in_report("the result differs at index (0,)") is None


# -- what the learner wrote, and epsilons --------------------------------------------------------


def _columns(x: Tensor) -> Tensor:
    return x / x.sum(dim=0, keepdim=True)


DIM_0 = Mistake("summed along dim 0", "…", _columns)
AS_T = transposed_batch(lambda x: (x.T / x.T.sum(dim=-1, keepdim=True)).T)


def columns_by_dim_0(x: Tensor) -> Tensor:
    return x / x.sum(dim=0, keepdim=True)


def columns_by_t(x: Tensor) -> Tensor:
    flipped = x.T
    return (flipped / flipped.sum(dim=-1, keepdim=True)).T


def test_of_two_mistakes_that_compute_the_same_the_one_written_is_named() -> None:
    columns = Exercise(
        id="test_engine_columns",
        notebook="99",
        number=5,
        name="columns",
        hints=("down each column", "the second-to-last dimension", "keep it"),
    )
    batch = torch.rand(2, 3, 4, generator=torch.Generator().manual_seed(3)) + 0.5
    cases = [Case("a batch (2, 3, 4)", (batch,), batch / batch.sum(dim=-2, keepdim=True))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        by_t = check_function(columns, columns_by_t, cases, (DIM_0, AS_T))
        by_dim = check_function(columns, columns_by_dim_0, cases, (AS_T, DIM_0))
    assert by_t.mistake == TRANSPOSE_BATCH.name, by_t
    assert by_dim.mistake == "summed along dim 0", by_dim


def test_an_epsilon_of_any_usual_size_is_named_by_one_name() -> None:
    family = with_epsilons(
        "added an epsilon to the total",
        "…",
        lambda eps: lambda x: (e := torch.exp(x)) / (e.sum(dim=-1, keepdim=True) + eps),
    )
    assert len(family) == len(EPSILONS) and {m.name for m in family} == {family[0].name}
    for eps in (1e-1, 1e-2):  # smaller ones stay within the tolerance here

        def answer(x: Tensor, eps: float = eps) -> Tensor:
            e = x.exp()
            return e / (e.sum(-1, keepdim=True) + eps)

        assert _check(answer, family).mistake == "added an epsilon to the total"
