"""Next actions people act on (docs/reports.md#next-actions, issue 17): they name where a value
lives (the serving config when D is read from it) and never ask for what the file already records
("record evidence.measured_speedup" when it is recorded)."""

from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file
from specgate.rules.catalogue import REGISTRY
from specgate.rules.docs import BASE_PREFIX, split_example

ROOT = Path(__file__).resolve().parents[2]

SERVING = """\
model: meta-llama/Llama-3.1-70B-Instruct
speculative_config:
  method: eagle3
  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-70B
  num_speculative_tokens: 20
"""
# G 8, D 20: G·(1 + D) = 168 rows fill 2 tiles of 128; D* = floor(128/8) − 1 = 15,
# the tile-aligned D = floor(2·128/8) − 1 = 31: SG201 (warn) asks to change D.
CLAIMS = """\
version: 1
deployments:
  - name: d
    model: {{query_heads_per_kv: 8}}
    workload: {{attention_dominated: true}}
    speculation:
      enabled: true
      draft_depth_ratio: 0.05
      engine_config: serving/vllm.yaml{stated}
    evidence: {{accept_length: 3, cache_coherence_eval: true}}
"""


def sg201_action(tmp_path: Path, stated: str) -> str:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "vllm.yaml").write_text(SERVING, "utf-8")
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(CLAIMS.format(stated=stated), "utf-8")
    (dep,) = check_file(claims, "c.specgate.yaml", CheckOptions()).deployments
    assert "SG201" in {f.code for f in dep.findings}
    return next(a for a in dep.next_actions if "tile-aligned" in a)


def test_d_read_from_the_serving_config_is_changed_there(tmp_path: Path) -> None:
    # num_speculative_tokens is on line 5 of serving/vllm.yaml
    assert sg201_action(tmp_path, "") == (
        "Set D in serving/vllm.yaml (line 5) to D* = 15 or to the tile-aligned D = 31, "
        "and re-measure AL there."
    )


def test_d_stated_in_both_files_is_changed_in_both(tmp_path: Path) -> None:
    action = sg201_action(tmp_path, "\n      draft_length: 20")
    assert action.startswith(
        "Set D in serving/vllm.yaml (line 5) and speculation.draft_length to D* = 15"
    )


def test_d_stated_only_in_the_claims_file_keeps_the_key(
    check_text: Callable[..., FileReport],
) -> None:
    text = CLAIMS.format(stated="").replace(
        "      engine_config: serving/vllm.yaml", "      draft_length: 20"
    )
    (dep,) = check_text(text).deployments
    assert any(a.startswith("Set speculation.draft_length to D* = 15") for a in dep.next_actions)


# --- never ask for what the file records -------------------------------------------------

_KEY = (
    r"(?P<key>(?:speculation|model|evidence|workload|claims|policy|hardware)"
    r"\.[a-z_]+(?:\.[a-z_]+)?)"
)
#: "record X", "record it as X", "give X", "add X"; "set X" unless "set X to …" / "set X: …"
#: (changing a recorded value is fine, asking for it is not)
_ASKS = (
    re.compile(r"\b(?:record|add|give|state)\s+(?:it as\s+)?" + _KEY),
    re.compile(r"\b[Ss]et\s+" + _KEY + r"(?!\s+to\b|:)"),
    re.compile(r"\b[Ss]et\s+[a-z_.]+ and " + _KEY + r"(?!\s+to\b|:)"),
)


def _present(raw: Any, key: str) -> bool:
    for part in key.split("."):
        if not isinstance(raw, dict) or part not in raw:
            return False
        raw = raw[part]
    return True


def asked_for_recorded(claims: Path) -> Iterator[str]:
    report = check_file(claims, claims.name, CheckOptions())
    if report.error is not None:
        return
    data = yaml.safe_load(claims.read_text("utf-8"))
    for index, dep in enumerate(report.deployments):
        raw = data["deployments"][index]
        for action in dep.next_actions:
            for pattern in _ASKS:
                for match in pattern.finditer(action):
                    if _present(raw, match.group("key")):
                        yield f"{dep.name}: {match.group('key')} is recorded: {action}"


def _rule_examples() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    for code, rule in sorted(REGISTRY.items()):
        for kind, text in (("fail", rule.fail_example), ("pass", rule.pass_example)):
            if text:
                files = [(n, c) for n, c in split_example(text) if not n.startswith(BASE_PREFIX)]
                yield f"{code}-{kind}", files


