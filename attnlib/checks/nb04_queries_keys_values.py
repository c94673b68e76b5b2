"""Checkers for notebook 04's exercises (being rewritten: see the issue's brief).

Notebook 04.
"""

__all__: list[str] = []
