"""Checkers for notebook 10's exercises (being rewritten: see the issue's brief).

Notebook 10.
"""

__all__: list[str] = []
