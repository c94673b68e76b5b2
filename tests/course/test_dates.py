from __future__ import annotations

import datetime
import random
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlib.course.date_tokenizer import DateTokenizer, make_batch
from attnlib.course.dates import (
    CASES,
    FIRST_DATE,
    FORMATS,
    LAST_DATE,
    MAX_SOURCE_LENGTH,
    MONTHS,
    NUM_DATES,
    TARGET_LENGTH,
    VOCAB_CHARACTERS,
    WEEKDAYS,
    ordinal,
    render,
    sample_pairs,
    split_dates,
    to_iso,
)

SAT = datetime.date(2026, 11, 21)
task_dates = st.dates(min_value=FIRST_DATE, max_value=LAST_DATE)

# An independent reference: the same formats as strptime patterns (the C locale's English
# names; strptime matches names case-insensitively). "ordinal" is parsed once its suffix
# has been removed.
STRPTIME_PATTERNS = {
    "day_month_year": "%d %B %Y",
    "month_day_year": "%B %d, %Y",
    "day_mon_year": "%d %b %Y",
    "mon_day_year": "%b %d, %Y",
    "weekday_day_month_year": "%A, %d %B %Y",
    "weekday_month_day_year": "%A, %B %d, %Y",
    "numeric": "%d.%m.%Y",
    "ordinal": "the %d of %B, %Y",
}


def parse_back(text: str, fmt: str) -> datetime.date:
    if fmt == "ordinal":
        text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text, flags=re.IGNORECASE)
    return datetime.datetime.strptime(text, STRPTIME_PATTERNS[fmt]).date()


# ---------------------------------------------------------------- rendering


def test_constants() -> None:
    assert set(STRPTIME_PATTERNS) == set(FORMATS) and len(FORMATS) == 8
    assert CASES == ("lower", "upper", "title")
    assert NUM_DATES == 73049  # 200 years, 49 of them leap (2000 is one, 1900 is not)
    assert to_iso(FIRST_DATE) == "1900-01-01" and to_iso(LAST_DATE) == "2099-12-31"
    assert MONTHS[0] == "January" and MONTHS[8] == "September" and len(MONTHS) == 12
    assert WEEKDAYS[SAT.weekday()] == "Saturday" and len(WEEKDAYS) == 7


@pytest.mark.parametrize(
    ("fmt", "lower", "upper", "title"),
    [
        ("day_month_year", "21 november 2026", "21 NOVEMBER 2026", "21 November 2026"),
        ("month_day_year", "november 21, 2026", "NOVEMBER 21, 2026", "November 21, 2026"),
        ("day_mon_year", "21 nov 2026", "21 NOV 2026", "21 Nov 2026"),
        ("mon_day_year", "nov 21, 2026", "NOV 21, 2026", "Nov 21, 2026"),
        (
            "weekday_day_month_year",
            "saturday, 21 november 2026",
            "SATURDAY, 21 NOVEMBER 2026",
            "Saturday, 21 November 2026",
        ),
        (
            "weekday_month_day_year",
            "saturday, november 21, 2026",
            "SATURDAY, NOVEMBER 21, 2026",
            "Saturday, November 21, 2026",
        ),
        ("numeric", "21.11.2026", "21.11.2026", "21.11.2026"),
        (
            "ordinal",
            "the 21st of november, 2026",
            "THE 21ST OF NOVEMBER, 2026",
            "The 21st Of November, 2026",
        ),
    ],
)
def test_render_every_format_and_case_hand_worked(
    fmt: str, lower: str, upper: str, title: str
) -> None:
    assert render(SAT, fmt, "lower") == lower
    assert render(SAT, fmt, "upper") == upper
    assert render(SAT, fmt, "title") == title


