"""BertModel against an independent float64 BERT written with plain tensor ops, plus properties."""

from __future__ import annotations

import math

import pytest
import torch

from attnlib import BertConfig, BertModel

SMALL = BertConfig(
    vocab_size=50, d_model=16, num_heads=4, num_layers=2, d_ff=24, max_len=12, dropout=0.0
)


def random_checkpoint(config: BertConfig, seed: int = 0) -> dict[str, torch.Tensor]:
    """Tensors under Hugging Face's BERT names, as a pretrained checkpoint has them."""
    g = torch.Generator().manual_seed(seed)
    c, f = config.d_model, config.d_ff

    def r(*shape: int, scale: float = 0.3) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * scale

    state = {
        "embeddings.word_embeddings.weight": r(config.vocab_size, c),
        "embeddings.position_embeddings.weight": r(config.max_len, c),
        "embeddings.token_type_embeddings.weight": r(config.type_vocab_size, c),
        "embeddings.LayerNorm.weight": 1 + r(c, scale=0.1),
        "embeddings.LayerNorm.bias": r(c, scale=0.1),
        "embeddings.position_ids": torch.arange(config.max_len)[None],
        "pooler.dense.weight": r(c, c),
        "pooler.dense.bias": r(c),
    }
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            state[p + f"attention.self.{name}.weight"] = r(c, c)
            state[p + f"attention.self.{name}.bias"] = r(c, scale=0.1)
        state[p + "attention.output.dense.weight"] = r(c, c)
        state[p + "attention.output.dense.bias"] = r(c, scale=0.1)
        state[p + "intermediate.dense.weight"] = r(f, c)
        state[p + "intermediate.dense.bias"] = r(f, scale=0.1)
        state[p + "output.dense.weight"] = r(c, f)
        state[p + "output.dense.bias"] = r(c, scale=0.1)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            state[p + f"{norm}.weight"] = 1 + r(c, scale=0.1)
            state[p + f"{norm}.bias"] = r(c, scale=0.1)
    return state


def reference_bert(
    state: dict[str, torch.Tensor],
    config: BertConfig,
    ids: torch.Tensor,
    real: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's forward pass from its definition, in float64: last hidden state and all weights."""
    s = {k: v.double() for k, v in state.items() if v.is_floating_point()}
    eps, heads = config.norm_eps, config.num_heads

    def norm(x: torch.Tensor, name: str) -> torch.Tensor:
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps) * s[name + ".weight"] + s[name + ".bias"]

    def linear(x: torch.Tensor, name: str) -> torch.Tensor:
        return x @ s[name + ".weight"].T + s[name + ".bias"]

    b, t = ids.shape
    x = s["embeddings.word_embeddings.weight"][ids]
    x = (
        x
        + s["embeddings.position_embeddings.weight"][:t]
        + s["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    all_weights = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        q, k, v = (
            linear(x, p + f"attention.self.{n}").view(b, t, heads, -1).transpose(1, 2)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~real[:, None, None, :], -math.inf)
        weights = scores.softmax(-1)
        all_weights.append(weights)
        heads_out = (weights @ v).transpose(1, 2).reshape(b, t, -1)
        x = norm(
            x + linear(heads_out, p + "attention.output.dense"), p + "attention.output.LayerNorm"
        )
        hidden = linear(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2)))  # exact GELU
        x = norm(x + linear(hidden, p + "output.dense"), p + "output.LayerNorm")
    return x, torch.stack(all_weights)


def loaded_model(config: BertConfig = SMALL, seed: int = 0) -> BertModel:
    model = BertModel(config).eval()
    model.load_huggingface_weights(random_checkpoint(config, seed))
    return model


@pytest.mark.parametrize("lengths", [[5], [7, 3], [12, 1, 6]], ids=["one", "two", "three"])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_float64_reference(lengths: list[int], seed: int) -> None:
    model = loaded_model(seed=seed)
    g = torch.Generator().manual_seed(seed)
    t = max(lengths)
    ids = torch.randint(0, SMALL.vocab_size, (len(lengths), t), generator=g)
    real = torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]
    out = model(ids, real)
    expected_hidden, expected_weights = reference_bert(
        random_checkpoint(SMALL, seed), SMALL, ids, real
    )
    torch.testing.assert_close(out.attentions.double(), expected_weights, atol=2e-6, rtol=0)
    torch.testing.assert_close(
        out.last_hidden_state[real].double(), expected_hidden[real], atol=2e-5, rtol=1e-5
    )


def test_output_shapes_and_layer_stack() -> None:
    model = loaded_model()
    ids = torch.randint(0, SMALL.vocab_size, (3, 7))
    out = model(ids)
    assert out.hidden_states.shape == (SMALL.num_layers + 1, 3, 7, SMALL.d_model)
    assert out.attentions.shape == (SMALL.num_layers, 3, SMALL.num_heads, 7, 7)
    assert torch.equal(out.hidden_states[-1], out.last_hidden_state)
    torch.testing.assert_close(out.hidden_states[0], model.embeddings(ids))


