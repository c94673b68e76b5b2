"""Date "translation": human-readable dates to ISO 8601 (notebook 09).

The source is a date as a person might write it, in one of :data:`FORMATS` and
one of :data:`CASES`; the target is the same date as ``YYYY-MM-DD``::

    "Saturday, 21 November 2026"      ->  "2026-11-21"
    "THE 3RD OF MARCH, 1999"          ->  "1999-03-03"
    "nov 21, 2026"                    ->  "2026-11-21"

It is the classic small translation task on which an encoder–decoder learns in
minutes on a CPU, and its cross-attention maps can be read at a glance: to write
the month digits the decoder looks at the month name, to write the year it looks
at the year. Dates run from :data:`FIRST_DATE` (1900-01-01) to :data:`LAST_DATE`
(2099-12-31); :func:`split_dates` keeps some dates out of training so that
accuracy can be measured on dates the model never saw.

This module is the data half: rendering (:func:`render`, :func:`to_iso`),
sampling (:func:`sample_pairs`, :func:`split_dates`), a character tokenizer
(:class:`CharTokenizer`) and teacher-forcing batches (:func:`make_batch`).
"""

from __future__ import annotations

import datetime
import json
import os
import random
import string
from collections.abc import Callable, Sequence
from importlib.resources import as_file, files
from pathlib import Path

import torch

from attnlib._validate import require_token_ids
from attnlib.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from attnlib.decoding import beam_search
from attnlib.device import default_dtype, resolve_device, training_dtype
from attnlib.training import TrainingHistory, fit, label_smoothed_cross_entropy
from attnlib.transformer import Transformer, TransformerConfig

FIRST_DATE = datetime.date(1900, 1, 1)
LAST_DATE = datetime.date(2099, 12, 31)
NUM_DATES = (LAST_DATE - FIRST_DATE).days + 1  # 73,049

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
"""English month names, January first (fixed here, never read from the locale)."""

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""English weekday names in the order of ``datetime.date.weekday()`` (Monday = 0)."""

FORMATS = (
    "day_month_year",
    "month_day_year",
    "day_mon_year",
    "mon_day_year",
    "weekday_day_month_year",
    "weekday_month_day_year",
    "numeric",
    "ordinal",
)
"""Names of the input formats; :func:`render` shows an example of each."""

CASES = ("lower", "upper", "title")
"""Letter cases an input can be written in; see :func:`render`."""

MAX_SOURCE_LENGTH = 29  # "Wednesday, September 30, 2026"
"""Length in characters of the longest input any format and case can produce."""

TARGET_LENGTH = 10  # "2026-11-21"
"""Length in characters of every ISO target."""

VOCAB_CHARACTERS = "".join(sorted(set(string.ascii_letters + string.digits + " ,-.")))
"""The tokenizer's characters, sorted: space, ``,``, ``-``, ``.``, digits, A–Z, a–z."""


