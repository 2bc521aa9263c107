"""transformers' refusals judged by their lifetimes (issue 27,
docs/engines.md#lifetimes-from-history): each boundary was read in the PyPI wheels of the two
adjacent releases (the line numbers and sha256 of each are in the check's ``lifetime`` in
src/specgate/data/engines/transformers.json), and the engine was asked at 4.45.0 to 5.25.0
(tests/data/engine_oracle/transformers-*.json). Pinned inside
a lifetime a refusal fails; pinned outside, it says nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

#: The tiny models the engine was asked with (tests/data/engine_oracle/models): a Llama
#: target with vocabulary 512 and drafts of 512 (the same tokenizer) and 520.
MODELS = Path(__file__).resolve().parent.parent / "data" / "engine_oracle" / "models"
ASSISTANT = "assistant_model: Qwen/Qwen2.5-0.5B-Instruct\n"


def _severities(run: Run, version: str | None, config: str, phrase: str) -> list[str]:
    """The severities of the SG307 findings whose words hold ``phrase``, for a generate()
    config ``config`` pinned at ``version`` (None: not pinned)."""
    _code, dep = run(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": config,
        }
    )
    return [s for s, _, m in found(dep, "SG307") if phrase in m]


def _with_models(run: Run, version: str, draft: str, config: str) -> dict[str, Any]:
    """The deployment of a generate() config whose target and assistant are the tiny
    models (their config.json read as the claims file's hf_config and draft_hf_config)."""
    files = {
        "c.specgate.yaml": (
            "version: 1\ndeployments:\n  - name: d\n    model:\n"
            "      hf_config: models/t/config.json\n    speculation:\n      enabled: true\n"
            f"      engine: transformers\n      engine_version: {version}\n"
            "      engine_config: generate.yaml\n      draft_hf_config: models/d/config.json\n"
            "    evidence:\n      cache_coherence_eval: true\n"
        ),
        "models/t/config.json": (MODELS / "llama-v512" / "config.json").read_text("utf-8"),
        "models/d/config.json": (MODELS / draft / "config.json").read_text("utf-8"),
        "generate.yaml": "assistant_model: models/d\n" + config,
    }
    return run(files)[1]


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # prompt lookup alone: refused in generate() from 4.45.0 (utils.py:1972-1973; not in
        # the 4.44.2 wheel) to 4.56.2 (utils.py:2464), asked of 4.46.0 and 4.48.0 (record
        # transformers-0041); from 4.57.0 to 5.14.1 generate() swaps the cache of any
        # assisted generation for a dynamic one (asked of 4.57.6, 5.0.0, 5.14.1: it runs);
        # 5.15.0 to 5.23.0 refuse it again (asked of 5.15.0, 5.19.0); the 5.24.0 wheel has
        # no such check and 5.25.0 runs it
        ("4.44.2", []),
        ("4.45.0", ["fail"]),
        ("4.56.2", ["fail"]),
        ("4.57.0", []),
        ("5.14.1", []),
        ("5.15.0", ["fail"]),
        ("5.23.0", ["fail"]),
        ("5.24.0", []),
        ("5.25.0", []),
        (None, []),  # read at 5.25.0, the newest known, which runs it
    ],
)
def test_static_cache_with_prompt_lookup(
    check: Run,  # noqa: F811
    version: str | None,
    severities: list[str],
) -> None:
    config = "prompt_lookup_num_tokens: 3\ncache_implementation: static\n"
    assert _severities(check, version, config, "not supported with Static cache") == severities


@pytest.mark.parametrize(
    ("version", "phrase", "severities"),
    [
        # 'dynamic' is no cache_implementation GenerationConfig.validate takes from 4.45.0
        # (configuration_utils.py:736-739) to 4.49.0 (764-767); 4.50.0 adds it (75-77)
        ("4.44.2", "Invalid `cache_implementation`", []),
        ("4.45.0", "Invalid `cache_implementation`", ["fail"]),
        ("4.49.0", "Invalid `cache_implementation`", ["fail"]),
        ("4.50.0", "Invalid `cache_implementation`", []),
        # with an assistant: its cache is swapped for a dynamic one to 5.14.1 (asked of
        # 5.0.0 and 5.14.1: it runs); 5.15.0 passes the target's cache_implementation and
        # the assistant's own past_key_values to the assistant's generate(), refused
        # (utils.py:1949-1952); the 5.24.0 candidate generator clears it (line 184)
        ("4.50.0", "Passing both", []),
        ("5.14.1", "Passing both", []),
        ("5.15.0", "Passing both", ["fail"]),
        ("5.23.0", "Passing both", ["fail"]),
        ("5.24.0", "Passing both", []),
    ],
)
def test_dynamic_cache_with_an_assistant(
    check: Run,  # noqa: F811
    version: str,
    phrase: str,
    severities: list[str],
) -> None:
    config = ASSISTANT + "cache_implementation: dynamic\n"
    assert _severities(check, version, config, phrase) == severities


