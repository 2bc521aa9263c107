"""RFC 6901 JSON Pointers, and the search for speculative configurations in a document.

Shapes:
- a *pointer* is ``""`` (the whole document) or ``/token/token…`` with ``~1`` for
  ``/`` and ``~0`` for ``~`` inside tokens (RFC 6901 §3–4);
- a *node path* (:mod:`specgate.load.document`) is the tuple of mapping keys and list
  indexes the pointer names. A pointer may continue into a string scalar that
  holds a JSON object or array (``/server_args/speculative_config/method``), as
  configs keep JSON inside YAML strings.

YAML text inside a string is entered too (a Kubernetes ConfigMap's ``data:
{extra.yaml: |…}``): by a pointer that names it or continues into it, and by the
search when the string's key is a YAML file name (``*.yaml``/``*.yml``); such text
is parsed with the claims file's limits (aliases, nodes, nesting), at most
:data:`MAX_EMBEDDED` levels deep for the search. A pointer passes through at most
:data:`MAX_POINTER_EMBEDDED` strings of embedded JSON or YAML text (an input error
naming the limit beyond): YAML text nested in YAML text grows with its indentation,
so without a cap a 255 KB file asked for 500 ever-larger parses (> 60 s). Each
embedded string is parsed once per run (cached), whoever asks.

The search (docs/engines.md#finding-the-configuration) walks mappings, lists, JSON strings inside
scalars, argv lists and command-line strings, and asks an engine-aware *detector* what
each node configures. A node that configures speculation ends the descent below
it (the outer node carries context such as the target TP). Exactly one
configuration ⇒ it is used; several ⇒ :class:`~specgate.core.errors.InputError`
listing their pointers; none ⇒ "no speculative decoding configured in FILE".
*Fragments* (draft fields without an algorithm) configure nothing but are
returned so a reader can complete a launcher split over several strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from specgate.core.errors import InputError
from specgate.load.document import Document, NodePath, PathElement

MAX_DEPTH = 64
#: YAML text inside YAML text is entered at most this many levels deep.
MAX_EMBEDDED = 2
#: Strings of embedded JSON or YAML text a pointer may pass through (the config
#: stores in the wild use one or two: JSON in a YAML string, YAML in a ConfigMap).
MAX_POINTER_EMBEDDED = 8
_YAML_NAMES = (".yaml", ".yml")


@dataclass(frozen=True)
class Verdict:
    """What a detector says about one node.

    Attributes:
        engine: the engine whose format matched.
        kind: ``"config"`` (a speculative configuration), ``"fragment"`` (draft
            fields without an algorithm: configures nothing by itself) or ``"other"``
            (the command of a program no engine specgate reads is: neither, and not
            searched further, so the JSON value of its flag is no configuration).
        command: for a string holding several commands, the 0-based command index.
    """

    engine: str
    kind: Literal["config", "fragment", "other"]
    command: int | None = None


@dataclass(frozen=True)
class Found:
    """A node the search found: its path, the detector's verdict and the node value."""

    path: NodePath
    verdict: Verdict
    value: object

    @property
    def pointer(self) -> str:
        """The RFC 6901 pointer of the node."""
        return format_pointer(self.path)

    def label(self) -> str:
        """The pointer, with the command number when a string holds several."""
        shown = self.pointer or "/"
        if self.verdict.command is not None:
            shown += f" (command {self.verdict.command + 1})"
        return f"{shown} [{self.verdict.engine}]"


Detector = Callable[[object], Sequence[Verdict]]


