"""Two tiny synthetic tasks that show what learned attention can do (notebooks 04 and 05).

* **Lookup** (04): a few (key, value) items and a question that names a key; answer with
  its value. The question and the keys live in different dims, so the raw dot product
  of naive attention sees no match at all, while learned W^Q, W^K can connect them.
* **Neighbours** (05): for every token, name the token before it and the token after
  it: two relations at once, which two heads can split between them.

Notebooks 04 and 05.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.multi_head import MultiHeadAttention
from attnlib.naive_attention import naive_self_attention
from attnlib.positional import sinusoidal_encoding
from attnlib.single_head import SelfAttention
from attnlib.training import fit


@dataclass(frozen=True)
class LookupTask:
    """Sizes of the lookup task: ``num_items`` items drawn from ``num_keys`` keys."""

    num_items: int = 4
    num_keys: int = 8
    num_values: int = 8

    @property
    def width(self) -> int:
        """Width of each token: key one-hot, value one-hot, question one-hot."""
        return 2 * self.num_keys + self.num_values

    def batch(
        self, batch_size: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A batch of sequences: ``num_items`` item tokens, then the question token.

        An item token is ``[one_hot(key), one_hot(value), 0]``; the question is
        ``[0, 0, one_hot(key asked for)]``. Keys within a sequence are distinct.

        Shapes:
            returns ``x (B, num_items + 1, width)`` float and ``target (B,)`` long.
        """
        keys = torch.stack(
            [
                torch.randperm(self.num_keys, generator=generator)[: self.num_items]
                for _ in range(batch_size)
            ]
        )  # (B, P)
        values = torch.randint(self.num_values, (batch_size, self.num_items), generator=generator)
        asked = torch.randint(self.num_items, (batch_size,), generator=generator)  # which item
        x = torch.zeros(batch_size, self.num_items + 1, self.width)
        x[:, : self.num_items] += F.one_hot(keys, self.width).float()
        x[:, : self.num_items] += F.one_hot(values + self.num_keys, self.width).float()
        question_key = keys.gather(1, asked[:, None])[:, 0]  # (B,)
        x[:, -1] = F.one_hot(question_key + self.num_keys + self.num_values, self.width).float()
        target = values.gather(1, asked[:, None])[:, 0]  # (B,)
        return x, target


class LookupModel(nn.Module):
    """Attention at the question token, then a linear read-out of the value.

    With ``learned=True`` one :class:`SelfAttention` head (W^Q, W^K, W^V); with
    ``learned=False`` naive ``softmax(XXᵀ)X``. The read-out is trained either way.

    Shapes:
        x: ``(B, T, width)``; returns logits ``(B, num_values)`` and weights ``(B, T, T)``.
    """

    def __init__(self, task: LookupTask, d_k: int = 16, learned: bool = True) -> None:
        super().__init__()
        self.learned = learned
        self.attention = SelfAttention(task.width, d_k) if learned else None
        self.readout = nn.Linear(d_k if learned else task.width, task.num_values)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits for the question's value, and the attention weights."""
        if self.attention is not None:
            mixed, weights = self.attention(x)  # (B, T, d_k), (B, T, T)
        else:
            mixed, weights = naive_self_attention(x)  # (B, T, width), (B, T, T)
        return self.readout(mixed[:, -1]), weights  # the question is the last token


@dataclass(frozen=True)
class NeighbourTask:
    """Sequences of ``length`` random tokens; predict each token's left and right neighbour.

    Where there is no neighbour (the two ends) the answer is the extra class
    ``vocab_size`` ("none").
    """

    length: int = 8
    vocab_size: int = 10

    def batch(
        self, batch_size: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Token ids and the two targets.

        Shapes:
            returns ``tokens (B, T)``, ``left (B, T)``, ``right (B, T)``, all long.
        """
        tokens = torch.randint(self.vocab_size, (batch_size, self.length), generator=generator)
        none = torch.full((batch_size, 1), self.vocab_size)
        left = torch.cat([none, tokens[:, :-1]], dim=1)  # (B, T): token at t-1
        right = torch.cat([tokens[:, 1:], none], dim=1)  # (B, T): token at t+1
        return tokens, left, right


class NeighbourModel(nn.Module):
    """Embedding + sinusoidal positions, one :class:`MultiHeadAttention`, two read-outs.

    Shapes:
        tokens: ``(B, T)``; returns left and right logits ``(B, T, vocab_size + 1)``
        and weights ``(B, H, T, T)``.
    """

    def __init__(self, task: NeighbourTask, d_model: int = 32, num_heads: int = 2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(task.vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_encoding(task.length, d_model), persistent=False)
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.left = nn.Linear(d_model, task.vocab_size + 1)
        self.right = nn.Linear(d_model, task.vocab_size + 1)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Left logits, right logits and the attention weights."""
        x = self.embedding(tokens) + self.pe[: tokens.shape[1]]  # (B, T, C)
        mixed, weights = self.attention(x)  # (B, T, C), (B, H, T, T)
        return self.left(mixed), self.right(mixed), weights


def train(
    model: nn.Module,
    loss_on_batch: Callable[[torch.Generator], torch.Tensor],
    steps: int,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` with Adam for ``steps`` steps; return the loss of every step.

    A thin wrapper of :func:`attnlib.training.fit` without gradient clipping or a
    schedule. ``loss_on_batch(generator)`` draws a batch from ``generator`` and returns
    the loss. Seeded: the same seed gives the same batches. The model's initial weights
    come from when it was built, so call ``torch.manual_seed`` before building it for a
    fully repeatable run.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return fit(model, loss_on_batch, steps, optimizer, clip_norm=None, seed=seed).losses


def lookup_accuracy(model: LookupModel, task: LookupTask, n: int = 2000, seed: int = 1) -> float:
    """Fraction of ``n`` fresh lookup questions answered correctly."""
    x, target = task.batch(n, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        logits, _ = model(x)
    return float((logits.argmax(-1) == target).float().mean())


def neighbour_accuracy(
    model: NeighbourModel, task: NeighbourTask, n: int = 1000, seed: int = 1
) -> tuple[float, float]:
    """Accuracy of the left and right predictions over ``n`` fresh sequences."""
    tokens, left, right = task.batch(n, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        left_logits, right_logits, _ = model(tokens)
    return (
        float((left_logits.argmax(-1) == left).float().mean()),
        float((right_logits.argmax(-1) == right).float().mean()),
    )
