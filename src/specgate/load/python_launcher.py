"""A Python launcher (``LLM(model=…, speculative_config={…})``) as a :class:`Document`.

vLLM's docs publish most speculative configs as offline Python: ``LLM(...)``,
``EngineArgs(...)`` or ``AsyncEngineArgs(...)``; SGLang's as ``sgl.Engine(...)``.
specgate never runs the file: it is parsed with :func:`ast.parse` and only the
*literal* keyword values of those calls are taken (:func:`ast.literal_eval`: strings,
numbers, booleans, ``None``, lists, tuples and dicts of them). A call's first
positional argument, when a literal string, is its ``model``.

Shapes: one call ⇒ ``data`` is its mapping of keyword → value; several calls ⇒ the
list of them (node path ``(i, …)``), which the engine readers judge like several
launch commands. Every key and value keeps its line and column (a dict literal's
keys too), so a finding lands on the ``num_speculative_tokens`` line.

Which calls count (:mod:`specgate.load.python_calls`): the ones that may run when the
file runs, followed through imports (``from vllm import LLM as E``), ``getattr(vllm,
"LLM")`` and aliases; a decoy in a function nothing calls or under ``if False:`` is
skipped, and a route not followed is an unsettled value of the repository at its line
(:class:`~specgate.core.errors.UnsettledValue`: SG314).

A keyword whose value is no literal (a variable, a call, ``**kwargs``) is not read:
``notes`` of the returned document say so ("tensor_parallel_size not read: not a
literal (line 9)"); a speculative keyword that is no literal
(``speculative_config=EagleDecodingConfig(...)``, ``speculative_model=DRAFT``) is an
:class:`~specgate.core.errors.UnsettledValue` at its line, since the mechanism and D
cannot then be known: set outside the repository (``DRAFT = os.environ["DRAFT"]``,
SG313) or by the repository in a way not followed (a call, SG314), by
:class:`specgate.load.python_values.Origins`; ``os.getenv("D", "5")`` is read as its
default ``5``, the value the script runs with when the environment sets none.

Limits: the file is at most 1 MiB (:func:`specgate.load.read.read_text`); a literal is
read at most :data:`MAX_DEPTH` levels deep and at most :data:`MAX_CALLS` calls are
taken. A file Python cannot parse (``SyntaxError``, a NUL byte, nesting past the
parser's or the interpreter's limits: ``RecursionError``, ``MemoryError``) is an
:class:`InputError` naming its line.
"""

from __future__ import annotations

import ast

from specgate.core.errors import InputError, UnreadForm, UnsettledValue
from specgate.load.document import Document, NodePath, PositionRow, Positions
from specgate.load.python_calls import CALLS, Unsettled, launcher_calls
from specgate.load.python_values import Origins, unsettled_keyword

#: Keywords that carry the speculative configuration: one that is no literal is an
#: input error (vLLM's ``speculative_config``; SGLang's ``speculative_*`` server args).
SPECULATIVE_PREFIXES = ("speculative", "num_speculative", "draft")

MAX_DEPTH = 32
MAX_CALLS = 64

#: SGLang ``Engine(**kwargs)`` keywords read each on its own (``Engine.__init__`` builds
#: ``ServerArgs(**kwargs)``, one dataclass field a keyword: sglang 0.5.23
#: python/sglang/srt/entrypoints/engine.py, the same at 0.5.18 lines 232-252) that
#: neither set D, N_verify nor the method as specgate reads them: one the script leaves
#: unsettled is kept aside (SG313/SG314 at its line) and the rest is judged
#: (docs/engines.md#unsettled-values). ``speculative_draft_model_path`` only beside a
#: literal ``speculative_algorithm="EAGLE3"``: for EAGLE and NEXTN the draft decides the
#: method (a Gemma 4 assistant draft makes it FROZEN_KV_MTP, a NextN/MTP one MTP:
#: speculative_hook.py ``_resolve_speculative_algorithm_alias``), for DFLASH its config
#: gives the draft tokens when they are unset (``handle_dflash``).
SGLANG_KEYWISE = frozenset({
    "speculative_draft_model_path", "speculative_draft_model_revision",
    "speculative_draft_load_format", "speculative_token_map", "speculative_attention_mode",
    "speculative_moe_runner_backend", "speculative_draft_attention_backend",
})
_DRAFT_PATH_WITH = ("EAGLE3",)
#: SGLang keywords that set the method or D (each one ServerArgs field all the same):
#: one the script leaves unsettled is kept aside too, and the reader leaves the method
#: and/or D unsettled, the claims file's used, while every other keyword is read
#: (:func:`specgate.inputs.engines.sglang.unsettled_parts`; docs/engines.md#unsettled-values).
#: Not ``speculative_algorithm``: unset, empty or ``NONE`` it turns speculation off
#: (``SpeculativeAlgorithm.from_string``), so whether the call speculates at all is not
#: settled and the call stays unsettled as a whole (SG313/SG314 at that keyword).
SGLANG_RESOLVED = frozenset({
    "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "speculative_dflash_block_size", "speculative_adaptive",
    "speculative_draft_model_path",
})


