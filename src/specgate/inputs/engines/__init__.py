"""Engine serving-config readers: one module per engine, registered in
:mod:`.registry`; this package only says what it offers.

- :func:`load_engine_document` — read a referenced engine config file;
- :func:`read_engine_config` — find the one speculative configuration in a parsed
  document (pointer or search) and normalise it to
  :class:`~specgate.inputs.types.EngineConfig`;
- :func:`read_engine_file` — both, passing the source text so words inside
  multi-line YAML scalars get their exact line;
- :func:`configures_nothing` — whether an input error says the file configures no
  speculation at all;
- :func:`~specgate.inputs.engines.vllm.mtp_layer_issue` — vLLM's MTP-layer check
  once the model config is known;
- :func:`with_models` — what the engine makes of the target and draft configs it
  loads (a method read from the draft's config, D from its ``n_predict``, a
  vocabulary it refuses);
- :data:`ENGINES` — the engines read, by name (:mod:`.registry`).
"""

from __future__ import annotations

from specgate.inputs.engines.read import (
    OtherEngine,
    configures_nothing,
    load_engine_document,
    read_engine_config,
    read_engine_file,
)
from specgate.inputs.engines.registry import ENGINES, with_models
from specgate.inputs.engines.vllm import mtp_layer_issue

__all__ = [
    "ENGINES",
    "OtherEngine",
    "configures_nothing",
    "load_engine_document",
    "mtp_layer_issue",
    "read_engine_config",
    "read_engine_file",
    "with_models",
]
