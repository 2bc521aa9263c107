"""An assistant checkpoint's own generation settings, read from its folder in the
repository (docs/engines.md#transformers-scripts).

``draft = AutoModelForCausalLM.from_pretrained("./draft")`` loads the assistant's
``generation_config`` from the checkpoint: ``from_pretrained`` calls
``adjust_generation_fn``, which reads ``generation_config.json`` in the folder and, when
there is none, builds one from ``config.json`` (``GenerationConfig.from_model_config``)
(transformers 5.19.0 modeling_utils.py ``PreTrainedModel.from_pretrained`` line 4345,
generation/utils.py ``GenerationMixin.adjust_generation_fn`` lines 517-570). The
candidate generator drafts with that config's ``num_assistant_tokens``,
``num_assistant_tokens_schedule`` and ``assistant_confidence_threshold``, a key unset
(absent or null) taking the release's default (candidate_generator.py
``AssistedCandidateGenerator.__init__`` lines 119-123, the defaults table
``_get_default_generation_params`` of generation/configuration_utils.py).

Read only when every step is followed:

- the name is written as a folder, never a hub id: ``./x`` or ``../x``, or a path of more
  than one ``/`` (a hub id has at most one); an absolute path is not read;
- ``from_pretrained`` is given the name alone, with only keywords that leave the
  generation config as the folder's (:data:`KEPT`); ``generation_config=``, ``subfolder=``,
  ``gguf_file=``, ``trust_remote_code=`` or ``**kwargs`` (which ``adjust_generation_fn``
  passes on as overrides) leave it not read;
- the working directory, which a script does not say, is taken as its own folder or the
  repository's top: the folder must read the same from both wherever it stands in either
  (it may stand in one only), else it is not read;
- the files stay inside the repository (:func:`specgate.core.paths.confined`: symlinks
  out refused), each read within :data:`specgate.load.read.MAX_BYTES` and parsed as JSON;
- every value is of the type transformers' config holds (an integer, a string, a number).

Not read, the assistant's settings stay the defaults of the release, an assumption the
reader says so (:mod:`specgate.inputs.engines.transformers`).
"""

from __future__ import annotations

import ast
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from specgate.core.errors import InputError
from specgate.core.paths import PathProblem, confined, repository_top
from specgate.load.document import NodePath, PositionRow, Span
from specgate.load.python_flow import MODEL_METHODS
from specgate.load.read import load_document

#: The settings the candidate generator reads from the assistant's config, and the JSON
#: types transformers' config holds for each.
KEYS: Mapping[str, tuple[type, ...]] = {
    "num_assistant_tokens": (int,),
    "num_assistant_tokens_schedule": (str,),
    "assistant_confidence_threshold": (int, float),
}
#: The mapping key that says the assistant's config was read, and from which file.
READ_FROM = "generation_config_file"
#: ``from_pretrained`` keywords that do not reach the generation config (weights' type
#: and placement, attention kernel, offline): ``adjust_generation_fn`` passes the other
#: keywords on to ``GenerationConfig.from_pretrained`` as overrides, or reads another file.
KEPT = frozenset(
    {"torch_dtype", "dtype", "device_map", "low_cpu_mem_usage", "attn_implementation",
     "local_files_only"}
)
#: The sub-configs ``from_model_config`` also takes generation settings from.
_SUBCONFIGS = ("decoder", "generator", "text_config")


class Own(NamedTuple):
    """The assistant's settings read: key → (value, span in ``shown``); an unset key is
    absent (the release's default runs)."""

    shown: str
    values: dict[str, tuple[object, Span]]


def local_name(name: str) -> bool:
    """Whether ``name`` can only be a folder: ``./x``, ``../x`` or more than one ``/``."""
    if name.startswith("/") or "\\" in name or "\x00" in name:
        return False
    return name.startswith(("./", "../")) or name.count("/") > 1


def loads_alone(call: ast.expr) -> bool:
    """Whether ``call`` (``Cls.from_pretrained(NAME, …)``, ``.to(…)`` after it too) is given
    only the name and keywords of :data:`KEPT`."""
    while (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in MODEL_METHODS
    ):
        call = call.func.value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "from_pretrained"
    ):
        return False
    named = [k.arg for k in call.keywords]
    first = "pretrained_model_name_or_path"
    if None in named or len(call.args) + named.count(first) != 1:
        return False
    return all(k in KEPT or k == first for k in named)