def sglang_keywise(name: str, algorithm: object) -> bool:
    """Whether the unsettled keyword ``name`` of a call whose literal
    ``speculative_algorithm`` is ``algorithm`` is kept aside (:data:`SGLANG_KEYWISE`,
    :data:`SGLANG_RESOLVED`)."""
    if name in SGLANG_RESOLVED:
        return True
    if name not in SGLANG_KEYWISE:
        return False
    return name != "speculative_draft_model_path" or (
        isinstance(algorithm, str) and algorithm.strip().upper() in _DRAFT_PATH_WITH
    )


def load_python_launcher(text: str, shown: str) -> Document:
    """The literal keyword values of the launcher calls in ``text`` (see module doc).

    Raises:
        InputError: the file does not parse as Python, holds no launcher call, or
            passes a speculative keyword that is no literal (at its line).
    """
    try:
        tree = ast.parse(text, filename=shown)
    except SyntaxError as exc:
        raise InputError(
            f"Python syntax error: {exc.msg}", shown, exc.lineno, exc.offset
        ) from None
    except (RecursionError, MemoryError):
        raise InputError("Python source nested too deeply to read", shown) from None
    except ValueError as exc:  # a NUL byte, an integer literal past the digit limit
        raise InputError(f"not readable as Python: {exc}", shown) from None
    lines = text.splitlines()
    try:
        calls = launcher_calls(tree)[:MAX_CALLS]
    except Unsettled as exc:
        raise UnsettledValue(
            f"which launcher call runs is not settled: {exc.reason}; specgate reads a Python "
            "launcher without running it: call LLM(...) plainly, or state the mechanism and "
            "D in the claims file",
            shown,
            exc.line,
            origin="repository",
            what=exc.reason,
        ) from None
    except RecursionError:
        raise InputError("Python source nested too deeply to read", shown) from None
    if not calls:
        # Degrade, never stop (issue 24): the file parses, so how it starts the engine
        # is a form not read (SG312 on the deployment), never the end of the run
        unreached = _unreached_call(tree)
        if unreached is not None:
            raise UnreadForm(
                f"specgate does not read how this script starts the engine: the "
                f"{_shown(unreached.func)}(...) call on line {unreached.lineno} runs only by "
                "a route not followed (a function no live code calls by name, such as one "
                "only a decorator registers)",
                shown,
                unreached.lineno,
                unreached.col_offset + 1,
            )
        raise UnreadForm(
            "specgate does not read how this script starts the engine: no LLM(...), "
            "EngineArgs(...), AsyncEngineArgs(...), sgl.Engine(...) or transformers "
            "generate()/pipeline(...) call in this Python file (specgate reads only "
            "their literal keyword arguments)",
            shown,
        )
    rows: dict[NodePath, PositionRow] = {}
    notes: list[str] = []
    mappings: list[dict[str, object]] = []
    deferred: dict[NodePath, UnsettledValue] = {}
    several = len(calls) > 1
    origins = Origins(tree)  # one walk of the module, however many values ask
    for index, call in enumerate(calls):
        base: NodePath = (index,) if several else ()
        rows[base] = ("mapping", *_span(call, lines), 0, 0)
        mappings.append(
            _arguments(
                call, base, lines=lines, rows=rows, notes=notes, shown=shown, origins=origins,
                deferred=deferred,
            )
        )
    data: object = mappings if several else mappings[0]
    return Document(
        file=shown, data=data, positions=Positions(rows), text=text, notes=tuple(notes),
        deferred=deferred,
    )


