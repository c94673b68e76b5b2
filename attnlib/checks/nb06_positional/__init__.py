"""Checkers for notebook 06's exercises, one module each: the sinusoidal table for any positions
and any width, odd included (:mod:`.sinusoidal`), and rotary embeddings, the optional exercise
(:mod:`.rotary`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 06.
"""

from attnlib.checks.nb06_positional.rotary import check_my_rotary
from attnlib.checks.nb06_positional.sinusoidal import check_my_sinusoidal_encoding

__all__ = ["check_my_rotary", "check_my_sinusoidal_encoding"]
