"""The sampler playground: a learner's own prompt through notebook 10's char GPT.

The pure half, unit-tested without a browser: :func:`read_prompt` turns typed text into
what the model can read and says what it had to change; :func:`next_token_choices`
runs the model once and gives the distribution the next character is drawn from, under
temperature, top-k and top-p; :func:`choices_at` re-shapes already computed logits for
new settings without running the model again; :func:`draw` samples from it;
:func:`sampler_bars` draws the likeliest characters as HTML bars (``bar_chart``).

Notebook 10.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from torch import nn

from attnlib._validate import require_positive_int
from attnlib.course.char_data import CharTokenizer
from attnlib.course.playgrounds.bar_chart import bar_chart_html
from attnlib.course.playgrounds.display import show_playground
from attnlib.sampling import next_token_probs

# How a character the bars label would otherwise be invisible is shown.
VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}
EXAMPLE = "The keys "  # the prompt box's placeholder: what a learner might type


def visible(ch: str) -> str:
    """``ch`` as a bar label: a space, newline or tab as a visible sign."""
    return VISIBLE.get(ch, ch)


@dataclass(frozen=True)
class Prompt:
    """Typed text as the model reads it.

    ``text`` is what is kept (characters outside the vocabulary left out); ``ids`` its
    character ids, all of them (the model reads the last ``max_len`` at each step); ``notes``
    says, in words for the learner, what was changed and why (empty when nothing was).
    """

    text: str
    ids: list[int]
    notes: tuple[str, ...]

    @property
    def readable(self) -> bool:
        """Whether there is at least one character for the model to read."""
        return bool(self.ids)


def read_prompt(typed: str, vocab: CharTokenizer, max_len: int) -> Prompt:
    """The part of ``typed`` the model can read, and a note for each thing it could not.

    Never raises on what a learner types: an empty text, characters the model has never
    seen (named, then left out) and a text longer than the model's context (only its last
    ``max_len`` characters are read) each give a note instead.
    """
    if not isinstance(typed, str):
        raise TypeError(f"typed must be a str, got {type(typed).__name__}")
    require_positive_int("max_len", max_len)
    known = set(vocab.chars)
    unknown = sorted(set(typed) - known)
    kept = "".join(ch for ch in typed if ch in known)
    notes = []
    if not typed:
        notes.append("Type a prompt, then press Enter.")
    elif unknown:
        named = ", ".join(repr(ch) for ch in unknown)
        notes.append(f"Not among the model's {vocab.vocab_size} characters, so left out: {named}.")
        if not kept:
            notes.append("Nothing is left for the model to read: type some of its characters.")
    if len(kept) > max_len:
        notes.append(
            f"The model reads at most {max_len} characters: only the last {max_len} of your "
            f"{len(kept)} are used, {kept[-max_len:]!r}."
        )
    return Prompt(text=kept, ids=vocab.encode(kept) if kept else [], notes=tuple(notes))


@dataclass(frozen=True, eq=False)
class Choices:
    """The next character's distribution and its most likely candidates.

    Shapes:
        logits: ``(V,)``, the model's scores; distribution: ``(V,)``, what :func:`draw`
        samples from, summing to 1; top_ids: ``(k,)`` long, the ``k`` likeliest ids, best
        first, with their labels and probabilities ``top_probs (k,)``.
    """

    logits: torch.Tensor
    distribution: torch.Tensor
    top_ids: torch.Tensor
    top_labels: list[str]
    top_probs: torch.Tensor
    kept: int  # how many characters can be drawn at all (probability > 0)
    settings: str  # the temperature, top-k and top-p in words, for the bars' title


def settings_text(temperature: float, top_k: int | None, top_p: float | None) -> str:
    """``"T 0.80, top-k 5, top-p off"``: what shaped the distribution."""
    k = "off" if top_k is None else str(top_k)
    p = "off" if top_p is None else f"{top_p:.2f}"
    return f"T {temperature:.2f}, top-k {k}, top-p {p}"


def choices_at(
    logits: torch.Tensor,
    vocab: CharTokenizer,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    shown: int = 10,
) -> Choices:
    """:func:`attnlib.next_token_probs` of ``logits`` and its ``shown`` likeliest characters.

    Shapes:
        logits: ``(V,)``.
    """
    if logits.shape != (vocab.vocab_size,):
        raise ValueError(f"logits must have shape ({vocab.vocab_size},), got {tuple(logits.shape)}")
    require_positive_int("shown", shown)
    distribution = next_token_probs(logits, temperature, top_k, top_p)  # (V,)
    top = distribution.topk(min(shown, vocab.vocab_size))
    return Choices(
        logits=logits,
        distribution=distribution,
        top_ids=top.indices,
        top_labels=[visible(vocab.chars[i]) for i in top.indices.tolist()],
        top_probs=top.values,
        kept=int((distribution > 0).sum()),
        settings=settings_text(temperature, top_k, top_p),
    )


@torch.no_grad()
def next_token_choices(
    model: nn.Module,
    vocab: CharTokenizer,
    ids: list[int],
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    shown: int = 10,
) -> Choices:
    """Run ``model`` on the last ``max_len`` of ``ids`` and return :func:`choices_at` its logits.

    ``model`` is a GPT: ``(1, T)`` ids in, ``(1, T, V)`` logits out, ``model.config.max_len``
    its context.
    """
    if not ids:
        raise ValueError("ids is empty: the model needs at least one character to read")
    window = torch.tensor([ids[-model.config.max_len :]])  # (1, T)
    was_training = model.training
    model.eval()
    try:
        logits = model(window)[0, -1]  # (V,)
    finally:
        model.train(was_training)
    return choices_at(logits, vocab, temperature, top_k, top_p, shown)


def draw(choices: Choices, generator: torch.Generator) -> int:
    """One character id drawn from ``choices.distribution``."""
    return int(torch.multinomial(choices.distribution, 1, generator=generator))


def sampler_bars(choices: Choices, drawn: int | None = None) -> str:
    """HTML bars of the likeliest next characters; the one drawn (if among them) in orange."""
    ids = choices.top_ids.tolist()
    vocab_size = len(choices.distribution)
    return bar_chart_html(
        choices.top_labels,
        choices.top_probs.tolist(),
        title=f"{choices.settings}: {choices.kept} of {vocab_size} characters can be drawn",
        xlabel="next character (orange: the one drawn)",
        ylabel="probability",
        highlight=ids.index(drawn) if drawn in ids else None,
    )


class SamplerPlayground:
    """The widget: a prompt box (read on Enter), temperature, top-k, top-p, three buttons.

    The model runs only when the prompt is entered or a button draws; moving a slider
    re-shapes the logits already computed. :attr:`text` is the text so far.
    """

    def __init__(
        self, model: nn.Module, vocab: CharTokenizer, prompt: str = "Attention ", seed: int = 0
    ) -> None:
        self.model, self.vocab, self.seed = model, vocab, seed
        self.prompt = widgets.Text(
            value=prompt, placeholder=EXAMPLE, description="prompt", continuous_update=False
        )
        self.temperature = widgets.FloatSlider(1.0, min=0.0, max=2.0, step=0.05, description="T")
        self.top_k = widgets.IntSlider(0, min=0, max=vocab.vocab_size, description="top-k (0 off)")
        self.top_p = widgets.FloatSlider(1.0, min=0.05, max=1.0, step=0.05, description="top-p")
        self.buttons = {n: widgets.Button(description=n) for n in ("next", "20 more", "reset")}
        self.shown, self.notes, self.bars = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.prompt.observe(lambda _: self.reset(), names="value")
        for slider in (self.temperature, self.top_k, self.top_p):
            slider.observe(lambda _: self._redraw(), names="value")
        self.buttons["next"].on_click(lambda _: self.more(1))
        self.buttons["20 more"].on_click(lambda _: self.more(20))
        self.buttons["reset"].on_click(lambda _: self.reset())
        self.widget = widgets.VBox([
            self.prompt, widgets.HBox([self.temperature, self.top_k, self.top_p]),
            widgets.HBox(list(self.buttons.values())), self.notes, self.shown, self.bars,
        ])  # fmt: skip
        self.widget.add_class("attnlib-playground")
        self.widget.add_class("attnlib-playground-sampler")
        self.reset()

    def stand_in(self) -> str:
        """The plain text that stands for the playground in a stored output."""
        return f"the sampler, prompt {self.prompt.value!r}"

    def _ipython_display_(self) -> None:
        show_playground(self.widget, self.stand_in())

    def _settings(self) -> tuple[float, int | None, float | None]:
        top_k = self.top_k.value or None
        return self.temperature.value, top_k, self.top_p.value if self.top_p.value < 1 else None

    def reset(self) -> None:
        """Start again from the prompt box: its text, a fresh generator, the model run once."""
        self.generator = torch.Generator().manual_seed(self.seed)
        read = read_prompt(self.prompt.value, self.vocab, self.model.config.max_len)
        self.text, self.ids, self.drawn, self.new = read.text, list(read.ids), None, 0
        self.logits = None
        if read.readable:
            self.logits = next_token_choices(self.model, self.vocab, self.ids, 1.0).logits
        self.notes.value = "<br>".join(html.escape(note, quote=False) for note in read.notes)
        self._redraw()

    def more(self, n: int) -> None:
        """Draw ``n`` characters, one model run each, and show the last step's bars."""
        if self.logits is None:
            return
        for _ in range(n):
            choices = choices_at(self.logits, self.vocab, *self._settings())
            self.drawn = draw(choices, self.generator)
            self.ids.append(self.drawn)
            self.text += self.vocab.chars[self.drawn]
            self.new += 1
            self.logits = next_token_choices(self.model, self.vocab, self.ids, 1.0).logits
        self._redraw(choices)

    def _redraw(self, choices: Choices | None = None) -> None:
        old, new = self.text[: len(self.text) - self.new], self.text[len(self.text) - self.new :]
        self.shown.value = (
            f"<pre>{html.escape(old)}<b style='color:#ff7f0e'>{html.escape(new)}</b></pre>"
        )
        if self.logits is None:
            self.bars.value = ""
            return
        if choices is None:  # a slider moved: the next character's bars, nothing drawn yet
            choices, self.drawn = choices_at(self.logits, self.vocab, *self._settings()), None
        self.bars.value = sampler_bars(choices, self.drawn)


def show_sampler(
    model: nn.Module, vocab: CharTokenizer, prompt: str = "Attention ", seed: int = 0
) -> SamplerPlayground:
    """The sampler playground for ``model`` (a char GPT) and its ``vocab``, ready to display."""
    return SamplerPlayground(model, vocab, prompt, seed)
