"""Write the stored benchmark figures into docs/measurements.md.

`python -m benchmarks.measurements` does it.

Every figure on that page comes from a benchmark's last stored run (`benchmarks/results/`,
and `attnlib/data/attention_benchmark.json` for the attention timings), never from a hand:
each block between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->` is
rewritten from them. `--check` writes nothing and fails when the page is stale; a test runs
the same comparison. `--no-save` prints the page it would write instead of writing it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlib.course.attention_cost import load_benchmark_results
from benchmarks import attention, command_line, results

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "measurements.md"
ATTENTION_RESULTS = ROOT / "attnlib" / "data" / "attention_benchmark.json"
BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
    re.DOTALL,
)


def _thousands(count: int) -> str:
    return f"{count:,}"


def _difference(value: float) -> str:
    """``6.6e-7`` rather than Python's ``6.6e-07``; a difference of exactly 0 as ``0``."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _parameters(count: int) -> str:
    return f"{count / 1e3:.0f} k" if count < 1e6 else f"{count / 1e6:.1f} M"


def trained_models() -> str:
    dates, gpt = results.load("date_translator"), results.load("gpt")
    cache = gpt["kv_cache"]
    worst_format = min(dates["accuracy_by_format"].values())
    speed_up = cache["seconds_without"] / cache["seconds_with"]
    rows = [
        "| model | training | result |",
        "|---|---|---|",
        f"| date translator (encoder–decoder, d_model {dates['d_model']}, "
        f"{dates['num_layers']} + {dates['num_layers']} layers, "
        f"{_parameters(dates['parameters'])} parameters) | "
        f"{dates['steps']} steps of {dates['batch_size']}, in {dates['dtype']}, "
        f"in **{dates['seconds']:.0f} s** | "
        f"**{dates['accuracy_greedy']:.1%}** exact match on {_thousands(dates['heldout_pairs'])} "
        f"held-out dates greedy, {dates['accuracy_beam4']:.1%} with a beam of 4; "
        f"the worst format {worst_format:.1%} |",
        f"| character GPT (d_model {gpt['d_model']}, {gpt['num_layers']} layers, context "
        f"{gpt['context']}, {_parameters(gpt['parameters'])} parameters) on the course's prose | "
        f"{gpt['steps']} steps of {gpt['batch_size']} × {gpt['context']}, in {gpt['dtype']}, "
        f"in **{gpt['seconds']:.0f} s** | "
        f"loss {gpt['first_loss']:.2f} → **{gpt['last_50_loss']:.2f}** nats per character "
        "(the mean of the last 50 steps) |",
        f"| KV cache: {cache['new_tokens']} greedy tokens of an untrained GPT (d_model "
        f"{cache['d_model']}, {cache['num_layers']} layers, context {cache['context']}) | | "
        f"**{speed_up:.1f}×** faster ({cache['seconds_without']:.2f} s → "
        f"{cache['seconds_with']:.2f} s), the same tokens |",
    ]
    return _measured_on(dates, gpt) + "\n".join(rows) + "\n"


def gpt_ladder() -> str:
    figures = results.load("gpt_ladder")
    config = figures["config"]
    rows = ["| rung | parameters | training loss | validation loss |", "|---|---|---|---|"]
    rows += [
        f"| {rung['name']} | {_thousands(rung['parameters'])} | {rung['train_loss']:.2f} "
        f"| {rung['val_loss']:.2f} |"
        for rung in figures["rungs"]
    ]
    counted = figures["bigram_counted_val_loss"]
    rows.append(f"| bigram probabilities counted on the training text | | | {counted:.2f} |")
    own = "; ".join(
        f"{name} {', '.join(f'{w:.2f}' for w in weights)}"
        for name, weights in figures.get("own_position_weights", {}).items()
    )
    summary = (
        f"\nEach rung: context {config['context']}, d_model {config['d_model']}, "
        f"{config['num_layers']} layer, {config['steps']} steps of {config['batch_size']} "
        f"windows, in float64; the training loss is the mean of the last 50 batches. "
        + (f"Each head's weight on the current character (no residual): {own}. " if own else "")
        + f"The whole ladder: **{figures['seconds']:.0f} s** "
        f"({figures['cpu_seconds']:.0f} s of CPU time).\n"
    )
    return _measured_on(figures) + "\n".join(rows) + "\n" + summary


def equivalence() -> str:
    figures = results.load("equivalence")
    dtypes = ["float64", "float32", "float16", "bfloat16"]
    rows = [
        "| attnlib vs PyTorch | " + " | ".join(dtypes) + " |",
        "|---|" + "---|" * len(dtypes),
    ]
    reference = "`torch.nn.functional.scaled_dot_product_attention`"
    for implementation, differences in figures["attention"].items():
        cells = " | ".join(_difference(differences[d]) for d in dtypes)
        rows.append(f"| `{implementation}` vs {reference} | {cells} |")
    multi_head = figures["multi_head_float32"]
    rows.append(
        "| `MultiHeadAttention.from_torch` vs `torch.nn.MultiheadAttention` (outputs / "
        f"per-head weights) | | {_difference(multi_head['outputs'])} / "
        f"{_difference(multi_head['per-head weights'])} | | |"
    )
    masks = ", ".join(figures["masks"])
    intro = (
        f"The largest absolute difference over {figures['shapes']} shapes × "
        f"{len(figures['masks'])} mask kinds ({masks}).\n\n"
    )
    return _measured_on(figures) + intro + "\n".join(rows) + "\n"