def own_config(name: str, script: Path, shown: str) -> Own | str:
    """The settings of the assistant folder ``name`` (module doc), or why they are not read.

    Args:
        name: the folder as ``from_pretrained`` is given it (:func:`local_name`).
        script: the script on disk; ``shown`` as shown to users.
    """
    folder = script.parent
    try:
        top = repository_top(folder)
    except PathProblem as exc:
        return f"the repository's top cannot be resolved ({exc})"
    bases = dict.fromkeys((Path(os.path.abspath(folder)), top))
    read: list[Own] = []
    for base in bases:
        found = _at(base, name, script, shown)
        if isinstance(found, str):
            return found
        if found is not None:
            read.append(found)
    if not read:
        return f"no config.json or generation_config.json in {name}"
    if any(r.values.keys() != read[0].values.keys() or _plain(r) != _plain(read[0])
           for r in read[1:]):
        return (
            f"{name} reads differently from the script's folder and from the repository's "
            "top, and the working directory the script runs from is not known"
        )
    return read[0]


def _plain(own: Own) -> dict[str, object]:
    return {k: v for k, (v, _) in own.values.items()}


def _at(base: Path, name: str, script: Path, shown: str) -> Own | str | None:
    """The settings of ``base / name``; None when it holds neither config file."""
    for file, whole in (("generation_config.json", True), ("config.json", False)):
        path = base / name / file
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(script.parent))
        seen = posixpath.normpath(posixpath.join(posixpath.dirname(shown), *relative.split(os.sep)))
        try:
            found = confined(path)
        except PathProblem as exc:
            if str(exc) == "no such file":
                continue
            return f"{seen}: {exc}"
        try:
            doc = load_document(found, seen)
        except InputError as exc:
            return f"{seen}: {exc.reason}"
        if not isinstance(doc.data, Mapping):
            return f"{seen} is not a JSON object"
        if not whole and any(
            isinstance(doc.data.get(sub), Mapping) and any(k in doc.data[sub] for k in KEYS)
            for sub in _SUBCONFIGS
        ):  # from_model_config's sub-config fallback: not followed
            return f"{seen} sets an assistant setting in a sub-config"
        values: dict[str, tuple[object, Span]] = {}
        for key, kinds in KEYS.items():
            value = doc.data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, kinds):
                shown_value = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "…"
                return f"{seen}: {key} is {shown_value}, not of the type transformers reads"
            values[key] = (value, doc.locate((key,)))
        return Own(seen, values)
    return None


#: Where one call's values go: its mapping, its node path, the rows and origins.
Target = tuple[dict[str, object], NodePath, dict[NodePath, PositionRow], dict[NodePath, str]]


def named_assistant(
    helper: ast.expr | None, script: Path | None, shown: str, target: Target
) -> list[str]:
    """A pipeline's ``assistant_model="./draft"`` (a string literal, ``helper``): the
    folder's settings put into ``target`` as :func:`read_into` puts them (the pipeline
    loads it by name: ``made`` None there); nothing for any other value or a script not
    on disk."""
    if not (isinstance(helper, ast.Constant) and isinstance(helper.value, str)) or not script:
        return []
    return read_into(helper.value, None, script, shown, target)


def read_into(
    name: str, made: ast.expr | None, script: Path, shown: str, target: Target
) -> list[str]:
    """The settings of the assistant ``name`` loaded by ``made`` (module doc) put into
    ``target`` under ``assistant_generation_config``, below what the script assigns itself
    after loading (``draft.generation_config.KEY = …`` wins), with :data:`READ_FROM`
    naming the file; else the note saying why a folder is not read. Nothing for a name
    that is no folder (a hub id).

    ``made`` None: the name given to ``pipeline(..., assistant_model="./draft")`` as a
    string, which the pipeline loads as ``Cls.from_pretrained(name)`` of the class its
    ``config.json`` names, with no keyword that reaches the generation config
    (transformers 5.19.0 pipelines/base.py ``load_assistant_model``: ``load_model(name,
    config=AutoConfig.from_pretrained(name))``, whose ``from_pretrained`` is given only
    ``_from_pipeline``, a telemetry tag): the folder is read as for a call given the name
    alone."""
    if not local_name(name):
        return []
    own = own_config(name, script, shown) if made is None or loads_alone(made) else (
        "from_pretrained is given more than the folder's name"
    )
    if isinstance(own, str):
        return [f"the assistant's generation_config in {name} not read: {own}"]
    out, base, rows, origins = target
    assistant: NodePath = (*base, "assistant_model")
    at = rows[assistant]
    inner = out.setdefault("assistant_generation_config", {})
    assert isinstance(inner, dict)
    block: NodePath = (*base, "assistant_generation_config")
    rows.setdefault(block, at)
    inner[READ_FROM] = own.shown
    marker: NodePath = (*block, READ_FROM)
    rows[marker] = at
    for key, (value, span) in own.values.items():
        if key in inner:
            continue
        inner[key] = value
        path: NodePath = (*block, key)
        rows[path] = ("scalar", span.line, span.column, span.line, span.column)
        origins[path] = own.shown
    return []
