"""Checkers for notebook 07's exercises, one module each: the causal mask of queries that come
after cached keys (:mod:`.cached_causal`), the padding mask of a batch (:mod:`.padding`) and
masked attention on batched scores, empty rows and float16 included (:mod:`.masked_attention`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 07.
"""

from attnlib.checks.nb07_masking.cached_causal import check_cached_causal_mask
from attnlib.checks.nb07_masking.masked_attention import check_my_masked_attention
from attnlib.checks.nb07_masking.padding import check_my_padding_mask

__all__ = ["check_cached_causal_mask", "check_my_masked_attention", "check_my_padding_mask"]
