"""The character GPT of notebook 10: trained on the course's own prose, and its forward pass
and training step written out as the learner writes them.

``data/course_text.txt`` holds the markdown cells of notebooks 01–07 (about 99,000
characters), text this project wrote and may use freely, fixed in the package so
that a trained model's samples are the same on every machine. :func:`forward_pass` and
:func:`train_step` are the notebook's Exercises 2 and 3 as attnlib writes them: what a later
cell uses until the learner's own pass their checks.

Notebook 10.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnlib._device import default_dtype, resolve_device, training_dtype
from attnlib.course.char_data import CharTokenizer, load_course_text, random_windows
from attnlib.gpt import GPT, GPTConfig
from attnlib.masks import causal_mask
from attnlib.training import TrainingHistory, fit


def train_char_gpt(
    text: str | None = None,
    config: GPTConfig | None = None,
    steps: int = 800,
    batch_size: int = 32,
    lr: float = 4e-3,
    seed: int = 0,
    progress: bool = False,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> tuple[GPT, CharTokenizer, TrainingHistory]:
    """Train a character-level :class:`GPT` on ``text`` (default: the course's prose).

    AdamW with a short linear warm-up, gradient clipping at 1, windows of
    ``max_len + 1`` characters (inputs and their next characters). Seeded. Trains on
    ``device`` (see :func:`attnlib._device.resolve_device`: the CPU unless asked) in
    ``dtype`` (see :func:`attnlib._device.training_dtype`: float64 on the CPU, so that a
    seed gives the same model on every machine) and returns the model on the CPU.

    Returns:
        the trained model (eval mode), its vocabulary and the training history.
    """
    text = load_course_text() if text is None else text
    vocabulary = CharTokenizer(text)
    config = config or GPTConfig(
        vocab_size=vocabulary.vocab_size,
        max_len=64,
        d_model=64,
        num_heads=4,
        num_layers=2,
        dropout=0.0,
    )
    if config.vocab_size != vocabulary.vocab_size:
        raise ValueError(
            f"config.vocab_size ({config.vocab_size}) must equal the number of distinct "
            f"characters in text ({vocabulary.vocab_size})"
        )
    data = torch.tensor(vocabulary.encode(text))  # (N,)
    device = resolve_device(device)
    dtype = training_dtype(device, dtype)
    torch.manual_seed(seed)
    with default_dtype(dtype):
        model = GPT(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: min(1.0, (i + 1) / warmup))

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        windows = random_windows(data, config.max_len + 1, batch_size, generator)
        return model.loss(windows.to(device))

    history = fit(
        model,
        loss_on_batch,
        steps,
        optimizer,
        scheduler,
        clip_norm=1.0,
        seed=seed,
        progress=progress,
    )
    return model.cpu(), vocabulary, history


def forward_pass(gpt: GPT, idx: torch.Tensor) -> torch.Tensor:
    """What ``GPT.forward`` computes, from the model's parts, each block called as
    ``block(x, mask)``: so that it runs a model whose blocks are the learner's own (which take
    no KV cache). Checks nothing: ``idx`` holds ids below ``vocab_size``, ``T <= max_len``.

    Shapes:
        idx: ``(B, T)`` token ids; returns the logits ``(B, T, vocab_size)``.
    """
    length = idx.shape[1]
    positions = torch.arange(length, device=idx.device)  # (T,): 0, 1, ..., T - 1
    x = gpt.dropout(gpt.token_embedding(idx) + gpt.position_embedding(positions))  # (B, T, C)
    mask = causal_mask(length).to(idx.device)  # (T, T), True = may attend: once, for every block
    for block in gpt.blocks:
        x, _ = block(x, mask)  # (B, T, C)
    return gpt.head(gpt.final_norm(x))  # (B, T, V): the head is token_embedding's matrix


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    windows: torch.Tensor,
    max_norm: float,
) -> float:
    """One training step on ``windows``, as :func:`attnlib.training.fit` takes it: the mean
    cross-entropy of predicting ``windows[:, 1:]`` from ``windows[:, :-1]``, back-propagated,
    the gradient's norm clipped to ``max_norm``, an optimizer step, then a scheduler step.
    ``model(idx)`` gives the logits. Returns the loss as a Python float.

    Shapes:
        windows: ``(B, T + 1)`` token ids; ``model`` maps ``(B, T)`` to ``(B, T, V)``.
    """
    logits = model(windows[:, :-1])  # (B, T, V): a prediction at every position
    targets = windows[:, 1:]  # (B, T): each position's next token
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()  # the previous step's gradients are spent
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()  # the learning rate of the next step
    return loss.item()
