"""Speed of specgate, as ratios against baselines measured in the same run.

Run: ``.venv/bin/python benchmarks/bench.py [--repeat N]``. It times whole
commands (median wall time of N runs, after one warm-up) and prints:

- ``specgate check`` on one claims file vs ``python -c pass`` and vs
  ``check-jsonschema --schemafile <our schema>`` on the same file;
- ``specgate doctor`` vs ``python -c pass``;
- one ``specgate check`` over 1,000 claims files (seconds; target < 3 s on 2 cores).

Targets (issue 3): one-file check no slower than check-jsonschema; 1,000 files
under 3 s. Import hygiene (doctor, --help and rules load neither PyYAML nor
jsonschema) is asserted by tests/test_imports.py, not timed here.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "passing" / "llama4-maverick-eagle3.specgate.yaml"
SCHEMA = ROOT / "src" / "specgate" / "data" / "claims-v1.schema.json"


def _median_seconds(command: list[str], repeat: int, cwd: Path) -> float:
    subprocess.run(command, cwd=cwd, capture_output=True, check=False)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs per command (default 15)")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    specgate = [str(bin_dir / "specgate")]
    check_jsonschema = bin_dir / "check-jsonschema"
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        one = work / "one.specgate.yaml"
        shutil.copyfile(EXAMPLE, one)
        many = work / "many"
        many.mkdir()
        for index in range(1000):
            shutil.copyfile(EXAMPLE, many / f"d{index:04}.specgate.yaml")

        python_pass = _median_seconds([sys.executable, "-c", "pass"], args.repeat, work)
        check_one = _median_seconds([*specgate, "check", str(one)], args.repeat, work)
        doctor = _median_seconds(
            [*specgate, "doctor", "--speculative-decoding", "--accept-length=2.9",
             "--draft-length=4", "--draft-depth-ratio=0.18", "--claimed-speedup=1.67"],
            args.repeat,
            work,
        )
        check_many = _median_seconds(
            [*specgate, "check", str(many)], max(3, args.repeat // 5), work
        )
        rows = [
            ("python -c pass (baseline)", python_pass, 1.0),
            ("specgate check, 1 file", check_one, check_one / python_pass),
            ("specgate doctor", doctor, doctor / python_pass),
        ]
        jsonschema_one = None
        if check_jsonschema.exists():
            jsonschema_one = _median_seconds(
                [str(check_jsonschema), "--schemafile", str(SCHEMA), str(one)], args.repeat, work
            )
            rows.append(("check-jsonschema, 1 file", jsonschema_one, jsonschema_one / python_pass))

    print(f"{'command':<32} {'median s':>9} {'× python -c pass':>17}")
    for name, seconds, ratio in rows:
        print(f"{name:<32} {seconds:>9.4f} {ratio:>17.2f}")
    if jsonschema_one is not None:
        print(f"specgate check / check-jsonschema on one file: {check_one / jsonschema_one:.2f}")
    print(f"specgate check over 1,000 files: {check_many:.3f} s "
          f"({check_many / 1000 * 1e3:.3f} ms per file; target < 3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
