"""A transformers script's assisted generation (``model.generate(..., assistant_model=…)``,
``pipeline("text-generation", …, assistant_model=…)``) as a :class:`Document`, read with
:mod:`ast` and never run.

The forms read (docs/engines.md#transformers-scripts):

- ``X.generate(...)``: its keyword literals (``num_assistant_tokens=5``,
  ``prompt_lookup_num_tokens=10``, ``assistant_early_exit=4``, ``cache_implementation=
  "static"``, ``do_sample=…``); ``generation_config=GenerationConfig(...)`` (inline or a
  name bound once to it), whose literal keywords the call's own keywords override, as
  ``generate`` merges them; ``**d`` with ``d`` bound once to a dict literal;
- ``assistant_model=draft`` with ``draft`` bound once to ``Cls.from_pretrained("id", …)``:
  the draft model ``"id"`` (any other value: an assistant whose name is not read, the
  mapping ``{"not_read": "draft"}``); the receiver ``X`` bound the same way is ``model``;
- ``X.generation_config.KEY = literal`` (and the assistant's
  ``draft.generation_config.KEY = literal``, read as ``assistant_generation_config``):
  followed only as the one assignment of KEY that runs before the ``generate`` call on every
  route (:class:`~specgate.load.python_flow.Order`), and while nothing else may change that
  config (``.update(…)``, ``setattr``, an alias, a name that may hold the same model);
- ``pipe = pipeline("text-generation", model=…, assistant_model=…, batch_size=B)`` and
  ``pipe(inputs, batch_size=…, **generate keywords)``; a hub id string as its
  ``assistant_model`` (loaded by the pipeline from 4.48.0) is marked ``pipeline_assistant_id``.

Batch size (``batch_size``, what transformers' ``_assisted_decoding`` refuses above 1): for
``generate``, the rows of its input, settled only when the input is a tokenizer's call on
a string literal (1) or on a list literal of n strings (n), directly or through a name bound
once (``inputs = tok([...])``, ``inputs.input_ids``, ``inputs["input_ids"]``,
``.to(device)``; a list read only as a tokenizer's, a pipeline's, ``len``'s or ``print``'s
first argument; an output read only for its rows); for a pipeline, 1 for a single
string, min(B, n) for a list of n strings (``Pipeline.__call__`` batches a list by B), 1 at
B = 1. Anything else leaves the batch size unsettled, said in ``notes``; never guessed.

A speculative keyword (``assistant_*``, ``num_assistant_*``, ``prompt_lookup_num_tokens``)
whose value is not settled (and ``cache_implementation``; an ``assistant_model`` that may
be None; a generation config changed by a route not followed) is an
:class:`~specgate.core.errors.UnsettledValue` at its line, by where
:mod:`specgate.load.python_values` finds it set (SG313 for the environment or ``sys.argv``,
SG314 for the repository), as a Python launcher's speculative keyword is
(:mod:`specgate.load.python_launcher`). Code that never runs (``if False:``, a function no
live code names) is skipped; ``exec``/``eval``/``compile``/``__import__``, ``globals()``/
``vars()`` and ``setattr`` with a computed name make the reading the repository's unsettled
value at its line (SG314). tests/oracle/test_python_generate_oracle.py holds every value
settled here to what Python runs.
"""

from __future__ import annotations

import ast
from functools import partial
from pathlib import Path

from specgate.core.errors import InputError, UnreadForm, UnsettledValue
from specgate.load.assistant_folder import named_assistant, read_into
from specgate.load.document import Document, NodePath, PositionRow, Positions
from specgate.load.python_calls import CALLS as LAUNCHERS
from specgate.load.python_flow import (
    MODEL_METHODS,
    Order,
    bindings,
    called_name,
    from_pretrained_id,
    imported_roots,
    is_tokenizer,
    keys_set,
    live_nodes,
    rebinds_by_name,
)
from specgate.load.python_launcher import MAX_CALLS, _literal, _shown, _span, _Unread
from specgate.load.python_values import Origins, bound_value, settled_keyword

