"""Commands inside prose (docs/engines.md#what-users-publish): only the shell code blocks of
Markdown text are shell.

Right values are worked out by hand from each text; the fence rules are CommonMark 0.31
§4.5 (a line of ≥ 3 backticks or tildes, closed by a line of the same character at least
as long; an unclosed block runs to the end of the text).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.cmdline import split_commands
from specgate.inputs.engines import read_engine_file
from specgate.inputs.prose import masked, prose_blocks

GUIDE = (
    "## Overview\n"  # 1
    "\n"  # 2
    "Llama 3.1 is Meta's model; it's small.\n"  # 3: two apostrophes, no quote
    "\n"  # 4
    "```bash\n"  # 5
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"  # 6
    "  --speculative-config '{\"method\":\"eagle3\",\"model\":\"x/eagle3\","
    "\"num_speculative_tokens\":3}'\n"  # 7
    "```\n"  # 8
    "\n"  # 9
    "```python\n"  # 10
    "print('it''s')  # not shell: never split\n"  # 11
    "```\n"  # 12
    "Don't forget the `--speculative-config` flag.\n"  # 13
)


def test_prose_is_no_shell_and_lines_hold() -> None:
    commands = split_commands(GUIDE)
    # the one command is the bash block's: lines 6-7 (0-based 5 and 6)
    assert [c.argv[:3] for c in commands] == [
        ("vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    ]
    assert commands[0].argv[3] == "--speculative-config"
    assert commands[0].lines == (5, 5, 5, 6, 6)
    # "  --speculative-config '" is 24 characters: the JSON word starts at column 24
    assert commands[0].columns[-1] == 24


def test_blocks_and_mask_keep_every_offset() -> None:
    blocks = prose_blocks(GUIDE)
    assert blocks is not None and len(blocks) == 1
    start, end = blocks[0]
    assert GUIDE[start:end].startswith("vllm serve") and GUIDE[start:end].endswith("3}'")
    hidden = masked(GUIDE, blocks)
    assert len(hidden) == len(GUIDE) and hidden.count("\n") == GUIDE.count("\n")
    assert "Meta's" not in hidden and "print" not in hidden and "```" not in hidden


def test_text_without_a_fence_is_shell_as_before() -> None:
    assert prose_blocks("vllm serve m --x 'a b'\n") is None
    argv = split_commands("vllm serve m --x 'a b'\n")[0].argv
    assert argv == ("vllm", "serve", "m", "--x", "a b")


def test_a_quote_left_open_in_one_block_does_not_run_into_the_next() -> None:
    text = "```sh\nvllm serve m --x 'open\n```\nprose\n```sh\nllama-server -m 'b'\n```\n"
    # a shell would refuse the first block alone: the error names its line (2), and
    # never reads the second block's quote as its close
    with pytest.raises(InputError, match="cannot split command line") as info:
        split_commands(text, file="guide.md", line=1)
    assert info.value.line == 2


def test_an_unclosed_fence_runs_to_the_end() -> None:
    # llama.cpp docs/speculative.md 'Sample usage' block copied without its closing fence
    text = "```\n# notes: it's `--x`\nllama-server ... --spec-type ngram-mod\n"
    assert [c.argv for c in split_commands(text)] == [
        ("llama-server", "...", "--spec-type", "ngram-mod")
    ]


def test_console_blocks_keep_the_prompted_commands_only() -> None:
    text = (
        "```console\n"
        "$ vllm serve m \\\n"
        "    --speculative-config.method ngram\n"
        "INFO: it's up\n"  # output: an apostrophe, no command
        "$ curl localhost:8000\n"
        "```\n"
    )
    argvs = [c.argv for c in split_commands(text)]
    assert argvs == [
        ("vllm", "serve", "m", "--speculative-config.method", "ngram"),
        ("curl", "localhost:8000"),
    ]


@pytest.mark.parametrize("info", ["yaml", "json", "python", "dockerfile"])
def test_blocks_of_other_languages_are_not_shell(info: str) -> None:
    text = f"```{info}\nvllm serve m --speculative-config.method ngram\n```\n"
    assert split_commands(text) == []


def test_a_markdown_file_is_read_as_text(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(GUIDE, encoding="utf-8")
    c = read_engine_file(tmp_path / "README.md", "README.md", engine="vllm")
    # method eagle3, num_speculative_tokens 3: D 3, N_verify 4; line 7 holds the JSON
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("eagle3", 3, 4)
    assert c.target_model == "meta-llama/Llama-3.1-8B-Instruct"
    assert c.spans["draft_length"].line == 7


def test_prose_without_fences_around_a_command() -> None:
    # A .txt copied from a guide: the apostrophe of "Here's" would open a quote that
    # closes inside the command's JSON (a shell would read garbage, or fail on the last
    # quote); an apostrophe inside a word whose quote runs past its line is prose
    text = (
        "Here's the command for Meta's 8B model:\n"  # two apostrophes: balanced, harmless
        "vllm serve m --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":4}'\n"
        "Don't run it twice.\n"  # one apostrophe: its quote would run past the line
    )
    argvs = [c.argv for c in split_commands(text)]
    assert argvs[1] == (
        "vllm", "serve", "m", "--speculative-config",
        '{"method":"ngram","num_speculative_tokens":4}',
    )
    assert argvs[2] == ("Don't", "run", "it", "twice.")


def test_a_quote_opened_after_a_blank_still_spans_lines() -> None:
    # vllm-ascend issue 13665: multi-line single-quoted JSON (no letter before the quote)
    text = "vllm serve m \\\n  --speculative-config '{\n    \"method\": \"ngram\"\n  }'\n"
    assert split_commands(text)[0].argv[-1] == '{\n    "method": "ngram"\n  }'
