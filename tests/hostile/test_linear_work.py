"""H4 and H5: work bounded by structure, not by a number or a shape in the checked
repository (docs/trust.md#bounded-work, "parsing is linear in the input")."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from specgate.inputs import cmdline, pointer
from specgate.inputs.pointer import MAX_POINTER_EMBEDDED

from .conftest import InProcess, with_engine


def test_an_engine_command_file_is_split_once(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine search and the reader both ask for the commands of e.txt: one split.
    (repo / "e.txt").write_text(
        "vllm serve m --speculative-config "
        '\'{"method": "eagle3", "num_speculative_tokens": 3, "model": "d"}\' '
        "--x=" + "a" * 1000 + "\n",
        "utf-8",
    )
    (repo / "c.specgate.yaml").write_text(with_engine("e.txt", drop_draft_length=True), "utf-8")
    calls = {"n": 0}
    real = cmdline._tokens

    def counting(text: str, *args: object, **kwargs: object) -> object:
        calls["n"] += 1
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cmdline, "_tokens", counting)
    cmdline._split_once.cache_clear()
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code in (0, 1), result.err
    assert calls["n"] == 1


# --- H4: a pointer through nested embedded documents ---------------------------------------

INNER = "speculative_config: {method: ngram, num_speculative_tokens: 4, prompt_lookup_max: 3}\n"


def _nested_yaml(levels: int) -> str:
    """``levels`` strings of YAML text, each in the key ``x.yaml`` of the one around it."""
    text = INNER
    for _ in range(levels):
        text = "x.yaml: |\n" + "".join("  " + line + "\n" for line in text.splitlines())
    return text


def _nested_json(levels: int) -> str:
    """``levels`` strings of JSON text, each the value of ``x`` in the one around it."""
    inner: object = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4}}
    for _ in range(levels):
        inner = {"x": json.dumps(inner)}
    return json.dumps(inner)


def _mixed(levels: int) -> str:
    """YAML text holding JSON text holding YAML text …, ``levels`` strings deep."""
    text = INNER
    for level in range(levels):
        if level % 2:
            text = "x: |\n" + "".join("  " + line + "\n" for line in text.splitlines())
        else:
            text = json.dumps({"x": text}) + "\n"
    return text


SHAPES = {"yaml": _nested_yaml, "json": _nested_json, "mixed": _mixed}


def _with_pointer(repo: Path, text: str, levels: int, key: str) -> None:
    (repo / "e.yaml").write_text(text, "utf-8")
    pointer = "/" + "/".join([key] * levels) + "/speculative_config"
    claims = with_engine(f"{{path: e.yaml, pointer: '{pointer}'}}", drop_draft_length=True).replace(
        "mechanism: eagle3", "mechanism: ngram"
    )
    (repo / "c.specgate.yaml").write_text(claims, "utf-8")


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the text of every YAML and JSON parse from here on (caches emptied)."""
    import specgate.load.yaml_loader

    seen: list[str] = []
    compose = specgate.load.yaml_loader._compose
    loads = pointer._json_container.__wrapped__

    def counting_compose(text: str, file: str, *, several: bool, dialect: str = "core") -> object:
        seen.append(text)
        return compose(text, file, several=several, dialect=dialect)  # type: ignore[arg-type]

    def counting_loads(text: str) -> object:
        seen.append(text)
        return loads(text)

    monkeypatch.setattr(specgate.load.yaml_loader, "_compose", counting_compose)
    pointer.embedded_yaml_document.cache_clear()
    pointer._json_container.cache_clear()
    monkeypatch.setattr(pointer, "_json_container", functools.lru_cache(16)(counting_loads))
    return seen


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("levels", [MAX_POINTER_EMBEDDED + 1, 40, 300])
def test_a_pointer_through_too_many_embedded_documents_is_an_input_error(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch, shape: str, levels: int
) -> None:
    if shape != "yaml" and levels > 40:
        pytest.skip("escapes double per JSON level: 40 levels is past any file size")
    # (with JSON, 14 levels stay under the 1 MiB file cap; the pointer asks for more)
    text = SHAPES[shape](levels if shape == "yaml" else min(levels, 14))
    _with_pointer(repo, text, levels, "x.yaml" if shape == "yaml" else "x")
    parses = _count_parses(monkeypatch)
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 2, result.out
    error = result.json()["files"][0]["error"]
    assert error.startswith("e.yaml: JSON pointer"), error
    assert f"specgate's limit is {MAX_POINTER_EMBEDDED}" in error
    # Bounded by structure: each embedded string is shorter than the file, and at
    # most MAX_POINTER_EMBEDDED of them are entered by the pointer (nested JSON is
    # also walked by the search, but each level is at most half the one around it).
    # 300 levels of YAML made 300 ever-larger parses: about 100 times the file.
    size = len(text)
    assert sum(map(len, parses)) <= (MAX_POINTER_EMBEDDED + 3) * size


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("levels", [1, 2, MAX_POINTER_EMBEDDED])
def test_a_pointer_within_the_limit_reads_the_config_parsing_each_string_once(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch, shape: str, levels: int
) -> None:
    _with_pointer(repo, SHAPES[shape](levels), levels, "x.yaml" if shape == "yaml" else "x")
    parses = _count_parses(monkeypatch)
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code in (0, 1), result.out
    engine = result.json()["files"][0]["deployments"][0]["inputs"]["engine"]
    assert (engine["mechanism"], engine["draft_length"]) == ("ngram", 4)
    repeated = [text[:40] for text in set(parses) if parses.count(text) > 1]
    assert repeated == []
