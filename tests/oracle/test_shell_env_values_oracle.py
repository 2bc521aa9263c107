"""bash as the oracle of the values a script's ``export NAME=...`` and ``NAME=... cmd``
give the engine's environment (docs/engines.md#environment-values): each value specgate
settles is what bash gives the engine, and each it leaves unsettled is
:data:`UNSETTLED`, never its text as written (``export SGLANG_ENABLE_SPEC_V2=$V2`` was
read as the text ``$V2``: not a truth word, spec v2 off).

Each script runs under bash with an environment of only ``PATH`` (a stub ``python3``
that prints the variable it was given, nothing else), then again with ``V2=outer`` (a
variable of the environment the script runs in). A value specgate settles must equal
the first run's (a name it does not hold: unset); one it leaves unsettled must differ
between the two runs or come from the repository in a way not followed (``$(…)``, a
sourced file, ``set -a``). Skipped without bash.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.inputs.engines._source import ANY_NAME, UNSETTLED, commands_of
from specgate.inputs.engines.environment import command_env
from specgate.load.document import Document

BASH = shutil.which("bash")
STUB = """#!/usr/bin/python3 -S
import json, os
print(json.dumps(os.environ.get("S")))
"""
RUN = "python3 -m sglang.launch_server --model-path m\n"
#: the lines before the engine's command, and the engine's command's own prefix
SCRIPTS: list[tuple[str, str]] = [
    ("export S=$V2\n", ""),
    ('export S="$V2"\n', ""),
    ("export S=${V2:-1}\n", ""),
    ("export S=${V2-}\n", ""),
    ("", "S=$V2 "),
    ("", "S=${V2:+x} "),
    ("", "S=1 "),
    ("X=1\nexport S=$X\n", ""),
    ("X=1\nexport S=${X}on\n", ""),
    ("export S='$V2'\n", ""),
    ("export S=a\n", "S=b "),
    ("export S=$V2\nS=1\n", ""),
    ("X=$V2\nX=1\nexport S=$X\n", ""),
    ("export S=1\nif [ -n \"$V2\" ]; then S=$V2; fi\n", ""),
    ("export S=$(echo 1)\n", ""),
    ("", "S=`echo 1` "),
    # a sourced file specgate does not read (it exports S=1 here), `set -a`: any name
    (". ./more.sh\n", ""),
    ("set -a\nS=1\n", ""),
    ("set -e\nS=1\n", ""),
]


def _run(script: Path, bin_dir: Path, outer: dict[str, str]) -> object:
    assert BASH is not None
    out = subprocess.run(
        [BASH, str(script)], check=True, capture_output=True, text=True, timeout=60,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **outer}, cwd=script.parent,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@pytest.mark.parametrize(("before", "prefix"), SCRIPTS)
def test_the_engines_variables_are_bashs_or_unsettled(
    tmp_path: Path, before: str, prefix: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STUB)
    (bin_dir / "python3").chmod(0o755)
    text = "#!/bin/bash\n" + before + prefix + RUN
    script = tmp_path / "serve.sh"
    script.write_text(text)
    (tmp_path / "more.sh").write_text("export S=1\n")
    plain = _run(script, bin_dir, {})
    outer = _run(script, bin_dir, {"V2": "outer"})
    doc = Document(file="serve.sh", data=text)
    (source,) = [s for s in commands_of(text, doc, (), text) if s.command.argv[:1] == ("python3",)]
    env = command_env(source)
    opt = env.get("S") or env.get(ANY_NAME)
    value = opt.value if opt is not None else None
    if value is UNSETTLED:
        assert plain != outer or any(w in text for w in ("echo 1", "more.sh", "set -a")), text
    else:
        assert value == plain, text
