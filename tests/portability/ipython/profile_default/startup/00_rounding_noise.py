"""IPython start-up: with ATTNLIB_ROUNDING_NOISE=up|down, the kernel runs under RoundingNoise.

Used by `make portability` (IPYTHONDIR points at the folder above): every notebook is run
with its float results moved up, then down, by 1-2 ulps, as another CPU might round them.
"""

import os
import sys
from pathlib import Path

_direction_name = os.environ.get("ATTNLIB_ROUNDING_NOISE")
if _direction_name:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # tests/portability
    import rounding_noise

    _rounding_noise_mode = rounding_noise.RoundingNoise(
        rounding_noise.direction_from_name(_direction_name)
    )
    _rounding_noise_mode.__enter__()  # stays active for the kernel's whole life
    sys.path.pop(0)
