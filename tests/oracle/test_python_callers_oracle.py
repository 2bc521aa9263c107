"""Python as the oracle of values a launcher's caller supplies (trial 3 finding 10;
docs/engines.md#unsettled-values): ``int(sys.argv[1]) if len(sys.argv) > 1 else 4`` and
``argparse``'s ``args.d`` with a literal default are the caller's (SG313), as the
shell's ``${1:-4}`` is; the same shapes where the file itself decides (a file test,
``set_defaults``, an attribute assigned, words passed to ``parse_args``) are the
repository's (SG314).

Each verdict was worked out by hand; Python (this interpreter, a stub ``vllm``) runs
each launcher with the arguments and environment listed, and must pass the D listed
(worked out by hand from argparse's and Python's documented behaviour).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.oracle.test_environ_writes_oracle import STUB, verdict

HEAD = "import argparse, os, sys\nfrom vllm import LLM\n"
LAUNCH = 'LLM(model="m", speculative_config={"method": "ngram", "num_speculative_tokens": K})\n'
PARSER = 'p = argparse.ArgumentParser()\np.add_argument("--d", type=int, default=4)\n'

#: name -> (the lines before the launch, the verdict, runs as (argv, environment, D))
CASES: dict[str, tuple[str, object, list[tuple[list[str], dict[str, str], int]]]] = {
    "argv-or-default": ("K = int(sys.argv[1]) if len(sys.argv) > 1 else 4\n", "outside",
                        [([], {}, 4), (["6"], {}, 6)]),
    "environ-or-default": ('K = int(os.environ["D"]) if "D" in os.environ else 4\n', "outside",
                           [([], {}, 4), ([], {"D": "6"}, 6)]),
    "argparse": (PARSER + "args = p.parse_args()\nK = args.d\n", "outside",
                 [([], {}, 4), (["--d", "6"], {}, 6)]),
    "argparse-dest": ('p = argparse.ArgumentParser()\np.add_argument("-k", "--num-spec", '
                      'dest="d", type=int, default=4)\nargs = p.parse_args()\nK = args.d\n',
                      "outside", [([], {}, 4), (["-k", "6"], {}, 6)]),
    "argparse-in-functions": (
        'def parse():\n    p = argparse.ArgumentParser()\n'
        '    p.add_argument("--num-spec-tokens", type=int, default=4)\n'
        "    return p.parse_args()\n"
        "def main():\n    args = parse()\n    "
        + LAUNCH.replace("K}", "args.num_spec_tokens}") + "main()\n", "outside",
        [([], {}, 4), (["--num-spec-tokens", "6"], {}, 6)]),
    # the file decides
    "file-test": ('K = 6 if os.path.exists("serve.py") else 4\n', "repository", [([], {}, 6)]),
    "environ-written": ('os.environ["D"] = "7"\n'
                        'K = int(os.environ["D"]) if "D" in os.environ else 4\n',
                        "repository", [([], {}, 7)]),
    "set-defaults": (PARSER + "p.set_defaults(d=7)\nargs = p.parse_args()\nK = args.d\n",
                     "repository", [([], {}, 7)]),
    "assigned": (PARSER + "args = p.parse_args()\nargs.d = 7\nK = args.d\n", "repository",
                 [([], {}, 7)]),
    "assigned-elsewhere": (PARSER + "args = p.parse_args()\ndef tweak(a):\n    a.d = 7\n"
                           "tweak(args)\nK = args.d\n", "repository", [([], {}, 7)]),
    "words-given": (PARSER + 'args = p.parse_args(["--d", "7"])\nK = args.d\n', "repository",
                    [([], {}, 7)]),
    "store-const": ('p = argparse.ArgumentParser()\np.add_argument("--d", action="store_const",'
                    " const=7, default=4)\nargs = p.parse_args()\nK = args.d\n", "repository",
                    [(["--d"], {}, 7)]),
}


def _script(name: str) -> str:
    lines = CASES[name][0]
    return HEAD + lines + ("" if "main()" in lines else LAUNCH)


@pytest.mark.parametrize("name", CASES)
def test_reader_verdict_worked_by_hand(name: str) -> None:
    assert verdict(_script(name)) == CASES[name][1]


@pytest.mark.parametrize("name", CASES)
def test_python_runs_the_case_as_worked(name: str, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text(STUB)
    (tmp_path / "serve.py").write_text(_script(name))
    for args, env, ran in CASES[name][2]:
        log = tmp_path / "calls.jsonl"
        log.unlink(missing_ok=True)
        subprocess.run(
            [sys.executable, "-S", "serve.py", *args], cwd=tmp_path, capture_output=True,
            timeout=30, check=False,
            env={"PYTHONPATH": str(tmp_path), "SPECGATE_STUB_LOG": str(log), **env},
        )
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        assert calls[-1]["speculative_config"]["num_speculative_tokens"] == ran
