"""Greedy and beam search against by-hand loops, exhaustive search and teacher forcing."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from attnlib.decoding import beam_search, beam_search_with_scores, greedy_decode
from attnlib.transformer import Transformer, TransformerConfig

PAD, BOS = 0, 1


def _model(seed: int, tgt_vocab_size: int = 9, norm_first: bool = True) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=10,
        tgt_vocab_size=tgt_vocab_size,
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=2,
        d_ff=32,
        dropout=0.0,
        max_len=16,
        norm_first=norm_first,
    )
    model = Transformer(config).eval()
    with torch.no_grad():  # the paper's N(0, 1/d) embeddings: after the √d scale, unit size,
        for embedding in (model.src_embedding, model.tgt_embedding):  # so the source matters
            embedding.weight.normal_(0.0, config.d_model**-0.5)
    return model


def _sources(lengths: list[int], seed: int) -> torch.Tensor:
    """Random non-pad source ids, each row padded after its length."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 10, (len(lengths), max(lengths)), generator=g)
    for row, length in enumerate(lengths):
        src[row, length:] = PAD
    return src


def _argmax_run(model: Transformer, src: torch.Tensor, steps: int) -> list[int]:
    """Feed BOS, then each argmax back in, ``steps`` times: no EOS, no early stop."""
    tgt = torch.tensor([[BOS]])
    for _ in range(steps):
        logits = model(src[None], tgt)  # (1, t, V): recompute everything each step
        tgt = torch.cat([tgt, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return tgt[0, 1:].tolist()


def _cut_at_eos(tokens: list[int], eos_id: int) -> list[int]:
    return tokens[: tokens.index(eos_id) + 1] if eos_id in tokens else tokens


def _pad_rows(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(row) for row in rows)
    return torch.tensor([row + [PAD] * (width - len(row)) for row in rows])


def _log_probability(model: Transformer, src: torch.Tensor, seq: torch.Tensor, eos_id: int):
    """Teacher forcing: Σ log p(y_t | y_<t, x) over the tokens up to and including EOS.

    Returns the sum and the number of tokens it covers (the hypothesis length).
    """
    tokens = _cut_at_eos(seq.tolist(), eos_id)
    tgt_in = torch.tensor([[BOS, *tokens[:-1]]])
    log_probs = torch.log_softmax(model(src[None], tgt_in)[0].double(), dim=-1)  # (n, V)
    total = log_probs.gather(1, torch.tensor(tokens)[:, None]).sum().item()
    return total, len(tokens)


def _pick_eos(sequences: list[list[int]]) -> int | None:
    """A token that the argmax runs first emit at different steps in different rows."""
    for token in sorted(set().union(*sequences) - {PAD, BOS}):
        firsts = {row.index(token) if token in row else None for row in sequences}
        if len(firsts) > 1:
            return token
    return None


def _model_with_eos(seed: int, src: torch.Tensor, max_new_tokens: int, norm_first: bool = True):
    """A model (from ``seed`` on) whose greedy outputs end at different steps for some EOS.

    An untrained model often says the same thing for every source; then no token can
    serve, and the next seed is tried. Returns the model, its argmax runs and the EOS.
    """
    for attempt in range(5):
        model = _model(seed + 1000 * attempt, norm_first=norm_first)
        runs = [_argmax_run(model, row, max_new_tokens) for row in src]
        eos_id = _pick_eos(runs)
        if eos_id is not None:
            return model, runs, eos_id
    raise AssertionError(f"no model from seed {seed} on ends its outputs at different steps")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("norm_first", [True, False])
def test_greedy_equals_a_by_hand_argmax_loop_with_pad_after_eos(
    seed: int, norm_first: bool
) -> None:
    src = _sources([5, 3, 4, 6, 2], seed=seed)
    max_new_tokens = 8
    # Decoding up to the first EOS does not depend on eos_id: run without, then pick one.
    model, runs, eos_id = _model_with_eos(seed, src, max_new_tokens, norm_first)
    expected = _pad_rows([_cut_at_eos(run, eos_id) for run in runs])
    out = greedy_decode(model, src, bos_id=BOS, eos_id=eos_id, max_new_tokens=max_new_tokens)
    assert torch.equal(out, expected)
    for row in out.tolist():  # every position after a row's EOS holds the pad id
        if eos_id in row:
            assert all(token == PAD for token in row[row.index(eos_id) + 1 :])


def test_greedy_stops_early_when_every_row_has_finished() -> None:
    model = _model(4)
    src = _sources([4], seed=5).expand(2, 4)  # one source twice
    (eos_id,) = _argmax_run(model, src[0], 1)  # its first token ends it at once
    out = greedy_decode(model, src, BOS, eos_id, max_new_tokens=10)
    assert out.tolist() == [[eos_id], [eos_id]]  # one step, not ten
    beam = beam_search(model, src, BOS, eos_id, max_new_tokens=10, beam_size=3)
    assert torch.equal(beam[0], beam[1]) and beam.shape[1] <= 10  # same source, same answer


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_of_one_is_greedy(seed: int) -> None:
    model = _model(seed)
    src = _sources([6, 2], seed=seed + 10)
    eos_id = 3
    greedy = greedy_decode(model, src, BOS, eos_id, max_new_tokens=7)
    for length_penalty in (0.0, 1.0):
        beam = beam_search(
            model, src, BOS, eos_id, max_new_tokens=7, beam_size=1, length_penalty=length_penalty
        )
        assert torch.equal(beam, greedy)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("beam_size", [2, 3, 5])
def test_wider_beam_scores_at_least_greedy_over_two_steps(seed: int, beam_size: int) -> None:
    """With max_new_tokens=2 the claim is a theorem, not a hope.

    Greedy's first token is the best first step, so it is always in the beam; the
    second step keeps the best extension of every beam, greedy's among the candidates,
    and with ``length_penalty=0`` the winner is the largest raw sum. (For longer
    outputs beam search can drop greedy's prefix and end up worse.)
    """
    model = _model(seed + 20, tgt_vocab_size=7)
    src = _sources([5, 3, 4], seed=seed)
    eos_id = 2
    greedy = greedy_decode(model, src, BOS, eos_id, max_new_tokens=2)
    beam = beam_search(
        model, src, BOS, eos_id, max_new_tokens=2, beam_size=beam_size, length_penalty=0.0
    )
    for b in range(len(src)):
        beam_score, _ = _log_probability(model, src[b], beam[b], eos_id)
        greedy_score, _ = _log_probability(model, src[b], greedy[b], eos_id)
        assert beam_score >= greedy_score - 1e-5


def _exhaustive_best(
    model: Transformer, src: torch.Tensor, eos_id: int, max_new_tokens: int, alpha: float
):
    """The best length-normalised score over every target of at most ``max_new_tokens`` tokens."""
    vocab = model.config.tgt_vocab_size
    hypotheses = {  # every target, cut after its first EOS
        tuple(_cut_at_eos(list(seq), eos_id))
        for seq in itertools.product(range(vocab), repeat=max_new_tokens)
    }
    rows = _pad_rows([list(h) for h in sorted(hypotheses)])  # (N, max_new_tokens), pad after EOS
    lengths = torch.tensor([len(h) for h in sorted(hypotheses)])  # (N,)
    tgt_in = torch.cat([torch.full((len(rows), 1), BOS), rows[:, :-1]], dim=1)
    logits = model(src.expand(len(rows), -1), tgt_in)  # all of them in one teacher-forced pass
    log_probs = torch.log_softmax(logits.double(), -1).gather(2, rows[..., None])[..., 0]
    counted = (
        torch.arange(max_new_tokens) < lengths[:, None]
    )  # (N, max_new_tokens): up to and with EOS
    totals = (log_probs * counted).sum(1)
    return (totals / lengths.double() ** alpha).max().item()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.0, 1.0, 0.6])
