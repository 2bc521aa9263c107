"""Commands in prose and shell fields cost what the plain command text costs, as ratios
measured in one run (docs/engines.md#command-lines-and-launchers; docs/trust.md#bounded-work: linear
work).

Run: ``.venv/bin/python benchmarks/bench_prose.py``. In process, fastest of 3 runs of
:func:`specgate.inputs.cmdline.split_commands` (its cache cleared):

- a Markdown guide of 1,000 and 4,000 sections (a prose paragraph with apostrophes, a
  ``bash`` block with one command, a ``python`` block): 4,000 / 1,000 near 4 is linear;
- the same guide against the same text as a shell script (every line but the commands
  a ``#`` comment: as long, no fences): the prose masking and the per-block quote check
  may cost at most 2× the splitting itself;
- a script of 1,000 and 4,000 ``F="--a 1 --b 2"`` / ``cmd $F "$F"`` pairs (expansion and
  field splitting): 4,000 / 1,000 near 4;
- one line of 200,000 and 800,000 intra-word apostrophes (``a'b``), the prose rule's
  worst case: near 4.

Prints the ratios and ``PASS``/``FAIL``; exit 1 when one fails.
"""

from __future__ import annotations

import sys

from timing import best

from specgate.inputs import cmdline

LINEAR = 8.0
PROSE_OVER_SCRIPT = 2.0

SECTION = (
    "## Step {i}\n\nIt's Meta's model; don't forget the flag.\n\n```bash\n"
    "vllm serve m{i} --speculative-config "
    "'{{\"method\":\"ngram\",\"num_speculative_tokens\":4}}'\n"
    "```\n\n```python\nprint('it''s {i}')\n```\n"
)


def split(text: str) -> None:
    cmdline._split_once.cache_clear()
    cmdline.split_commands(text)


def guide(n: int) -> str:
    return "".join(SECTION.format(i=i) for i in range(n))


def script(n: int) -> str:
    """The guide with every line but its commands commented out (the same length)."""
    return "".join(
        line if line.startswith("vllm") or not line else "#" + line[1:]
        for line in guide(n).splitlines(keepends=True)
    )


def fields(n: int) -> str:
    return "".join(f'F{i}="--a {i} --b 2"\ncmd $F{i} "$F{i}"\n' for i in range(n))


def apostrophes(n: int) -> str:
    return "a'b " * n + "\n"


def main() -> int:
    failed = False
    for name, make, small, large in (
        ("guide", guide, 1_000, 4_000),
        ("fields", fields, 1_000, 4_000),
        ("apostrophes", apostrophes, 200_000, 800_000),
    ):
        a, b = make(small), make(large)
        ratio = best(lambda b=b: split(b)) / best(lambda a=a: split(a))
        ok = ratio < LINEAR
        failed |= not ok
        print(f"{name}: {large:,} / {small:,} = {ratio:.1f}x  {'PASS' if ok else 'FAIL'}")
    text, plain = guide(4_000), script(4_000)
    assert len(text) == len(plain)
    ratio = best(lambda: split(text)) / best(lambda: split(plain))
    ok = ratio < PROSE_OVER_SCRIPT
    failed |= not ok
    print(f"guide / the same text as a script (4,000) = {ratio:.2f}x  {'PASS' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
