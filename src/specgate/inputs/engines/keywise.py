"""A speculative dict (or SGLang's keywords) read key by key, some keys left unsettled.

A Python launcher's ``speculative_config={"method": "eagle3", "model": DRAFT,
"num_speculative_tokens": 5}`` with ``DRAFT`` from the environment: the loader reads the
literal keys and defers the others (:attr:`specgate.load.document.Document.deferred`).
vLLM reads each key of ``speculative_config`` as a field of its own
(``SpeculativeConfig``, vllm/config/speculative.py at v0.32.0), so ``DRAFT`` cannot
change ``method`` or ``num_speculative_tokens``; the draft's name can change the method
only through ``__post_init__``'s detection, which keeps ``eagle``, ``eagle3``,
``dflash`` and ``dspark`` whatever the draft is named (data ``kept_methods``), and D
only when ``num_speculative_tokens`` is unset (the draft's ``n_predict``).

:func:`deferred_keys` gives the block keys the reader must treat as unsettled, and
:func:`judged` keeps the configuration read when the deferred keys leave D and the
method settled (the first deferred value rides on it: SG313/SG314), else raises the
first deferred value as before (the claims file's values used)
(docs/engines.md#unsettled-values).

SGLang's ``sgl.Engine(**kwargs)`` builds ``ServerArgs(**kwargs)``, each keyword a field
of its own (sglang 0.5.23 python/sglang/srt/entrypoints/engine.py ``Engine.__init__``):
a keyword of :data:`specgate.load.python_launcher.SGLANG_KEYWISE` or
:data:`~specgate.load.python_launcher.SGLANG_RESOLVED` left unsettled is deferred alone
(:func:`deferred_options`) and stands in the options as set with its value not known
(:func:`placeholders`); the SGLang reader leaves D (and, for a draft path that decides
it, the method) to the claims file (:func:`specgate.inputs.engines.sglang.unsettled_parts`);
any other unsettled speculative keyword (``speculative_algorithm``) leaves the whole call
unsettled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from specgate.core.errors import UnsettledValue
from specgate.inputs.engines._source import UNSETTLED, Opt, Options
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, NodePath, Span

#: Per engine, the block keys that may stay unsettled while the rest is read.
_DEFERRABLE = {"vllm": frozenset({"model"})}


def deferred_keys(doc: Document, path: NodePath) -> dict[str, UnsettledValue]:
    """The deferred values under the configuration at ``path`` of ``doc``, by the
    key of its speculative block (``model``)."""
    out: dict[str, UnsettledValue] = {}
    for where, exc in doc.deferred.items():
        if where[: len(path)] == path and len(where) == len(path) + 2:
            out.setdefault(str(where[-1]), exc)
    return out


def deferred_options(doc: Document, path: NodePath) -> dict[str, UnsettledValue]:
    """The deferred keywords of the configuration at ``path`` of ``doc`` itself (SGLang's
    ``Engine(speculative_draft_model_path=DRAFT, …)``: one ServerArgs field each)."""
    return {
        str(where[-1]): exc
        for where, exc in doc.deferred.items()
        if where[: len(path)] == path and len(where) == len(path) + 1
    }


def placeholders(opts: Options, doc: Document, path: NodePath) -> Options:
    """``opts`` with each deferred keyword of the configuration present, its value
    :data:`~._source.UNSETTLED` at its line: set, though its value is not known, so no
    check reads it as unset and none compares it."""
    top = deferred_options(doc, path)
    if not top:
        return opts
    out = dict(opts)
    for name, exc in top.items():
        out.setdefault(name, Opt(UNSETTLED, Span(exc.line or 1, exc.column or 1), spelled=name))
    return out


def judged(
    engine: str, config: EngineConfig, doc: Document, path: NodePath, found: object
) -> EngineConfig:
    """``config`` (read from ``found``, the configuration at ``path`` of ``doc``) with
    its first deferred value when none of them can change D or the method as ``engine``
    resolves them from the speculative dict as read, or (SGLang) from the keywords read
    each on its own (:func:`specgate.load.python_launcher.sglang_keywise`).

    Raises:
        UnsettledValue: a deferred value that may change D or the method.
    """
    top = deferred_options(doc, path)
    if top:
        from specgate.load.python_launcher import sglang_keywise

        algorithm = found.get("speculative_algorithm") if isinstance(found, Mapping) else None
        if engine != "sglang" or not all(sglang_keywise(k, algorithm) for k in top):
            raise next(iter(top.values()))
        return replace(config, deferred=next(iter(top.values())))
    deferred = deferred_keys(doc, path)
    if not deferred:
        return config
    spec = found.get("speculative_config") if isinstance(found, Mapping) else None
    block = spec if isinstance(spec, Mapping) else {}
    first = next(iter(deferred.values()))
    if not set(deferred) <= _DEFERRABLE.get(engine, frozenset()):
        raise first
    from specgate.inputs.engines.vllm_rules import KEPT_METHODS

    resolution = config.resolution
    kept = resolution.get("how") == "stated" and resolution.get("method") in KEPT_METHODS
    if not kept or "num_speculative_tokens" not in block or config.draft_length is None:
        raise first
    return replace(config, deferred=first)