def test_weights_are_distributions_and_padding_gets_none() -> None:
    model = loaded_model()
    ids = torch.randint(0, SMALL.vocab_size, (2, 6))
    real = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    weights = model(ids, real).attentions
    assert torch.isfinite(weights).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    assert torch.all(weights[:, 1, :, :, 4:] == 0)


def test_padding_does_not_change_real_tokens() -> None:
    model = loaded_model()
    ids = torch.randint(1, SMALL.vocab_size, (1, 5))
    alone = model(ids).last_hidden_state
    padded_ids = torch.cat([ids, torch.randint(0, SMALL.vocab_size, (1, 4))], dim=1)
    real = torch.tensor([[True] * 5 + [False] * 4])
    padded = model(padded_ids, real).last_hidden_state
    torch.testing.assert_close(padded[:, :5], alone, atol=1e-6, rtol=0)


def test_every_token_sees_the_future() -> None:
    # An encoder is bidirectional: changing the last token changes the first one's vector.
    model = loaded_model()
    ids = torch.randint(0, SMALL.vocab_size, (1, 6))
    changed = ids.clone()
    changed[0, -1] = (changed[0, -1] + 1) % SMALL.vocab_size
    first, first_changed = (
        model(ids).last_hidden_state[0, 0],
        model(changed).last_hidden_state[0, 0],
    )
    assert not torch.allclose(first, first_changed)


def test_segment_ids_change_the_embedding() -> None:
    model = loaded_model()
    ids = torch.randint(0, SMALL.vocab_size, (1, 4))
    segments = torch.tensor([[0, 0, 1, 1]])
    assert not torch.allclose(
        model(ids).last_hidden_state, model(ids, None, segments).last_hidden_state
    )


def test_load_refuses_incomplete_or_foreign_checkpoints() -> None:
    model = BertModel(SMALL)
    state = random_checkpoint(SMALL)
    missing = dict(state)
    del missing["encoder.layer.1.output.dense.bias"]
    with pytest.raises(KeyError, match="lacks 1 tensors"):
        model.load_huggingface_weights(missing)
    with pytest.raises(KeyError, match="no place for"):
        model.load_huggingface_weights({**state, "cls.predictions.bias": torch.zeros(3)})
    wrong = {**state, "embeddings.word_embeddings.weight": torch.zeros(49, SMALL.d_model)}
    with pytest.raises(ValueError, match="has shape"):
        model.load_huggingface_weights(wrong)
    # A checkpoint saved from a model with a head prefixes the encoder's names with "bert.".
    model.load_huggingface_weights({f"bert.{k}": v for k, v in state.items()})


def test_config_from_huggingface() -> None:
    hf = {
        "model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute",
        "vocab_size": 30522, "hidden_size": 384, "num_attention_heads": 12,
        "num_hidden_layers": 6, "intermediate_size": 1536, "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
    }  # fmt: skip
    config = BertConfig.from_huggingface(hf)
    assert config == BertConfig() and config.d_head == 32
    with pytest.raises(ValueError, match="hidden_act"):
        BertConfig.from_huggingface({**hf, "hidden_act": "relu"})
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(d_model=10, num_heads=3)


def test_bad_input() -> None:
    model = loaded_model()
    ids = torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(
        TypeError, match=r"input_ids must be integer token ids, got dtype torch\.float32"
    ):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"input_ids must have shape \(B, T\), got \(3,\)"):
        model(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"input_ids holds ids outside \[0, 50\)"):
        model(torch.full((1, 3), 50))
    with pytest.raises(ValueError, match=r"input_ids must hold 1 to 12 tokens \(max_len\)"):
        model(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="attention_mask must have the shape of input_ids"):
        model(ids, torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"attention_mask must be a bool torch\.Tensor"):
        model(ids, torch.ones(1, 3))
    with pytest.raises(ValueError, match=r"token_type_ids holds ids outside \[0, 2\)"):
        model(ids, None, torch.full((1, 3), 2))
    with pytest.raises(ValueError, match="token_type_ids must have the shape of input_ids"):
        model(ids, None, torch.zeros(1, 4, dtype=torch.long))
    model(ids.int())  # any integer dtype the embedding takes


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"d_model": 10, "num_heads": 3}, ValueError, r"d_model \(10\) must be divisible"),
        ({"max_len": 0}, ValueError, "max_len must be a positive int, got 0"),
        ({"type_vocab_size": 0}, ValueError, "type_vocab_size must be a positive int, got 0"),
        ({"norm_eps": 0.0}, ValueError, "norm_eps must be positive"),
        ({"dropout": 1.5}, ValueError, r"dropout must be in \[0, 1\)"),
        ({"num_layers": 2.0}, TypeError, "num_layers must be an int, got float"),
    ],
)
def test_bad_config(changes: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        BertConfig(**changes)


def test_hugging_face_names_cover_every_parameter() -> None:
    names = BertModel(SMALL).parameter_names_in_huggingface()
    assert (
        names["encoder.layers.1.norm_1.weight"]
        == "encoder.layer.1.attention.output.LayerNorm.weight"
    )
    assert names["encoder.layers.0.norm_2.bias"] == "encoder.layer.0.output.LayerNorm.bias"
    assert set(names) == {name for name, _ in BertModel(SMALL).named_parameters()}
