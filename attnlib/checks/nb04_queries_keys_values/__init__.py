"""Checkers for notebook 04's exercises, one module each: scaled dot-product attention for any
leading dimensions (:mod:`.attention`, its table in :mod:`.attention_mistakes`), cross-attention
between sequences of different widths (:mod:`.cross`) and attention pooling with one learned
query (:mod:`.pool`, its table in :mod:`.pool_mistakes`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 04.
"""

from attnlib.checks.nb04_queries_keys_values.attention import check_attention_any_shape
from attnlib.checks.nb04_queries_keys_values.cross import check_cross_attention_widths
from attnlib.checks.nb04_queries_keys_values.pool import check_attention_pool

__all__ = ["check_attention_any_shape", "check_attention_pool", "check_cross_attention_widths"]
