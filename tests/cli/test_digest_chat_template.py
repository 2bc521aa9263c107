"""``specgate digest --chat-template FILE`` (docs/change-gate.md#provenance-rules): the digest SG411
compares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.cli.main import main

# FIPS 180-2's test vector: SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223…
ABC = "sha256:ba7816bf8f01cfea"


def digest(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["digest", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_jinja_file_and_a_tokenizer_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("t.jinja").write_bytes(b"abc")
    Path("tokenizer_config.json").write_text(json.dumps({"chat_template": "abc"}), "utf-8")
    Path("named.json").write_text(
        json.dumps({"chat_template": [{"name": "tool_use", "template": "x"},
                                      {"name": "default", "template": "abc"}]}), "utf-8")
    code, out, _ = digest(
        ["--chat-template", "t.jinja", "--chat-template", "tokenizer_config.json",
         "--chat-template", "named.json"], capsys)
    assert code == 0
    assert out == f"t.jinja {ABC}\ntokenizer_config.json {ABC}\nnamed.json {ABC}\n"


def test_line_endings_do_not_change_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "a\r\nb" (a CRLF checkout) is "a\nb"
    monkeypatch.chdir(tmp_path)
    Path("crlf.jinja").write_bytes(b"a\r\nb")
    Path("lf.jinja").write_bytes(b"a\nb")
    _, out, _ = digest(["--chat-template", "crlf.jinja", "--chat-template", "lf.jinja"], capsys)
    first, second = (line.split()[1] for line in out.splitlines())
    assert first == second


def test_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("config.json").write_text('{"model_type": "llama"}', "utf-8")
    code, out, err = digest(["--chat-template", "config.json"], capsys)
    assert (code, out) == (2, "")
    # Contract change (issue 24): the message says what to give instead
    assert err == (
        "specgate: config.json: holds no chat_template string (the model's template may be "
        "in its own chat_template.jinja beside it): give the template's .jinja file\n"
    )
    Path("tools.json").write_text(
        json.dumps({"chat_template": [{"name": "tool_use", "template": "x"}]}), "utf-8"
    )
    code, _, err = digest(["--chat-template", "tools.json"], capsys)
    assert code == 2
    assert err == (
        "specgate: tools.json: chat_template lists named templates, none a string named "
        "'default' (the one transformers applies): give the template's own .jinja file\n"
    )
    code, _, err = digest(["--chat-template", "missing.jinja"], capsys)
    assert code == 2
    assert "missing.jinja" in err


def test_a_file_without_a_template_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 24, degrade never stop: the digest of t.jinja ("abc", FIPS 180-2) is printed
    # beside the one line for config.json, and the exit is 2
    monkeypatch.chdir(tmp_path)
    Path("config.json").write_text('{"model_type": "llama"}', "utf-8")
    Path("t.jinja").write_bytes(b"abc")
    args = ["--chat-template", "config.json", "--chat-template", "t.jinja"]
    code, out, err = digest(args, capsys)
    assert (code, out) == (2, f"t.jinja {ABC}\n")
    assert err.startswith("specgate: config.json: holds no chat_template string")
    assert err.count("\n") == 1
