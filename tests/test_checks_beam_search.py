"""Beam search with GNMT's penalty: attnlib's batched one, the plain reference, the checker."""

from __future__ import annotations

import math

import pytest
import torch

import attnlib
from attnlib import checks
from attnlib.checks.beam_search import MISTAKES, BeamRules, reference_beam_search
from attnlib.course.hand_set import BOS, EOS, HandSetTranslator, next_token_probs

TOY_SRC = torch.zeros(1, 1, dtype=torch.long)


def _until_eos(ids: list[int], eos: int) -> list[int]:
    return ids[: ids.index(eos) + 1] if eos in ids else ids


@pytest.fixture(scope="module")
def random_translator() -> attnlib.Transformer:
    """An untrained float64 Transformer: its outputs end at all sorts of lengths."""
    torch.manual_seed(3)
    config = attnlib.TransformerConfig(
        src_vocab_size=9, tgt_vocab_size=6, d_model=16, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=10, pad_id=0,
    )  # fmt: skip
    model = attnlib.Transformer(config).double().eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.7)  # confident, varied next-token choices
    return model


@pytest.mark.parametrize("penalty", ["gnmt", "power"])
@pytest.mark.parametrize("beam_size", [1, 2, 3, 4])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 2.0])
def test_the_reference_equals_attnlibs_batched_beam_search_on_the_toy(
    penalty: str, beam_size: int, alpha: float
) -> None:
    toy = HandSetTranslator()
    out, score = attnlib.beam_search_with_scores(
        toy, TOY_SRC, BOS, EOS, 6, beam_size, alpha, penalty
    )
    tokens, expected = reference_beam_search(
        toy, TOY_SRC, BOS, EOS, 6, beam_size, alpha, BeamRules(penalty=penalty)
    )
    assert _until_eos(out[0].tolist(), EOS) == tokens
    assert math.isclose(score.item(), expected, rel_tol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("beam_size", [1, 3])
def test_the_reference_equals_attnlibs_batched_beam_search_on_a_transformer(
    random_translator: attnlib.Transformer, seed: int, beam_size: int
) -> None:
    src = torch.randint(1, 9, (3, 5), generator=torch.Generator().manual_seed(seed))
    out, scores = attnlib.beam_search_with_scores(
        random_translator, src, 1, 2, 8, beam_size, 0.6, "gnmt"
    )
    for row in range(3):
        tokens, expected = reference_beam_search(
            random_translator, src[row : row + 1], 1, 2, 8, beam_size, 0.6
        )
        assert _until_eos(out[row].tolist(), 2) == tokens
        assert math.isclose(scores[row].item(), expected, rel_tol=1e-9)
    assert attnlib.beam_search(random_translator, src, 1, 2, 8, beam_size).shape[0] == 3


def test_gnmts_penalty_by_hand_on_the_toy() -> None:
    want = [4, 4, 4, 4, EOS]  # B B B B <eos>
    log_p = sum(math.log(next_token_probs([BOS, *want[:t]])[want[t]]) for t in range(len(want)))
    out, score = attnlib.beam_search_with_scores(
        HandSetTranslator(), TOY_SRC, BOS, EOS, 6, 2, 0.6, penalty="gnmt"
    )
    assert _until_eos(out[0].tolist(), EOS) == want
    # (1e-9: the toy gives every other token 1e-12, so its rows sum to 1 + 3e-12)
    assert math.isclose(score.item(), log_p / ((5 + 5) / 6) ** 0.6, rel_tol=1e-9)
    greedy = attnlib.greedy_decode(HandSetTranslator(), TOY_SRC, BOS, EOS, 6)
    assert _until_eos(greedy[0].tolist(), EOS) == [3, EOS]  # A <eos>: greedy misses it


def test_a_bad_penalty_is_refused() -> None:
    with pytest.raises(ValueError, match="penalty must be one of"):
        attnlib.beam_search(HandSetTranslator(), TOY_SRC, BOS, EOS, 6, penalty="wu")
    with pytest.raises(TypeError, match="penalty must be a str"):
        attnlib.beam_search(HandSetTranslator(), TOY_SRC, BOS, EOS, 6, penalty=1)  # type: ignore[arg-type]


def _right(model, src, bos, eos, max_len, beam_size, alpha):  # type: ignore[no-untyped-def]
    return reference_beam_search(model, src, bos, eos, max_len, beam_size, alpha)


def test_the_checker_passes_a_right_beam_search_with_and_without_the_translator() -> None:
    from attnlib.course.date_translator import load_reference_translator

    assert checks.check_beam_search(_right).passed
    result = checks.check_beam_search(_right, load_reference_translator())
    assert result.passed and "all 7 cases" in result.message, result.message


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_checker_names_each_mistake(mistake: str) -> None:
    def wrong(model, src, bos, eos, max_len, beam_size, alpha):  # type: ignore[no-untyped-def]
        return reference_beam_search(
            model, src, bos, eos, max_len, beam_size, alpha, MISTAKES[mistake]
        )

    result = checks.check_beam_search(wrong)
    assert not result.passed
    assert f"likely cause: {mistake}" in result.message, result.message


def test_the_checker_explains_greedy_a_crash_a_bad_return_and_a_stub() -> None:
    def greedy(model, src, bos, eos, max_len, beam_size, alpha):  # type: ignore[no-untyped-def]
        return _right(model, src, bos, eos, max_len, 1, alpha)

    result = checks.check_beam_search(greedy)
    assert not result.passed and "beam 2" in result.message
    crash = checks.check_beam_search(lambda *args: 1 / 0)
    assert not crash.passed and "ZeroDivisionError" in crash.message
    bad = checks.check_beam_search(lambda *args: [3, 2])
    assert not bad.passed and "return a pair (tokens, score)" in bad.message

    def stub(model, src, bos, eos, max_len, beam_size, alpha):  # type: ignore[no-untyped-def]
        """Search with a beam."""
        raise NotImplementedError

    unfinished = checks.check_beam_search(stub)
    assert not unfinished.done and "Search with a beam." in unfinished.message
