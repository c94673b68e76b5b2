"""What each part of a GPT adds, measured: a ladder of small models on the course's prose.

Each rung adds one part to the one below it, and every rung trains the same way (the same
text, steps, batches, optimizer, schedule and seed), so that the difference between two rungs'
validation losses is what the added part is worth at this budget:

1. ``bigram``: a V × V table of next-character scores; it sees the current character only;
2. ``one head``: token and position embeddings, one causal attention head (attnlib's
   :class:`~attnlib.MultiHeadAttention` with one head), the head tied to the embedding;
3. ``several heads``: the same attention split into ``num_heads`` heads (the same parameters);
4. ``feed-forward``: attnlib's :class:`~attnlib.FeedForward` after the attention;
5. ``residuals and LayerNorm``: the GPT block of notebook 10, pre-norm with its residuals, and
   the final LayerNorm: an :class:`attnlib.GPT`.

The models are small (context 8, width 32, one layer) so that the whole ladder trains in
seconds on a laptop's CPU, in float64 so that it comes out the same on every machine.
:func:`bigram_counts_loss` gives the floor of the first rung: the validation loss of bigram
probabilities counted on the training text. :func:`own_position_weights` measures how much of
its weight a trained rung's attention gives each position's own character, the one thing a
bigram reads and, with no residual around the attention, the only way it reaches the head.
``python -m benchmarks.gpt_ladder`` prints the ladder and its time.

Notebook 10.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from attnlib._device import default_dtype
from attnlib._validate import require_choice
from attnlib.course.char_data import random_windows
from attnlib.feed_forward import FeedForward
from attnlib.gpt import GPT, GPTConfig
from attnlib.masks import causal_mask
from attnlib.multi_head import MultiHeadAttention
from attnlib.training import fit

RUNGS = ("bigram", "one head", "several heads", "feed-forward", "residuals and LayerNorm")


@dataclass(frozen=True)
class LadderConfig:
    """The sizes of every rung's model and how each trains (all rungs alike)."""

    context: int = 8  # T: the characters a model reads
    d_model: int = 32
    num_heads: int = 4  # the "several heads" and above
    num_layers: int = 1
    steps: int = 400
    batch_size: int = 128
    lr: float = 1.5e-2  # AdamW's, after a linear warm-up
    warmup: int = 40
    seed: int = 0
    val_windows: int = 1024  # validation windows of context + 1 characters, drawn once


class Bigram(nn.Module):
    """The next character's scores from the current character alone: one row of a V × V table.

    Shapes:
        idx: ``(B, T)``; returns the logits ``(B, T, V)``.
    """

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.table = nn.Embedding(vocab_size, vocab_size)
        nn.init.normal_(self.table.weight, std=0.02)  # near-uniform at the start, as GPT's are

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.table(idx)  # (B, T, V)


class AttentionStack(nn.Module):
    """Token and position embeddings, then ``num_layers`` causal attention layers (each
    followed by a feed-forward network when asked), then the head tied to the token
    embedding. No residuals and no LayerNorm: each layer's output replaces its input.

    Shapes:
        idx: ``(B, T)`` with ``T <= context``; returns the logits ``(B, T, V)``.
    """

    def __init__(
        self, vocab_size: int, config: LadderConfig, num_heads: int, feed_forward: bool
    ) -> None:
        super().__init__()
        c = config
        self.token_embedding = nn.Embedding(vocab_size, c.d_model)
        self.position_embedding = nn.Embedding(c.context, c.d_model)
        self.attention = nn.ModuleList(
            MultiHeadAttention(c.d_model, num_heads) for _ in range(c.num_layers)
        )
        self.feed_forward = nn.ModuleList(
            FeedForward(c.d_model, 4 * c.d_model, activation="gelu")
            for _ in range(c.num_layers if feed_forward else 0)
        )
        self.apply(GPT._init_weights)  # GPT-2's small start, as the top rung's

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        length = idx.shape[1]
        positions = torch.arange(length, device=idx.device)  # (T,)
        x = self.token_embedding(idx) + self.position_embedding(positions)  # (B, T, C)
        mask = causal_mask(length).to(idx.device)  # (T, T), True = may attend
        for i, attention in enumerate(self.attention):
            x, _ = attention(x, mask=mask, need_weights=False)  # (B, T, C)
            if self.feed_forward:
                x = self.feed_forward[i](x)  # (B, T, C)
        return x @ self.token_embedding.weight.T  # (B, T, V)


def gpt_config(vocab_size: int, config: LadderConfig) -> GPTConfig:
    """The top rung's sizes: the GPT of notebook 10, as small as the rest of the ladder."""
    return GPTConfig(
        vocab_size=vocab_size,
        max_len=config.context,
        d_model=config.d_model,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        dropout=0.0,
    )


def build(rung: str, vocab_size: int, config: LadderConfig | None = None) -> nn.Module:
    """The untrained model of ``rung`` (one of :data:`RUNGS`), in the default dtype."""
    config = config or LadderConfig()
    require_choice("rung", rung, RUNGS)
    if rung == "bigram":
        return Bigram(vocab_size)
    if rung == "residuals and LayerNorm":
        return GPT(gpt_config(vocab_size, config))
    heads = 1 if rung == "one head" else config.num_heads
    return AttentionStack(vocab_size, config, heads, feed_forward=rung == "feed-forward")


