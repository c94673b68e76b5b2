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
sampling (:func:`sample_pairs`, :func:`split_dates`); the tokenizer is in
``attnlib.course.date_tokenizer``.

Notebook 09.
"""

from __future__ import annotations

import datetime
import random
import string
from collections.abc import Callable, Sequence

from attnlib._validate import require_choice, require_choices, require_date, require_int

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
    require_date("date", date)
    require_choice("fmt", fmt, FORMATS)
    require_choice("case", case, CASES)
    return _CASE_FUNCTIONS[case](_natural(date, fmt))


def to_iso(date: datetime.date) -> str:
    """The ISO 8601 target ``YYYY-MM-DD`` of ``date``, e.g. ``"2026-11-21"``."""
    require_date("date", date)
    return f"{date.year:04d}-{date.month:02d}-{date.day:02d}"


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
    require_int("n", n, 0)
    require_int("seed", seed)
    if dates is not None:
        if not isinstance(dates, Sequence):
            raise TypeError(
                f"dates must be a sequence such as a list (a reproducible order), "
                f"got {type(dates).__name__}"
            )
        if not dates:
            raise ValueError("dates must not be empty")
    format_pool = require_choices("formats", formats, FORMATS)
    case_pool = require_choices("cases", cases, CASES)
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        if dates is None:
            day = FIRST_DATE + datetime.timedelta(days=rng.randrange(NUM_DATES))
        else:
            # Checked as drawn: checking all 72,049 training dates on every call cost more
            # than rendering the batch.
            day = require_date("each of dates", rng.choice(dates))
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
    require_int("n_heldout", n_heldout, 1)
    require_int("seed", seed)
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
