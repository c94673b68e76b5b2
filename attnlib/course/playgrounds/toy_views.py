"""The toy models of notebooks 04 and 05 in the attention views, for the learner's own input.

- :class:`LookupSource`: notebook 04's :class:`toy_tasks.LookupModel` (one learned
  ``SelfAttention`` head). The learner types items ``key=value`` and a question ``?key``,
  e.g. ``3=5 1=2 7=0 4=4 ?1``; the share ``asked`` is the question's weight on the items
  with the key asked for, and the summary gives the model's answer.
- :class:`NeighbourSource`: notebook 05's :class:`toy_tasks.NeighbourModel` (one
  two-head ``MultiHeadAttention``). The learner types digits, e.g. ``31415926``; the
  shares are ``prev`` and ``next``, the weight on the token before and after.

Each is one layer, so the playground shows the head view and the neuron view only
(:func:`show_lookup_views`, :func:`show_neighbour_views`).

Notebooks 04 and 05.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from attnlib.course.playgrounds.attention_views import (
    ModelView,
    TextReading,
    next_share,
    previous_share,
    record_attention,
)
from attnlib.course.playgrounds.attention_widget import AttentionViewsPlayground
from attnlib.course.toy_tasks import LookupModel, LookupTask, NeighbourModel


def _named(tokens: list[str]) -> str:
    return ", ".join(repr(token) for token in tokens)


class LookupSource:
    """Notebook 04's trained lookup model: items ``key=value`` and a question ``?key``."""

    name = "the lookup model"
    example = "6=1 2=7 5=3 ?2"
    num_layers = num_heads = 1

    def __init__(self, model: LookupModel, task: LookupTask) -> None:
        if model.attention is None:
            raise TypeError("model must be a LookupModel with learned=True (an attention head)")
        self.model, self.task = model, task
        self.legend = "asked: the question's weight on the items with the key it asks for"

    def read(self, typed: str) -> TextReading:
        """Items and one question, the question last; a note for whatever had to change."""
        if not isinstance(typed, str):
            raise TypeError(f"typed must be a str, got {type(typed).__name__}")
        keys, values = self.task.num_keys, self.task.num_values
        words = [w for w in re.split(r"[\s,;]+", typed) if w]
        items, questions, bad, valid = [], [], [], []
        for word in words:
            item, question = re.fullmatch(r"(\d+)=(\d+)", word), re.fullmatch(r"\?(\d+)", word)
            if item and int(item[1]) < keys and int(item[2]) < values:
                items.append((int(item[1]), int(item[2])))
            elif question and int(question[1]) < keys:
                questions.append(int(question[1]))
            else:
                bad.append(word)
                continue
            valid.append(word)
        notes = []
        if not words:
            notes.append("Type items such as 3=5 (key 3 holds value 5) and a question such "
                         "as ?3, then press Enter.")  # fmt: skip
        if bad:
            notes.append(f"Not an item key=value (key 0–{keys - 1}, value 0–{values - 1}) or a "
                         f"question ?key, so left out: {_named(bad)}.")  # fmt: skip
        if len(items) > keys:
            notes.append(f"The task has at most {keys} items: only the first {keys} of your "
                         f"{len(items)} are read.")  # fmt: skip
            items = items[:keys]
        repeated = sorted({k for k, _ in items if [key for key, _ in items].count(k) > 1})
        if repeated:
            notes.append(f"Keys used twice ({', '.join(map(str, repeated))}): the task's "
                         "keys are distinct, so a question for one has two answers.")  # fmt: skip
        if len(questions) > 1:
            notes.append(f"One question at a time: only the last, '?{questions[-1]}', is read.")
        elif questions and not valid[-1].startswith("?"):
            notes.append("The question goes last (the model reads its answer there): moved.")
        if words and not questions:
            notes.append("No question: add one such as ?3 to see the model look an item up.")
        tokens = [f"{k}={v}" for k, v in items] + [f"?{q}" for q in questions[-1:]]
        ids = [k * values + v for k, v in items] + [keys * values + q for q in questions[-1:]]
        return TextReading(typed, tuple(tokens), tuple(ids), tuple(notes))

    def _inputs(self, reading: TextReading) -> torch.Tensor:
        """One-hot tokens as :meth:`LookupTask.batch` builds them. Shapes: ``(1, T, width)``."""
        keys, values, width = self.task.num_keys, self.task.num_values, self.task.width
        x = torch.zeros(1, len(reading.ids), width)
        for i, token_id in enumerate(reading.ids):
            if token_id >= keys * values:  # the question: [0, 0, one_hot(key)]
                x[0, i, keys + values + token_id - keys * values] = 1.0
            else:  # an item: [one_hot(key), one_hot(value), 0]
                x[0, i, token_id // values] = x[0, i, keys + token_id % values] = 1.0
        return x

    def attention(self, layer: int) -> nn.Module:
        """The model's one attention head."""
        return self.model.attention

    def run(self, reading: TextReading) -> ModelView:
        """Run the model once; the summary gives its answer when there is a question."""
        if not reading.readable:
            raise ValueError("reading has no tokens to run the model on: check reading.notes")
        x = self._inputs(reading).to(self.model.readout.weight.dtype)  # (1, T, width)
        logits: list[torch.Tensor] = []
        inputs, weights = record_attention(
            self.model, [self.model.attention], lambda: logits.append(self.model(x)[0][0])
        )  # (1, T, width), (1, 1, T, T)
        length, asked = len(reading.ids), torch.full((1, 1), float("nan"))
        summary = ""
        if reading.tokens[-1].startswith("?"):
            key = reading.tokens[-1][1:]
            holders = [i for i, t in enumerate(reading.tokens[:-1]) if t.split("=")[0] == key]
            answer = int(logits[0].argmax())
            summary = f"the model answers {answer}" + (
                f"; item{'s' * (len(holders) > 1)} with key {key}: "
                + ", ".join(reading.tokens[i] for i in holders) if holders
                else f"; no item has key {key}"
            )  # fmt: skip
            if holders:
                asked = weights[..., -1, holders].sum(dim=-1)  # (1, 1)
        return ModelView(
            reading=reading, weights=weights, inputs=inputs,
            mask=torch.ones(length, length, dtype=torch.bool), shares={"asked": asked},
            legend=self.legend, summary=summary,
        )  # fmt: skip


class NeighbourSource:
    """Notebook 05's trained neighbour model: a row of digits, each token's two neighbours."""

    name = "the neighbour model"
    example = "27182818"
    num_layers = 1

    def __init__(self, model: NeighbourModel) -> None:
        self.model = model
        self.num_heads = model.attention.num_heads
        self.max_len, self.vocab_size = model.pe.shape[0], model.embedding.num_embeddings
        self.legend = "prev: the token before (t−1); next: the token after (t+1)"

    def read(self, typed: str) -> TextReading:
        """The digits of ``typed`` (spaces and commas skipped), at most the model's length."""
        if not isinstance(typed, str):
            raise TypeError(f"typed must be a str, got {type(typed).__name__}")
        allowed = {str(d) for d in range(min(self.vocab_size, 10))}
        kept = [ch for ch in typed if ch in allowed]
        bad = sorted({ch for ch in typed if ch not in allowed and not ch.isspace() and ch != ","})
        notes = []
        if not typed.strip():
            notes.append(f"Type up to {self.max_len} digits, e.g. 31415926, then press Enter.")
        if bad:
            notes.append(f"The model's tokens are the digits 0–{len(allowed) - 1}, so left "
                         f"out: {_named(bad)}.")  # fmt: skip
        if len(kept) > self.max_len:
            notes.append(f"The model knows {self.max_len} positions: only the first "
                         f"{self.max_len} of your {len(kept)} digits are read.")  # fmt: skip
            kept = kept[: self.max_len]
        return TextReading(typed, tuple(kept), tuple(int(ch) for ch in kept), tuple(notes))

    def attention(self, layer: int) -> nn.Module:
        """The model's one multi-head attention."""
        return self.model.attention

    def run(self, reading: TextReading) -> ModelView:
        """Run the model once; the summary gives the neighbours it names."""
        if not reading.readable:
            raise ValueError("reading has no digits to run the model on: check reading.notes")
        tokens = torch.tensor([reading.ids])  # (1, T)
        out: list[tuple[torch.Tensor, ...]] = []
        inputs, weights = record_attention(
            self.model, [self.model.attention], lambda: out.append(self.model(tokens))
        )  # (1, T, C), (1, H, T, T)
        named = [
            " ".join("–" if i == self.vocab_size else str(i) for i in logits[0].argmax(-1).tolist())
            for logits in out[0][:2]
        ]  # fmt: skip
        length = len(reading.ids)
        return ModelView(
            reading=reading, weights=weights, inputs=inputs,
            mask=torch.ones(length, length, dtype=torch.bool),
            shares={"prev": previous_share(weights), "next": next_share(weights)},
            legend=self.legend,
            summary=f"the model names the left neighbours {named[0]}, the right ones {named[1]}",
        )  # fmt: skip


def show_lookup_views(
    model: LookupModel, task: LookupTask, text: str = "3=5 1=2 7=0 4=4 ?1"
) -> AttentionViewsPlayground:
    """Notebook 04's lookup model in the head and neuron views; the question is the query."""
    return AttentionViewsPlayground(LookupSource(model, task), text, query=None, model_view=False)


def show_neighbour_views(model: NeighbourModel, text: str = "31415926") -> AttentionViewsPlayground:
    """Notebook 05's neighbour model in the head and neuron views, head 0, query token 3."""
    return AttentionViewsPlayground(NeighbourSource(model), text, query=3, model_view=False)
