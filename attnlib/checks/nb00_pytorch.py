"""Checkers for notebook 00's exercises (being rewritten: see the issue's brief).

Notebook 00.
"""

__all__: list[str] = []
