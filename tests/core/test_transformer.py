"""The encoder–decoder Transformer: shapes, masking, causality, embeddings, size and errors."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.positional import sinusoidal_encoding
from attnlib.transformer import AttentionMaps, Transformer, TransformerConfig

SMALL = TransformerConfig(
    src_vocab_size=11,
    tgt_vocab_size=13,
    d_model=16,
    num_heads=4,
    num_encoder_layers=2,
    num_decoder_layers=2,
    d_ff=32,
    dropout=0.0,
    max_len=12,
)


def _model(seed: int = 0, **changes) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(dataclasses.replace(SMALL, **changes)).eval()


@functools.cache
def _shared_model(norm_first: bool) -> Transformer:
    """Built once per module run: hypothesis calls the test body many times."""
    return _model(seed=1, norm_first=norm_first)


def _ids(shape: tuple[int, ...], vocab_size: int, seed: int) -> torch.Tensor:
    """Random ids that are never the pad id 0."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(1, vocab_size, shape, generator=g)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize(("batch", "s", "t"), [(1, 1, 1), (2, 5, 3), (3, 4, 7), (2, 12, 12)])
def test_output_shape(norm_first: bool, batch: int, s: int, t: int) -> None:
    model = _model(norm_first=norm_first)
    src, tgt = _ids((batch, s), 11, seed=0), _ids((batch, t), 13, seed=1)
    logits = model(src, tgt)
    assert logits.shape == (batch, t, SMALL.tgt_vocab_size)
    assert logits.dtype == torch.float32 and torch.isfinite(logits).all()
    memory, src_mask, weights = model.encode(src)
    assert memory.shape == (batch, s, SMALL.d_model) and src_mask.shape == (batch, 1, 1, s)
    assert len(weights) == SMALL.num_encoder_layers
    torch.testing.assert_close(model.decode(tgt, memory, src_mask)[0], logits)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("short", [1, 3, 5])