@pytest.mark.parametrize(
    ("config", "phrase", "version", "severities"),
    [
        # assisted generation came in at 4.29.0 (utils.py:1469-1478 of its wheel); the
        # 4.28.1 wheel has none of it
        ("use_cache: false\n", "requires `use_cache=True`", "4.29.0", ["fail"]),
        ("use_cache: false\n", "requires `use_cache=True`", "4.28.1", []),
        # from 5.24.0 another message, the same refusal (utils.py:3980-3982; asked of 5.25.0)
        ("use_cache: false\n", "Assisted decoding requires a cache", "5.25.0", ["fail"]),
        ("num_return_sequences: 2\n", "num_return_sequences has to be 1", "4.29.0", ["fail"]),
        ("num_return_sequences: 2\n", "num_return_sequences has to be 1", "4.28.1", []),
        # beam search with an assistant: refused from 4.29.0 (utils.py:1424-1429) to
        # 4.51.3 (configuration_utils.py:565-577), asked of 4.46.0 and 4.48.0; from 4.52.0
        # a warning and beam search without the assistant (configuration_utils.py:580-584)
        ("num_beams: 2\n", "Greedy Search and Sample", "4.29.0", ["fail"]),
        ("num_beams: 2\n", "Greedy Search and Sample", "4.51.3", ["fail"]),
        ("num_beams: 2\n", "Greedy Search and Sample", "4.52.0", []),
        # (a warning here: nothing in this claims file rests on the speculation)
        ("num_beams: 2\n", "runs no assisted generation", "4.51.3", []),
        ("num_beams: 2\n", "runs no assisted generation", "4.52.0", ["warn"]),
        # assistant_ensemble_weight: from 5.14.0 (configuration_utils.py:660-664); at 5.13.1
        # the keyword does not exist (SG310, below)
        ("assistant_ensemble_weight: 1.5\n", "open interval", "5.14.0", ["fail"]),
        ("assistant_ensemble_weight: 1.5\n", "open interval", "5.13.1", []),
        # EarlyExitCandidateGenerator.get_candidates without is_first_iteration: 5.0.0
        # (candidate_generator.py:1250-1257, asked: TypeError) to 5.2.0; 5.3.0 drops the
        # parameter; 4.57.6 has none (asked: it runs)
        ("assistant_early_exit: 1\n", "TypeError", "5.0.0", ["fail"]),
        ("assistant_early_exit: 1\n", "TypeError", "5.2.0", ["fail"]),
        ("assistant_early_exit: 1\n", "TypeError", "5.3.0", []),
        ("assistant_early_exit: 1\n", "TypeError", "4.57.6", []),
        # the assistant's own negative num_assistant_tokens: GenerationConfig.update
        # validates max_new_tokens > 0 from 4.38.0 (configuration_utils.py:391-392); the
        # 4.37.2 wheel only warns
        (
            "assistant_generation_config:\n  num_assistant_tokens: -1\n",
            "must be greater than 0",
            "4.38.0",
            ["fail"],
        ),
        (
            "assistant_generation_config:\n  num_assistant_tokens: -1\n",
            "must be greater than 0",
            "4.37.2",
            [],
        ),
    ],
)
def test_assistant_refusals_by_their_lifetimes(
    check: Run,  # noqa: F811
    config: str,
    phrase: str,
    version: str,
    severities: list[str],
) -> None:
    assert _severities(check, version, ASSISTANT + config, phrase) == severities


