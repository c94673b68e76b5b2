"""Inputs are checked once, at the public door: the layers inside a checked call trust it.

Each test counts the calls of a layer's own check (wrapped, not replaced: it still runs) and
asserts how often it ran: once per public call when the layer is called on its own, never
when a model's door has checked the inputs already.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import pytest
import torch

import attnlib.feed_forward
import attnlib.kv_cache
import attnlib.sampling
import attnlib.transformer
from attnlib import (
    GPT,
    BertConfig,
    BertModel,
    Decoder,
    Encoder,
    GPTConfig,
    KVCache,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    beam_search,
    causal_mask,
)
from attnlib._validate import at_the_door, inputs_checked
from attnlib.sampling import next_token_probs, sample_next_token

GPT_CONFIG = GPTConfig(vocab_size=13, max_len=16, d_model=8, num_heads=2, num_layers=3, dropout=0)


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Wrap ``owner.name`` so that each call is counted; the wrapped check still runs."""
    calls: list[int] = []
    original: Callable = getattr(owner, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _gpt() -> GPT:
    torch.manual_seed(0)
    return GPT(GPT_CONFIG).eval()


def test_the_door_is_open_outside_a_checked_call_and_closed_inside_it() -> None:
    assert at_the_door()
    with inputs_checked():
        assert not at_the_door()
        with inputs_checked():
            assert not at_the_door()
        assert not at_the_door()  # a nested call leaves the outer one checked
    assert at_the_door()


def test_the_door_opens_again_after_an_error_inside() -> None:
    with pytest.raises(RuntimeError), inputs_checked():
        raise RuntimeError("inside")
    assert at_the_door()


def test_another_thread_checks_its_own_inputs() -> None:
    seen: list[bool] = []
    with inputs_checked():
        thread = threading.Thread(target=lambda: seen.append(at_the_door()))
        thread.start()
        thread.join()
    assert seen == [True]


def test_multi_head_attention_on_its_own_checks_once_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    mha = MultiHeadAttention(8, 2)
    mha(torch.randn(1, 3, 8))
    assert len(calls) == 1
    with pytest.raises(ValueError, match=r"query must have shape \(B, T, 8\)"):
        mha(torch.randn(1, 3, 6))


def test_gpt_forward_checks_at_its_door_and_no_layer_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attention = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    feed_forward = _counting(monkeypatch, attnlib.feed_forward, "require_width")
    model = _gpt()
    model(torch.randint(0, 13, (2, 5)))
    model.loss(torch.randint(0, 13, (2, 6)))
    model.attention_weights(torch.randint(0, 13, (2, 5)))
    assert attention == [] and feed_forward == []
    block = model.blocks[0]  # the same layers, called on their own, check at their door
    block(torch.randn(2, 5, 8), causal_mask(5))
    assert len(attention) == 1 and len(feed_forward) == 1


@pytest.mark.parametrize("use_cache", [True, False])
def test_generate_checks_its_arguments_once_not_every_step(
    monkeypatch: pytest.MonkeyPatch, use_cache: bool
) -> None:
    attention = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    cache = _counting(monkeypatch, attnlib.kv_cache, "_require_appendable")
    settings = _counting(monkeypatch, attnlib.sampling, "_require_sampler_arguments")
    generator = torch.Generator().manual_seed(0)
    idx = torch.tensor([[1, 2]])
    out = _gpt().generate(idx, 6, top_k=5, use_cache=use_cache, generator=generator)
    assert out.shape == (1, 8)
    assert attention == [] and cache == [] and settings == []


def test_a_cache_used_on_its_own_checks_every_append() -> None:
    cache = KVCache()
    cache.append(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    with pytest.raises(TypeError, match=r"cannot be appended to a cache that holds torch\.float32"):
        cache.append(torch.randn(1, 2, 1, 4).double(), torch.randn(1, 2, 1, 4).double())
    assert len(cache) == 3  # the rejected step stored nothing


def test_generate_refuses_what_the_sampler_at_its_door_would() -> None:
    model, idx = _gpt(), torch.tensor([[1, 2]])
    with pytest.raises(ValueError, match="temperature must be >= 0 and finite, got inf"):
        model.generate(idx, 2, temperature=math.inf)
    with pytest.raises(TypeError, match=r"generator must be a torch\.Generator or None, got int"):
        model.generate(idx, 2, generator=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\], got 0"):
        model.generate(idx, 2, top_p=0)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_one_rule_for_nan_logits_in_generate_and_in_the_sampler(temperature: float) -> None:
    model = _gpt()
    with torch.no_grad():
        model.head.weight.fill_(math.nan)  # a model whose weights went NaN
    with pytest.raises(ValueError, match=r"logits holds NaN"):
        model.generate(torch.tensor([[1, 2]]), 3, temperature=temperature)
    nan_logits = torch.tensor([[0.5, math.nan, 1.0]])
    with pytest.raises(ValueError, match=r"logits holds NaN \(1 of 3 values"):
        sample_next_token(nan_logits, temperature)
    with pytest.raises(ValueError, match=r"logits holds NaN \(1 of 3 values"):
        next_token_probs(nan_logits, temperature)


@pytest.mark.parametrize(
    ("logits", "match"),
    [
        ([[0.5, math.inf, 1.0]], r"logits holds \+inf \(1 of 3 values"),
        ([[0.5, 1.0], [-math.inf, -math.inf]], r"logits has 1 row\(s\) .* logits\[1, :\]"),
    ],
)
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_sample_next_token_refuses_logits_with_no_distribution(
    logits: list, match: str, temperature: float
) -> None:
    with pytest.raises(ValueError, match=match):
        sample_next_token(torch.tensor(logits), temperature)


def _transformer() -> Transformer:
    config = TransformerConfig(
        src_vocab_size=11, tgt_vocab_size=13, d_model=8, num_heads=2,
        num_encoder_layers=2, num_decoder_layers=2, d_ff=16, max_len=10,
    )  # fmt: skip
    torch.manual_seed(0)
    return Transformer(config).eval()


def test_transformer_forward_reads_each_id_once(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    original = attnlib.transformer.require_token_ids

    def counted(name: str, *args: object) -> torch.Tensor:
        read.append(name)
        return original(name, *args)

    monkeypatch.setattr(attnlib.transformer, "require_token_ids", counted)
    attention = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    model = _transformer()
    src, tgt = torch.randint(3, 10, (2, 5)), torch.randint(3, 10, (2, 4))
    model(src, tgt)
    assert read == ["src", "tgt"] and attention == []
    read.clear()
    model.attention_maps(src, tgt)
    assert read == ["src", "tgt"] and attention == []
    read.clear()
    memory, src_mask, _ = model.encode(src)  # on their own, each checks its own ids
    model.decode(tgt, memory, src_mask)
    assert read == ["src", "tgt"] and attention == []


def test_beam_search_checks_the_source_once_not_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = _counting(monkeypatch, Transformer, "_require_ids")
    beam_search(_transformer(), torch.randint(3, 10, (2, 5)), 1, 2, 6, beam_size=2)
    assert len(checks) == 1


def test_the_encoder_and_decoder_check_their_masks_once(monkeypatch: pytest.MonkeyPatch) -> None:
    attention = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    encoder, decoder = Encoder(3, 8, 2, 16), Decoder(3, 8, 2, 16)
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 4, 8)
    encoder(x, torch.ones(2, 1, 1, 3, dtype=torch.bool))
    decoder(x, memory, causal_mask(3), torch.ones(2, 1, 1, 4, dtype=torch.bool))
    assert attention == []
    with pytest.raises(
        ValueError, match=r"^mask of shape \(2, 1, 1, 4\) does not broadcast to the attention "
        r"scores of shape \(2, 2, 3, 3\)"
    ):  # fmt: skip
        encoder(x, torch.ones(2, 1, 1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"^memory_mask of shape \(2, 1, 1, 3\) does not"):
        decoder(x, memory, None, torch.ones(2, 1, 1, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"^self_mask must be a bool torch.Tensor"):
        decoder(x, memory, torch.ones(3, 3))


def test_bert_checks_at_its_door_and_no_layer_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attention = _counting(monkeypatch, MultiHeadAttention, "_require_inputs")
    config = BertConfig(vocab_size=20, d_model=8, num_heads=2, num_layers=2, d_ff=16, max_len=8)
    out = BertModel(config).eval()(torch.randint(0, 20, (2, 5)))
    assert out.last_hidden_state.shape == (2, 5, 8) and attention == []
