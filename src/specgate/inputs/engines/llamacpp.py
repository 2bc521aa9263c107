"""llama.cpp: ``llama-server`` (``llama-speculative``) command lines, in a text file or
a YAML scalar (llama-swap's ``cmd: >``).

Sources: ``ggml-org/llama.cpp:common/arg.cpp`` (flag names and defaults) across
builds; notes/domain.md §1.5. llama.cpp matches flags exactly (no abbreviations).
Older builds: ``-md/--model-draft``, ``--draft-max/--draft/--draft-n`` (default 16),
``--draft-min``, ``--draft-p-min`` (default 0.9, later 0.75). Newer builds:
``--spec-type``, ``--spec-draft-model``, ``--spec-draft-n-max`` (default 3), a Hugging Face draft
with ``--hf-repo-draft``/``-hfd``/``-hfrd``/``--spec-draft-hf``,
``--spec-draft-p-min`` (default 0). ``-ngld`` (draft GPU layers) alone configures
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from specgate.inputs.cmdline import Flag, FlagSpec
from specgate.inputs.engines._base import Builder, Context, Kind, as_float, as_int, as_str, opts_get
from specgate.inputs.engines._source import Options
from specgate.inputs.types import EngineConfig, Mechanism

PROGRAMS = ("llama-server", "llama-speculative", "llama-cli", "llama-speculative-simple")

FLAGS = FlagSpec(
    known={
        "--model": True,
        "--model-draft": True,
        "--draft-max": True,
        "--draft-min": True,
        "--draft-p-min": True,
        "--spec-type": True,
        "--gpu-layers-draft": True,
        "--spec-synth-len": True,
        "--spec-synth-rates": True,
    },
    aliases={
        "-m": "--model",
        "-md": "--model-draft",
        "--spec-draft-model": "--model-draft",
        # A draft fetched from Hugging Face (llama.cpp common/arg.cpp lists
        # `--spec-draft-hf, -hfd, -hfrd, --hf-repo-draft <user>/<model>[:quant]`).
        "--hf-repo-draft": "--model-draft",
        "--spec-draft-hf": "--model-draft",
        "-hfd": "--model-draft",
        "-hfrd": "--model-draft",
        "--draft": "--draft-max",
        "--draft-n": "--draft-max",
        "--spec-draft-n-max": "--draft-max",
        "--draft-n-min": "--draft-min",
        "--spec-draft-n-min": "--draft-min",
        "--spec-draft-p-min": "--draft-p-min",
        "-ngld": "--gpu-layers-draft",
        "--n-gpu-layers-draft": "--gpu-layers-draft",
    },
)

OLD_DEFAULT_DRAFT_MAX = 16
NEW_DEFAULT_DRAFT_MAX = 3

_SPEC_TYPES: Mapping[str, Mechanism] = {
    "draft-simple": "draft_model",
    "draft-eagle3": "eagle3",
    "draft-mtp": "mtp",
}


def _spec_type_mechanism(value: str) -> Mechanism:
    key = value.strip().lower()
    if key in _SPEC_TYPES:
        return _SPEC_TYPES[key]
    return "ngram" if key.startswith("ngram") else "other"


def detect_flags(flags: Mapping[str, Flag]) -> Kind | None:
    """``config`` with a draft model or a ``--spec-type`` other than ``none``;
    ``fragment`` for draft lengths without either; ``-ngld`` alone: nothing."""
    kind = flags.get("--spec-type")
    if "--model-draft" in flags or (kind is not None and (kind.value or "none") != "none"):
        return "config"
    if any(f in flags for f in ("--draft-max", "--draft-min", "--draft-p-min")):
        return "fragment"
    return None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise a llama-server command line.

    D = ``--draft-max`` / ``--spec-draft-n-max``; absent ⇒ the build's default
    (16 for the ``--draft-*`` generation, 3 for ``--spec-*``), said in ``notes``.
    D is a maximum when a p-min cut-off is in force (stated > 0, or the old builds'
    default 0.75–0.9) or for n-gram types. N_verify = D + 1.

    Raises:
        InputError: a value of the wrong type.
    """
    b = Builder("llamacpp", ctx)
    new_build = any((o.spelled or "").startswith("--spec-") for o in opts.values())
    kind = opts_get(opts, "spec_type")
    draft_opt = opts_get(opts, "model_draft")
    b.at("draft_model", draft_opt)
    if kind is not None and as_str(kind).strip().lower() != "none":
        b.at("mechanism", kind)
        mechanism = _spec_type_mechanism(as_str(kind))
    else:
        b.at("mechanism", draft_opt)
        mechanism = "draft_model"
    d_opt = opts_get(opts, "draft_max")
    if d_opt is not None:
        b.at("draft_length", d_opt)
        d = as_int(d_opt, "--draft-max", ctx.file)
    else:
        d = NEW_DEFAULT_DRAFT_MAX if new_build else OLD_DEFAULT_DRAFT_MAX
        b.note(
            f"draft length not set: llama.cpp's default is {d} in "
            f"{'builds with --spec-* flags' if new_build else 'builds with --draft-* flags'}"
            " (version-sensitive)"
        )
    p_opt = opts_get(opts, "draft_p_min")
    if p_opt is not None:
        b.at("draft_length_is_max", p_opt)
        adaptive = as_float(p_opt, "--draft-p-min", ctx.file) > 0
    else:
        adaptive = not new_build
        if adaptive:
            b.note(
                "--draft-p-min not set: older llama.cpp builds stop drafting below "
                "p 0.75–0.9 by default, so D is a maximum"
            )
    lossy = False
    for name in ("spec_synth_len", "spec_synth_rates"):
        opt = opts_get(opts, name)
        if opt is not None:
            b.at("lossy_acceptance", opt)
            b.issue(
                "SG304",
                f"--{name.replace('_', '-')} makes acceptance synthetic",
                "lossy_acceptance",
            )
            lossy = True
    return b.build(
        mechanism=mechanism,
        draft_length=d,
        verify_tokens=d + 1,
        draft_length_is_max=adaptive or mechanism == "ngram",
        lossy_acceptance=lossy,
        draft_model=as_str(draft_opt) if draft_opt is not None else None,
    )
