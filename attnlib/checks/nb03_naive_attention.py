"""Checkers for notebook 03's exercises (being rewritten: see the issue's brief).

Notebook 03.
"""

__all__: list[str] = []
