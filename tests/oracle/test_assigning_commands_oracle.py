"""bash as the oracle of commands that may assign a name the reader cannot follow
(trial 3 findings 16 and 17; docs/engines.md#unsettled-values).

Each launcher sets ``D=4`` (or not), then runs a command that may set D from a file of
the repository (``.env``: ``D=7``; ``common.sh``: ``export D=9``), and launches the
stub ``vllm`` with ``num_speculative_tokens`` ``$D``. bash runs it in an empty folder
holding those files, with an empty environment; the stub prints the argv it got and D
is read from its ``--speculative-config``. The expected verdict of each case was
worked out by hand from bash's rules and is checked against the reader, and what bash
runs is checked against the case's own account (so a case that settles a value is
the interpreter's value, and one left unsettled is one where the naive literal is
wrong):

- ``export``/``declare``/``typeset``/``readonly`` of an expansion (``$(…)``, a
  variable, an array, a loop's line) sets the ``NAME=value`` words it expands to
  (bash manual, "Bash Builtins"): every name, when the expansion is not settled;
- ``.``/``source``/``eval`` of text not read may set any name (POSIX 2.14);
- a plain ``NAME=value`` after any of those decides NAME (only ``readonly`` in the
  unread text could stop it): the later literal is what bash runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from tests.oracle import shell_oracle
from tests.oracle.test_value_origin import check_outside, origin

from specgate.inputs.engines import read_engine_config
from specgate.load.document import Document

LAUNCH = (
    'vllm serve m --speculative-config "{\\"method\\": \\"ngram\\", '
    '\\"num_speculative_tokens\\": $D, \\"prompt_lookup_max\\": 4}"\n'
)
FILES = {
    ".env": "D=7\nHF_HOME=/data/hf\n",
    "commented.env": "# serving knobs\nD=7\nHF_HOME=/data/hf\n",
    "common.sh": "export D=9\n",
    "activate": "export D=9\nexport VIRTUAL_ENV=/v\n",
}

#: name -> (the lines before the launch, the verdict worked by hand: the D settled or
#: the origin of an unsettled one, the D bash runs)
CASES: dict[str, tuple[str, object, int]] = {
    # finding 17: the .env idiom and its kin, after a literal D=4 (bash runs the .env's 7)
    "export-grep-xargs": ("D=4\nexport $(grep -v '^#' commented.env | xargs)\n",
                          "repository", 7),
    "export-cat": ("D=4\nexport $(cat .env)\n", "repository", 7),
    "export-backquote": ("D=4\nexport `cat .env`\n", "repository", 7),
    "export-dashdash": ("D=4\nexport -- $(cat .env)\n", "repository", 7),
    "declare-cat": ("D=4\ndeclare $(cat .env)\n", "repository", 7),
    "typeset-cat": ("D=4\ntypeset $(cat .env)\n", "repository", 7),
    "readonly-cat": ("D=4\nreadonly $(cat .env)\n", "repository", 7),
    "export-named": ('D=4\nN=D\nexport "$N=7"\n', "repository", 7),
    "export-variable": ('D=4\nVARS="D=7"\nexport $VARS\n', "repository", 7),
    "read-loop": ('D=4\nwhile IFS= read -r line; do export "$line"; done < .env\n',
                  "repository", 7),
    "for-loop": ('D=4\nfor kv in $(cat .env); do export "$kv"; done\n', "repository", 7),
    "mapfile": ('D=4\nmapfile -t A < .env\nexport "${A[@]}"\n', "repository", 7),
    "eval": ('D=4\neval "$(cat .env)"\n', "repository", 7),
    "set-a-dot": ("D=4\nset -a\n. ./.env\nset +a\n", "repository", 7),
    "source-after": ("D=4\nsource ./common.sh\n", "repository", 9),
    # finding 16: a literal assignment after the command decides D
    "source-before": ("source ./activate\nD=4\n", 4, 4),
    "dot-before": (". ./common.sh\nD=4\n", 4, 4),
    "eval-before": ('eval "$(cat .env)"\nD=4\n', 4, 4),
    "export-cat-before": ("export $(cat .env)\nD=4\n", 4, 4),
    "export-before": ("source ./common.sh\nexport D=4\n", 4, 4),
    "twice": (". ./common.sh\nD=4\neval \"$(cat .env)\"\nD=5\n", 5, 5),
    # ... but not one the later line only defaults, nor one set on some paths
    "default-after-source": (". ./common.sh\nD=${D:-4}\n", "repository", 9),
    "branch-after-source": (". ./common.sh\nif [ -f nothing ]; then D=4; fi\n",
                            "repository", 9),
    "set-after-source": ('. ./common.sh\nset -- 4\nD=$1\n', 4, 4),
}


def verdict(script: str) -> object:
    """The reader's D for ``script``, or the origin of the unsettled value."""
    unsettled = origin(script)
    if unsettled is not None:
        return unsettled.origin
    config = read_engine_config(
        Document(file="serve.sh", data=script), shown="serve.sh", pointer=None, engine=None,
        text=script,
    )
    return config.draft_length


