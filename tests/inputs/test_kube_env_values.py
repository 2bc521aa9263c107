"""Kubernetes ``env[].value`` expanded as the kubelet expands it (docs/engines.md
#environment-values): ``$(NAME)`` is the value of NAME set before it in the container (its
``envFrom`` and earlier ``env`` items), ``$$`` is ``$``, a reference to a name set by nothing
before it stays as written, one to a name not settled here (a Secret, an ``envFrom`` source
not read, a service variable) is unsettled. SGLang read ``SGLANG_ENABLE_SPEC_V2: $(ON)`` as
the text ``$(ON)``: not a truth word, spec v2 off.

Kubernetes cannot run here: the expected values are worked by hand from
kubernetes/kubernetes ``third_party/forked/golang/expansion/expand.go@02604f7d``
(``Expand``, ``tryReadVariableName``), the API reference of ``EnvVar.value`` ("Variable
references $(VAR_NAME) are expanded using the previously defined environment variables in
the container and any service environment variables. If a variable cannot be resolved, the
reference in the input string will be unchanged. Double $$ are reduced to a single $") and
the worked example of the Kubernetes task page "Define Dependent Environment Variables",
whose container prints the three values checked in ``test_the_kubernetes_docs_example``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.rules.test_env_files import check
from tests.rules.test_environment_values import SGLANG_RUN, _sg307

from specgate.inputs.engines.kube_env import expand, kubernetes_env
from specgate.inputs.env_files import EnvFiles
from specgate.load.document import Document


def _files(**values: str) -> EnvFiles:
    files = EnvFiles()
    for name, value in values.items():
        files.set(name, value, "k.yaml", 1)
    return files


@pytest.mark.parametrize(("value", "expected"), [
    ("$(A)", "a"),
    ("___$(A)___", "___a___"),
    ("$(A)$(B)", "ab"),
    ("$$(A)", "$(A)"),          # escaped: never expanded
    ("$$$(A)", "$a"),           # `$$` then `$(A)`
    ("$$$$(A)", "$$(A)"),
    ("$(NOPE)", "$(NOPE)"),     # set by nothing before it: as written
    ("$(A", "$(A"),             # no `)`: as written
    ("$A", "$A"),               # not `$(`: as written
    ("a$", "a$"),               # a `$` at the end
    ("$(A B)", "$(A B)"),       # a name is anything up to `)`; none is so named
    ("$()", "$()"),
])
def test_expand_as_the_kubelet_does(value: str, expected: str) -> None:
    assert expand(value, _files(A="a", B="b"), 1000) == (expected, None)


def test_a_reference_not_settled_here_is_unsettled() -> None:
    files = _files(A="a")
    files.unset("S", _unsettled())
    assert expand("x$(S)", files, 1000)[1] is not None
    # a service variable the cluster sets (FOO_SERVICE_HOST) is the cluster's
    assert expand("$(DB_SERVICE_HOST)", files, 1000)[1] is not None
    assert expand("$(DB_PORT_5432_TCP_ADDR)", files, 1000)[1] is not None
    # an envFrom source not read may set any name
    files.covered(_unsettled())
    assert expand("$(ANY)", files, 1000)[1] is not None


def test_a_doubling_chain_is_refused_not_read() -> None:
    files = _files(A="x" * 600)
    assert expand("$(A)$(A)", files, 1000)[1] is not None


def _unsettled():  # type: ignore[no-untyped-def]
    from specgate.core.errors import UnsettledValue

    return UnsettledValue("a Secret", "k.yaml", 1, origin="outside", what="S")


def _manifest(env: list[dict[str, object]], env_from: bool = False) -> Document:
    container: dict[str, object] = {"name": "c", "image": "busybox:1.28", "env": env}
    if env_from:
        container["envFrom"] = [{"secretRef": {"name": "s"}}]
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [container]}}
    text = yaml.safe_dump(data)
    return Document(file="k.yaml", data=yaml.safe_load(text), text=text)


def test_the_kubernetes_docs_example() -> None:
    doc = _manifest([
        {"name": "SERVICE_PORT", "value": "80"},
        {"name": "SERVICE_IP", "value": "172.17.0.1"},
        {"name": "UNCHANGED_REFERENCE", "value": "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"},
        {"name": "PROTOCOL", "value": "https"},
        {"name": "SERVICE_ADDRESS", "value": "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"},
        {"name": "ESCAPED_REFERENCE", "value": "$$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"},
    ])
    files = kubernetes_env(doc, ("spec", "containers", 0))
    assert files is not None
    got = {k: v for k, (v, _, _) in files.values.items()}
    # the page's output: the reference to PROTOCOL, defined after it, is unchanged
    assert got["UNCHANGED_REFERENCE"] == "$(PROTOCOL)://172.17.0.1:80"
    assert got["SERVICE_ADDRESS"] == "https://172.17.0.1:80"
    assert got["ESCAPED_REFERENCE"] == "$(PROTOCOL)://172.17.0.1:80"


def test_an_envfrom_secret_leaves_a_reference_unsettled() -> None:
    doc = _manifest([{"name": "S", "value": "$(V2)"}], env_from=True)
    files = kubernetes_env(doc, ("spec", "containers", 0))
    assert files is not None and "S" in files.unsettled and "S" not in files.values


KUBE = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: s}}
spec:
  template:
    spec:
      containers:
        - name: s
          image: lmsysorg/sglang:v0.5.7
          env:
{env}
          command: [sh, -c]
          args: ["{run}"]
"""


@pytest.mark.parametrize(("env", "expected"), [
    ('            - {name: ON, value: "1"}\n            - {name: SGLANG_ENABLE_SPEC_V2, '
     'value: "$(ON)"}', ["fail"]),
    # escaped: SGLang gets the text $(ON), not a truth word: spec v2 off
    ('            - {name: ON, value: "1"}\n            - {name: SGLANG_ENABLE_SPEC_V2, '
     'value: "$$(ON)"}', []),
    # ON defined after it: the text $(ON) as written
    ('            - {name: SGLANG_ENABLE_SPEC_V2, value: "$(ON)"}\n'
     '            - {name: ON, value: "1"}', []),
    # from a Secret the manifest does not hold: the cluster's
    ('            - name: ON\n              valueFrom: {secretKeyRef: {name: x, key: on}}\n'
     '            - {name: SGLANG_ENABLE_SPEC_V2, value: "$(ON)"}', ["warn"]),
])
def test_sglang_reads_the_expanded_value(tmp_path: Path, env: str, expected: list[str]) -> None:
    manifest = KUBE.format(env=env, run=SGLANG_RUN)
    _, dep = check(tmp_path, {"k.yaml": manifest}, "k.yaml")
    assert _sg307(dep) == expected
