"""transformers' decoding mode decides whether an assistant is used at all (issue 27,
F4 and M3 of the second false-fail hunt). ``GenerationConfig.get_generation_mode`` picks the
base mode first: constraints or force_words_ids → constrained beam search; num_beams > 1 →
beam search; num_beams 1, do_sample False, top_k > 1 and penalty_alpha > 0 → contrastive
search; else greedy search or sample. Only greedy search and sample become assisted
generation. To 4.51.3 any other mode with an assistant raises ("only supported with Greedy
Search and Sample", configuration_utils.py:565-577 of the 4.51.3 wheel); from 4.52.0 it logs
a warning and keeps the base mode (configuration_utils.py:577-584 of the 4.52.0 wheel,
584-590 at 5.25.0), so the raises of the assisted path (utils.py:2509-2520 at 4.52.0;
_validate_generation_mode and _assisted_decoding, utils.py:1873-1876 and 3977-3983 at
5.23.0) are never reached. Every expected value below is read from those lines."""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

ASSISTANT = "assistant_model: Qwen/Qwen2.5-0.5B-Instruct\n"
CONTRASTIVE = "penalty_alpha: 0.6\ntop_k: 4\n"
FORCED = "force_words_ids: [[5, 6]]\n"


def _sg307(run: Run, version: str, config: str) -> list[tuple[str, str]]:
    """(severity, message) of every SG307 finding of a generate() config pinned at ``version``."""
    _code, dep = run(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": config,
        }
    )
    return [(s, m) for s, _, m in found(dep, "SG307")]


@pytest.mark.parametrize("version", ["4.52.0", "5.19.0", "5.25.0"])
@pytest.mark.parametrize(
    "config",
    [
        ASSISTANT + "num_beams: 4\nnum_return_sequences: 2\n",
        ASSISTANT + "num_beams: 4\nuse_cache: false\n",
        ASSISTANT + "num_beams: 4\ncache_implementation: static\n",
        ASSISTANT + "num_beams: 4\nbatch_size: 2\n",
        "prompt_lookup_num_tokens: 10\nnum_beams: 2\nnum_return_sequences: 2\n",
    ],
)
def test_beam_search_reaches_no_assisted_refusal(
    check: Run,  # noqa: F811
    version: str,
    config: str,
) -> None:
    # beam search from 4.52.0: the one finding is that no assisted generation runs (a warn:
    # nothing in this claims file rests on the speculation)
    findings = _sg307(check, version, config)
    assert [s for s, _ in findings] == ["warn"]
    assert "runs no assisted generation" in findings[0][1]


@pytest.mark.parametrize(
    ("config", "version"),
    [
        (ASSISTANT + "num_return_sequences: 2\n", "5.19.0"),
        (ASSISTANT + "num_beams: 1\nnum_return_sequences: 2\n", "5.19.0"),
        (ASSISTANT + "num_beams: 1\nnum_return_sequences: 2\n", "4.52.0"),
        # do_sample true: sample, whatever penalty_alpha says
        (ASSISTANT + CONTRASTIVE + "do_sample: true\nnum_return_sequences: 2\n", "4.52.0"),
        # top_k 1: greedy search
        (ASSISTANT + "penalty_alpha: 0.6\ntop_k: 1\nnum_return_sequences: 2\n", "4.52.0"),
    ],
)
def test_greedy_or_sample_keeps_the_assisted_refusals(
    check: Run,  # noqa: F811
    config: str,
    version: str,
) -> None:
    findings = _sg307(check, version, config)
    assert [s for s, m in findings if "num_return_sequences has to be 1" in m] == ["fail"]


def test_beam_search_with_an_assistant_refused_before_4_52(check: Run) -> None:  # noqa: F811
    # get_generation_mode raises before any assisted-path check is reached
    findings = _sg307(check, "4.51.3", ASSISTANT + "num_beams: 4\nnum_return_sequences: 2\n")
    assert [s for s, _ in findings] == ["fail"]
    assert "Greedy Search and Sample" in findings[0][1]


@pytest.mark.parametrize(
    ("config", "version", "expected"),
    [
        # contrastive search with an assistant: refused from 4.29.0 (utils.py:1424-1429 of its
        # wheel) to 4.51.3; the 4.28.1 wheel has no assisted generation
        (CONTRASTIVE + "do_sample: false\n", "4.29.0", ("fail", "Greedy Search and Sample")),
        (CONTRASTIVE + "do_sample: false\n", "4.51.3", ("fail", "Greedy Search and Sample")),
        (CONTRASTIVE + "do_sample: false\n", "4.28.1", None),
        # do_sample unset: the model's generation_config.json may set it true (sample,
        # assisted generation runs): an assumed default, so a warn
        (CONTRASTIVE, "4.51.3", ("warn", "Greedy Search and Sample")),
        # from 4.52.0: contrastive search without the assistant (a warn: nothing claimed
        # rests on the speculation)
        (CONTRASTIVE + "do_sample: false\n", "4.52.0", ("warn", "runs no assisted generation")),
        # from 4.57.0 contrastive search is a Hub custom_generate: without trust_remote_code
        # generate() raises (utils.py of the 5.19.0 wheel, asked 2026-12-03: "Contrastive Search
        # requires `trust_remote_code=True`", with and without an assistant) beside the warn
        (CONTRASTIVE + "do_sample: false\n", "5.25.0",
         [("fail", "trust_remote_code"), ("warn", "runs no assisted generation")]),
        (CONTRASTIVE, "5.25.0", ("warn", "runs no assisted generation")),
        # constrained beam search wins over every other mode (configuration_utils.py:542)
        (FORCED, "4.51.3", ("fail", "Greedy Search and Sample")),
        (FORCED + "num_beams: 2\n", "4.51.3", ("fail", "Greedy Search and Sample")),
        (FORCED + "num_beams: 2\n", "4.52.0", ("warn", "constrained beam search")),
    ],
)
def test_contrastive_and_constrained_search_with_an_assistant(
    check: Run,  # noqa: F811
    config: str,
    version: str,
    expected: tuple[str, str] | list[tuple[str, str]] | None,
) -> None:
    findings = _sg307(check, version, ASSISTANT + config + "num_return_sequences: 2\n")
    if expected is None:
        assert findings == []
        return
    wanted = expected if isinstance(expected, list) else [expected]
    assert sorted(s for s, _ in findings) == sorted(s for s, _ in wanted)
    for severity, phrase in wanted:
        assert any(s == severity and phrase in m for s, m in findings), (severity, phrase)