def test_source_padding_changes_no_output(norm_first: bool, short: int) -> None:
    model = _model(seed=2, norm_first=norm_first)
    alone = _ids((1, short), 11, seed=3)
    other = _ids((1, 6), 11, seed=4)
    padded = torch.cat([alone, torch.zeros(1, 6 - short, dtype=torch.long)], dim=1)
    src = torch.cat([padded, other])  # (2, 6): the first row ends in padding
    tgt = _ids((2, 4), 13, seed=5)
    batched = model(src, tgt)
    torch.testing.assert_close(batched[0:1], model(alone, tgt[0:1]), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(batched[1:2], model(other, tgt[1:2]), atol=1e-5, rtol=1e-5)
    # Changing the padding's content is impossible (it is pad), but more of it changes nothing.
    longer = torch.cat([padded, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model(longer, tgt[0:1]), batched[0:1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_target_padding_changes_no_logit_of_a_real_token(norm_first: bool) -> None:
    model = _model(seed=3, norm_first=norm_first)
    src, tgt = _ids((1, 5), 11, seed=6), _ids((1, 3), 13, seed=7)
    padded = torch.cat([tgt, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model(src, padded)[:, :3], model(src, tgt), atol=1e-5, rtol=1e-5)


@settings(max_examples=30)  # each example is two forward passes of a whole model
@given(
    norm_first=st.booleans(),
    t=st.integers(0, 6),
    seed=st.integers(0, 2**31 - 1),
)
def test_changing_later_target_tokens_changes_no_earlier_logit(
    norm_first: bool, t: int, seed: int
) -> None:
    model = _shared_model(norm_first)
    src, tgt = _ids((2, 5), 11, seed=seed), _ids((2, 8), 13, seed=seed + 1)
    changed = tgt.clone()
    changed[:, t + 1 :] = torch.randint(
        0, 13, (2, 7 - t), generator=torch.Generator().manual_seed(seed)
    )
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], atol=1e-5, rtol=1e-5)


def test_changing_an_earlier_target_token_does_change_later_logits() -> None:
    """The other direction of causality: position t reads every token up to t."""
    model = _model(seed=4)
    src, tgt = _ids((1, 4), 11, seed=8), _ids((1, 5), 13, seed=9)
    changed = tgt.clone()
    changed[0, 2] = tgt[0, 2] % 12 + 1  # another non-pad id
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(after[:, :2], before[:, :2])
    assert not torch.allclose(after[:, 2:], before[:, 2:], atol=1e-4)


def _count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # a shared Parameter is listed once


def test_tie_embeddings_shares_one_parameter() -> None:
    tied, untied = _model(tie_embeddings=True), _model(tie_embeddings=False)
    assert tied.output.weight is tied.tgt_embedding.weight
    assert untied.output.weight is not untied.tgt_embedding.weight
    embedding_size = SMALL.tgt_vocab_size * SMALL.d_model
    assert _count(untied) - _count(tied) == embedding_size
    # A gradient step moves the embedding and the output projection together.
    tied.train()
    optimizer = torch.optim.SGD(tied.parameters(), lr=0.1)
    tied(_ids((2, 3), 11, seed=10), _ids((2, 4), 13, seed=11)).sum().backward()
    optimizer.step()
    assert tied.output.weight is tied.tgt_embedding.weight
    assert tied.output.weight.data_ptr() == tied.tgt_embedding.weight.data_ptr()


def test_share_embeddings_makes_one_matrix_serve_three_times() -> None:
    model = _model(seed=3, src_vocab_size=13, share_embeddings=True, tie_embeddings=True)
    shared = model.tgt_embedding.weight
    assert model.src_embedding.weight is shared and model.output.weight is shared
    names = [name for name, _ in model.named_parameters()]
    assert sum("embedding" in name or name.startswith("output") for name in names) == 1
    # The same ids embed to the same vectors on both sides, and a gradient step keeps it so.
    ids = _ids((2, 4), SMALL.tgt_vocab_size, seed=16)
    torch.testing.assert_close(model.src_embedding(ids), model.tgt_embedding(ids))
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(ids, _ids((2, 3), SMALL.tgt_vocab_size, seed=17)).pow(2).mean().backward()
    assert shared.grad is not None and shared.grad.abs().sum() > 0
    before = shared.detach().clone()
    optimizer.step()
    assert not torch.equal(before, shared.detach())
    assert model.src_embedding.weight.data_ptr() == model.output.weight.data_ptr()


def test_share_embeddings_needs_one_vocabulary() -> None:
    with pytest.raises(ValueError, match="src_vocab_size=11 and tgt_vocab_size=13"):
        dataclasses.replace(SMALL, share_embeddings=True)


@pytest.mark.parametrize("norm_first", [True, False])
def test_embeddings_are_scaled_by_sqrt_d_model_before_adding_positions(norm_first: bool) -> None:
    model = _model(seed=5, norm_first=norm_first)
    seen: dict[str, torch.Tensor] = {}
    hooks = [
        model.encoder.layers[0].register_forward_pre_hook(
            lambda _m, args: seen.__setitem__("src", args[0])
        ),
        model.decoder.layers[0].register_forward_pre_hook(
            lambda _m, args: seen.__setitem__("tgt", args[0])
        ),
    ]
    src, tgt = _ids((2, 5), 11, seed=12), _ids((2, 3), 13, seed=13)
    src[1, 4] = 0  # a pad token's embedding is the zero vector: only its position remains
    model(src, tgt)
    for hook in hooks:
        hook.remove()
    scale = math.sqrt(SMALL.d_model)  # 4
    pe = sinusoidal_encoding(SMALL.max_len, SMALL.d_model)
    expected_src = model.src_embedding.weight[src] * scale + pe[:5]
    expected_tgt = model.tgt_embedding.weight[tgt] * scale + pe[:3]
    torch.testing.assert_close(seen["src"], expected_src)
    torch.testing.assert_close(seen["tgt"], expected_tgt)
    torch.testing.assert_close(seen["src"][1, 4], pe[4])


def _parameter_formula(c: TransformerConfig) -> int:
    """Counted by hand from the paper's architecture."""
    d, d_ff = c.d_model, c.d_ff
    attention = 4 * (d * d + d)  # W_q, W_k, W_v, W_o with biases
    feed_forward = d * d_ff + d_ff + d_ff * d + d  # two linear maps with biases
    layer_norm = 2 * d  # gain and bias
    encoder_layer = attention + feed_forward + 2 * layer_norm
    decoder_layer = 2 * attention + feed_forward + 3 * layer_norm  # self- and cross-attention
    final_norms = 2 * layer_norm if c.norm_first else 0  # pre-norm stacks end in a LayerNorm
    # Sinusoids are not parameters; a shared source–target matrix is counted once.
    embeddings = (1 if c.share_embeddings else 2) * c.tgt_vocab_size * d
    embeddings += 0 if c.share_embeddings else (c.src_vocab_size - c.tgt_vocab_size) * d
    output = 0 if c.tie_embeddings else c.tgt_vocab_size * d  # no bias; tied = counted once
    return (
        embeddings
        + c.num_encoder_layers * encoder_layer
        + c.num_decoder_layers * decoder_layer
        + final_norms
        + output
    )


def test_parameter_count_of_the_paper_base_model() -> None:
    base = TransformerConfig(
        src_vocab_size=37000,
        tgt_vocab_size=37000,
        d_model=512,
        num_heads=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        d_ff=2048,
        tie_embeddings=True,
        norm_first=False,
    )
    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        model = Transformer(base)
        shared = Transformer(dataclasses.replace(base, share_embeddings=True))
    total = sum(p.numel() for p in model.parameters())
    assert total == _parameter_formula(base) == 82_026_496
    # The layers hold 44.1M; the paper shares one matrix three ways: 63.1M in all.
    assert total - 2 * 37000 * 512 == 44_138_496
    assert sum(p.numel() for p in shared.parameters()) == 63_082_496


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"tie_embeddings": True},
        {"norm_first": False, "num_encoder_layers": 3},
        {"d_ff": 8},
        {"src_vocab_size": 13, "share_embeddings": True},
        {"src_vocab_size": 13, "share_embeddings": True, "tie_embeddings": True},
    ],
)
def test_parameter_count_formula_on_small_models(changes: dict) -> None:
    config = dataclasses.replace(SMALL, **changes)
    model = Transformer(config)
    assert sum(p.numel() for p in model.parameters()) == _parameter_formula(config)


