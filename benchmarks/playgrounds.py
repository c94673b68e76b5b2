"""How fast each playground answers: ``python -m benchmarks.playgrounds``.

Issue 17's budget: every interaction that redraws one view answers within 150 ms, model
and drawing included; a text with its model view within 1 s. This measures the sampler
playground of notebook 10 on a char GPT of notebook 10's size (2 blocks, d_model 64,
context 64, float64, as trained there; the weights do not change the time), the date
playground of notebook 09 on its stored translator (their bars are HTML, as the browser
receives them), and the attention views of notebooks 04, 05, 10 and 11. Each interaction
is done once untimed (the first call fills caches a learner's kernel has long filled),
then 20 times; it prints the median and the slowest.
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
from benchmarks import command_line

REPEATS = 20
BUDGET_MS = 150.0


def _time(action: Callable[[], None]) -> tuple[float, float]:
    action()  # warm-up, untimed
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times), max(times)


def _report(title: str, interactions: dict[str, Callable[[], None]]) -> None:
    print(f"{title}, {REPEATS} repeats each, HTML built (budget {BUDGET_MS:g} ms)")
    for name, action in interactions.items():
        median, slowest = _time(action)
        print(f"  {name:<36} median {median:6.1f} ms   slowest {slowest:6.1f} ms")


def date_playground() -> None:
    """Entering a date and changing the decoding run the translator; a step only redraws."""
    playground = dates.DatePlayground(date_translator.load_reference_translator())
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
    interactions["'20 more' (20 model runs, 1 drawing)"] = lambda: playground.buttons[
        "20 more"
    ].click()
    _report("sampler playground", interactions)
    date_playground()


def attention_views() -> None:
    """The attention views (issue 17, items 2 and 5): MiniLM, the char GPT and the toys.

    Entering a text runs the model once and draws the model view (budget 1 s); choosing a
    head, a layer or a query token redraws the head view and the neuron view only (150 ms).
    The neuron view alone is also timed. The toys of 04 and 05 have no model view.
    """
    from attnlib.course import toy_tasks
    from attnlib.course.playgrounds import attention_drawing as drawing
    from attnlib.course.playgrounds import attention_views as views
    from attnlib.course.playgrounds import gpt_views, minilm_views, toy_views

    torch.manual_seed(0)
    vocab = char_data.CharTokenizer(char_data.load_course_text())
    config = attnlib.GPTConfig(
        vocab_size=vocab.vocab_size, max_len=64, d_model=64, num_heads=4, num_layers=2, dropout=0.0
    )
    task = toy_tasks.LookupTask()
    long_text = (
        "The encoder reads the whole sentence at once, every word attending to every other. "
    )
    encoder = attnlib.load_minilm()
    playgrounds = {
        "MiniLM (6 x 12 heads), 12 and 36 tokens": (
            minilm_views.show_minilm_views(encoder),
            [minilm_views.FOX, long_text * 2],
        ),
        "MiniLM, texts cropped to 256 tokens": (
            minilm_views.show_minilm_views(encoder, long_text * 20),
            [long_text * 20, long_text * 21],
        ),
        "char GPT (2 x 4 heads, context 64)": (
            gpt_views.show_gpt_views(attnlib.GPT(config).double().eval(), vocab),
            ["the keys and values of the past", long_text],
        ),
        "lookup toy of 04 (1 head)": (
            toy_views.show_lookup_views(toy_tasks.LookupModel(task), task),
            ["3=5 1=2 7=0 4=4 ?1", "0=1 2=3 4=5 6=7 ?4"],
        ),
        "neighbour toy of 05 (2 heads)": (
            toy_views.show_neighbour_views(toy_tasks.NeighbourModel(toy_tasks.NeighbourTask())),
            ["31415926", "27182818"],
        ),
    }
    print(f"attention views, {REPEATS} repeats each (budget: {BUDGET_MS:g} ms a selection, "
          "1000 ms a text with its model view)")  # fmt: skip
    for title, (playground, texts) in playgrounds.items():
        source = playground.source

        def enter(playground=playground, texts=texts) -> None:
            playground.text.value = texts[playground.text.value == texts[0]]

        def choose(selector, count: int, first: int = 0) -> Callable[[], None]:
            return lambda: setattr(selector, "value", (selector.value + 1 - first) % count + first)

        def neuron(playground=playground, source=source) -> None:
            view, layer = playground.view, playground.layer.value
            head, query = playground.head.value, playground.query.value
            drawing.neuron_view_html(views.neuron_at(source, view, layer, head, query), view.tokens)

        interactions = {"text entered (model runs, views drawn)": enter}
        if source.num_heads > 1:
            interactions["head chosen (head + neuron view)"] = choose(
                playground.head, source.num_heads
            )
        if source.num_layers > 1:
            layers = source.num_layers
            interactions["layer chosen (head + neuron view)"] = choose(
                playground.layer, layers, first=1
            )
        interactions["query chosen (head + neuron view)"] = choose(playground.query, 4)
        interactions["neuron view alone"] = neuron
        print(f"  {title}")
        for name, action in interactions.items():
            median, slowest = _time(action)
            print(f"    {name:<40} median {median:6.1f} ms   slowest {slowest:6.1f} ms")


if __name__ == "__main__":
    # No flag of its own: the parser answers --help, and --no-save changes nothing here.
    command_line.benchmark_parser("playgrounds", __doc__, writes=None).parse_args()
    main()
    attention_views()
