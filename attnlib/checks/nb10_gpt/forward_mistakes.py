"""Notebook 10, Exercise 2: the usual mistakes in a GPT's forward pass, each a function
``(gpt, idx) -> logits`` written as a learner would write it.

The checker (:mod:`.forward`) runs each on its own model and cases, after the same seed, and
names the first that computes what the learner's forward computed. Two are recognised by what
happens inside the call rather than by its numbers (their functions are what a learner wrote,
for the table and the tests): a causal mask built once per block (the blocks see equal masks,
not one), and a layer built inside the function (its weights are new random numbers).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.checks._exercise import Mistake
from attnlib.gpt import GPT
from attnlib.masks import causal_mask

Tensor = torch.Tensor


def worked(gpt: GPT, idx: Tensor) -> Tensor:
    """The answer the check compares with (attnlib's ``forward_pass``, written out here)."""
    length = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(length)))
    mask = causal_mask(length)  # (T, T), once
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))  # (B, T, V)


def _embedded(gpt: GPT, idx: Tensor, positions: str, embedding_dropout: str) -> Tensor:
    """The stream that enters the first block, ``(B, T, C)``, as a variant builds it."""
    length = idx.shape[1]
    tokens = gpt.token_embedding(idx)  # (B, T, C)
    if positions == "arange":
        x = tokens + gpt.position_embedding(torch.arange(length))
    elif positions == "none":
        x = tokens
    elif positions == "whole table":
        x = tokens + gpt.position_embedding.weight  # (max_len, C), not (T, C)
    elif positions == "from one":
        x = tokens + gpt.position_embedding(torch.arange(1, length + 1))
    elif positions == "token ids":
        x = tokens + gpt.position_embedding(idx)
    else:
        raise ValueError(positions)
    if embedding_dropout == "module":
        x = gpt.dropout(x)
    elif embedding_dropout == "always":
        x = F.dropout(x, gpt.config.dropout)  # training=True by default
    return x


def _variant(
    gpt: GPT,
    idx: Tensor,
    *,
    positions: str = "arange",
    mask: str = "causal",
    embedding_dropout: str = "module",
    chain: str = "stream",
    final: str = "norm then head",
    output: str = "logits",
) -> Tensor:
    length = idx.shape[1]
    x = _embedded(gpt, idx, positions, embedding_dropout)  # (B, T, C)
    built = {
        "causal": lambda: causal_mask(length),
        "inverted": lambda: ~causal_mask(length),
        "none": lambda: None,
        "future": lambda: causal_mask(length).T,
        "max_len": lambda: causal_mask(gpt.config.max_len),
    }[mask]
    shared = built()
    embeddings = x
    for block in gpt.blocks:
        if chain == "stream":
            x, _ = block(x, shared)
        elif chain == "embeddings":
            x, _ = block(embeddings, shared)
        elif chain == "pair":
            x = block(x, shared)  # the pair (y, weights) kept as the stream
        elif chain == "weights":
            _, x = block(x, shared)
        elif chain in ("norm each", "norm each, then again"):
            x = gpt.final_norm(block(x, shared)[0])  # the final LayerNorm after every block
        else:
            raise ValueError(chain)
    if final == "norm then head" and chain == "norm each":
        logits = gpt.head(x)  # normalised in the loop already
    elif final == "norm then head":
        logits = gpt.head(gpt.final_norm(x))
    elif final == "dropout then head":
        logits = gpt.head(gpt.dropout(gpt.final_norm(x)))
    elif final == "no norm":
        logits = gpt.head(x)
    elif final == "head then norm":
        logits = gpt.final_norm(gpt.head(x))
    elif final == "new norm":
        logits = gpt.head(nn.LayerNorm(x.shape[-1], dtype=x.dtype)(x))
    else:
        raise ValueError(final)
    if output == "softmax":
        return logits.softmax(dim=-1)
    if output == "log_softmax":
        return logits.log_softmax(dim=-1)
    if output == "last":
        return logits[:, -1]  # (B, V)
    return logits


def _mistake(name: str, why: str, **variant: str) -> Mistake:
    return Mistake(name, why, lambda gpt, idx: _variant(gpt, idx, **variant))


