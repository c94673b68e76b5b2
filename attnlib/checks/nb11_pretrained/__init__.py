"""Checkers for notebook 11's exercises, one module each: max pooling over the real tokens
(:mod:`.pooling`), how much a head looks back (:mod:`.look_back`, optional), semantic search by
cosine (:mod:`.search`), and the capstone's modules, which run MiniLM's weights: a LayerNorm
(:mod:`.layer_norm`), multi-head attention with a padding mask (:mod:`.attention`), the GELU
feed-forward network (:mod:`.feed_forward`) and the post-norm encoder layer
(:mod:`.encoder_layer`, with :mod:`.encoder_layer_mistakes` and :mod:`.minilm_layers`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them (a function, or for the capstone a class); a failing answer that behaves as one of
them on every case is told which. A few are named by what the cases' outputs cannot show
(:mod:`._after`): an input edited in place, parameters under other names, a LayerNorm that does
not start at ones and zeros, code for one (T, T) matrix only. Notebook 11.
"""

from attnlib.checks.nb11_pretrained.attention import check_bert_attention
from attnlib.checks.nb11_pretrained.encoder_layer import check_bert_encoder_layer
from attnlib.checks.nb11_pretrained.feed_forward import check_bert_feed_forward
from attnlib.checks.nb11_pretrained.layer_norm import check_bert_layer_norm
from attnlib.checks.nb11_pretrained.look_back import check_previous_token_weight
from attnlib.checks.nb11_pretrained.pooling import check_masked_max_pool
from attnlib.checks.nb11_pretrained.search import check_cosine_search

__all__ = [
    "check_bert_attention",
    "check_bert_encoder_layer",
    "check_bert_feed_forward",
    "check_bert_layer_norm",
    "check_cosine_search",
    "check_masked_max_pool",
    "check_previous_token_weight",
]
