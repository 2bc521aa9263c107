"""The metrics formats users see — the claims schema's ``metrics.format`` enum and
``specgate measure``'s choices — are ``specgate.inputs.metrics.spec.FORMATS`` (a new
format missing from one fails here, not as SG001 for users)."""

from __future__ import annotations

import json

from specgate.core.data import read_data
from specgate.inputs.metrics.spec import FILE_FORMATS, FORMATS


def _format_enums(node: object, found: list[list[str]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "format" and isinstance(value, dict) and "enum" in value:
                found.append(value["enum"])
            _format_enums(value, found)
    elif isinstance(node, list):
        for item in node:
            _format_enums(item, found)


def test_claims_schema_format_enum_is_formats() -> None:
    found: list[list[str]] = []
    _format_enums(json.loads(read_data("claims-v1.schema.json")), found)
    assert found == [list(FORMATS)]


def test_measure_choices_are_the_file_formats() -> None:
    from specgate.cli.measure import _METRICS_FILE_FORMATS

    assert _METRICS_FILE_FORMATS == FILE_FORMATS


def test_every_format_has_one_reader() -> None:
    from specgate.inputs.metrics import read

    readers = [
        *read._TEXT_READERS,
        *read._RECORD_READERS,
        *read._INLINE_READERS,
        "vllm-prometheus",  # read by read_prometheus (with an optional baseline scrape)
        "vllm-log",  # read by read_vllm_log
    ]
    assert sorted(readers) == sorted(FORMATS)
    assert len(set(readers)) == len(readers)
