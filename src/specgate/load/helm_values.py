"""Helm values files of the charts teams serve with, read as the chart renders them.

A values file holds no command: the chart's template makes one of its keys. For each
chart in ``specgate/data/helm-charts.json`` (its keys read from the chart's own
template at a commit, named there), :func:`rendered` turns a values file into the
Kubernetes Deployments the template renders — the container's ``image`` and its
``command`` words in the template's order — so the engine readers read it as any
manifest: the served model, ``--tensor-parallel-size``, ``--max-model-len`` and every
flag of ``extraArgs`` go through the engine's own flag reader. Each rendered word
points at the values key it came from (findings land on the values file's lines).

Go templates print a value with ``fmt``'s ``%v`` (sprig's ``quote``): a string as is,
a boolean as ``true``/``false``, and Helm's numbers as float64, so ``1000000`` becomes
``1e+06``. A value is settled only where Python and Go print it the same way (strings,
booleans, numbers from 0.0001 up to a million); any other value is an input error at
its line, never a guessed word.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from specgate.core.data import read_data
from specgate.core.errors import UnreadForm
from specgate.load.document import Document, NodePath, NodePosition, Span

_IMAGE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,255}")


@dataclass(frozen=True)
class Chart:
    """One chart's values → command mapping (see ``helm-charts.json``)."""

    name: str
    engine: str
    version: str
    template: str
    raw: Mapping[str, Any]


@cache
def charts() -> tuple[Chart, ...]:
    """The charts read, from ``specgate/data/helm-charts.json``."""
    data = json.loads(read_data("helm-charts.json"))
    return tuple(
        Chart(c["chart"], c["engine"], c["version"], c["template"], c) for c in data["charts"]
    )


def _at(data: object, dotted: str) -> tuple[bool, object, NodePath]:
    """(present, value, node path) of the dotted key ``dotted`` under ``data``."""
    node = data
    path: NodePath = ()
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None, path
        node = node[part]
        path = (*path, part)
    return True, node, path


def _truthy(value: object) -> bool:
    """Go template truth: false, 0, nil and empty strings and collections are false."""
    return bool(value) if not isinstance(value, float) or not math.isnan(value) else True