def _mask_per_block(gpt: GPT, idx: Tensor) -> Tensor:
    length = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(length)))
    for block in gpt.blocks:
        x, _ = block(x, causal_mask(length))  # a new mask for every block
    return gpt.head(gpt.final_norm(x))


def _new_head(gpt: GPT, idx: Tensor) -> Tensor:
    length = idx.shape[1]
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(length)))
    mask = causal_mask(length)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    head = nn.Linear(x.shape[-1], gpt.config.vocab_size, bias=False, dtype=x.dtype)
    return head(gpt.final_norm(x))


def _new_position_embedding(gpt: GPT, idx: Tensor) -> Tensor:
    length = idx.shape[1]
    table = nn.Embedding(gpt.config.max_len, gpt.config.d_model, dtype=torch.float64)
    x = gpt.dropout(gpt.token_embedding(idx) + table(torch.arange(length)))
    mask = causal_mask(length)
    for block in gpt.blocks:
        x, _ = block(x, mask)
    return gpt.head(gpt.final_norm(x))


MASK_PER_BLOCK = Mistake(
    "built a new causal mask for every block instead of one for the whole forward pass",
    "every block reads the same positions, so every block needs the same mask: the forward "
    "pass builds it once, before the loop, and hands that one to each block (GPT.forward does; "
    "with a KV cache it is the one mask of the new positions against all the cached ones).",
    _mask_per_block,
)
NEW_HEAD = Mistake(
    "built a new nn.Linear as the head inside the function instead of using the model's tied head",
    "a layer built in the forward pass gets new random weights at every call and is not one of "
    "the model's parameters, so training never reaches it; the model's head (gpt.head) shares "
    "its matrix with the token embedding, and that shared matrix is what training learns.",
    _new_head,
)
NEW_EMBEDDING = Mistake(
    "built a new nn.Embedding inside the function instead of using the model's embeddings",
    "a table built in the forward pass holds new random numbers at every call and is not one of "
    "the model's parameters, so training never reaches it: use gpt.token_embedding and "
    "gpt.position_embedding, whose rows the model learns.",
    _new_position_embedding,
)