@pytest.mark.parametrize("norm_first", [True, False])
def test_attention_maps_shapes_and_masking(norm_first: bool) -> None:
    config = dataclasses.replace(SMALL, num_encoder_layers=3, norm_first=norm_first)
    torch.manual_seed(0)
    model = Transformer(config).eval()
    src = _ids((2, 6), 11, seed=14)
    src[0, 4:] = 0  # the first source has 4 real tokens
    tgt = _ids((2, 5), 13, seed=15)
    maps = model.attention_maps(src, tgt)
    assert isinstance(maps, AttentionMaps)
    assert len(maps.encoder) == 3
    assert len(maps.decoder_self) == len(maps.cross) == 2
    assert all(w.shape == (2, 4, 6, 6) for w in maps.encoder)
    assert all(w.shape == (2, 4, 5, 5) for w in maps.decoder_self)
    assert all(w.shape == (2, 4, 5, 6) for w in maps.cross)
    for w in (*maps.encoder, *maps.decoder_self, *maps.cross):
        assert not w.requires_grad
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    for w in (*maps.encoder, *maps.cross):
        assert (w[0, :, :, 4:] == 0).all()  # nobody attends to source padding
    for w in maps.decoder_self:
        assert (w.triu(diagonal=1) == 0).all()  # nor to the future


