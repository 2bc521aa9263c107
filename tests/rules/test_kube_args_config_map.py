"""A Kubernetes container's ``args`` taking ``$(SPEC)`` from a ConfigMap in the same
manifest (new-user trial: a ConfigMap document and a Deployment document in one file).

Kubernetes expands ``$(VAR)`` in ``command``/``args`` from the container's environment
("Define a Command and Arguments for a Container": "you can use environment variables
in the arguments"; "If the environment variable doesn't exist, the reference is left
unchanged"), and ``envFrom.configMapRef`` / ``env[].valueFrom.configMapKeyRef`` put the
ConfigMap's ``data`` keys into that environment ("Configure a Pod to Use a ConfigMap").
docs/engines.md#environment-files: a ConfigMap in the same manifest is read.

Hand-worked values: the ConfigMap's SPEC is vLLM's ngram JSON with
``num_speculative_tokens: 4``, so D is 4 (vLLM SpeculativeConfig). Line 18 of the
manifest holds the args; its ``"$(SPEC)"`` item opens at column 78 (the quote; ``$`` is
column 79), counted by hand on
``          args: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", "$(SPEC)"]``.
The ConfigMap's ``data.SPEC`` (line 6) is the value the container's environment takes,
not a second configuration: the file gives one reading, with and without ``pointer: /1``.

A finding on a value the manifest writes sits where it is written (docs/engines.md
#environment-files), counted by hand on line 6,
``  SPEC: '{"method": "ngram", "num_speculative_tokens": 4, ...}'``: the quote at 9
(2 spaces, ``SPEC:`` at 3-7, a space), ``{`` 10, ``"method"`` 11-18, ``: `` 19-20,
``"ngram"`` 21-27, ``, `` 28-29, ``"num_speculative_tokens"`` 30-53, ``: `` 54-55, the
``4`` at 56.
"""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_env_files import check as _check
from tests.rules.test_env_files import codes

SPEC = (
    "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4, "
    "\"prompt_lookup_min\": 2}'"
)
ENV_FROM = "          envFrom:\n            - configMapRef:\n                name: spec-cm\n"
VALUE_FROM = (
    "          env:\n            - name: SPEC\n              valueFrom:\n"
    "                configMapKeyRef: {name: spec-cm, key: SPEC}\n"
)


def manifest(env: str, config_map: str = "spec-cm") -> str:
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {config_map}\ndata:\n"
        f"  SPEC: {SPEC}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n"
        "  template:\n    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.11.0\n"
        '          args: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", '
        '"$(SPEC)"]\n' + env
    )


def check(tmp: Path, text: str, pointer: bool) -> tuple[int, dict[str, object]]:
    serving = "{path: deploy.yaml, pointer: /1}" if pointer else "deploy.yaml"
    code, dep = _check(tmp, {"deploy.yaml": text}, serving)
    return code, dep


def test_args_take_spec_from_a_config_map_in_the_manifest(tmp_path: Path) -> None:
    for name, env in (("from", ENV_FROM), ("key", VALUE_FROM)):
        for pointer in (False, True):
            where = tmp_path / f"{name}-{pointer}"
            where.mkdir()
            code, dep = check(where, manifest(env), pointer)
            engine = dep["inputs"]["engine"]  # type: ignore[index]
            assert engine["draft_length"] == 4, (name, pointer)
            assert "SG313" not in codes(dep) and "SG314" not in codes(dep), (name, pointer)
            # D = 4 is written in the ConfigMap (line 6, its `4` at column 56), where a
            # reviewer changes it, not in the args item naming it (was 18:78)
            (adaptive,) = [f for f in dep["findings"] if f["code"] == "SG308"]  # type: ignore[index]
            assert (adaptive["file"], adaptive["line"], adaptive["column"]) == (
                "deploy.yaml", 6, 56,
            ), (name, pointer)
            assert code != 2


def test_a_config_map_not_in_the_manifest_stays_the_clusters(tmp_path: Path) -> None:
    # the file's ConfigMap is another one: $(SPEC) is the cluster's (SG313 at line 18,
    # the `$`), never read from the file's ConfigMap of another name
    for name, env in (("from", ENV_FROM), ("key", VALUE_FROM)):
        where = tmp_path / name
        where.mkdir()
        _, dep = check(where, manifest(env, config_map="other-cm"), pointer=True)
        (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]  # type: ignore[index]
        assert (hit["file"], hit["line"], hit["column"]) == ("deploy.yaml", 18, 79), name
        assert "$(SPEC)" in hit["message"], name
        engine = dep["inputs"].get("engine") or {}  # type: ignore[attr-defined]
        assert engine.get("draft_length") is None, name  # D not read, not a default