def test_a_beam_as_wide_as_the_search_space_finds_the_best_hypothesis(
    seed: int, alpha: float
) -> None:
    """With beam_size = V^max_new_tokens nothing is ever pruned: beam search is exhaustive."""
    vocab, max_new_tokens, eos_id = 6, 3, 4
    model = _model(seed + 30, tgt_vocab_size=vocab)
    src = _sources([4, 2], seed=seed + 40)
    beam = beam_search(
        model,
        src,
        BOS,
        eos_id,
        max_new_tokens,
        beam_size=vocab**max_new_tokens,
        length_penalty=alpha,
    )
    for b in range(len(src)):
        total, length = _log_probability(model, src[b], beam[b], eos_id)
        best = _exhaustive_best(model, src[b], eos_id, max_new_tokens, alpha)
        assert total / length**alpha == pytest.approx(best, abs=1e-4)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_batched_decoding_equals_decoding_each_source_alone(beam_size: int) -> None:
    src = _sources([6, 2, 4, 5], seed=51)
    model, _, eos_id = _model_with_eos(50, src, max_new_tokens=6)
    batched = beam_search(model, src, BOS, eos_id, max_new_tokens=6, beam_size=beam_size)
    alone = []
    for b, length in enumerate([6, 2, 4, 5]):
        alone.append(
            beam_search(model, src[b : b + 1, :length], BOS, eos_id, 6, beam_size)[0].tolist()
        )
    assert torch.equal(batched, _pad_rows(alone))


