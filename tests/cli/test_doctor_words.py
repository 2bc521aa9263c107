"""``specgate doctor`` names its own flags, never a claims-file key a flag sets
(newuser-r4 #8): "Give hardware.weight_bytes with hardware.compute_dtype" was shown to a
user who can only pass ``--weight-bytes`` and ``--compute-dtype``. The key → flag map is
read from the doctor's argparse definitions (cli/doctor_words.py); a key no flag sets
(``model.hf_config``) is named as it is.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.doctor_words import flag_for, option_for, reword
from specgate.cli.main import main
from specgate.cli.parser import build_parser

SCHEMA = Path(__file__).parents[2] / "src" / "specgate" / "data" / "claims-v1.schema.json"
KEY = re.compile(r"\b(?:speculation|evidence|workload|model|hardware|claims|policy)(?:\.[a-z_]+)+")


def schema_keys() -> set[str]:
    """Every ``section.key`` (and ``section.sub.key``) path a deployment may hold."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema["$defs"]

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    found: set[str] = set()

    def walk(node: dict[str, Any], prefix: str) -> None:
        for name, child in resolve(node).get("properties", {}).items():
            path = f"{prefix}.{name}" if prefix else name
            found.add(path)
            walk(child, path)

    walk(defs["deployment"], "")
    return {k for k in found if "." in k}


KEYS = schema_keys()


def doctor_options() -> list[str]:
    parser = build_parser("doctor")
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return [
        next(o for o in action.option_strings if o.startswith("--"))
        for action in sub.choices["doctor"]._actions
        if action.option_strings and action.dest not in ("help", "strict", "json")
    ]


@pytest.mark.parametrize(
    ("key", "flag"),
    [
        ("hardware.weight_bytes", "--weight-bytes"),
        ("hardware.compute_dtype", "--compute-dtype"),
        ("hardware.kv_cache_bytes", "--kv-cache-bytes"),
        ("hardware.tensor_parallel", "--tensor-parallel"),
        ("evidence.verify_cost_ratio", "--verify-cost-ratio"),
        ("workload.prefill_tokens_per_step", "--prefill-tokens-per-step"),
        ("speculation.draft_depth_ratio", "--draft-depth-ratio"),
        ("evidence.next.accept_length", "--next-accept-length"),
        ("evidence.accept_length", "--accept-length"),
        ("model.size", "--model-size"),
        ("claims.speedup", "--claimed-speedup"),
        ("speculation.enabled", "--speculative-decoding"),
        ("evidence.provenance.concurrency", None),  # workload.concurrency's flag, not this
        ("model.hf_config", None),
        ("speculation.engine_config", None),
    ],
)
def test_a_key_and_its_flag(key: str, flag: str | None) -> None:
    assert flag_for(key) == flag


def test_every_doctor_option_sets_one_claims_key() -> None:
    # no drift: a flag added to the doctor is found from some schema key, or this fails
    by_flag: dict[str, list[str]] = {}
    for key in KEYS:
        flag = flag_for(key)
        if flag is not None:
            by_flag.setdefault(flag, []).append(key)
    options = doctor_options()
    assert sorted(o for o in options if o not in by_flag) == []
    assert {flag: keys for flag, keys in by_flag.items() if len(keys) > 1} == {}


REVIEWER = [
    "--speculative-decoding", "--accept-length", "2.8", "--draft-length", "3",
    "--draft-depth-ratio", "0.05", "--claimed-speedup", "2.4", "--concurrency", "256",
    "--gpu", "h100-sxm", "--parameters-b", "8.03", "--mechanism", "eagle3",
    "--cache-coherence-eval", "--context-length", "4000", "--layers", "32",
    "--hidden-size", "4096", "--query-heads", "32", "--kv-heads", "8", "--head-dim", "128",
]  # fmt: skip


