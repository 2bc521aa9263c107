"""Linear parsing of hostile inputs (hostile findings H4, H5; docs/trust.md#bounded-work), as ratios
measured in one run.

Run: ``.venv/bin/python benchmarks/bench_linear.py``. In process, fastest of 3 runs:

- H5: :func:`specgate.inputs.cmdline.split_commands` on one command holding a word of
  100,000 and of 1,000,000 characters (plain, single-quoted, escaped quotes). Linear
  work gives a ratio near 10; shlex's character-by-character words gave about 100.
- H4: :func:`specgate.inputs.pointer.find_configuration` through 100 and 300 levels of
  YAML text nested in strings with a pointer naming every level (refused at
  ``MAX_POINTER_EMBEDDED``). The file grows with the square of the levels (9×); the
  time may grow as much, no more (it grew as the cube: 27×).

Prints the ratios and ``PASS``/``FAIL``; exit 1 when one fails.
"""

from __future__ import annotations

import contextlib
import sys

from timing import best

from specgate.core.errors import InputError
from specgate.inputs import cmdline, pointer
from specgate.inputs.cmdline import split_commands
from specgate.load.yaml_loader import load_yaml

SPLIT_TARGET = 20.0
POINTER_TARGET = 15.0


def split(text: str) -> None:
    cmdline._split_once.cache_clear()  # time the split, not the cache
    split_commands(text)


def words(n: int) -> dict[str, str]:
    return {
        "plain": "vllm serve m --x=" + "a" * n + "\n",
        "single-quoted": "vllm serve m '" + "a b" * (n // 3) + "'\n",
        "escaped quotes": 'vllm serve m "' + '\\"' * (n // 2) + '"\n',
    }


def nested(levels: int) -> str:
    text = "speculative_config: {method: ngram, num_speculative_tokens: 4}\n"
    for _ in range(levels):
        text = "x.yaml: |\n" + "".join("  " + line + "\n" for line in text.splitlines())
    return text


def resolve(text: str, levels: int) -> None:
    pointer.embedded_yaml_document.cache_clear()
    data = load_yaml(text, "e.yaml").data
    with contextlib.suppress(InputError):
        pointer.find_configuration(
            data, lambda _node: [], file="e.yaml", pointer="/x.yaml" * levels
        )


def main() -> int:
    failed = False
    small, large = words(100_000), words(1_000_000)
    for shape in small:
        big, little = large[shape], small[shape]
        ratio = best(lambda: split(big)) / best(lambda: split(little))  # noqa: B023
        ok = ratio <= SPLIT_TARGET
        failed |= not ok
        print(f"H5 split, {shape}: 1 MB / 100 kB = {ratio:.1f}x  {'PASS' if ok else 'FAIL'}")
    few, many = nested(100), nested(300)
    ratio = best(lambda: resolve(many, 300)) / best(lambda: resolve(few, 100))
    ok = ratio <= POINTER_TARGET
    failed |= not ok
    print(f"H4 pointer, 300 / 100 levels = {ratio:.1f}x  {'PASS' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