@pytest.mark.parametrize(("name", "files"), list(_rule_examples()))
def test_rule_examples_ask_for_nothing_recorded(
    name: str, files: list[tuple[str, str]], tmp_path: Path
) -> None:
    for file, content in files:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(content, "utf-8")
    assert list(asked_for_recorded(tmp_path / files[0][0])) == []


def test_shipped_examples_ask_for_nothing_recorded() -> None:
    found = [
        problem
        for claims in sorted((ROOT / "examples").rglob("*.specgate.yaml"))
        for problem in asked_for_recorded(claims)
    ]
    assert found == []


def _grid() -> Iterator[str]:
    """Deployments with and without each value the actions mention: ρ, the measured
    speedup, the concurrency, the hardware, the policy floor, cache-coherence evidence."""
    choices = itertools.product(
        ("", "      draft_depth_ratio: 0.1\n"),
        ("", "      measured_speedup: 1.05\n"),
        ("", "      concurrency: 64\n", "      latency_region: throughput\n"),
        ("", "    hardware: {gpu: h100-sxm}\n", "    hardware: {peak_tflops: 989}\n"),
        ("", "    policy: {min_accept_length: 2.5}\n"),
        ("", "      cache_coherence_eval: true\n"),
    )
    for rho, measured, workload, hardware, policy, coherence in choices:
        yield (
            "version: 1\ndeployments:\n  - name: g\n"
            "    speculation:\n      enabled: true\n      mechanism: draft_model\n"
            f"      draft_length: 5\n{rho}"
            f"    workload:\n      name: chat\n{workload}"
            f"    evidence:\n      accept_length: 1.6\n{measured}{coherence}"
            "    claims: {speedup: 1.3}\n"
            f"{hardware}{policy}"
        )


def test_generated_deployments_ask_for_nothing_recorded() -> None:
    found: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        claims = Path(folder) / "g.specgate.yaml"
        for text in _grid():
            claims.write_text(text, "utf-8")
            found += [f"{p}\n{text}" for p in asked_for_recorded(claims)]
    assert found == [], found[:3]


def test_sg204_with_a_measured_speedup_asks_only_for_rho(
    check_text: Callable[..., FileReport],
) -> None:
    # the v3-trust-unpinned-llamacpp-flags deployment: ρ derived from 1.45x and AL 2.6;
    # a claim of 1.6x over the measured 1.45x (SG107; 1.55 … 1.65 is no rounding of 1.45)
    # makes it fail, so actions are listed
    (dep,) = check_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    speculation: {enabled: true, mechanism: draft_model, draft_length: 8}\n"
        "    evidence: {accept_length: 2.6, cache_coherence_eval: true, measured_speedup: 1.45}\n"
        "    claims: {speedup: 1.6}\n"
    ).deployments
    (action,) = [a for a in dep.next_actions if "Measure ρ" in a]
    assert action == (
        "Measure ρ (draft time per pass / target step time) and record it as "
        "speculation.draft_depth_ratio (the ρ used is derived from the measured speedup)."
    )


def test_sg207_asks_only_for_the_missing_half(check_text: Callable[..., FileReport]) -> None:
    # concurrency 64 stated, no hardware: β = 1 assumed (SG207); the action asks for
    # hardware only. A claim of 9x over AL 2.4 (SG104) makes the deployment fail.
    (dep,) = check_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    speculation: {enabled: true, mechanism: eagle3, draft_length: 3,"
        " draft_depth_ratio: 0.05}\n"
        "    workload: {concurrency: 64}\n"
        "    evidence: {accept_length: 2.4, cache_coherence_eval: true}\n"
        "    claims: {speedup: 9}\n"
    ).deployments
    (action,) = [a for a in dep.next_actions if "β" in a]
    assert action.startswith("Set hardware (gpu: one of the shipped table")
    assert "workload.concurrency" not in action


# --- SG207: a note about prefill asks for nothing (review #13) -----------------------------

PREFILL = """\
version: 1
deployments:
  - name: chat-8b
    model: {model}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    workload: {{concurrency: 32, context_length: 2000}}
    hardware: {{gpu: h100-sxm}}
    evidence: {{accept_length: 2.7}}
"""
# Llama-3.1-8B's shapes; no cache_coherence_eval, so SG105 (warn) makes the deployment
# actionable and its next actions are listed.
LLAMA_8B = "{parameters_b: 8.03, layers: 32, query_heads: 32, kv_heads: 8, head_dim: 128}"