def bash_d(
    script: str, args: tuple[str, ...] = (), env: dict[str, str] | None = None,
    *, files: dict[str, str] = FILES, programs: dict[str, str] | None = None,
) -> int | None:
    """The D the stub engine receives when bash runs ``script`` with ``args`` and only
    ``env`` for an environment, in a folder holding ``files``, with the stub engines and
    ``programs`` (name -> script) on its PATH."""
    with tempfile.TemporaryDirectory(prefix="sgassign-") as where:
        folder = Path(where)
        bin_dir = shell_oracle._stubs(folder)
        for name, text in (programs or {}).items():
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        for name, text in files.items():
            (folder / name).write_text(text)
        (folder / "serve.sh").write_text(script)
        run = subprocess.run(
            ["bash", "serve.sh", *args], cwd=folder, capture_output=True, timeout=10,
            check=False,
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": where, "LC_ALL": "C", **(env or {})},
            stdin=subprocess.DEVNULL,
        )
    for line in run.stdout.decode(errors="replace").splitlines():
        if line.startswith(shell_oracle.MARK):
            argv = json.loads(line[len(shell_oracle.MARK) :])
            config = json.loads(argv[argv.index("--speculative-config") + 1])
            return int(config["num_speculative_tokens"])
    return None


@pytest.mark.parametrize("name", CASES)
def test_reader_verdict_worked_by_hand(name: str) -> None:
    lines, expected, _ = CASES[name]
    assert verdict("#!/bin/bash\n" + lines + LAUNCH) == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")
@pytest.mark.parametrize("name", CASES)
def test_bash_runs_the_case_as_worked(name: str) -> None:
    lines, expected, ran = CASES[name]
    script = "#!/bin/bash\n" + lines + LAUNCH
    assert bash_d(script) == ran
    if isinstance(expected, int):  # a settled value is the interpreter's
        assert expected == ran