def attention_cost() -> str:
    measured = load_benchmark_results(ATTENTION_RESULTS)
    setting = (
        f"B = {measured.batch}, H = {measured.heads}, d = {measured.head_size}, float32, tiles "
        f"of {measured.tile_size}; medians of {measured.repetitions} alternating repetitions; "
        f"the machine's 2048³ matmul runs at {measured.matmul_gflops:.0f} GFLOP/s. "
        f"Measured on {measured.machine}."
    )
    return f"{setting}\n\n{attention.tables(measured)}\n"


def minilm() -> str:
    figures = results.load("minilm")
    sentences = figures["sentences"]
    rows = [
        "| | attnlib | sentence-transformers |",
        "|---|---|---|",
        f"| encode throughput | {sentences / figures['seconds_attnlib']:.0f} sentences/s | "
        f"{sentences / figures['seconds_reference']:.0f} sentences/s |",
        "| time, attnlib / reference | "
        f"**{figures['seconds_attnlib'] / figures['seconds_reference']:.2f}×** | |",
        "| largest difference of the embeddings | "
        f"{_difference(figures['embedding_difference'])} | |",
        "| largest difference of the attention weights (every layer and head) | "
        f"{_difference(figures['attention_weight_difference'])} | |",
    ]
    intro = (
        f"{sentences} sentences in batches of {figures['batch_size']}, medians of "
        f"{figures['repetitions']} alternating repetitions.\n\n"
    )
    return _measured_on(figures) + intro + "\n".join(rows) + "\n"


def notebook_times() -> str:
    figures = results.load("notebook_times")
    seconds = figures["seconds"]
    rows = ["| notebook | seconds |", "|---|---|"]
    rows += [f"| `{name}` | {value:.0f} |" for name, value in seconds.items()]
    rows.append(f"| every notebook, one after the other | **{sum(seconds.values()):.0f}** |")
    return _measured_on(figures) + "\n".join(rows) + "\n"


def grading() -> str:
    figures = results.load("grading")
    one = figures["seconds_per_submission_1_worker"]
    two = figures["seconds_per_submission_2_workers"]
    rows = [
        "| | 1 worker | 2 workers |",
        "|---|---|---|",
        f"| seconds per submission | {one:.0f} | {two:.0f} |",
        f"| submissions per hour | {3600 / one:.0f} | **{3600 / two:.0f}** |",
    ]
    same = "the same" if figures["same_scores_as_whole_run"] else "**not** the same"
    problems = len(figures["problems"])
    summary = (
        f"\nEach submission scored {figures['score']:g} of {figures['most']:g}; a whole run of "
        f"one submission (every cell, the training included) took "
        f"{figures['whole_run_seconds_2_workers']:.0f} s on 2 workers, with every score {same} "
        f"as when the grader leaves cells out; {problems} problem"
        f"{'' if problems == 1 else 's'} reported.\n"
    )
    intro = (
        f"{figures['submissions']} whole-course submissions ({figures['notebooks']} notebooks "
        "each, the answer key), each notebook in a sandbox no other notebook has touched "
        "(forked from its worker's warm sandbox); the seconds include the start-up of the "
        "workers and their warm sandboxes.\n\n"
    )
    return _measured_on(figures) + intro + "\n".join(rows) + "\n" + summary


def _measured_on(*records: dict[str, Any]) -> str:
    machines = sorted({record["machine"] for record in records})
    return f"Measured on {' and '.join(machines)}.\n\n"


BLOCKS: dict[str, Callable[[], str]] = {
    "notebook-times": notebook_times,
    "grading": grading,
    "trained-models": trained_models,
    "gpt-ladder": gpt_ladder,
    "equivalence": equivalence,
    "attention-cost": attention_cost,
    "minilm": minilm,
}


def regenerate(text: str) -> str:
    """``text`` with every generated block rewritten from the stored figures."""
    found = {match.group("name") for match in BLOCK.finditer(text)}
    if found != set(BLOCKS):
        raise ValueError(f"the page's generated blocks {sorted(found)} are not {sorted(BLOCKS)}")
    return BLOCK.sub(lambda m: m.group(1) + BLOCKS[m.group("name")]() + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = command_line.benchmark_parser(
        "measurements", __doc__, writes=str(PAGE.relative_to(ROOT))
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; fail when the page is stale"
    )
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    fresh = regenerate(text)
    if args.check:
        if fresh != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run `python -m benchmarks.measurements`")
            return 1
        print(f"{PAGE.relative_to(ROOT)} quotes the stored figures")
        return 0
    if args.no_save:
        print(fresh, end="")
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
