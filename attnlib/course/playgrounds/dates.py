"""The date playground's pure half: any typed date through notebook 09's translator.

:func:`read_date` decodes what the learner typed, greedily or with a beam, and returns
everything the playground shows: the output, the five likeliest characters at each
decoding step with their probabilities, and the cross-attention of every output
character over the source. A text the model cannot read well is not refused: its output
and its confidence are shown as they are, with a note for what had to change (an empty
text, characters outside the vocabulary, a text longer than the model's context). Spaces
at either end are dropped: none of the formats it was trained on has them.

Notebook 09.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlib._validate import require_positive_int
from attnlib.course.date_translator import DateTranslator
from attnlib.course.dates import TARGET_LENGTH

TOP = 5  # candidates shown per step


@dataclass(frozen=True, eq=False)
class DateReading:
    """What the playground shows for one typed text.

    ``steps[t]`` lists the ``(character, probability)`` of the five likeliest tokens at
    output step ``t`` (``<eos>`` spelled out), given the characters chosen before it;
    ``chosen[t]`` is the probability of the character actually written there, and
    ``confidence`` their product: the model's probability of its whole output.

    Shapes:
        cross_attention: ``(T, S)``, the last decoder layer's cross-attention averaged over
        heads: row ``t`` is output step ``t`` (the last row the step that wrote ``<eos>``),
        column ``s`` source character ``s``.
    """

    source: str
    notes: tuple[str, ...]
    output: str
    steps: list[list[tuple[str, float]]]
    chosen: list[float]
    confidence: float
    cross_attention: torch.Tensor

    @property
    def readable(self) -> bool:
        """Whether there was anything for the model to read."""
        return bool(self.source)


def _source(typed: str, translator: DateTranslator) -> tuple[str, tuple[str, ...]]:
    tokenizer = translator.tokenizer
    known = set(tokenizer.tokens[len(tokenizer.special_tokens) :])
    unknown = sorted(set(typed) - known)
    kept = "".join(ch for ch in typed if ch in known).strip()  # no format ends in a space
    room = translator.model.config.max_len - 1  # the encoder reads at most max_len tokens
    notes = []
    if not typed.strip():
        notes.append("Type a date, then press Enter.")
    if unknown:
        named = ", ".join(repr(ch) for ch in unknown)
        notes.append(f"The translator has never seen {named}: left out.")
    if len(kept) > room:
        notes.append(f"Only the first {room} characters fit the model: the rest is left out.")
        kept = kept[:room]
    return kept, tuple(notes)


@torch.no_grad()
def read_date(typed: str, translator: DateTranslator, beam_size: int = 1) -> DateReading:
    """Translate ``typed`` and collect the playground's views (greedy when ``beam_size`` is 1)."""
    if not isinstance(typed, str):
        raise TypeError(f"typed must be a str, got {type(typed).__name__}")
    require_positive_int("beam_size", beam_size)
    source, notes = _source(typed, translator)
    if not source.strip():
        return DateReading(source, notes, "", [], [], 0.0, torch.zeros(0, 0))
    tokenizer, model = translator.tokenizer, translator.model
    src = torch.tensor([tokenizer.encode(source)])  # (1, S)
    written = translator.translate([source], beam_size=beam_size)[0]
    tgt = torch.tensor([[tokenizer.bos_id, *tokenizer.encode(written)]])  # (1, T)
    targets = [*tokenizer.encode(written), tokenizer.eos_id][: TARGET_LENGTH + 1]
    memory, src_mask, _ = model.encode(src)
    logits, _, cross = model.decode(tgt, memory, src_mask)  # (1, T, V); layers × (1, H, T, S)
    probs = logits[0].float().softmax(dim=-1)  # (T, V)
    steps, chosen = [], []
    for t, target in enumerate(targets):
        top = probs[t].topk(TOP)
        steps.append(
            [
                (tokenizer.tokens[i], p)
                for i, p in zip(top.indices.tolist(), top.values.tolist(), strict=True)
            ]
        )
        chosen.append(float(probs[t, target]))
    if not written:
        notes = (*notes, "The model wrote nothing: it ended at once.")
    return DateReading(
        source=source,
        notes=notes,
        output=written,
        steps=steps,
        chosen=chosen,
        confidence=float(torch.tensor(chosen).prod()),
        cross_attention=cross[-1][0].mean(dim=0).float(),  # (T, S)
    )
