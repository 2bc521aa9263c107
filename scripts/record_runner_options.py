"""Record container runners' own options (spf13/pflag definitions) as data.

Reads the Go source of each runner at a tag from a local git mirror (``git show``;
nothing is built or run) and writes ``src/specgate/data/container-runners.json``:
per runner, every long option, its shorthand, and whether it takes a value
(pflag: ``Bool*`` flags take none, every other kind takes one unless the source
sets ``NoOptDefVal``, which makes the value optional and only ``--flag=value``).

Each program's GLOBAL options (the options before its subcommand, ``docker --context x
run``, ``podman --remote run``, ``nerdctl --namespace k8s.io run``, ``docker compose -f F
run``) are recorded the same way from its root command's source, under ``globals``; an
option the root defines on its ``PersistentFlags()`` is ``persistent`` (cobra passes it to
every subcommand, so ``podman run --log-level debug IMAGE`` takes it too). nerdctl
registers its globals through ``helpers.AddPersistentStringFlag`` /
``AddPersistentBoolFlag`` (``cmd/nerdctl/helpers/cobra.go``): a one-letter alias is a
shorthand and a long option of that name, as that helper registers it.

Usage: python scripts/record_runner_options.py MIRRORS_DIR \
    > src/specgate/data/container-runners.json
where MIRRORS_DIR holds ``docker+cli/repo``, ``containers+podman/repo``,
``containerd+nerdctl/repo``, ``docker+compose/repo``, ``containers+podman-compose/repo``
(bare clones).

podman-compose is Python and parses with argparse: its global parser and its ``run``
subparser are recorded from ``podman_compose.py`` with ``ast`` (each ``add_argument``'s
option strings, ``action`` and ``nargs``; nothing is imported or run), under
``argparse``; specgate builds the same argparse parsers from them.
"""

from __future__ import annotations

import ast
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

GLOBALS = [
    {
        "program": "docker", "words": ["docker"],
        "repo": "docker/cli", "mirror": "docker+cli/repo", "tag": "v29.7.2",
        "files": ["cli/flags/options.go", "cmd/docker/docker.go"],
        "where": "cli/cobra.go HandleGlobalFlags: SetInterspersed(false), the root's "
                 "Flags() and PersistentFlags() parsed up to the first command word",
    },
    {
        "program": "podman", "words": ["podman"],
        "repo": "containers/podman", "mirror": "containers+podman/repo", "tag": "v5.8.2",
        "files": ["cmd/podman/root.go"],
        "where": "cmd/podman/root.go rootFlags: lFlags (root only) and pFlags "
                 "(PersistentFlags, inherited by every subcommand)",
    },
    {
        "program": "nerdctl", "words": ["nerdctl"],
        "repo": "containerd/nerdctl", "mirror": "containerd+nerdctl/repo", "tag": "v2.3.5",
        "files": ["cmd/nerdctl/main.go"],
        "where": "cmd/nerdctl/main.go initRootCmdFlags: PersistentFlags and the "
                 "helpers.AddPersistent*Flag aliases",
    },
    {
        "program": "compose", "words": ["compose", "docker-compose"],
        "repo": "docker/compose", "mirror": "docker+compose/repo", "tag": "v5.5.0",
        "files": ["cmd/compose/compose.go"],
        "where": "cmd/compose/compose.go RootCommand: SetInterspersed(false), "
                 "addProjectFlags on Flags() (-f, --project-directory, -p, --env-file, "
                 "--profile), --dry-run on PersistentFlags()",
    },
]

_CALL = re.compile(
    r"\.(?P<kind>(?:Bool|String|StringSlice|StringArray|Int|Int64|Int32|Uint|Uint8|Uint16|Uint32|Uint64"
    r"|UintSlice|IntSlice|Float64|Float32|Duration|IP|IPSlice|IPNet|StringToString|BytesHex|Count|Var)"
    r"(?:Var)?P?)\(",
)
_ASSIGN = re.compile(r"(\w+)\s*(?::=|=)\s*\"([^\"]+)\"")
_OPTIONAL_BOOL = re.compile(r"OptionalBoolFlag\(\s*\w+\s*,\s*[^,]+,\s*\"([^\"]+)\"")
_PERSISTENT = re.compile(r"(?:PersistentFlags\(\)|\bpFlags)\s*$")
_NERDCTL = re.compile(
    r"helpers\.(?P<kind>AddPersistentStringFlag|AddPersistentBoolFlag|"
    r"HiddenPersistentStringArrayFlag)\(\s*\w+\s*,\s*\"(?P<name>[^\"]+)\"(?P<rest>[^\n]*)"
)
_LIST = re.compile(r"\[\]string\{([^}]*)\}|nil")
_NOOPT = re.compile(r"Lookup\(\s*(\"[^\"]+\"|\w+)\s*\)\.NoOptDefVal\s*=")


