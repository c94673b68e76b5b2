"""Checkers for notebook 09's exercises (being rewritten: see the issue's brief).

Notebook 09.
"""

__all__: list[str] = []
