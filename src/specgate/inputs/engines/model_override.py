"""A launcher option that overrides the model configs before the engine reads them
(docs/engines.md#refusals-and-rewrites): SGLang's ``--json-model-override-args``, a JSON
object ``get_config`` applies to the target's and the draft's Hugging Face config with
``config.update`` (sglang 0.5.23 wheel ``configs/model_config.py:962``,
``utils/hf_transformers/config.py:356-357``; the same in every wheel read back to
0.4.4.post4, ``hf_transformers_utils.py:92``, ``managers/tp_worker.py:69``).

The engine's data names such options (table ``model_config_override``, JSON objects);
no flag is spelled here. A settled object is read into the facts the engine's checks
compare (``fact.ROLE.config.KEY``, ``fact.ROLE.keys``); one set but not settled, or not a
JSON object Python's ``json.loads`` reads as the engine does, leaves every model-config
fact in doubt, so a check that reads them warns instead of failing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from specgate.inputs.engines._source import UNSETTLED, Opt
from specgate.inputs.knowledge import EngineKnowledge
from specgate.inputs.types import EngineIssue

_TABLE = "model_config_override"
#: Facts derived from several config keys (counted, looked up): an override of the
#: config leaves them unknown rather than stale.
_DERIVED = ("mtp_layers", "mtp_known", "mla")
_ROLES = ("target", "draft")


def model_override(
    data: EngineKnowledge, options: Mapping[str, Opt]
) -> tuple[Mapping[str, object] | None, str]:
    """The override object the configuration sets, and why it is in doubt.

    Returns:
        ``(object, "")`` when settled (``{}`` when set empty), ``(None, why)`` when set
        but not settled or not a JSON object, ``(None, "")`` when not set.
    """
    if not data.has_table(_TABLE):
        return None, ""
    for key in data.table(_TABLE):
        opt = options.get(key)
        if opt is None or opt.value is None:
            continue
        spelled = opt.spelled or key
        if opt.value is UNSETTLED or not isinstance(opt.value, str):
            return None, f"{spelled} is set to a value specgate does not settle"
        try:
            parsed = json.loads(opt.value)
        except (ValueError, RecursionError):
            return None, f"{spelled} is not JSON the engine reads (json.loads raises)"
        if not isinstance(parsed, dict):
            return None, f"{spelled} is not a JSON object"
        return parsed, ""
    return None, ""


def overridden(facts: Mapping[str, object], override: Mapping[str, object]) -> dict[str, object]:
    """``facts`` with the override's keys set in each model config read: its scalars
    as ``ROLE.config.KEY`` (a nested object's as ``KEY.SUB``, as the configs' own are
    read), its keys added to ``ROLE.keys``, and the facts derived from several keys
    left unknown when it sets any key."""
    out = dict(facts)
    if not override:
        return out
    for role in _ROLES:
        if not out.get(f"{role}.read"):
            continue
        keys = out.get(f"{role}.keys")
        old = list(keys) if isinstance(keys, list) else []
        out[f"{role}.keys"] = old + [k for k in override if k not in old]
        for key, value in override.items():
            out.pop(f"{role}.config.{key}", None)
            if isinstance(value, Mapping):
                out.update((f"{role}.config.{key}.{sub}", v) for sub, v in value.items())
            else:
                out[f"{role}.config.{key}"] = value
        for name in ("model_type", "vocab_size"):
            if name in override:
                out[f"{role}.{name}"] = override[name]
        if "architectures" in override:
            archs = override["architectures"]
            out[f"{role}.architectures"] = archs if isinstance(archs, list) else None
            out[f"{role}.architecture"] = (
                archs[0] if isinstance(archs, list) and archs else None
            )
        for name in _DERIVED:
            out[f"{role}.{name}"] = None
    return out


def reads_model_config(when: object) -> bool:
    """Whether a check's condition reads a model config's facts (``fact.target.…``,
    ``fact.draft.…``, ``fact.vocab_difference``)."""
    text = repr(when)
    return any(f"'fact.{name}" in text for name in (*_ROLES, "vocab_difference"))


def lowered(issue: EngineIssue, why: str) -> EngineIssue:
    """``issue`` as a warning, because the model configs it read may be overridden."""
    if issue.severity not in ("fail", "if-claimed"):
        return issue
    note = (
        f"{why}: it overrides the model configs this rests on before the engine reads "
        "them, so a warning, not a fail"
    )
    return replace(
        issue, severity="warn", details="; ".join(p for p in (issue.details, note) if p)
    )
