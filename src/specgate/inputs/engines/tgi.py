"""Hugging Face Text Generation Inference: ``text-generation-launcher`` command lines
and containers configured by its environment.

What is known (flags, variables, the speculators a model config selects, the image
names) is data: ``specgate/data/engines/tgi.json``, read from
``huggingface/text-generation-inference:launcher/src/main.rs@v3.3.7`` and
``server/text_generation_server/models/__init__.py@v3.3.7`` (``get_model``).

- ``--speculate N`` (clap ``long, env``: also ``SPECULATE=N``; exact names, no
  abbreviations) is D. The mechanism is the served model's (``--model-id``): a config
  with ``medusa_num_heads`` runs Medusa, ``model_type: mlp_speculator`` an MLP
  speculator, any other model n-gram speculation. Only the model config settles it
  (:func:`with_models`); from the command alone the mechanism is not read.
- A Medusa or MLP-speculator model without ``--speculate`` drafts with all its heads;
  ``--speculate`` above them is refused at start ("Speculate is set to `N` but this
  medusa models only has `H` heads, please make them match").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from specgate.inputs.engines._base import Builder, Context, Kind, as_int, bounded, opts_get
from specgate.inputs.engines._source import (
    ENV_KEYS,
    UNSETTLED,
    CommandSource,
    Opt,
    Options,
    env_items,
    norm_key,
    run_env,
)
from specgate.inputs.engines.code_refusals import Refusal, judged
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig, EngineIssue, ModelShape

PROGRAMS = ("text-generation-launcher",)

_DATA = knowledge("tgi")
FLAGS = _DATA.flags()
#: Variable → the flag it stands for (clap ``env``).
ENV_FLAGS: Mapping[str, str] = _DATA.table("env_flags")
#: The speculators whose one forward drafts every token (Medusa heads).
_ONE_PASS = frozenset(_DATA.table("one_pass_speculators"))
_SOURCE = "server/text_generation_server/models/__init__.py get_model, TGI v3.3.7"


def _text(value: object) -> str | None:
    """A variable's value as the launcher's environment holds it; None when unset."""
    if value is None or isinstance(value, (Mapping, list)):
        return None
    text = str(value).strip()
    return text or None


def env_options(opts: Options, env: Mapping[str, Opt]) -> Options:
    """``opts`` completed by ``SPECULATE`` and ``MODEL_ID`` in ``env``; a flag on the
    command line wins (clap reads the variable only for a flag not given)."""
    merged: Options = {}
    for variable, flag in ENV_FLAGS.items():
        opt = env.get(variable)
        # a value not settled stays so (set, never compared)
        value: object = (
            opt.value if opt is not None and opt.value is UNSETTLED
            else _text(opt.value) if opt is not None else None
        )
        if opt is not None and value is not None:
            merged[norm_key(flag)] = Opt(value, opt.span, spelled=variable)
    return {**merged, **opts}


def detect_command(source: CommandSource) -> Kind | None:
    """``config`` when the command sets ``--speculate`` or runs with ``SPECULATE``
    set before it (``SPECULATE=2 text-generation-launcher …``, ``docker run -e``)."""
    if "--speculate" in source.flags(FLAGS):
        return "config"
    env = {**source.command.env, **{k: v for k, (v, _) in run_env(source.command.argv).items()}}
    if _text(env.get("SPECULATE")) is not None and source.command.argv:
        return "config"
    return None


def runs_launcher(data: Mapping[object, object]) -> bool:
    """Whether ``data`` is a container or service of a TGI image (the image runs
    ``text-generation-launcher`` itself)."""
    image = data.get("image")
    return isinstance(image, str) and any(name in image for name in _DATA.images)


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` for a container or service of a TGI image whose environment sets
    ``SPECULATE`` (the image runs ``text-generation-launcher`` itself)."""
    if not runs_launcher(data):
        return None
    for key in ENV_KEYS:
        for name, value, _ in env_items(data.get(key)):
            if name == "SPECULATE" and _text(value) is not None:
                return "config"
    return None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise a TGI launch: D = ``--speculate`` (``SPECULATE``), N_verify = D + 1;
    the mechanism is left to the model config (:func:`with_models`).

    Raises:
        InputError: a value that is not a count of tokens.
    """
    b = Builder("tgi", ctx)
    speculate = opts_get(opts, "speculate")
    d: int | None = None
    served = opts_get(opts, "model_id")
    if speculate is None and served is not None:
        # a launch without --speculate speculates through the model it serves
        # (speculating_model): the mechanism is --model-id's
        b.at("mechanism", served)
    if speculate is not None:
        b.at("draft_length", speculate)
        b.at("mechanism", speculate)
        d = bounded(b, as_int(speculate, "--speculate", ctx.file), "--speculate", "draft_length",
                    minimum=0)
        if d == 0:
            b.note("--speculate 0: TGI speculates on no input ids (speculation off)")
    b.note(
        "TGI's mechanism is the served model's: Medusa when its config has "
        "medusa_num_heads, an MLP speculator for model_type mlp_speculator, else n-gram "
        f"({_SOURCE}); the model config settles it"
    )
    return b.build(
        mechanism=None,
        draft_length=d,
        verify_tokens=None if d is None else d + 1,
    )


def _heads(model: ModelShape) -> tuple[str, int | None] | None:
    """The speculator a model config selects and its head count, else None."""
    heads = model.scalars.get("medusa_num_heads")
    if "medusa_num_heads" in model.keys:
        count = heads if isinstance(heads, int) and not isinstance(heads, bool) else None
        return "medusa", count
    if model.model_type == "mlp_speculator":
        return "mlp_speculator", model.n_predict
    return None


def speculating_model(model: ModelShape) -> bool:
    """Whether ``model``, the served model's config, turns speculation on without
    ``--speculate``: Medusa heads or an MLP speculator's ``n_predict``, at least one
    (``get_model`` sets speculate to them when it is unset; ``_SOURCE``)."""
    found = _heads(model)
    return found is not None and found[1] is not None and found[1] > 0


def with_models(
    config: EngineConfig, target: ModelShape | None, draft: ModelShape | None
) -> EngineConfig:
    """What TGI makes of the served model's config (``target``): the speculator it
    selects, D from its heads when ``--speculate`` is unset, and the refusal of a
    ``--speculate`` above them. A config with neither leaves the mechanism unsettled
    (n-gram only if it is ``--model-id``'s own config, which specgate cannot tell)."""
    if target is None:
        return config
    found = _heads(target)
    notes = list(config.notes)
    issues = list(config.issues)
    d = config.draft_length
    if found is None:
        # the config given may be the base model's while --model-id names a Medusa or
        # MLP-speculator repository: n-gram is likely, not settled (a fail may not rest
        # on it)
        notes.append(f"the model config ({target.path}) has no Medusa heads and is no MLP "
                     "speculator: TGI runs n-gram speculation if it is --model-id's config "
                     "(mechanism not settled)")
        return replace(config, notes=tuple(notes))
    method, heads = found
    if heads is not None and d is None:
        d = heads
        notes.append(f"--speculate not set: TGI drafts with all {heads} heads of the "
                     f"{method} model ({target.path})")
    elif heads is not None and d is not None and d > heads:
        kind = "medusa" if method == "medusa" else "mlp_speculator"
        issues.append(EngineIssue(
            "SG307",
            Refusal(
                f"TGI refuses to start: 'Speculate is set to `{d}` but this {kind} models "
                f"only has `{heads}` heads, please make them match' ({_SOURCE})"
            ),
            "draft_length",
        ))
        # read at v3.3.7 only: a fail there and after (code_refusals.judged)
        at = config.version_in_force
        pinned, low = (at.version, at.low) if at is not None else (None, None)
        issues = list(judged(issues, pinned, low, _DATA.newest, "TGI"))
    passes = config.draft_passes
    if passes is None and method in _ONE_PASS:
        passes = "single"
        notes.append(f"TGI's {method} heads draft every token from one forward "
                     "(layers/medusa.py, TGI v3.3.7): draft passes single")
    return replace(
        config,
        mechanism="medusa" if method == "medusa" else "mlp_speculator",
        draft_passes=passes,
        draft_length=d,
        verify_tokens=None if d is None else d + 1,
        issues=tuple(issues),
        notes=tuple(notes),
    )