def escape_token(token: PathElement) -> str:
    """One reference token, escaped (``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def format_pointer(path: NodePath) -> str:
    """The RFC 6901 pointer naming ``path`` (``""`` for the root)."""
    return "".join("/" + escape_token(element) for element in path)


def split_pointer(pointer: str, *, file: str | None = None) -> list[str]:
    """The unescaped reference tokens of ``pointer``.

    Raises:
        InputError: a pointer not starting with ``/`` or holding a bad ``~`` escape.
    """
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise InputError(f"JSON pointer {pointer!r} must be empty or start with '/'", file)
    tokens = []
    for raw in pointer[1:].split("/"):
        if "~" in raw.replace("~0", "").replace("~1", ""):
            raise InputError(f"JSON pointer {pointer!r} has a '~' not followed by 0 or 1", file)
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tokens


def parse_json_scalar(value: object) -> object | None:
    """The parsed JSON object/array a string scalar holds, else None."""
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    return _json_container(stripped)


@lru_cache(maxsize=16)
def _json_container(stripped: str) -> object | None:
    """The JSON object or array ``stripped`` holds, else None; cached, as
    :func:`embedded_yaml_document` (the pointer, the search, the readers and the
    locator ask about the same string; the result is only read)."""
    from specgate.load.json_loader import loads

    try:
        parsed = loads(stripped)
    except ValueError:
        return None
    return parsed if isinstance(parsed, (dict, list)) else None


def parse_embedded_yaml(value: object) -> object | None:
    """The mapping or list a string holding YAML text parses to (a ConfigMap's
    ``extra.yaml: |`` value), else None: see :func:`embedded_yaml_document`."""
    doc = embedded_yaml_document(value) if isinstance(value, str) else None
    return doc.data if doc is not None else None


@lru_cache(maxsize=8)
def embedded_yaml_document(value: str) -> Document | None:
    """``value`` parsed as YAML text, when it holds a mapping or a list; None for a JSON
    object or array (read as JSON), a single line without a ``key: value`` or
    ``- item`` shape, a plain scalar, or YAML that does not parse or breaks a limit of
    :mod:`specgate.load.yaml_loader` (one document). Cached: the search, the pointer and the
    locator ask about the same string; the document is only read."""
    if parse_json_scalar(value) is not None:
        return None
    stripped = value.strip()
    if "\n" not in stripped and ": " not in stripped and not stripped.startswith("- "):
        return None
    from specgate.load.yaml_loader import load_yaml

    try:
        doc = load_yaml(value, "", "pyyaml")  # mounted as a file, read by the engine
    except InputError:
        return None
    return doc if isinstance(doc.data, (dict, list)) else None


def _yaml_named(path: NodePath) -> bool:
    return bool(path) and str(path[-1]).lower().endswith(_YAML_NAMES)


def rendered_pointer(doc: Document, pointer: str | None, file: str) -> str | None:
    """``pointer`` as it addresses the Deployments a chart's values file renders
    (``doc.rendered``): a pointer at or into the values item a Deployment was rendered
    from (``/servingEngineSpec/modelSpec/1/vllmConfig``) names that Deployment
    (``/0``, ``/1``, … in the order the template renders them); a pointer whose first
    token is such an index already names one, and is kept.

    Raises:
        InputError: a pointer into the values file that names no item the chart renders
            (a disabled item, a key outside the list), naming the pointers that do.
    """
    if pointer is None or not doc.rendered:
        return pointer
    tokens = split_pointer(pointer, file=file)
    if tokens and tokens[0].isdigit():
        return pointer
    for index, item in enumerate(doc.rendered):
        if len(tokens) >= len(item) and all(
            str(element) == token for element, token in zip(item, tokens, strict=False)
        ):
            return f"/{index}"
    named = ", ".join(format_pointer(item) or "/" for item in doc.rendered[:8])
    more = f" and {len(doc.rendered) - 8} more" if len(doc.rendered) > 8 else ""
    raise InputError(
        f"JSON pointer {pointer}: {file} is a chart's values file, read as the "
        f"Deployments its template renders; a pointer names the values item one is "
        f"rendered from ({named or 'none rendered'}{more}) or its place among them "
        f"(/0 for the first)",
        file,
    )


def resolve_pointer(
    data: object, pointer: str, *, file: str | None = None
) -> tuple[NodePath, object]:
    """Follow ``pointer`` from ``data``; returns the node path and the node.

    List tokens must be decimal indexes without leading zeros (RFC 6901 §4). A
    string holding a JSON object or array, or YAML text, is entered when tokens
    remain, at most :data:`MAX_POINTER_EMBEDDED` times.

    Raises:
        InputError: a token that names nothing, naming the pointer prefix that failed;
            more than :data:`MAX_POINTER_EMBEDDED` embedded documents on the way.
    """
    path: list[PathElement] = []
    node = data
    entered = 0
    for token in split_pointer(pointer, file=file):
        where = format_pointer(tuple(path)) or "the document root"
        inner = parse_json_scalar(node)
        if inner is None:
            inner = parse_embedded_yaml(node)
        if inner is not None:
            entered += 1
            if entered > MAX_POINTER_EMBEDDED:
                raise InputError(
                    f"JSON pointer: at {where}, it enters more than "
                    f"{MAX_POINTER_EMBEDDED} levels of JSON or YAML text inside strings "
                    f"(specgate's limit is {MAX_POINTER_EMBEDDED})",
                    file,
                )
            node = inner
        if isinstance(node, dict):
            if token not in node:
                raise InputError(f"JSON pointer {pointer}: no key {token!r} in {where}", file)
            path.append(token)
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or (token != "0" and token.startswith("0")):
                raise InputError(f"JSON pointer {pointer}: {token!r} is not a list index", file)
            if int(token) >= len(node):
                raise InputError(
                    f"JSON pointer {pointer}: index {token} is past the end of {where} "
                    f"({len(node)} items)",
                    file,
                )
            path.append(int(token))
            node = node[int(token)]
        else:
            raise InputError(f"JSON pointer {pointer}: {where} is a scalar, not a container", file)
    return tuple(path), node


def search(data: object, detect: Detector, *, base: NodePath = ()) -> list[Found]:
    """Every node under ``data`` (at ``base``) the detector recognises, in document order.

    A node with a ``config`` verdict is not descended into; fragments are recorded
    and descended into neither. In a Compose file the top-level ``x-`` extension
    fields are not searched (Compose ignores them; services merge them with ``<<:``).
    """
    found: list[Found] = []
    if not base and _is_compose(data):
        # Compose ignores top-level ``x-`` extension fields: the idiom is an ``x-`` block
        # merged into services with ``<<:``, which is one configuration, not two
        assert isinstance(data, dict)
        for key, child in data.items():
            if not str(key).startswith("x-"):
                _walk(child, (str(key),), detect, found, 1, embedded=0)
        return found
    _walk(data, base, detect, found, 0, embedded=0)
    return found


def _is_compose(data: object) -> bool:
    """A Compose file: a top-level ``services`` mapping (the Compose specification's
    one required element)."""
    return isinstance(data, dict) and isinstance(data.get("services"), dict)


def _walk(
    node: object, path: NodePath, detect: Detector, found: list[Found], depth: int, *, embedded: int
) -> None:
    if depth > MAX_DEPTH:
        return
    inner = parse_json_scalar(node)
    if inner is not None:
        _walk(inner, path, detect, found, depth + 1, embedded=embedded)
        return
    if embedded < MAX_EMBEDDED and _yaml_named(path):
        inner = parse_embedded_yaml(node)
        if inner is not None:
            _walk(inner, path, detect, found, depth + 1, embedded=embedded + 1)
            return
    verdicts = list(detect(node))
    if verdicts:
        found.extend(Found(path, verdict, node) for verdict in verdicts)
        return
    if isinstance(node, dict):
        for key, child in node.items():
            _walk(child, (*path, str(key)), detect, found, depth + 1, embedded=embedded)
    elif isinstance(node, list):
        for index, child in enumerate(node):
            _walk(child, (*path, index), detect, found, depth + 1, embedded=embedded)


def find_configuration(
    data: object, detect: Detector, *, file: str, pointer: str | None
) -> tuple[Found, list[Found]]:
    """The one speculative configuration in ``data`` (below ``pointer`` when given).

    Returns:
        the configuration and the fragments found in the whole document.

    Raises:
        InputError: a bad pointer; several configurations (listing their pointers);
        none ("no speculative decoding configured in FILE", naming the pointer when
        one was given).
    """
    configs, fragments, where = find_configurations(data, detect, file=file, pointer=pointer)
    if len(configs) > 1:
        raise several_configurations(configs, where, file)
    return configs[0], fragments


class SeveralConfigurations(InputError):
    """Several speculative configurations in one file and no ``pointer:`` choosing one:
    the claims file must say which (an input error of the run, never a guess)."""


def several_configurations(
    configs: Sequence[Found], where: str, file: str, why: str = ""
) -> InputError:
    """The error for several configurations: "2 speculative configurations in FILE:
    /a [vllm], /b [vllm]; choose one with `pointer:`" (``why``, when given, follows
    the list in parentheses: what differs between them)."""
    listed = ", ".join(f.label() for f in configs)
    because = f" ({why})" if why else ""
    return SeveralConfigurations(
        f"{len(configs)} speculative configurations in {where}: {listed}{because}; "
        "choose one with `pointer:`",
        file,
    )


def find_configurations(
    data: object, detect: Detector, *, file: str, pointer: str | None
) -> tuple[list[Found], list[Found], str]:
    """Every speculative configuration in ``data`` (below ``pointer`` when given), in
    document order, the fragments found in the whole document, and where the search
    looked (``FILE`` or ``FILE at POINTER``, for messages).

    Raises:
        InputError: a bad pointer; none ("no speculative decoding configured in FILE",
        naming the pointer when one was given).
    """
    everything = search(data, detect)
    fragments = [f for f in everything if f.verdict.kind == "fragment"]
    if pointer is None:
        configs = [f for f in everything if f.verdict.kind == "config"]
        where = file
    else:
        base, node = resolve_pointer(data, pointer, file=file)
        # A pointer naming a string of YAML text (whatever its key) means that text.
        embedded = parse_embedded_yaml(node)
        if embedded is None:
            _embedded_limit(node, pointer, file)
        node = embedded or node
        configs = [f for f in search(node, detect, base=base) if f.verdict.kind == "config"]
        where = f"{file} at {pointer or '/'}"
    if not configs:
        raise InputError(f"no speculative decoding configured in {where}", file)
    return configs, fragments, where


def _embedded_limit(node: object, pointer: str, file: str) -> None:
    """Raise the limit a pointer-named string of YAML text broke (aliases, nodes,
    nesting), which the search skips silently; other parse failures are left to the
    readers (the string may be a command line, not YAML).

    Raises:
        InputError: "the YAML text at POINTER: more than 100 nested aliases", ….
    """
    if not isinstance(node, str) or "\n" not in node.strip():
        return
    from specgate.load.yaml_loader import load_yaml

    try:
        load_yaml(node, file)
    except InputError as exc:
        if any(word in exc.reason for word in ("alias", "nodes", "nesting")):
            raise InputError(f"the YAML text at {pointer}: {exc.reason}", file) from None
