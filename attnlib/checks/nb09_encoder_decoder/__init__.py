"""Checkers for notebook 09's exercises, one module each: label smoothing that gives <pad>
nothing (:mod:`.smoothing`), a warm-up with a linear decay (:mod:`.schedule`) and beam search
with GNMT's length penalty (:mod:`.beam`, its rules in :mod:`.beam_rules`, its mistakes in
:mod:`.beam_mistakes`, the models it runs on in :mod:`.toys`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. The
``reference_*`` functions take the place of an unfinished exercise in later cells
(``checks.yours_or_attnlib``). Notebook 09.
"""

from attnlib.checks.nb09_encoder_decoder.beam import (
    check_beam_search_gnmt,
    reference_beam_search_gnmt,
)
from attnlib.checks.nb09_encoder_decoder.schedule import (
    check_warmup_linear_decay,
    reference_warmup_linear_decay,
)
from attnlib.checks.nb09_encoder_decoder.smoothing import (
    check_smoothed_loss,
    reference_smoothed_loss,
)

__all__ = [
    "check_beam_search_gnmt",
    "check_smoothed_loss",
    "check_warmup_linear_decay",
    "reference_beam_search_gnmt",
    "reference_smoothed_loss",
    "reference_warmup_linear_decay",
]
