"""The attention-views widget: the learner's own text through a model, three views.

A thin view over ``attention_views`` for any :class:`AttentionSource`. The model runs
only when the text is entered (Enter: ``continuous_update=False``). The model view (every
layer and head as a small map) is drawn once per text; choosing a layer, head or query
token redraws only the head view and the neuron view. All three are HTML, built in
milliseconds (``attention_drawing``). :attr:`draws` counts the drawings of each view. Bad
input is answered in the widget, with the source's notes.

Notebooks 04, 05, 10 and 11.
"""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

import ipywidgets as widgets

from attnlib.course.playgrounds.attention_drawing import (
    head_view_html,
    model_view_html,
    neuron_view_html,
)
from attnlib.course.playgrounds.attention_views import (
    AttentionSource,
    head_row,
    neuron_at,
)
from attnlib.course.playgrounds.display import show_playground

CSS_CLASS = "attnlib-playground"


def token_options(tokens: tuple[str, ...]) -> list[tuple[str, int]]:
    """Dropdown options for the query token: ``"3: fox"`` → 3."""
    return [(f"{i}: {token}", i) for i, token in enumerate(tokens)]


class AttentionViewsPlayground:
    """A text box, layer / head / query-token selectors, and the model, head and neuron views.

    ``query=None`` follows the last token (the question of notebook 04's lookup) when the
    text changes; otherwise the same position is kept while it exists. With
    ``model_view=False`` (a one-layer toy) the model view is left out. :attr:`view` holds
    the current :class:`ModelView` (``None`` when there is nothing to read); :attr:`widget`
    is what a notebook displays (the playground displays as it).
    """

    def __init__(
        self,
        source: AttentionSource,
        text: str,
        layer: int = 1,
        head: int = 0,
        query: int | None = 1,
        model_view: bool = True,
    ) -> None:
        self.source, self.view, self.draws = source, None, Counter()
        self.follows_last = self.follow_last = query is None
        self.with_model_view = model_view
        self.text = widgets.Text(
            value=text, description="your text", continuous_update=False,
            placeholder=source.example, layout=widgets.Layout(width="60%"),
        )  # fmt: skip
        self.layer = widgets.Dropdown(
            options=[(f"layer {i}", i) for i in range(1, source.num_layers + 1)], value=layer,
            description="layer", layout=widgets.Layout(width="200px"),
        )  # fmt: skip
        self.head = widgets.Dropdown(
            options=[(f"head {i}", i) for i in range(source.num_heads)], value=head,
            description="head", layout=widgets.Layout(width="200px"),
        )  # fmt: skip
        self.query = widgets.Dropdown(options=[("0", 0)], value=0, description="query token")
        self.notes, self.summary = widgets.HTML(), widgets.HTML()
        self.model_out = widgets.HTML()
        self.head_out, self.neuron_out = widgets.HTML(), widgets.HTML()
        self._query_wanted = 0 if query is None else query
        self._quiet = False
        self.text.observe(lambda _: self.read(), names="value")
        for selector in (self.layer, self.head, self.query):
            selector.observe(self._selected, names="value")
        selectors = [s for s, n in ((self.layer, source.num_layers), (self.head, source.num_heads))
                     if n > 1] + [self.query]  # fmt: skip
        model_part = [
            widgets.HTML("<b>model view</b>: every layer and head, drawn once per text"),
            self.model_out,
        ]
        self.widget = widgets.VBox([
            self.text, self.notes, self.summary,
            *(model_part if model_view else []), widgets.HBox(selectors),
            widgets.HTML("<b>head view</b>: the chosen head, the query token's row in red"),
            self.head_out, widgets.HTML("<b>neuron view</b>: how that row is computed"),
            self.neuron_out,
        ])  # fmt: skip
        self.widget.add_class(CSS_CLASS)
        self.widget.add_class("attnlib-attention-views")
        self.read()

    def read(self) -> None:
        """Read the text box, run the model once and draw all three views."""
        reading = self.source.read(self.text.value)
        self.notes.value = "<br>".join(html.escape(note, quote=False) for note in reading.notes)
        self.view = self.source.run(reading) if reading.readable else None
        self.summary.value = "" if self.view is None else html.escape(self.view.summary)
        tokens = reading.tokens if self.view is not None else ("–",)
        last = len(tokens) - 1
        self._quiet = True
        try:
            self.query.options = token_options(tokens)
            self.query.value = last if self.follow_last else min(self._query_wanted, last)
        finally:
            self._quiet = False
        if self.with_model_view:
            self.draws["model"] += 1
            self.model_out.value = "" if self.view is None else model_view_html(self.view)
        self._redraw()

    def _selected(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        if change["owner"] is self.query:
            self._query_wanted = self.query.value
            last = len(self.query.options) - 1
            self.follow_last = self.follows_last and self.query.value == last
        self._redraw()

    def _redraw(self) -> None:
        """The head view and the neuron view of the selection; the model does not run."""
        self.draws["head"] += 1
        self.draws["neuron"] += 1
        if self.view is None:
            self.head_out.value = self.neuron_out.value = ""
            return
        layer, head, query = self.layer.value, self.head.value, self.query.value
        row = head_row(self.view, layer, head, query)
        self.head_out.value = head_view_html(row, self.view.mask)
        neuron = neuron_at(self.source, self.view, layer, head, query)
        self.neuron_out.value = neuron_view_html(neuron, self.view.tokens, layer)

    def stand_in(self) -> str:
        """The plain text that stands for the playground in a stored output."""
        count = 0 if self.view is None else len(self.view.tokens)
        return f"attention views of {self.source.name}, {count} tokens"

    def _ipython_display_(self) -> None:
        show_playground(self.widget, self.stand_in())
