"""The date playground's pure half (notebook 09): every view right, bad input answered."""

from __future__ import annotations

import re

import pytest
import torch
from displayed import displayed, displayed_views

from attnlib.course import date_translator
from attnlib.course.playgrounds import bar_chart, dates


@pytest.fixture(scope="module")
def translator() -> date_translator.DateTranslator:
    return date_translator.load_reference_translator()


@pytest.mark.parametrize("beam_size", [1, 4])
def test_a_date_it_knows_is_read_with_its_steps_and_attention(translator, beam_size: int) -> None:
    reading = dates.read_date("the 21st of November, 2026", translator, beam_size)
    assert reading.output == "2026-11-21" == translator.translate([reading.source], beam_size)[0]
    assert reading.notes == ()
    assert len(reading.steps) == len(reading.chosen) == 11  # ten characters, then <eos>
    for step, written in zip(reading.steps, [*reading.output, "<eos>"], strict=True):
        assert len(step) == dates.TOP
        probabilities = [p for _, p in step]
        assert probabilities == sorted(probabilities, reverse=True)
        assert step[0][0] == written  # this model is sure of every character
    assert reading.confidence == pytest.approx(torch.tensor(reading.chosen).prod().item())
    assert 0.9 < reading.confidence <= 1.0
    weights = reading.cross_attention
    assert weights.shape == (11, len(reading.source))
    assert torch.allclose(weights.sum(dim=-1), torch.ones(11), atol=1e-5)


def test_the_step_probabilities_are_the_models_own(translator) -> None:
    reading = dates.read_date("5 May 1999", translator)
    tokenizer, model = translator.tokenizer, translator.model
    src = torch.tensor([tokenizer.encode("5 May 1999")])
    tgt = torch.tensor([[tokenizer.bos_id, *tokenizer.encode(reading.output)]])
    with torch.no_grad():
        probs = model(src, tgt)[0].float().softmax(dim=-1)  # (T, V)
    for t, step in enumerate(reading.steps):
        character, p = step[0]
        assert p == pytest.approx(probs[t].max().item(), rel=1e-5)
        assert tokenizer.tokens[int(probs[t].argmax())] == character


def test_an_empty_text_asks_for_a_date(translator) -> None:
    for typed in ("", "   "):
        reading = dates.read_date(typed, translator)
        assert not reading.readable or not reading.source.strip()
        assert reading.output == "" and reading.steps == []
        assert reading.notes == ("Type a date, then press Enter.",)


def test_unknown_characters_are_named_and_left_out(translator) -> None:
    reading = dates.read_date("21 November 2026 ☃€", translator)
    assert reading.source == "21 November 2026"  # and the space left at the end is dropped
    assert reading.notes == ("The translator has never seen '€', '☃': left out.",)
    assert reading.output == "2026-11-21"


def test_a_text_longer_than_the_model_is_cropped_with_a_note(translator) -> None:
    room = translator.model.config.max_len - 1
    reading = dates.read_date("1" * (room + 10), translator)
    assert len(reading.source) == room
    assert reading.notes == (
        f"Only the first {room} characters fit the model: the rest is left out.",
    )


def test_a_text_that_is_no_date_still_shows_what_the_model_wrote(translator) -> None:
    reading = dates.read_date("hello", translator)
    assert reading.notes == ()
    assert len(reading.output) == 10  # it still writes a date, with less confidence
    assert reading.confidence < 0.95


def test_bad_arguments_are_refused(translator) -> None:
    with pytest.raises(TypeError, match="typed must be a str, got int"):
        dates.read_date(5, translator)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="beam_size"):
        dates.read_date("5 May 1999", translator, beam_size=0)


def test_the_widget_reads_on_enter_and_redraws_only_the_attention_for_a_step(translator) -> None:
    playground = dates.DatePlayground(translator, text="5 May 1999")
    assert "1999-05-05" in playground.summary.value and "<table>" in playground.table.value
    assert "by greedy decoding" in playground.summary.value
    assert {"attnlib-playground", "attnlib-playground-dates"} <= set(playground.widget._dom_classes)
    assert playground.text.placeholder == dates.EXAMPLE
    assert [label for label, _ in playground.step.options][:2] == ["1: 1", "2: 9"]
    reading = playground.reading
    playground.step.value = 3
    assert playground.reading is reading  # choosing a step does not run the model
    playground.decoding.value = 4
    assert playground.reading is not reading and "1999-05-05" in playground.summary.value
    assert "by beam-4 decoding" in playground.summary.value  # same output, the decoding named
    playground.text.value = "21 November 2026 ☃"  # what Enter does (continuous_update=False)
    assert "2026-11-21" in playground.summary.value and "'☃'" in playground.summary.value
    playground.text.value = ""
    assert playground.step.options == () and "Type a date" in playground.summary.value


def test_the_table_and_the_bars_show_the_steps(translator) -> None:
    reading = dates.read_date("5 May 1999", translator)
    table = dates.steps_table(reading)
    assert table.count("<tr>") == 1 + dates.TOP and table.count("<b>") == len(reading.steps)
    chart = dates.cross_attention_bars(reading, 2)
    heights = [int(h) for h in re.findall(r"height:(\d+)px;background:#", chart)]
    row = reading.cross_attention[2].tolist()
    assert heights == [round(bar_chart.PLOT_HEIGHT * w) for w in row]
    assert len(heights) == len(reading.source)
    written = [*reading.output, "<eos>"][2]
    assert f"where output step 3, {written!r}, looks" in chart
    assert "source character" in chart and "weight (mean of heads)" in chart


def test_the_notebook_output_is_the_widget_with_a_stand_in_the_same_everywhere(translator) -> None:
    playground = dates.show_date_playground(translator, "5 May 1999")
    (bundle,) = displayed(playground)
    (view,) = displayed_views(bundle)
    assert view.children == (playground.widget,)
    assert bundle["text/plain"] == (
        "the date playground, '5 May 1999' (run the notebook to use the playground)"
    )
