"""Playgrounds: the learner's own input (a prompt, a date, a prediction) through the course's
own models and sliders.

Like the sliders, each playground has a pure half that returns its data (unit-tested
without a browser, and answering bad input with a note instead of an exception) and a
thin widget half. One module per playground:

- ``sampler``: a prompt through notebook 10's char GPT, with temperature, top-k and top-p;
- ``dates``: any typed date through notebook 09's translator, step by step;
- ``predict_first``: a multiple-choice prediction answered before a key slider appears,
  compared with what the slider's own function computes; ``predict_first_questions``: the
  question of each of notebooks 02, 03, 06 and 07.

A notebook imports the package and calls through it: ``playgrounds.sampler.show_sampler``.

Notebooks 02, 03, 06, 07, 09 and 10.
"""

from attnlib.course.playgrounds import dates, predict_first, predict_first_questions, sampler

__all__ = ["dates", "predict_first", "predict_first_questions", "sampler"]
