#!/usr/bin/env python3
"""Read SGLang's architecture tables in each release's wheel (issue 27): maintenance only,
NOT run by the test suite or by specgate. Nothing in the wheels runs: their source is
parsed (``ast``) and three tables are read from it, release by release:

- ``eagle_without_draft_means_mtp``: the target architectures for which an EAGLE run
  without ``--speculative-draft-model-path`` sets the draft path to the target itself
  (``server_args.py``, from 0.5.13 ``arg_groups/speculative_hook.py``: an ``if`` on the
  architecture whose body assigns ``speculative_draft_model_path = model_path``);
- ``draft_worker_mtp_architectures``: the MTP (NextN) class the draft worker builds from
  the target's checkpoint (``configs/model_config.py``: an ``if`` on ``is_draft_model``
  and ``architectures[0]`` whose body assigns ``architectures[0] = "…"``);
- ``auto_params``: steps/topk/draft tokens by architecture when none is given
  (``auto_choose_speculative_params`` / ``_auto_choose_speculative_params``: an
  ``if``/``elif`` chain on the architecture returning three ints; ``*`` the ``else``;
  ``STANDALONE`` a test of the algorithm).

A table whose source has a form this reader does not know is left out for that release
(``None``): specgate then treats the release as not read for it (a warning, never a
fail). Usage, with the wheels unpacked as DIR/sglang-VERSION/sglang/…::

    python3 scripts/read_sglang_arch_tables.py DIR > tables.json
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

SOURCES = {
    "eagle_without_draft_means_mtp": ("srt/server_args.py", "srt/arg_groups/speculative_hook.py"),
    "draft_worker_mtp_architectures": ("srt/configs/model_config.py",),
    "auto_params": ("srt/server_args.py", "srt/arg_groups/speculative_hook.py"),
}


#: Module-level names bound to a tuple/list/set of strings (``MIMO_V2_MODEL_ARCHS``), of
#: the file being read.
_CONSTANTS: dict[str, list[str]] = {}


def _module_constants(tree: ast.Module) -> dict[str, list[str]]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = node.value
            if isinstance(value, ast.Call) and ast.unparse(value.func) in ("frozenset", "set"):
                value = value.args[0] if value.args else value
            names = _names(value) if not isinstance(value, ast.Name) else None
            if names is not None and isinstance(node.targets[0], ast.Name):
                out[node.targets[0].id] = names
    return out


def _names(node: ast.expr) -> list[str] | None:
    """The strings a comparison with the architecture names: ``== "X"`` or
    ``in ["X", …]``, or a module-level name bound to such a list (None: another form)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return list(_CONSTANTS[node.id])
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return out if len(out) == len(node.elts) and all(isinstance(v, str) for v in out) else None
    return None


def _arch_compare(test: ast.expr, arch_text: tuple[str, ...]) -> list[str] | None:
    """The architecture names a test compares with (the comparison's left side is one of
    ``arch_text``, as source), in an ``and`` or alone."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for part in parts:
        if (
            isinstance(part, ast.Compare) and len(part.ops) == 1
            and isinstance(part.ops[0], (ast.Eq, ast.In))
            and ast.unparse(part.left) in arch_text
        ):
            return _names(part.comparators[0])
    return None


def _assigns(body: list[ast.stmt], target: str, value: str | None) -> list[str]:
    """The source of each value assigned to ``target`` in ``body`` (nested blocks too);
    with ``value``, only where the value's source is ``value``."""
    found = []
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Assign) and any(ast.unparse(t) == target for t in node.targets):
            text = ast.unparse(node.value)
            if value is None or text == value:
                found.append(text)
    return found


def mtp_targets(tree: ast.AST) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        names = _arch_compare(node.test, ("model_arch", "arch"))
        if names is None:
            continue
        for obj in ("self", "server_args", "args"):
            if _assigns(node.body, f"{obj}.speculative_draft_model_path", f"{obj}.model_path"):
                out.update(dict.fromkeys(names, ""))
        # from 0.5.19: declare_resolution(server_args, …, speculative_draft_model_path=cfg.model_path)
        for call in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(call, ast.Call) and any(
                k.arg == "speculative_draft_model_path"
                and ast.unparse(k.value).endswith(".model_path")
                for k in call.keywords
            ):
                out.update(dict.fromkeys(names, ""))
    return out


