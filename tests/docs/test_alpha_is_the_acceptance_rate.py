"""α is the acceptance rate, one term per concept (BRIEF "Field terms"; newuser-r4 #5:
the schema and the step-time model used α for the all-reduce latency too). The
all-reduce latency is t_ar; its key stays ``hardware.allreduce_latency_us``."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_schema_names_the_all_reduce_latency_t_ar() -> None:
    schema = json.loads((ROOT / "src/specgate/data/claims-v1.schema.json").read_text("utf-8"))
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            latency = node.get("allreduce_latency_us")
            if isinstance(latency, dict) and "description" in latency:
                found.append(latency["description"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    (text,) = found
    assert text.startswith("t_ar, the latency of one all-reduce in microseconds")
    assert "α" not in text


def test_no_text_pairs_alpha_with_the_all_reduce() -> None:
    # every line of the sources and docs that speaks of the all-reduce latency
    found = []
    for path in [*ROOT.glob("src/specgate/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]:
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if re.search(r"all-?reduce|T_comm|allreduce_latency", line) and re.search(
                r"α(?!, the acceptance rate)", line
            ):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
