"""How often does notebook 10's statistical sampler check fail a right sampler, or miss a wrong one?

`python -m benchmarks.sampler_checker` runs `checks.check_my_sample` on a right sampler written
as a learner would (`tests/support/right_sampler.py`; attnlib's own is refused by the check)
with seeds 0 to 1999 (`--seeds N` for another count) and prints how many runs failed: the bound
is built so that fewer than one in 10 million should. Then it runs each usual mistake of
`attnlib.checks.nb10_gpt.sampler_mistakes` over 200 seeds and prints how often the check failed
it and how often it named the mistake. About a minute on 2 cores.
"""

from __future__ import annotations

import time

from right_sampler import right_sampler

from attnlib import checks
from attnlib.checks.nb10_gpt import sampler
from attnlib.checks.nb10_gpt.sampler_mistakes import MISTAKES
from benchmarks import command_line


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser("sampler_checker", __doc__, writes=None)
    parser.add_argument("--seeds", type=int, default=2000, help="seeds for the right sampler")
    parser.add_argument("--mistake-seeds", type=int, default=200, help="seeds per mistake")
    args = parser.parse_args(argv)
    print(
        f"{len(sampler.CASES)} cases x {sampler.DRAWS:,} draws; per-token budget "
        f"{sampler.per_token_delta():.2e}, whole-check budget {sampler.FALSE_FAILURE:.0e}"
    )
    start = time.perf_counter()
    failed = [s for s in range(args.seeds) if not checks.check_my_sample(right_sampler, s).passed]
    print(
        f"right sampler: failed {len(failed)} of {args.seeds} seeds "
        f"(seeds {failed[:10]}) in {time.perf_counter() - start:.0f} s"
    )
    for mistake in MISTAKES:
        results = [checks.check_my_sample(mistake.fn, s) for s in range(args.mistake_seeds)]
        caught = sum(not r.passed for r in results)
        named = sum(f"The mistake: {mistake.name}." in r.message for r in results)
        print(
            f"caught {caught:4d}/{args.mistake_seeds}, named {named:4d}/{args.mistake_seeds}: "
            f"{mistake.name[:70]}"
        )


if __name__ == "__main__":
    main()
