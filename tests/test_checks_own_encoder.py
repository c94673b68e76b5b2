"""The capstone's checkers (notebook 11): right modules pass, each usual mistake is named.

The learner's modules come from ``tests/own_modules.py``, written the way a learner
would write them (einsum, ``torch.var``, ``torch.where``), not the way the checkers
recompute the mistakes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from own_modules import MISTAKES, modules
from torch import nn

from attnlib import BertConfig, checks
from attnlib.checks import own_encoder_mistakes as mistakes
from attnlib.course import own_encoder
from attnlib.formats import minilm

CAUSES = {
    "eps outside sqrt": mistakes.EPS_OUTSIDE_SQRT,
    "unbiased variance": mistakes.UNBIASED_VARIANCE,
    "no affine": mistakes.NO_AFFINE,
    "tanh gelu": mistakes.TANH_GELU,
    "relu": mistakes.RELU_NOT_GELU,
    "no scale": mistakes.NO_SCALE,
    "scaled by d_model": mistakes.SCALED_BY_D_MODEL,
    "mask inverted": mistakes.MASK_INVERTED,
    "mask ignored": mistakes.MASK_IGNORED,
    "heads split wrong": mistakes.HEADS_SPLIT_WRONG,
    "heads merged wrong": mistakes.HEADS_MERGED_WRONG,
    "softmax over queries": mistakes.SOFTMAX_OVER_QUERIES,
    "pre-norm": mistakes.PRE_NORM,
    "norm before residual": mistakes.NORM_BEFORE_RESIDUAL,
    "no attention residual": mistakes.NO_ATTENTION_RESIDUAL,
    "norms swapped": mistakes.NORMS_SWAPPED,
}
# Where each mistake lives: its own checker, and the first place it shows in MiniLM.
LAYER_NORM = (checks.check_own_layer_norm, "MyLayerNorm", "embedding_norm (MyLayerNorm)")
FEED_FORWARD = (
    checks.check_own_feed_forward,
    "MyFeedForward",
    "layers.0.feed_forward (MyFeedForward)",
)
ATTENTION = (
    checks.check_own_attention,
    "MyMultiHeadAttention",
    "layers.0.self_attention (MyMultiHeadAttention)",
)
WIRING = (checks.check_own_encoder_layer, "MyEncoderLayer", "layers.0 (MyEncoderLayer) as a whole")
HOME = {
    **dict.fromkeys(["eps outside sqrt", "unbiased variance", "no affine"], LAYER_NORM),
    **dict.fromkeys(["tanh gelu", "relu"], FEED_FORWARD),
    **dict.fromkeys(MISTAKES[5:12], ATTENTION),  # the scale, the mask and the heads
    **dict.fromkeys(
        ["pre-norm", "norm before residual", "no attention residual", "norms swapped"], WIRING
    ),
}
UNIT_CHECKS = [
    (checks.check_own_layer_norm, "MyLayerNorm"),
    (checks.check_own_attention, "MyMultiHeadAttention"),
    (checks.check_own_feed_forward, "MyFeedForward"),
    (checks.check_own_encoder_layer, "MyEncoderLayer"),
    (checks.check_own_minilm, "MyBert"),
]


def test_every_mistake_has_a_cause_and_a_home() -> None:
    assert set(CAUSES) == set(HOME) == set(MISTAKES)
    assert len(set(CAUSES.values())) == len(CAUSES)


@pytest.mark.parametrize(("check", "cls"), UNIT_CHECKS, ids=[c for _, c in UNIT_CHECKS])
def test_right_modules_pass(check, cls: str) -> None:
    result = check(getattr(modules(None), cls))
    assert result.passed, result.message
    assert result.message.startswith("✓")


@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_modules_own_checker_names_the_mistake(mistake: str) -> None:
    check, cls, _ = HOME[mistake]
    result = check(getattr(modules(mistake), cls))
    assert not result.passed
    assert f"likely cause: {CAUSES[mistake]}." in result.message, result.message


@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_layer_checker_names_a_mistake_in_any_of_its_modules(mistake: str) -> None:
    result = checks.check_own_encoder_layer(modules(mistake).MyEncoderLayer)
    assert not result.passed
    assert f"likely cause: {CAUSES[mistake]}." in result.message, result.message


@pytest.mark.parametrize("mistake", [m for m in MISTAKES if m != "eps outside sqrt"])
def test_minilm_checker_names_the_first_place_that_departs_and_the_cause(mistake: str) -> None:
    result = checks.check_own_minilm(modules(mistake).MyBert)
    assert not result.passed
    _, _, place = HOME[mistake]
    assert result.message.startswith(
        f"✗ MyBert: the first module to depart from MiniLM is {place}: "
    ), result.message
    assert f"likely cause: {CAUSES[mistake]}." in result.message, result.message


def test_minilm_checker_finds_the_epsilon_that_minilm_cannot_show() -> None:
    # MiniLM's eps is 1e-12: a misplaced epsilon leaves every activation as it was, so the
    # checker's small test of the LayerNorm class alone has to find it.
    model = own_encoder.load_minilm_into(modules("eps outside sqrt").MyBert(BertConfig()))
    right = own_encoder.load_minilm_into(modules(None).MyBert(BertConfig()))
    ids, mask = (
        minilm.load_minilm_activations().input_ids,
        minilm.load_minilm_activations().token_mask,
    )
    with torch.no_grad():
        gap = own_encoder.hidden_states(model, ids, mask) - own_encoder.hidden_states(
            right, ids, mask
        )
    assert gap.abs().max() < 1e-6
    result = checks.check_own_minilm(modules("eps outside sqrt").MyBert)
    assert not result.passed
    assert "MyLayerNorm fails when tested alone" in result.message
    assert CAUSES["eps outside sqrt"] in result.message


def _stub(cls: type, where: str) -> type:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise NotImplementedError

    return type(cls.__name__, (cls,), {where: refuse, "__doc__": f"Build {cls.__name__}."})


@pytest.mark.parametrize(("check", "cls"), UNIT_CHECKS, ids=[c for _, c in UNIT_CHECKS])
@pytest.mark.parametrize("where", ["__init__", "forward"])
def test_a_stub_is_reported_as_not_done(check, cls: str, where: str) -> None:
    result = check(_stub(getattr(modules(None), cls), where))
    assert not result.passed and not result.done
    assert f"{cls}: not done yet (Build {cls}.)" in result.message


@pytest.mark.parametrize(("check", "cls"), UNIT_CHECKS, ids=[c for _, c in UNIT_CHECKS])
def test_an_error_in_the_learners_forward_is_a_report_not_a_traceback(check, cls: str) -> None:
    def broken(self: nn.Module, *args: object) -> None:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    bad = type(cls, (getattr(modules(None), cls),), {"forward": broken})
    result = check(bad)
    assert not result.passed and result.done
    assert "raised RuntimeError: mat1 and mat2 shapes cannot be multiplied" in result.message


def test_attention_that_returns_no_weights_is_told_to() -> None:
    right = modules(None).MyMultiHeadAttention
    only_out = type(
        "MyMultiHeadAttention", (right,), {"forward": lambda s, x, m: right.forward(s, x, m)[0]}
    )
    result = checks.check_own_attention(only_out)
    assert not result.passed
    assert "must return a pair (out, weights)" in result.message


def test_a_misnamed_parameter_is_named_with_its_module_and_the_name_the_loader_knows() -> None:
    right = modules(None)

    class Renamed(right.MyMultiHeadAttention):
        def __init__(self, d_model: int, num_heads: int) -> None:
            super().__init__(d_model, num_heads)
            self.W_q = self.w_q
            del self.w_q

        def forward(self, x: torch.Tensor, token_mask: torch.Tensor):
            self.w_q = self.W_q
            return super().forward(x, token_mask)

    model = right.MyBert(BertConfig())
    model.layers[0].self_attention = Renamed(384, 12)
    with pytest.raises(own_encoder.OwnModelError) as caught:
        own_encoder.load_minilm_into(model)
    message = str(caught.value)
    assert "layers.0.self_attention (Renamed)" in message
    assert "'layers.0.self_attention.W_q.weight'" in message
    assert "the loader knows 'layers.0.self_attention.w_q.weight'" in message


def test_a_missing_parameter_and_a_wrong_shape_are_named() -> None:
    model = modules(None).MyBert(BertConfig())
    del model.layers[2].norm_1.bias
    with pytest.raises(own_encoder.OwnModelError) as caught:
        own_encoder.load_minilm_into(model)
    assert str(caught.value).startswith(
        "layers.2.norm_1 (MyLayerNorm) has no parameter 'layers.2.norm_1.bias' for MiniLM's "
        "'encoder.layer.2.attention.output.LayerNorm.bias' (shape (384,))"
    )
    model = modules(None).MyBert(BertConfig())
    model.layers[1].feed_forward.linear1 = nn.Linear(1536, 384)  # arguments swapped
    with pytest.raises(own_encoder.OwnModelError) as caught:
        own_encoder.load_minilm_into(model)
    assert str(caught.value).startswith(
        "layers.1.feed_forward.linear1 (Linear): 'layers.1.feed_forward.linear1.weight' has "
        "shape (384, 1536), but MiniLM's 'encoder.layer.1.intermediate.dense.weight' has shape "
        "(1536, 384)"
    )

    class MyBert(nn.Module):
        def __init__(self, config: BertConfig) -> None:
            super().__init__()
            self.extra = nn.Linear(2, 2)

    result = checks.check_own_minilm(MyBert)
    assert not result.passed and "'extra.weight' that MiniLM has no weight for" in result.message


@pytest.fixture(scope="module")
def tokenizer():
    return minilm.load_minilm(verify_checksums=False).tokenizer


def test_a_nan_or_a_wrong_shape_names_the_module_and_the_tensor(tokenizer) -> None:
    model = own_encoder.load_minilm_into(modules(None).MyBert(BertConfig()))
    encoder = own_encoder.sentence_encoder(model, tokenizer)
    with torch.no_grad():
        model.layers[3].feed_forward.linear2.bias[5] = float("nan")
    with pytest.raises(own_encoder.OwnModelError) as caught:
        encoder.encode(["Hi there."])
    assert str(caught.value).startswith(
        "layers.3.feed_forward.linear2 (Linear) returned NaN in its output of shape (1, 5, 384)"
    )
    model = own_encoder.load_minilm_into(modules(None).MyBert(BertConfig()))
    model.layers[4].feed_forward.forward = lambda x: x[..., :100]
    with pytest.raises(own_encoder.OwnModelError) as caught:
        own_encoder.sentence_encoder(model, tokenizer).encode(["Hi there."])
    assert str(caught.value) == (
        "layers.4.feed_forward (MyFeedForward) returned a tensor of shape (1, 5, 100); it must "
        "keep the shape of its input, (B, T, C) = (1, 5, 384)"
    )
    assert own_encoder.OwnModelError("a\nb")._render_traceback_() == ["OwnModelError: a", "b"]


def test_a_forward_that_does_not_stack_the_layers_is_told_what_to_return() -> None:
    right = modules(None).MyBert
    last_only = type("MyBert", (right,), {"forward": lambda s, i, m: right.forward(s, i, m)[-1]})
    result = checks.check_own_minilm(last_only)
    assert not result.passed
    assert (
        "MyBert.forward returned (2, 7, 384); it must return every layer's output stacked, "
        "(L + 1, B, T, C) = (7, 2, 7, 384)"
    ) in result.message


def test_right_modules_reproduce_sentence_transformers_on_every_reference_sentence(
    tokenizer,
) -> None:
    model = own_encoder.load_minilm_into(modules(None).MyBert(BertConfig()))
    reference = minilm.load_minilm_reference()
    ours = own_encoder.sentence_encoder(model, tokenizer).encode(reference.sentences)
    assert (ours - reference.embeddings).abs().max() <= 1e-5


def test_notebook_11s_own_solution_passes_the_capstone_checks() -> None:
    notebook = json.loads(
        Path("instructors/notebooks/11_pretrained_model.ipynb").read_text(encoding="utf-8")
    )
    namespace: dict[str, object] = {
        "torch": torch,
        "nn": nn,
        "math": math,
        "attnlib": __import__("attnlib"),
    }
    capstone = [
        "".join(cell["source"])
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
        and (
            cell["metadata"]
            .get("nbgrader", {})
            .get("grade_id", "")
            .startswith(("ex4_", "ex5_", "ex6_", "ex7_"))
            or "".join(cell["source"]).startswith("class MyBert(")
        )
        and not cell["metadata"].get("nbgrader", {}).get("grade")
    ]
    assert len(capstone) == 5, "four answer cells and the MyBert cell"
    for source in capstone:
        exec(compile(source, "notebook 11", "exec"), namespace)
    for check, cls in UNIT_CHECKS:
        result = check(namespace[cls])
        assert result.passed, result.message
