"""Checkers for the notebooks' exercises.

A checker calls the learner's function on several cases, compares each result
with attnlib's reference and returns a :class:`CheckResult` whose text says
what is wrong (which case, expected vs got, a hint) or that all cases passed.
It never lets the learner's exception escape as a bare traceback, and a
function that still raises ``NotImplementedError`` is reported as not done yet,
with the task its docstring states.

In a notebook, the check cell ends with ``.assert_passed()``: the report is shown
when the function is right, and otherwise raised as :class:`CheckFailedError`, which
Jupyter shows as the report alone and an autograder (nbgrader) scores as a fail.
"""

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
    check_softmax,
    check_softmax_jacobian,
)
from attnlib.checks.full_models import (
    check_label_smoothed_loss,
    check_temperature_probs,
    check_top_k_logits,
    check_warmup_schedule,
)
from attnlib.checks.gpt_block import check_gpt_block
from attnlib.checks.kv_cache import check_kv_cache, key_positions
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

__all__ = [
    "CheckFailedError",
    "CheckResult",
    "Prediction",
    "PredictionResult",
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
    "check_softmax",
    "check_softmax_jacobian",
    "check_split_heads",
    "check_temperature_probs",
    "check_tiled_attention",
    "check_top_k_logits",
    "check_top_p_probs",
    "check_training_step",
    "check_warmup_schedule",
    "key_positions",
]