def ordinal(n: int) -> str:
    """``n`` with its English ordinal suffix: ``1st 2nd 3rd 4th … 11th 12th 13th … 21st``.

    The suffix follows the last digit (1 → st, 2 → nd, 3 → rd, else th), except
    that 11, 12 and 13 (and 111, 112, …) take th.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    teen = n % 100 in (11, 12, 13)
    suffix = "th" if teen else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _title_case(text: str) -> str:
    # Capitalise each space-separated word that starts with a letter, lower-case the rest.
    # Unlike str.title(), a word that starts with a digit is left alone ("21st", not "21St").
    return " ".join(
        word[:1].upper() + word[1:] if word[:1].isalpha() else word
        for word in text.lower().split(" ")
    )


_CASE_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "upper": str.upper,
    "title": _title_case,
}


def _natural(day: datetime.date, fmt: str) -> str:
    # The date in format ``fmt`` as an English writer would spell it, before any case.
    month = MONTHS[day.month - 1]
    mon = month[:3]
    weekday = WEEKDAYS[day.weekday()]
    if fmt == "day_month_year":
        return f"{day.day} {month} {day.year}"
    if fmt == "month_day_year":
        return f"{month} {day.day}, {day.year}"
    if fmt == "day_mon_year":
        return f"{day.day} {mon} {day.year}"
    if fmt == "mon_day_year":
        return f"{mon} {day.day}, {day.year}"
    if fmt == "weekday_day_month_year":
        return f"{weekday}, {day.day} {month} {day.year}"
    if fmt == "weekday_month_day_year":
        return f"{weekday}, {month} {day.day}, {day.year}"
    if fmt == "numeric":
        return f"{day.day:02d}.{day.month:02d}.{day.year}"
    return f"the {ordinal(day.day)} of {month}, {day.year}"  # "ordinal"


def _require_date(name: str, value: object) -> datetime.date:
    # datetime.datetime is a subclass of date; refuse it so that a time of day is never dropped.
    if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
        raise TypeError(f"{name} must be a datetime.date, got {type(value).__name__}")
    return value


def _require_choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def render(date: datetime.date, fmt: str, case: str) -> str:
    """Write ``date`` in the input format ``fmt`` and letter case ``case``.

    For Saturday 2026-11-21 the formats give:

    ==========================  ================================
    ``fmt``                     natural spelling
    ==========================  ================================
    ``day_month_year``          ``21 November 2026``
    ``month_day_year``          ``November 21, 2026``
    ``day_mon_year``            ``21 Nov 2026``
    ``mon_day_year``            ``Nov 21, 2026``
    ``weekday_day_month_year``  ``Saturday, 21 November 2026``
    ``weekday_month_day_year``  ``Saturday, November 21, 2026``
    ``numeric``                 ``21.11.2026``
    ``ordinal``                 ``the 21st of November, 2026``
    ==========================  ================================

    The day has no leading zero except in ``numeric``, which writes two-digit
    day and month (``01.02.1999``). The weekday is the date's true weekday;
    ``mon`` is the first three letters of the month (``Sep``, not ``Sept``).

    Then the case is applied: ``lower`` and ``upper`` change every letter
    (``THE 21ST OF NOVEMBER, 2026``). ``title`` capitalises the first letter of
    each space-separated word *that starts with a letter* and lower-cases the
    rest, so ``the 21st of november, 2026`` becomes ``The 21st Of November, 2026``:
    every such word, including ``The`` and ``Of``, and never a letter after a
    digit (``str.title()`` would give ``21St``). ``numeric`` has no letters, so
    its three cases are the same text.
    """
    _require_date("date", date)
    _require_choice("fmt", fmt, FORMATS)
    _require_choice("case", case, CASES)
    return _CASE_FUNCTIONS[case](_natural(date, fmt))


def to_iso(date: datetime.date) -> str:
    """The ISO 8601 target ``YYYY-MM-DD`` of ``date``, e.g. ``"2026-11-21"``."""
    _require_date("date", date)
    return f"{date.year:04d}-{date.month:02d}-{date.day:02d}"


def _require_int(name: str, value: object, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _require_choices(name: str, values: object, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(
            f"{name} must be a non-empty sequence drawn from {allowed}, got {values!r}"
        )
    for value in values:
        _require_choice(f"each of {name}", value, allowed)
    return tuple(values)


def sample_pairs(
    n: int,
    seed: int,
    dates: Sequence[datetime.date] | None = None,
    *,
    formats: Sequence[str] = FORMATS,
    cases: Sequence[str] = CASES,
) -> list[tuple[str, str]]:
    """``n`` random ``(input text, ISO target)`` pairs, the same for the same ``seed``.

    Each pair draws, in this order, a date (uniformly from :data:`FIRST_DATE` to
    :data:`LAST_DATE`, or uniformly from ``dates`` when given), a format from
    ``formats`` and a case from ``cases``, all with its own ``random.Random(seed)``
    (the global random state is neither used nor changed).

    Args:
        n: how many pairs (0 gives an empty list).
        seed: an int; ``None`` is refused, as it would seed from the clock.
        dates: draw dates only from these, e.g. the training half of
            :func:`split_dates`. A list or tuple, not a set (a set's order,
            and so the draws, would change from run to run).
        formats: draw formats only from these (e.g. one format, to measure
            accuracy per format).
        cases: draw cases only from these.
    """
    _require_int("n", n, 0)
    _require_int("seed", seed)
    if dates is not None:
        if not isinstance(dates, Sequence):
            raise TypeError(
                f"dates must be a sequence such as a list (a reproducible order), "
                f"got {type(dates).__name__}"
            )
        if not dates:
            raise ValueError("dates must not be empty")
    format_pool = _require_choices("formats", formats, FORMATS)
    case_pool = _require_choices("cases", cases, CASES)
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        if dates is None:
            day = FIRST_DATE + datetime.timedelta(days=rng.randrange(NUM_DATES))
        else:
            # Checked as drawn: checking all 72,049 training dates on every call cost more
            # than rendering the batch.
            day = _require_date("each of dates", rng.choice(dates))
        text = render(day, rng.choice(format_pool), rng.choice(case_pool))
        pairs.append((text, to_iso(day)))
    return pairs


def split_dates(n_heldout: int, seed: int) -> tuple[list[datetime.date], list[datetime.date]]:
    """Split every date from :data:`FIRST_DATE` to :data:`LAST_DATE` into training and held out.

    ``n_heldout`` dates, chosen uniformly at random with ``random.Random(seed)``,
    are held out; the other ``NUM_DATES - n_heldout`` are for training. The two
    lists never share a date and together hold all :data:`NUM_DATES` dates.
    Pass either list as ``dates`` to :func:`sample_pairs`. A held-out date is
    unseen in every format and case, so accuracy on it measures reading dates,
    not remembering them.

    Returns:
        ``(train_dates, heldout_dates)``, each sorted.
    """
    _require_int("n_heldout", n_heldout, 1)
    _require_int("seed", seed)
    if n_heldout >= NUM_DATES:
        raise ValueError(
            f"n_heldout must be < NUM_DATES = {NUM_DATES} so that some dates remain for "
            f"training, got {n_heldout}"
        )
    heldout_offsets = set(random.Random(seed).sample(range(NUM_DATES), n_heldout))
    train: list[datetime.date] = []
    heldout: list[datetime.date] = []
    for offset in range(NUM_DATES):
        day = FIRST_DATE + datetime.timedelta(days=offset)
        (heldout if offset in heldout_offsets else train).append(day)
    return train, heldout


class CharTokenizer:
    """Characters to ids and back, one id per character of :data:`VOCAB_CHARACTERS`.

    Ids 0, 1, 2 are the special tokens ``<pad>``, ``<bos>`` (begin), ``<eos>``
    (end); character ``VOCAB_CHARACTERS[i]`` has id ``i + 3``. The vocabulary
    covers every character of every format and case and of the ISO targets, so
    one tokenizer serves both the source and the target side (the target only
    ever uses the digits and ``-``).

    Shapes:
        :meth:`encode_batch` returns ``(B, T_max)`` long, padded on the right with
        :attr:`pad_id`; :meth:`decode_batch` reads ``(B, T)``.
    """

    pad_id = 0
    bos_id = 1
    eos_id = 2
    special_tokens = ("<pad>", "<bos>", "<eos>")

    def __init__(self) -> None:
        self.tokens: tuple[str, ...] = self.special_tokens + tuple(VOCAB_CHARACTERS)
        self._ids = {token: i for i, token in enumerate(self.tokens)}

    @property
    def vocab_size(self) -> int:
        """Number of ids, the three special tokens included (69)."""
        return len(self.tokens)

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """The ids of the characters of ``text``, optionally between ``<bos>`` and ``<eos>``.

        Raises a ``ValueError`` naming the first character that is not in the
        vocabulary and its position.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ids = [self.bos_id] if add_bos else []
        for position, character in enumerate(text):
            try:
                ids.append(self._ids[character])
            except KeyError:
                raise ValueError(
                    f"character {character!r} at position {position} of text {text!r} is not "
                    f"in the vocabulary {VOCAB_CHARACTERS!r}"
                ) from None
        if add_eos:
            ids.append(self.eos_id)
        return ids

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``: stops at the first ``<eos>``, skips ``<pad>`` and ``<bos>``.

        Shapes:
            ids: a list of ints or a ``(T,)`` integer tensor.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1 or ids.is_floating_point():
                raise ValueError(
                    f"ids must be a 1-D integer tensor (T,), got dtype {ids.dtype} and shape "
                    f"{tuple(ids.shape)}; use decode_batch for (B, T)"
                )
            ids = ids.tolist()
        characters = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.vocab_size:
                raise ValueError(f"ids must be ints in [0, {self.vocab_size}), got {i!r}")
            if i == self.eos_id:
                break
            if i not in (self.pad_id, self.bos_id):
                characters.append(self.tokens[i])
        return "".join(characters)

    def encode_batch(
        self, texts: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> torch.Tensor:
        """Encode several texts into one tensor, padded with :attr:`pad_id` on the right.

        Shapes:
            returns ``(B, T_max)`` long, ``B = len(texts)``, ``T_max`` the longest
            encoding (``<bos>`` and ``<eos>`` included).
        """
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(f"texts must be a sequence of str, got {type(texts).__name__}")
        if not texts:
            raise ValueError("texts must not be empty")
        rows = [self.encode(text, add_bos=add_bos, add_eos=add_eos) for text in texts]
        width = max(len(row) for row in rows)
        padded = [row + [self.pad_id] * (width - len(row)) for row in rows]
        return torch.tensor(padded, dtype=torch.long).reshape(len(rows), width)  # (B, T_max)

    def decode_batch(self, ids: torch.Tensor) -> list[str]:
        """Decode each row of ``ids`` with :meth:`decode` (stop at ``<eos>``, skip pad/bos).

        Shapes:
            ids: ``(B, T)`` integer; returns ``B`` strings.
        """
        require_token_ids("ids", ids)
        return [self.decode(row) for row in ids.tolist()]


def make_batch(
    pairs: Sequence[tuple[str, str]], tokenizer: CharTokenizer
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tensors for training with teacher forcing from ``(input text, target)`` pairs.

    * ``src``: the input characters, with no ``<bos>`` or ``<eos>``: every source
      position is a character of the text, so a cross-attention map lines up
      with the text as written. The encoder finds the end from the padding
      (``padding_mask_from_ids(src, tokenizer.pad_id)``).
    * ``tgt_in = <bos> + target``: what the decoder reads.
    * ``tgt_out = target + <eos>``: what it must predict, one step ahead, so
      ``tgt_out[:, t] == tgt_in[:, t + 1]`` wherever both are real tokens.

    All three are padded with ``tokenizer.pad_id`` on the right; ignore it in the
    loss with ``cross_entropy(..., ignore_index=tokenizer.pad_id)``. For ISO
    targets ``T = TARGET_LENGTH + 1 = 11`` and there is no target padding.

    Shapes:
        returns ``src (B, S)``, ``tgt_in (B, T)``, ``tgt_out (B, T)``, all long,
        with ``B = len(pairs)``, ``S`` the longest input and ``T`` the longest
        target plus one.
    """
    if not isinstance(tokenizer, CharTokenizer):
        raise TypeError(f"tokenizer must be a CharTokenizer, got {type(tokenizer).__name__}")
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty sequence of (input text, target) pairs")
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"each of pairs must be an (input text, target) pair, got {pair!r}")
    sources = [source for source, _ in pairs]
    targets = [target for _, target in pairs]
    src = tokenizer.encode_batch(sources)  # (B, S)
    tgt_in = tokenizer.encode_batch(targets, add_bos=True)  # (B, T)
    tgt_out = tokenizer.encode_batch(targets, add_eos=True)  # (B, T)
    return src, tgt_in, tgt_out


# --- the trained translator ------------------------------------------------------------------


class DateTranslator:
    """A trained :class:`~attnlib.transformer.Transformer` that writes dates as ISO 8601.

    Wraps the model with the character tokenizer and the decoding loop, so that
    ``translate(["21 November 2026"])`` returns ``["2026-11-21"]``.
    """

    def __init__(self, model: Transformer, history: TrainingHistory | None = None) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be an attnlib Transformer, got {type(model).__name__}")
        self.model = model.eval()
        self.tokenizer = CharTokenizer()
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
        src = self.tokenizer.encode_batch(list(texts))  # (B, S)
        tokens = beam_search(
            self.model,
            src,
            self.tokenizer.bos_id,
            self.tokenizer.eos_id,
            max_len=TARGET_LENGTH + 1,
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
    progress: bool = False,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> DateTranslator:
    """Train a small encoder–decoder on freshly generated dates, then wrap it.

    Every step draws ``batch_size`` new pairs from the training dates of
    ``split_dates(1000, seed=0)`` (the held-out dates are never seen). AdamW with
    ``warmup_steps`` of linear warm-up, then linear decay; gradients clipped at 1.
    Trains on ``device`` (see :func:`attnlib.device.resolve_device`: the CPU unless asked)
    in ``dtype`` (see :func:`attnlib.device.training_dtype`: float64 on the CPU). Even in
    float64, two machines' runs part after about 200 steps: see
    :func:`load_reference_translator`.

    Returns:
        a :class:`DateTranslator` whose ``history`` holds the losses and the time.
    """
    tokenizer = CharTokenizer()
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
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: min((i + 1) / warmup_steps, 1.0) * max(0.05, 1.0 - i / steps)
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
rates, stored by ``python tests/reference_translator.py``."""


def load_reference_translator() -> DateTranslator:
    """The translator notebook 09 studies: ``train_date_translator(seed=0)``, stored in attnlib.

    Training magnifies the last-bit rounding differences between machines. In float64
    they stay invisible for the first 200 or so of the 600 steps and then, when the model
    suddenly learns to copy the date's fields, grow until two machines hold visibly
    different models (other rare mistakes, losses that differ in the third digit). So
    the notebook trains its own model and checks it, then studies this one, whose
    numbers are the same on every machine. Its ``history`` is that of the stored run.
    """
    with as_file(files("attnlib").joinpath(REFERENCE_WEIGHTS)) as path:
        translator = DateTranslator.load(path)
    record = json.loads(files("attnlib").joinpath(REFERENCE_HISTORY).read_text("utf-8"))
    translator.history = TrainingHistory(
        losses=record["losses"], learning_rates=record["learning_rates"], seconds=0.0
    )
    return translator
