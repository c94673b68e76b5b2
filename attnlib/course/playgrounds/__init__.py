"""Playgrounds: the learner's own input (a prompt, a date, a prediction) through the course's
own models and sliders.

Like the sliders, each playground has a pure half that returns its data (unit-tested
without a browser, and answering bad input with a note instead of an exception) and a
thin widget half. One module per playground:

- ``sampler``: a prompt through notebook 10's char GPT, with temperature, top-k and top-p;
- ``dates``: any typed date through notebook 09's translator, step by step;
- ``predict_first``: a multiple-choice prediction answered before a key slider appears,
  compared with what the slider's own function computes; ``predict_first_questions``: the
  question of each of notebooks 02, 03, 06 and 07;
- the attention views (head view, model view, neuron view) of any text: the pure half
  ``attention_views`` and ``neuron_view``, drawn by ``attention_drawing`` in the widget
  ``attention_widget``, for MiniLM (``minilm_views``, notebook 11), the char GPT
  (``gpt_views``, 10) and the toy models of 04 and 05 (``toy_views``).

A notebook imports the package and calls through it: ``playgrounds.sampler.show_sampler``.

Notebooks 02 to 07 and 09 to 11.
"""

import re

from attnlib.course.playgrounds import (
    attention_drawing,
    attention_views,
    attention_widget,
    dates,
    gpt_views,
    minilm_views,
    neuron_view,
    predict_first,
    predict_first_questions,
    sampler,
    toy_views,
)

# How a notebook shows a playground: `playgrounds.<module>.show_…(`, the module captured.
# benchmarks.study_time counts the playgrounds with it; the guide's screenshots and the browser
# test find them with it.
SHOW_CALL = re.compile(r"playgrounds\.(\w+)\.show_\w+\(")

__all__ = [
    "SHOW_CALL",
    "attention_drawing",
    "attention_views",
    "attention_widget",
    "dates",
    "gpt_views",
    "minilm_views",
    "neuron_view",
    "predict_first",
    "predict_first_questions",
    "sampler",
    "toy_views",
]
