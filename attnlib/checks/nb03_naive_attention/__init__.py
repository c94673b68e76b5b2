"""Checkers for notebook 03's exercises, one module each: naive layers stacked into one mix
(:mod:`.stacked`), self-attention scored by cosines (:mod:`.cosine`) and causal self-attention
over a window of past positions (:mod:`.local`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 03.
"""

from attnlib.checks.nb03_naive_attention.cosine import check_cosine_self_attention
from attnlib.checks.nb03_naive_attention.local import check_local_self_attention
from attnlib.checks.nb03_naive_attention.stacked import check_stacked_naive_attention

__all__ = [
    "check_cosine_self_attention",
    "check_local_self_attention",
    "check_stacked_naive_attention",
]
