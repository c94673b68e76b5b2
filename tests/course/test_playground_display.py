"""A playground's stand-in: the plain text ipywidgets publishes for it is exactly the stand-in,
short or long (ipywidgets would cut a text over 110 characters its own way)."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from displayed import displayed, displayed_views

from attnlib.course.playgrounds.display import show_playground, stand_in_view

SUFFIX = " (run the notebook to use the playground)"


@pytest.mark.parametrize("length", [1, 60, 69, 70, 200])
def test_the_published_plain_text_is_the_stand_in(length: int) -> None:
    widget = widgets.Label("x")
    view = stand_in_view(widget, "s" * length)
    (bundle,) = displayed(view)
    assert bundle["text/plain"] == repr(view) == view.stand_in
    assert len(view.stand_in) <= 110
    if len(SUFFIX) + length <= 110:
        assert view.stand_in == "s" * length + SUFFIX
    else:
        assert view.stand_in.endswith("…") and view.stand_in.startswith("s" * 60)
    assert view.children == (widget,)


def test_show_playground_displays_the_widget_in_its_box() -> None:
    widget = widgets.Label("x")

    class Playground:
        def _ipython_display_(self) -> None:
            show_playground(widget, "a playground")

    bundles = displayed(Playground())
    (view,) = displayed_views(*bundles)
    assert view.children == (widget,)
    assert bundles[0]["text/plain"] == "a playground" + SUFFIX
