"""A corpus of learner answers, written apart from the checkers' tables, run against them.

`python -m benchmarks.mistake_corpus` (or with notebook numbers: `… 02 10`; `--corpus a`, `b`
or `c` for one of the three corpora; `-v` to see every entry that is not named) runs every
entry through its exercise's checker and prints, per notebook and for the course:

- **caught**: wrong answers the check rejects (the issue's bar: at least 99 %);
- **named**: wrong answers whose report names the mistake actually made (at least 90 %);
- **rejected right answers**: right answers the check refuses (none).

Each module ``nbNN.py`` (corpus a), ``nbNN_b.py`` (corpus b, written later by other hands,
after the checkers had been improved against corpus a) and ``nbNN_c.py`` (corpus c, the same
again after corpus b) lists :class:`Entry` s. A wrong answer's
``named`` is the name of the table entry that describes it (the report must say "The mistake:
<named>"), or ``None`` when no table entry describes it; an answer named as some *other*
mistake counts as misnamed. The entries were written from what learners do, before reading the
tables or the other corpus; ``named`` was filled in afterwards by reading each report. A wrong
answer that calls the implementation its exercise asks for counts as named when the check
refuses it (``named=REFUSED``). The figures depend on the corpus, not on the machine.
"""
