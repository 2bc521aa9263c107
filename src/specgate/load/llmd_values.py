"""Helm values of the llm-d ModelService chart, read as its decode Deployment runs them.

What the chart renders is data (``specgate/data/helm-charts.json``, key ``llm-d``, with
the chart's template, its defaults and version at a commit): with ``modelCommand:
vllmServe`` each decode container runs ``vllm serve MODEL`` + ``--tensor-parallel-size``
(when ``decode.parallelism.tensor`` > 1) + ``--served-model-name`` + its own ``args``;
with ``custom``, its ``command`` and ``args``. :func:`rendered` makes those Deployments
(each word pointing at the values key it came from) for the engine readers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from specgate.core.data import read_data
from specgate.core.errors import UnreadForm
from specgate.load.document import Document, NodePath, NodePosition, Span
from specgate.load.helm_values import go_text

Word = tuple[str, NodePath]


@cache
def _chart() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(read_data("helm-charts.json"))["llm-d"]
    return data


def _position(doc: Document, path: NodePath) -> NodePosition:
    probe = path
    while probe and probe not in doc.positions:
        probe = probe[:-1]
    return doc.positions[probe] if probe else NodePosition("mapping", Span(1, 1))


def _text(doc: Document, value: object, where: NodePath) -> str:
    text = go_text(value)
    if text is None or "{{" in text:
        span = doc.locate(where)
        raise UnreadForm(
            "a value the chart renders in a way specgate does not settle (a template, or a "
            "number Go prints otherwise); write it out",
            doc.file,
            span.line,
        )
    return text


def _model(doc: Document, artifacts: Mapping[str, Any]) -> Word:
    """The model word ``argsByProtocol`` renders from ``modelArtifacts.uri``."""
    chart = _chart()
    where: NodePath = ("modelArtifacts", "uri")
    uri = artifacts.get("uri", chart["uri_default"])
    if uri == chart["uri_default"]:  # "hf://{{ .Values.modelArtifacts.name }}"
        uri = "hf://" + _text(doc, artifacts.get("name"), ("modelArtifacts", "name"))
    text = _text(doc, uri, where)
    protocol, _, rest = text.partition("://")
    if protocol == "hf":
        return rest, where
    if protocol == "pvc":
        mount = _text(doc, artifacts.get("mountPath", chart["mount_path_default"]), where)
        return f"{mount}/{rest.partition('/')[2]}", where
    span = doc.locate(where)
    raise UnreadForm(f"modelArtifacts.uri {protocol}:// is not read", doc.file, span.line)


def _words(doc: Document, container: Mapping[str, Any], at: NodePath) -> list[Word] | None:
    """The command words of one decode container, ``None`` for ``imageDefault``."""
    data = doc.data
    assert isinstance(data, Mapping)
    how = container.get("modelCommand", "custom")
    args = container.get("args")
    own = [
        (_text(doc, a, (*at, "args", i)), (*at, "args", i))
        for i, a in enumerate(args if isinstance(args, list) else [])
    ]
    if how == "custom":
        command = container.get("command")
        return [
            (_text(doc, c, (*at, "command", i)), (*at, "command", i))
            for i, c in enumerate(command if isinstance(command, list) else [])
        ] + own
    if how != "vllmServe":
        return None
    words: list[Word] = [("vllm", at), ("serve", at), _model(doc, data["modelArtifacts"])]
    decode = data["decode"]
    parallelism = decode.get("parallelism") if isinstance(decode, Mapping) else None
    tensor = parallelism.get("tensor") if isinstance(parallelism, Mapping) else None
    if isinstance(tensor, int) and not isinstance(tensor, bool) and tensor > 1:
        spot: NodePath = ("decode", "parallelism", "tensor")
        words += [("--tensor-parallel-size", spot), (str(tensor), spot)]
    name = data["modelArtifacts"].get("name")
    words += [
        ("--served-model-name", ("modelArtifacts", "name")),
        (_text(doc, name, ("modelArtifacts", "name")), ("modelArtifacts", "name")),
    ]
    return words + own


def rendered(doc: Document) -> Document | None:
    """The decode Deployment the llm-d ModelService chart renders from the values file
    ``doc``, ``None`` when ``doc`` is no such values file.

    Raises:
        UnreadForm: (SG312 on the deployment, not exit 2) a value the chart renders in
            a way specgate does not settle.
    """
    data = doc.data
    if doc.stream or not isinstance(data, Mapping):
        return None
    artifacts, decode = data.get("modelArtifacts"), data.get(_chart()["role"])
    if not isinstance(artifacts, Mapping) or not isinstance(decode, Mapping):
        return None
    containers = decode.get("containers")
    if not isinstance(containers, list):
        return None
    out: list[Any] = []
    sources: list[NodePath] = []
    positions: dict[NodePath, NodePosition] = {}
    if decode.get("create", True) and not data.get("multinode", False):
        for index, container in enumerate(containers):
            at: NodePath = ("decode", "containers", index)
            words = _words(doc, container, at) if isinstance(container, Mapping) else None
            if words is None:
                continue
            command: NodePath = (len(out), "spec", "template", "spec", "containers", 0, "command")
            for depth in range(1, len(command) + 1):
                positions[command[:depth]] = _position(doc, at)
            for i, (_, source) in enumerate(words):
                positions[command + (i,)] = _position(doc, source)  # noqa: RUF005
            box: dict[str, Any] = {"name": "vllm", "command": [w for w, _ in words]}
            image = container.get("image")
            if isinstance(image, str) and image.isprintable() and "\n" not in image:
                box["image"] = image
            out.append(
                {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [box]}}}}
            )
            sources.append(at)
    return doc._replace(data=out, positions=positions, stream=True, rendered=tuple(sources))
