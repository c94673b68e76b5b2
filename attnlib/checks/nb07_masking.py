"""Checkers for notebook 07's exercises (being rewritten: see the issue's brief).

Notebook 07.
"""

__all__: list[str] = []