@pytest.mark.parametrize(
    ("config", "phrase", "version", "severities"),
    [
        # PromptLookupCandidateGenerator from 4.37.0 (candidate_generator.py:256-257)
        ("prompt_lookup_num_tokens: 0\n", "Invalid max_matching_ngram_size", "4.37.0", ["fail"]),
        ("prompt_lookup_num_tokens: 0\n", "Invalid max_matching_ngram_size", "4.36.2", []),
        # _get_candidate_generator from 5.14.0 (utils.py:993-997)
        (
            "prompt_lookup_num_tokens: 3\nassistant_ensemble_weight: 0.5\n",
            "requires candidate logits",
            "5.14.0",
            ["fail"],
        ),
        (
            "prompt_lookup_num_tokens: 3\nassistant_ensemble_weight: 0.5\n",
            "requires candidate logits",
            "5.13.1",
            [],
        ),
    ],
)
def test_prompt_lookup_refusals_by_their_lifetimes(
    check: Run,  # noqa: F811
    config: str,
    phrase: str,
    version: str,
    severities: list[str],
) -> None:
    assert _severities(check, version, config, phrase) == severities


@pytest.mark.parametrize(
    ("config", "version", "name"),
    [
        # a generate() keyword a release does not have is refused by _validate_model_kwargs
        # ('not used by the model'), asked of 4.46.0, 4.48.0 and 5.0.0
        ("prompt_lookup_num_tokens: 3\n", "4.36.2", "prompt_lookup_num_tokens"),
        (ASSISTANT + "assistant_lookbehind: 10\n", "4.46.3", "assistant_lookbehind"),
        (ASSISTANT + "assistant_early_exit: 1\n", "4.46.3", "assistant_early_exit"),
        (ASSISTANT + "assistant_ensemble_weight: 0.5\n", "5.13.1", "assistant_ensemble_weight"),
        (ASSISTANT + "speculation_type: eagle\n", "5.14.1", "speculation_type"),
        # generate() pops assistant_tokenizer from 4.46.0 (utils.py:1969); transformers
        # 4.45.0 itself refuses it as a model kwarg (tests/data/engine_oracle/
        # transformers-4.45.0.json, records transformers-0062, 0063)
        (ASSISTANT + "assistant_tokenizer: t\ntokenizer: t\n", "4.45.2", "assistant_tokenizer"),
    ],
)
def test_a_keyword_before_its_release_is_refused(
    check: Run,  # noqa: F811
    config: str,
    version: str,
    name: str,
) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": config,
        }
    )
    assert [s for s, _, m in found(dep, "SG310") if name in m] == ["fail"]
    assert code == 1


@pytest.mark.parametrize(
    ("config", "phrase", "severities"),
    [
        # assistant_ensemble_weight exists from 5.14.0 and PyPI served nothing between
        # 5.13.1 and 5.14.0 (the data's releases), so an unpinned config using it runs
        # 5.14.0 or later, where every release refuses 1.5
        (ASSISTANT + "assistant_ensemble_weight: 1.5\n", "open interval", ["fail"]),
        # prompt lookup exists from 4.37.0 (after 4.36.2), and every release from there
        # refuses these
        ("prompt_lookup_num_tokens: 3\nuse_cache: false\n", "use_cache=True", ["fail"]),
        ("prompt_lookup_num_tokens: 0\n", "Invalid max_matching_ngram_size", ["fail"]),
        # an assistant bounds nothing (4.29.0 on; below the releases read): a warning
        (ASSISTANT + "use_cache: false\n", "use_cache=True", ["warn"]),
        # read at 5.25.0, the newest known, which runs it (and so does 4.57.0-5.14.1)
        (ASSISTANT + "cache_implementation: static\n", "Static cache", []),
    ],
)
def test_unpinned_the_keywords_bound_the_release(
    check: Run,  # noqa: F811
    config: str,
    phrase: str,
    severities: list[str],
) -> None:
    # Contract change (issue 27): the first three warned ("seen in 5.19.0 only", the
    # version unknown), the last warned too (judged at 5.19.0, then the newest known)
    assert _severities(check, None, config, phrase) == severities


SAME = ("llama-draft-v512", "assistant_tokenizer: models/d\ntokenizer: models/t\n")
SAMPLED = (
    "llama-draft-v520",
    "assistant_tokenizer: models/d\ntokenizer: models/t\ndo_sample: true\n",
)


