"""How a playground shows in a notebook: its widget, with a plain-text stand-in.

A widget's own plain text (``VBox(children=(Text(value=...``) lists every control's state,
so a stored output would change whenever a default does. The stand-in names the
playground and what it was given: the same on every machine and every run, so nbval can
compare it strictly, with no ``nbval-ignore-output`` tag.

The widget goes through the standard display path, ``IPython.display.display``, inside a
box whose ``repr`` is the stand-in: ipywidgets 7 (Colab's) and 8 (JupyterLab 4's) both make
a widget's plain text from its ``repr``, so the output is the same under either, and every
front end that shows widgets shows it.

Notebooks 04, 05, 09, 10 and 11.
"""

from __future__ import annotations

import ipywidgets as widgets
from IPython.display import display

# ipywidgets cuts a widget's plain text at this many characters.
_PLAIN_TEXT_LIMIT = 110


class StandInBox(widgets.VBox):
    """A box holding one playground's widget; its ``repr`` is the playground's stand-in."""

    def __init__(self, widget: widgets.DOMWidget, stand_in: str) -> None:
        super().__init__(children=[widget])
        self.stand_in = f"{stand_in} (run the notebook to use the playground)"

    def __repr__(self) -> str:
        return self.stand_in


def stand_in_view(widget: widgets.DOMWidget, stand_in: str) -> StandInBox:
    """``widget`` in a box whose plain text is ``stand_in`` followed by "(run the notebook to
    use the playground)": a front end with widgets shows the widget, nbval and a plain-text
    viewer see the stand-in."""
    view = StandInBox(widget, stand_in)
    if len(view.stand_in) > _PLAIN_TEXT_LIMIT:  # it would be cut short, differently by version
        view.stand_in = view.stand_in[: _PLAIN_TEXT_LIMIT - 1] + "…"
    return view


def show_playground(widget: widgets.DOMWidget, stand_in: str) -> None:
    """Display ``widget`` with its stand-in (what a playground's ``_ipython_display_`` does)."""
    display(stand_in_view(widget, stand_in))
