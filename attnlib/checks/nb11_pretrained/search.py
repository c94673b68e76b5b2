"""Notebook 11, Exercise 3: semantic search by cosine, whatever the vectors' lengths.

The cases show each mistake: rows rescaled so that the worst matches are the longest (a raw dot
product, a Euclidean distance or a division by the squared length ranks them first), rows of any
length, k = 1 and k = N (every row, ranked), and best matches that are not in index order. The
queries are unit vectors (a query's length changes no ranking), so that a learner who returns
the scores is told so whether or not the query was normalised.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import check_function
from attnlib.checks.nb11_pretrained._after import named_again

Tensor = torch.Tensor

SEARCH = register(
    Exercise(
        id="ex3_my_semantic_search",
        notebook="11",
        number=3,
        name="my_semantic_search",
        hints=(
            "The cosine of two vectors is their dot product divided by both lengths (notebook "
            "01): it measures direction only. Score every corpus row against the query that "
            "way, then keep the positions of the k best scores, best first.",
            "Dividing each row by its own length makes every row a unit vector; then one "
            "matrix-vector product gives all N cosines at once (the query's length is the same "
            "for every row, so it cannot change the order). What comes back must be indices, "
            "not scores.",
            "Divide the corpus by its row lengths (a norm along the last dimension, kept as "
            "(N, 1)), multiply by the query, and take the indices of the k largest scores, "
            "largest first: torch.topk returns both values and indices, sorted by value.",
        ),
    )
)

FORBIDDEN = Forbidden(
    python={attnlib.semantic_search: "attnlib.semantic_search"},
    paths={
        "sentence_transformers.util:semantic_search": "sentence_transformers.util.semantic_search"
    },
)


def reference_search(query: Tensor, corpus: Tensor, k: int) -> Tensor:
    """The reference: attnlib's search, for one query."""
    return attnlib.semantic_search(query[None], corpus, k)[1][0]


def _cosines(q: Tensor, c: Tensor) -> Tensor:
    return nn.functional.normalize(c, dim=-1) @ nn.functional.normalize(q, dim=0)  # (N,)


MISTAKES = (
    Mistake(
        "ranked by the raw dot product, so a long row wins for being long (normalising the "
        "query alone changes no ranking)",
        "q · c = ‖q‖‖c‖cos θ: without dividing each row by its own length, a row twice as "
        "long scores twice as high whatever its direction.",
        lambda q, c, k: (c @ q).topk(k).indices,
    ),
    Mistake(
        "ranked the rows worst first (the smallest cosines first)",
        "the best match has the largest cosine: the k indices come largest score first.",
        lambda q, c, k: _cosines(q, c).topk(k, largest=False).indices,
    ),
    Mistake(
        "took the k best from the end of an ascending sort, so they come worst first",
        "the last k of an ascending sort are the best k, but in rising order: the best match "
        "must come first.",
        lambda q, c, k: _cosines(q, c).argsort()[-k:],
    ),
    Mistake(
        "returned the cosines (the scores) instead of the rows' indices",
        "a search answers 'which rows?': the k positions in the corpus, best first.",
        lambda q, c, k: _cosines(q, c).topk(k).values,
    ),
    Mistake(
        "returned topk's pair (values, indices) instead of the indices",
        "torch.topk returns the best scores and where they are; the search returns only where.",
        lambda q, c, k: _cosines(q, c).topk(k),
    ),
    Mistake(
        "returned every row's index in order, not only the best k",
        "the result has shape (k,): the k best rows, not a ranking of all N.",
        lambda q, c, k: _cosines(q, c).argsort(descending=True),
    ),
    Mistake(
        "returned the best k in the corpus's order, not best first",
        "the first index must be the best match: sorting the indices themselves loses the "
        "order of the scores.",
        lambda q, c, k: _cosines(q, c).topk(k).indices.sort().values,
    ),
    Mistake(
        "left out the best row, as if it were the query itself",
        "the query is not one of the corpus's rows here: the best match is the first index to "
        "return, and the k indices start with it.",
        lambda q, c, k: _cosines(q, c).argsort(descending=True)[1 : k + 1],
    ),
    Mistake(
        "returned a Python list of indices instead of a tensor",
        "the search returns a long tensor of shape (k,), which indexes the corpus and the "
        "sentences' list alike; a list of ints is not a tensor.",
        lambda q, c, k: _cosines(q, c).topk(k).indices.tolist(),
    ),
    Mistake(
        "normalised each feature over the rows (dim 0) instead of each row",
        "a row's length is the norm of its own C entries, along the last dimension; the norm "
        "along dim 0 rescales features, not rows.",
        lambda q, c, k: (c / c.norm(dim=0, keepdim=True) @ q).topk(k).indices,
    ),
    Mistake(
        "ranked by the Euclidean distance between the raw vectors",
        "distance mixes direction and length: a short row close to the origin is near a short "
        "query whatever its direction. Only for unit vectors does distance order like cosine.",
        lambda q, c, k: (c - q).norm(dim=-1).topk(k, largest=False).indices,
    ),
    Mistake(
        "divided each row by its squared length instead of its length",
        "c · q / ‖c‖² is cos θ · ‖q‖ / ‖c‖: it still depends on the row's length, now "
        "favouring short rows.",
        lambda q, c, k: (c @ q / (c * c).sum(dim=-1)).topk(k).indices,
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    corpus = nn.functional.normalize(torch.randn(8, 5, generator=g, dtype=torch.float64), dim=-1)
    query = nn.functional.normalize(torch.randn(5, generator=g, dtype=torch.float64), dim=0)
    worst_first = (corpus @ query).argsort()  # (8,)
    lengths = torch.empty(8, dtype=torch.float64)
    lengths[worst_first] = torch.linspace(8.0, 1.0, 8, dtype=torch.float64)
    scaled = corpus * lengths[:, None]  # the worse the cosine, the longer the row
    small = torch.randn(6, 3, generator=g, dtype=torch.float64)  # rows of any length
    small = small * torch.tensor([0.2, 3.0, 1.0, 0.5, 6.0, 1.5], dtype=torch.float64)[:, None]
    other = nn.functional.normalize(torch.randn(3, generator=g, dtype=torch.float64), dim=0)
    specs = [
        ("top 3 of 8 unit rows", query, corpus, 3),
        ("top 1 of 8 unit rows", query, corpus, 1),
        ("rows of different lengths, the worst matches the longest", query, scaled, 4),
        ("rows of any length, every row ranked", other, small, 6),
        ("rows of any length, top 2", other, small, 2),
    ]
    return [Case(d, (q, c, k), reference_search(q, c, k)) for d, q, c, k in specs]


@checker_of(SEARCH, MISTAKES)
def check_cosine_search(fn: Callable[[Tensor, Tensor, int], Tensor]) -> CheckResult:
    """Check ``my_semantic_search(query (C,), corpus (N, C), k) -> indices (k,)``."""
    cases = _cases()
    result = check_function(
        SEARCH, fn, cases, MISTAKES, forbidden=FORBIDDEN, atol=1e-9, rtol=1e-9,
        output_names=("indices",),
    )  # fmt: skip
    # topk(k + 1) to leave out the best row raises where k is every row: named where it ran.
    return named_again(SEARCH, fn, cases, MISTAKES, result, (1e-9, 1e-9))
