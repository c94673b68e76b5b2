"""Checkers for notebook 01's exercises (being rewritten: see the issue's brief).

Notebook 01.
"""

__all__: list[str] = []
