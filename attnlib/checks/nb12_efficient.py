"""Checkers for notebook 12's exercises (being rewritten: see the issue's brief).

Notebook 12.
"""

__all__: list[str] = []
