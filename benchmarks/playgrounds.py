"""How fast each playground answers: ``python -m benchmarks.playgrounds``.

Issue 17's budget: every interaction that redraws one view answers within 150 ms, model
and figure included. This measures the sampler playground of notebook 10 on a char GPT
of notebook 10's size (2 blocks, d_model 64, context 64, float64, as trained there; the
weights do not change the time) and the date playground of notebook 09 on its stored
translator, with each figure rendered to pixels as a browser would receive it. It prints
the median and the slowest of 20 repeats of each interaction.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import torch

import attnlib
from attnlib.course import char_data, date_translator
from attnlib.course.playgrounds import dates, sampler

REPEATS = 20
BUDGET_MS = 150.0


def _time(action: Callable[[], None]) -> tuple[float, float]:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times), max(times)


def _report(title: str, interactions: dict[str, Callable[[], None]]) -> None:
    print(f"{title}, {REPEATS} repeats each, figure rendered (budget {BUDGET_MS:g} ms)")
    for name, action in interactions.items():
        median, slowest = _time(action)
        print(f"  {name:<36} median {median:6.1f} ms   slowest {slowest:6.1f} ms")


def date_playground() -> None:
    """Entering a date and changing the decoding run the translator; a step only redraws."""
    playground = dates.DatePlayground(date_translator.load_reference_translator())
    dates.display = lambda fig: fig.canvas.draw()  # type: ignore[assignment]
    playground.attention.clear_output = lambda **_: None
    texts = ["the 21st of November, 2026", "5 May 1999"]

    def enter() -> None:
        playground.text.value = texts[playground.text.value == texts[0]]

    def beam() -> None:
        playground.decoding.value = 4 if playground.decoding.value == 1 else 1

    def step() -> None:
        playground.step.value = (playground.step.value + 1) % len(playground.step.options)

    _report(
        "date playground",
        {"date entered (translator runs)": enter, "greedy <-> beam of 4": beam,
         "output step chosen": step},
    )  # fmt: skip


def main() -> None:
    torch.manual_seed(0)
    vocab = char_data.CharTokenizer(char_data.load_course_text())
    config = attnlib.GPTConfig(
        vocab_size=vocab.vocab_size, max_len=64, d_model=64, num_heads=4, num_layers=2, dropout=0.0
    )
    model = attnlib.GPT(config).double().eval()
    playground = sampler.SamplerPlayground(model, vocab, prompt="Attention ")
    # A notebook's display() sends the figure as a PNG: render it to pixels here instead.
    sampler.display = lambda fig: fig.canvas.draw()  # type: ignore[assignment]
    playground.bars.clear_output = lambda **_: None  # outside a kernel it prints escape codes
    prompts = ["The encoder reads the whole sentence at once, " * 3, "Attention "]

    def enter() -> None:
        playground.prompt.value = prompts[playground.prompt.value == prompts[0]]

    def slider() -> None:
        playground.temperature.value = 0.7 if playground.temperature.value != 0.7 else 1.2

    interactions = {
        "prompt entered (model runs)": enter,
        "temperature slider moved": slider,
        "'next' (one draw, one model run)": lambda: playground.buttons["next"].click(),
        "'reset'": lambda: playground.buttons["reset"].click(),
    }
    interactions["'20 more' (20 model runs, 1 figure)"] = lambda: playground.buttons[
        "20 more"
    ].click()
    _report("sampler playground", interactions)
    date_playground()


if __name__ == "__main__":
    main()
