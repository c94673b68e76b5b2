"""Checkers for notebook 12's exercises, one module each: the FLOPs of tiled causal attention
that skips hidden tiles (:mod:`.causal_flops`), merging two partial results of attention
(:mod:`.merge`, its mistakes in :mod:`.merge_mistakes`) and, optional, tiled attention with
masks (:mod:`.tiled`, its mistakes in :mod:`.tiled_mistakes`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 12.
"""

from attnlib.checks.nb12_efficient.causal_flops import check_causal_tile_flops
from attnlib.checks.nb12_efficient.merge import check_merge_parts
from attnlib.checks.nb12_efficient.tiled import check_my_tiled_attention

__all__ = ["check_causal_tile_flops", "check_merge_parts", "check_my_tiled_attention"]
