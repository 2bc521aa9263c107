"""Record container runners' own options (spf13/pflag definitions) as data.

Reads the Go source of each runner at a tag from a local git mirror (``git show``;
nothing is built or run) and writes ``src/specgate/data/container-runners.json``:
per runner, every long option, its shorthand, and whether it takes a value
(pflag: ``Bool*`` flags take none, every other kind takes one unless the source
sets ``NoOptDefVal``, which makes the value optional and only ``--flag=value``).

Usage: python scripts/record_runner_options.py MIRRORS_DIR \
    > src/specgate/data/container-runners.json
where MIRRORS_DIR holds ``docker+cli/repo``, ``containers+podman/repo``,
``containerd+nerdctl/repo``, ``docker+compose/repo`` (bare clones).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

RUNNERS = [
    {
        "runner": "docker run",
        "programs": [["docker", "run"], ["docker", "container", "run"]],
        "repo": "docker/cli", "mirror": "docker+cli/repo", "tag": "v29.7.2",
        "files": ["cli/command/container/run.go", "cli/command/container/opts.go"],
        "positional": "IMAGE",
        "entrypoint": {"reads": "word", "where": "cli/command/container/opts.go (parse): "
                       "[]string{copts.entrypoint}; --entrypoint= resets it"},
    },
    {
        "runner": "podman run",
        "programs": [["podman", "run"], ["podman", "container", "run"]],
        "repo": "containers/podman", "mirror": "containers+podman/repo", "tag": "v5.8.2",
        "files": ["cmd/podman/containers/run.go", "cmd/podman/common/create.go",
                  "cmd/podman/common/netflags.go"],
        "positional": "IMAGE",
        "entrypoint": {"reads": "json-or-word", "where": "pkg/specgenutil/specgen.go: a JSON "
                       "array of strings when it parses as one, else one word"},
    },
    {
        "runner": "nerdctl run",
        "programs": [["nerdctl", "run"], ["nerdctl", "container", "run"]],
        "repo": "containerd/nerdctl", "mirror": "containerd+nerdctl/repo", "tag": "v2.3.5",
        "files": ["cmd/nerdctl/container/container_run.go"],
        "positional": "IMAGE",
        "entrypoint": {"reads": "each-word", "where": "container_run.go: StringArray, each "
                       "--entrypoint one word of the entrypoint"},
    },
    {
        "runner": "docker compose run",
        "programs": [["docker", "compose", "run"], ["docker-compose", "run"]],
        "repo": "docker/compose", "mirror": "docker+compose/repo", "tag": "v5.5.0",
        "files": ["cmd/compose/run.go"],
        "positional": "SERVICE",
        "entrypoint": {"reads": "shellwords", "where": "cmd/compose/run.go: "
                       "shellwords.Parse(options.entrypoint)"},
    },
]

_CALL = re.compile(
    r"\.(?P<kind>(?:Bool|String|StringSlice|StringArray|Int|Int64|Int32|Uint|Uint8|Uint16|Uint32|Uint64"
    r"|UintSlice|IntSlice|Float64|Float32|Duration|IP|IPSlice|IPNet|StringToString|BytesHex|Count|Var)"
    r"(?:Var)?P?)\(\s*(?P<args>[^()]*(?:\([^()]*\)[^()]*)*)\)",
)
_ASSIGN = re.compile(r"(\w+)\s*(?::=|=)\s*\"([^\"]+)\"")
_OPTIONAL_BOOL = re.compile(r"OptionalBoolFlag\(\s*\w+\s*,\s*[^,]+,\s*\"([^\"]+)\"")
_NOOPT = re.compile(r"Lookup\(\s*(\"[^\"]+\"|\w+)\s*\)\.NoOptDefVal\s*=")


def _args(text: str) -> list[str]:
    out, depth, cur, quote = [], 0, "", False
    for ch in text:
        if ch == '"' and not cur.endswith("\\"):
            quote = not quote
        if not quote and ch in "([{":
            depth += 1
        if not quote and ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def _values(arg: str, names: dict[str, list[str]]) -> list[str]:
    """A string literal, or every literal the source assigns to that identifier
    (podman's entrypoint option name is set in an if/else)."""
    if arg.startswith('"') and arg.endswith('"'):
        return [arg[1:-1]]
    return names.get(arg, [])


def record(mirrors: str, runner: dict) -> dict:
    git = f"{mirrors}/{runner['mirror']}"
    commit = subprocess.run(["git", "-C", git, "rev-parse", runner["tag"] + "^{commit}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    options: dict[str, dict] = {}
    optional: set[str] = set()
    for path in runner["files"]:
        text = subprocess.run(["git", "-C", git, "show", f"{commit}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        names: dict[str, list[str]] = {}
        for ident, literal in _ASSIGN.findall(text):
            names.setdefault(ident, []).append(literal)
        for match in _CALL.finditer(text):
            kind = match["kind"]
            args = _args(match["args"])
            is_var = kind.endswith("Var") or kind.endswith("VarP")
            if is_var:
                args = args[1:]
            if not args:
                continue
            short = None
            if kind.endswith("P") and len(args) > 1:
                short = (_values(args[1], names) or [None])[0] or None
            base = kind.removesuffix("P").removesuffix("Var")
            for name in _values(args[0], names):
                if re.fullmatch(r"[a-z][a-z0-9-]*", name):
                    options[name] = {"short": short, "value": base not in ("Bool", "Count")}
        for name in _OPTIONAL_BOOL.findall(text):
            # go.podman.io/common pkg/flag OptionalBoolFlag: VarPF + NoOptDefVal "true",
            # a switch that also takes --name=false.
            options[name] = {"short": None, "value": False}
        for match in _NOOPT.finditer(text):
            optional.update(_values(match[1], names))
    for name in optional:
        if name in options and options[name]["value"]:
            options[name]["value"] = "optional"
    return {
        "runner": runner["runner"],
        "programs": runner["programs"],
        "positional": runner["positional"],
        "entrypoint": runner["entrypoint"],
        "source": {"repo": runner["repo"], "tag": runner["tag"], "commit": commit,
                   "files": runner["files"]},
        "options": {k: options[k] for k in sorted(options)},
    }


def main() -> None:
    mirrors = sys.argv[1]
    data = {
        "$comment": (
            "Container runners' own options, recorded from their pflag definitions by "
            "scripts/record_runner_options.py (value: true = takes the next word or "
            "=VALUE, false = a switch, 'optional' = NoOptDefVal: only --opt=VALUE). "
            "Options end at the first word that is not one (SetInterspersed(false)): "
            "that word is the IMAGE (SERVICE for compose), the rest its command."
        ),
        "runners": [record(mirrors, r) for r in RUNNERS],
    }
    json.dump(data, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