@pytest.mark.parametrize(
    ("day", "fmt", "case", "expected"),
    [
        # 2000 is a leap year (divisible by 400); 2000-02-29 was a Tuesday.
        (
            datetime.date(2000, 2, 29),
            "weekday_day_month_year",
            "title",
            "Tuesday, 29 February 2000",
        ),
        (datetime.date(2000, 2, 29), "ordinal", "lower", "the 29th of february, 2000"),
        (datetime.date(2000, 2, 29), "numeric", "upper", "29.02.2000"),
        (datetime.date(1900, 1, 1), "weekday_month_day_year", "title", "Monday, January 1, 1900"),
        (datetime.date(1900, 1, 1), "day_mon_year", "upper", "1 JAN 1900"),
        (datetime.date(1900, 1, 1), "numeric", "lower", "01.01.1900"),
        (datetime.date(1900, 1, 1), "ordinal", "title", "The 1st Of January, 1900"),
        (
            datetime.date(2099, 12, 31),
            "weekday_day_month_year",
            "lower",
            "thursday, 31 december 2099",
        ),
        (datetime.date(2099, 12, 31), "ordinal", "upper", "THE 31ST OF DECEMBER, 2099"),
        (datetime.date(2099, 12, 31), "mon_day_year", "title", "Dec 31, 2099"),
        (datetime.date(1999, 2, 1), "numeric", "title", "01.02.1999"),
        (datetime.date(1999, 2, 1), "day_month_year", "lower", "1 february 1999"),
        (datetime.date(2024, 9, 3), "mon_day_year", "lower", "sep 3, 2024"),
        (datetime.date(2024, 9, 3), "ordinal", "title", "The 3rd Of September, 2024"),
        (datetime.date(1987, 5, 12), "day_mon_year", "title", "12 May 1987"),
        (datetime.date(1987, 5, 12), "ordinal", "lower", "the 12th of may, 1987"),
    ],
)
def test_render_hand_worked_edge_dates(
    day: datetime.date, fmt: str, case: str, expected: str
) -> None:
    assert render(day, fmt, case) == expected


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (10, "10th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (14, "14th"),
        (20, "20th"),
        (21, "21st"),
        (22, "22nd"),
        (23, "23rd"),
        (24, "24th"),
        (30, "30th"),
        (31, "31st"),
        (101, "101st"),
        (111, "111th"),
        (112, "112th"),
        (113, "113th"),
    ],
)
def test_ordinal_suffix_table(n: int, expected: str) -> None:
    assert ordinal(n) == expected


@pytest.mark.parametrize("day", [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 24, 31])
def test_ordinal_format_uses_the_suffix(day: int) -> None:
    assert render(datetime.date(2001, 1, day), "ordinal", "lower") == (
        f"the {ordinal(day)} of january, 2001"
    )


@pytest.mark.parametrize("n", [0, -1, 1.0, True, "1"])
def test_ordinal_bad_input(n: object) -> None:
    with pytest.raises(ValueError, match="n must be a positive int"):
        ordinal(n)  # type: ignore[arg-type]


@given(task_dates, st.sampled_from(FORMATS), st.sampled_from(CASES))
def test_render_parses_back_with_strptime(day: datetime.date, fmt: str, case: str) -> None:
    assert parse_back(render(day, fmt, case), fmt) == day


@given(task_dates, st.sampled_from(["weekday_day_month_year", "weekday_month_day_year"]))
def test_weekday_is_the_true_weekday(day: datetime.date, fmt: str) -> None:
    # strptime ignores a weekday that contradicts the date, so check it on its own.
    assert render(day, fmt, "title").split(",")[0] == day.strftime("%A")


@given(task_dates, st.sampled_from(FORMATS))
def test_cases_relate_as_documented(day: datetime.date, fmt: str) -> None:
    lower, upper, title = (render(day, fmt, case) for case in CASES)
    assert lower == lower.lower() and upper == upper.upper()
    assert lower == upper.lower() == title.lower()
    assert len(lower) == len(upper) == len(title)
    for word in title.split(" "):
        if word[0].isalpha():
            assert word[0].isupper() and word[1:] == word[1:].lower(), word
        else:
            assert word == word.lower(), word  # "21st", never "21St"
    if fmt != "numeric":
        assert lower != upper != title


def test_title_case_is_not_str_title() -> None:
    lower = render(SAT, "ordinal", "lower")
    assert lower.title() == "The 21St Of November, 2026"  # what str.title() would give
    assert render(SAT, "ordinal", "title") == "The 21st Of November, 2026"


