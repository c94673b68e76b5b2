"""Checkers for notebook 08's exercises, one module each: a gated feed-forward network
(:mod:`.gated_ffn`), LayerNorm over any trailing dimensions (:mod:`.layer_norm`), a residual
block with dropout, post-norm or pre-norm (:mod:`.residual`), and the paper's encoder and
decoder layers, built as ``nn.Module`` classes (:mod:`.encoder_layer`, :mod:`.decoder_layer`,
sharing :mod:`._layers`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 08.
"""

from attnlib.checks.nb08_transformer_block.decoder_layer import check_paper_decoder_layer
from attnlib.checks.nb08_transformer_block.encoder_layer import check_paper_encoder_layer
from attnlib.checks.nb08_transformer_block.gated_ffn import check_gated_feed_forward
from attnlib.checks.nb08_transformer_block.layer_norm import check_layer_norm_trailing_dims
from attnlib.checks.nb08_transformer_block.residual import check_residual_block_with_dropout

__all__ = [
    "check_gated_feed_forward",
    "check_layer_norm_trailing_dims",
    "check_paper_decoder_layer",
    "check_paper_encoder_layer",
    "check_residual_block_with_dropout",
]
