"""Character-level language modelling data: the course's own prose as a small, free corpus.

``data/course_text.txt`` holds the markdown cells of notebooks 01–07 (about 99,000
characters), text this project wrote and may use freely, fixed in the package so
that a trained model's samples are the same on every machine.

Notebook 10.
"""

from __future__ import annotations

import torch

from attnlib._device import default_dtype, resolve_device, training_dtype
from attnlib.course.char_data import CharTokenizer, load_course_text, random_windows
from attnlib.gpt import GPT, GPTConfig
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
