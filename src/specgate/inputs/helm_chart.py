"""A Helm chart's own ``appVersion`` as the image tag its values leave empty
(docs/engines.md#versions).

``helm create``'s deployment template renders the image as ``"{{ .Values.image.repository
}}:{{ .Values.image.tag | default .Chart.AppVersion }}"`` (helm/helm
``pkg/chartutil/create.go``@0052fe64), and its values set ``tag: ""``: sprig's ``default``
gives the chart's ``appVersion`` for an empty, null or missing tag. Many charts keep that
line; many do not (``image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"``, a
helper given the whole ``image`` mapping). So the tag is the ``appVersion`` only where the
chart's own templates say so:

* the values file is the chart's ``values.yaml`` (the defaults Helm's loader reads), with
  ``Chart.yaml`` beside it and not inside a parent chart's ``charts/`` (whose values may
  set it);
* every mention of ``.Values.P.tag`` in the files under ``templates/`` (``P`` the dotted
  path of the ``image`` mapping) is ``.Values.P.tag | default .Chart.AppVersion`` or
  ``default .Chart.AppVersion .Values.P.tag``, at least one, and ``.Values.P`` is never
  used whole (handed to a helper that may read ``.tag`` otherwise);
* ``Chart.yaml``'s ``appVersion`` is a string (``helm lint`` refuses another type:
  "appVersion should be of type string").

Otherwise the tag stays unsettled: it pins nothing. Files are read inside the repository
only (symlinks and folders that lead out are skipped, :func:`specgate.core.paths.confined`),
at most :data:`MAX_TEMPLATES` of them; more, and nothing is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from specgate.core.errors import InputError

#: Template files read at most; a chart with more is not read (the tag stays unsettled).
MAX_TEMPLATES = 64
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def chart_image(
    data: object, path: Sequence[str | int], values: Path | None
) -> tuple[str, str] | None:
    """``(image, origin)``: the image the chart renders for the values ``image:`` mapping
    nearest above ``path`` whose ``tag`` is empty, null or missing, with the chart's
    ``appVersion`` as its tag, and where that came from for the report; None when no
    such mapping holds the node, or the chart does not settle the tag (module doc)."""
    if values is None or values.name != "values.yaml":
        return None
    found = _empty_tag_image(data, path)
    if found is None:
        return None
    keys, image = found
    chart = values.parent
    if (chart.parent.name == "charts" and (chart.parent.parent / "Chart.yaml").is_file()):
        return None  # a subchart: its parent's values may set the tag
    app_version = _app_version(chart / "Chart.yaml")
    dotted = ".".join(keys)
    where = _renders_default(chart / "templates", dotted)
    if app_version is None or where is None:
        return None
    registry = image.get("registry")
    repository = str(image["repository"])
    name = f"{registry}/{repository}" if isinstance(registry, str) and registry else repository
    origin = (
        f"image tag from Chart.yaml appVersion {app_version}: values.yaml leaves "
        f"{dotted}.tag empty and {where} renders it with default .Chart.AppVersion"
    )
    return f"{name}:{app_version}", origin


def _empty_tag_image(
    data: object, path: Sequence[str | int]
) -> tuple[list[str], Mapping[str, object]] | None:
    """The key path and mapping of the nearest ``image`` mapping at or above ``path``
    with a string ``repository`` and an empty, null or missing ``tag``; None when the
    nearest ``image`` on the way is another, or a key on the way is not a plain
    template field name (a list item, ``a-b``)."""
    nodes: list[tuple[list[str], object]] = [([], data)]
    for key in path:
        node = nodes[-1][1]
        if not isinstance(key, str) or not isinstance(node, Mapping) or key not in node:
            break
        nodes.append(([*nodes[-1][0], key], node[key]))
    for keys, node in reversed(nodes):
        if not isinstance(node, Mapping) or "image" not in node:
            continue
        image = node["image"]
        if not isinstance(image, Mapping) or not isinstance(image.get("repository"), str):
            return None
        if image.get("tag") not in (None, "") or not all(_KEY.match(k) for k in keys):
            return None
        return [*keys, "image"], image
    return None


def _app_version(chart_yaml: Path) -> str | None:
    """``appVersion`` of ``Chart.yaml`` when it is a non-empty string, else None."""
    from specgate.load.read import read_text
    from specgate.load.yaml_loader import load_yaml_documents

    if not _inside(chart_yaml):
        return None
    try:
        doc = load_yaml_documents(read_text(chart_yaml, "Chart.yaml"), "Chart.yaml")
    except InputError:
        return None
    meta = doc.data
    version = meta.get("appVersion") if isinstance(meta, Mapping) else None
    return version.strip() if isinstance(version, str) and version.strip() else None


def _renders_default(templates: Path, dotted: str) -> str | None:
    """The first template file (relative to the chart) that renders ``.Values.DOTTED.tag``
    with ``default .Chart.AppVersion``, when every mention of ``.Values.DOTTED`` in the
    chart's templates is that; else None."""
    from specgate.load.read import read_text

    if not templates.is_dir() or not _inside(templates):
        return None
    from itertools import islice

    listed = (p for p in templates.rglob("*") if p.suffix in (".yaml", ".yml", ".tpl"))
    files = sorted(islice(listed, MAX_TEMPLATES + 1))  # never more listed than that
    if len(files) > MAX_TEMPLATES:
        return None
    field = r"\$?\.Values\." + re.escape(dotted)
    # .Values.P whole (to a helper, under with) or its .tag: each must be settled
    mention = re.compile(field + r"(?:\.tag)?(?![A-Za-z0-9_.])")
    settled = re.compile(
        field + r"\.tag\s*\|\s*default\s+\$?\.Chart\.AppVersion(?![A-Za-z0-9_.])"
        r"|default\s+\$?\.Chart\.AppVersion\s+" + field + r"\.tag(?![A-Za-z0-9_.])"
    )
    first: str | None = None
    for file in files:
        if not file.is_file() or not _inside(file):
            continue
        try:
            text = read_text(file, file.name)
        except InputError:
            return None
        spans = [m.span() for m in settled.finditer(text)]
        for m in mention.finditer(text):
            if not any(a <= m.start() < b for a, b in spans):
                return None  # used whole, or its tag rendered some other way
        if spans and first is None:
            first = file.relative_to(templates.parent).as_posix()
    return first


def _inside(path: Path) -> bool:
    """Whether ``path`` leads to a file or folder inside the repository holding it."""
    from specgate.core.paths import PathProblem, confined

    try:
        confined(path)
    except PathProblem:
        return False
    return True
