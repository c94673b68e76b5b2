"""The public API is the contract later notebooks and outside checks rely on."""

from __future__ import annotations

import importlib
import inspect

import pytest

import attnlib

CONTRACT = {
    "softmax": ["x", "dim", "temperature"],
    "softmax_jacobian": ["p"],
    "naive_self_attention": ["x"],
    "dot": ["a", "b"],
    "cosine_similarity": ["a", "b", "eps"],
    "course.word_vectors.analogy": ["vectors", "a", "b", "c", "k", "exclude_query_words"],
    "scaled_dot_product_attention": ["q", "k", "v", "mask", "dropout_p", "scale"],
    "causal_mask": ["t_q", "t_k"],
    "padding_mask": ["lengths", "seq_len"],
    "sinusoidal_encoding": ["max_len", "d_model", "base"],
    "load_minilm": ["verify_checksums", "device"],
    "resolve_device": ["device"],
    "mean_pool": ["hidden", "token_mask"],
    "semantic_search": ["queries", "corpus", "k"],
    "tiled_attention": ["q", "k", "v", "mask", "dropout_p", "scale", "tile_size"],
    "online_softmax": ["x", "tile_size"],
    "fused_attention": ["q", "k", "v", "mask", "dropout_p", "scale"],
    "course.sliders.online_softmax_progress": ["scores", "tile_size", "tiles_seen"],
    "course.attention_cost.attention_flops": ["batch_heads", "t_q", "t_k", "d_k", "d_v"],
}
SHAPED = [
    "softmax",
    "softmax_jacobian",
    "naive_softmax",
    "naive_self_attention",
    "causal_mask",
    "padding_mask",
    "padding_mask_from_ids",
    "to_torch_mha_mask",
    "from_torch_mha_mask",
    "to_torch_key_padding_mask",
    "scaled_dot_product_attention",
    "fused_attention",
    "sinusoidal_encoding",
    "apply_rotary",
    "split_heads",
    "merge_heads",
    "MultiHeadAttention",
    "AttentionHead",
    "dot",
    "cosine_similarity",
    "projection",
    "course.plots.plot_attention",
    "course.plots.plot_heatmap",
    "course.plots.plot_distribution",
    "course.plots.plot_attention_lines",
    "padding_mask_from_token_mask",
    "mean_pool",
    "semantic_search",
    "course.inspection.previous_token_share",
    "course.inspection.contextual_vectors",
    "course.inspection.layerwise_cosine",
    "BertEmbeddings",
    "BertModel",
    "BertOutput",
    "SentenceEncoderOutput",
    "course.inspection.HeadSummary",
    "course.sliders.HeadView",
    "formats.minilm.MiniLMReference",
    "tiled_attention",
    "online_softmax",
    "online_softmax_step",
    "OnlineSoftmaxState",
    "course.sliders.OnlineSoftmaxProgress",
    "course.attention_cost.attention_flops",
    "course.attention_cost.score_matrix_bytes",
    "course.tensor_log.TensorLog",
]


def public(name: str) -> object:
    """``"softmax"`` is ``attnlib.softmax``; ``"course.plots.plot_heatmap"`` names its module."""
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(f"attnlib.{module}" if module else "attnlib"), attribute)


@pytest.mark.parametrize(("name", "parameters"), CONTRACT.items())
def test_contract_signatures(name: str, parameters: list[str]) -> None:
    assert list(inspect.signature(public(name)).parameters) == parameters


def test_contract_defaults() -> None:
    softmax_parameters = inspect.signature(attnlib.softmax).parameters
    assert softmax_parameters["dim"].default == -1
    assert softmax_parameters["temperature"].default == 1.0
    sdpa = inspect.signature(attnlib.scaled_dot_product_attention).parameters
    assert sdpa["mask"].default is None and sdpa["dropout_p"].default == 0.0
    assert sdpa["scale"].default is None
    assert inspect.signature(attnlib.sinusoidal_encoding).parameters["base"].default == 10000.0
    # Every attention function takes the same leading arguments; extras are keyword-only.
    for function in (attnlib.fused_attention, attnlib.tiled_attention):
        parameters = inspect.signature(function).parameters
        assert parameters["mask"].default is None and parameters["dropout_p"].default == 0.0
        assert parameters["scale"].default is None
    tile_size = inspect.signature(attnlib.tiled_attention).parameters["tile_size"]
    assert tile_size.kind is inspect.Parameter.KEYWORD_ONLY and tile_size.default == 256


def test_module_contracts() -> None:
    init = inspect.signature(attnlib.MultiHeadAttention.__init__).parameters
    assert list(init)[1:] == ["d_model", "num_heads", "dropout", "bias"]
    assert init["dropout"].default == 0.0 and init["bias"].default is True
    forward = inspect.signature(attnlib.MultiHeadAttention.forward).parameters
    assert list(forward)[1:5] == ["query", "key", "value", "mask"]
    assert forward["need_weights"].default is True
    assert callable(attnlib.MultiHeadAttention.from_torch)
    encode = inspect.signature(attnlib.SentenceEncoder.encode).parameters
    assert list(encode)[1:] == ["texts", "batch_size"]
    assert list(inspect.signature(attnlib.SentenceEncoder.tokenize).parameters)[1:] == ["texts"]


@pytest.mark.parametrize("name", attnlib.__all__)
def test_every_public_name_is_documented_and_typed(name: str) -> None:
    obj = getattr(attnlib, name)
    assert inspect.getdoc(obj), f"{name} has no docstring"
    if inspect.isfunction(obj):
        hints = inspect.get_annotations(obj)
        assert "return" in hints, f"{name} lacks a return annotation"
        unannotated = [p for p in inspect.signature(obj).parameters if p not in hints]
        assert not unannotated, f"{name}: parameters without type hints {unannotated}"


@pytest.mark.parametrize("name", SHAPED)
def test_tensor_functions_document_their_shapes(name: str) -> None:
    assert "Shapes:" in inspect.getdoc(public(name))


def test_package_is_typed() -> None:
    from importlib.resources import files

    assert files("attnlib").joinpath("py.typed").is_file()
