"""A KServe InferenceService served by the Hugging Face runtime, read as the vLLM command
it runs.

KServe runs the ``kserve-huggingfaceserver`` runtime's container with
``--model_name={{.Name}}`` and the InferenceService's ``predictor.model.args``; the
server parses its own flags and hands the rest to vLLM's engine arguments with the
model ``--model_id`` (else ``--model_dir``). What is known of it is data
(``specgate/data/helm-charts.json``, key ``kserve``, with the runtime's and the server's
sources at a commit). :func:`rendered` turns such a manifest into a Deployment whose
command is ``vllm serve MODEL`` + the args vLLM receives, each word pointing at its
line, so the vLLM reader reads it. ``--backend auto`` (the default) picks vLLM or
transformers at start from what is installed and the model's architecture, which no
file settles: the manifest is refused at its line, naming ``--backend=vllm``.
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


@cache
def _runtime() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(read_data("helm-charts.json"))["kserve"]
    return data


def _model_block(data: object) -> Mapping[str, Any] | None:
    """``spec.predictor.model`` of an InferenceService of the Hugging Face format."""
    if not isinstance(data, Mapping) or data.get("kind") != "InferenceService":
        return None
    spec = data.get("spec")
    predictor = spec.get("predictor") if isinstance(spec, Mapping) else None
    model = predictor.get("model") if isinstance(predictor, Mapping) else None
    form = model.get("modelFormat") if isinstance(model, Mapping) else None
    if not isinstance(form, Mapping) or form.get("name") != _runtime()["model_format"]:
        return None
    return model if isinstance(model, Mapping) else None


def _flag(word: str) -> tuple[str, str | None]:
    name, eq, value = word.partition("=")
    return name, (value if eq else None)


def rendered(doc: Document) -> Document | None:
    """The Deployment the Hugging Face runtime runs for the InferenceService ``doc``
    (``None`` when ``doc`` is none served by it).

    Raises:
        UnreadForm: (SG312 on the deployment, not exit 2) ``--backend`` other than
            ``vllm`` (``auto`` decides at start), or an argument that is no string
            or number.
    """
    model = _model_block(doc.data) if not doc.stream else None
    if model is None:
        return None
    at: NodePath = ("spec", "predictor", "model")
    runtime = _runtime()
    raw_args = model.get("args")
    args: list[tuple[str, NodePath]] = []
    for index, value in enumerate(raw_args if isinstance(raw_args, list) else []):
        text = go_text(value) if not isinstance(value, bool) else None
        spot = (*at, "args", index)
        if text is None:
            span = doc.locate(spot)
            raise UnreadForm("an argument that is no string or number", doc.file, span.line)
        args.append((text, spot))
    passed, served, backend = _split(args, runtime)
    if backend is None or backend[0] != runtime["backend_read"]:
        span = doc.locate(backend[1] if backend else (*at, "args"))
        raise UnreadForm(
            "KServe's huggingfaceserver runs vLLM only with --backend=vllm "
            "(--backend auto chooses vLLM or transformers at start, from what is installed "
            "and the model's architecture); state --backend=vllm to have it read",
            doc.file,
            span.line,
        )
    storage = model.get("storageUri")
    if served is None:
        uri = storage if isinstance(storage, str) else ""
        served = (uri[len("hf://") :] if uri.startswith("hf://") else "/mnt/models", at)
    words = [("vllm", at), ("serve", at), served, *passed]
    base: NodePath = (0, "spec", "template", "spec", "containers", 0)
    positions: dict[NodePath, NodePosition] = {}
    command: NodePath = base + ("command",)  # noqa: RUF005
    for depth in range(1, len(command) + 1):
        positions[command[:depth]] = _position(doc, at)
    for index, (_, spot) in enumerate(words):
        positions[command + (index,)] = _position(doc, spot)  # noqa: RUF005
    container = {"name": runtime["runtime"], "command": [w for w, _ in words]}
    out = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [container]}}}}
    return doc._replace(data=[out], positions=positions, stream=True, rendered=((),))


Word = tuple[str, NodePath]


def _split(
    args: list[Word], runtime: Mapping[str, Any]
) -> tuple[list[Word], Word | None, Word | None]:
    """The words vLLM receives (the server's own flags taken out, its spellings of
    vLLM's renamed), the ``--model_id`` value and the ``--backend`` value."""
    own_values = set(runtime["own_value_flags"])
    own_switches = set(runtime["own_switches"])
    passed: list[Word] = []
    served: Word | None = None
    backend: Word | None = None
    i = 0
    while i < len(args):
        word, spot = args[i]
        name, inline = _flag(word)
        if name in own_values:
            value = inline
            if value is None and i + 1 < len(args):
                i += 1
                value = args[i][0]
            if name in runtime["model_flags"] and value is not None:
                served = (value, spot)
            if name == runtime["backend_flag"] and value is not None:
                backend = (value, spot)
        elif name not in own_switches:
            renamed = runtime["renamed"].get(name)
            if renamed is not None:
                word = renamed if inline is None else f"{renamed}={inline}"
            passed.append((word, spot))
        i += 1
    return passed, served, backend


def _position(doc: Document, path: NodePath) -> NodePosition:
    probe = path
    while probe and probe not in doc.positions:
        probe = probe[:-1]
    return doc.positions[probe] if probe else NodePosition("mapping", Span(1, 1))
