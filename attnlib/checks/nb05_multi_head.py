"""Checkers for notebook 05's exercises (being rewritten: see the issue's brief).

Notebook 05.
"""

__all__: list[str] = []
