"""attnlib: the tested building blocks of the attention course.

Each module holds one idea; the notebooks derive it in a few lines, then import
it from here and check that the two agree.
"""

from attnlib import dates
from attnlib.attention import scaled_dot_product_attention
from attnlib.char_lm import CharVocabulary, load_course_text, random_windows, train_char_gpt
from attnlib.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from attnlib.checks import (
    CheckResult,
    check_attention_head,
    check_causal_mask,
    check_causal_self_attention,
    check_cosine_similarity,
    check_cross_attention,
    check_dot,
    check_feed_forward,
    check_label_smoothed_loss,
    check_layer_norm,
    check_masked_attention,
    check_merge_heads,
    check_multi_head_attention,
    check_naive_self_attention,
    check_padding_mask,
    check_residual_block,
    check_rotary,
    check_scaled_dot_product_attention,
    check_scaled_self_attention,
    check_score_table,
    check_sinusoidal_encoding,
    check_softmax,
    check_softmax_jacobian,
    check_split_heads,
    check_temperature_probs,
    check_top_k_logits,
    check_warmup_schedule,
)
from attnlib.decoder import Decoder, DecoderLayer
from attnlib.decoding import beam_search, greedy_decode
from attnlib.encoder import Encoder, EncoderLayer
from attnlib.explorers import (
    MASK_KINDS,
    dot_product_at_angle,
    encoding_at,
    masked_weights,
    naive_weights_at_scale,
    sampling_distribution,
    scores_at_width,
    show_dot_product_at_angle,
    show_encoding_at,
    show_masked_weights,
    show_naive_weights_at_scale,
    show_sampling_distribution,
    show_scores_at_width,
    show_softmax_at_scale,
    softmax_at_scale,
)
from attnlib.feed_forward import FeedForward
from attnlib.gpt import GPT, GPTConfig, next_token_probs
from attnlib.kv_cache import KVCache
from attnlib.masks import (
    causal_mask,
    from_torch_mha_mask,
    padding_mask,
    padding_mask_from_ids,
    to_torch_key_padding_mask,
    to_torch_mha_mask,
)
from attnlib.multi_head import MultiHeadAttention, merge_heads, split_heads
from attnlib.naive_attention import naive_self_attention
from attnlib.positional import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    sinusoidal_encoding,
)
from attnlib.residual import Residual
from attnlib.similarity import cosine_similarity, dot, projection
from attnlib.single_head import Attention, SelfAttention
from attnlib.softmax import naive_softmax, softmax, softmax_jacobian
from attnlib.training import (
    TrainingHistory,
    fit,
    label_smoothed_cross_entropy,
    warmup_inverse_sqrt,
    warmup_scheduler,
)
from attnlib.transformer import AttentionMaps, Transformer, TransformerConfig
from attnlib.viz import plot_attention, plot_distribution, plot_heatmap, plot_vectors_2d
from attnlib.word_vectors import WordVectors, analogy, load_glove, nearest_words

__version__ = "0.1.0"

__all__ = [
    "GPT",
    "MASK_KINDS",
    "Attention",
    "AttentionMaps",
    "CharVocabulary",
    "CheckResult",
    "CheckpointError",
    "Decoder",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "GPTConfig",
    "KVCache",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "Residual",
    "RotaryEmbedding",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "TrainingHistory",
    "Transformer",
    "TransformerConfig",
    "WordVectors",
    "analogy",
    "apply_rotary",
    "beam_search",
    "causal_mask",
    "check_attention_head",
    "check_causal_mask",
    "check_causal_self_attention",
    "check_cosine_similarity",
    "check_cross_attention",
    "check_dot",
    "check_feed_forward",
    "check_label_smoothed_loss",
    "check_layer_norm",
    "check_masked_attention",
    "check_merge_heads",
    "check_multi_head_attention",
    "check_naive_self_attention",
    "check_padding_mask",
    "check_residual_block",
    "check_rotary",
    "check_scaled_dot_product_attention",
    "check_scaled_self_attention",
    "check_score_table",
    "check_sinusoidal_encoding",
    "check_softmax",
    "check_softmax_jacobian",
    "check_split_heads",
    "check_temperature_probs",
    "check_top_k_logits",
    "check_warmup_schedule",
    "cosine_similarity",
    "dates",
    "dot",
    "dot_product_at_angle",
    "encoding_at",
    "fit",
    "from_torch_mha_mask",
    "greedy_decode",
    "label_smoothed_cross_entropy",
    "load_checkpoint",
    "load_course_text",
    "load_glove",
    "masked_weights",
    "merge_heads",
    "naive_self_attention",
    "naive_softmax",
    "naive_weights_at_scale",
    "nearest_words",
    "next_token_probs",
    "padding_mask",
    "padding_mask_from_ids",
    "plot_attention",
    "plot_distribution",
    "plot_heatmap",
    "plot_vectors_2d",
    "projection",
    "random_windows",
    "sampling_distribution",
    "save_checkpoint",
    "scaled_dot_product_attention",
    "scores_at_width",
    "show_dot_product_at_angle",
    "show_encoding_at",
    "show_masked_weights",
    "show_naive_weights_at_scale",
    "show_sampling_distribution",
    "show_scores_at_width",
    "show_softmax_at_scale",
    "sinusoidal_encoding",
    "softmax",
    "softmax_at_scale",
    "softmax_jacobian",
    "split_heads",
    "to_torch_key_padding_mask",
    "to_torch_mha_mask",
    "train_char_gpt",
    "warmup_inverse_sqrt",
    "warmup_scheduler",
]
