"""The toy models of notebooks 04 and 05 in the attention views: parsing, notes, numbers."""

from __future__ import annotations

import pytest
import torch

from attnlib.course import toy_tasks
from attnlib.course.playgrounds import attention_views, toy_views

TASK = toy_tasks.LookupTask()  # 4 items, 8 keys, 8 values


@pytest.fixture(scope="module")
def lookup() -> toy_views.LookupSource:
    torch.manual_seed(0)
    return toy_views.LookupSource(toy_tasks.LookupModel(TASK), TASK)


@pytest.fixture(scope="module")
def neighbours() -> toy_views.NeighbourSource:
    torch.manual_seed(0)
    return toy_views.NeighbourSource(toy_tasks.NeighbourModel(toy_tasks.NeighbourTask()))


def test_items_and_a_question_are_read_in_the_tasks_own_format(
    lookup: toy_views.LookupSource,
) -> None:
    x, _ = TASK.batch(1, torch.Generator().manual_seed(3))  # (1, 5, 24)
    keys = x[0, :4, :8].argmax(-1).tolist()
    values = x[0, :4, 8:16].argmax(-1).tolist()
    asked = int(x[0, 4, 16:].argmax())
    typed = " ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True)) + f" ?{asked}"
    reading = lookup.read(typed)
    assert reading.notes == () and reading.tokens == tuple(typed.split())
    assert torch.equal(lookup._inputs(reading), x)


def test_bad_lookup_input_is_named_and_fixed_with_notes(lookup: toy_views.LookupSource) -> None:
    reading = lookup.read("?3, 3=5 x 1=9 2=2 2=4")
    assert reading.tokens == ("3=5", "2=2", "2=4", "?3")
    assert reading.notes == (
        "Not an item key=value (key 0–7, value 0–7) or a question ?key, so left out: 'x', '1=9'.",
        "Keys used twice (2): the task's keys are distinct, so a question for one has two answers.",
        "The question goes last (the model reads its answer there): moved.",
    )
    many = lookup.read(" ".join(f"{k}={k}" for k in range(8)) + " 0=1 ?1 ?2")
    assert len(many.tokens) == 9 and many.tokens[-1] == "?2"
    assert "only the first 8 of your 9 are read" in many.notes[0]
    assert "only the last, '?2', is read" in many.notes[-1]
    assert lookup.read("3=5").notes == (
        "No question: add one such as ?3 to see the model look an item up.",
    )
    empty = lookup.read(" ")
    assert not empty.readable and empty.notes[0].startswith("Type items such as 3=5")


def test_the_lookup_view_is_the_models_own_attention(lookup: toy_views.LookupSource) -> None:
    reading = lookup.read("3=5 1=2 7=0 4=4 ?1")
    view = lookup.run(reading)
    with torch.no_grad():
        logits, weights = lookup.model(lookup._inputs(reading))
    torch.testing.assert_close(view.weights, weights[:, None])  # (1, 1, T, T)
    assert view.shares["asked"].item() == pytest.approx(float(weights[0, -1, 1]))
    assert view.summary == f"the model answers {int(logits.argmax())}; item with key 1: 1=2"
    neuron = attention_views.neuron_at(lookup, view, 1, 0, 4)
    torch.testing.assert_close(neuron.weights.float(), weights[0, 4])
    missing = lookup.run(lookup.read("3=5 ?6"))
    assert missing.summary.endswith("no item has key 6") and missing.shares["asked"].isnan()


def test_only_the_learned_lookup_model_has_a_head_to_show() -> None:
    with pytest.raises(TypeError, match="learned=True"):
        toy_views.LookupSource(toy_tasks.LookupModel(TASK, learned=False), TASK)


def test_digits_are_read_with_notes(neighbours: toy_views.NeighbourSource) -> None:
    reading = neighbours.read("3a1, 4 1 5 9 2 6 5 3!")
    assert reading.tokens == tuple("31415926") and reading.ids == (3, 1, 4, 1, 5, 9, 2, 6)
    assert reading.notes == (
        "The model's tokens are the digits 0–9, so left out: '!', 'a'.",
        "The model knows 8 positions: only the first 8 of your 10 digits are read.",
    )
    assert not neighbours.read("").readable


def test_the_neighbour_view_is_the_models_own_attention(
    neighbours: toy_views.NeighbourSource,
) -> None:
    view = neighbours.run(neighbours.read("3141"))
    with torch.no_grad():
        left, _, weights = neighbours.model(torch.tensor([[3, 1, 4, 1]]))
    torch.testing.assert_close(view.weights, weights)  # (1, H, T, T)
    torch.testing.assert_close(view.shares["next"], weights.diagonal(1, -2, -1).mean(-1))
    named = " ".join("–" if i == 10 else str(i) for i in left[0].argmax(-1).tolist())
    assert view.summary.startswith(f"the model names the left neighbours {named},")
    for head in (0, 1):
        neuron = attention_views.neuron_at(neighbours, view, 1, head, 2)
        torch.testing.assert_close(neuron.weights.float(), weights[0, head, 2])


def test_the_lookup_widget_follows_the_question(lookup: toy_views.LookupSource) -> None:
    playground = toy_views.show_lookup_views(lookup.model, TASK)
    assert playground.query.value == 4 and "?1" in playground.head_out.value  # the question
    assert playground.draws["model"] == 0 and playground.model_out not in (
        playground.widget.children
    )  # one head: no model view
    playground.text.value = "0=1 ?0"
    assert playground.query.value == 1  # still the question
    playground.query.value = 0  # an item chosen: the position is kept from now on
    playground.text.value = "0=1 2=3 ?0"
    assert playground.query.value == 0
    assert "the model answers" in playground.summary.value


def test_the_neighbour_widget_has_a_head_selector(neighbours: toy_views.NeighbourSource) -> None:
    playground = toy_views.show_neighbour_views(neighbours.model)
    assert playground.query.value == 3 and playground.head.options == (("head 0", 0), ("head 1", 1))
    before = playground.neuron_out.value
    playground.head.value = 1
    assert playground.neuron_out.value != before
    assert "layer 1, head 1, query token 3" in playground.neuron_out.value
    playground.text.value = "9x"
    assert "'x'" in playground.notes.value and playground.query.value == 0


def test_each_toy_offers_an_example_it_can_read(
    lookup: toy_views.LookupSource, neighbours: toy_views.NeighbourSource
) -> None:
    for source, playground in (
        (lookup, toy_views.show_lookup_views(lookup.model, TASK)),
        (neighbours, toy_views.show_neighbour_views(neighbours.model)),
    ):
        # The browser test types the placeholder: it must differ from the starting text.
        assert playground.text.placeholder == source.example != playground.text.value
        reading = source.read(source.example)
        assert reading.readable and not reading.notes
