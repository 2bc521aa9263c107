"""Speed of specgate, as ratios against baselines measured in the same run.

Run: ``.venv/bin/python benchmarks/bench.py [--repeat N] [--many N] [--scale N]``.
Commands run interleaved (one of each in turn, after one warm-up each), and the
median wall time of each is compared:

1. start-up: ``specgate check`` on one claims file vs the library floor
   (``library_floor.py``: the interpreter plus the imports a check cannot do without,
   argparse, PyYAML and fractions, composing the same file) — target ≤ 1.3× (issue 23;
   it replaces the retired ≤ 0.15× of ``check-jsonschema``, which the floor itself
   misses). Beside it, for reference, both against ``check-jsonschema --schemafile <our
   schema>`` on the same file. On a busy machine, ``startup_instructions.py`` counts the
   same comparison in instructions (callgrind), which barely move from run to run;
2. ``specgate doctor`` vs the seed's node doctor (outside the project, when present) with the same
   flags — target ≤ 0.8× (skipped without node or the seed);
3. one ``specgate check`` over 1,000 self-contained claims files vs one
   ``check-jsonschema`` over the same files — target ≤ 0.25×;
4. one ``specgate check`` over 10,000 claims files of which a quarter reference a
   shared serving config, model config and metrics log, vs 10,000 self-contained
   files — target ≤ 2.5× (referenced files are read and interpreted once per run).

``--scale`` divides the file counts of 3 and 4 (e.g. ``--scale 10`` for a quick look);
``--startup-only`` times 1 and 2 alone.
Import hygiene (doctor, --help and rules load neither PyYAML nor jsonschema; a clean
file loads no jsonschema) is asserted by tests/test_imports.py, not timed here.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "passing" / "llama4-maverick-eagle3.specgate.yaml"
SCHEMA = ROOT / "src" / "specgate" / "data" / "claims-v1.schema.json"
FLOOR = ROOT / "benchmarks" / "library_floor.py"
SEED = ROOT.parent / "shared" / "seed" / "nvidia-specdecode-al-doctor.js"
VLLM = ROOT / "examples" / "vllm"
DOCTOR_FLAGS = [
    "--speculative-decoding",
    "--accept-length=2.9",
    "--draft-length=4",
    "--draft-depth-ratio=0.18",
    "--claimed-speedup=1.67",
]
REFERENCING = """\
version: 1
deployments:
  - name: qwen3-30b-a3b-ngram-{index}
    model:
      name: Qwen/Qwen3-30B-A3B-Instruct-2507
      hf_config: ../shared/model.json
    speculation:
      enabled: true
      engine: vllm
      engine_config: ../shared/engine.yaml
      draft_depth_ratio: 0
    workload:
      name: repetitive agent traffic
      latency_region: throughput
      repetitive: true
    evidence:
      cache_coherence_eval: true
      metrics:
        format: vllm-log
        path: ../shared/metrics.log
