"""Notebook 11's capstone checkers (Exercises 4–7) against their tables of mistakes, and the
loader and fallbacks of ``attnlib.course.own_encoder`` that run the learner's modules.

The learner's modules come from ``tests/support/nb11_learner_modules.py``, written the way a
learner would write them, not the way the tables write the mistakes: each mistake must be caught
and named by its own exercise's check and, through the part that holds it, by the encoder
layer's.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from nb11_learner_modules import (
    ATTENTION_MISTAKES,
    FEED_FORWARD_MISTAKES,
    LAYER_MISTAKES,
    LAYER_NORM_MISTAKES,
    modules,
)
from torch import nn
from torch.nn import functional as F

import attnlib
from attnlib import BertConfig, checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb11_pretrained import minilm_layers
from attnlib.course import own_encoder
from attnlib.formats import minilm

CHECKS = {
    "MyLayerNorm": (checks.check_bert_layer_norm, LAYER_NORM_MISTAKES, "ex4_my_layer_norm"),
    "MyMultiHeadAttention": (
        checks.check_bert_attention,
        ATTENTION_MISTAKES,
        "ex5_my_multi_head_attention",
    ),
    "MyFeedForward": (checks.check_bert_feed_forward, FEED_FORWARD_MISTAKES, "ex6_my_feed_forward"),
    "MyEncoderLayer": (checks.check_bert_encoder_layer, LAYER_MISTAKES, "ex7_my_encoder_layer"),
}
HOME = {m: cls for cls, (_, table, _) in CHECKS.items() for m in table}


@pytest.mark.parametrize("cls", CHECKS)
def test_right_modules_pass(cls: str) -> None:
    check, _, exercise_id = CHECKS[cls]
    assert check.exercise.id == exercise_id
    report = check(getattr(modules(None), cls))
    assert report.passed, report


@pytest.mark.slow
@pytest.mark.parametrize("cls", CHECKS)
def test_every_entry_of_the_table_is_named_when_made(cls: str) -> None:
    check, _, exercise_id = CHECKS[cls]
    assert 6 <= len(known_mistakes(exercise_id)) <= 18
    for mistake in known_mistakes(exercise_id):
        report = check(mistake.fn)
        assert not report.passed
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


@pytest.mark.parametrize("cls", CHECKS)
def test_the_table_is_the_one_written_again_here(cls: str) -> None:
    _, table, exercise_id = CHECKS[cls]
    names = [m.name for m in known_mistakes(exercise_id)]
    for words in table.values():
        assert sum(words in name for name in names) == 1, words
    for name in names:
        assert any(words in name for words in table.values()), name


@pytest.mark.parametrize("mistake", list(HOME))
def test_each_learner_mistake_is_named_by_its_own_check(mistake: str) -> None:
    cls = HOME[mistake]
    check, table, exercise_id = CHECKS[cls]
    report = str(check(getattr(modules(mistake), cls)))
    assert report.startswith(f"✗ {cls}") and "The mistake:" in report, report
    assert table[mistake] in report, report
    assert f'checks.hint("{exercise_id}")' in report


@pytest.mark.parametrize("mistake", [m for m, cls in HOME.items() if cls != "MyEncoderLayer"])
def test_a_mistake_in_a_part_is_named_by_the_layers_check_with_the_parts_hints(
    mistake: str,
) -> None:
    _, table, exercise_id = CHECKS[HOME[mistake]]
    report = str(checks.check_bert_encoder_layer(modules(mistake).MyEncoderLayer))
    assert report.startswith("✗ MyEncoderLayer, its ") and table[mistake] in report, report
    assert f'checks.hint("{exercise_id}")' in report and "ex7_" not in report


# -- refusals --------------------------------------------------------------------------------


class TorchNorm(nn.LayerNorm):
    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__(d_model, eps=eps)


class FunctionalNorm(modules(None).MyLayerNorm):  # type: ignore[misc]
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class AttnlibAttention(attnlib.MultiHeadAttention):
    def forward(self, x, token_mask):  # type: ignore[override]
        return super().forward(x, mask=token_mask[:, None, None, :])


class FusedAttention(modules(None).MyMultiHeadAttention):  # type: ignore[misc]
    def forward(self, x, token_mask):
        b, t, c = x.shape
        split = lambda y: y.view(b, t, self.heads, -1).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.w_q(x)), split(self.w_k(x)), split(self.w_v(x))
        mask = token_mask[:, None, None, :]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        weights = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(c // self.heads)), -1)
        return self.w_o(out.transpose(1, 2).reshape(b, t, c)), weights


class AttnlibFeedForward(attnlib.FeedForward):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff, activation="gelu")


class WithTorchNorms(modules(None).MyEncoderLayer):  # type: ignore[misc]
    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__(d_model, num_heads, d_ff, eps)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model, eps=eps), nn.LayerNorm(d_model, eps=eps)


@pytest.mark.parametrize(
    ("check", "cheat"),
    [
        (checks.check_bert_layer_norm, TorchNorm),
        (checks.check_bert_layer_norm, FunctionalNorm),
        (checks.check_bert_layer_norm, own_encoder.LayerNorm),
        (checks.check_bert_attention, AttnlibAttention),
        (checks.check_bert_attention, FusedAttention),
        (checks.check_bert_feed_forward, AttnlibFeedForward),
        (checks.check_bert_encoder_layer, own_encoder.EncoderLayer),
        (checks.check_bert_encoder_layer, WithTorchNorms),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_a_module_that_calls_the_implementation_is_refused(check, cheat: type) -> None:
    report = check(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- unfinished work, errors and names --------------------------------------------------------


def _stub(cls: type, where: str) -> type:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise NotImplementedError

    return type(cls.__name__, (cls,), {where: refuse, "__doc__": f"Build {cls.__name__}."})


@pytest.mark.parametrize("cls", CHECKS)
@pytest.mark.parametrize("where", ["__init__", "forward"])
def test_a_stub_is_reported_as_not_done_with_its_task(cls: str, where: str) -> None:
    check = CHECKS[cls][0]
    report = check(_stub(getattr(modules(None), cls), where))
    assert not report.passed and not report.done
    assert f"{cls}: not done yet. Your task: Build {cls}." in str(report)


def test_a_layer_whose_part_is_a_stub_says_which_exercise_comes_first() -> None:
    parts = modules(None)

    class MyEncoderLayer(parts.MyEncoderLayer):
        def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
            super().__init__(d_model, num_heads, d_ff, eps)
            self.norm_1 = _stub(parts.MyLayerNorm, "forward")(d_model, eps)

    report = checks.check_bert_encoder_layer(MyEncoderLayer)
    assert not report.done and "Exercise 4 first" in str(report)


def test_an_error_in_forward_is_a_report_not_a_traceback() -> None:
    def broken(self: nn.Module, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    bad = type("MyFeedForward", (modules(None).MyFeedForward,), {"forward": broken})
    report = str(checks.check_bert_feed_forward(bad))
    assert "MyFeedForward(8, 16).forward raised RuntimeError: mat1 and mat2" in report
    assert "Traceback" not in report


class _HeadsBy(modules(None).MyMultiHeadAttention):  # type: ignore[misc]
    """Right attention, but for how two steps are written (``scores`` and ``merge``)."""

    def scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return q @ k.transpose(-2, -1)

    def merge(self, heads: torch.Tensor) -> torch.Tensor:
        return heads.transpose(1, 2).flatten(2)

    def forward(self, x: torch.Tensor, token_mask: torch.Tensor):  # type: ignore[no-untyped-def]
        b, t, c = x.shape
        h, d = self.heads, c // self.heads
        q, k, v = (f(x).view(b, t, h, d).transpose(1, 2) for f in (self.w_q, self.w_k, self.w_v))
        scores = self.scores(q, k) / math.sqrt(d)
        weights = scores.masked_fill(~token_mask[:, None, None, :], -math.inf).softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class ZerosBuffer(_HeadsBy):
    def merge(self, heads: torch.Tensor) -> torch.Tensor:
        b, h, t, d = heads.shape
        concat = torch.zeros(b, t, h * d)  # float32, whatever the input is
        for i in range(h):
            concat[..., i * d : (i + 1) * d] = heads[:, i]
        return concat


class ScoresOfDotT(_HeadsBy):
    def scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return q @ k.T  # right for one matrix; (B, h, T, d_k) turns back to front


@pytest.mark.parametrize(
    ("attention", "words"),
    [
        (_HeadsBy, None),
        (ZerosBuffer, "a float32 constant breaks float64"),
        (ScoresOfDotT, "used .T on a batch"),
    ],
)
def test_a_crash_in_the_learners_module_names_its_line_and_slip(
    attention: type, words: str | None
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # .T of a batch
        report = checks.check_bert_attention(attention)
    if words is None:
        assert report.passed, report
        return
    assert not report.passed and report.mistake.startswith(words), report
    where = "of your scores, `q @ k.T`" if attention is ScoresOfDotT else "of your forward, `"
    assert where in str(report), report


class WeightsInFloat32(_HeadsBy):
    """A softmax taken in float32 "to be safe", its weights never brought back."""

    def forward(self, x: torch.Tensor, token_mask: torch.Tensor):  # type: ignore[no-untyped-def]
        b, t, c = x.shape
        h, d = self.heads, c // self.heads
        q, k, v = (f(x).view(b, t, h, d).transpose(1, 2) for f in (self.w_q, self.w_k, self.w_v))
        scores = (q @ k.transpose(-2, -1)).float() / math.sqrt(d)
        weights = scores.masked_fill(~token_mask[:, None, None, :], -math.inf).softmax(-1)
        return self.w_o(self.merge(weights.to(v.dtype) @ v)), weights


def test_weights_in_another_dtype_than_the_module_are_named() -> None:
    # "It must work in any float dtype": out and weights come back in the module's (issue 40).
    report = checks.check_bert_attention(WeightsInFloat32)
    assert report.mistake == "returns float32 for float64 input", report
    assert "the module is float64 and weights is float32" in str(report)


def test_misnamed_or_misshapen_parameters_are_named() -> None:
    right = modules(None).MyMultiHeadAttention

    class Renamed(right):
        def __init__(self, d_model: int, num_heads: int) -> None:
            super().__init__(d_model, num_heads)
            self.W_q = self.w_q
            del self.w_q

    report = str(checks.check_bert_attention(Renamed))
    assert "missing: ['w_q.bias', 'w_q.weight']" in report and "W_q.weight" in report

    class Swapped(modules(None).MyFeedForward):
        def __init__(self, d_model: int, d_ff: int) -> None:
            super().__init__(d_model, d_ff)
            self.linear1 = nn.Linear(d_ff, d_model)

    assert "linear1.weight has shape (8, 16)" in str(checks.check_bert_feed_forward(Swapped))
    assert "expected a class" in str(checks.check_bert_layer_norm(modules(None).MyLayerNorm(4, 1)))


def test_a_layer_that_departs_only_at_minilms_size_is_found_there() -> None:
    parts = modules(None)

    class Coarse(parts.MyFeedForward):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = super().forward(x)
            return y.half().to(y.dtype) if x.shape[-1] == 384 else y  # rounds at MiniLM's size

    class MyEncoderLayer(parts.MyEncoderLayer):
        def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
            super().__init__(d_model, num_heads, d_ff, eps)
            self.feed_forward = Coarse(d_model, d_ff)

    report = str(checks.check_bert_encoder_layer(MyEncoderLayer))
    assert "MiniLM's layer 1 with its published weights, its feed_forward (Coarse)" in report
    assert "departs from the real model's" in report


def test_a_passing_layer_runs_minilm_to_sentence_transformers_embeddings() -> None:
    assert minilm_layers.minilm_problem(modules(None).MyEncoderLayer) is None
    report = str(checks.check_bert_encoder_layer(modules(None).MyEncoderLayer))
    assert "six of them with MiniLM's weights reproduce the real model" in report


# -- own_encoder: the frame, the loader and attnlib's fallbacks -------------------------------


class MyBert(nn.Module):
    """The notebook's frame: embeddings, a LayerNorm, then the layers; every layer's output."""

    def __init__(self, config: BertConfig, layer_norm: type, encoder_layer: type) -> None:
        super().__init__()
        self.config = config
        self.token = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.max_len, config.d_model)
        self.segment = nn.Embedding(config.type_vocab_size, config.d_model)
        self.embedding_norm = layer_norm(config.d_model, config.norm_eps)
        self.layers = nn.ModuleList(
            encoder_layer(config.d_model, config.num_heads, config.d_ff, config.norm_eps)
            for _ in range(config.num_layers)
        )

    def forward(self, input_ids: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1])
        x = self.token(input_ids) + self.position(positions)
        x = self.embedding_norm(x + self.segment(torch.zeros_like(input_ids)))
        states = [x]
        for layer in self.layers:
            x, _ = layer(x, token_mask)
            states.append(x)
        return torch.stack(states)


@pytest.fixture(scope="module")
def tokenizer():
    return minilm.load_minilm(verify_checksums=False).tokenizer


@pytest.mark.slow
@pytest.mark.parametrize("whose", ["the learner's", "attnlib's"])
def test_the_frame_reproduces_sentence_transformers(tokenizer, whose: str) -> None:
    parts = modules(None)
    classes = (
        (parts.MyLayerNorm, parts.MyEncoderLayer)
        if whose == "the learner's"
        else (own_encoder.LayerNorm, own_encoder.EncoderLayer)
    )
    model = own_encoder.load_minilm_into(MyBert(BertConfig(), *classes))
    reference = minilm.load_minilm_reference()
    ours = own_encoder.sentence_encoder(model, tokenizer).encode(reference.sentences)
    assert (ours - reference.embeddings).abs().max() <= 1e-5


def test_max_pool_ignores_padding() -> None:
    hidden = torch.tensor([[[-1.0, 2.0], [-3.0, 9.0]], [[-2.0, 0.5], [-1.0, 1.0]]])
    mask = torch.tensor([[True, False], [True, True]])
    expected = torch.tensor([[-1.0, 2.0], [-1.0, 1.0]])
    assert torch.equal(own_encoder.max_pool(hidden, mask), expected)
    assert torch.equal(own_encoder.max_pool(hidden.half(), mask), expected.half())


def test_the_loader_names_a_misnamed_a_missing_and_a_misshapen_parameter() -> None:
    parts = modules(None)

    class Renamed(parts.MyMultiHeadAttention):
        def __init__(self, d_model: int, num_heads: int) -> None:
            super().__init__(d_model, num_heads)
            self.W_q = self.w_q
            del self.w_q

    model = MyBert(BertConfig(), parts.MyLayerNorm, parts.MyEncoderLayer)
    model.layers[0].self_attention = Renamed(384, 12)
    with pytest.raises(own_encoder.OwnModelError) as caught:
        own_encoder.load_minilm_into(model)
    message = str(caught.value)
    assert "layers.0.self_attention (Renamed)" in message
    assert "the loader knows 'layers.0.self_attention.w_q.weight'" in message

    model = MyBert(BertConfig(), parts.MyLayerNorm, parts.MyEncoderLayer)
    del model.layers[2].norm_1.bias
    with pytest.raises(
        own_encoder.OwnModelError, match=r"has no parameter 'layers\.2\.norm_1\.bias'"
    ):
        own_encoder.load_minilm_into(model)
    model = MyBert(BertConfig(), parts.MyLayerNorm, parts.MyEncoderLayer)
    model.layers[1].feed_forward.linear1 = nn.Linear(1536, 384)
    with pytest.raises(own_encoder.OwnModelError, match=r"has shape \(384, 1536\), but MiniLM"):
        own_encoder.load_minilm_into(model)


def test_a_nan_or_a_wrong_shape_names_the_module(tokenizer) -> None:
    parts = modules(None)
    model = own_encoder.load_minilm_into(
        MyBert(BertConfig(), parts.MyLayerNorm, parts.MyEncoderLayer)
    )
    with torch.no_grad():
        model.layers[3].feed_forward.linear2.bias[5] = float("nan")
    with pytest.raises(
        own_encoder.OwnModelError, match=r"^layers.3.feed_forward.linear2 \(Linear\)"
    ):
        own_encoder.sentence_encoder(model, tokenizer).encode(["Hi there."])
    model = own_encoder.load_minilm_into(
        MyBert(BertConfig(), parts.MyLayerNorm, parts.MyEncoderLayer)
    )
    model.layers[4].feed_forward.forward = lambda x: x[..., :100]
    with pytest.raises(own_encoder.OwnModelError, match="returned a tensor of shape"):
        own_encoder.sentence_encoder(model, tokenizer).encode(["Hi there."])
    assert own_encoder.OwnModelError("a\nb")._render_traceback_() == ["OwnModelError: a", "b"]