def test_a_key_the_config_map_lacks_stops_the_container(tmp_path: Path) -> None:
    # configMapKeyRef names key NOPE of spec-cm, which holds only SPEC, without
    # optional: true: the kubelet does not start the container (kubernetes/kubernetes
    # pkg/kubelet/kubelet_pods.go@df5f0243, makeEnvironmentVariables: `runtimeVal, ok =
    # configMap.Data[key]; if !ok { if optional { continue }; return result,
    # fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ...) }`). SG312, a fail
    # (both sides are in the manifest), at the key's value: line 22
    # `                configMapKeyRef: {name: spec-cm, key: NOPE}`: 16 spaces,
    # `configMapKeyRef:` 17-32, a space, `{` 34, `name:` 35-39, `spec-cm` 41-47, `,` 48,
    # `key:` 50-53, NOPE at 55. Was SG314 ("the repository decides D in a way specgate
    # cannot read"), the wrong reason; never SG313 (set outside), never the default D.
    env = VALUE_FROM.replace("key: SPEC", "key: NOPE")
    for pointer in (True, False):
        (tmp_path / str(pointer)).mkdir()
        _, dep = check(tmp_path / str(pointer), manifest(env), pointer=pointer)
        (hit,) = [f for f in dep["findings"] if f["code"] == "SG312"]  # type: ignore[index]
        assert (hit["file"], hit["line"], hit["column"]) == ("deploy.yaml", 22, 55)
        assert hit["severity"] == "fail"
        assert hit["message"].startswith(
            "Kubernetes does not start the container, since env `SPEC` takes key `NOPE` of "
            "ConfigMap `spec-cm`"
        )
        assert "couldn't find key NOPE in ConfigMap NAMESPACE/spec-cm" in hit["details"]
        assert "SG313" not in codes(dep) and "SG314" not in codes(dep)


def test_a_config_map_value_is_placed_where_it_is_written(tmp_path: Path) -> None:
    # the item holds more than $(SPEC): the value's characters still sit in the ConfigMap
    joined = manifest(ENV_FROM).replace(
        '"--speculative-config", "$(SPEC)"', '"--speculative-config=$(SPEC)"'
    )
    _, dep = check(tmp_path, joined, pointer=True)
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG308"]
    assert (hit["line"], hit["column"]) == (6, 56)


def test_a_refused_config_map_value_sits_at_the_value(tmp_path: Path) -> None:
    # vLLM 0.20.0 refuses --speculative-config '{method: ngram}' (not JSON; its parser's
    # refusal recorded from 0.19.1, docs/engines.md#refused-values): SG307 fail at the
    # ConfigMap's value, line 6 column 9 (its quote), not at the args item
    bad = manifest(VALUE_FROM).replace(SPEC, "'{method: ngram}'").replace("v0.11.0", "v0.20.0")
    _, dep = check(tmp_path, bad, pointer=True)
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG307"]
    assert (hit["severity"], hit["file"], hit["line"], hit["column"]) == (
        "fail", "deploy.yaml", 6, 9,
    )
    assert "Value {method: ngram} cannot be converted" in hit["message"]


def test_a_container_env_value_is_placed_where_it_is_written(tmp_path: Path) -> None:
    # env[].value beside the args, with and without an envFrom of a ConfigMap not in the
    # file (kube_env's path and the literal env's): line 21 is
    # `              value: '{"method": "ngram", "num_speculative_tokens": 3}'`: 14
    # spaces, `value:` 15-20, a space, the quote 22, `{` 23, "method" 24-31, `: ` 32-33,
    # "ngram" 34-40, `, ` 41-42, "num_speculative_tokens" 43-66, `: ` 67-68, the 3 at 69
    literal = (
        "          env:\n            - name: SPEC\n              value: "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'\n"
    )
    other = "          envFrom:\n            - configMapRef:\n                name: other-cm\n"
    for name, env, line in (("literal", literal, 21), ("with-env-from", other + literal, 24)):
        where = tmp_path / name
        where.mkdir()
        _, dep = check(where, manifest(env), pointer=True)
        assert dep["inputs"]["engine"]["draft_length"] == 3, name
        (hit,) = [f for f in dep["findings"] if f["code"] == "SG308"]
        assert (hit["line"], hit["column"]) == (line, 69), name


OPTIONAL_MISSING = VALUE_FROM.replace("key: SPEC}", "key: NOPE, optional: true}")


