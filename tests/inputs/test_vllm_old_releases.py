"""vLLM flags at the old releases that have them, and not before or after
(docs/engines.md#versions).

Every boundary was read in the release's wheel from PyPI (``pip download --no-deps
vllm==V``, ``vllm/engine/arg_utils.py``), the releases on each side:

- the V0 flat flags (``--speculative-model`` and its family): ``parser.add_argument`` at
  arg_utils.py:779-878 of 0.8.0 and 0.8.1 and :789-888 of 0.8.2 (where
  ``create_speculative_config`` warns at :1225-1231 that they "will be deprecated in the
  next release"); none in the 0.8.3 and 0.8.4 wheels;
- ``--speculative-config``: first at arg_utils.py:783 of 0.8.2, absent from 0.7.3, 0.8.0
  and 0.8.1;
- ``-sc``: ``add_argument("--speculative-config", "-sc", …)`` at arg_utils.py:1304 of
  0.19.0; 0.18.1 registers the long name alone (:1267), as do 0.10.2 (:901) and 0.16.0
  (:1195).
"""

from __future__ import annotations

import pytest

from specgate.inputs.engines import read_engine_config
from specgate.inputs.knowledge import knowledge, parse_version
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document

V0_FAMILY = (
    "--speculative-model d",
    "--speculative-model-quantization fp8",
    "--num-speculative-tokens 3",
    "--speculative-disable-mqa-scorer",
    "--speculative-draft-tensor-parallel-size 1",
    "-spec-draft-tp 1",
    "--speculative-max-model-len 2048",
    "--speculative-disable-by-batch-size 4",
    "--ngram-prompt-lookup-max 4",
    "--ngram-prompt-lookup-min 1",
    "--spec-decoding-acceptance-method rejection_sampler",
    "--typical-acceptance-sampler-posterior-threshold 0.09",
    "--typical-acceptance-sampler-posterior-alpha 0.3",
    "--disable-logprobs-during-spec-decoding True",
)


def serve(command: str, version: str) -> EngineConfig:
    """``vllm serve m COMMAND`` read at vLLM ``version``."""
    return read_engine_config(
        Document("run.sh", f"vllm serve m {command}\n"),
        shown="run.sh",
        pointer=None,
        engine="vllm",
        engine_version=version,
    )


def _sg310(command: str, version: str) -> list[tuple[str | None, str]]:
    return [(i.severity, i.field) for i in serve(command, version).issues if i.code == "SG310"]


@pytest.mark.parametrize("flag", V0_FAMILY)
def test_a_v0_flag_exists_up_to_0_8_2_and_fails_from_0_8_3(flag: str) -> None:
    # with --speculative-model beside it where it needs one (the V0 block's draft)
    command = flag if flag.startswith("--speculative-model ") else f"--speculative-model d {flag}"
    for version in ("0.8.0", "0.8.1", "0.8.2"):
        assert _sg310(command, version) == [], version
    setting = knowledge("vllm").setting(flag.split(maxsplit=1)[0])
    assert setting is not None  # findings name the canonical flag (-spec-draft-tp's long one)
    assert (None, f"setting:{setting.name}") in _sg310(command, "0.8.3")
    assert (None, f"setting:{setting.name}") in _sg310(command, "0.8.4")


def test_the_v0_flags_are_removed_between_adjacent_releases() -> None:
    # removed_after 0.8.2 and removed_in 0.8.3 are adjacent PyPI releases: no version
    # between them whose answer is unknown
    data = knowledge("vllm")
    releases = list(data.releases)
    for flag in V0_FAMILY:
        setting = data.setting(flag.split()[0])
        assert setting is not None
        assert setting.removed_in == parse_version("0.8.3"), flag
        assert setting.removed_after == parse_version("0.8.2"), flag
        after = releases.index(setting.removed_after)
        assert releases[after + 1] == setting.removed_in


@pytest.mark.parametrize(
    ("command", "absent", "present"),
    [
        ("--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'",
         ("0.7.3", "0.8.0", "0.8.1"), ("0.8.2", "0.8.3", "0.10.2")),
        ("-sc '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'",
         ("0.8.2", "0.10.2", "0.16.0", "0.18.1"), ("0.19.0", "0.21.0")),
    ],
)
def test_the_speculative_config_flag_from_its_first_release(
    command: str, absent: tuple[str, ...], present: tuple[str, ...]
) -> None:
    for version in absent:  # the finding names the canonical flag, -sc's long name
        assert _sg310(command, version) == [(None, "setting:--speculative-config")], version
    for version in present:
        assert _sg310(command, version) == [], version


def _dbs(method: str, version: str) -> list[tuple[str, str | None, str]]:
    block = (
        f'{{"method": "{method}", "model": "d", "num_speculative_tokens": 3, '
        '"disable_by_batch_size": 8}'
    )
    return [
        (i.code, i.severity, f"{i.message} {i.details}")
        for i in serve(f"--speculative-config '{block}'", version).issues
        if "disable_by_batch_size" in i.message
    ]


@pytest.mark.parametrize("version", ["0.9.0", "0.9.1", "0.9.2"])
def test_disable_by_batch_size_at_0_9_is_ignored_by_the_v1_engine(version: str) -> None:
    # new-user trial U3. The field exists (vllm/config.py:2496 at 0.9.2); the whole 0.9.x
    # package reads it only in config.py and V0's spec_decode/spec_decode_worker.py; the
    # oracle keeps eagle3 on V1 with no fallback (arg_utils.py:1430-1435 at 0.9.2) and
    # VLLM_USE_V1 defaults to 1 (envs.py:637-638): accepted and ignored, a warning
    (said,) = _dbs("eagle3", version)
    assert said[:2] == ("SG307", "warn")
    assert "V1 engine" in said[2]
    assert "may not exist" not in said[2]


@pytest.mark.parametrize("version", ["0.8.5", "0.8.5.post1"])
def test_disable_by_batch_size_at_0_8_5_is_read_by_v0(version: str) -> None:
    # 0.8.5 and 0.8.5.post1 fall back to V0 for eagle unless VLLM_USE_V1 is set
    # (_warn_or_fallback, arg_utils.py:1489-1490), whose worker reads the key; the field
    # is in SpeculativeConfig (vllm/config.py:2200): no finding
    assert _dbs("eagle3", version) == []


def test_disable_by_batch_size_with_a_draft_model_at_0_9_2_is_read_by_v0() -> None:
    # draft_model is no V1 method at 0.9.2 (the oracle falls back to V0, which reads it)
    assert _dbs("draft_model", "0.9.2") == []