@pytest.mark.parametrize(
    ("models", "phrase", "version", "severities"),
    [
        # the same vocabulary with assistant_tokenizer: _validate_assistant from 4.46.0
        # (utils.py:1297); the 4.45.2 wheel takes no assistant_tokenizer
        (SAME, "is not required", "4.46.0", ["fail"]),
        (SAME, "is not required", "4.45.2", []),
        # different vocabularies with do_sample: the pruned head's attributes, from 4.52.0
        # (utils.py:1040-1046, candidate_generator.py:725-728, 816); asked of 4.48.0 (it
        # runs) and 4.57.6 (AttributeError)
        (SAMPLED, "AssistantToTargetTranslator", "4.52.0", ["fail"]),
        (SAMPLED, "AssistantToTargetTranslator", "4.51.3", []),
        # different vocabularies and no assistant_tokenizer: refused by _validate_assistant
        # in other words from 4.42.0 (utils.py:1180-1181; the 4.41.2 wheel compares no
        # vocab_size) to 4.45.2 (utils.py:1147-1148); transformers 4.45.0 itself refuses
        # the v520 assistant (tests/data/engine_oracle/transformers-4.45.0.json, records
        # transformers-0061, 0064); from 4.46.0 it is different-tokenizers
        (("llama-draft-v520", ""), "Make sure the main and assistant", "4.45.2", ["fail"]),
        (("llama-draft-v520", ""), "Make sure the main and assistant", "4.42.0", ["fail"]),
        (("llama-draft-v520", ""), "Make sure the main and assistant", "4.41.2", []),
        (("llama-draft-v520", ""), "Make sure the main and assistant", "4.46.0", []),
        (("llama-draft-v520", ""), "different tokenizers", "4.46.0", ["fail"]),
        (("llama-draft-v520", ""), "different tokenizers", "4.45.2", []),
    ],
)
def test_tokenizer_refusals_by_their_lifetimes(
    check: Run,  # noqa: F811
    models: tuple[str, str],
    phrase: str,
    version: str,
    severities: list[str],
) -> None:
    draft, config = models
    dep = _with_models(check, version, draft, config)
    assert [s for s, _, m in found(dep, "SG307") if phrase in m] == severities


_CONTRASTIVE = ASSISTANT + "penalty_alpha: 0.6\ntop_k: 4\ndo_sample: false\n"


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # _get_deprecated_gen_repo raises without trust_remote_code: utils.py:2194-2198 of
        # the 4.57.0 wheel, :2545-2549 of 5.25.0
        ("4.57.0", ["fail"]),
        ("5.25.0", ["fail"]),
        # 4.56.0-4.56.2 load the Hub repo through resolve_trust_remote_code, which asks on a
        # terminal (dynamic_module_utils.py:713-744 of 4.56.2): a warning
        ("4.56.2", ["warn"]),
        ("4.56.0", ["warn"]),
        # 4.55.4 runs contrastive search in the library (utils.py:2583-2605)
        ("4.55.4", []),
    ],
)
def test_contrastive_search_needs_trust_remote_code(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said = "trust_remote_code"
    assert _severities(check, version, _CONTRASTIVE, said) == severities
    # trust_remote_code=True, or a custom_generate of one's own, loads it: not refused
    assert _severities(check, version, _CONTRASTIVE + "trust_remote_code: true\n", said) == []
    assert _severities(check, version, _CONTRASTIVE + "custom_generate: my/repo\n", said) == []


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # GENERATION_MODES_MAPPING has constrained beam search from 4.57.0 (utils.py:142)
        ("4.57.1", ["fail"]),
        ("5.25.0", ["fail"]),
        # 4.56.2 runs it in the library with a warning (utils.py:2586-2589)
        ("4.56.2", []),
    ],
)
@pytest.mark.parametrize("key", ["constraints", "force_words_ids"])
def test_constrained_search_needs_trust_remote_code(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
    key: str,
) -> None:
    config = ASSISTANT + f"{key}: [[5, 6]]\n"
    assert _severities(check, version, config, "Constrained Beam Search requires") == severities
    trusted = config + "trust_remote_code: true\n"
    assert _severities(check, version, trusted, "Constrained Beam Search requires") == []


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # get_generation_mode raises for dola_layers once the mode is assisted generation:
        # configuration_utils.py:517-524 of 4.43.0, :579-587 of 4.51.3
        ("4.43.0", ["fail"]),
        ("4.51.3", ["fail"]),
        # 4.42.4 has no dola_layers; 4.52.0 logs that the flag is ignored (:587-595)
        ("4.42.4", []),
        ("4.52.0", []),
    ],
)
def test_dola_with_an_assistant_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    config = ASSISTANT + "dola_layers: high\n"
    assert _severities(check, version, config, "triggers DoLa generate") == severities
    # without an assistant DoLa is its own mode: nothing is refused
    assert _severities(check, version, "dola_layers: high\n", "triggers DoLa generate") == []
