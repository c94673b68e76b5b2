"""attnlib: the tested building blocks of the attention course.

Each module holds one idea; the notebooks derive it in a few lines, then import
it from here and check that the two agree.
"""

from attnlib.checks import (
    CheckResult,
    check_causal_self_attention,
    check_cosine_similarity,
    check_dot,
    check_naive_self_attention,
    check_scaled_self_attention,
    check_score_table,
    check_softmax,
    check_softmax_jacobian,
)
from attnlib.explorers import (
    dot_product_at_angle,
    naive_weights_at_scale,
    scores_at_width,
    show_dot_product_at_angle,
    show_naive_weights_at_scale,
    show_scores_at_width,
    show_softmax_at_scale,
    softmax_at_scale,
)
from attnlib.masks import causal_mask
from attnlib.naive_attention import naive_self_attention
from attnlib.similarity import cosine_similarity, dot, projection
from attnlib.softmax import naive_softmax, softmax, softmax_jacobian
from attnlib.viz import plot_attention, plot_distribution, plot_heatmap, plot_vectors_2d
from attnlib.word_vectors import WordVectors, analogy, load_glove, nearest_words

__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "WordVectors",
    "analogy",
    "causal_mask",
    "check_causal_self_attention",
    "check_cosine_similarity",
    "check_dot",
    "check_naive_self_attention",
    "check_scaled_self_attention",
    "check_score_table",
    "check_softmax",
    "check_softmax_jacobian",
    "cosine_similarity",
    "dot",
    "dot_product_at_angle",
    "load_glove",
    "naive_self_attention",
    "naive_softmax",
    "naive_weights_at_scale",
    "nearest_words",
    "plot_attention",
    "plot_distribution",
    "plot_heatmap",
    "plot_vectors_2d",
    "projection",
    "scores_at_width",
    "show_dot_product_at_angle",
    "show_naive_weights_at_scale",
    "show_scores_at_width",
    "show_softmax_at_scale",
    "softmax",
    "softmax_at_scale",
    "softmax_jacobian",
]
