"""Playgrounds: the learner's own text through the course's own models.

Like the sliders, each playground has a pure half that returns its data (unit-tested
without a browser, and answering bad input with a note instead of an exception) and a
thin widget half. One module per playground:

- ``sampler``: a prompt through notebook 10's char GPT, with temperature, top-k and top-p;
- ``dates``: any typed date through notebook 09's translator, step by step;
- the attention views (head view, model view, neuron view) of any text: the pure half
  ``attention_views`` and ``neuron_view``, drawn by ``attention_drawing`` in the widget
  ``attention_widget``, for MiniLM (``minilm_views``, notebook 11), the char GPT
  (``gpt_views``, 10) and the toy models of 04 and 05 (``toy_views``).

A notebook imports the package and calls through it: ``playgrounds.gpt_views.show_gpt_views``.

Notebooks 04, 05, 09, 10 and 11.
"""

from attnlib.course.playgrounds import (
    attention_drawing,
    attention_views,
    attention_widget,
    dates,
    gpt_views,
    minilm_views,
    neuron_view,
    sampler,
    toy_views,
)

__all__ = [
    "attention_drawing",
    "attention_views",
    "attention_widget",
    "dates",
    "gpt_views",
    "minilm_views",
    "neuron_view",
    "sampler",
    "toy_views",
]
