"""Checkers for notebook 11's exercises (being rewritten: see the issue's brief).

Notebook 11.
"""

__all__: list[str] = []