def test_day_has_no_leading_zero_except_numeric() -> None:
    day = datetime.date(2005, 3, 7)
    words = {fmt: render(day, fmt, "lower") for fmt in FORMATS}
    assert words["numeric"] == "07.03.2005"
    for fmt in set(FORMATS) - {"numeric"}:
        assert "07" not in words[fmt] and "7" in words[fmt], words[fmt]


def test_max_source_length_is_reached_and_never_exceeded() -> None:
    # One 28-year cycle holds every (weekday, month, day) combination.
    start = datetime.date(2001, 1, 1)
    longest = max(
        len(render(start + datetime.timedelta(days=offset), fmt, "lower"))
        for offset in range(28 * 366)
        for fmt in FORMATS
    )
    assert longest == MAX_SOURCE_LENGTH == len("Wednesday, September 30, 2026")


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (datetime.date(2026, 11, 21), "2026-11-21"),
        (datetime.date(1900, 1, 1), "1900-01-01"),
        (datetime.date(2000, 2, 29), "2000-02-29"),
        (datetime.date(2099, 12, 31), "2099-12-31"),
    ],
)
def test_to_iso_hand_worked(day: datetime.date, expected: str) -> None:
    assert to_iso(day) == expected


@given(task_dates)
def test_to_iso_agrees_with_isoformat(day: datetime.date) -> None:
    assert to_iso(day) == day.isoformat()
    assert len(to_iso(day)) == TARGET_LENGTH
    assert datetime.date.fromisoformat(to_iso(day)) == day


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: render(SAT, "iso", "lower"), ValueError, "fmt must be one of"),
        (lambda: render(SAT, "ordinal", "Title"), ValueError, "case must be one of"),
        (
            lambda: render("2026-11-21", "ordinal", "lower"),
            TypeError,
            "date must be a datetime.date",
        ),
        (
            lambda: render(datetime.datetime(2026, 11, 21, 9, 30), "numeric", "lower"),
            TypeError,
            "got datetime",
        ),
        (lambda: to_iso(20261121), TypeError, "date must be a datetime.date, got int"),
    ],
)
def test_render_bad_input(call, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------- sampling


def formats_and_cases_of(text: str, iso: str) -> set[tuple[str, str]]:
    """Every (format, case) whose rendering of the target date is ``text``."""
    day = datetime.date.fromisoformat(iso)
    return {(f, c) for f in FORMATS for c in CASES if render(day, f, c) == text}


def test_sample_pairs_is_reproducible_and_leaves_global_random_alone() -> None:
    state = random.getstate()
    first = sample_pairs(200, seed=7)
    assert random.getstate() == state
    assert sample_pairs(200, seed=7) == first
    assert sample_pairs(200, seed=8) != first
    assert sample_pairs(50, seed=7) == first[:50]  # a prefix: draws are made pair by pair
    assert sample_pairs(0, seed=7) == []


def test_sample_pairs_covers_every_format_and_case_within_range() -> None:
    pairs = sample_pairs(2000, seed=0)
    assert len(pairs) == 2000
    seen_formats, seen_cases = set(), set()
    for text, iso in pairs:
        matches = formats_and_cases_of(text, iso)  # the text is a rendering of its target
        assert matches, (text, iso)
        seen_formats |= {f for f, _ in matches}
        if len(matches) == 1:  # numeric reads the same in every case
            seen_cases |= {c for _, c in matches}
    assert seen_formats == set(FORMATS)
    assert seen_cases == set(CASES)
    days = [datetime.date.fromisoformat(iso) for _, iso in pairs]
    assert all(FIRST_DATE <= day <= LAST_DATE for day in days)
    years = [day.year for day in days]
    assert min(years) < 1910 and max(years) > 2089  # spread over both centuries
    assert len(set(days)) > 1900  # 2000 draws from 73,049 dates rarely repeat


def test_sample_pairs_draws_from_the_given_dates_formats_and_cases() -> None:
    dates = [datetime.date(2000, 2, 29), datetime.date(1900, 1, 1)]
    pairs = sample_pairs(100, seed=1, dates=dates, formats=["ordinal"], cases=("upper",))
    assert {iso for _, iso in pairs} == {"2000-02-29", "1900-01-01"}
    assert {text for text, _ in pairs} == {
        "THE 29TH OF FEBRUARY, 2000",
        "THE 1ST OF JANUARY, 1900",
    }
    assert sample_pairs(30, seed=1, dates=tuple(dates)) == sample_pairs(30, seed=1, dates=dates)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": -1, "seed": 0}, ValueError, "n must be >= 0"),
        ({"n": 2.5, "seed": 0}, TypeError, "n must be an int"),
        ({"n": 5, "seed": None}, TypeError, "seed must be an int"),
        ({"n": 5, "seed": 0, "dates": []}, ValueError, "dates must not be empty"),
        ({"n": 5, "seed": 0, "dates": {SAT}}, TypeError, "dates must be a sequence"),
        ({"n": 5, "seed": 0, "dates": ["2026-11-21"]}, TypeError, "each of dates"),
        ({"n": 5, "seed": 0, "formats": ()}, ValueError, "formats must not be empty"),
        ({"n": 5, "seed": 0, "formats": "ordinal"}, TypeError, "formats must be a sequence"),
        ({"n": 5, "seed": 0, "cases": ["Upper"]}, ValueError, "each of cases must be one of"),
    ],
)
def test_sample_pairs_bad_input(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        sample_pairs(**kwargs)


def test_split_dates_is_a_reproducible_partition() -> None:
    train, heldout = split_dates(1000, seed=0)
    assert len(heldout) == 1000 and len(train) == NUM_DATES - 1000
    assert not set(train) & set(heldout)
    everything = sorted(train + heldout)
    assert everything[0] == FIRST_DATE and everything[-1] == LAST_DATE
    assert len(set(everything)) == NUM_DATES
    assert train == sorted(train) and heldout == sorted(heldout)
    assert split_dates(1000, seed=0) == (train, heldout)
    assert split_dates(1000, seed=1)[1] != heldout
    assert heldout[0].year < 1920 and heldout[-1].year > 2080  # spread, not one block


def test_held_out_pairs_only_use_held_out_dates() -> None:
    train, heldout = split_dates(500, seed=3)
    heldout_iso = {to_iso(day) for day in heldout}
    train_pairs = sample_pairs(3000, seed=4, dates=train)
    assert not {iso for _, iso in train_pairs} & heldout_iso
    assert {iso for _, iso in sample_pairs(300, seed=5, dates=heldout)} <= heldout_iso


@pytest.mark.parametrize(
    ("n_heldout", "seed", "error", "match"),
    [
        (0, 0, ValueError, "n_heldout must be >= 1"),
        (NUM_DATES, 0, ValueError, "n_heldout must be < NUM_DATES"),
        (10, None, TypeError, "seed must be an int"),
        ("10", 0, TypeError, "n_heldout must be an int"),
    ],
)
def test_split_dates_bad_input(
    n_heldout: object, seed: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        split_dates(n_heldout, seed)  # type: ignore[arg-type]


# ---------------------------------------------------------------- tokenizer

tokenizer = DateTokenizer()


def test_tokenizer_vocabulary() -> None:
    assert (tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id) == (0, 1, 2)
    assert tokenizer.vocab_size == 3 + 26 + 26 + 10 + 4 == 69 and tokenizer.max_len is None
    assert list(VOCAB_CHARACTERS) == sorted(set(VOCAB_CHARACTERS))  # sorted, no repeats
    assert tokenizer.tokens[3:] == tuple(VOCAB_CHARACTERS)
    assert tokenizer.encode(" ,-.09Aa") == [3, 4, 5, 6, 7, 16, 17, 43]
    assert DateTokenizer().tokens == tokenizer.tokens  # fixed, not built from data


def test_vocabulary_covers_every_format_case_and_target() -> None:
    produced = set("0123456789-")
    start = datetime.date(2001, 1, 1)  # a year holds every month, weekday and day of month
    for offset in range(365):
        day = start + datetime.timedelta(days=offset)
        for fmt in FORMATS:
            for case in CASES:
                produced |= set(render(day, fmt, case))
    assert produced <= set(VOCAB_CHARACTERS)
    assert {" ", ",", ".", "-"} <= produced


def test_encode_decode_hand_worked() -> None:
    ids = tokenizer.encode("2026-11-21", add_bos=True, add_eos=True)
    assert ids[0] == tokenizer.bos_id and ids[-1] == tokenizer.eos_id and len(ids) == 12
    assert tokenizer.decode(ids) == "2026-11-21"
    zero, one, two = 7, 8, 9  # after the 3 special tokens and " ,-."
    assert tokenizer.decode([two, tokenizer.eos_id, one]) == "2"  # stops at eos
    assert tokenizer.decode([0, 1, zero, 0, one]) == "01"  # skips pad and bos
    assert tokenizer.decode(torch.tensor([1, 17, 2, 0])) == "A"
    assert tokenizer.encode("") == [] and tokenizer.decode([]) == ""


@given(st.text(alphabet=VOCAB_CHARACTERS, max_size=40), st.booleans(), st.booleans())
def test_tokenizer_round_trip_any_text(text: str, add_bos: bool, add_eos: bool) -> None:
    ids = tokenizer.encode(text, add_bos=add_bos, add_eos=add_eos)
    assert len(ids) == len(text) + add_bos + add_eos
    assert all(3 <= i < tokenizer.vocab_size for i in ids[add_bos : len(ids) - add_eos])
    assert tokenizer.decode(ids) == text


@given(task_dates, st.sampled_from(FORMATS), st.sampled_from(CASES))
def test_tokenizer_round_trip_rendered_dates(day: datetime.date, fmt: str, case: str) -> None:
    for text in (render(day, fmt, case), to_iso(day)):
        assert tokenizer.decode(tokenizer.encode(text, add_eos=True)) == text


@pytest.mark.parametrize(
    ("text", "character", "position"), [("21/11/2026", "/", 2), ("1 mär", "ä", 3)]
)
def test_unknown_character_is_named(text: str, character: str, position: int) -> None:
    with pytest.raises(ValueError, match=rf"character '{character}' at position {position}"):
        tokenizer.encode(text)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: tokenizer.encode(["a"]), TypeError, "text must be a str"),
        (lambda: tokenizer.decode([69]), ValueError, r"ids outside \[0, 69\)"),
        (lambda: tokenizer.decode([-1]), ValueError, r"ids outside \[0, 69\)"),
        (lambda: tokenizer.decode([1.0]), TypeError, "every item of ids must be an int"),
        (lambda: tokenizer.decode(torch.zeros(3)), TypeError, "integer token ids"),
        (lambda: tokenizer.decode(torch.zeros(2, 3, dtype=torch.long)), ValueError, r"\(T,\)"),
        (lambda: tokenizer.encode_batch("abc"), TypeError, "texts must be a list of str"),
        (lambda: tokenizer.encode_batch([1]), TypeError, "every item of texts must be a str"),
        (lambda: DateTokenizer(max_len=1), ValueError, "max_len must be >= 2"),
        (lambda: tokenizer.decode_batch([[1, 2]]), TypeError, "ids must be a torch.Tensor"),
        (lambda: tokenizer.decode_batch(torch.zeros(3)), TypeError, "integer token ids"),
        (lambda: tokenizer.decode_batch(torch.zeros(3, dtype=torch.long)), ValueError, r"\(B, T\)"),
    ],
)
def test_tokenizer_bad_input(call, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_encode_batch_pads_on_the_right() -> None:
    texts = ["1.2", "", "12 May 1987"]
    batch, mask = tokenizer.encode_batch(texts, add_eos=True)
    assert batch.shape == mask.shape == (3, 12) and batch.dtype == torch.long
    assert mask.sum(dim=1).tolist() == [4, 1, 12]  # <eos> is a real token
    assert batch[0, :4].tolist() == tokenizer.encode("1.2", add_eos=True)
    assert (batch[0, 4:] == tokenizer.pad_id).all()
    assert batch[1].tolist() == [tokenizer.eos_id] + [tokenizer.pad_id] * 11
    assert (batch[2] != tokenizer.pad_id).all()
    assert tokenizer.decode_batch(batch) == texts
    assert tokenizer.encode_batch([""])[0].shape == (1, 0)
    assert tokenizer.encode_batch([])[0].shape == (0, 0)


def test_max_len_crops_between_bos_and_eos() -> None:
    short = DateTokenizer(max_len=6)
    ids = short.encode("2026-11-21", add_bos=True, add_eos=True)
    assert ids == [short.bos_id, *short.encode("2026"), short.eos_id]
    assert short.decode(short.encode("2026-11-21")) == "2026-1"


@given(st.lists(st.text(alphabet=VOCAB_CHARACTERS, max_size=12), min_size=1, max_size=6))
def test_encode_batch_round_trip(texts: list[str]) -> None:
    batch, mask = tokenizer.encode_batch(texts, add_bos=True, add_eos=True)
    assert batch.shape == (len(texts), max(len(t) for t in texts) + 2)
    lengths = (batch != tokenizer.pad_id).sum(dim=1).tolist()
    assert mask.sum(dim=1).tolist() == lengths
    assert lengths == [len(t) + 2 for t in texts]
    assert tokenizer.decode_batch(batch) == texts


# ---------------------------------------------------------------- batches


def test_make_batch_shapes_and_teacher_forcing() -> None:
    pairs = sample_pairs(64, seed=2)
    src, tgt_in, tgt_out = make_batch(pairs, tokenizer)
    longest = max(len(text) for text, _ in pairs)
    assert src.shape == (64, longest) and src.dtype == torch.long
    assert tgt_in.shape == tgt_out.shape == (64, TARGET_LENGTH + 1)
    assert tgt_in.dtype == tgt_out.dtype == torch.long
    assert (tgt_in[:, 0] == tokenizer.bos_id).all()
    assert (tgt_out[:, -1] == tokenizer.eos_id).all()
    assert torch.equal(tgt_in[:, 1:], tgt_out[:, :-1])  # the target, shifted by one
    assert not (tgt_in == tokenizer.pad_id).any()  # ISO targets all have one length
    specials = (tokenizer.bos_id, tokenizer.eos_id)
    assert not torch.isin(src, torch.tensor(specials)).any()  # src: characters and pad only
    assert not torch.isin(tgt_in[:, 1:], torch.tensor(specials)).any()
    assert not torch.isin(tgt_out[:, :-1], torch.tensor(specials)).any()
    assert tokenizer.decode_batch(src) == [text for text, _ in pairs]
    assert tokenizer.decode_batch(tgt_in) == tokenizer.decode_batch(tgt_out)
    assert tokenizer.decode_batch(tgt_out) == [iso for _, iso in pairs]
    lengths = (src != tokenizer.pad_id).sum(dim=1).tolist()
    assert lengths == [len(text) for text, _ in pairs]  # padding is all on the right
    for row, length in zip(src.tolist(), lengths, strict=True):
        assert all(i == tokenizer.pad_id for i in row[length:])


def test_make_batch_hand_worked_with_ragged_targets() -> None:
    pairs = [("1.2", "12"), ("Nov 3, 2001", "2001-11-03")]
    src, tgt_in, tgt_out = make_batch(pairs, tokenizer)
    pad, bos, eos = tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id
    one, two = tokenizer.encode("12")
    assert src.shape == (2, 11)
    assert src[0].tolist() == tokenizer.encode("1.2") + [pad] * 8
    assert tgt_in.shape == tgt_out.shape == (2, 11)
    assert tgt_in[0].tolist() == [bos, one, two] + [pad] * 8
    assert tgt_out[0].tolist() == [one, two, eos] + [pad] * 8
    assert tgt_in[1].tolist() == [bos, *tokenizer.encode("2001-11-03")]
    assert tgt_out[1].tolist() == [*tokenizer.encode("2001-11-03"), eos]


@pytest.mark.parametrize(
    ("pairs", "tok", "error", "match"),
    [
        ([], tokenizer, ValueError, "pairs must be a non-empty"),
        ("ab", tokenizer, TypeError, "pairs must be a list"),
        (["ab"], tokenizer, TypeError, "each of pairs must be"),
        ([("a", "b", "c")], tokenizer, ValueError, "each of pairs must be"),
        ([("a", "b")], None, TypeError, "tokenizer must be a DateTokenizer"),
        ([("a", 1)], tokenizer, TypeError, "every item of texts must be a str"),
        ([("a/b", "1")], tokenizer, ValueError, "character '/'"),
    ],
)
def test_make_batch_bad_input(pairs: list, tok: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        make_batch(pairs, tok)  # type: ignore[arg-type]
