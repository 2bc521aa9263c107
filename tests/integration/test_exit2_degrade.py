"""Forms and values that used to stop the run (exit 2) are findings on their
deployment at their line, and the other deployment of the claims file is still
checked (issue 24: degrade, never stop; docs/engines.md#unsettled-values).

Each case's second deployment serves D 4 (serve.sh) while its claim says 6: SG301
(docs/rules.md), so the run fails through it whatever the first deployment gives.
"""

from __future__ import annotations

from pathlib import Path

from specgate.check.options import CheckOptions
from specgate.check.report import FileReport
from specgate.check.run import check_file
from specgate.core.findings import Finding

SERVE = (
    "vllm serve org/m --speculative-config "
    """'{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'\n"""
)


def _check(tmp_path: Path, first: str, files: dict[str, str]) -> FileReport:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(SERVE, "utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n"
        f"  - name: first\n{first}"
        "  - name: script\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 6,"
        " engine_config: serve.sh}\n",
        "utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None  # not exit 2: every file parses
    assert any(f.code == "SG301" for f in report.deployments[1].findings)
    return report


def _one(report: FileReport, code: str) -> Finding:
    (found,) = [f for f in report.deployments[0].findings if f.code == code]
    return found


KUBERNETES = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.0
        command: ["vllm", "serve"]
        args: ["org/m", "--speculative-config", "$(OPTS)"]
"""


def test_a_kubernetes_reference_to_no_variable_is_sg307_at_its_word(tmp_path: Path) -> None:
    # Kubernetes passes `$(OPTS)` unchanged when the container sets no OPTS ("Define a
    # Command and Arguments for a Container"; kubernetes/kubernetes
    # third_party/forked/golang/expansion/expand.go@02604f7d, MappingFuncFor): vLLM is
    # given the text `$(OPTS)` as --speculative-config and its parser refuses it (not
    # JSON), recorded from 0.19.1: at v0.10.0 a warn (docs/engines.md#refused-values).
    # The item `"$(OPTS)"` opens at line 12, column 49 (its quote; `$` at 50).
    # Contract change: this was SG314 (fail, "a way specgate cannot read"), but the
    # value is settled, the literal text, and what follows is the engine's refusal.
    report = _check(
        tmp_path,
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: k8s.yaml}\n",
        {"k8s.yaml": KUBERNETES},
    )
    found = _one(report, "SG307")
    assert (found.severity, found.file, found.line, found.column) == (
        "warn", "k8s.yaml", 12, 49,
    )
    assert "Value $(OPTS) cannot be converted" in found.message
    assert "reaches the engine as written" in found.details
    assert not [f for f in report.deployments[0].findings if f.code == "SG314"]


DECORATED = """\
import atexit
from vllm import LLM

@atexit.register
def go():
    llm = LLM(model="org/m", speculative_config={"method": "ngram"})
"""


def test_a_launcher_call_only_a_decorator_reaches_is_sg312_at_the_call(tmp_path: Path) -> None:
    # `go` runs at exit (atexit.register), a route specgate does not follow: the
    # LLM(...) call is on line 6, column 11 of the script
    report = _check(
        tmp_path,
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: serve.py}\n",
        {"serve.py": DECORATED},
    )
    found = _one(report, "SG312")
    assert (found.severity, found.file, found.line, found.column) == (
        "warn", "serve.py", 6, 11,
    )
    assert "does not read how this script starts the engine" in found.message


def test_a_script_with_no_launcher_call_is_sg312(tmp_path: Path) -> None:
    report = _check(
        tmp_path,
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: serve.py}\n",
        {"serve.py": "print('hi')\n"},
    )
    found = _one(report, "SG312")
    assert (found.severity, found.file, found.line) == ("warn", "serve.py", None)


def test_a_model_config_past_the_head_bound_is_sg315_at_its_line(tmp_path: Path) -> None:
    # 131,072 query heads is over specgate's bound of 65,536 (docs/trust.md#bounded-work);
    # `131072` starts at column 25 of line 1 of the JSON below
    report = _check(
        tmp_path,
        "    model: {name: org/m, hf_config: config.json}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4}\n",
        {"config.json": '{"num_attention_heads": 131072, "num_key_value_heads": 8}\n'},
    )
    found = _one(report, "SG315")
    assert (found.severity, found.file, found.line, found.column) == (
        "fail", "config.json", 1, 25,
    )


def test_iid_rate_metrics_over_an_unsettled_d_warn_that_no_al_is_derived(
    tmp_path: Path,
) -> None:
    # `$D` comes from the deployment's environment (SG313): iid-rate's AL
    # (1 − α^(D+1)) / (1 − α) needs D, which nothing settles, so no AL is derived
    script = (
        'vllm serve org/m --speculative-config '
        '"{\\"method\\":\\"ngram\\",\\"num_speculative_tokens\\":$D,\\"prompt_lookup_max\\":4}"\n'
    )
    report = _check(
        tmp_path,
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, engine_config: unset.sh}\n"
        "    evidence: {metrics: {format: iid-rate, alpha: 0.6}}\n",
        {"unset.sh": script},
    )
    found = _one(report, "SG101")
    # evidence.metrics's value starts at line 6, column 16 of the claims file
    assert (found.severity, found.file, found.line, found.column) == (
        "warn", "c.specgate.yaml", 6, 16,
    )
    assert "cannot be derived" in found.message
    assert _one(report, "SG313").severity == "warn"


def test_a_model_config_whose_heads_do_not_divide_is_sg315(tmp_path: Path) -> None:
    # 28 query heads over 8 KV heads is 3.5 per KV head: no grouped-query model (every
    # KV head serves the same number; transformers' repeat_kv divides H by KV); the
    # KV count `8` starts at column 52 of line 1
    report = _check(
        tmp_path,
        "    model: {name: org/m, hf_config: config.json}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4}\n",
        {"config.json": '{"num_attention_heads": 28, "num_key_value_heads": 8}\n'},
    )
    found = _one(report, "SG315")
    assert (found.severity, found.file, found.line, found.column) == (
        "fail", "config.json", 1, 52,
    )
