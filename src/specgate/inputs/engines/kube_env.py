"""The environment a Kubernetes container gets from elsewhere than its literal ``env``
values: ``env[].valueFrom`` and ``envFrom`` (docs/engines.md#environment-files).

Kubernetes ("Configure a Pod to Use a ConfigMap", "Define Environment Variables for a
Container"): ``envFrom`` sets every key of a ConfigMap (``configMapRef``) or Secret
(``secretRef``), each name with the entry's ``prefix``, a later source over an earlier
one; ``env`` is over ``envFrom``; ``valueFrom.configMapKeyRef`` takes one key of a
ConfigMap. A ConfigMap in the same manifest is read (its ``data``); one that is not is the
cluster's, set outside the repository (SG313), as is every Secret and a ``fieldRef`` or
``resourceFieldRef`` (known only when the pod runs). A ``value`` is expanded as the kubelet
expands it (:func:`expand`); a ``$(NAME)`` whose NAME is not settled leaves it unsettled; a
``configMapKeyRef`` to a key the ConfigMap does not hold stops the container
(:class:`~.unread.NotStarted`: SG312, a fail), unless marked ``optional: true``: then it
sets nothing (the kubelet skips it), so ``$(NAME)`` stays as written in ``args``. A value
read is :class:`~.expanded.Placed` at its node: what is found in it sits there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from specgate.core.errors import UnsettledValue
from specgate.core.limits import EXPANSION_ALLOWANCE
from specgate.inputs.engines._source import _node
from specgate.inputs.engines.expanded import Placed
from specgate.inputs.env_files import EnvFiles
from specgate.load.document import Document, NodePath


def kubernetes_env(
    doc: Document, path: NodePath, skipped: set[str] | None = None
) -> EnvFiles | None:
    """What the ``valueFrom`` and ``envFrom`` of the Kubernetes container holding
    ``path`` set, with its literal ``env`` values over them; None when it has neither.
    ``skipped``, when given, gets the names of ``env`` items that set nothing (an
    optional key its ConfigMap lacks)."""
    found = _container(doc, path)
    if found is None:
        return None
    where, container = found
    listed = container.get("env")
    env: list[object] = listed if isinstance(listed, list) else []
    sources = container.get("envFrom")
    if not sources and not any(
        isinstance(i, Mapping) and ("valueFrom" in i or "$" in str(i.get("value", "")))
        for i in env
    ):
        return None
    files = EnvFiles()
    #: what expanded values may hold in all: the manifest's length and 64 KiB (a chain of
    #: `$(A)$(A)` doubling at each entry is refused, never read differently)
    budget = len(doc.text) + EXPANSION_ALLOWANCE
    namespace = _namespace(doc, where)
    maps = _config_maps(doc, namespace)
    secrets = _config_maps(doc, namespace, "Secret") if any(
        isinstance(i, Mapping) and isinstance(i.get("valueFrom"), Mapping)
        and "secretKeyRef" in i["valueFrom"] for i in env
    ) else {}
    for index, source in enumerate(sources if isinstance(sources, list) else []):
        _env_from(doc, maps, (*where, "envFrom", index), source, files)
    for index, item in enumerate(env):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        at = (*where, "env", index)
        if "valueFrom" in item:
            _secret_key(doc, secrets, at, item)
            if not _value_from(doc, maps, at, item, files) and skipped is not None:
                skipped.add(item["name"])
        elif isinstance(item.get("value"), str) and "$" in item["value"]:
            expanded, why = expand(item["value"], files, budget)
            if why is None:
                budget -= len(expanded)
                files.set(item["name"], expanded, doc.file, doc.locate(at).line)
            else:
                files.unset(item["name"], _why(doc, at, item["name"], why[0], why[1]))
        else:
            value = item.get("value")
            written = (*at, "value") if "value" in item else at
            files.set(item["name"], Placed("" if value is None else str(value), written),
                      doc.file, doc.locate(at).line)
    return files


#: A service environment variable (Kubernetes, "Service" > "Environment variables":
#: ``{SVCNAME}_SERVICE_HOST``, ``_SERVICE_PORT``, ``_PORT``, ``_PORT_{port}_{PROTO}`` …),
#: which the cluster sets for every Service of the pod's namespace.
_SERVICE_VARIABLE = re.compile(
    r".+_(SERVICE_HOST|SERVICE_PORT(_.+)?|PORT|PORT_\d+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)"
)


def expand(value: str, files: EnvFiles, budget: int) -> tuple[str, tuple[str, str] | None]:
    """``value`` of an ``env`` item as the kubelet gives it to the container, from the
    variables set before it (``files``: its ``envFrom`` and the earlier items), or
    (origin, why) when that is not settled here. kubernetes/kubernetes
    ``third_party/forked/golang/expansion/expand.go@02604f7d`` (``Expand``,
    ``tryReadVariableName``) and the API reference of ``EnvVar.value``: ``$$`` is ``$``;
    ``$(NAME)`` (NAME anything up to the first ``)``) is NAME's value, or stays as written
    when NAME is not set before it; any other ``$`` stays, and so does ``$(`` with no
    ``)``. A NAME set before it to a value not settled, one an ``envFrom`` source not read
    may set, or one shaped as a service variable (the cluster's) is not settled."""
    out: list[str] = []
    i = 0
    while i < len(value):
        at = value.find("$", i)
        if at < 0 or at + 1 >= len(value):
            out.append(value[i:])
            break
        out.append(value[i:at])
        nxt = value[at + 1]
        close = value.find(")", at + 2) if nxt == "(" else -1
        if nxt == "$":
            out.append("$")
            i = at + 2
            continue
        if close < 0:  # `$X`, or `$(` with no `)`: kept as written
            out.append(value[at : at + 2])
            i = at + 2
            continue
        name = value[at + 2 : close]
        i = close + 1
        if name in files.values:
            known = files.values[name][0]
            budget -= len(known)
            if budget < 0:
                return value, ("repository", "its $(VAR) expansion passes specgate's budget "
                               "(the manifest's length plus 64 KiB), not followed")
            out.append(known)
        elif name in files.unsettled:
            return value, (files.unsettled[name].origin,
                           f"`$({name})`: {files.unsettled[name].reason}")
        elif files.opaque is not None:
            return value, ("outside", f"`$({name})`: an envFrom source not read may set "
                           f"{name}")
        elif _SERVICE_VARIABLE.fullmatch(name):
            return value, ("outside", f"`$({name})`: the cluster sets {name} for a Service")
        else:
            out.append(value[at:i])  # set by nothing before it: as written
    return "".join(out), None


def _container(doc: Document, path: NodePath) -> tuple[NodePath, Mapping[str, object]] | None:
    """The nearest container (a mapping with ``name`` and ``image``) holding ``path``."""
    for depth in range(len(path), -1, -1):
        node = _node(doc.data, path[:depth])
        if isinstance(node, Mapping) and "name" in node and "image" in node:
            return path[:depth], node
    return None


def _namespace(doc: Document, where: NodePath) -> object:
    """The ``metadata.namespace`` of the object holding the container at ``where`` (the
    nearest mapping above it with a ``kind``: a pod template has none), None when it
    names none (the namespace ``kubectl apply`` is given)."""
    for depth in range(len(where), -1, -1):
        node = _node(doc.data, where[:depth])
        if isinstance(node, Mapping) and "kind" in node:
            meta = node.get("metadata")
            return meta.get("namespace") if isinstance(meta, Mapping) else None
    return None


def _config_maps(
    doc: Document, namespace: object, kind: str = "ConfigMap"
) -> dict[object, tuple[NodePath, Mapping[str, object]]]:
    """The manifest's ConfigMaps (``kind``: Secrets) the pod in ``namespace`` sees, by
    name, with their paths. The kubelet looks a reference up in the pod's own namespace
    (kubelet_pods.go@df5f0243, ``makeEnvironmentVariables``: ``configMapLister ...
    (pod.Namespace).Get(name)``), so one of another namespace is not the pod's, nor one
    whose namespace is written on one side only (the other's is the one ``kubectl apply``
    is given: unknown here). Of two of one name, the later is what ``kubectl apply``
    leaves. A Secret the cluster fills (``type: kubernetes.io/service-account-token``,
    or no ``data``/``stringData`` at all) is not the manifest's to judge."""
    documents = doc.data if doc.stream and isinstance(doc.data, list) else [doc.data]
    found: dict[object, tuple[NodePath, Mapping[str, object]]] = {}
    for index, item in enumerate(documents):
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        if (
            isinstance(item, Mapping) and item.get("kind") == kind
            and isinstance(meta, Mapping) and isinstance(meta.get("name"), str)
            and meta.get("namespace") == namespace
            and not (kind == "Secret" and (
                item.get("type") == "kubernetes.io/service-account-token"
                or not any(isinstance(item.get(f), Mapping) for f in ("data", "stringData"))
            ))
        ):
            found[meta["name"]] = (((index,) if doc.stream else ()), item)
    return found


def _why(doc: Document, at: NodePath, name: str, origin: str, what: str) -> UnsettledValue:
    return UnsettledValue(f"`{name}`: {what}", doc.file, doc.locate(at).line, origin=origin,
                          what=name)


Maps = dict[object, tuple[NodePath, Mapping[str, object]]]


def _env_from(doc: Document, maps: Maps, at: NodePath, source: object, files: EnvFiles) -> None:
    line = doc.locate(at).line
    ref = source.get("configMapRef") if isinstance(source, Mapping) else None
    prefix = source.get("prefix", "") if isinstance(source, Mapping) else ""
    found = maps.get(ref.get("name")) if isinstance(ref, Mapping) else None
    if found is None or not isinstance(prefix, str):
        kind = "a ConfigMap not in this file" if isinstance(ref, Mapping) else "a Secret"
        origin = "outside" if isinstance(ref, Mapping) or (
            isinstance(source, Mapping) and "secretRef" in source
        ) else "repository"
        files.covered(UnsettledValue(
            f"envFrom takes its variables from {kind}, which the cluster supplies", doc.file,
            line, origin=origin, what="envFrom",
        ))
        return
    where, config = found
    data = config.get("data")
    for key, value in (data.items() if isinstance(data, Mapping) else ()):
        spot = (*where, "data", key)
        if isinstance(value, str) and "$(" not in value:
            files.set(prefix + str(key), Placed(value, spot), doc.file, doc.locate(spot).line)
        else:
            files.unset(prefix + str(key), _why(doc, spot, prefix + str(key), "repository",
                                                 "a ConfigMap value specgate does not read"))


def _missing_key(
    doc: Document, at: NodePath, variable: str, ref: Mapping[str, object], kind: str
) -> None:
    """A ``configMapKeyRef`` (``secretKeyRef``: ``kind`` Secret) not ``optional: true``
    to a key the manifest's ConfigMap (Secret) does not hold: the kubelet does not start
    the container (a Secret: "couldn't find key %v in Secret %v/%v"). kubernetes/kubernetes
    pkg/kubelet/kubelet_pods.go@df5f0243, ``makeEnvironmentVariables``: ``runtimeVal, ok
    = configMap.Data[key]; if !ok { if optional { continue }; return result,
    fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ...) }`` (the pod then waits in
    CreateContainerConfigError). A fail: the manifest states both sides (docs/engines.md
    #environment-files)."""
    from specgate.inputs.engines.unread import NotStarted

    key = _shown(ref.get("key"))
    name = _shown(ref.get("name"))
    where = (*at, "valueFrom", "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef")
    place = doc.locate((*where, "key") if "key" in ref else where)
    raw_key, raw_name = str(ref.get("key"))[:80], str(ref.get("name"))[:80]
    raise NotStarted(
        f"Kubernetes does not start the container, since env {_shown(variable)} takes key "
        f"{key} of {kind} {name}, which that {kind} in this manifest does not hold, "
        "and the reference is not optional; the kubelet stops at \"couldn't find key "
        f"{raw_key} in {kind} NAMESPACE/{raw_name}\" (CreateContainerConfigError; "
        "kubernetes/kubernetes pkg/kubelet/kubelet_pods.go@df5f0243, "
        f"makeEnvironmentVariables); add the key to the {kind}, or mark the reference "
        "`optional: true` if the engine may start without it",
        doc.file, place, speculates=True,
    )


def _shown(value: object) -> str:
    text = str(value)
    return f"`{text}`" if len(text) <= 80 else f"`{text[:79]}…`"


def _secret_key(doc: Document, secrets: Maps, at: NodePath, item: Mapping[str, object]) -> None:
    """A ``secretKeyRef`` (not optional) to a Secret of the manifest: the key is in its
    ``data`` or ``stringData`` (the API server merges stringData into data), else the
    kubelet stops as for a ConfigMap (:func:`_missing_key`)."""
    source = item["valueFrom"]
    secret = source.get("secretKeyRef") if isinstance(source, Mapping) else None
    held = secrets.get(secret.get("name")) if isinstance(secret, Mapping) else None
    if (isinstance(secret, Mapping) and held is not None and secret.get("optional") is not True
            and not any(isinstance(keys := held[1].get(f), Mapping) and secret.get("key") in keys
                        for f in ("data", "stringData"))):
        _missing_key(doc, at, str(item["name"]), secret, "Secret")


def _value_from(
    doc: Document, maps: Maps, at: NodePath, item: Mapping[str, object], files: EnvFiles
) -> bool:
    """Set (or unset) the item's name in ``files``; False when it sets nothing."""
    name, source = str(item["name"]), item["valueFrom"]
    ref = source.get("configMapKeyRef") if isinstance(source, Mapping) else None
    if not isinstance(ref, Mapping):
        files.unset(name, _why(doc, at, name, "outside",
                               "set from a Secret or the running pod (valueFrom)"))
        return True
    found = maps.get(ref.get("name"))
    if found is None:
        files.unset(name, _why(doc, at, name, "outside",
                               "set from a ConfigMap not in this file, which the cluster "
                               "supplies"))
        return True
    data = found[1].get("data")
    value = data.get(ref.get("key")) if isinstance(data, Mapping) else None
    if value is None and ref.get("optional") is True and not (
        isinstance(data, Mapping) and ref.get("key") in data
    ):
        # the kubelet skips an optional key its ConfigMap lacks: the item sets nothing
        # (kubernetes/kubernetes pkg/kubelet/kubelet_pods.go@001a80e9,
        # makeEnvironmentVariables: `if optional { continue }`), so a $(NAME) no other
        # source sets reaches the engine as written (expansion/expand.go@02604f7d)
        return False
    if not (isinstance(data, Mapping) and ref.get("key") in data):
        _missing_key(doc, at, name, ref, "ConfigMap")
    if isinstance(value, str) and "$(" not in value:
        spot = (*found[0], "data", str(ref["key"]))
        files.set(name, Placed(value, spot), doc.file, doc.locate(spot).line)
    else:
        files.unset(name, _why(doc, at, name, "repository",
                               "its ConfigMap key is not there or not read"))
    return True