MISTAKES = (
    _mistake(
        "left out the position embedding",
        "without it every position of a token gets the same vector and attention cannot tell "
        "order: 'dog bites man' and 'man bites dog' look alike to the blocks (notebook 06).",
        positions="none",
    ),
    _mistake(
        "added the whole position table (max_len rows) instead of the rows of positions 0 to T - 1",
        "the table has a row for every position up to max_len; a text of T tokens needs its "
        "first T rows, one per column of idx. Only a text of exactly max_len tokens fits the "
        "whole table.",
        positions="whole table",
    ),
    _mistake(
        "numbered the positions from 1 instead of 0",
        "the first token is at position 0, the row the model trained for it; counting from 1 "
        "shifts every position by one and runs off the table at T = max_len.",
        positions="from one",
    ),
    _mistake(
        "looked the token ids up in the position embedding instead of the positions",
        "the position table is indexed by where a token stands (0, 1, ..., T - 1), not by which "
        "token it is: looking up the ids gives a second token embedding and no order at all.",
        positions="token ids",
    ),
    _mistake(
        "inverted the causal mask (True = blocked)",
        "in this course True means 'may attend': attnlib.causal_mask is already the mask the "
        "blocks need, and inverting it lets each position see only the future.",
        mask="inverted",
    ),
    _mistake(
        "passed no mask to the blocks: every position sees the tokens after it",
        "the model is trained to predict the next token at every position at once: a position "
        "that can see the next token learns to copy it, and generation, where there is no next "
        "token yet, fails.",
        mask="none",
    ),
    _mistake(
        "built a mask that lets each position see itself and the future instead of the past",
        "row t of the mask says which keys query t may attend to: itself and the positions "
        "before it, the lower triangle. The upper triangle is the future.",
        mask="future",
    ),
    _mistake(
        "built the mask for max_len positions instead of for the T tokens of idx",
        "attention compares T queries with T keys, so the mask is (T, T); a (max_len, max_len) "
        "mask fits only a text of exactly max_len tokens.",
        mask="max_len",
    ),
    _mistake(
        "left out the final LayerNorm",
        "a pre-norm stack never normalises its stream inside the blocks, so its scale grows with "
        "depth: the final LayerNorm (gpt.final_norm) is what the head is trained to read.",
        final="no norm",
    ),
    _mistake(
        "applied the head before the final LayerNorm",
        "the LayerNorm normalises each position's C-wide vector of the stream; the head then "
        "turns it into V scores. After the head there are V numbers, not C, to normalise.",
        final="head then norm",
    ),
    _mistake(
        "built a new nn.LayerNorm inside the function instead of using the model's final_norm",
        "gpt.final_norm has a trained scale and shift; a new LayerNorm starts at 1 and 0 at "
        "every call, and training never reaches it.",
        final="new norm",
    ),
    _mistake(
        "applied a softmax to the logits",
        "the forward pass returns logits: F.cross_entropy applies its own (log-)softmax, and the "
        "samplers divide logits by a temperature before theirs. Probabilities passed on are "
        "softmaxed twice.",
        output="softmax",
    ),
    _mistake(
        "returned log-probabilities (log_softmax) instead of the head's logits",
        "they give the same softmax, but not the numbers GPT.forward returns: the section "
        "compares your logits with attnlib's, and a logit is the head's dot product, not that "
        "minus a normaliser.",
        output="log_softmax",
    ),
    _mistake(
        "returned only the last position's logits, (B, V)",
        "training predicts the next token at every position at once: the forward pass returns "
        "logits for all T positions, (B, T, V). Generation takes the last one itself.",
        output="last",
    ),
    _mistake(
        "left out the dropout after the embeddings",
        "in training mode the sum of the two embeddings passes through the model's dropout "
        "(gpt.dropout) before the first block, as in GPT.forward; in eval mode it does nothing.",
        embedding_dropout="none",
    ),
    _mistake(
        "applied the model's dropout before the head instead of after the embeddings",
        "in GPT.forward the model's own dropout (gpt.dropout) acts once, on the sum of the two "
        "embeddings, before the first block; each block drops out its own sublayers.",
        embedding_dropout="none",
        final="dropout then head",
    ),
    _mistake(
        "applied dropout with F.dropout's default training=True: it stays on in eval mode",
        "F.dropout drops at random unless told training=False; the model's own nn.Dropout "
        "(gpt.dropout) follows the model's mode, so evaluation and generation are not random.",
        embedding_dropout="always",
    ),
    _mistake(
        "fed every block the embeddings instead of the previous block's output",
        "the blocks are a stack: each reads what the block before it wrote, so that the second "
        "block builds on the first. Reading the embeddings each time keeps only the last block's "
        "work.",
        chain="embeddings",
    ),
    _mistake(
        "kept the block's pair (y, weights) as the stream",
        "a block returns two things, its output and its attention weights: the stream that "
        "flows on to the next block is the first of them.",
        chain="pair",
    ),
    _mistake(
        "applied the final LayerNorm after every block instead of once, after the last",
        "the stream flows from block to block unnormalised (each block normalises its own copy "
        "of it); the final LayerNorm is applied once, to what the last block leaves, for the "
        "head.",
        chain="norm each",
    ),
    _mistake(
        "applied the final LayerNorm after every block instead of once, after the last",
        "the stream flows from block to block unnormalised (each block normalises its own copy "
        "of it); the final LayerNorm is applied once, to what the last block leaves, for the "
        "head.",
        chain="norm each, then again",
    ),
    _mistake(
        "kept the attention weights as the stream instead of the block's output",
        "a block returns (y, weights): y, of shape (B, T, C), flows on to the next block; the "
        "weights, (B, H, T, T), are for looking inside.",
        chain="weights",
    ),
    MASK_PER_BLOCK,
    NEW_HEAD,
    NEW_EMBEDDING,
)
# The mistakes the checker recognises by what happens inside the call, not by comparing values.
NOT_BY_VALUE = (MASK_PER_BLOCK, NEW_HEAD, NEW_EMBEDDING)
