"""The functions behind the notebooks' sliders, one module per notebook.

Each explorer has two halves: a pure function that computes what the slider shows
(returning a frozen dataclass, unit-tested by calling it), and a ``show_*`` function
that draws it. A notebook only wires ``show_*`` to ``ipywidgets.interact``. The result
dataclasses hold tensors, so they compare by identity (``eq=False``): compare their
fields instead.
"""

from attnlib.course.sliders.nb01_dot_products import (
    DotProductAtAngle,
    dot_product_at_angle,
    show_dot_product_at_angle,
)
from attnlib.course.sliders.nb02_softmax import (
    SATURATION_SCORES,
    ScoresAtWidth,
    SoftmaxAtScale,
    scores_at_width,
    show_scores_at_width,
    show_softmax_at_scale,
    softmax_at_scale,
)
from attnlib.course.sliders.nb03_naive_attention import (
    naive_weights_at_scale,
    show_naive_weights_at_scale,
)
from attnlib.course.sliders.nb06_positional import EncodingAt, encoding_at, show_encoding_at
from attnlib.course.sliders.nb07_masking import (
    MASK_DEMO_WORDS,
    MASK_KINDS,
    MaskedWeights,
    masked_weights,
    show_masked_weights,
)
from attnlib.course.sliders.nb10_sampling import sampling_distribution, show_sampling_distribution
from attnlib.course.sliders.nb11_heads import HeadView, head_view, show_head_view
from attnlib.course.sliders.nb12_online_softmax import (
    OnlineSoftmaxProgress,
    online_softmax_progress,
    show_online_softmax_progress,
)

__all__ = [
    "MASK_DEMO_WORDS",
    "MASK_KINDS",
    "SATURATION_SCORES",
    "DotProductAtAngle",
    "EncodingAt",
    "HeadView",
    "MaskedWeights",
    "OnlineSoftmaxProgress",
    "ScoresAtWidth",
    "SoftmaxAtScale",
    "dot_product_at_angle",
    "encoding_at",
    "head_view",
    "masked_weights",
    "naive_weights_at_scale",
    "online_softmax_progress",
    "sampling_distribution",
    "scores_at_width",
    "show_dot_product_at_angle",
    "show_encoding_at",
    "show_head_view",
    "show_masked_weights",
    "show_naive_weights_at_scale",
    "show_online_softmax_progress",
    "show_sampling_distribution",
    "show_scores_at_width",
    "show_softmax_at_scale",
    "softmax_at_scale",
]
