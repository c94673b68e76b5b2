"""Diagrams drawn with code, one module per idea, each shown where its notebook teaches it.

Each module has a ``draw(...)`` function that returns a matplotlib figure; a notebook calls it
in a cell (``diagrams.nb08_transformer_block.draw()``, then ``plt.show()``) and `make figures`
writes each to ``figures/diagrams/`` for the README and the guide. Drawn from code, the
diagrams are the same on every machine and change with the code they describe.

- ``nb03_dependencies``: which inputs each output of an RNN and of self-attention depends on (03)
- ``nb05_head_split``: the head split and merge, beside a plain view that mixes positions (05)
- ``nb07_mask_broadcast``: a (B, 1, 1, T) padding mask broadcast against the scores (07)
- ``nb08_transformer_block``: the paper's Figure 1 block, post-norm and pre-norm (08)
- ``nb10_kv_cache``: what a generation step computes and what the cache reuses (10)
- ``nb12_tiling``: tiled attention's grid of query and key tiles (12)
"""

from collections.abc import Callable

from matplotlib.figure import Figure

from attnlib.course.diagrams import (
    nb03_dependencies,
    nb05_head_split,
    nb07_mask_broadcast,
    nb08_transformer_block,
    nb10_kv_cache,
    nb12_tiling,
)

# figures/diagrams/<name>.png: what `make figures` draws, in course order.
FIGURES: dict[str, Callable[[], Figure]] = {
    "dependencies.png": nb03_dependencies.draw,
    "head_split.png": nb05_head_split.draw,
    "mask_broadcast.png": nb07_mask_broadcast.draw,
    "transformer_block.png": nb08_transformer_block.draw,
    "kv_cache.png": nb10_kv_cache.draw,
    "tiling.png": nb12_tiling.draw,
}

__all__ = [
    "FIGURES",
    "nb03_dependencies",
    "nb05_head_split",
    "nb07_mask_broadcast",
    "nb08_transformer_block",
    "nb10_kv_cache",
    "nb12_tiling",
]
