"""A corpus of learner answers, written apart from the checkers' tables, run against them.

`python -m benchmarks.mistake_corpus` runs every entry through its exercise's checker and
prints how many wrong answers each check catches and names, and how many right answers it
refuses; `python -m benchmarks.stand_ins` and `tests/checks/test_grading_stand_ins.py` run the
answers across the grading sandbox's wall. Test data, shared with the benchmarks.

Each module ``nbNN.py`` (corpus a), ``nbNN_b.py`` (corpus b, written later by other hands,
after the checkers had been improved against corpus a), ``nbNN_c.py`` (corpus c, the same
again after corpus b) and ``nbNN_d.py`` (corpus d, written after corpus c from the learner's
edition's tasks alone, aimed at what corpus c's round saw slip: a result in another dtype than
the input's, a float32 constant against float64 input, a float where a whole number is asked,
epsilons in denominators, heads split or joined without a transpose, `.T` on a batch, a decay
that starts at step 0, GNMT penalties written other ways, fills other than −∞ inside the
sampler, crashes inside the answer) lists :class:`Entry` s. Corpus d judges a dtype as the
checkers do: where a task names a dtype (or says its result keeps its input's, as 00 Ex 1 and
4, 01 Ex 1 and 2, 02 Ex 1, 10 Ex 4 and 12 Ex 3 now do), a result in another dtype and a float32
constant that breaks float64 are mistakes; where it names none, an answer computed in float32 is
right. Seven answers of corpus d first judged right by the second half of that rule returned
float32 for float64 input in those tasks: their tasks now say the dtype, and they are wrong.
Three answers of corpora a and b were judged again by that rule and by issue 40's (a float32
``torch.eye`` in notebook 03, a count returned as a float in notebook 12): each says so where it
stands. A wrong answer's ``named`` is the name of the table entry that describes it (the
report must say "The mistake: <named>"), or ``None`` when no table entry describes it; an answer
named as some *other* mistake counts as misnamed. The entries were written from what learners
do, before reading the tables or the other corpus; ``named`` was filled in afterwards by reading
each report. A wrong answer that calls the implementation its exercise asks for counts as named
when the check refuses it (``named=REFUSED``).
"""
