"""What a sandbox holds: the grader refuses one that would run a submission with privileges
(attnlib.grading.grader.runs.refusal), judged from what the run reports before any of its code
ran."""

from __future__ import annotations

from typing import Any

import pytest

from attnlib.grading.grader.runs import refusal
from attnlib.grading.sandbox.notebook import privileges

NONE = "0000000000000000"


def _hello(**changes: Any) -> dict[str, Any]:
    hello = {
        "capabilities": dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), NONE),
        "no_new_privs": "1",
        "uid": 1_600_000_000,
        "uid_map": "         0          0          1\n1600000000 1600000000          1\n",
    }
    return {**hello, **changes}


def test_an_unprivileged_run_is_accepted() -> None:
    assert refusal(_hello()) == ""
    assert refusal(_hello(uid=1000, uid_map="0 0 4294967295\n")) == ""


@pytest.mark.parametrize(
    ("hello", "words"),
    [
        (_hello(capabilities={**_hello()["capabilities"], "CapEff": "000001ffffffffff"}), "holds"),
        (_hello(capabilities={**_hello()["capabilities"], "CapBnd": "00000000000000c0"}), "holds"),
        (_hello(no_new_privs="0"), "no_new_privs"),
        (_hello(uid=0), "runs as root"),
        (_hello(uid=1000, uid_map="1000 0 1\n"), "runs as root"),
        (_hello(uid=5), "maps to no user"),
        (_hello(capabilities={}), "capabilities"),
        ("not a dict", "did not say"),
    ],
)
def test_a_privileged_or_unclear_run_is_refused(hello: Any, words: str) -> None:
    assert words in refusal(hello)


def test_this_process_reports_what_it_runs_as() -> None:
    mine = privileges()
    assert set(mine) == {"capabilities", "no_new_privs", "uid", "uid_map"}
    assert len(mine["capabilities"]) == 5 and mine["uid_map"].strip()


def test_what_the_sandbox_reads_for_the_solutions_is_the_withheld_note() -> None:
    import json

    from attnlib.checks import help
    from attnlib.grading.grader.wall import WITHHELD_SOLUTIONS

    assert help.WITHHELD in json.loads(WITHHELD_SOLUTIONS)
