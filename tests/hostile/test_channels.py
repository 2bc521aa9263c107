"""No output line on any channel can begin a workflow command unless it is one of ours.

Hostile case 01 (docs/trust.md#every-channel-is-escaped): a YAML tag holding CR, a JSON pointer
holding CR and a file name holding LF put ``::error file=evil.py`` lines on stderr. The kind is
"text from the repository reaches a channel unescaped"; it is tried here through every
place such text can enter (tags, pointers, file names, names, values quoted in messages,
unknown keys, configuration keys, referenced paths) and every channel (stdout and stderr
of every format). A line counts as a command the way the runner reads it
(tests/support/runner_parser.py, a copy of ``ActionCommand.TryParseV2``), plus the
legacy ``##[`` form, which the runner finds anywhere in a line (``ActionCommand.TryParse``,
``IndexOf``; hostile case v3-01): no ``##[`` from the repository reaches any line at all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.runner_parser import ParsedCommand, dotnet_trim_start, parse_output

from .conftest import BASE, FORMATS, InProcess, Result, with_engine

BREAKS = ["\r", "\n", "\r\n", "\u2028", "\x85"]
ATTACKS = [
    "::error file=evil.py,line=1::INJECTED",
    "##[error]INJECTED",
    "::add-mask::x",
    "::stop-commands::tok",
]


def assert_only_ours(result: Result, fmt: str) -> None:
    """Every command on stdout is one of our annotations (github format only); stderr
    and the other formats hold none at all."""
    for channel, text in (("stdout", result.out), ("stderr", result.err)):
        assert "##[" not in text, (channel, fmt, text)
        for item in parse_output(text, legacy=True):
            if isinstance(item, str):
                continue
            assert isinstance(item, ParsedCommand)
            assert channel == "stdout" and fmt == "github", (channel, fmt, item)
            assert item.command in ("error", "warning", "notice"), item
            assert item.properties.get("title", "").startswith("specgate"), item
            assert item.properties.get("file") != "evil.py", item
    assert "INJECTED" not in "".join(
        line
        for line in re.split(r"\r\n|\r|\n", result.out + result.err)
        if dotnet_trim_start(line).startswith(("::", "##["))
        and not dotnet_trim_start(line).startswith(
            ("::error title=specgate", "::warning title=specgate", "::notice title=specgate")
        )
    )


def _every_format(sg: InProcess, repo: Path, args: list[str]) -> None:
    for fmt in FORMATS:
        result = sg(["check", "--format", fmt, *args], repo)
        assert result.code in (0, 1, 2), (fmt, result.err)
        assert_only_ours(result, fmt)


def _yaml_double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (escapes for every break)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\r", "\\r")
        .replace("\n", "\\n")
        .replace("\u2028", "\\L")
        .replace("\x85", "\\N")
    )
    return f'"{escaped}"'


@pytest.mark.parametrize("brk", BREAKS)
@pytest.mark.parametrize("attack", ATTACKS)
def test_yaml_tag_with_a_line_break(sg: InProcess, repo: Path, brk: str, attack: str) -> None:
    # A verbatim tag keeps %-escapes: %0D / %0A decode to CR / LF in the tag's text.
    encoded = brk.encode("utf-8").hex()
    escape = "".join(f"%{encoded[i : i + 2].upper()}" for i in range(0, len(encoded), 2))
    tag = f"!<x{escape}{attack.replace(' ', '%20')}>"
    (repo / "c.specgate.yaml").write_text(f"version: 1\ndeployments: {tag} []\n", "utf-8")
    _every_format(sg, repo, ["c.specgate.yaml"])


@pytest.mark.parametrize("brk", BREAKS)
def test_json_pointer_with_a_line_break(sg: InProcess, repo: Path, brk: str) -> None:
    (repo / "e.yaml").write_text("a: xx\n", "utf-8")
    pointer = _yaml_double_quoted(f"/a/b{brk}{ATTACKS[0]}")
    (repo / "p.specgate.yaml").write_text(
        with_engine(f"{{path: e.yaml, pointer: {pointer}}}"), "utf-8"
    )
    _every_format(sg, repo, ["p.specgate.yaml"])


@pytest.mark.parametrize("brk", ["\n", "\r"])
@pytest.mark.parametrize("attack", ATTACKS[:2])
def test_file_name_with_a_line_break(sg: InProcess, repo: Path, brk: str, attack: str) -> None:
    name = f"x{brk}{attack.replace('/', '_')}{brk}.specgate.yaml"
    (repo / name).write_text("[\n", "utf-8")  # a syntax error: the name reaches stderr
    (repo / "ok.specgate.yaml").write_text(BASE, "utf-8")
    _every_format(sg, repo, [name, "ok.specgate.yaml"])
    _every_format(sg, repo, ["."])  # found by the folder search too


@pytest.mark.parametrize("attack", ATTACKS[:2])
def test_file_name_that_starts_a_command(sg: InProcess, repo: Path, attack: str) -> None:
    name = attack.replace("/", "_") + ".specgate.yaml"
    (repo / name).write_text(BASE.replace("accept_length: 2.4", "accept_length: 1.2"), "utf-8")
    _every_format(sg, repo, ["."])
    text = sg(["check", "."], repo)
    assert text.code == 1
    # A name starting ``::`` gets ``./`` in front; ``##[`` is escaped where it stands.
    start = "./" + name[:5] if attack.startswith("::") else "##\\[error]"
    assert any(line.startswith(start) for line in text.out.splitlines())


@pytest.mark.parametrize("brk", BREAKS)
@pytest.mark.parametrize(
    "where",
    ["name", "mechanism", "unknown key", "engine_config", "workload"],
)
def test_values_quoted_in_messages(sg: InProcess, repo: Path, brk: str, where: str) -> None:
    payload = _yaml_double_quoted(f"x{brk}{ATTACKS[0]}")
    if where == "name":
        text = BASE.replace("  - name: dep", f"  - name: {payload}")
    elif where == "mechanism":
        text = BASE.replace("mechanism: eagle3", f"mechanism: {payload}")
    elif where == "unknown key":
        text = BASE.replace("    evidence:", f"    {payload}: 1\n    evidence:")
    elif where == "engine_config":
        text = with_engine(payload)
    else:
        text = BASE.replace("    evidence:", f"    workload: {{name: {payload}}}\n    evidence:")
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    _every_format(sg, repo, ["c.specgate.yaml"])


@pytest.mark.parametrize("brk", ["\\r", "\\n"])
def test_configuration_key_with_a_line_break(sg: InProcess, repo: Path, brk: str) -> None:
    (repo / "pyproject.toml").write_text(
        f'[tool.specgate]\n"fail{brk}::error file=evil.py::INJECTED" = 1\n', "utf-8"
    )
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    _every_format(sg, repo, ["c.specgate.yaml"])


def test_internal_error_text_is_escaped(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever an unexpected exception says (it may quote file content) is one
    # escaped line on stderr, exit 3.
    import specgate.check.run

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("bad\r::error file=evil.py::INJECTED\n##[error]INJECTED")

    monkeypatch.setattr(specgate.check.run, "check_files", boom)
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    for fmt in FORMATS:
        result = sg(["check", "--format", fmt, "c.specgate.yaml"], repo)
        assert result.code == 3
        assert result.err.count("\n") == 1 and result.err.startswith("specgate: internal error")
        assert_only_ours(result, fmt)


def test_usage_errors_are_escaped(sg: InProcess, repo: Path) -> None:
    for fmt in FORMATS:
        result = sg(["check", "--format", fmt, "missing\r::error file=evil.py::INJECTED"], repo)
        assert result.code == 2
        assert_only_ours(result, fmt)


_YAML_ESCAPES = {"\x1b": "\\e", "\u2028": "\\L", "\x85": "\\N", "\x07": "\\a"}


def _yaml_quoted(text: str) -> str:
    """``text`` as a double-quoted YAML scalar body (control characters as YAML escapes)."""
    return "".join(_YAML_ESCAPES.get(ch, ch) for ch in text)


@pytest.mark.parametrize("raw", ["\x1b", "\u2028", "\x85", "\x07"])
def test_annotations_show_control_characters_as_escapes(
    sg: InProcess, repo: Path, raw: str
) -> None:
    # Hostile finding H3: a metrics label value (then an input error) carried ESC, U+2028 and NEL
    # raw into the Actions log through the github format, while the text format escaped
    # them. Every annotation now shows them as the text format does (visible()).
    from specgate.reporters.safe_text import visible

    (repo / "m.prom").write_text(
        'vllm:spec_decode_num_drafts_total{model_name="b"} 100\n', "utf-8"
    )
    label = _yaml_quoted(f"q{raw}RED")
    bad = BASE.replace(
        "      accept_length: 2.4\n",
        "      metrics:\n        format: vllm-prometheus\n        path: m.prom\n"
        f'        labels: {{model_name: "{label}"}}\n',
    )
    (repo / "e.specgate.yaml").write_text(bad, "utf-8")
    result = sg(["check", "--format", "github", "e.specgate.yaml"], repo)
    # Contract change (issue 24): labels that select no series are SG316 (warn) at the
    # scrape's line, not an input error of the run; its annotation is escaped the same way
    assert result.code != 2
    assert "::warning title=specgate (SG316)" in result.out
    assert raw not in result.out
    assert f"q{visible(raw)}RED" in result.out


LEGACY = "x##[stop-commands]tok"


@pytest.mark.parametrize(
    "where",
    ["name", "mechanism", "unknown key", "engine_config", "workload", "metrics path", "tag"],
)
def test_legacy_commands_mid_line_are_escaped_everywhere(
    sg: InProcess, repo: Path, where: str
) -> None:
    # Hostile case v3-01: the runner reads ``##[cmd]`` anywhere in a line (legacy
    # ActionCommand.TryParse, IndexOf); repository text holding it reached stderr and the
    # text format mid-line. Every channel of every format now holds no ``##[`` at all,
    # and the job summary none either.
    payload = _yaml_double_quoted(LEGACY)
    texts = {
        "name": BASE.replace("  - name: dep", f"  - name: {payload}"),
        "mechanism": BASE.replace("mechanism: eagle3", f"mechanism: {payload}"),
        "unknown key": BASE.replace("    evidence:", f"    {payload}: 1\n    evidence:"),
        "engine_config": with_engine(payload),
        "workload": BASE.replace(
            "    evidence:", f"    workload: {{name: {payload}}}\n    evidence:"
        ),
        "metrics path": BASE.replace(
            "      accept_length: 2.4\n", f"      metrics: {{format: vllm-log, path: {payload}}}\n"
        ),
        "tag": BASE.replace("deployments:", "deployments: !<x##[stop-commands]tok>"),
    }
    (repo / "c.specgate.yaml").write_text(texts[where], "utf-8")
    summary = repo / "sum.md"
    _every_format(sg, repo, ["c.specgate.yaml"])
    result = sg(
        ["check", "--format", "github", "--summary", str(summary), "c.specgate.yaml"], repo
    )
    assert "##[" not in result.out + result.err
    assert "##[" not in summary.read_text("utf-8")


def test_a_file_name_holding_a_legacy_command(sg: InProcess, repo: Path) -> None:
    # The name reaches text lines, annotations (named in the message: file= would have
    # to be escaped and name no file) and the JSON paths (``\u005b``, read back as ``[``).
    name = "a##[stop-commands]tok.specgate.yaml"
    (repo / name).write_text(BASE.replace("accept_length: 2.4", "accept_length: 1.2"), "utf-8")
    _every_format(sg, repo, ["."])
    report = sg(["check", "--format", "json", "."], repo)
    assert [f["path"] for f in report.json()["files"]] == [name]
    github = sg(["check", "--format", "github", "."], repo)
    commands = [c for c in parse_output(github.out) if isinstance(c, ParsedCommand)]
    assert commands and all("file" not in c.properties for c in commands)
    assert any("a##\\[stop-commands]tok" in c.message for c in commands)