"""


#: Installed tools have their bytecode compiled at install time; so does our checkout
#: here (``PYTHONDONTWRITEBYTECODE`` would make every run recompile what it imports).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(command: Sequence[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(list(command), cwd=cwd, capture_output=True, check=False, env=ENV)
    return time.perf_counter() - start


def _interleaved(commands: dict[str, list[str]], repeat: int, cwd: Path) -> dict[str, float]:
    """Median seconds of each command, run in turn ``repeat`` times after a warm-up."""
    for name, command in commands.items():
        done = subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)
        if done.returncode not in (0, 1):  # a broken run would time nothing useful
            raise SystemExit(f"{name} exited {done.returncode}: {done.stderr[-2000:]!r}")
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            samples[name].append(_time(command, cwd))
    return {name: statistics.median(values) for name, values in samples.items()}


def _tree(root: Path, count: int, *, referencing: int) -> Path:
    """A repository with ``count`` claims files, ``referencing`` of them pointing at
    shared engine, model and metrics files."""
    (root / ".git").mkdir(parents=True)
    shared = root / "shared"
    shared.mkdir()
    shutil.copyfile(
        VLLM / "serving" / "gym-Qwen3-30B-A3B-Instruct-2507-ngram-specdec.yaml",
        shared / "engine.yaml",
    )
    shutil.copyfile(VLLM / "models" / "openai--gpt-oss-20b_config.json", shared / "model.json")
    shutil.copyfile(
        VLLM / "bench" / "vllm-issue19254-ngram-k3-qwen3-32b.log", shared / "metrics.log"
    )
    claims = root / "claims"
    claims.mkdir()
    self_contained = EXAMPLE.read_text(encoding="utf-8")
    for index in range(count):
        text = (
            REFERENCING.format(index=index)
            if index % 4 == 0 and index // 4 < referencing
            else self_contained
        )
        (claims / f"d{index:05}.specgate.yaml").write_text(text, encoding="utf-8")
    return claims


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="runs per one-file command")
    parser.add_argument("--many", type=int, default=3, help="runs per many-file command")
    parser.add_argument("--scale", type=int, default=1, help="divide the file counts")
    parser.add_argument(
        "--startup-only", action="store_true", help="time the one-file commands (1, 2) only"
    )
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "src", quiet=1)
    bin_dir = Path(sys.executable).parent
    specgate = str(bin_dir / "specgate")
    check_jsonschema = str(bin_dir / "check-jsonschema")
    node = shutil.which("node")
    thousand = 1000 // args.scale
    ten_thousand = 10000 // args.scale
    results: list[tuple[str, float, float, float]] = []
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        one = work / "one.specgate.yaml"
        shutil.copyfile(EXAMPLE, one)
        commands = {
            "check": [specgate, "check", str(one)],
            "check-jsonschema": [check_jsonschema, "--schemafile", str(SCHEMA), str(one)],
            "doctor": [specgate, "doctor", *DOCTOR_FLAGS],
            "library floor": [sys.executable, str(FLOOR), "check", str(one)],
        }
        if node and SEED.exists():
            commands["seed doctor"] = [node, str(SEED), *DOCTOR_FLAGS]
        one_file = _interleaved(commands, args.repeat, work)
        results.append(
            ("check 1 file / library floor", one_file["check"], one_file["library floor"], 1.3)
        )
        results.append(
            (
                "  check 1 file / check-jsonschema",
                one_file["check"],
                one_file["check-jsonschema"],
                0.0,
            )
        )
        results.append(
            (
                "  library floor / check-jsonschema",
                one_file["library floor"],
                one_file["check-jsonschema"],
                0.0,
            )
        )
        if "seed doctor" in one_file:
            results.append(
                ("doctor / seed node doctor", one_file["doctor"], one_file["seed doctor"], 0.8)
            )

        if args.startup_only:
            _report(results)
            return 0
        many = _tree(work / "many", thousand, referencing=0)
        files = sorted(str(p) for p in many.iterdir())
        big = _interleaved(
            {
                "check": [specgate, "check", str(many)],
                "check-jsonschema": [check_jsonschema, "--schemafile", str(SCHEMA), *files],
            },
            args.many,
            work,
        )
        results.append(
            (
                f"check {thousand} files / check-jsonschema",
                big["check"],
                big["check-jsonschema"],
                0.25,
            )
        )

        plain = _tree(work / "plain", ten_thousand, referencing=0)
        mixed = _tree(work / "mixed", ten_thousand, referencing=ten_thousand // 4)
        shared = _interleaved(
            {"mixed": [specgate, "check", str(mixed)], "plain": [specgate, "check", str(plain)]},
            args.many,
            work,
        )
        results.append(
            (
                f"{ten_thousand} files, 1/4 referencing / plain",
                shared["mixed"],
                shared["plain"],
                2.5,
            )
        )

    _report(results)
    return 0


def _report(results: list[tuple[str, float, float, float]]) -> None:
    print(f"{'ratio':<44} {'specgate s':>10} {'baseline s':>10} {'ratio':>6} {'target':>7}")
    for name, ours, baseline, target in results:
        ratio = ours / baseline
        verdict = "" if not target else "ok" if ratio <= target else "MISSED"
        bound = f"≤ {target}" if target else ""
        print(f"{name:<44} {ours:>10.3f} {baseline:>10.3f} {ratio:>6.2f} {bound:>7} {verdict}")


if __name__ == "__main__":
    sys.exit(main())