#: Modules whose import makes a file a launcher of another engine (read by
#: :mod:`specgate.load.python_calls`, not here).
ENGINE_MODULES = ("vllm", "sglang", "tensorrt_llm")
#: Keywords that set the mechanism or D: one not settled is an input error.
SPECULATIVE = ("assistant_", "num_assistant_", "prompt_lookup_num_tokens")
_DYNAMIC = frozenset({"exec", "eval", "compile", "__import__"})
#: Reads of a tokenizer's output that leave its rows as made.
_OUTPUT_READS = frozenset({"input_ids", "attention_mask", "to", "shape"})
#: generation-config keys besides the speculative ones whose value is settled here
_SETTLED_KEYS = frozenset({"cache_implementation"})
#: pipeline() keywords that reach no generate() call.
_PIPELINE_ONLY = frozenset({"task", "tokenizer", "device", "device_map", "torch_dtype", "dtype"})


def load_transformers_script(text: str, shown: str, path: Path | None = None) -> Document | None:
    """:func:`transformers_script` of ``text`` (``path``: the script on disk, whose local
    assistant folders are read: :mod:`.assistant_folder`); None when ``text`` names no
    ``transformers`` or does not parse (then the Python launcher reader reads it).

    Raises:
        InputError: as :func:`transformers_script`.
    """
    if "transformers" not in text:
        return None
    try:
        tree = ast.parse(text, filename=shown)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return transformers_script(tree, text, shown, path)
    except RecursionError:
        raise InputError("Python source nested too deeply to read", shown) from None


def transformers_script(
    tree: ast.Module, text: str, shown: str, path: Path | None = None
) -> Document | None:
    """The ``generate``/pipeline calls of a transformers script (see module doc; a script
    that makes none is the empty mapping: it configures no speculation), or None when
    ``tree`` imports no ``transformers`` or imports another engine's package.

    Raises:
        InputError: a speculative keyword not settled, or code run by ``exec``/``eval``.
    """
    modules = set(imported_roots(tree))
    if "transformers" not in modules or modules & set(ENGINE_MODULES):
        return None
    return _Script(tree, text.splitlines(), shown, path).document()