def next_token_loss(model: nn.Module, windows: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of predicting ``windows[:, 1:]`` from ``windows[:, :-1]``."""
    logits = model(windows[:, :-1])  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


@dataclass(frozen=True)
class Rung:
    """One rung, trained: its name, its size, its losses, how long it trained and its model
    (in eval mode; not part of its figures: ``repr`` and ``==`` leave it out)."""

    name: str
    parameters: int
    val_loss: float  # on the ladder's fixed validation windows
    train_loss: float  # the mean of the last 50 training batches
    seconds: float
    model: nn.Module | None = field(default=None, repr=False, compare=False)

    def figures(self) -> dict[str, object]:
        """The rung's figures without its model: what a benchmark stores."""
        return {
            "name": self.name,
            "parameters": self.parameters,
            "val_loss": self.val_loss,
            "train_loss": self.train_loss,
            "seconds": self.seconds,
        }


def validation_windows(val_data: torch.Tensor, config: LadderConfig) -> torch.Tensor:
    """The ladder's validation windows, ``(val_windows, context + 1)``, the same every time."""
    generator = torch.Generator().manual_seed(config.seed + 1)
    return random_windows(val_data, config.context + 1, config.val_windows, generator)


def train_rung(
    rung: str,
    train_data: torch.Tensor,
    val_data: torch.Tensor,
    vocab_size: int,
    config: LadderConfig | None = None,
) -> Rung:
    """Build ``rung``'s model from the seed, train it on ``train_data`` and measure it on the
    validation windows of ``val_data``; in float64, on the CPU."""
    config = config or LadderConfig()
    torch.manual_seed(config.seed)
    with default_dtype(torch.float64):
        model = build(rung, vocab_size, config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    warmup = config.warmup
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: min(1.0, (i + 1) / warmup))

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        windows = random_windows(train_data, config.context + 1, config.batch_size, generator)
        return next_token_loss(model, windows)

    history = fit(model, loss_on_batch, config.steps, optimizer, schedule, seed=config.seed)
    with torch.no_grad():
        val_loss = next_token_loss(model, validation_windows(val_data, config)).item()
    tail = history.losses[-50:]
    return Rung(
        rung,
        sum(p.numel() for p in model.parameters()),
        val_loss,
        sum(tail) / len(tail),
        history.seconds,
        model,
    )


def climb(
    train_data: torch.Tensor,
    val_data: torch.Tensor,
    vocab_size: int,
    config: LadderConfig | None = None,
    rungs: tuple[str, ...] = RUNGS,
) -> list[Rung]:
    """Every rung of the ladder, trained alike; ``train_data`` and ``val_data`` are ``(N,)``
    token ids (the notebook's first 90 % and last 10 % of the course's prose)."""
    return [train_rung(rung, train_data, val_data, vocab_size, config) for rung in rungs]


def bigram_counts_loss(
    train_data: torch.Tensor, windows: torch.Tensor, vocab_size: int, smoothing: float = 0.1
) -> float:
    """The mean cross-entropy on ``windows`` (``(B, T + 1)``, each position predicting the next)
    of bigram probabilities counted on ``train_data``: p(b | a) is the count of "ab" over the
    count of "a", with ``smoothing`` added to every count so that a pair never seen in training
    keeps a little probability. What a bigram model trained to the end comes close to."""
    counts = torch.full((vocab_size, vocab_size), smoothing, dtype=torch.float64)
    ones = torch.ones(len(train_data) - 1, dtype=torch.float64)
    counts.index_put_((train_data[:-1], train_data[1:]), ones, accumulate=True)
    log_p = (counts / counts.sum(dim=1, keepdim=True)).log()  # (V, V): row a, column b
    return -log_p[windows[:, :-1], windows[:, 1:]].mean().item()


@torch.no_grad()
def own_position_weights(model: nn.Module, windows: torch.Tensor) -> torch.Tensor:
    """The mean attention weight each head of the first attention layer of an
    :class:`AttentionStack` gives a position's own character, over ``windows[:, :-1]`` and over
    positions 1 to T - 1 (position 0 has only itself to attend to). A head that attended only
    to the current character, as a bigram reads it, would score 1; one that spread its weight
    evenly over the past, the mean of 1 / (t + 1).

    Shapes:
        windows: ``(B, T + 1)`` token ids; returns ``(H,)``.
    """
    if not isinstance(model, AttentionStack):
        raise TypeError(
            f"model must be a rung with attention and no residual (an AttentionStack), "
            f"got {type(model).__name__}"
        )
    idx = windows[:, :-1]
    length = idx.shape[1]
    positions = torch.arange(length, device=idx.device)  # (T,)
    x = model.token_embedding(idx) + model.position_embedding(positions)  # (B, T, C)
    mask = causal_mask(length).to(idx.device)  # (T, T), True = may attend
    _, weights = model.attention[0](x, mask=mask)  # (B, H, T, T)
    own = weights.diagonal(dim1=-2, dim2=-1)[..., 1:]  # (B, H, T - 1): position t to itself
    return own.mean(dim=(0, 2))  # (H,)