def draft_classes(tree: ast.AST) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or "is_draft_model" not in ast.unparse(node.test):
            continue
        names = _arch_compare(node.test, ("self.hf_config.architectures[0]",))
        if names is None:
            continue
        values = _assigns(node.body, "self.hf_config.architectures[0]", None)
        # the whole list replaced (0.5.23 Step3p7, NemotronH_Omni): ["Step3p5MTP"]
        values += [v[1:-1] for v in _assigns(node.body, "self.hf_config.architectures", None)
                   if v.startswith("[") and v.endswith("]") and "," not in v]
        literal = [ast.literal_eval(v) for v in values if v[:1] in "'\""]
        if len(literal) > 1:  # DeepseekV4: DSpark or NextN by the algorithm; the MTP one
            literal = [v for v in literal if "NextN" in v or "MTP" in v]
        if len(literal) == 1 and len(literal) == len(values):
            out.update(dict.fromkeys(names, literal[0]))
        elif len(literal) == 1 and len(values) == 2:
            out.update(dict.fromkeys(names, literal[0]))
    return out


def _triple(body: list[ast.stmt]) -> str | None:
    if len(body) >= 1 and isinstance(body[-1], ast.Return) and body[-1].value is not None:
        try:
            value = ast.literal_eval(body[-1].value)
        except ValueError:
            return None
        if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, int) for v in value):
            return "/".join(str(v) for v in value)
    return None


def auto_params(tree: ast.AST) -> dict[str, str] | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == (
            "auto_choose_speculative_params"
        ):
            return _chain(node.body)
    return None


def _chain(body: list[ast.stmt]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if isinstance(stmt, ast.Assign):
            continue  # the architecture read (``arch = hf_config.architectures[0]``), kwargs
        if isinstance(stmt, ast.Return):
            value = _triple([stmt])
            if value is None:
                return None
            out.setdefault("*", value)
            return out
        if not isinstance(stmt, ast.If):
            return None
        if len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise) and not stmt.orelse:
            continue  # a guard (0.4.4.post4-0.4.6.post1: no local config.json raises)
        if all(isinstance(n, ast.Assign) for n in stmt.body + stmt.orelse):
            continue  # which config file (0.4.4.post4: decrypted_config_file)
        node: ast.If | None = stmt
        while node is not None:
            value = _triple(node.body)
            test = ast.unparse(node.test)
            if value is None:
                return None
            if "speculative_algorithm" in test and "'STANDALONE'" in test:
                out.setdefault("STANDALONE", value)
            else:
                names = _arch_compare(node.test, ("model_arch", "arch"))
                if names is None:
                    return None
                for name in names:
                    out.setdefault(name, value)
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                node = orelse[0]
            else:
                if orelse:
                    value = _triple(orelse)
                    if value is None:
                        return None
                    out.setdefault("*", value)
                    return out
                node = None
    return out if "*" in out else None


READERS = {
    "eagle_without_draft_means_mtp": mtp_targets,
    "draft_worker_mtp_architectures": draft_classes,
    "auto_params": auto_params,
}


def read_release(root: Path) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    for table, files in SOURCES.items():
        found: dict[str, str] | None = {}
        read_any = False
        for name in files:
            path = root / "sglang" / name
            if not path.is_file():
                continue
            read_any = True
            tree = ast.parse(path.read_text("utf-8"))
            _CONSTANTS.clear()
            _CONSTANTS.update(_module_constants(tree))
            got = READERS[table](tree)
            if got is None:
                continue
            if table == "auto_params" and found:
                found = None  # two definitions: not read
                break
            assert found is not None
            found.update(got)
        if table == "auto_params" and not found:
            found = None  # no such function here: the release defaults them otherwise
        tables[table] = found if read_any else None
    return tables


def main() -> int:
    base = Path(sys.argv[1])
    out = {}
    for root in sorted(base.glob("sglang-*")):
        out[root.name.removeprefix("sglang-")] = read_release(root)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
