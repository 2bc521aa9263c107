"""llama-server's own flags at old builds (new-user trial M1; docs/engines.md#versions).

Read in the llama.cpp vendored in the llama-cpp-python sdists (PyPI):
- 74d73dc8 (b4094, llama-cpp-python 0.3.2): ``-md``/``--model-draft`` is
  ``LLAMA_EXAMPLE_SPECULATIVE`` only (common/arg.cpp:1596-1602), ``-ngld`` too
  (:1447-1457), ``--draft`` SPECULATIVE and LOOKUP (:606-612); the parser adds an option
  only to its examples (:340-348) and throws "error: invalid argument: ARG" for any other
  word (:196-197). There is no ``--draft-max``, ``--draft-min`` or ``--draft-p-min``.
- 26a8406b (b4295, llama-cpp-python 0.3.5): ``--draft-max``/``--draft``/``--draft-n``
  (:2074), ``--draft-min`` (:2081), ``--draft-p-min`` (:2095), ``-ngld`` (:2117) and
  ``-md`` (:2129) are SERVER examples too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_config, read_engine_file
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document


def _cmd(text: str, version: str | None) -> EngineConfig:
    return read_engine_config(
        Document("cmd.txt", text), shown="cmd.txt", pointer=None, engine=None,
        engine_version=version,
    )


def _sg310(c: EngineConfig) -> dict[str, str | None]:
    return {i.field: i.severity for i in c.issues if i.code == "SG310"}


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        ("b4094", None),  # read without it: a fail
        ("b4200", "warn"),  # between b4094 (without) and b4295 (with): not known
        ("b3000", "warn"),  # below the builds read for it (b3281 had one parser for all)
    ],
)
def test_llama_server_without_model_draft(version: str, severity: str | None) -> None:
    said = _sg310(_cmd("llama-server -m t.gguf -md d.gguf\n", version))
    assert said == {"setting:-md": severity}


@pytest.mark.parametrize("version", ["b4295", None])
def test_llama_server_with_model_draft(version: str | None) -> None:
    assert _sg310(_cmd("llama-server -m t.gguf -md d.gguf -ngld 99\n", version)) == {}


def test_llama_speculative_has_model_draft_at_b4094() -> None:
    c = _cmd("llama-speculative -m t.gguf -md d.gguf --draft 8 -ngld 99\n", "b4094")
    assert _sg310(c) == {}


@pytest.mark.parametrize(
    ("flag", "severities"),
    [
        ("--draft-max 8", {"b4094": None, "b4200": "warn", "b4295": "absent"}),
        ("--draft-min 2", {"b4094": None, "b4200": "warn", "b4295": "absent"}),
        ("--draft-p-min 0.6", {"b4094": None, "b4200": "warn", "b4295": "absent"}),
        ("--draft 8", {"b4094": None, "b4200": "warn", "b4295": "absent"}),
    ],
)
def test_draft_flags_first_at_b4295(flag: str, severities: dict[str, str | None]) -> None:
    # --draft exists at b4094 (for llama-speculative and llama-lookup: server_flags);
    # the others do not exist at all before b4295 (invalid argument for every program)
    for version, severity in severities.items():
        said = _sg310(_cmd(f"llama-server -m t.gguf --model-draft d.gguf {flag}\n", version))
        said.pop("setting:--model-draft", None)  # the server's own finding at b4094/b4200
        assert list(said.values()) == ([] if severity == "absent" else [severity]), version


def test_the_trial_compose_file_fails_at_b4094(tmp_path: Path) -> None:
    # ghcr.io/ggml-org/llama.cpp:server-b4094 runs /app/llama-server (image-entrypoints.json)
    (tmp_path / "compose.yml").write_text(
        "services:\n  llama:\n    image: ghcr.io/ggml-org/llama.cpp:server-b4094\n"
        "    command: -m /m/t.gguf -md /m/d.gguf --draft-max 8 --draft-min 2\n",
        encoding="utf-8",
    )
    c = read_engine_file(tmp_path / "compose.yml", "compose.yml")
    assert c.version == "b4094"
    assert _sg310(c) == {
        "setting:-md": None,
        "setting:--draft-max": None,
        "setting:--draft-min": None,
    }


@pytest.mark.parametrize(
    ("flag", "severities"),
    [
        # -td: llama-speculative's alone at b4094 (common/arg.cpp:411-419) and b4295
        # (:1966), the server's too at f53577432 (b8942, llama-cpp-python 0.3.21, :3335)
        ("-td 4", {"b4295": None, "b6000": "warn", "b8942": "present"}),
        # -Cd: llama-speculative's alone to b8942 (:3355), the server's at 0c1e57098
        # (b11312, llama-cpp-python 0.3.36, :4002)
        ("-Cd ff", {"b8942": None, "b10000": "warn", "b11312": "present"}),
        # -Crbd: LLAMA_EXAMPLE_SPECULATIVE alone at every build read (:4056 at b11312)
        ("-Crbd 0-3", {"b4295": None, "b11312": None}),
    ],
)
def test_draft_cpu_flags_by_build(flag: str, severities: dict[str, str | None]) -> None:
    for version, severity in severities.items():
        said = _sg310(_cmd(f"llama-server -m t.gguf -md d.gguf {flag}\n", version))
        said.pop("setting:-md", None)
        expected = [] if severity == "present" else [severity]
        assert list(said.values()) == expected, (version, said)


def test_a_flag_no_server_build_read_has_warns_unpinned() -> None:
    said = _sg310(_cmd("llama-server -m t.gguf -md d.gguf -Crbd 0-3\n", None))
    assert said == {"setting:-Crbd": "warn"}
