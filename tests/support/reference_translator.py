"""The reference date translator that notebook 09 studies, and the digests that guard it.

``python tests/support/reference_translator.py`` trains ``train_date_translator(seed=0)`` (the
notebook's recipe, in float64) and writes ``attnlib/data/date_translator.pt`` and, beside
it, ``date_translator.json`` with the run's losses and learning rates, then records both
files' SHA-256 digests in ``date_translator.REFERENCE_SHA256`` (in its source, the one place
they live). ``tests/course/test_reference_translator.py`` checks that the stored run is still the
recipe's: a fresh run must reproduce its first 100 losses (the part of training that no
machine's rounding changes), so a change to the recipe cannot leave a stale reference behind.

Two lighter commands, run in the checkout:

* ``--rehash`` records the digests of the stored files as they are, after a change made
  on purpose (``load_reference_translator`` refuses files whose digests differ);
* ``--resave [--rename PATTERN REPLACEMENT]...`` re-saves the stored weights, unchanged,
  under the parameter names the models have now, then records the digests. Each stored
  name goes through ``re.sub(PATTERN, REPLACEMENT, name)`` for every pair in turn, e.g.
  ``--rename '^(encoder\\.layers\\.\\d+)\\.norm_1\\.' '\\1.self_attention_residual.norm.'``.
  The result must load into today's model and hold exactly the same tensors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from attnlib.course import date_translator
from attnlib.formats.safetensors_file import file_sha256, verify_sha256

DATA = Path(__file__).resolve().parents[2] / "attnlib"
WEIGHTS_FILE = DATA / date_translator.REFERENCE_WEIGHTS
HISTORY_FILE = DATA / date_translator.REFERENCE_HISTORY
MODULE_FILE = Path(date_translator.__file__)
SEED = 0

# How REFERENCE_SHA256's keys are spelled in date_translator.py.
_KEYS = {
    date_translator.REFERENCE_WEIGHTS: "REFERENCE_WEIGHTS",
    date_translator.REFERENCE_HISTORY: "REFERENCE_HISTORY",
}


def _entry(name: str) -> re.Pattern[str]:
    return re.compile(rf'(\b{_KEYS[name]}:\s*")([0-9a-f]{{64}})(")')


def recorded_digests(module_file: Path = MODULE_FILE) -> dict[str, str]:
    """The digests ``module_file`` (date_translator.py) records, as its text says now."""
    text = module_file.read_text(encoding="utf-8")
    found = {name: _entry(name).search(text) for name in _KEYS}
    missing = [name for name, match in found.items() if match is None]
    if missing:
        raise ValueError(f"{module_file} records no REFERENCE_SHA256 digest for {missing}")
    return {name: match.group(2) for name, match in found.items() if match is not None}


def rehash(module_file: Path = MODULE_FILE, root: Path = DATA) -> dict[str, str]:
    """Record the digests of the stored files (under ``root``) in ``module_file``; return them.

    Raises:
        ValueError: ``module_file`` does not have exactly one entry for each file.
    """
    text = module_file.read_text(encoding="utf-8")
    digests = {}
    for name in _KEYS:
        # As load_reference_translator hashes them: the history as text (see file_sha256).
        digests[name] = file_sha256(root / name, text=name == date_translator.REFERENCE_HISTORY)
        text, count = _entry(name).subn(rf"\g<1>{digests[name]}\g<3>", text)
        if count != 1:
            raise ValueError(f"{module_file} has {count} REFERENCE_SHA256 entries for {name}")
    module_file.write_text(text, encoding="utf-8")
    return digests


def _fingerprints(state: Mapping[str, torch.Tensor]) -> list[tuple[str, tuple[int, ...], str]]:
    """Every tensor's dtype, shape and bytes, names left out: the same multiset, same weights."""
    return sorted(
        (str(t.dtype), tuple(t.shape), hashlib.sha256(_raw_bytes(t)).hexdigest())
        for t in state.values()
    )


def _raw_bytes(tensor: torch.Tensor) -> bytes:
    return tensor.detach().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes()


def resave(
    renames: Sequence[tuple[str, str]] = (), module_file: Path = MODULE_FILE, root: Path = DATA
) -> dict[str, str]:
    """Re-save the stored weights under today's parameter names, then :func:`rehash`.

    Args:
        renames: ``(pattern, replacement)`` pairs applied with :func:`re.sub`, in turn, to
            each name stored in the file.

    Raises:
        ChecksumMismatchError: the stored file is not the one ``module_file`` records.
        CheckpointError: the renamed weights do not fit today's model (names it).
        ValueError: two names became one, or the weights are not exactly the stored ones.
    """
    weights = root / date_translator.REFERENCE_WEIGHTS
    recorded = recorded_digests(module_file)[date_translator.REFERENCE_WEIGHTS]
    verify_sha256(weights, recorded, remedy="restore it from git before re-saving it")
    payload = torch.load(weights, map_location="cpu", weights_only=True)
    renamed = {}
    for name, tensor in payload["state_dict"].items():
        for pattern, replacement in renames:
            name = re.sub(pattern, replacement, name)
        renamed[name] = tensor
    if len(renamed) != len(payload["state_dict"]):
        raise ValueError("the renames give two stored tensors the same name")
    with tempfile.TemporaryDirectory() as folder:
        staged = Path(folder) / "renamed.pt"
        torch.save({**payload, "state_dict": renamed}, staged)
        translator = date_translator.DateTranslator.load(staged)
    if _fingerprints(translator.model.state_dict()) != _fingerprints(payload["state_dict"]):
        raise ValueError("the re-saved model's tensors are not exactly the stored ones")
    translator.save(weights)
    return rehash(module_file, root)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--rehash", action="store_true", help="record the files' digests")
    group.add_argument("--resave", action="store_true", help="re-save under today's names")
    parser.add_argument(
        "--rename", nargs=2, action="append", default=[], metavar=("PATTERN", "REPLACEMENT")
    )
    args = parser.parse_args(argv)
    if args.rename and not args.resave:
        parser.error("--rename goes with --resave")
    if args.rehash:
        digests = rehash()
    elif args.resave:
        digests = resave([tuple(pair) for pair in args.rename])
    else:
        translator = date_translator.train_date_translator(seed=SEED)
        history = translator.history
        assert history is not None
        translator.save(WEIGHTS_FILE)
        record = {
            "recipe": f"attnlib.course.date_translator.train_date_translator(seed={SEED})",
            "torch": torch.__version__,
            "losses": history.losses,
            "learning_rates": history.learning_rates,
        }
        HISTORY_FILE.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE} and {HISTORY_FILE} ({len(history.losses)} steps)")
        digests = rehash()
    for name, digest in digests.items():
        print(f"recorded {name}: {digest} in {MODULE_FILE}")


if __name__ == "__main__":
    main()
