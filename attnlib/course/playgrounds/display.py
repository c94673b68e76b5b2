"""How a playground shows in a notebook: its widget, with a plain-text stand-in.

A widget's own plain text (``VBox(children=(Text(value=...``) lists every control's state,
so a stored output would change whenever a default does. The stand-in names the
playground and what it was given: the same on every machine and every run, so nbval can
compare it strictly, with no ``nbval-ignore-output`` tag.

Notebooks 04, 05, 09, 10 and 11.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets


def widget_bundle(widget: widgets.DOMWidget, stand_in: str, **kwargs: Any) -> dict[str, Any]:
    """``widget``'s MIME bundle for the notebook, with ``stand_in`` as its ``text/plain``.

    A front end with widgets shows the widget; nbval and a plain-text viewer see
    ``stand_in`` followed by "(run the notebook to use the playground)".
    """
    bundle = widget._repr_mimebundle_(**kwargs)
    bundle["text/plain"] = f"{stand_in} (run the notebook to use the playground)"
    return bundle
