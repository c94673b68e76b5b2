"""Checkers for the notebooks' exercises, one module (or sub-package) per notebook.

A checker calls the learner's answer on several cases and returns a :class:`CheckResult`:
"✓ … is correct", or the failing case, what is wrong there and, when the checker recognises it,
the mistake made and why it fails. Each checker keeps a table of the mistakes learners make on
its exercise, written as a learner would write them, and names the one the answer behaves
like, through the one checking engine (:mod:`attnlib.checks.engine`: ``check_function`` for a
function, ``check_module`` for a class). It never prints the fix as code: more help comes
from :func:`hint` (in levels) and :func:`solution`, when asked. An answer that calls the
implementation it should write is refused; one that still raises ``NotImplementedError`` is
"not done yet", with its task.

In a notebook, a core exercise's check cell ends with ``.assert_passed()``, which raises
:class:`CheckFailedError` when the check fails: Jupyter shows the report alone and nbgrader
scores the cell as a fail. The cell is tagged ``raises-exception``, so Run All goes on. An
optional exercise's check only shows its report. A later cell that builds on an exercise calls
:func:`yours_or_attnlib`.
"""

from attnlib.checks import (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)
from attnlib.checks._framework import CheckFailedError, CheckResult
from attnlib.checks.help import hint, solution, yours_or_attnlib
from attnlib.checks.nb00_pytorch import *  # noqa: F403
from attnlib.checks.nb01_dot_products import *  # noqa: F403
from attnlib.checks.nb02_softmax import *  # noqa: F403
from attnlib.checks.nb03_naive_attention import *  # noqa: F403
from attnlib.checks.nb04_queries_keys_values import *  # noqa: F403
from attnlib.checks.nb05_multi_head import *  # noqa: F403
from attnlib.checks.nb06_positional import *  # noqa: F403
from attnlib.checks.nb07_masking import *  # noqa: F403
from attnlib.checks.nb08_transformer_block import *  # noqa: F403
from attnlib.checks.nb09_encoder_decoder import *  # noqa: F403
from attnlib.checks.nb10_gpt import *  # noqa: F403
from attnlib.checks.nb11_pretrained import *  # noqa: F403
from attnlib.checks.nb12_efficient import *  # noqa: F403
from attnlib.course.predictions import Prediction, PredictionResult
from attnlib.course.questions import confirm, reveal

# Each notebook's module lists in its __all__ the checkers (and fallbacks) its notebook calls.
_NOTEBOOKS = (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)
__all__ = [
    "CheckFailedError",
    "CheckResult",
    "Prediction",
    "PredictionResult",
    "confirm",
    "hint",
    "reveal",
    "solution",
    "yours_or_attnlib",
    *(name for notebook in _NOTEBOOKS for name in notebook.__all__),
]
