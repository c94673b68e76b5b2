"""What IPython's ``display(obj)`` publishes in a shell, as a kernel would send it."""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from IPython.display import display
from IPython.utils.capture import capture_output


def displayed(obj: object) -> list[dict[str, Any]]:
    """The MIME bundle of every output that ``display(obj)`` publishes, in order."""
    InteractiveShell.instance()  # display() only prints a repr when no shell is running
    with capture_output() as captured:
        display(obj)
    return [output.data for output in captured.outputs]


def shown_widget_id(bundle: dict[str, Any]) -> str:
    """The model id of the widget a published bundle shows."""
    return bundle["application/vnd.jupyter.widget-view+json"]["model_id"]


def displayed_views(*bundles: dict[str, Any]) -> list[Any]:
    """The live widget objects that published bundles show (ipywidgets 8's registry)."""
    from ipywidgets.widgets.widget import _instances

    return [_instances[shown_widget_id(bundle)] for bundle in bundles]