class _Script:
    def __init__(self, tree: ast.Module, lines: list[str], shown: str, path: Path | None) -> None:
        self.tree, self.lines, self.shown, self.path = tree, lines, shown, path
        self.origins_of: dict[NodePath, str] = {}  # values an assistant's folder sets
        self.count, self.bound = bindings(tree)
        self.rows: dict[NodePath, PositionRow] = {}
        self.notes: list[str] = []
        self.base: NodePath = ()
        self.pipeline_names = self._pipeline_names()
        #: names some statement binds to a pipeline(...) call
        self.pipe_objects = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.NamedExpr))
            and isinstance(node.value, ast.Call)
            and self._pipe_constructor(node.value.func) is not None
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        #: name → KEY → the ``name.generation_config.KEY = …`` statements (one walk)
        self.assignments: dict[str, dict[str, list[ast.Assign]]] = {}
        #: ``X.generation_config`` changed some other way (``.update(…)``, ``setattr``,
        #: replaced, aliased, passed on; X not a plain name): X (None) and the line
        self.touched: list[tuple[str | None, int]] = []
        harmless: set[int] = set()  # X.generation_config.FIELD read, or assigned as above
        configs: list[ast.Attribute] = []
        #: a node's parent, and the reads of each name
        self.parents: dict[int, ast.AST] = {}
        self.reads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads.setdefault(node.id, []).append(node)
            if isinstance(node, ast.Attribute):
                if node.attr == "generation_config":
                    configs.append(node)
                elif (
                    isinstance(node.value, ast.Attribute)
                    and node.value.attr == "generation_config"
                    and isinstance(node.ctx, ast.Load)
                ):
                    harmless.add(id(node.value))  # a field read
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "generation_config"
                    and isinstance(target.value.value, ast.Name)
                ):
                    keys = self.assignments.setdefault(target.value.value.id, {})
                    keys.setdefault(target.attr, []).append(node)
                    harmless.add(id(target.value))  # a field assignment followed above
        # a method called on it (X.generation_config.update(…)) is no harmless read, unless
        # it sets only settings read nowhere here (update(max_new_tokens=8), setattr with
        # such a literal name)
        called = {
            id(n.func.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and not _sets_only_other_keys(n, n.func.value)
        } if configs else set()
        for config in configs:
            base = config.value.id if isinstance(config.value, ast.Name) else None
            parent = self.parents.get(id(config))
            if isinstance(parent, ast.Call) and _sets_only_other_keys(parent, config):
                continue
            if id(config) not in harmless or id(config) in called or base is None:
                self.touched.append((base, config.lineno))
        # reached by its name as a string (getattr(m, "generation_config"), __dict__[…])
        self.touched.extend(
            (None, n.lineno)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and n.value == "generation_config"
        )
        #: callees a list of prompts may be given to without changing its length
        self.text_callees = {"len", "print"} | {
            name
            for name, value in self.bound.items()
            if isinstance(value, ast.Call)
            and (is_tokenizer(value) or called_name(value.func) in self.pipeline_names)
        }
        self._order: Order | None = None  # made when an assignment is to be followed
        self.origins = Origins(tree)  # the module is walked when a value is first asked
        self._bound = partial(bound_value, self.bound, self.origins)

    # --- the document --------------------------------------------------------------
    def document(self) -> Document | None:
        live = live_nodes(self.tree)
        generates: list[ast.Call] = []
        pipes: list[ast.Call] = []
        made: list[ast.Call] = []
        for node in live:
            for sub in ast.walk(node):
                if not isinstance(sub, ast.Call):
                    continue
                if isinstance(sub.func, ast.Name) and (
                    sub.func.id in _DYNAMIC or rebinds_by_name(sub)
                ):
                    raise UnsettledValue(
                        f"which generate() call runs is not settled: {sub.func.id}(...) may "
                        "run any code or bind any name; specgate reads a transformers script "
                        "without running it",
                        self.shown,
                        sub.lineno,
                        origin="repository",
                        what=f"{sub.func.id}(...)",
                    )
                if isinstance(sub.func, ast.Attribute) and sub.func.attr == "generate":
                    generates.append(sub)
                elif self._pipe_constructor(sub.func) is None and self._is_pipe_object(sub.func):
                    pipes.append(sub)
                elif isinstance(sub.func, ast.Name) and sub.func.id in self.pipe_objects:
                    raise UnsettledValue(
                        f"which pipeline {sub.func.id}(...) calls is not settled: the name is "
                        "bound more than once (or declared global); specgate reads a "
                        "transformers script without running it: bind the pipeline once",
                        self.shown, sub.lineno, origin="repository", what=sub.func.id,
                    )
                elif self._pipe_constructor(sub.func) is not None and any(
                    k.arg == "assistant_model" for k in sub.keywords
                ):
                    made.append(sub)
        called = {id(self.bound.get(c.func.id)) for c in pipes if isinstance(c.func, ast.Name)}
        pipes.extend(m for m in made if id(m) not in called)
        unique = {id(c): c for c in [*generates, *pipes]}
        calls = sorted(unique.values(), key=lambda c: (c.lineno, c.col_offset))[:MAX_CALLS]
        if not calls and any(
            isinstance(n, ast.Call) and called_name(n.func) in LAUNCHERS
            for n in ast.walk(self.tree)
        ):
            return None  # a launcher snippet (LLM(...) without its import): read as one
        if not calls:  # a transformers script that generates nothing: it speculates nothing
            self.rows[()] = ("mapping", 1, 1, 0, 0)
            return Document(
                file=self.shown, data={}, positions=Positions(self.rows),
                text="\n".join(self.lines), notes=tuple(self.notes),
            )
        several = len(calls) > 1
        mappings: list[dict[str, object]] = []
        for index, call in enumerate(calls):
            self.base = (index,) if several else ()
            self.rows[self.base] = ("mapping", *_span(call, self.lines), 0, 0)
            if call in generates:
                mappings.append(self._generate(call))
            else:
                mappings.append(self._pipe_call(call))
        data: object = mappings if several else mappings[0]
        return Document(
            file=self.shown,
            data=data,
            positions=Positions(self.rows),
            text="\n".join(self.lines),
            notes=tuple(self.notes),
            origins=self.origins_of,
        )

    # --- generate() ------------------------------------------------------------------
    def _generate(self, call: ast.Call) -> dict[str, object]:
        out: dict[str, object] = {}
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        model_name = receiver.id if isinstance(receiver, ast.Name) else None
        keywords = list(call.keywords)
        config = next((k for k in keywords if k.arg == "generation_config"), None)
        if model_name is not None:
            self._model_of(model_name, "model", out)
            if config is None:  # generate() starts from the model's generation_config
                self._config_assignments(model_name, call, out, prefix=())
        if config is not None:
            self._generation_config(config.value, out)
            if model_name is not None:
                self._model_defaults(model_name, call, out)
        for keyword in keywords:
            if keyword.arg == "generation_config":
                continue
            if keyword.arg is None:
                self._unpacked(keyword, out)
                continue
            self._keyword(keyword.arg, keyword.value, keyword.value, out)
        assistant = next((k.value for k in keywords if k.arg == "assistant_model"), None)
        if isinstance(assistant, ast.Name):
            self._config_assignments(
                assistant.id, call, out, prefix=("assistant_generation_config",)
            )
        if any(k in out for k in ("assistant_model", "prompt_lookup_num_tokens")):
            self._generate_batch(call, out)
        return out

    def _model_defaults(self, name: str, call: ast.Call, out: dict[str, object]) -> None:
        """Under an explicit config, a field it leaves at its default takes the model's
        value when the model was saved by 4.50.0 or later (``use_model_defaults``,
        ``_prepare_generation_config``, generation/utils.py@v5.19.0), which a script does
        not say: such a speculative or cache setting of the model is not settled."""
        own: dict[str, object] = {}
        self._config_assignments(name, call, own, prefix=())
        for key in own:
            if out.get(key) is not None or not (
                key.startswith(SPECULATIVE) or key in _SETTLED_KEYS
            ):
                continue
            node = self.assignments[name][key][0]  # SG312, not the end of the run
            raise UnreadForm(
                f"{name}.generation_config.{key} not read: generate() is given its own "
                "generation_config, which takes the model's value only if transformers "
                "4.50.0 or later saved the model", self.shown, node.lineno, node.col_offset + 1,
            )

    def _keyword(self, name: str, node: ast.expr, at: ast.expr, out: dict[str, object]) -> None:
        """``name=node`` read into ``out`` (position: ``at``)."""
        if name == "assistant_model" and isinstance(node, ast.Constant) and node.value is None:
            return  # no assistant: what generate() defaults to
        if name == "assistant_model" and not isinstance(_literal(node), str):
            if not self._loaded_model(node):  # it may hold None: no assistant then
                line, column = _span(at, self.lines)
                raise UnsettledValue(
                    f"assistant_model not read: {_shown(node)} is not a name bound once to "
                    "Cls.from_pretrained(…), so whether an assistant runs (it may be None) is "
                    "not settled; specgate reads a transformers script without running it",
                    self.shown, line, origin="repository", what=_shown(node), column=column,
                )
            self._model_of(node, name, out, at=at)
            return
        value = self._value(node)
        if isinstance(value, _Unread):
            out.pop(name, None)  # an earlier value (a generation config's) does not run
            if (name.startswith(SPECULATIVE) or name in _SETTLED_KEYS) and (
                name != "assistant_tokenizer"
            ):
                value = self._settled(name, node, at)
            elif name == "assistant_tokenizer":  # set: universal assisted decoding
                value = {"not_read": _shown(node)}
            else:
                self.notes.append(f"{name} not read: not a literal ({self.shown}:{at.lineno})")
                return
        self._put(out, (name,), value, at)

    def _loaded_model(self, node: ast.expr) -> bool:
        """Whether ``node`` is ``Cls.from_pretrained(…)`` (``.to(…)`` after it too), or a
        name bound once to one: a model, never None."""
        if isinstance(node, ast.Name):
            value = self._bound(node)
            if value is None:
                return False
            node = value
        while (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MODEL_METHODS
        ):
            node = node.func.value
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "from_pretrained"
        )

    def _settled(self, name: str, node: ast.expr, at: ast.expr) -> object:
        """:func:`~specgate.load.python_values.settled_keyword` of ``name=node``."""
        return settled_keyword(self.origins, name, node, shown=self.shown,
                               at=_span(at, self.lines), reader="a transformers script")

    def _value(self, node: ast.expr) -> object:
        """A literal, or a name bound once to one (a list or dict only while nothing
        may change it: :meth:`literal_kept`)."""
        if isinstance(node, ast.Name) and (bound := self._bound(node)) is not None:
            if not self.literal_kept(node.id):
                return _literal(node)  # not a literal: unread
            node = bound
        return _literal(node)

    def literal_kept(self, name: str) -> bool:
        """Whether the value ``name`` is bound to stays as written: an immutable literal,
        or a list/dict only passed as a keyword's value or unpacked (``**name``)."""
        value = self.bound[name]
        if not isinstance(value, (ast.List, ast.Dict, ast.Set)):
            return True
        reads = self.reads.get(name, [])
        return all(isinstance(self.parents.get(id(read)), ast.keyword) for read in reads)

    def _put(
        self, out: dict[str, object], key: tuple[str, ...], value: object, at: ast.expr
    ) -> None:
        """``out[key] = value`` (``key`` one name, or the assistant's generation config
        and a name), standing at ``at``."""
        line, column = _span(at, self.lines)
        target = out
        if len(key) == 2:
            inner = out.setdefault(key[0], {})
            assert isinstance(inner, dict)
            target = inner
            outer: NodePath = (*self.base, key[0])
            self.rows.setdefault(outer, ("mapping", line, column, 0, 0))
        target[key[-1]] = value
        path: NodePath = (*self.base, *key)
        self.origins_of.pop(path, None)  # the script's own assignment wins over the folder's
        self.rows[path] = ("scalar", line, column, line, column)

    def _model_of(
        self,
        node: ast.expr | str,
        key: str,
        out: dict[str, object],
        *,
        at: ast.expr | None = None,
    ) -> None:
        """``key`` (``model``/``assistant_model``): the id of ``Cls.from_pretrained("id")``
        a name is bound once to; for an assistant not so bound, ``{"not_read": …}``."""
        name = node if isinstance(node, str) else (node.id if isinstance(node, ast.Name) else None)
        value = self.bound.get(node) if isinstance(node, str) else self._bound(node)
        if value is None and isinstance(node, ast.expr):
            value = node
        loaded = from_pretrained_id(value, self.origins.scalar) if value is not None else None
        if loaded is not None:
            self._put(out, (key,), loaded[0], at if at is not None else loaded[1])
            if key == "assistant_model" and self.path and value:  # its folder's own config
                where = (out, self.base, self.rows, self.origins_of)
                self.notes.extend(read_into(loaded[0], value, self.path, self.shown, where))
        elif key == "assistant_model" and at is not None:
            shown = name if name is not None else _shown(at)
            self._put(out, (key,), {"not_read": shown}, at)
            self.notes.append(
                f"assistant_model {shown} ({self.shown}:{at.lineno}): the draft model's name "
                "is not read (no Cls.from_pretrained(\"id\") bound once to it)"
            )

    def _generation_config(self, node: ast.expr, out: dict[str, object]) -> None:
        """``GenerationConfig(k=v, …)`` (inline or bound once): its literal keywords."""
        if isinstance(node, ast.Name) and self._bound(node) is not None:
            changed = [
                read.lineno
                for read in self.reads.get(node.id, [])
                if not isinstance(self.parents.get(id(read)), ast.keyword)
            ]
            if changed:  # gc.KEY = …, gc.update(…), setattr(gc, …): may set any key
                raise UnsettledValue(
                    f"generation_config {node.id} not read: it may be changed at line "
                    f"{changed[0]} (read only as GenerationConfig(...) of literals, bound "
                    "once and only passed on)",
                    self.shown, changed[0], origin="repository", what=node.id,
                )
            node = self.bound[node.id]
        if not (isinstance(node, ast.Call) and called_name(node.func) == "GenerationConfig"):
            self.notes.append(
                f"generation_config not read: not GenerationConfig(...) of literals "
                f"({self.shown}:{node.lineno})"
            )
            return
        for keyword in node.keywords:
            if keyword.arg is None:
                self.notes.append(
                    f"**{_shown(keyword.value)} not read ({self.shown}:{keyword.lineno})"
                )
                continue
            self._keyword(keyword.arg, keyword.value, keyword.value, out)

    def _unpacked(self, keyword: ast.keyword, out: dict[str, object]) -> None:
        node = keyword.value
        bound = self._bound(node)
        if isinstance(node, ast.Name) and isinstance(bound, ast.Dict) and not (
            self.literal_kept(node.id)
        ):
            bound = None
        if isinstance(bound, ast.Dict) and all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in bound.keys
        ):
            for k, v in zip(bound.keys, bound.values, strict=True):
                assert isinstance(k, ast.Constant)
                self._keyword(str(k.value), v, v, out)
            return
        kept = isinstance(node, ast.Name) and self.output_kept(node.id)
        if not (kept and self._tokenizer_output(bound)):  # a tokenizer's output: tensors
            self.notes.append(
                f"**{_shown(node)} not read: not a literal ({self.shown}:{keyword.lineno})"
            )

    def _config_assignments(
        self, name: str, call: ast.Call, out: dict[str, object], *, prefix: tuple[str, ...]
    ) -> None:
        """``name.generation_config.KEY = literal`` statements (see module doc): followed
        when it is the one assignment of KEY and stands unconditionally, earlier, in the
        statement list that holds the ``generate`` call (a module's or a function's)."""
        changed = self._changed_otherwise(name)
        if changed is not None:  # the change may set a speculative key: never settled
            raise UnsettledValue(
                f"{name}.generation_config may be changed at line {changed} in a way "
                "specgate cannot follow (read only as literal assignments of its fields)",
                self.shown,
                changed,
                origin="repository",
                what=f"{name}.generation_config",
            )
        for key, found in self.assignments.get(name, {}).items():
            stmt = found[0]
            value = _literal(stmt.value)
            once = len(found) == 1 and self._earlier(stmt, call)
            if once and isinstance(value, _Unread) and key.startswith(SPECULATIVE):
                value = self._settled(f"{name}.generation_config.{key}", stmt.value, stmt.value)
            if not once or isinstance(value, _Unread):
                if key.startswith(SPECULATIVE) or key == "cache_implementation":
                    raise UnsettledValue(
                        f"{name}.generation_config.{key} not read: set in a way specgate "
                        "cannot follow (read only as one literal assignment standing before "
                        "generate() in its statement list)",
                        self.shown,
                        stmt.lineno,
                        origin="repository",
                        what=f"{name}.generation_config.{key}",
                    )
                self.notes.append(
                    f"{name}.generation_config.{key} not read ({self.shown}:{stmt.lineno})"
                )
                continue
            self._put(out, (*prefix, key), value, stmt.value)

    def _changed_otherwise(self, name: str) -> int | None:
        """The first line where ``name.generation_config`` may change other than by a
        field assignment of ``name`` itself: ``.update(…)``, ``setattr``, replaced or
        aliased, or a field assignment through another name that may hold the same model
        (one not bound once to its own ``from_pretrained``)."""
        lines = [line for base, line in self.touched if base in (None, name)]
        scalar = self.origins.scalar
        own = from_pretrained_id(self.bound[name], scalar) if name in self.bound else None
        if name not in self.bound:  # re-bound: its fields may be another model's
            lines.extend(s.lineno for stmts in self.assignments.get(name, {}).values()
                         for s in stmts)
        for other, keys in self.assignments.items():
            distinct = own is not None and other in self.bound and (
                from_pretrained_id(self.bound[other], scalar) is not None
            )
            if other != name and not distinct:
                lines.extend(stmt.lineno for stmts in keys.values() for stmt in stmts)
        return min(lines) if lines else None

    def _tokenizer_output(self, node: ast.expr | None) -> bool:
        """Whether ``node`` is a tokenizer's call (``.to(…)`` after it too): its keys are
        ``input_ids``/``attention_mask``, no generation setting."""
        while (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "to"
        ):
            node = node.func.value
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return False
        made = self.bound.get(node.func.id)
        return isinstance(made, ast.Call) and is_tokenizer(made)

    def prompts_kept(self, name: str) -> bool:
        """Whether every read of the list ``name`` is the first argument of a tokenizer,
        a pipeline object, ``len`` or ``print``: nothing may change its length."""
        for read in self.reads.get(name, []):
            parent = self.parents.get(id(read))
            if not (
                isinstance(parent, ast.Call)
                and parent.args[:1] == [read]
                and isinstance(parent.func, ast.Name)
                and parent.func.id in self.text_callees
            ):
                return False
        return True

    def output_kept(self, name: str) -> bool:
        """Whether every read of a tokenizer's output ``name`` leaves its rows as made:
        ``**name``, ``name.input_ids``/``["input_ids"]``/``.attention_mask``/``.to(…)``/
        ``.shape``, or ``name`` as ``generate``'s input."""
        for read in self.reads.get(name, []):
            parent = self.parents.get(id(read))
            if isinstance(parent, ast.keyword):
                if parent.arg in (None, "input_ids", "inputs"):
                    continue
                return False
            if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
                if parent.attr in _OUTPUT_READS:
                    continue
                return False
            if (
                isinstance(parent, ast.Subscript)
                and isinstance(parent.ctx, ast.Load)
                and isinstance(parent.slice, ast.Constant)
                and parent.slice.value in _OUTPUT_READS
            ):
                continue
            if (
                isinstance(parent, ast.Call)
                and parent.args[:1] == [read]
                and isinstance(parent.func, ast.Attribute)
                and parent.func.attr == "generate"
            ):
                continue
            return False
        return True

    def _earlier(self, stmt: ast.stmt, call: ast.Call) -> bool:
        if self._order is None:
            self._order = Order(self.tree)
        return self._order.earlier(stmt, call)

    def _generate_batch(self, call: ast.Call, out: dict[str, object]) -> None:
        source: ast.expr | None = call.args[0] if call.args else None
        for keyword in call.keywords:
            if keyword.arg in ("input_ids", "inputs") or (
                keyword.arg is None and source is None
            ):
                source = keyword.value
        rows = _tokenizer_rows(source, self) if source is not None else None
        if rows is None:
            line = source.lineno if source is not None else call.lineno
            self.notes.append(
                f"batch size not read: the input of generate() is no tokenizer call on a "
                f"literal ({self.shown}:{line})"
            )
            return
        self._put(out, ("batch_size",), rows[0], rows[1])

    # --- pipeline --------------------------------------------------------------------
    def _pipeline_names(self) -> set[str]:
        names = {"pipeline"}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("transformers"):
                names.update(a.asname for a in node.names if a.name == "pipeline" and a.asname)
        return names

    def _pipe_constructor(self, func: ast.expr) -> str | None:
        name = called_name(func)
        return name if name in self.pipeline_names else None

    def _is_pipe_object(self, func: ast.expr) -> bool:
        if not isinstance(func, ast.Name):
            return False
        bound = self.bound.get(func.id)
        return isinstance(bound, ast.Call) and self._pipe_constructor(bound.func) is not None

    def _pipe_call(self, call: ast.Call) -> dict[str, object]:
        """A pipeline object's call with the pipeline's own keywords; a pipeline made
        with an assistant and never called is read alone (its inputs unknown)."""
        made = call
        if isinstance(call.func, ast.Name) and call.func.id in self.bound:
            bound = self.bound[call.func.id]
            made = bound if isinstance(bound, ast.Call) else call
        if made is call:
            call = ast.Call(func=made.func, args=[], keywords=[])
            ast.copy_location(call, made)
        out = self._pipe_task(made)
        if len(made.args) > 1:
            self._keyword("model", made.args[1], made.args[1], out)
        batch: tuple[object, ast.expr] = (1, made)
        target = next((k.value for k in made.keywords if k.arg == "model"), None)
        if isinstance(target, ast.Name) and not any(  # the model's own config, then kwargs
            k.arg == "generation_config" for k in call.keywords
        ):
            self._config_assignments(target.id, call, out, prefix=())
        for keyword in made.keywords:
            if keyword.arg in _PIPELINE_ONLY:
                continue
            if keyword.arg == "model" and not (
                isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str)
            ):
                self._model_of(keyword.value, "model", out)
                continue
            if keyword.arg == "batch_size":
                batch = (self._value(keyword.value), keyword.value)
                continue
            if keyword.arg is None:
                self._unpacked(keyword, out)
                continue
            if keyword.arg == "assistant_model" and isinstance(_literal(keyword.value), str):
                self._put(out, ("pipeline_assistant_id",), True, keyword.value)
            self._keyword(keyword.arg, keyword.value, keyword.value, out)
        config = next((k for k in call.keywords if k.arg == "generation_config"), None)
        if config is not None:  # the call's own keywords win over it
            self._generation_config(config.value, out)
            if isinstance(target, ast.Name):
                self._model_defaults(target.id, call, out)
        helper = next((k.value for k in made.keywords if k.arg == "assistant_model"), None)
        if isinstance(helper, ast.Name):  # where the candidate generator reads D
            self._config_assignments(helper.id, call, out, prefix=("assistant_generation_config",))
        where = (out, self.base, self.rows, self.origins_of)  # a folder named as a string
        self.notes.extend(named_assistant(helper, self.path, self.shown, where))
        for keyword in call.keywords:
            if keyword.arg == "batch_size":
                batch = (self._value(keyword.value), keyword.value)
            elif keyword.arg is None:
                self._unpacked(keyword, out)
            elif keyword.arg == "generation_config":
                continue
            else:
                self._keyword(keyword.arg, keyword.value, keyword.value, out)
        if any(k in out for k in ("assistant_model", "prompt_lookup_num_tokens")):
            self._pipe_batch(call, batch, out)
        return out

    def _pipe_task(self, made: ast.Call) -> dict[str, object]:
        """The pipeline's task (a named assistant's tokenizer is passed on only when the
        vocabularies differ: pipelines/base.py load_assistant_model@v5.19.0)."""
        out: dict[str, object] = {}
        task = made.args[0] if made.args else next(
            (k.value for k in made.keywords if k.arg == "task"), None
        )
        shown = _literal(task) if task is not None else None
        value = shown if isinstance(shown, str) else {"not_read": "task"}
        self._put(out, ("pipeline",), value, task if task is not None else made)
        return out

    def _pipe_batch(
        self, call: ast.Call, batch: tuple[object, ast.expr], out: dict[str, object]
    ) -> None:
        size, at = batch
        prompts = _prompts(call.args[0], self) if call.args else None
        if size == 1:
            self._put(out, ("batch_size",), 1, at)
        elif not isinstance(size, int) or isinstance(size, bool) or prompts is None:
            self.notes.append(
                f"batch size not read: the pipeline's batch_size or inputs are no literal "
                f"({self.shown}:{call.lineno})"
            )
        else:
            rows = 1 if prompts[0] is None else min(size, prompts[0])
            self._put(out, ("batch_size",), rows, at if rows > 1 else prompts[1])