def test_decoding_restores_training_mode() -> None:
    model = _model(60).train()
    src = _sources([3], seed=61)
    greedy_decode(model, src, BOS, 2, max_new_tokens=3)
    assert model.training
    beam_search(model, src, BOS, 2, max_new_tokens=3, beam_size=2)
    assert model.training


def test_beam_output_has_no_bos_and_at_most_max_len_tokens() -> None:
    model = _model(70)
    src = _sources([5, 5], seed=71)
    out = beam_search(model, src, BOS, eos_id=PAD + 8, max_new_tokens=5, beam_size=3)
    assert out.shape[0] == 2 and 1 <= out.shape[1] <= 5 and out.dtype == torch.long


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"beam_size": 0}, ValueError, "beam_size must be a positive int, got 0"),
        ({"max_new_tokens": 0}, ValueError, r"max_new_tokens must be in \[1, 16\], got 0"),
        ({"max_new_tokens": 17}, ValueError, r"max_new_tokens must be in \[1, 16\], got 17"),
        ({"max_new_tokens": 4.0}, TypeError, "max_new_tokens must be an int, got float"),
        ({"bos_id": 9}, ValueError, r"bos_id must be a token id in \[0, 9\), got 9"),
        ({"eos_id": -1}, ValueError, r"eos_id must be a token id in \[0, 9\), got -1"),
        ({"eos_id": torch.tensor(2)}, TypeError, "eos_id must be an int, got Tensor"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    model = _model(0)
    arguments = {"bos_id": BOS, "eos_id": 2, "max_new_tokens": 4, "beam_size": 2, **kwargs}
    with pytest.raises(error, match=match):
        beam_search(model, _sources([3], seed=0), **arguments)
    if "beam_size" not in kwargs:
        greedy_arguments = {key: value for key, value in arguments.items() if key != "beam_size"}
        with pytest.raises(error, match=match):
            greedy_decode(model, _sources([3], seed=0), **greedy_arguments)


@pytest.mark.parametrize("search", [beam_search, beam_search_with_scores])
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"length_penalty": math.nan},
            ValueError,
            "length_penalty must be a finite number, got nan",
        ),
        (
            {"length_penalty": math.inf},
            ValueError,
            "length_penalty must be a finite number, got inf",
        ),
        (
            {"length_penalty": -math.inf},
            ValueError,
            "length_penalty must be a finite number, got -inf",
        ),
        ({"length_penalty": "0.6"}, TypeError, "length_penalty must be a number, got str"),
        ({"length_penalty": True}, TypeError, "length_penalty must be a number, got bool"),
        (
            {"penalty": "linear"},
            ValueError,
            r"penalty must be one of \('power', 'gnmt'\), got 'linear'",
        ),
        ({"penalty": None}, TypeError, "penalty must be a str"),
    ],
)
def test_bad_length_penalties(search, kwargs: dict, error: type, match: str) -> None:
    model = _model(0)
    with pytest.raises(error, match=match):
        search(model, _sources([3], seed=0), BOS, 2, max_new_tokens=4, beam_size=2, **kwargs)


@pytest.mark.parametrize("penalty", ["power", "gnmt"])
def test_finite_length_penalties_of_any_sign_give_finite_scores(penalty: str) -> None:
    model = _model(0)
    for alpha in (-0.5, 0.0, 0.6, 2.0):
        _, scores = beam_search_with_scores(
            model, _sources([3, 4], seed=0), BOS, 2, 4, 2, length_penalty=alpha, penalty=penalty
        )
        assert torch.isfinite(scores).all()


def test_bad_sources_get_the_models_errors() -> None:
    model = _model(0)
    with pytest.raises(ValueError, match=r"src holds ids outside \[0, 10\)"):
        greedy_decode(model, torch.tensor([[1, 10]]), BOS, 2, max_new_tokens=3)
    with pytest.raises(TypeError, match=r"src must be integer token ids"):
        beam_search(model, torch.ones(1, 3), BOS, 2, max_new_tokens=3)
    with pytest.raises(ValueError, match=r"src must hold 1 to 16 tokens \(max_len\)"):
        beam_search(model, torch.ones(1, 17, dtype=torch.long), BOS, 2, max_new_tokens=3)
