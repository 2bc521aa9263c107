"""specgate.model.reads: which deployments reference files, and the reads a run shares."""

from __future__ import annotations

import pytest

from specgate.model.reads import once, references_files, shared_reads


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, False),
        ({"model": {"name": "m", "query_heads": 32}, "evidence": {"accept_length": 2.4}}, False),
        ({"speculation": {"engine_config": "serve.yaml"}}, True),
        ({"speculation": {"draft_hf_config": "draft/config.json"}}, True),
        ({"model": {"hf_config": "config.json"}}, True),
        ({"evidence": {"metrics": {"path": "m.prom"}}}, True),
        # a block that is not a mapping holds no reference (the schema reports it)
        ({"model": "config.json", "speculation": ["engine_config"]}, False),
    ],
)
def test_references_files(raw: dict[str, object], expected: bool) -> None:
    assert references_files(raw) is expected


def test_shared_reads_read_each_key_once_inside_and_every_time_outside() -> None:
    calls: list[str] = []

    def read() -> int:
        calls.append("read")
        return len(calls)

    assert (once(("k",), read), once(("k",), read)) == (1, 2)
    with shared_reads():
        assert (once(("k",), read), once(("k",), read)) == (3, 3)
        with shared_reads():  # a nested block shares the outer one's reads
            assert once(("k",), read) == 3
    assert once(("k",), read) == 4