def _prompts(node: ast.expr, script: _Script) -> tuple[int | None, ast.expr] | None:
    """A pipeline's or tokenizer's text input: ``(None, at)`` for one string, ``(n, at)``
    for a list or tuple literal of n strings (directly or through a name bound once and
    used only as a call's argument), else None."""
    at = node
    if isinstance(node, ast.Name) and node.id in script.bound:
        if not script.prompts_kept(node.id):
            return None
        node = script.bound[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return None, at
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return len(node.elts), at
    return None


def _tokenizer_rows(node: ast.expr | None, script: _Script) -> tuple[int, ast.expr] | None:
    """The rows of a tokenizer's output ``node`` (see module doc), and where they show."""
    for _ in range(8):
        if node is None:
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            node.func.attr == "to"
        ):
            node = node.func.value
        elif (isinstance(node, ast.Attribute) and node.attr == "input_ids") or (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "input_ids"
        ):
            node = node.value
        elif isinstance(node, ast.Name) and node.id in script.bound:
            if not script.output_kept(node.id):
                return None
            node = script.bound[node.id]
        else:
            break
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
        return None
    made = script.bound.get(node.func.id)
    if not (isinstance(made, ast.Call) and is_tokenizer(made)):
        return None
    prompts = _prompts(node.args[0], script)
    if prompts is None:
        return None
    return (1 if prompts[0] is None else prompts[0]), prompts[1]


def _sets_only_other_keys(call: ast.Call, config: ast.expr) -> bool:
    """Whether ``call`` sets only keys of ``config`` read nowhere here
    (:func:`~specgate.load.python_flow.keys_set`): no mechanism, D or cache."""
    keys = keys_set(call, config)
    return keys is not None and all(
        isinstance(k, str) and not k.startswith(SPECULATIVE) and k not in _SETTLED_KEYS
        for k in keys
    )
