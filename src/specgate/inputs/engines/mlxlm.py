"""MLX-LM: ``mlx_lm.server`` and ``mlx_lm.generate`` command lines (also as
``python -m mlx_lm.server`` and ``mlx_lm server``: ``mlx_lm/cli.py`` runs the
subcommand's module).

What is known is data: ``specgate/data/engines/mlxlm.json``, read from the argparse
parsers of ``ml-explore/mlx-lm:mlx_lm/server.py@v0.31.3`` and ``mlx_lm/generate.py``
at the same tag: ``--draft-model`` (a draft model: speculation on) and
``--num-draft-tokens`` (D, default 3). Every step drafts D tokens
(``speculative_generate_step``: ``min(max_tokens - ntoks, num_draft_tokens)``, fewer
only at the end of the output), so D is no maximum; N_verify = D + 1. The parsers are
argparse's, which reads a unique prefix of a flag as that flag (``--dr`` is
``--draft-model``; ``--d`` is ambiguous in ``server.py``, which also has
``--decode-concurrency``); the whole parsers were not recorded, so specgate reads the
exact names and calls a prefix of a speculative flag unsettled (the repository's: SG314
at its line, docs/engines.md#unsettled-values: write the flag in full), never a value it
may not be.
"""

from __future__ import annotations

from collections.abc import Mapping

from specgate.core.errors import UnsettledValue
from specgate.inputs.cmdline import Flag, FlagSpec
from specgate.inputs.engines._base import Builder, Context, Kind, as_int, as_str, bounded, opts_get
from specgate.inputs.engines._source import CommandSource, Options
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig

PROGRAMS = ("mlx_lm.server", "mlx_lm.generate", "mlx_lm")

_DATA = knowledge("mlxlm")
FLAGS = _DATA.flags()


#: The flags that configure speculation, whose abbreviations are not settled.
_SPECULATIVE = ("--draft-model", "--num-draft-tokens")


def _abbreviation(word: str) -> str | None:
    """``word``'s option part when it is a proper prefix of a speculative flag (what
    argparse may read as that flag), else None."""
    name = word.partition("=")[0]
    speculative = any(flag.startswith(name) for flag in _SPECULATIVE)
    if len(name) > 2 and name.startswith("--") and name not in _SPECULATIVE and speculative:
        return name
    return None


def detect_command(source: CommandSource) -> Kind | None:
    """:func:`detect_flags` over the command's flags; ``config`` also for an MLX-LM
    program's command holding an abbreviation of a speculative flag (read, then refused
    as unsettled by :func:`command_options`)."""
    argv = source.command.argv
    if _runs_mlx_lm(argv) and any(_abbreviation(word) for word in argv):
        return "config"
    return detect_flags(source.flags(FLAGS))


def _runs_mlx_lm(argv: tuple[str, ...]) -> bool:
    """Whether one of the command's first words is an MLX-LM program (``mlx_lm.server``,
    ``python -m mlx_lm.generate``): only then is a prefix of its flags its own."""
    return any(word.rsplit("/", 1)[-1] in PROGRAMS for word in argv[:32])


def command_options(source: CommandSource, flags: FlagSpec = FLAGS) -> Options:
    """The command's options (exact flag names).

    Raises:
        UnsettledValue: a word argparse may read as a speculative flag's abbreviation, at
            its line (the value it sets is not settled without the whole parser; the
            repository's: SG314).
    """
    for index, word in enumerate(source.command.argv):
        name = _abbreviation(word)
        if name is None:
            continue
        meant = " or ".join(flag for flag in _SPECULATIVE if flag.startswith(name))
        line = source.spans[index].line if index < len(source.spans) else None
        raise UnsettledValue(
            f"{name}: MLX-LM's argparse reads a unique prefix of a flag as that flag "
            f"({meant}), and whether this one is unique depends on its whole parser, "
            "which specgate did not record: write the flag in full",
            source.file,
            line,
            origin="repository",  # the file spells it: SG314 (docs/engines.md#unsettled-values)
            what=word,
        )
    return source.options(flags)


def detect_flags(flags: Mapping[str, Flag]) -> Kind | None:
    """``config`` with ``--draft-model``; ``fragment`` for ``--num-draft-tokens``
    alone (MLX-LM drafts nothing without a draft model)."""
    if "--draft-model" in flags:
        return "config"
    if "--num-draft-tokens" in flags:
        return "fragment"
    return None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise an MLX-LM command line: the draft model, D = ``--num-draft-tokens``
    (absent: the parser's default, from the data file).

    Raises:
        InputError: a value of the wrong type, or a D above specgate's bound.
    """
    b = Builder("mlxlm", ctx)
    draft = opts_get(opts, "draft_model")
    b.at("draft_model", draft)
    b.at("mechanism", draft)
    tokens = opts_get(opts, "num_draft_tokens")
    d: int | None
    if tokens is not None:
        b.at("draft_length", tokens)
        d = bounded(b, as_int(tokens, "--num-draft-tokens", ctx.file), "--num-draft-tokens",
                    "draft_length")
    else:
        default = _DATA.default("num_draft_tokens", ctx.version)
        d = default if isinstance(default, int) and not isinstance(default, bool) else None
        if d is not None:
            b.default_draft_length("num_draft_tokens", "--num-draft-tokens")
            b.note(f"--num-draft-tokens not set: MLX-LM's default is {d}")
    if ctx.program == "mlx_lm.server":
        b.note("mlx_lm.server: a request's num_draft_tokens overrides --num-draft-tokens")
    return b.build(
        mechanism="draft_model",
        draft_length=d,
        verify_tokens=None if d is None else d + 1,
        draft_model=as_str(draft) if draft is not None else None,
    )