def go_text(value: object) -> str | None:
    """``value`` as a Go template prints it (``%v``), ``None`` when Python cannot be
    sure it prints the same (a number of a million or more, or below 0.0001, a list,
    a mapping, null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and math.isfinite(value):
        size = abs(value)
        if size != 0 and not 1e-4 <= size < 1e6:
            return None
        if float(value).is_integer():
            return str(int(value))
        return repr(float(value))
    return None


class _Render:
    """The rendering of one values file: words, their positions, the images."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.positions: dict[NodePath, NodePosition] = {}
        self.images: list[str] = []

    def position(self, source: NodePath) -> NodePosition:
        probe = source
        while probe and probe not in self.doc.positions:
            probe = probe[:-1]
        return self.doc.positions[probe] if probe else NodePosition("mapping", Span(1, 1))

    def word(self, value: object, source: NodePath) -> str:
        text = go_text(value)
        if text is None:
            span = self.doc.locate(source)
            raise UnreadForm(
                f"{'.'.join(str(p) for p in source)}: the chart prints {value!r} as Go "
                "formats it, which specgate does not settle; write it as a string",
                self.doc.file,
                span.line,
                span.column,
            )
        return text

    def item(
        self, chart: Chart, spec: Mapping[str, Any], at: NodePath, out: NodePath
    ) -> dict[str, Any]:
        """One Deployment for the list item ``spec`` at ``at``, rendered at ``out``."""
        raw = chart.raw
        words: list[tuple[str, NodePath]] = [(w, at) for w in raw["program"]]
        found, value, path = _at(spec, raw["positional"])
        words.append((self.word(value, (*at, *path)) if found else "", (*at, *path)))
        for entry in raw["keys"]:
            found, value, path = _at(spec, entry["key"])
            where = (*at, *path)
            block = entry["key"].rsplit(".", 1)[0] if "." in entry["key"] else None
            if block is not None and not _truthy(_at(spec, block)[1]):
                continue  # {{- with $modelSpec.vllmConfig }}: the block renders nothing
            kind = entry["kind"]
            if kind == "switch" and _truthy(value):
                words.append((entry["flag"], where))
            elif kind == "bool" or (kind == "bool-if-set" and found):
                words.append((entry["flag"] if _truthy(value) else entry["off"], where))
            elif kind == "value" and found:
                words += [(entry["flag"], where), (self.word(value, where), where)]
            elif kind == "words" and _truthy(value):
                items = value if isinstance(value, list) else [value]
                for index, one in enumerate(items):
                    spot = (*where, index) if isinstance(value, list) else where
                    words.append((self.word(one, spot), spot))
        container: dict[str, Any] = {"name": chart.engine, "command": [w for w, _ in words]}
        base: NodePath = out + ("spec", "template", "spec", "containers", 0)  # noqa: RUF005
        for index, (_, source) in enumerate(words):
            self.positions[base + ("command", index)] = self.position(source)  # noqa: RUF005
        if chart.name == "vllm-stack":
            self._env(spec, at, base, container)
        image = self._image(chart, spec)
        if image is not None:
            container["image"] = image
            self.images.append(image)
        for depth in range(1, len(base) + 1):  # the Deployment's own nodes: the item
            self.positions[base[:depth]] = self.position(at)
        self.positions[base + ("command",)] = self.position(at)  # noqa: RUF005
        self.positions[base + ("image",)] = self.position(at + (chart.raw["image"]["tag"],))  # noqa: RUF005
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "spec": {"template": {"spec": {"containers": [container]}}},
        }

    def _env(
        self, spec: Mapping[str, Any], at: NodePath, base: NodePath, container: dict[str, Any]
    ) -> None:
        """The container's ``env`` and ``envFrom`` as vllm-stack's template renders them
        (production-stack ``helm/templates/deployment-vllm-multi.yaml@f1f98227``):
        ``VLLM_USE_V1: "0"`` when ``vllmConfig.v0`` prints as 1, then ``modelSpec.env``
        as written (``toYaml``), and an ``envFrom`` of the release's ConfigMap
        (``servingEngineSpec.configs``) or ``modelSpec.envFromSecret``, whose values the
        cluster holds (docs/engines.md#environment-values). A value that is no string
        (``toYaml`` prints it bare, which Kubernetes refuses) is not read as one."""
        env: list[dict[str, Any]] = []
        places: list[NodePath] = []
        config = spec.get("vllmConfig")
        if isinstance(config, Mapping) and go_text(config.get("v0")) == "1":
            env.append({"name": "VLLM_USE_V1", "value": "0"})
            places.append((*at, "vllmConfig", "v0"))
        items = spec.get("env")
        for index, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                continue
            value = item.get("value")
            if "value" in item and isinstance(value, str):
                env.append({"name": item["name"], "value": value})
            else:  # valueFrom, or a value that is no string: not settled here
                env.append({"name": item["name"], "valueFrom": {"secretKeyRef": {
                    "name": "(rendered by the chart)", "key": item["name"]}}})
            places.append(at + ("env", index) + (("value",) if "value" in item else ()))
        if env:
            container["env"] = env
            for index, place in enumerate(places):
                spot: NodePath = base + ("env", index)  # noqa: RUF005
                self.positions[spot] = self.position(place)
                self.positions[spot + ("value",)] = self.position(place)  # noqa: RUF005
        configs = _at(self.doc.data, "servingEngineSpec.configs")[1]
        if _truthy(configs) or _truthy(spec.get("envFromSecret")):
            container["envFrom"] = [{"secretRef": {"name": "(rendered by the chart)"}}]
            self.positions[base + ("envFrom",)] = self.position(at)  # noqa: RUF005

    def _image(self, chart: Chart, spec: Mapping[str, Any]) -> str | None:
        names = chart.raw["image"]
        repository, tag = spec.get(names["repository"]), spec.get(names["tag"])
        parts = [go_text(repository), go_text(tag)]
        if any(p is None or not _IMAGE_PART.fullmatch(p) for p in parts):
            return None  # unset, or not an image reference: no version from it
        return f"{parts[0]}:{parts[1]}"


def rendered(doc: Document) -> Document | None:
    """The Deployments a known chart renders from the values file ``doc`` (a stream
    of them, one per list item the template renders), ``None`` when ``doc`` is not a
    values file of a chart specgate reads.

    Raises:
        UnreadForm: (SG312 on the deployment, not exit 2) a value the template prints
            in a way specgate does not settle.
    """
    if doc.stream or not isinstance(doc.data, Mapping):
        return None
    for chart in charts():
        found, items, path = _at(doc.data, chart.raw["list"])
        if not found or not isinstance(items, list):
            continue
        gate = chart.raw["enabled"]
        present, on, _ = _at(doc.data, gate["key"])
        render = _Render(doc)
        out: list[Any] = []
        sources: list[NodePath] = []
        if _truthy(on) if present else gate["default"]:
            for index, spec in enumerate(items):
                if not isinstance(spec, Mapping) or any(
                    k in spec for k in chart.raw["rendered_elsewhere"]
                ):
                    continue
                item_gate = chart.raw["item_enabled"]
                if not (
                    _truthy(spec[item_gate["key"]])
                    if item_gate["key"] in spec
                    else item_gate["default"]
                ):
                    continue
                out.append(render.item(chart, spec, (*path, index), (len(out),)))
                sources.append((*path, index))
        images = "".join(f"\n# {chart.name} renders image: {i}" for i in render.images)
        return doc._replace(
            data=out, positions=render.positions, stream=True, text=doc.text + images,
            rendered=tuple(sources),
        )
    return None
