"""How often does notebook 10's statistical sampler check fail a right sampler, or miss a wrong one?

`python -m benchmarks.sampler_checker` runs `checks.check_sampler` on attnlib's own sampler
with seeds 0 to 1999 (`--seeds N` for another count) and prints how many runs failed: the
bound is built so that fewer than one in 10 million should. Then it runs each usual mistake
of `attnlib.checks.sampling_mistakes` over 200 seeds and prints how often the check failed
it and how often it named the mistake. About a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from attnlib import checks
from attnlib.checks import sampling
from attnlib.checks.sampling_mistakes import MISTAKES
from attnlib.sampling import sample_next_token

# attnlib's own sampler takes the exercise's arguments in the exercise's order.
right_sampler = sample_next_token


def sampler_of(distribution: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """A sampler that draws from a mistake's distribution (greedy at temperature 0)."""

    def sample(
        logits: torch.Tensor,
        temperature: float,
        top_k: int | None,
        top_p: float | None,
        generator: torch.Generator,
    ) -> torch.Tensor:
        if temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)
        probs = distribution(logits[0], temperature, top_k, top_p)  # every row is the same
        return torch.multinomial(probs.expand(logits.shape[0], -1), 1, generator=generator)

    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2000, help="seeds for the right sampler")
    parser.add_argument("--mistake-seeds", type=int, default=200, help="seeds per mistake")
    args = parser.parse_args()
    print(
        f"{len(sampling.CASES)} cases x {sampling.DRAWS:,} draws; per-token budget "
        f"{sampling.per_token_delta():.2e}, whole-check budget {sampling.FALSE_FAILURE:.0e}"
    )
    start = time.perf_counter()
    failed = [s for s in range(args.seeds) if not checks.check_sampler(right_sampler, s).passed]
    print(
        f"right sampler: failed {len(failed)} of {args.seeds} seeds "
        f"(seeds {failed[:10]}) in {time.perf_counter() - start:.0f} s"
    )
    for mistake, distribution in MISTAKES.items():
        wrong = sampler_of(distribution)
        results = [checks.check_sampler(wrong, s) for s in range(args.mistake_seeds)]
        caught = sum(not r.passed for r in results)
        named = sum(f"likely cause: {mistake}" in r.message for r in results)
        print(
            f"caught {caught:4d}/{args.mistake_seeds}, named {named:4d}/{args.mistake_seeds}: "
            f"{mistake[:70]}"
        )


if __name__ == "__main__":
    main()