def test_dropout_is_active_in_training_only() -> None:
    model = _model(dropout=0.3)
    src, tgt = _ids((2, 4), 11, seed=16), _ids((2, 4), 13, seed=17)
    torch.testing.assert_close(model(src, tgt), model(src, tgt))
    model.train()
    assert not torch.allclose(model(src, tgt), model(src, tgt))


def test_bad_inputs() -> None:
    model = _model()
    src, tgt = _ids((2, 4), 11, seed=18), _ids((2, 3), 13, seed=19)
    with pytest.raises(ValueError, match=r"src holds ids outside \[0, 11\)"):
        model(torch.full((1, 3), 11), tgt[:1])
    with pytest.raises(ValueError, match=r"tgt holds ids outside \[0, 13\)"):
        model(src, torch.tensor([[1, -1, 2], [1, 2, 3]]))
    with pytest.raises(
        ValueError, match=r"src must hold 1 to 12 tokens \(max_len\), got shape \(1, 13\)"
    ):
        model(_ids((1, 13), 11, seed=20), tgt[:1])
    with pytest.raises(
        ValueError, match=r"tgt must hold 1 to 12 tokens \(max_len\), got shape \(2, 13\)"
    ):
        model(src, _ids((2, 13), 13, seed=21))
    with pytest.raises(TypeError, match=r"src must be integer token ids, got dtype torch\.float32"):
        model(src.float(), tgt)
    with pytest.raises(ValueError, match=r"tgt must have shape \(B, T\), got \(3,\)"):
        model(src, tgt[0])
    with pytest.raises(TypeError, match=r"tgt must be integer token ids, got dtype torch\.bool"):
        model(src, tgt > 2)
    with pytest.raises(
        ValueError, match=r"tgt must hold 1 to 12 tokens \(max_len\), got shape \(2, 0\)"
    ):
        model(src, tgt[:, :0])
    with pytest.raises(TypeError, match=r"src must be a torch\.Tensor, got list"):
        model.encode([[1, 2, 3]])
    memory, src_mask, _ = model.encode(src)
    with pytest.raises(ValueError, match=r"tgt must have shape \(B, T\), got \(3,\)"):
        model.decode(tgt[0], memory, src_mask)
    with pytest.raises(ValueError, match=r"memory must have shape \(B, T, 16\), got \(2, 4, 8\)"):
        model.decode(tgt, memory[..., :8], src_mask)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"d_model": 18, "num_heads": 4}, r"d_model \(18\) must be divisible by num_heads \(4\)"),
        ({"src_vocab_size": 0}, "src_vocab_size must be a positive int, got 0"),
        ({"d_ff": -1}, "d_ff must be a positive int, got -1"),
        ({"max_len": 0}, "max_len must be a positive int, got 0"),
        ({"num_heads": 0}, "num_heads must be a positive int, got 0"),
        ({"num_decoder_layers": 0}, "num_decoder_layers must be a positive int, got 0"),
        ({"dropout": -0.1}, r"dropout must be in \[0, 1\), got -0.1"),
        ({"pad_id": 13}, "pad_id must be a token id of both vocabularies, got 13"),
        ({"pad_id": -1}, "pad_id must be a token id of both vocabularies, got -1"),
    ],
)
def test_bad_config(changes: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(SMALL, **changes)
    with pytest.raises(TypeError, match="d_model must be an int, got float"):
        dataclasses.replace(SMALL, d_model=16.0)


def test_config_is_frozen_and_defaults_are_small() -> None:
    config = TransformerConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 8  # type: ignore[misc]
    assert config.norm_first and not config.tie_embeddings and config.pad_id == 0


def test_embeddings_start_at_unit_scale_after_the_sqrt_d_scaling() -> None:
    """Regression: torch's default std-1 init, times √d, drowned the positional encodings."""
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=500, tgt_vocab_size=500, d_model=64)
    model = Transformer(config)
    for embedding in (model.src_embedding, model.tgt_embedding):
        scaled_std = float(embedding.weight[1:].detach().std()) * config.d_model**0.5
        assert 0.9 < scaled_std < 1.1
        assert (embedding.weight[config.pad_id] == 0).all()
