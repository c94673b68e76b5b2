"""Playgrounds: the learner's own text through the course's own models.

Like the sliders, each playground has a pure half that returns its data (unit-tested
without a browser, and answering bad input with a note instead of an exception) and a
thin widget half. One module per playground:

- ``sampler``: a prompt through notebook 10's char GPT, with temperature, top-k and top-p;
- ``dates``: any typed date through notebook 09's translator, step by step.

A notebook imports the package and calls through it: ``playgrounds.sampler.show_sampler``.

Notebooks 09 and 10.
"""

from attnlib.course.playgrounds import dates, sampler

__all__ = ["dates", "sampler"]
