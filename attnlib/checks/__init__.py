"""Checkers for the notebooks' exercises, one module (or sub-package) per notebook.

A checker calls the learner's answer on several cases and returns a :class:`CheckResult`:
"✓ … is correct", or the failing case, what is wrong there and, when the checker recognises it,
the mistake made and why it fails. Each checker keeps a table of the mistakes learners make on
its exercise, written as a learner would write them, and names the one the answer behaves
like. It never prints the fix as code: more help comes from :func:`hint` (in levels) and
:func:`solution`, when asked. An answer that calls the implementation it should write is
refused; one that still raises ``NotImplementedError`` is "not done yet", with its task.

In a notebook, a core exercise's check cell ends with ``.assert_passed()``, which raises
:class:`CheckFailedError` when the check fails: Jupyter shows the report alone and nbgrader
scores the cell as a fail. The cell is tagged ``raises-exception``, so Run All goes on. An
optional exercise's check only shows its report. A later cell that builds on an exercise calls
:func:`yours_or_attnlib`.
"""

from attnlib.checks import (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)
from attnlib.checks._framework import CheckFailedError, CheckResult
from attnlib.checks.attention_core import (
    check_attention_head,
    check_causal_mask,
    check_cross_attention,
    check_masked_attention,
    check_merge_heads,
    check_multi_head_attention,
    check_padding_mask,
    check_rotary,
    check_scaled_dot_product_attention,
    check_sinusoidal_encoding,
    check_split_heads,
)
from attnlib.checks.beam_search import check_beam_search
from attnlib.checks.efficient import (
    check_attention_flops,
    check_online_softmax_step,
    check_tiled_attention,
)
from attnlib.checks.foundations import (
    check_causal_self_attention,
    check_cosine_similarity,
    check_dot,
    check_naive_self_attention,
    check_scaled_self_attention,
    check_score_table,
)
from attnlib.checks.full_models import (
    check_label_smoothed_loss,
    check_temperature_probs,
    check_top_k_logits,
    check_warmup_schedule,
)
from attnlib.checks.gpt_block import check_gpt_block
from attnlib.checks.help import hint, solution, yours_or_attnlib
from attnlib.checks.kv_cache import check_kv_cache, key_positions
from attnlib.checks.nb00_pytorch import *  # noqa: F403
from attnlib.checks.nb01_dot_products import *  # noqa: F403
from attnlib.checks.nb02_softmax import *  # noqa: F403
from attnlib.checks.nb03_naive_attention import *  # noqa: F403
from attnlib.checks.nb04_queries_keys_values import *  # noqa: F403
from attnlib.checks.nb05_multi_head import *  # noqa: F403
from attnlib.checks.nb06_positional import *  # noqa: F403
from attnlib.checks.nb07_masking import *  # noqa: F403
from attnlib.checks.nb08_transformer_block import *  # noqa: F403
from attnlib.checks.nb09_encoder_decoder import *  # noqa: F403
from attnlib.checks.nb10_gpt import *  # noqa: F403
from attnlib.checks.nb11_pretrained import *  # noqa: F403
from attnlib.checks.nb12_efficient import *  # noqa: F403
from attnlib.checks.own_encoder import (
    check_own_attention,
    check_own_encoder_layer,
    check_own_feed_forward,
    check_own_layer_norm,
)
from attnlib.checks.own_minilm import check_own_minilm
from attnlib.checks.predictions import Prediction, PredictionResult
from attnlib.checks.pretrained import (
    check_mean_pool,
    check_previous_token_share,
    check_semantic_search,
)
from attnlib.checks.pytorch_basics import (
    check_batched_scores,
    check_cross_entropy,
    check_linear,
    check_row_normalise,
)
from attnlib.checks.pytorch_training import check_gradient, check_training_step
from attnlib.checks.sampling import check_sampler, check_top_p_probs
from attnlib.checks.transformer_block import (
    check_feed_forward,
    check_layer_norm,
    check_residual_block,
)
from attnlib.checks.transformer_layers import check_decoder_layer, check_encoder_layer

_NOTEBOOKS = (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)
__all__ = [
    "CheckFailedError",
    "CheckResult",
    "Prediction",
    "PredictionResult",
    "hint",
    "solution",
    "yours_or_attnlib",
    *(name for notebook in _NOTEBOOKS for name in notebook.__all__),
    # The first edition's checkers, until their notebook is rewritten.
    "check_attention_flops",
    "check_attention_head",
    "check_batched_scores",
    "check_beam_search",
    "check_causal_mask",
    "check_causal_self_attention",
    "check_cosine_similarity",
    "check_cross_attention",
    "check_cross_entropy",
    "check_decoder_layer",
    "check_dot",
    "check_encoder_layer",
    "check_feed_forward",
    "check_gpt_block",
    "check_gradient",
    "check_kv_cache",
    "check_label_smoothed_loss",
    "check_layer_norm",
    "check_linear",
    "check_masked_attention",
    "check_mean_pool",
    "check_merge_heads",
    "check_multi_head_attention",
    "check_naive_self_attention",
    "check_online_softmax_step",
    "check_own_attention",
    "check_own_encoder_layer",
    "check_own_feed_forward",
    "check_own_layer_norm",
    "check_own_minilm",
    "check_padding_mask",
    "check_previous_token_share",
    "check_residual_block",
    "check_rotary",
    "check_row_normalise",
    "check_sampler",
    "check_scaled_dot_product_attention",
    "check_scaled_self_attention",
    "check_score_table",
    "check_semantic_search",
    "check_sinusoidal_encoding",
    "check_split_heads",
    "check_temperature_probs",
    "check_tiled_attention",
    "check_top_k_logits",
    "check_top_p_probs",
    "check_training_step",
    "check_warmup_schedule",
    "key_positions",
]
