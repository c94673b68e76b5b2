"""Checkers for notebook 01's exercises, one module each: the dot product along the last
dimension (:mod:`.dot`), cosine similarity that is 0 for a zero vector (:mod:`.cosine`) and the
most similar other vector of a stack (:mod:`.most_similar`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 01.
"""

from attnlib.checks.nb01_dot_products.cosine import check_cosine
from attnlib.checks.nb01_dot_products.dot import check_dot_product
from attnlib.checks.nb01_dot_products.most_similar import check_most_similar_other

__all__ = ["check_cosine", "check_dot_product", "check_most_similar_other"]
