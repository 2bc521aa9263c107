"""Reaching a reading bound is a one-line input error naming file:line (exit 2), never
a different reading (hostile review defect 2 and its kind).

The review's script spent the shell-expansion budget on padding, so a later
``$EXTRA`` holding ``--speculative-config=…D 12…`` stayed as written and specgate
judged D = 3 while the shell runs D = 12. The same kind: 256 padding keys in a model
config hid the ``block_size`` an engine check reads; decoy requirement files past the
eighth hid the real pin; records nested past 64 lists were skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.core.errors import LimitReached
from specgate.core.limits import EXPANSION_ALLOWANCE
from specgate.inputs.cmdline import split_commands

from .conftest import InProcess

CLAIMS = """\
version: 1
deployments:
  - name: d1
    model: {{name: x, query_heads: 64, kv_heads: 8, parameters_b: 70}}
    speculation:
      enabled: true
      mechanism: eagle3
      draft_depth_ratio: 0.05
      engine: vllm
      engine_config: {config}
    workload: {{name: chat}}
    evidence: {{accept_length: 2.9, cache_coherence_eval: true}}
    claims: {{speedup: 2.5}}
"""
SPEC = (
    '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",'
    '"num_speculative_tokens":NUM}'
)


def _script(pad: int) -> str:
    """The review's shape: EXTRA holds D = 12, a pad variable of ``pad`` characters is
    echoed twice, then the command names D = 3 and $EXTRA (vLLM keeps the last)."""
    extra = "--speculative-config=" + SPEC.replace("NUM", "12")
    return (
        f"EXTRA='{extra}'\n"
        f"P={'x' * pad}\n"
        "echo $P $P\n"
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '"
        + SPEC.replace("NUM", "3")
        + "' $EXTRA\n"
    )


@pytest.mark.parametrize("left", [0, 10, 100])
def test_a_spent_expansion_budget_is_an_input_error_at_its_line(
    sg: InProcess, repo: Path, left: int
) -> None:
    # budget = file length + 64 KiB = (rest + L) + 65,536; the echo spends 2·L, leaving
    # rest + 65,536 − L = `left` characters, fewer than $EXTRA's 113: so L = rest +
    # 65,536 − left. Before: $EXTRA stayed as written and D = 3 was judged (exit 0).
    rest = len(_script(0))
    script = _script(rest + EXPANSION_ALLOWANCE - left)
    assert len(script) + EXPANSION_ALLOWANCE - 2 * (rest + EXPANSION_ALLOWANCE - left) == left
    (repo / "serve.sh").write_text(script, "utf-8")
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(config="serve.sh"), "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code == 2, (result.out, result.err)
    (line,) = [x for x in result.out.splitlines() if x.startswith("specgate: serve.sh")]
    assert line.startswith("specgate: serve.sh:4: shell-variable expansion passes its budget"), line
    # the control: a pad the budget affords reads D = 12 and fails SG104 (exit 1)
    (repo / "serve.sh").write_text(_script(1000), "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code == 1 and "0.05·12" in result.out, result.out


def test_the_control_reads_d_12() -> None:
    # without padding the shell's reading and specgate's agree: the last
    # --speculative-config (D = 12) is what vLLM runs
    (command,) = [c for c in split_commands(_script(10)) if c.argv[0] == "vllm"]
    assert command.argv[-1] == "--speculative-config=" + SPEC.replace("NUM", "12")


@pytest.mark.parametrize("wrap", ["{inner}", "bash -c '{inner}'", "sh -lc \"{inner}\""])
def test_the_budget_error_names_the_line_and_is_never_a_fallback(
    sg: InProcess, repo: Path, wrap: str
) -> None:
    # a wrapper's inner script that cannot be split is read as the wrapper as written;
    # one that reaches the budget is not: it is the same input error
    value = "v" * 70_000
    inner = (
        f"V={value}; echo $V $V $V; vllm serve m --speculative-config "
        + SPEC.replace("NUM", "3").replace('"', "")
    )
    (repo / "serve.sh").write_text("# launch\n" + wrap.format(inner=inner) + "\n", "utf-8")
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(config="serve.sh"), "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code == 2, result.out
    (line,) = [x for x in result.out.splitlines() if x.startswith("specgate: serve.sh")]
    assert line.startswith("specgate: serve.sh:2: ") and "budget" in line, line
    with pytest.raises(LimitReached):
        split_commands(inner)


def test_model_config_padding_does_not_hide_a_key(repo: Path) -> None:
    # 300 padding keys before block_size: every scalar is kept (the file is bounded by
    # its size and YAML nodes already), so an engine check still sees block_size 16
    from specgate.inputs.model_config import read_model_config
    from specgate.load.read import load_document

    config = {f"pad_{i}": i for i in range(300)}
    config.update({"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096,
                   "block_size": 16, "nested": {f"k{i}": i for i in range(100)}})
    (repo / "config.json").write_text(json.dumps(config), "utf-8")
    shape = read_model_config(load_document(repo / "config.json", "config.json"),
                              shown="config.json")
    assert shape.scalars["block_size"] == 16
    assert shape.scalars["nested.k99"] == 99
    assert "block_size" in shape.keys


def test_decoy_requirement_files_give_no_pin(repo: Path) -> None:
    # nine requirement files beside the config: none is read for a pin (not the first
    # eight, whose decoy pin would be a version the serving does not run)
    from specgate.inputs.version import MAX_REQUIREMENT_FILES, detect_version

    config = repo / "serve.sh"
    config.write_text("vllm serve m\n", "utf-8")
    for index in range(MAX_REQUIREMENT_FILES):
        (repo / f"requirements-{index}.txt").write_text("vllm==0.6.0\n", "utf-8")
    found = detect_version("vllm", None, config.read_text("utf-8"), config)
    assert found.source == "requirement" and found.text == "0.6.0"
    (repo / "requirements-z.txt").write_text("vllm==0.32.0\n", "utf-8")
    found = detect_version("vllm", None, config.read_text("utf-8"), config)
    assert found.source == "assumed-newest" and found.text is None
    assert f"more than {MAX_REQUIREMENT_FILES} requirement files" in (found.note or "")
    # an unreadable one likewise: no pin from the others
    (repo / "requirements-z.txt").write_bytes(b"\xff\xfe vllm==0.32.0\n")
    for index in range(1, MAX_REQUIREMENT_FILES):
        (repo / f"requirements-{index}.txt").unlink()
    found = detect_version("vllm", None, config.read_text("utf-8"), config)
    assert found.source == "assumed-newest" and "requirements-z.txt unreadable" in (
        found.note or ""
    )


def test_records_nested_past_64_lists_are_read(repo: Path) -> None:
    # a vllm-per-request record inside 80 lists: read (the loaders bound nesting at
    # 100 levels with an input error; nothing between is skipped silently)
    from specgate.inputs.metrics.read import read_acceptance
    from specgate.inputs.metrics.spec import MetricsSpec

    record: object = {"speculative_decoding": {"num_spec_tokens": 3,
                                                "acceptance_histogram": [10, 20, 30, 40]}}
    for _ in range(80):
        record = [record]
    (repo / "r.json").write_text(json.dumps(record), "utf-8")
    spec = MetricsSpec(format="vllm-per-request", path="r.json")
    acceptance = read_acceptance(spec, base_dir=repo, shown_base="", root=repo)
    # histogram of accepted drafts 0..3 over 100 steps: AL = 1 + (20 + 60 + 120) / 100
    assert acceptance.accept_length == pytest.approx(3.0)
