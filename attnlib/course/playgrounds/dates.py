"""The date playground: any typed date through notebook 09's translator.

:func:`read_date` decodes what the learner typed, greedily or with a beam, and returns
everything the playground shows: the output, the five likeliest characters at each
decoding step with their probabilities, and the cross-attention of every output
character over the source. A text the model cannot read well is not refused: its output
and its confidence are shown as they are, with a note for what had to change (an empty
text, characters outside the vocabulary, a text longer than the model's context). Spaces
at either end are dropped: none of the formats it was trained on has them.
:func:`steps_table` and :func:`cross_attention_bars` draw it as HTML; :class:`DatePlayground`
is the widget.

Notebook 09.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from attnlib._validate import require_positive_int
from attnlib.course.date_translator import DateTranslator
from attnlib.course.dates import TARGET_LENGTH
from attnlib.course.playgrounds.bar_chart import bar_chart_html
from attnlib.course.playgrounds.display import show_playground

TOP = 5  # candidates shown per step
PAD = ' style="padding: 2px 12px; white-space: nowrap"'  # one step's column apart from the next
EXAMPLE = "5 May 1999"  # the text box's placeholder: what a learner might type


@dataclass(frozen=True, eq=False)
class DateReading:
    """What the playground shows for one typed text.

    ``steps[t]`` lists the ``(character, probability)`` of the five likeliest tokens at
    output step ``t`` (``<eos>`` spelled out), given the characters chosen before it;
    ``chosen[t]`` is the probability of the character actually written there, and
    ``confidence`` their product: the model's probability of its whole output.

    Shapes:
        cross_attention: ``(T, S)``, the last decoder layer's cross-attention averaged over
        heads: row ``t`` is output step ``t`` (the last row the step that wrote ``<eos>``),
        column ``s`` source character ``s``.
    """

    source: str
    notes: tuple[str, ...]
    output: str
    steps: list[list[tuple[str, float]]]
    chosen: list[float]
    confidence: float
    cross_attention: torch.Tensor

    @property
    def readable(self) -> bool:
        """Whether there was anything for the model to read."""
        return bool(self.source)


def _source(typed: str, translator: DateTranslator) -> tuple[str, tuple[str, ...]]:
    tokenizer = translator.tokenizer
    known = set(tokenizer.tokens[len(tokenizer.special_tokens) :])
    unknown = sorted(set(typed) - known)
    kept = "".join(ch for ch in typed if ch in known).strip()  # no format ends in a space
    room = translator.model.config.max_len - 1  # the encoder reads at most max_len tokens
    notes = []
    if not typed.strip():
        notes.append("Type a date, then press Enter.")
    if unknown:
        named = ", ".join(repr(ch) for ch in unknown)
        notes.append(f"The translator has never seen {named}: left out.")
    if len(kept) > room:
        notes.append(f"Only the first {room} characters fit the model: the rest is left out.")
        kept = kept[:room]
    return kept, tuple(notes)


@torch.no_grad()
def read_date(typed: str, translator: DateTranslator, beam_size: int = 1) -> DateReading:
    """Translate ``typed`` and collect the playground's views (greedy when ``beam_size`` is 1)."""
    if not isinstance(typed, str):
        raise TypeError(f"typed must be a str, got {type(typed).__name__}")
    require_positive_int("beam_size", beam_size)
    source, notes = _source(typed, translator)
    if not source.strip():
        return DateReading(source, notes, "", [], [], 0.0, torch.zeros(0, 0))
    tokenizer, model = translator.tokenizer, translator.model
    src = torch.tensor([tokenizer.encode(source)])  # (1, S)
    written = translator.translate([source], beam_size=beam_size)[0]
    tgt = torch.tensor([[tokenizer.bos_id, *tokenizer.encode(written)]])  # (1, T)
    targets = [*tokenizer.encode(written), tokenizer.eos_id][: TARGET_LENGTH + 1]
    memory, src_mask, _ = model.encode(src)
    logits, _, cross = model.decode(tgt, memory, src_mask)  # (1, T, V); layers × (1, H, T, S)
    probs = logits[0].float().softmax(dim=-1)  # (T, V)
    steps, chosen = [], []
    for t, target in enumerate(targets):
        top = probs[t].topk(TOP)
        steps.append(
            [
                (tokenizer.tokens[i], p)
                for i, p in zip(top.indices.tolist(), top.values.tolist(), strict=True)
            ]
        )
        chosen.append(float(probs[t, target]))
    if not written:
        notes = (*notes, "The model wrote nothing: it ended at once.")
    return DateReading(
        source=source,
        notes=notes,
        output=written,
        steps=steps,
        chosen=chosen,
        confidence=float(torch.tensor(chosen).prod()),
        cross_attention=cross[-1][0].mean(dim=0).float(),  # (T, S)
    )