def _unreached_call(tree: ast.Module) -> ast.Call | None:
    """The first call named like a launcher (``LLM(...)``, ``vllm.LLM(...)``) anywhere
    in ``tree``, in source order, when none is reached from live code; else None."""
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in CALLS)
            or (isinstance(node.func, ast.Attribute) and node.func.attr in CALLS)
        )
    ]
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)


def _span(node: ast.expr | ast.keyword, lines: list[str]) -> tuple[int, int]:
    """1-based line and column (in characters; ``col_offset`` counts UTF-8 bytes)."""
    line = node.lineno
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    column = len(source.encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
    return line, column + 1


def _arguments(
    call: ast.Call,
    base: NodePath,
    *,
    lines: list[str],
    rows: dict[NodePath, PositionRow],
    notes: list[str],
    shown: str,
    origins: Origins,
    deferred: dict[NodePath, UnsettledValue],
) -> dict[str, object]:
    out: dict[str, object] = {}
    algorithm = next(  # SGLang's, when written as a literal (sglang_keywise)
        (_literal(k.value) for k in call.keywords if k.arg == "speculative_algorithm"), None
    )
    model = _scalar(call.args[0], origins) if call.args else _NOT_LITERAL
    if isinstance(model, str):  # "id", or MODEL_ID bound once to it
        out["model"] = model
        line, column = _span(call.args[0], lines)
        model_path: NodePath = (*base, "model")
        rows[model_path] = ("scalar", line, column, line, column)
    for keyword in call.keywords:
        line, column = _span(keyword, lines)
        if keyword.arg is None:
            notes.append(f"**{_shown(keyword.value)} not read: not a literal ({shown}:{line})")
            continue
        name = keyword.arg
        value = _literal(keyword.value)
        if value is _TOO_DEEP:
            raise InputError(
                f"{name} not read: a literal nested deeper than {MAX_DEPTH} levels",
                shown,
                line,
                column,
            )
        if value is _NOT_LITERAL and name.startswith(SPECULATIVE_PREFIXES):
            verdict = origins.verdict(keyword.value)
            origin, settled, _ = verdict
            if origin == "settled":  # os.getenv("D", "5"): the script's own default
                settled = _plain(settled, 0)
                origin = "repository" if isinstance(settled, _Unread) else origin
            if origin == "settled":  # positions where the value is written (SPEC = {…})
                out[name] = settled
                _positions(origins.written(keyword.value), (*base, name), (line, column),
                           lines=lines, rows=rows, depth=0)
                continue
            if origin in ("outside", "repository") and sglang_keywise(name, algorithm):
                # one ServerArgs field on its own: only this key is unsettled
                alone: NodePath = (*base, name)
                deferred[alone] = unsettled_keyword(
                    name, keyword.value, (origin, None, verdict[2]), shown=shown,
                    at=(line, column), reader="a Python launcher",
                )
                continue
            keys = _keywise(name, keyword.value, origins, (*base, name), shown=shown,
                            lines=lines)
            if origin == "outside" and keys is not None:
                # each key on its own: the ones read are judged, the others deferred
                out[name], found = keys
                deferred.update(found)
                _positions(origins.written(keyword.value), (*base, name), (line, column),
                           lines=lines, rows=rows, depth=0)
                continue
            raise unsettled_keyword(
                name, keyword.value, (origin, None, verdict[2]), shown=shown,
                at=(line, column), reader="a Python launcher",
            )
        if value is _NOT_LITERAL:
            value = _scalar(keyword.value, origins)  # a module constant bound once
        if value is _NOT_LITERAL:
            notes.append(f"{name} not read: not a literal ({shown}:{line})")
            continue
        out[name] = value
        _positions(keyword.value, (*base, name), (line, column), lines=lines, rows=rows, depth=0)
    return out


def _keywise(
    name: str, node: ast.expr, origins: Origins, path: NodePath, *, shown: str,
    lines: list[str],
) -> tuple[dict[str, object], dict[NodePath, UnsettledValue]] | None:
    """The dict keyword ``name=node`` read key by key (:meth:`Origins.keywise`): the
    keys settled, and an :class:`UnsettledValue` (SG313) at ``path + (key,)`` for each
    key set outside the repository; None when ``node`` is no such dict, or a key is
    the repository's or holds no plain value (then the whole keyword is unsettled)."""
    keys = origins.keywise(node)
    if keys is None:
        return None
    read: dict[str, object] = {}
    found: dict[NodePath, UnsettledValue] = {}
    for key, value_node, verdict in keys:
        if verdict[0] == "settled":
            value = _plain(verdict[1], 0)
            if isinstance(value, _Unread):
                return None
            read[key] = value
        elif verdict[0] == "outside":
            where: NodePath = (*path, key)
            found[where] = unsettled_keyword(
                f"{name}[{key!r}]", node, verdict, shown=shown,
                at=_span(value_node, lines), reader="a Python launcher",
            )
        else:
            return None
    return read, found


def _scalar(node: ast.expr, origins: Origins) -> object:
    """``node``'s value when it is a literal scalar or :class:`Origins` settles it to one
    (``MODEL_ID`` bound once at module level to ``"org/model"``), else
    :data:`_NOT_LITERAL`: a value set outside or by the repository stays a note."""
    kind, value = origins.of(node)
    if kind == "settled" and (value is None or isinstance(value, (str, bool, int, float))):
        return value
    return _NOT_LITERAL


def _dict_call(node: ast.expr) -> bool:
    """``dict(k=v, …)`` (for positions only: its value was settled by :class:`Origins`,
    which checks that ``dict`` is the builtin)."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id == "dict" and not node.args
    )


class _Unread:
    pass


_NOT_LITERAL = _Unread()
_TOO_DEEP = _Unread()


def _shown(node: ast.expr) -> str:
    """A short rendering of ``node`` for a message (at most 40 characters)."""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return "…"
    return text if len(text) <= 40 else text[:39] + "…"


def _literal(node: ast.expr) -> object:
    """``node``'s value as JSON-like data, or :data:`_NOT_LITERAL`."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    return _plain(value, 0)


def _plain(value: object, depth: int) -> object:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if depth >= MAX_DEPTH:
        return _TOO_DEEP
    if isinstance(value, (list, tuple)):
        items = [_plain(v, depth + 1) for v in value]
        return next((i for i in items if isinstance(i, _Unread)), items)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        inner = {k: _plain(v, depth + 1) for k, v in value.items()}
        return next((v for v in inner.values() if isinstance(v, _Unread)), inner)
    return _NOT_LITERAL  # bytes, sets, complex numbers: nothing an engine config holds


def _positions(
    node: ast.expr,
    path: NodePath,
    key: tuple[int, int],
    *,
    lines: list[str],
    rows: dict[NodePath, PositionRow],
    depth: int,
) -> None:
    line, column = _span(node, lines)
    if _dict_call(node) and depth < MAX_DEPTH:  # dict(k=v, …): keys at their keywords
        assert isinstance(node, ast.Call)
        rows[path] = ("mapping", line, column, *key)
        for word in node.keywords:
            if word.arg is not None:
                _positions(word.value, (*path, word.arg), _span(word, lines), lines=lines,
                           rows=rows, depth=depth + 1)
    elif isinstance(node, ast.Dict) and depth < MAX_DEPTH:
        rows[path] = ("mapping", line, column, *key)
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                _positions(
                    v, (*path, k.value), _span(k, lines), lines=lines, rows=rows, depth=depth + 1
                )
    elif isinstance(node, (ast.List, ast.Tuple)) and depth < MAX_DEPTH:
        rows[path] = ("sequence", line, column, *key)
        for i, item in enumerate(node.elts):
            _positions(item, (*path, i), (0, 0), lines=lines, rows=rows, depth=depth + 1)
    else:
        rows[path] = ("scalar", line, column, *key)
