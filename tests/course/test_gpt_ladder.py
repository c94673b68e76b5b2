"""The ladder of notebook 10 (attnlib.course.gpt_ladder): each rung's model has the shapes it
promises, never lets a later token reach an earlier position, and grows by the part it names;
the top rung is attnlib's GPT; training a rung is repeatable and keeps its model; the counted
bigram is the best a table of bigram probabilities does; the weight a rung's heads give the
current character is the mean diagonal of its attention weights."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib.course import gpt_ladder
from attnlib.course.char_gpt import forward_pass
from attnlib.course.gpt_ladder import RUNGS, LadderConfig

V = 13
CONFIG = LadderConfig(context=6, d_model=8, num_heads=2, steps=5, batch_size=4, val_windows=16)


def _model(rung: str) -> torch.nn.Module:
    torch.manual_seed(0)
    with attnlib._device.default_dtype(torch.float64):
        return gpt_ladder.build(rung, V, CONFIG).eval()


@pytest.mark.parametrize("rung", RUNGS)
def test_every_rung_gives_next_token_logits(rung: str) -> None:
    idx = torch.randint(V, (3, CONFIG.context))
    assert _model(rung)(idx).shape == (3, CONFIG.context, V)
    assert _model(rung)(idx[:, :2]).shape == (3, 2, V)


@pytest.mark.parametrize("rung", RUNGS)
def test_no_rung_lets_a_later_token_change_an_earlier_logit(rung: str) -> None:
    model = _model(rung)
    idx = torch.randint(V, (2, CONFIG.context), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        base = model(idx)
        for t in range(CONFIG.context - 1):
            changed = idx.clone()
            changed[:, t + 1 :] = (changed[:, t + 1 :] + 1) % V
            out = model(changed)
            assert torch.equal(out[:, : t + 1], base[:, : t + 1]), (rung, t)
            if rung != "bigram":  # a bigram's position t + 1 sees only its own token
                assert not torch.equal(out[:, t + 1 :], base[:, t + 1 :]), (rung, t)


def test_each_rung_adds_the_part_it_names() -> None:
    one, several, ffn, block = (_model(r) for r in RUNGS[1:])
    assert isinstance(_model("bigram"), gpt_ladder.Bigram)
    assert [a.num_heads for a in one.attention] == [1] and not one.feed_forward
    assert [a.num_heads for a in several.attention] == [CONFIG.num_heads]
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(one) == count(several)  # heads split the same projections
    assert len(ffn.feed_forward) == CONFIG.num_layers
    assert isinstance(block, attnlib.GPT) and block.config == gpt_ladder.gpt_config(V, CONFIG)
    assert block.head.weight is block.token_embedding.weight  # tied, as the lower rungs' heads


def test_the_top_rung_is_attnlibs_gpt_and_computes_what_the_forward_pass_does() -> None:
    # float64: the ladder's top rung, notebook 10's GPT and the written-out forward pass agree.
    block = _model("residuals and LayerNorm")
    gpt = attnlib.GPT(gpt_ladder.gpt_config(V, CONFIG)).double().eval()
    gpt.load_state_dict(block.state_dict())
    idx = torch.randint(V, (2, CONFIG.context))
    with torch.no_grad():
        torch.testing.assert_close(block(idx), gpt(idx), rtol=0, atol=0)
        torch.testing.assert_close(forward_pass(gpt, idx), gpt(idx), rtol=1e-12, atol=1e-12)


def test_the_one_head_rung_is_attention_over_the_embeddings_and_the_tied_head() -> None:
    # Its layer is attnlib's MultiHeadAttention with one head, unchanged: the same output as
    # attnlib's SelfAttention with W^O folded in, computed here from the formula.
    model = _model("one head")
    idx = torch.randint(V, (2, CONFIG.context))
    x = model.token_embedding(idx) + model.position_embedding(torch.arange(CONFIG.context))
    a = model.attention[0]
    q, k, v = a.w_q(x), a.w_k(x), a.w_v(x)
    scores = q @ k.transpose(-2, -1) / math.sqrt(CONFIG.d_model)
    scores = scores.masked_fill(~attnlib.causal_mask(CONFIG.context), float("-inf"))
    out = a.w_o(scores.softmax(dim=-1) @ v)
    with torch.no_grad():
        torch.testing.assert_close(model(idx), out @ model.token_embedding.weight.T)


def test_training_a_rung_is_repeatable_and_lowers_its_loss() -> None:
    g = torch.Generator().manual_seed(0)
    train, val = torch.randint(V, (400,), generator=g), torch.randint(V, (100,), generator=g)
    config = replace(CONFIG, steps=30)
    first = gpt_ladder.train_rung("several heads", train, val, V, config)
    again = gpt_ladder.train_rung("several heads", train, val, V, config)
    assert (first.val_loss, first.train_loss) == (again.val_loss, again.train_loss)
    assert first.parameters == sum(p.numel() for p in _model("several heads").parameters())
    assert first.val_loss < math.log(V) + 0.05  # from about ln V (random text: it stays near)


def test_the_whole_ladder_is_climbed_in_order() -> None:
    g = torch.Generator().manual_seed(0)
    train, val = torch.randint(V, (300,), generator=g), torch.randint(V, (60,), generator=g)
    rungs = gpt_ladder.climb(train, val, V, replace(CONFIG, steps=2))
    assert [r.name for r in rungs] == list(RUNGS)
    assert all(r.seconds >= 0 and math.isfinite(r.val_loss) for r in rungs)


def test_an_unknown_rung_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="rung must be one of"):
        gpt_ladder.build("two heads", V)


def test_the_counted_bigram_is_the_best_table_of_bigram_probabilities() -> None:
    # On its own training text, the counted probabilities (no smoothing to speak of) give the
    # lowest cross-entropy any bigram table can: a trained table only comes close to it.
    g = torch.Generator().manual_seed(0)
    data = torch.randint(5, (2000,), generator=g) % torch.randint(1, 6, (2000,), generator=g)
    windows = data[None]  # (1, N): every pair of the text, once
    counted = gpt_ladder.bigram_counts_loss(data, windows, 5, smoothing=1e-9)
    table = torch.zeros(5, 5, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([table], lr=0.1)
    for _ in range(300):
        loss = F.cross_entropy(table[windows[:, :-1]].reshape(-1, 5), windows[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert counted <= loss.item() + 1e-6 and loss.item() - counted < 1e-3


def test_a_trained_rung_keeps_its_model_out_of_its_figures() -> None:
    g = torch.Generator().manual_seed(0)
    train, val = torch.randint(V, (300,), generator=g), torch.randint(V, (60,), generator=g)
    rung = gpt_ladder.train_rung("one head", train, val, V, replace(CONFIG, steps=2))
    assert isinstance(rung.model, gpt_ladder.AttentionStack) and not rung.model.training
    assert set(rung.figures()) == {"name", "parameters", "val_loss", "train_loss", "seconds"}
    assert "model" not in repr(rung)


def test_own_position_weights_are_the_mean_diagonal_of_the_first_layers_weights() -> None:
    model = _model("several heads")
    windows = torch.randint(V, (3, CONFIG.context + 1), generator=torch.Generator().manual_seed(2))
    idx = windows[:, :-1]
    x = model.token_embedding(idx) + model.position_embedding(torch.arange(CONFIG.context))
    with torch.no_grad():
        _, weights = model.attention[0](x, mask=attnlib.causal_mask(CONFIG.context))
    diagonal = [weights[:, :, t, t] for t in range(1, CONFIG.context)]  # positions 1 to T - 1
    expected = torch.stack(diagonal, dim=-1).mean(dim=(0, 2))  # (H,)
    found = gpt_ladder.own_position_weights(model, windows)
    assert found.shape == (CONFIG.num_heads,)
    torch.testing.assert_close(found, expected)
    assert ((found > 0) & (found < 1)).all()


def test_own_position_weights_refuse_a_rung_without_an_attention_stack() -> None:
    windows = torch.randint(V, (2, CONFIG.context + 1))
    with pytest.raises(TypeError, match="AttentionStack"):
        gpt_ladder.own_position_weights(_model("bigram"), windows)
