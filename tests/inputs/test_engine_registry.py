"""Every list of engines a user sees is the registry's (inputs/engines/registry.py):
the claims schema's ``engine`` enums, the engine-knowledge schema's, the typed
vocabulary, one data file per engine, README's engine table. A new engine that is
missing from one of them fails here, not as SG001 for users."""

from __future__ import annotations

import json
import re
from pathlib import Path

from specgate.core.data import read_data
from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.engines.registry import ENGINES
from specgate.inputs.engines.unread import launchers

README = Path(__file__).resolve().parents[2] / "README.md"


def _enums(node: object, found: list[list[str]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "engine" and isinstance(value, dict) and "enum" in value:
                found.append(value["enum"])
            _enums(value, found)
    elif isinstance(node, list):
        for item in node:
            _enums(item, found)


def test_vocabulary_is_the_registry() -> None:
    assert list(ENGINE_NAMES) == list(ENGINES)


def test_claims_schema_engine_enums_are_the_registry() -> None:
    found: list[list[str]] = []
    _enums(json.loads(read_data("claims-v1.schema.json")), found)
    assert len(found) == 2  # speculation.engine and provenance.engine
    assert all(enum == list(ENGINES) for enum in found), found


def test_knowledge_schema_engine_enum_is_the_registry() -> None:
    found: list[list[str]] = []
    _enums(json.loads(read_data("engines/engine-knowledge.schema.json")), found)
    assert found == [list(ENGINES)]


def test_one_data_file_per_engine() -> None:
    for name, engine in ENGINES.items():
        assert engine.name == name
        data = json.loads(read_data(f"engines/{engine.data_file}"))
        assert data["engine"] == name


def test_no_registered_program_is_an_unread_launcher() -> None:
    read = {p for engine in ENGINES.values() for p in engine.programs}
    for launcher in launchers():
        assert not (launcher.programs | launcher.modules) & read, launcher.engine


def test_readme_engine_table_is_the_registry() -> None:
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- engines:start -->", 1)[1].split("<!-- engines:end -->", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    names = [re.match(r"\| `([a-z]+)`", row).group(1) for row in rows]  # type: ignore[union-attr]
    assert names == list(ENGINES)
    for row, engine in zip(rows, ENGINES.values(), strict=True):
        for program in engine.programs:
            assert f"`{program}`" in row, (engine.name, program)
        assert f"`{engine.data_file}`" in row


def test_readme_claims_example_lists_the_engines() -> None:
    text = README.read_text(encoding="utf-8")
    assert f"# {' | '.join(ENGINES)} (else detected)" in text


def test_starter_claims_lists_the_engines() -> None:
    text = read_data("starter-claims.yaml")
    assert f"# {' | '.join(ENGINES)} (else detected)" in text


def test_unread_messages_name_every_registered_engine(tmp_path: Path) -> None:
    import pytest

    from specgate.core.errors import InputError
    from specgate.inputs.engines import read_engine_file
    from specgate.inputs.knowledge import knowledge

    (tmp_path / "o.sh").write_text("ollama serve\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_engine_file(tmp_path / "o.sh", "o.sh")
    names = [knowledge(name).display_name for name in ENGINES]
    assert f"(it reads {', '.join(names[:-1])} and {names[-1]} configurations)" in str(
        info.value.reason
    )
