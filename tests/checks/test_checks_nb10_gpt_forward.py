"""Notebook 10, Exercise 2: the forward-pass checker against its table of mistakes.

Each mistake is written here again, as a learner would write it (not the table's function), and
must be caught and named; right forward passes written differently from the worked solution
must pass; one that hands its work to the model's own forward pass must be refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb10_gpt import forward
from attnlib.course.char_gpt import forward_pass

Tensor = torch.Tensor


def right(gpt, idx):  # type: ignore[no-untyped-def]
    T = idx.shape[1]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(T))
    x = gpt.dropout(x)
    mask = attnlib.causal_mask(T)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


def right_by_hand(gpt, idx):  # type: ignore[no-untyped-def]
    """Right: the rows sliced from the table, a mask of its own, F.linear on the shared matrix."""
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding.weight[:t])
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for i in range(len(gpt.blocks)):
        x = gpt.blocks[i](x, mask=mask)[0]
    return F.linear(gpt.final_norm(x), gpt.token_embedding.weight)


def right_with_devices(gpt, idx):  # type: ignore[no-untyped-def]
    """Right: positions on idx's device, one position row per batch row, the head's weight."""
    positions = torch.arange(idx.size(1), device=idx.device).expand_as(idx)  # (B, T)
    h = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(positions))
    causal = attnlib.causal_mask(idx.size(1)).to(idx.device)
    for layer in gpt.blocks:
        h, _ = layer(h, causal)
    return gpt.final_norm(h) @ gpt.head.weight.T


RIGHT: dict[str, Callable[..., Any]] = {
    "as most learners write it": right,
    "sliced rows, tril, F.linear": right_by_hand,
    "positions per row, the head's weight": right_with_devices,
}


def _body(gpt, x, mask=None, *, per_block=None, feed="stream"):  # type: ignore[no-untyped-def]
    first = x
    for block in gpt.blocks:
        m = per_block(x.shape[1]) if per_block else mask
        if feed == "stream":
            x, _ = block(x, m)
        elif feed == "embeddings":
            x, _ = block(first, m)
        elif feed == "pair":
            x = block(x, m)
        elif feed == "norm each":
            x = gpt.final_norm(block(x, m)[0])
        else:
            _, x = block(x, m)
    return x


def _embed(gpt, idx):  # type: ignore[no-untyped-def]
    return gpt.dropout(
        gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
    )


def no_positions(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.dropout(gpt.token_embedding(idx))
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def whole_table(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding.weight)
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def from_one(gpt, idx):  # type: ignore[no-untyped-def]
    t = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(1, t + 1)))
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(t))))


def ids_as_positions(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(idx))
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def with_mask(make):  # type: ignore[no-untyped-def]
    def fn(gpt, idx):  # type: ignore[no-untyped-def]
        return gpt.head(gpt.final_norm(_body(gpt, _embed(gpt, idx), make(gpt, idx.shape[1]))))

    return fn


def with_end(end):  # type: ignore[no-untyped-def]
    def fn(gpt, idx):  # type: ignore[no-untyped-def]
        return end(gpt, _body(gpt, _embed(gpt, idx), attnlib.causal_mask(idx.shape[1])))

    return fn


def feeding(feed):  # type: ignore[no-untyped-def]
    def fn(gpt, idx):  # type: ignore[no-untyped-def]
        x = _body(gpt, _embed(gpt, idx), attnlib.causal_mask(idx.shape[1]), feed=feed)
        return gpt.head(gpt.final_norm(x))

    return fn


def no_embedding_dropout(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def functional_dropout(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
    x = F.dropout(x, p=gpt.config.dropout)
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def dropout_before_head(gpt, idx):  # type: ignore[no-untyped-def]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
    x = _body(gpt, x, attnlib.causal_mask(idx.shape[1]))
    return gpt.head(gpt.dropout(gpt.final_norm(x)))


def mask_per_block(gpt, idx):  # type: ignore[no-untyped-def]
    def build(t: int) -> Tensor:
        return torch.tril(torch.ones(t, t, dtype=torch.bool))

    return gpt.head(gpt.final_norm(_body(gpt, _embed(gpt, idx), per_block=build)))


def own_head(gpt, idx):  # type: ignore[no-untyped-def]
    x = _body(gpt, _embed(gpt, idx), attnlib.causal_mask(idx.shape[1]))
    lm_head = nn.Linear(gpt.config.d_model, gpt.config.vocab_size).double()
    return lm_head(gpt.final_norm(x))


def own_float32_head(gpt, idx):  # type: ignore[no-untyped-def]
    x = _body(gpt, _embed(gpt, idx), attnlib.causal_mask(idx.shape[1]))
    return nn.Linear(gpt.config.d_model, gpt.config.vocab_size, bias=False)(gpt.final_norm(x))


def own_positions(gpt, idx):  # type: ignore[no-untyped-def]
    pos = nn.Embedding(gpt.config.max_len, gpt.config.d_model).to(torch.float64)
    x = gpt.dropout(gpt.token_embedding(idx) + pos(torch.arange(idx.shape[1])))
    return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))


def _causal(gpt, t):  # type: ignore[no-untyped-def]
    return attnlib.causal_mask(t)


WRONG: dict[str, tuple[Callable[..., Any], str]] = {
    "no positions": (no_positions, "left out the position embedding"),
    "whole table": (whole_table, "the whole position table"),
    "from one": (from_one, "from 1 instead of 0"),
    "ids as positions": (ids_as_positions, "token ids up in the position embedding"),
    "inverted": (with_mask(lambda g, t: torch.triu(torch.ones(t, t, dtype=torch.bool), 1)),
                 "inverted the causal mask"),
    "no mask": (with_mask(lambda g, t: None), "passed no mask"),
    "future": (with_mask(lambda g, t: torch.ones(t, t, dtype=torch.bool).triu()),
               "itself and the future"),
    "max_len mask": (with_mask(lambda g, t: attnlib.causal_mask(g.config.max_len)),
                     "for max_len positions"),
    "no final norm": (with_end(lambda g, x: g.head(x)), "left out the final LayerNorm"),
    "head first": (with_end(lambda g, x: g.final_norm(g.head(x))), "head before the final"),
    "own norm": (with_end(lambda g, x: g.head(F.layer_norm(x, x.shape[-1:]))),
                 "a new nn.LayerNorm"),
    "softmax": (with_end(lambda g, x: F.softmax(g.head(g.final_norm(x)), dim=-1)),
                "applied a softmax"),
    "log_softmax": (with_end(lambda g, x: F.log_softmax(g.head(g.final_norm(x)), -1)),
                    "log-probabilities"),
    "last position": (with_end(lambda g, x: g.head(g.final_norm(x[:, -1]))), "last position's"),
    "no dropout": (no_embedding_dropout, "left out the dropout after the embeddings"),
    "F.dropout": (functional_dropout, "default training=True"),
    "dropout before the head": (dropout_before_head, "dropout before the head"),
    "embeddings each block": (feeding("embeddings"), "fed every block the embeddings"),
    "pair as stream": (feeding("pair"), "kept the block's pair"),
    "weights as stream": (feeding("weights"), "kept the attention weights"),
    "final norm in the loop": (feeding("norm each"), "after every block"),
    "mask per block": (mask_per_block, "a new causal mask for every block"),
    "own head": (own_head, "a new nn.Linear as the head"),
    "own float32 head": (own_float32_head, "a new nn.Linear as the head"),
    "own positions": (own_positions, "a new nn.Embedding"),
}  # fmt: skip


@pytest.mark.parametrize("name", RIGHT)
def test_right_forward_passes_pass(name: str) -> None:
    report = checks.check_my_gpt_forward(RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", WRONG)
def test_each_forward_mistake_is_caught_and_named(name: str) -> None:
    fn, words = WRONG[name]
    report = str(checks.check_my_gpt_forward(fn))
    mistake = report.split("The mistake: ", 1)[-1].split("\n")[0] if "The mistake" in report else ""
    assert words in mistake, report


@pytest.mark.slow
def test_every_mistake_of_the_table_is_named_when_made() -> None:
    for mistake in known_mistakes("ex2_my_gpt_forward"):
        report = checks.check_my_gpt_forward(mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


def test_every_mistake_of_the_table_is_also_written_again_here() -> None:
    words = [w for _, w in WRONG.values()]
    for mistake in known_mistakes("ex2_my_gpt_forward"):
        assert any(w in mistake.name for w in words), mistake.name


@pytest.mark.parametrize(
    "cheat",
    [lambda gpt, idx: gpt(idx), lambda gpt, idx: gpt.forward(idx), forward_pass],
    ids=["gpt(idx)", "gpt.forward", "attnlib's forward_pass"],
)
def test_a_forward_that_hands_its_work_to_attnlibs_is_refused(cheat: Callable[..., Any]) -> None:
    report = checks.check_my_gpt_forward(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_a_stub_is_not_done_and_a_crash_is_reported() -> None:
    def stub(gpt, idx):  # type: ignore[no-untyped-def]
        """The logits."""
        raise NotImplementedError()

    assert not checks.check_my_gpt_forward(stub).done

    def crashes(gpt, idx):  # type: ignore[no-untyped-def]
        return gpt.head(gpt.token_embedding(idx).transpose(1, 2))

    report = str(checks.check_my_gpt_forward(crashes))
    assert "raised" in report and "Traceback" not in report
    assert "expected a function" in str(checks.check_my_gpt_forward(42))


def test_an_unknown_mistake_gets_the_property_it_breaks_and_the_idea() -> None:
    def leaks(gpt, idx):  # type: ignore[no-untyped-def]
        x = _embed(gpt, idx)
        x = x + x.mean(dim=1, keepdim=True)  # every position sees the average of all of them
        return gpt.head(gpt.final_norm(_body(gpt, x, attnlib.causal_mask(idx.shape[1]))))

    report = str(checks.check_my_gpt_forward(leaks))
    assert "a later token reaches an earlier one" in report
    assert "The idea:" in report and "not one of the usual mistakes" in report


def test_the_cases_cover_short_texts_the_whole_context_and_training_mode() -> None:
    lengths = {case.idx.shape[1] for case in forward.cases()}
    assert {1, forward.CONFIG.max_len} <= lengths and min(lengths - {1}) < forward.CONFIG.max_len
    assert any(case.training for case in forward.cases()) and forward.CONFIG.dropout > 0
    gpt = forward.model()
    assert gpt.head.weight is gpt.token_embedding.weight  # tied, in float64 too
    assert gpt.config.vocab_size != gpt.config.d_model  # a head before the norm cannot fit


def test_the_check_leaves_the_notebooks_random_numbers_alone() -> None:
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    assert checks.check_my_gpt_forward(right).passed
    assert not checks.check_my_gpt_forward(no_positions).passed
    assert torch.equal(torch.rand(3), before)


def test_no_hint_or_report_prints_code() -> None:
    exercise = checks.check_my_gpt_forward.exercise
    texts = [*exercise.hints[:2], *(m.name + m.why for m in known_mistakes(exercise.id))]
    for text in texts:
        for code in ("torch.arange(", "block(x, mask)", "[0]", "= gpt.", "for block in"):
            assert code not in text, (code, text)
