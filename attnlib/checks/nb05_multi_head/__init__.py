"""Checkers for notebook 05's exercises, one module each: a fused projection split into the
heads' queries, keys and values (:mod:`.split_qkv`), what each head adds to the output
(:mod:`.contributions`) and multi-head cross-attention from tensor operations
(:mod:`.from_scratch`, with the ways learners write it in :mod:`.wirings`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 05.
"""

from attnlib.checks.nb05_multi_head.contributions import check_head_contributions
from attnlib.checks.nb05_multi_head.from_scratch import check_multi_head_from_scratch
from attnlib.checks.nb05_multi_head.split_qkv import check_split_qkv

__all__ = ["check_head_contributions", "check_multi_head_from_scratch", "check_split_qkv"]
