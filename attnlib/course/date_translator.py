"""The trained date translator: an encoder–decoder that writes a date as ISO 8601.

:func:`train_date_translator` trains a small :class:`attnlib.Transformer` on pairs from
:mod:`attnlib.course.dates` (in float64 on the CPU, so runs agree across machines) and
returns a :class:`DateTranslator`, which translates with greedy or beam search and saves
and loads itself. :func:`load_reference_translator` returns the seed-0 run stored in the
package, the one notebook 09 studies, after checking its files' SHA-256 digests against
:data:`REFERENCE_SHA256`, the one place they are recorded.

After changing a stored file on purpose, record its new digest, in the checkout, with
``python tests/support/reference_translator.py --rehash``. After renaming the models' parameters,
``python tests/support/reference_translator.py --resave --rename OLD NEW`` (a regular expression
and its replacement, as often as needed) re-saves the same weights under the new names and
records the digest; without arguments that script retrains the reference and records it.

Notebook 09.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from importlib.resources import as_file, files
from pathlib import Path

import torch

from attnlib._device import default_dtype, resolve_device, training_dtype
from attnlib._validate import require_choice
from attnlib.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from attnlib.course.date_tokenizer import DateTokenizer, make_batch
from attnlib.course.dates import TARGET_LENGTH, sample_pairs, split_dates
from attnlib.decoding import beam_search
from attnlib.formats.safetensors_file import verify_sha256
from attnlib.training import (
    TrainingHistory,
    fit,
    label_smoothed_cross_entropy,
    warmup_scheduler,
)
from attnlib.transformer import Transformer, TransformerConfig


class DateTranslator:
    """A trained :class:`~attnlib.transformer.Transformer` that writes dates as ISO 8601.

    Wraps the model with the character tokenizer and the decoding loop, so that
    ``translate(["21 November 2026"])`` returns ``["2026-11-21"]``.
    """

    def __init__(self, model: Transformer, history: TrainingHistory | None = None) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be an attnlib Transformer, got {type(model).__name__}")
        self.model = model.eval()
        self.tokenizer = DateTokenizer()
        self.history = history
        if model.config.src_vocab_size != self.tokenizer.vocab_size:
            raise ValueError(
                f"the model's vocabulary has {model.config.src_vocab_size} tokens, the date "
                f"tokenizer {self.tokenizer.vocab_size}"
            )

    def translate(self, texts: Sequence[str], beam_size: int = 1) -> list[str]:
        """ISO dates for human-readable ``texts`` (greedy when ``beam_size`` is 1)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not one string")
        if not texts:
            return []
        src, _ = self.tokenizer.encode_batch(list(texts))  # (B, S)
        tokens = beam_search(
            self.model,
            src,
            self.tokenizer.bos_id,
            self.tokenizer.eos_id,
            max_new_tokens=TARGET_LENGTH + 1,
            beam_size=beam_size,
        )  # (B, ≤ 11)
        return self.tokenizer.decode_batch(tokens)

    def accuracy(self, pairs: Sequence[tuple[str, str]], beam_size: int = 1) -> float:
        """Fraction of ``(text, iso)`` pairs translated exactly right."""
        predictions = self.translate([text for text, _ in pairs], beam_size=beam_size)
        return sum(p == iso for p, (_, iso) in zip(predictions, pairs, strict=True)) / len(pairs)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save the model (config and weights) to ``path``; see :func:`save_checkpoint`."""
        return save_checkpoint(self.model, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DateTranslator:
        """Load a translator saved with :meth:`save`."""
        model = load_checkpoint(path)
        if not isinstance(model, Transformer):
            raise CheckpointError(f"{path} holds a {type(model).__name__}, not a Transformer")
        return cls(model)


def train_date_translator(
    seed: int = 0,
    steps: int = 600,
    batch_size: int = 64,
    d_model: int = 64,
    num_layers: int = 2,
    lr: float = 6e-3,
    warmup_steps: int = 60,
    label_smoothing: float = 0.0,
    schedule: str = "linear",
    progress: bool = False,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> DateTranslator:
    """Train a small encoder–decoder on freshly generated dates, then wrap it.

    Every step draws ``batch_size`` new pairs from the training dates of
    ``split_dates(1000, seed=0)`` (the held-out dates are never seen). AdamW with
    ``warmup_steps`` of linear warm-up, then linear decay to 5 % of ``lr``
    (``schedule="linear"``), or the paper's schedule scaled to peak at ``lr`` at step
    ``warmup_steps`` (``schedule="inverse_sqrt"``: linear warm-up, then decay as 1/√step);
    gradients clipped at 1.
    Trains on ``device`` (see :func:`attnlib._device.resolve_device`: the CPU unless asked)
    in ``dtype`` (see :func:`attnlib._device.training_dtype`: float64 on the CPU). Even in
    float64, two machines' runs part after about 200 steps: see
    :func:`load_reference_translator`.

    Returns:
        a :class:`DateTranslator` whose ``history`` holds the losses and the time.
    """
    require_choice("schedule", schedule, ("linear", "inverse_sqrt"))
    tokenizer = DateTokenizer()
    train_dates, _ = split_dates(1000, seed=0)
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=tokenizer.vocab_size,
        tgt_vocab_size=tokenizer.vocab_size,
        d_model=d_model,
        num_heads=4,
        num_encoder_layers=num_layers,
        num_decoder_layers=num_layers,
        d_ff=4 * d_model,
        dropout=0.0,
        max_len=32,
        pad_id=tokenizer.pad_id,
    )
    device = resolve_device(device)
    with default_dtype(training_dtype(device, dtype)):
        model = Transformer(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    if schedule == "linear":
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda i: min((i + 1) / warmup_steps, 1.0) * max(0.05, 1.0 - i / steps)
        )
    else:  # the paper's factor d^-1/2 min(s^-1/2, s w^-3/2) peaks at (d w)^-1/2: rescale to 1
        scheduler = warmup_scheduler(
            optimizer, d_model, warmup_steps, (d_model * warmup_steps) ** 0.5
        )

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        batch_seed = int(torch.randint(2**31, (1,), generator=generator))
        src, tgt_in, tgt_out = make_batch(
            sample_pairs(batch_size, batch_seed, dates=train_dates), tokenizer
        )
        logits = model(src.to(device), tgt_in.to(device))  # (B, T, V)
        return label_smoothed_cross_entropy(
            logits, tgt_out.to(device), label_smoothing, tokenizer.pad_id
        )

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
    return DateTranslator(model.cpu(), history)


REFERENCE_WEIGHTS = "data/date_translator.pt"


REFERENCE_HISTORY = "data/date_translator.json"


"""The reference translator, ``train_date_translator(seed=0)``, and its losses and learning
rates, stored by ``python tests/support/reference_translator.py``."""


# Written by `python tests/support/reference_translator.py --rehash` (see the module docstring).
REFERENCE_SHA256 = {
    REFERENCE_WEIGHTS: "d203cb2c6b6fb671ce489cbb021ab44575717e31de9b654899beb091185703de",
    REFERENCE_HISTORY: "78a95e6408af36eb14e02bbfb811430b2b674771de4b7d183a1bca69acf1a74c",
}


_RESTORE = (
    "reinstall attnlib or restore the file from git; if it was re-saved on purpose, record "
    "its digest with `python tests/support/reference_translator.py --rehash`"
)


def load_reference_translator() -> DateTranslator:
    """The translator notebook 09 studies: ``train_date_translator(seed=0)``, stored in attnlib.

    Training magnifies the last-bit rounding differences between machines. In float64
    they stay invisible for the first 200 or so of the 600 steps and then, when the model
    suddenly learns to copy the date's fields, grow until two machines hold visibly
    different models (other rare mistakes, losses that differ in the third digit). So
    the notebook trains its own model and checks it, then studies this one, whose
    numbers are the same on every machine. Its ``history`` is that of the stored run.

    Raises:
        ChecksumMismatchError: a stored file is not the one :data:`REFERENCE_SHA256`
            records; the message names it and says how to restore it or record it.
    """
    package = files("attnlib")
    with (
        as_file(package / REFERENCE_WEIGHTS) as weights,
        as_file(package / REFERENCE_HISTORY) as history,
    ):
        for path, name in ((weights, REFERENCE_WEIGHTS), (history, REFERENCE_HISTORY)):
            # The history is text: a Windows checkout may have given it \r\n line endings.
            text = name == REFERENCE_HISTORY
            verify_sha256(path, REFERENCE_SHA256[name], remedy=_RESTORE, text=text)
        translator = DateTranslator.load(weights)
        record = json.loads(history.read_text("utf-8"))
    translator.history = TrainingHistory(
        losses=record["losses"], learning_rates=record["learning_rates"], seconds=0.0
    )
    return translator
