"""Reading an engine config made of many shell commands is linear in their number, as
ratios measured in one run (docs/trust.md#bounded-work: no number a hostile file holds sets how
long we loop).

Run: ``.venv/bin/python benchmarks/bench_many_commands.py``. In process, fastest of 3
runs, :func:`specgate.inputs.engines.read_engine_config` on 1,000 and 4,000 commands
(each ``export Ai=1; x -y``, then one ``llama-server`` command configured by a
``LLAMA_ARG_*`` prefix):

- a whole text file;
- a Compose ``command: |`` literal block;
- a Compose ``command: >`` folded block (each command ending with ``;``);
- a Compose file of 1,000 and 4,000 services, each ``trtllm-serve --tp_size 2 MODEL
  --extra_llm_api_options configs/mtp3.yaml``, read from disk so that the options file
  is followed (each command was placed against a line index and a scan of the whole
  file built anew: 2,000 services took 23 s).

Linear work gives a ratio near 4. Before, each command copied every earlier export
(and built the scalar's line index, and searched the scalar from its start): 16 or
more (3,000 commands took 23 s).

Prints the ratios and ``PASS``/``FAIL``; exit 1 when one fails.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from timing import best

from specgate.inputs import cmdline
from specgate.inputs.engines import read_engine_config, read_engine_file
from specgate.inputs.engines._scalar import line_index
from specgate.load.document import Document
from specgate.load.yaml_loader import load_yaml_documents

TARGET = 8.0


def script(n: int) -> str:
    lines = [f"export A{i}=1; x -y" for i in range(n)]
    lines.append("LLAMA_ARG_SPEC_TYPE=draft-mtp llama-server -m /m/t.gguf")
    return "\n".join(lines) + "\n"


def compose(n: int, style: str) -> str:
    # a folded block joins its lines with spaces: each command ends with ";"
    body = "".join(f"      {line};\n" for line in script(n).splitlines())
    return f"services:\n  llama:\n    command: {style}\n{body}"


def read_text(text: str) -> None:
    cmdline._split_once.cache_clear()  # time the reading, not the cache
    doc = Document(file="serve.sh", data=text)
    config = read_engine_config(doc, shown="serve.sh", pointer=None, engine=None, text=text)
    assert config.mechanism == "mtp"


def read_yaml(text: str) -> None:
    cmdline._split_once.cache_clear()
    doc = load_yaml_documents(text, "compose.yaml")
    config = read_engine_config(doc, shown="compose.yaml", pointer=None, engine=None, text=text)
    assert config.mechanism == "mtp"


MTP3 = Path(__file__).resolve().parents[1] / (
    "tests/data/real/tensorrt-llm/config/curated-qwen3.8-low-latency-mtp3.yaml"
)


def services(n: int) -> str:
    return "services:\n" + "".join(
        f"  s{i}:\n    command: trtllm-serve --tp_size 2 m{i} "
        "--extra_llm_api_options configs/mtp3.yaml\n"
        for i in range(n)
    )


def read_launchers(text: str) -> None:
    cmdline._split_once.cache_clear()
    line_index.cache_clear()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / ".git").mkdir()
        (root / "configs").mkdir()
        shutil.copyfile(MTP3, root / "configs" / "mtp3.yaml")
        (root / "compose.yaml").write_text(text, encoding="utf-8")
        config = read_engine_file(root / "compose.yaml", "compose.yaml")
    assert config.mechanism == "mtp"


def main() -> int:
    failed = False
    cases: dict[str, tuple[Callable[[str], None], Callable[[int], str]]] = {
        "text file": (read_text, script),
        "literal block": (read_yaml, lambda n: compose(n, "|")),
        "folded block": (read_yaml, lambda n: compose(n, ">")),
        "services naming an options file": (read_launchers, services),
    }
    for name, (read, make) in cases.items():
        small, large = make(1_000), make(4_000)
        slow = best(lambda text=large, read=read: read(text))
        ratio = slow / best(lambda text=small, read=read: read(text))
        ok = ratio < TARGET
        failed |= not ok
        print(f"{name}: 4,000 / 1,000 commands = {ratio:.1f}x  {'PASS' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
