"""Checkers for notebook 10's exercises, one module each: the GPT block (:mod:`.block`), the
forward pass (:mod:`.forward`), the training step (:mod:`.train_step`), the
temperature (:mod:`.temperature`), top-k (:mod:`.top_k`), top-p (:mod:`.top_p`), the sampler
that puts them together (:mod:`.sampler`) and, optional, greedy generation with a KV cache
(:mod:`.cached_generation`).

Each exercise lists the mistakes learners make on it (``MISTAKES``, in :mod:`.block_mistakes`,
:mod:`.forward_mistakes`, :mod:`.train_step_mistakes`, :mod:`.temperature_mistakes`,
:mod:`.sampler_mistakes` and :mod:`.cache_mistakes` for six), written as a learner would
write them; a failing answer that behaves as one of them is told
which (:mod:`.several`: one of two made at once, or one seen in how the shapes behave). Every
check runs on one thread (:mod:`attnlib.checks._threads`). Notebook 10.
"""

from attnlib.checks.nb10_gpt.block import check_my_gpt_block
from attnlib.checks.nb10_gpt.cached_generation import (
    check_my_generate_cached,
    count_key_positions,
)
from attnlib.checks.nb10_gpt.forward import check_my_gpt_forward
from attnlib.checks.nb10_gpt.sampler import check_my_sample
from attnlib.checks.nb10_gpt.temperature import check_my_temperature_probs
from attnlib.checks.nb10_gpt.top_k import check_my_top_k_logits
from attnlib.checks.nb10_gpt.top_p import check_my_top_p_probs
from attnlib.checks.nb10_gpt.train_step import check_my_train_step

__all__ = [
    "check_my_generate_cached",
    "check_my_gpt_block",
    "check_my_gpt_forward",
    "check_my_sample",
    "check_my_temperature_probs",
    "check_my_top_k_logits",
    "check_my_top_p_probs",
    "check_my_train_step",
    "count_key_positions",
]