def test_sg207_prefill_alone_is_a_note_without_a_next_action(
    check_text: Callable[..., FileReport],
) -> None:
    (dep,) = check_text(PREFILL.format(model=LLAMA_8B)).deployments
    (note,) = [f for f in dep.findings if f.code == "SG207"]
    # The finding stays (JSON and text keep it): only prefill is left out.
    assert note.severity == "note"
    assert note.message.endswith("leaves out prefill (workload.prefill_tokens_per_step)")
    assert dep.status == "actionable"
    assert not any("prefill" in a or "verify_cost_ratio" in a for a in dep.next_actions)
    assert any("cache_coherence_eval" in a for a in dep.next_actions)  # SG105's stays


def test_sg207_asks_for_the_other_terms_but_not_for_prefill(
    check_text: Callable[..., FileReport],
) -> None:
    # No model size: the KV cache of a stated context cannot be priced ("model size",
    # model.parameters_b or model.hf_config) and prefill is left out too.
    (dep,) = check_text(PREFILL.format(model="{name: m}")).deployments
    (note,) = [f for f in dep.findings if f.code == "SG207"]
    assert "model size (model.parameters_b or model.hf_config)" in note.message
    assert "prefill (workload.prefill_tokens_per_step)" in note.message
    (action,) = [a for a in dep.next_actions if "verify_cost_ratio" in a]
    assert action == (
        "Give model.parameters_b or model.hf_config, or measure β at the served concurrency "
        "as evidence.verify_cost_ratio."
    )


MEASURE = (
    "Measure ρ (draft time per pass / target step time) and record it as "
    "speculation.draft_depth_ratio, or record evidence.measured_speedup at the served "
    "concurrency"
)


def test_one_instruction_is_said_once_per_deployment(
    check_text: Callable[..., FileReport],
) -> None:
    # new-user trial 2026-12-02, defect 7. A draft model (typical ρ 0.15), D 5, β 1:
    # "a": AL 3, claim 2.5 > 3 / (1 + 0.15·5) = 1.7143: SG108 (warn) and SG204 (note);
    # SG204's "Measure ρ …" is the first clause of SG108's: said once.
    # "b": AL 1.6 < min(2, 1 + 5/2) = 2: SG110 too, claim 1.3 > 1.6 / 1.75 = 0.9143:
    # SG110's measuring clause is SG108's; the rest of SG110's action stays.
    body = (
        "    speculation: {enabled: true, mechanism: draft_model, draft_length: 5}\n"
        "    evidence: {accept_length: %s, cache_coherence_eval: true}\n"
        "    claims: {speedup: %s}\n"
    )
    a, b = check_text(
        "version: 1\ndeployments:\n  - name: a\n" + body % (3, 2.5)
        + "  - name: b\n" + body % (1.6, 1.3)
    ).deployments
    assert {f.code for f in a.findings} == {"SG108", "SG204"}
    assert a.next_actions == (f"{MEASURE}, or lower claims.speedup to 1.7143.",)
    assert {f.code for f in b.findings} == {"SG108", "SG110", "SG204"}
    assert b.next_actions == (
        f"{MEASURE}, or lower claims.speedup to 0.9143.",
        "Improve the drafter's match to the traffic, or set policy.min_accept_length to the "
        "floor this mechanism should keep.",
    )
    # SG204 alone (no claim): its action is the clause itself
    (c,) = check_text(
        "version: 1\ndeployments:\n  - name: c\n"
        "    speculation: {enabled: true, mechanism: draft_model, draft_length: 5}\n"
        "    evidence: {accept_length: 3, cache_coherence_eval: false}\n"
    ).deployments
    assert c.next_actions[-1] == f"{MEASURE}."


def test_no_deployment_repeats_a_clause() -> None:
    # the kind of defect 7: over the generated grid, no clause of a next action is said
    # word for word by another of the same deployment
    found: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        claims = Path(folder) / "g.specgate.yaml"
        for text in _grid():
            claims.write_text(text, "utf-8")
            for dep in check_file(claims, claims.name, CheckOptions()).deployments:
                for i, action in enumerate(dep.next_actions):
                    others = [a for j, a in enumerate(dep.next_actions) if j != i]
                    for clause in action.removesuffix(".").split("; "):
                        tail = clause[:1].lower() + clause[1:]
                        if any(clause in o or tail in o for o in others):
                            found.append(f"{clause!r} twice in {dep.next_actions}")
    assert found == [], found[:3]
