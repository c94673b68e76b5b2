"""Shapes that the attention functions' tests share (test_attention, test_tiled_attention)."""

# (q, k, v) shapes with an empty dimension, each with a defined answer, never torch's
# IndexError. T_q = 0: nothing to compute; T_k = 0: every query has nothing to attend to
# (output 0).
EMPTY_SHAPES = [
    ((0, 4), (5, 4), (5, 3)),
    ((2, 3, 0, 4), (2, 3, 5, 4), (2, 3, 5, 3)),
    ((6, 4), (0, 4), (0, 3)),
    ((2, 3, 6, 4), (2, 3, 0, 4), (2, 3, 0, 3)),
    ((2, 0, 4), (2, 0, 4), (2, 0, 3)),
]
