"""The engines specgate reads, registered in one place: one :class:`Engine` record
per engine (its module, programs, flags and detectors). Every list of engines a user
sees (the claims schema's ``engine`` enum, :data:`specgate.core.vocabulary.Engine`,
README's engine table) is this one or checked against it by a test
(``tests/inputs/test_engine_registry.py``).

A new engine is one module (``inputs/engines/NAME.py``: ``PROGRAMS``, ``FLAGS``,
``detect_*``, ``read``), one data file (``data/engines/NAME.json``) and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from specgate.inputs.cmdline import Flag, FlagSpec
from specgate.inputs.engines import (
    llamacpp,
    mlxlm,
    sglang,
    tgi,
    transformers,
    trtllm,
    vllm,
    vllm_dotted,
)
from specgate.inputs.engines._base import Context, Kind
from specgate.inputs.engines._source import (
    CommandSource,
    Opt,
    Options,
)
from specgate.inputs.types import EngineConfig, ModelShape

#: ``(config, target, draft) -> config``: an engine's reading of the model configs.
ModelsReader = Callable[[EngineConfig, "ModelShape | None", "ModelShape | None"], EngineConfig]


def _vllm_models(
    config: EngineConfig, target: ModelShape | None, draft: ModelShape | None
) -> EngineConfig:
    from specgate.inputs.engines.vllm_rules import with_models as vllm_models

    return vllm_models(config, target, draft)


@dataclass(frozen=True)
class Engine:
    """How to recognise and read one engine's format."""

    name: str
    programs: tuple[str, ...]
    read: Callable[[Options, Context], EngineConfig]
    detect_mapping: Callable[[Mapping[object, object]], Kind | None] | None = None
    flags: FlagSpec | None = None
    detect_flags: Callable[[CommandSource], Kind | None] | None = None
    #: The command's options read with the given flags (the engine's, with the
    #: recorded parser of the version in force: EngineKnowledge.flags_at).
    command_options: Callable[[CommandSource, FlagSpec], Options] | None = None
    #: The options that are the engine's own flags or keys (a bare speculative block
    #: holds none); SG310 looks only at these.
    settings_of: Callable[[Options], Options] = lambda opts: opts
    #: Options completed by the environment (llama.cpp ``LLAMA_ARG_*``); an engine
    #: with this reads a mapping it detects as a container: its command and env.
    env_options: Callable[[Options, Mapping[str, Opt]], Options] | None = None
    #: What the engine makes of the target and draft model configs it loads
    #: (:func:`with_models`); None: nothing more.
    models: ModelsReader | None = None
    #: Whether the served model's config alone turns speculation on (TGI: Medusa heads
    #: or an MLP speculator); with it, a launch of the engine that sets no speculative
    #: flag is its configuration (:func:`launched_by_model`).
    speculating_model: Callable[[ModelShape], bool] | None = None
    #: Whether a mapping is a container of the engine's image (its launch).
    launch_mapping: Callable[[Mapping[object, object]], bool] | None = None

    @property
    def data_file(self) -> str:
        """The engine's data file, under ``specgate/data/engines/``."""
        return f"{self.name}.json"


def flags_detector(
    spec: FlagSpec, detect: Callable[[Mapping[str, Flag]], Kind | None]
) -> Callable[[CommandSource], Kind | None]:
    return lambda source: detect(source.flags(spec))


ENGINES: Mapping[str, Engine] = {
    "vllm": Engine(
        "vllm",
        vllm.PROGRAMS,
        vllm.read,
        vllm.detect_mapping,
        vllm.FLAGS,
        lambda s: vllm.detect_flags(
            s.flags(vllm.FLAGS), vllm_dotted.dotted_options(s.command.argv)
        ),
        vllm.command_options,
        vllm.engine_settings,
        models=_vllm_models,
    ),
    "sglang": Engine(
        "sglang",
        sglang.PROGRAMS,
        sglang.read,
        sglang.detect_mapping,
        sglang.FLAGS,
        flags_detector(sglang.FLAGS, sglang.detect_flags),
        models=lambda config, target, _draft: sglang.with_target(config, target),
    ),
    "trtllm": Engine("trtllm", trtllm.PROGRAMS, trtllm.read, trtllm.detect_mapping),
    "transformers": Engine(
        "transformers",
        (),
        transformers.read,
        transformers.detect_mapping,
        settings_of=transformers.settings_of,
    ),
    "llamacpp": Engine(
        "llamacpp",
        llamacpp.PROGRAMS,
        llamacpp.read,
        llamacpp.detect_mapping,
        llamacpp.FLAGS,
        llamacpp.detect_command,
        env_options=llamacpp.env_options,
    ),
    "tgi": Engine(
        "tgi",
        tgi.PROGRAMS,
        tgi.read,
        tgi.detect_mapping,
        tgi.FLAGS,
        tgi.detect_command,
        env_options=tgi.env_options,
        models=tgi.with_models,
        speculating_model=tgi.speculating_model,
        launch_mapping=tgi.runs_launcher,
    ),
    "mlxlm": Engine(
        "mlxlm",
        mlxlm.PROGRAMS,
        mlxlm.read,
        None,
        mlxlm.FLAGS,
        mlxlm.detect_command,
        mlxlm.command_options,
    ),
}


def with_models(
    config: EngineConfig, target: ModelShape | None, draft: ModelShape | None
) -> EngineConfig:
    """``config`` as the engine resolves it once it loads the target (``target``) and
    draft (``draft``) model configs; unchanged for engines that read nothing more."""
    engine = ENGINES.get(config.engine)
    if engine is None or engine.models is None:
        return config
    return engine.models(config, target, draft)


def launched_by_model(target: ModelShape) -> frozenset[str]:
    """The engines whose launch speculates with ``target`` (the served model's config)
    although it sets no speculative flag (TGI serving a Medusa model,
    docs/engines.md#engines-read)."""
    return frozenset(
        name
        for name, e in ENGINES.items()
        if e.speculating_model is not None and e.speculating_model(target)
    )