def test_the_reviewers_next_action_names_flags(capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor", *REVIEWER])
    out = capsys.readouterr().out
    assert (
        "next: Give --weight-bytes with --compute-dtype (or model.hf_config, whose "
        "dtype/quantization_config declare them), --kv-cache-bytes (or the serving config's "
        "--kv-cache-dtype), --tensor-parallel (or the serving config's tensor_parallel_size), "
        "or measure β (the step time at N_verify tokens per sequence over one token) as "
        "--verify-cost-ratio, and re-check."
    ) in out
    assert "leaves out prefill (--prefill-tokens-per-step)" in out


def test_on_off_flags_read_as_flags() -> None:
    assert reword("set evidence.cache_coherence_eval: true.") == "set --cache-coherence-eval."
    assert reword("(evidence.cache_coherence_eval is not true)") == (
        "(--cache-coherence-eval is not given)"
    )
    assert reword("the hf_config (model.hf_config) says") == "the hf_config (model.hf_config) says"
    assert reword("write claims.speedup: 1.4;") == "write --claimed-speedup 1.4;"
    assert reword("speculation.enabled: false") == "speculation.enabled: false"


CHUNKS = [
    ["--draft-depth-ratio=0.05"], ["--claimed-speedup=2.4"], ["--claimed-speedup=5"],
    ["--cache-coherence-eval"], ["--concurrency=256", "--gpu=h100-sxm"],
    ["--parameters-b=8.03", "--layers=32", "--hidden-size=4096", "--query-heads=32",
     "--kv-heads=8", "--head-dim=128"],
    ["--context-length=4000"], ["--mechanism=ngram"], ["--mechanism=eagle3"],
    ["--attention-dominated", "--query-heads-per-kv=8"], ["--measured-speedup=2.0"],
    ["--measured-speedup=0.9"], ["--per-position=0.8,0.6,0.4"], ["--per-position=0.4,0.6,0.4"],
    ["--next-accept-length=3.0", "--next-draft-length=5"], ["--accept-length=1.05"],
    ["--verify-cost-ratio=1.3"],
    ["--experts=256", "--experts-per-token=8", "--active-parameters-b=37", "--parameters-b=671"],
    ["--tensor-parallel=8"], ["--latency-region=throughput"], ["--model-size=large"],
    ["--repetitive"], ["--min-gain=0.5"], ["--draft-passes=single"], ["--verify-tokens=10"],
    ["--min-accept-length=2.5"], ["--weight-bytes=1"], ["--compute-dtype=fp8"],
    ["--kv-cache-bytes=1"], ["--prefill-tokens-per-step=512"], ["--concurrency=64"],
    ["--peak-tflops=989", "--memory-bandwidth-tbps=3.35"], ["--attention-tile-rows=64"],
    ["--verify-cost-ratio-at=4:1.2,8:1.9"], ["--tree-level-nodes=4,8"], ["--accept-length=4.5"],
    ["--draft-depth-ratio=1", "--verify-tokens=11"], ["--claimed-speedup=0.4"],
]  # fmt: skip
BASES = [[], ["--speculative-decoding"], ["--speculative-decoding", "--accept-length=2.8",
                                         "--draft-length=3"]]  # fmt: skip


def combinations() -> list[list[str]]:
    rng = random.Random(20261201)
    found = [list(base) for base in BASES] + [REVIEWER]
    for base in BASES:
        for size in (1, 2, 4, 6):
            for _ in range(12):
                found.append([*base, *(a for c in rng.sample(CHUNKS, size) for a in c)])
    return found


def test_no_doctor_output_names_a_key_a_flag_sets() -> None:
    # text and JSON, findings, next actions and usage errors, over 148 flag combinations
    seen: set[str] = set()
    for argv in combinations():
        for extra in ([], ["--json"]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["doctor", *argv, *extra])
            text = out.getvalue() + err.getvalue()
            if extra and code != 2:  # a finding's path is where it sits, not advice
                for finding in json.loads(out.getvalue())["findings"]:
                    text = text.replace(finding["path"], "")
            for key in KEY.findall(text):
                seen.add(key)
                assert option_for(key) is None, (key, argv)
                assert key in KEYS, (key, argv)  # named as the claims file has it
    assert "model.hf_config" in seen  # the test saw keys at all
