"""Checkers for notebook 00's exercises, one module each: columns that add up to 1
(:mod:`.columns`), scores head by head from a (B, T, H, D) layout (:mod:`.head_scores`), a linear
layer along the positions (:mod:`.mix_positions`), cross-entropy over a padded batch
(:mod:`.masked_loss`), derivatives at many points with autograd (:mod:`.derivative`) and one
optimizer step on several batches (:mod:`.accumulation`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 00.
"""

from attnlib.checks.nb00_pytorch.accumulation import check_accumulated_step
from attnlib.checks.nb00_pytorch.columns import check_normalise_columns
from attnlib.checks.nb00_pytorch.derivative import check_elementwise_derivative
from attnlib.checks.nb00_pytorch.head_scores import check_head_scores
from attnlib.checks.nb00_pytorch.masked_loss import check_masked_cross_entropy
from attnlib.checks.nb00_pytorch.mix_positions import check_mix_positions

__all__ = [
    "check_accumulated_step",
    "check_elementwise_derivative",
    "check_head_scores",
    "check_masked_cross_entropy",
    "check_mix_positions",
    "check_normalise_columns",
]
