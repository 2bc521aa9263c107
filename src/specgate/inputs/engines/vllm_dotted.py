"""vLLM's dotted ``--speculative-config.KEY VALUE`` words (docs/engines.md#dotted-options)."""

from __future__ import annotations

from specgate.inputs.engines._source import norm_key
from specgate.inputs.knowledge import knowledge

#: Prefixes of ``--speculative-config.KEY VALUE`` words (and the ``-sc.KEY`` short form).
DOTTED_PREFIXES = tuple(
    f"{spelling}."
    for spelling in knowledge("vllm").setting("--speculative-config").spellings()  # type: ignore[union-attr]
)


def dotted_options(argv: tuple[str, ...]) -> dict[str, tuple[str, int]]:
    """``--speculative-config.KEY VALUE`` / ``-sc.KEY VALUE`` / ``=VALUE`` words →
    {KEY: (VALUE, word index)}, the block vLLM's parser makes of them: the keys of the
    spelling met last among those written (:func:`dotted_groups`)."""
    groups = dotted_groups(argv)
    return groups[-1] if groups else {}


def dotted_groups(argv: tuple[str, ...]) -> list[dict[str, tuple[str, int]]]:
    """The dotted words of each spelling (``--speculative-config.``, ``-sc.``), in the
    order each spelling is first met. FlexibleArgumentParser.parse_args gathers them
    into one dict per spelling (the name before the first ``.``, ``_`` read as ``-``
    after ``--``) and appends each as a last ``SPELLING JSON``, in that order, so
    argparse keeps the last one whole: ``-sc.method X --speculative-config.KEY V``
    gives ``{KEY: V}`` (vllm/utils/argparse_utils.py:404-465 at v0.32.0;
    vllm/utils/__init__.py:1779-1821 at v0.10.0; the recorded answers
    vllm-0857/0861-random-cli at 0.32.0)."""
    groups: dict[str, dict[str, tuple[str, int]]] = {}
    for i, word in enumerate(argv):
        name, eq, inline = word.partition("=")
        head = name.replace("_", "-")
        if not head.startswith(DOTTED_PREFIXES):
            continue
        spelling, _, rest = name.partition(".")
        if spelling.startswith("--"):
            spelling = spelling.replace("_", "-")
        key = norm_key(rest)
        if eq:
            groups.setdefault(spelling, {})[key] = (inline, i)
        elif i + 1 < len(argv):
            groups.setdefault(spelling, {})[key] = (argv[i + 1], i + 1)
    return list(groups.values())
