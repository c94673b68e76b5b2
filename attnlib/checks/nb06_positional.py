"""Checkers for notebook 06's exercises (being rewritten: see the issue's brief).

Notebook 06.
"""

__all__: list[str] = []
