"""A top-level JSON array is read from the file item by item (issue 25: a TensorRT-LLM
iteration-stats array of 100 MB took 234 MB, read whole).

The oracle is the whole-text reader (:func:`records_from_text`): for generated arrays
(one item per line, all on one line, items spanning lines, embedded JSON strings, syntax
errors) read through a small chunk, the streamed records hold the same data and every
node the same position, and a broken file gives the same error.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics import json_records
from specgate.inputs.metrics.json_records import read_records, records_from_text


def _paths(node: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _paths(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out += _paths(child, (*path, index))
    return out


def _array(rng: random.Random) -> str:
    items = []
    for i in range(rng.randint(1, 40)):
        stats = {"numAcceptedTokens": rng.randint(0, 99), "numDraftTokens": 4 * (i + 1)}
        item: object = {"iter": i, "specDecodingStats": stats, "note": "é" * rng.randint(0, 3)}
        if rng.random() < 0.2:
            item = json.dumps(item)
        items.append(json.dumps(item, indent=rng.choice([None, 2])))
    sep = rng.choice([", ", ",\n", ",\n  ", ","])
    text = "[" + rng.choice(["", "\n", "\n  "]) + sep.join(items) + rng.choice(["]", "\n]\n"])
    if rng.random() < 0.15:  # a broken file: a missing comma, extra data, a cut end
        cut = rng.choice([text.replace(sep, " ", 1), text + " x", text[: len(text) // 2]])
        text = cut
    return text


def _read(records: object) -> object:
    try:
        out = []
        for record in records:  # type: ignore[attr-defined]
            spans = [tuple(record.locate(p)) for p in _paths(record.data)]
            out.append((record.data, spans))
        return out
    except InputError as exc:
        return str(exc)


def test_streamed_arrays_read_as_the_whole_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_records, "ARRAY_CHUNK", 256)
    rng = random.Random(25)
    path = tmp_path / "stats.json"
    for _ in range(80):
        text = _array(rng)
        path.write_text(text, "utf-8")
        assert _read(read_records(path, "stats.json")) == _read(
            records_from_text(text, "stats.json")
        ), text
