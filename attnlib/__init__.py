"""attnlib: the tested building blocks of the attention course.

The modules at the top of this package are the course's concepts, in the order the
notebooks meet them; each one's docstring names its notebook. Two sub-packages hold
what serves the course rather than the model: ``attnlib.course`` (sliders, toy tasks,
the date and character data, plots) and ``attnlib.formats`` (safetensors, WordPiece,
the MiniLM loader). The exercise checkers are in ``attnlib.checks``.
"""

from attnlib._device import resolve_device
from attnlib.attention import fused_attention, scaled_dot_product_attention
from attnlib.bert import BertConfig, BertEmbeddings, BertModel, BertOutput
from attnlib.checkpoints import (
    CheckpointError,
    load_checkpoint,
    load_training_state,
    save_checkpoint,
)
from attnlib.decoder import Decoder, DecoderLayer
from attnlib.decoding import beam_search, beam_search_with_scores, greedy_decode
from attnlib.encoder import Encoder, EncoderLayer
from attnlib.feed_forward import FeedForward
from attnlib.formats.minilm import load_minilm
from attnlib.gpt import GPT, GPTConfig
from attnlib.kv_cache import KVCache
from attnlib.masks import (
    causal_mask,
    from_torch_mha_mask,
    padding_mask,
    padding_mask_from_ids,
    padding_mask_from_token_mask,
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
from attnlib.residual import Residual, residual_connection
from attnlib.sampling import next_token_probs
from attnlib.sentence_encoder import (
    SentenceEncoder,
    SentenceEncoderOutput,
    mean_pool,
    semantic_search,
)
from attnlib.similarity import cosine_similarity, dot, projection
from attnlib.single_head import AttentionHead, SelfAttention
from attnlib.softmax import naive_softmax, softmax, softmax_jacobian
from attnlib.tiled_attention import (
    OnlineSoftmaxState,
    online_softmax,
    online_softmax_step,
    tiled_attention,
)
from attnlib.training import (
    NonFiniteLossError,
    TrainingHistory,
    fit,
    label_smoothed_cross_entropy,
    warmup_inverse_sqrt,
    warmup_scheduler,
)
from attnlib.transformer import AttentionMaps, Transformer, TransformerConfig

__version__ = "0.2.0"

__all__ = [  # noqa: RUF022 (grouped by notebook, not sorted)
    # 01 dot products, 02 softmax, 03 naive self-attention
    "dot",
    "cosine_similarity",
    "projection",
    "softmax",
    "naive_softmax",
    "softmax_jacobian",
    "naive_self_attention",
    # 04 queries, keys, values; 05 multi-head
    "scaled_dot_product_attention",
    "fused_attention",
    "AttentionHead",
    "SelfAttention",
    "MultiHeadAttention",
    "split_heads",
    "merge_heads",
    # 06 positional encoding, 07 masking
    "sinusoidal_encoding",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "RotaryEmbedding",
    "apply_rotary",
    "causal_mask",
    "padding_mask",
    "padding_mask_from_ids",
    "padding_mask_from_token_mask",
    "to_torch_mha_mask",
    "to_torch_key_padding_mask",
    "from_torch_mha_mask",
    # 08 the Transformer block, 09 a full encoder-decoder
    "FeedForward",
    "Residual",
    "residual_connection",
    "EncoderLayer",
    "Encoder",
    "DecoderLayer",
    "Decoder",
    "Transformer",
    "TransformerConfig",
    "AttentionMaps",
    "fit",
    "TrainingHistory",
    "NonFiniteLossError",
    "label_smoothed_cross_entropy",
    "warmup_inverse_sqrt",
    "warmup_scheduler",
    "greedy_decode",
    "beam_search",
    "beam_search_with_scores",
    "save_checkpoint",
    "load_checkpoint",
    "load_training_state",
    "CheckpointError",
    "resolve_device",
    # 10 decoder-only GPT
    "GPT",
    "GPTConfig",
    "KVCache",
    "next_token_probs",
    # 11 a pretrained model
    "BertConfig",
    "BertEmbeddings",
    "BertModel",
    "BertOutput",
    "SentenceEncoder",
    "SentenceEncoderOutput",
    "mean_pool",
    "semantic_search",
    "load_minilm",
    # 12 efficient attention
    "online_softmax",
    "online_softmax_step",
    "OnlineSoftmaxState",
    "tiled_attention",
]