def steps_table(reading: DateReading) -> str:
    """The five likeliest characters at every step as an HTML table, the written one bold."""
    written = [*reading.output, "<eos>"]
    header = "".join(f"<th{PAD}>{t + 1}</th>" for t in range(len(reading.steps)))
    rows = []
    for rank in range(TOP):
        cells = []
        for t, step in enumerate(reading.steps):
            character, p = step[rank]
            text = f"{html.escape(character)} {p:.2f}"
            shown = f"<b>{text}</b>" if character == written[t] else text
            cells.append(f"<td{PAD}>{shown}</td>")
        rows.append(f"<tr><th{PAD}>{rank + 1}</th>{''.join(cells)}</tr>")
    return f"<table><tr><th>rank \\ step</th>{header}</tr>{''.join(rows)}</table>"


def cross_attention_bars(reading: DateReading, step: int) -> str:
    """HTML bars of output step ``step``'s cross-attention over the source characters."""
    row = reading.cross_attention[step]  # (S,)
    written = [*reading.output, "<eos>"][step]
    return bar_chart_html(
        [c if c != " " else "␣" for c in reading.source],
        row.tolist(),
        title=f"where output step {step + 1}, {written!r}, looks (last decoder layer)",
        xlabel="source character",
        ylabel="weight (mean of heads)",
        colour="#2ca02c",
    )


class DatePlayground:
    """The widget: a date box (read on Enter), greedy or a beam, and a step selector.

    Entering a text or changing the decoding runs the translator; choosing a step only
    redraws that step's cross-attention.
    """

    def __init__(
        self, translator: DateTranslator, text: str = "the 21st of November, 2026"
    ) -> None:
        self.translator = translator
        self._redrawing = False
        self.text = widgets.Text(
            value=text, placeholder=EXAMPLE, description="date", continuous_update=False
        )
        self.decoding = widgets.Dropdown(
            options=[("greedy", 1), ("beam-2", 2), ("beam-4", 4), ("beam-8", 8)],
            value=1,
            description="decoding",
        )
        self.step = widgets.Dropdown(options=[], description="output step")
        self.summary, self.table, self.attention = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.text.observe(lambda _: self.read(), names="value")
        self.decoding.observe(lambda _: self.read(), names="value")
        self.step.observe(lambda _: self._draw_attention(), names="value")
        self.widget = widgets.VBox(
            [widgets.HBox([self.text, self.decoding]), self.summary, self.table, self.step,
             self.attention]
        )  # fmt: skip
        self.widget.add_class("attnlib-playground")
        self.widget.add_class("attnlib-playground-dates")
        self.read()

    def stand_in(self) -> str:
        """The plain text that stands for the playground in a stored output."""
        return f"the date playground, {self.text.value!r}"

    def _ipython_display_(self) -> None:
        show_playground(self.widget, self.stand_in())

    def read(self) -> None:
        """Run the translator on the box's text and redraw every view."""
        self.reading = read_date(self.text.value, self.translator, self.decoding.value)
        notes = "".join(f"<br><i>{html.escape(n, quote=False)}</i>" for n in self.reading.notes)
        if self.reading.steps:
            shown = (
                f"<b>{html.escape(self.reading.output) or '(nothing)'}</b> by "
                f"{self.decoding.label} decoding, the model's probability of it "
                f"{self.reading.confidence:.2f}"
            )
        else:
            shown = "no output"
        self.summary.value = shown + notes
        self.table.value = steps_table(self.reading) if self.reading.steps else ""
        written = [*self.reading.output, "<eos>"][: len(self.reading.steps)]
        self._redrawing = True  # one drawing below, not one more per option change
        self.step.options = [(f"{t + 1}: {c}", t) for t, c in enumerate(written)]
        self.step.value = 0 if written else None
        self._redrawing = False
        self._draw_attention()

    def _draw_attention(self) -> None:
        if self._redrawing:
            return
        if self.step.value is None or not self.reading.steps:
            self.attention.value = ""
            return
        self.attention.value = cross_attention_bars(self.reading, self.step.value)


def show_date_playground(
    translator: DateTranslator, text: str = "the 21st of November, 2026"
) -> DatePlayground:
    """The date playground for ``translator``, ready to display."""
    return DatePlayground(translator, text)
