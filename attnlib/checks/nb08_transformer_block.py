"""Checkers for notebook 08's exercises (being rewritten: see the issue's brief).

Notebook 08.
"""

__all__: list[str] = []