GETOPTS = 'D=4\nwhile getopts "d:" opt; do\n  case $opt in\n    d) D=$OPTARG ;;\n  esac\ndone\n'
#: Finding 10: values the caller supplies (its arguments, its environment), however
#: nested: name -> (the lines before the launch, the verdict worked by hand, and runs
#: of bash as (arguments, environment, the D it passes)). An outside verdict is also
#: held to bash by test_value_origin.check_outside (nothing named is set when the
#: engine runs with an empty environment and no arguments).
CALLER: dict[str, tuple[str, object, list[tuple[tuple[str, ...], dict[str, str], int]]]] = {
    "nested-default": ("D=${1:-${DEFAULT_D:-4}}\n", "outside",
                       [((), {}, 4), (("6",), {}, 6), ((), {"DEFAULT_D": "5"}, 5)]),
    "nested-default-env-first": ("D=${DEFAULT_D:-${1:-4}}\n", "outside",
                                 [((), {}, 4), (("6",), {}, 6), ((), {"DEFAULT_D": "5"}, 5)]),
    "default-of-name": ("D=${1:-$X}\n", "outside", [(("6",), {}, 6), ((), {"X": "5"}, 5)]),
    "getopts": (GETOPTS, "outside", [((), {}, 4), (("-d", "6"), {}, 6)]),
    "args-loop": ("D=4\nwhile [ $# -gt 0 ]; do case $1 in -d) D=$2; shift 2;; *) shift;; "
                  "esac; done\n", "outside", [((), {}, 4), (("-d", "6"), {}, 6)]),
    "for-args": ('D=4\nfor a in "$@"; do case $a in --d=*) D=${a#*=};; esac; done\n',
                 "outside", [((), {}, 4), (("--d=6",), {}, 6)]),
    "case-first-arg": ('D=4\ncase "$1" in\n  (fast) D=6 ;;\n  slow)\n    D=2\n    ;;\nesac\n',
                       "outside", [((), {}, 4), (("fast",), {}, 6), (("slow",), {}, 2)]),
    "trimmed-arg": ("D=${1#--d=}\n", "outside", [(("--d=6",), {}, 6)]),
    # the repository's own, though in the same shapes: a file, a branch, a loop of words
    "default-of-substitution": ("X=$(cat .env | cut -d= -f2 | head -1)\nD=${1:-$X}\n",
                                "repository", [((), {}, 7)]),
    "getopts-branch": ('D=4\nwhile getopts "d:" opt; do\n  case $opt in\n    d) if [ -f .env ]; '
                       "then D=$OPTARG; fi ;;\n  esac\ndone\n", "repository",
                       [(("-d", "6"), {}, 6)]),
    "getopts-substitution": ('D=4\nwhile getopts "d:" opt; do\n  case $opt in\n    d) '
                             "D=$(cut -d= -f2 .env | head -1) ;;\n  esac\ndone\n", "repository",
                             [(("-d", "1"), {}, 7)]),
    "case-environment": ("D=4\ncase $MODE in fast) D=6 ;; esac\n", "outside",
                         [((), {}, 4), ((), {"MODE": "fast"}, 6)]),
    "case-set-name": ("MODE=fast\nD=4\ncase $MODE in fast) D=6 ;; esac\n", "repository",
                      [((), {}, 6)]),
    "set-then-getopts": ("set -- -d 6\n" + GETOPTS, "repository", [((), {}, 6)]),
    "for-words": ("D=4\nfor a in 5 6; do D=$a; done\n", "repository", [((), {}, 6)]),
    # settled: the script sets what the default reads
    "nested-default-set": ("set -- 6\nD=${1:-${DEFAULT_D:-4}}\n", 6, [((), {}, 6)]),
    "nested-default-empty": ("set --\nD=${1:-${DEFAULT_D:-4}}\n", 4, [((), {}, 4)]),
    "nested-alternative": ("E=5\nD=${E:+${E}}\n", 5, [((), {}, 5)]),
}


@pytest.mark.parametrize("name", CALLER)
def test_caller_verdict_worked_by_hand(name: str) -> None:
    lines, expected, _ = CALLER[name]
    assert verdict("#!/bin/bash\n" + lines + LAUNCH) == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")
@pytest.mark.parametrize("name", CALLER)
def test_bash_runs_the_caller_case_as_worked(name: str) -> None:
    lines, expected, runs = CALLER[name]
    script = "#!/bin/bash\n" + lines + LAUNCH
    for args, env, ran in runs:
        assert bash_d(script, args, env) == ran
        if isinstance(expected, int):
            assert expected == ran
    if expected == "outside":
        unsettled = origin(script)
        assert unsettled is not None
        assert check_outside(script, unsettled) == []