def test_an_optional_key_the_config_map_lacks_leaves_the_text(tmp_path: Path) -> None:
    # configMapKeyRef NOPE, optional: true, of spec-cm (which holds only SPEC): the
    # kubelet sets no SPEC (kubernetes/kubernetes pkg/kubelet/kubelet_pods.go@001a80e9,
    # makeEnvironmentVariables: `if optional { continue }`), so `$(SPEC)` reaches vLLM as
    # written (expansion/expand.go@02604f7d) and its parser refuses it as not JSON:
    # SG307 at the args item (line 18, its quote at 78), a fail at v0.20.0 (the refusal
    # recorded from 0.19.1), a warn at v0.11.0; never SG314 and never the ConfigMap's D
    for tag, severity in (("v0.20.0", "fail"), ("v0.11.0", "warn")):
        where = tmp_path / tag
        where.mkdir()
        text = manifest(OPTIONAL_MISSING).replace("v0.11.0", tag)
        _, dep = check(where, text, pointer=True)
        (hit,) = [f for f in dep["findings"] if f["code"] == "SG307"]  # type: ignore[index]
        assert (hit["severity"], hit["line"], hit["column"]) == (severity, 18, 78), tag
        assert "Value $(SPEC) cannot be converted to <function loads>" in hit["message"]
        assert "SG314" not in codes(dep) and "SG313" not in codes(dep), tag
        engine = dep["inputs"].get("engine") or {}  # type: ignore[attr-defined]
        assert engine.get("draft_length") is None, tag


def test_an_optional_key_skipped_keeps_the_env_from_value(tmp_path: Path) -> None:
    # envFrom spec-cm sets SPEC; the env item after it (optional NOPE) sets nothing, so
    # SPEC stays the ConfigMap's: D 4 (kubelet: envFrom first, an env item skipped)
    _, dep = check(tmp_path, manifest(ENV_FROM + OPTIONAL_MISSING), pointer=True)
    assert dep["inputs"]["engine"]["draft_length"] == 4  # type: ignore[index]
    assert "SG307" not in codes(dep) and "SG314" not in codes(dep)


def test_a_service_link_name_is_not_settled(tmp_path: Path) -> None:
    # $(VLLM_SERVICE_PORT) may be a service link the cluster sets (Kubernetes, "Container
    # Environment"): not the engine's refusal of the literal text
    text = manifest(OPTIONAL_MISSING).replace("v0.11.0", "v0.20.0").replace(
        "$(SPEC)", "$(VLLM_SERVICE_PORT)"
    )
    _, dep = check(tmp_path, text, pointer=True)
    assert "SG307" not in codes(dep) and "SG314" in codes(dep)


SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: spec-s\n{data}---\n"
# the key's line: the Secret 1-7 (four lines, `data:`, its key, `---`), the ConfigMap 8-13,
# `---` 14, the Deployment 15-25 (args at 25), ENV_FROM 26-28, `env:` 29, `- name: TOKEN`
# 30, `valueFrom:` 31, then line 32
# `                secretKeyRef: {name: spec-s, key: NOPE}`: 16 spaces, `secretKeyRef:`
# 17-29, a space, `{` 31, `name:` 32-36, `spec-s` 38-43, `,` 44, `key:` 46-49, NOPE at 51
SECRET_REF = (
    "            - name: TOKEN\n              valueFrom:\n"
    "                secretKeyRef: {name: spec-s, key: NOPE}\n"
)


def test_a_key_the_secret_lacks_stops_the_container(tmp_path: Path) -> None:
    # the same in makeEnvironmentVariables for secretKeyRef: "couldn't find key %v in
    # Secret %v/%v" (pkg/kubelet/kubelet_pods.go@df5f0243); TOKEN is used nowhere: the
    # container stops all the same (the kubelet builds the whole environment first)
    text = SECRET.format(data="data:\n  OTHER: eA==\n") + manifest(ENV_FROM + "          env:\n"
                                                                   + SECRET_REF)
    _, dep = check(tmp_path, text, pointer=False)
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG312"]
    assert (hit["line"], hit["column"], hit["severity"]) == (32, 51, "fail")
    assert hit["message"].startswith(
        "Kubernetes does not start the container, since env `TOKEN` takes key `NOPE` of "
        "Secret `spec-s`"
    )


def test_a_secret_key_in_string_data_is_held(tmp_path: Path) -> None:
    # stringData is merged into data by the API server: NOPE is held, nothing stops
    text = SECRET.format(data="stringData:\n  NOPE: x\n") + manifest(
        ENV_FROM + "          env:\n" + SECRET_REF
    )
    _, dep = check(tmp_path, text, pointer=False)
    assert "SG312" not in codes(dep)
    assert dep["inputs"]["engine"]["draft_length"] == 4