def _balanced(text: str, start: int) -> str:
    """The text from ``start`` (just inside a call's ``(``) to its closing ``)``, at
    any depth of nested calls (``fmt.Sprintf(…, strings.Join(…))``), strings skipped."""
    depth, at, quote = 1, start, ""
    while at < len(text) and depth:
        ch = text[at]
        if quote:
            if ch == "\\" and quote == '"':
                at += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        at += 1
    return text[start:at - 1]


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


def _commit(git: str, tag: str) -> str:
    return subprocess.run(["git", "-C", git, "rev-parse", tag + "^{commit}"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _nerdctl_helpers(text: str, options: dict[str, dict]) -> None:
    """nerdctl's helpers.AddPersistent*Flag calls (cmd/nerdctl/helpers/cobra.go): the
    name on PersistentFlags; each alias list as the helper registers it (a one-letter
    alias is a long option and a shorthand of that letter)."""
    for match in _NERDCTL.finditer(text):
        kind, name = match["kind"], match["name"]
        value = kind != "AddPersistentBoolFlag"
        options[name] = {"short": None, "value": value, "persistent": True}
        lists = [
            [w.strip().strip('"') for w in (m[1] or "").split(",") if w.strip()]
            for m in _LIST.finditer(match["rest"])
        ]
        if kind == "AddPersistentStringFlag":  # aliases (root), local, persistent
            kinds = list(zip(lists[:3], (False, False, True), strict=False))
        elif kind == "AddPersistentBoolFlag":  # aliases (persistent), non-persistent
            kinds = list(zip(lists[:2], (True, False), strict=False))
        else:
            kinds = []
        for aliases, persistent in kinds:
            for alias in aliases:
                short = alias if len(alias) == 1 else None
                options[alias] = {"short": short, "value": value, "persistent": persistent}


def _options(git: str, commit: str, files: list[str], root: bool = False) -> dict[str, dict]:
    options: dict[str, dict] = {}
    optional: set[str] = set()
    for path in files:
        text = subprocess.run(["git", "-C", git, "show", f"{commit}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        names: dict[str, list[str]] = {}
        for ident, literal in _ASSIGN.findall(text):
            names.setdefault(ident, []).append(literal)
        for match in _CALL.finditer(text):
            kind = match["kind"]
            args = _args(_balanced(text, match.end()))
            is_var = kind.endswith("Var") or kind.endswith("VarP")
            if is_var:
                args = args[1:]
            if not args:
                continue
            short = None
            if kind.endswith("P") and len(args) > 1:
                short = (_values(args[1], names) or [None])[0] or None
            base = kind.removesuffix("P").removesuffix("Var")
            line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
            for name in _values(args[0], names):
                if re.fullmatch(r"[a-z][a-z0-9-]*", name):
                    options[name] = {"short": short, "value": base not in ("Bool", "Count")}
                    if root:
                        options[name]["persistent"] = bool(_PERSISTENT.search(line))
        for name in _OPTIONAL_BOOL.findall(text):
            # go.podman.io/common pkg/flag OptionalBoolFlag: VarPF + NoOptDefVal "true",
            # a switch that also takes --name=false.
            options[name] = {"short": None, "value": False}
        for match in _NOOPT.finditer(text):
            optional.update(_values(match[1], names))
        if root:
            _nerdctl_helpers(text, options)
    for name in optional:
        if name in options and options[name]["value"]:
            options[name]["value"] = "optional"
    return {k: options[k] for k in sorted(options)}


def record(mirrors: str, runner: dict) -> dict:
    git = f"{mirrors}/{runner['mirror']}"
    commit = _commit(git, runner["tag"])
    options = _options(git, commit, runner["files"])
    return {
        "runner": runner["runner"],
        "programs": runner["programs"],
        "positional": runner["positional"],
        "entrypoint": runner["entrypoint"],
        "source": {"repo": runner["repo"], "tag": runner["tag"], "commit": commit,
                   "files": runner["files"]},
        "options": options,
    }


def record_globals(mirrors: str, program: dict) -> dict:
    git = f"{mirrors}/{program['mirror']}"
    commit = _commit(git, program["tag"])
    return {
        "program": program["program"],
        "words": program["words"],
        "where": program["where"],
        "source": {"repo": program["repo"], "tag": program["tag"], "commit": commit,
                   "files": program["files"]},
        "options": _options(git, commit, program["files"], root=True),
    }


#: Subcommands whose options are read interspersed with their positional words
#: (cobra's default): ``docker compose up [OPTIONS] [SERVICE...]``.
SUBCOMMANDS = [
    {
        "command": "compose up", "programs": [["docker", "compose", "up"],
                                              ["docker-compose", "up"]],
        "repo": "docker/compose", "mirror": "docker+compose/repo", "tag": "v5.5.0",
        "files": ["cmd/compose/up.go"],
        "where": "cmd/compose/up.go upCommand: flags on upCmd.Flags(), interspersed "
                 "with the SERVICE words (cobra's default); RunE p.WithServices",
    },
]


def record_subcommand(mirrors: str, sub: dict) -> dict:
    git = f"{mirrors}/{sub['mirror']}"
    commit = _commit(git, sub["tag"])
    return {
        "command": sub["command"],
        "programs": sub["programs"],
        "where": sub["where"],
        "source": {"repo": sub["repo"], "tag": sub["tag"], "commit": commit,
                   "files": sub["files"]},
        "options": _options(git, commit, sub["files"]),
    }


PODMAN_COMPOSE = {
    "program": "podman-compose",
    "repo": "containers/podman-compose", "mirror": "containers+podman-compose/repo",
    "tag": "v1.6.0", "files": ["podman_compose.py"],
    "globals": "PodmanCompose._init_global_parser",
    "run": "compose_run_parse",
    "where": "podman_compose.py: argparse (PodmanCompose._parse_args: the global parser, "
             "then one subparser per command); compose_run_update_container_from_args "
             "and container_to_args apply the run options",
}


def _constant(node: ast.AST, names: dict[str, ast.AST], loop: dict[str, str]) -> object:
    """A literal (a string, tuple or list of them, argparse.REMAINDER), else None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr == "REMAINDER":
        return "..."
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name) \
                    and value.value.id in loop:
                parts.append(loop[value.value.id])
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.Name) and node.id in names:
        return _constant(names[node.id], names, loop)
    if isinstance(node, ast.Tuple | ast.List):
        return [_constant(item, names, loop) for item in node.elts]
    return None


def _arguments(body: list[ast.stmt], names: dict[str, ast.AST],
               loop: dict[str, str] | None = None) -> list[dict]:
    """Every ``parser.add_argument`` call of a function body: its option strings (or
    positional name), action and nargs; ``for X in CONSTANT:`` loops expanded."""
    loop = loop or {}
    out: list[dict] = []
    for statement in body:
        if isinstance(statement, ast.For) and isinstance(statement.target, ast.Name):
            items = _constant(statement.iter, names, loop)
            for item in items if isinstance(items, list) else []:
                out += _arguments(statement.body, names, {**loop, statement.target.id: item})
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            flags = [_constant(arg, names, loop) for arg in node.args]
            keywords = {k.arg: _constant(k.value, names, loop) for k in node.keywords}
            if not flags or not all(isinstance(f, str) for f in flags):
                raise SystemExit(f"add_argument not read: {ast.unparse(node)[:80]}")
            out.append({
                "flags": flags,
                "action": keywords.get("action") or "store",
                "nargs": keywords.get("nargs"),
            })
    return out


def record_argparse(mirrors: str, program: dict) -> dict:
    git = f"{mirrors}/{program['mirror']}"
    commit = _commit(git, program["tag"])
    text = subprocess.run(["git", "-C", git, "show", f"{commit}:{program['files'][0]}"],
                          capture_output=True, text=True, check=True).stdout
    tree = ast.parse(text)
    names: dict[str, ast.AST] = {
        target.id: node.value
        for node in tree.body if isinstance(node, ast.Assign)
        for target in node.targets if isinstance(target, ast.Name)
    }
    functions = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    functions[f"{node.name}.{item.name}"] = item
        elif isinstance(node, ast.FunctionDef):
            functions.setdefault(node.name, node)
    return {
        "program": program["program"],
        "where": program["where"],
        "source": {"repo": program["repo"], "tag": program["tag"], "commit": commit,
                   "files": program["files"]},
        "globals": _arguments(functions[program["globals"]].body, names),
        "run": _arguments(functions[program["run"]].body, names),
    }


def main() -> None:
    mirrors = sys.argv[1]
    data = {
        "$comment": (
            "Container runners' own options, recorded from their pflag definitions by "
            "scripts/record_runner_options.py (value: true = takes the next word or "
            "=VALUE, false = a switch, 'optional' = NoOptDefVal: only --opt=VALUE). "
            "Options end at the first word that is not one (SetInterspersed(false)): "
            "that word is the IMAGE (SERVICE for compose), the rest its command. "
            "globals: each program's options before its subcommand (persistent: "
            "also taken after it, as cobra inherits PersistentFlags)."
        ),
        "runners": [record(mirrors, r) for r in RUNNERS],
        "globals": [record_globals(mirrors, g) for g in GLOBALS],
        "argparse": [record_argparse(mirrors, PODMAN_COMPOSE)],
        "subcommands": [record_subcommand(mirrors, sub) for sub in SUBCOMMANDS],
    }
    json.dump(data, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