def test_a_config_map_not_in_the_manifest_stays_set_outside(tmp_path: Path) -> None:
    # key NOPE of other-cm, a ConfigMap the manifest does not hold: the cluster may
    # hold it with that key (SG313), not a container that does not start
    env = VALUE_FROM.replace("name: spec-cm, key: SPEC", "name: other-cm, key: NOPE")
    _, dep = check(tmp_path, manifest(env), pointer=True)
    assert "SG313" in codes(dep) and "SG312" not in codes(dep)


def _namespaced(text: str, config_map: str | None, deployment: str | None) -> str:
    """``manifest(...)`` with ``metadata.namespace`` on the ConfigMap and the Deployment
    (None: not written)."""
    cm, dep = text.split("---\n")
    if config_map is not None:
        cm = cm.replace("  name: spec-cm\n", f"  name: spec-cm\n  namespace: {config_map}\n")
    if deployment is not None:
        dep = dep.replace("  name: vllm\nspec:", f"  name: vllm\n  namespace: {deployment}\nspec:")
    return cm + "---\n" + dep


def test_a_config_map_of_another_namespace_is_not_the_pods(tmp_path: Path) -> None:
    # The kubelet looks a configMapKeyRef up in the pod's own namespace
    # (pkg/kubelet/kubelet_pods.go@df5f0243, makeEnvironmentVariables: the ConfigMap is
    # fetched by pod.Namespace and name), so spec-cm of ml-staging is not what a Deployment
    # of ml-prod reads (second trial: a false SG312 fail, and the staging D read for prod).
    # A namespace written on one side only is the one `kubectl apply` is given on the
    # other: unknown here. Neither is read; the ConfigMap is the cluster's (SG313).
    env = VALUE_FROM.replace("key: SPEC", "key: NOPE")
    cases = {"other": ("ml-staging", "ml-prod"), "cm-only": ("ml-prod", None),
             "deployment-only": (None, "ml-prod")}
    for name, (cm_ns, dep_ns) in cases.items():
        for key_env, missing in ((VALUE_FROM, False), (env, True)):
            where = tmp_path / f"{name}-{missing}"
            where.mkdir()
            _, dep = check(where, _namespaced(manifest(key_env), cm_ns, dep_ns), pointer=True)
            assert "SG312" not in codes(dep), (name, missing)
            assert "SG313" in codes(dep), (name, missing)
            engine = dep["inputs"].get("engine") or {}  # type: ignore[attr-defined]
            assert engine.get("draft_length") is None, (name, missing)
    # the same namespace on both sides is the pod's: D 4 read, the missing key a fail
    _, dep = check(tmp_path, _namespaced(manifest(VALUE_FROM), "ml-prod", "ml-prod"), True)
    assert dep["inputs"]["engine"]["draft_length"] == 4  # type: ignore[index]


def test_of_two_config_maps_of_one_name_the_later_is_read(tmp_path: Path) -> None:
    # `kubectl apply -f` applies a file's documents in order: of two ConfigMaps named
    # spec-cm, the later one is what the cluster holds (second trial: the first was read,
    # and its missing key failed). The earlier holds only OTHER; the later holds SPEC.
    earlier = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spec-cm\ndata:\n  OTHER: x\n---\n"
    )
    _, dep = check(tmp_path, earlier + manifest(VALUE_FROM), pointer=False)
    assert "SG312" not in codes(dep)
    assert dep["inputs"]["engine"]["draft_length"] == 4  # type: ignore[index]


def test_a_secret_the_cluster_fills_is_not_judged(tmp_path: Path) -> None:
    # A Secret of type kubernetes.io/service-account-token is filled by the token
    # controller (token, ca.crt, namespace: "Manually create a long-lived API token for a
    # ServiceAccount"), and one with no data or stringData at all is filled by whatever
    # made it: neither lacking a key is the manifest's statement (second trial: a false
    # SG312 fail). The reference is then the cluster's.
    token = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: spec-s\n"
             "type: kubernetes.io/service-account-token\n---\n")
    empty = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: spec-s\n---\n"
    for name, secret in (("token", token), ("empty", empty)):
        where = tmp_path / name
        where.mkdir()
        text = secret + manifest(ENV_FROM + "          env:\n" + SECRET_REF)
        _, dep = check(where, text, pointer=False)
        assert "SG312" not in codes(dep), name
        assert dep["inputs"]["engine"]["draft_length"] == 4, name  # type: ignore[index]
