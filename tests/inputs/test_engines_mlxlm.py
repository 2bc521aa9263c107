"""MLX-LM (inputs/engines/mlxlm.py): values from the argparse parsers of
``ml-explore/mlx-lm:mlx_lm/server.py@v0.31.3`` and ``mlx_lm/generate.py@v0.31.3``
(``--draft-model``, ``--num-draft-tokens`` default 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines import read_engine_file


def read(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    (tmp_path / "run.sh").write_text(text, encoding="utf-8")
    return read_engine_file(tmp_path / "run.sh", "run.sh")


def test_server_with_draft_tokens(tmp_path: Path) -> None:
    c = read(
        tmp_path,
        "mlx_lm.server --model mlx-community/Qwen3-8B-4bit "
        "--draft-model mlx-community/Qwen3-0.6B-4bit --num-draft-tokens 4\n",
    )
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == (
        "mlxlm", "draft_model", 4, 5
    )
    assert (c.target_model, c.draft_model) == (
        "mlx-community/Qwen3-8B-4bit", "mlx-community/Qwen3-0.6B-4bit"
    )
    assert not c.draft_length_is_max  # every step drafts D (speculative_generate_step)


def test_default_draft_tokens_is_three(tmp_path: Path) -> None:
    c = read(tmp_path, "mlx_lm.generate --model m --draft-model d --prompt hi\n")
    assert (c.engine, c.draft_length) == ("mlxlm", 3)
    assert any("default is 3" in note for note in c.notes)


def test_python_module_form(tmp_path: Path) -> None:
    c = read(tmp_path, "python -m mlx_lm.server --model m --draft-model d\n")
    assert (c.engine, c.draft_length) == ("mlxlm", 3)
    assert any("request's num_draft_tokens" in note for note in c.notes)


def test_draft_tokens_without_draft_model_configure_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read(tmp_path, "mlx_lm.server --model m --num-draft-tokens 4\n")


def test_not_a_number(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        read(tmp_path, "mlx_lm.server --model m --draft-model d --num-draft-tokens four\n")


@pytest.mark.parametrize(
    ("word", "meant"),
    [
        ("--num-draft 5", "--num-draft-tokens"),
        ("--dr d", "--draft-model"),
        ("--d=d", "--draft-model"),
    ],
)
def test_an_abbreviation_of_a_speculative_flag_is_unsettled(
    tmp_path: Path, word: str, meant: str
) -> None:
    # argparse (allow_abbrev) reads --num-draft as --num-draft-tokens in server.py and
    # generate.py@v0.31.3, and refuses --d in server.py (--draft-model,
    # --decode-concurrency): without the whole parser neither is settled
    with pytest.raises(UnsettledValue, match=f"{meant}.*write the flag in full") as info:
        read(tmp_path, f"# serve\nmlx_lm.server --model m --draft-model d {word}\n")
    assert info.value.line == 2
    # the file spells the flag so: the repository's (SG314, docs/engines.md#unsettled-values)
    assert info.value.origin == "repository"


def test_an_abbreviation_alone_is_not_no_speculation(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="write the flag in full"):
        read(tmp_path, "mlx_lm.server --model m --draft d\n")


def test_another_programs_prefix_is_not_mlx_lm(tmp_path: Path) -> None:
    # --draft is llama.cpp's own flag: only an MLX-LM program's prefixes are its flags
    c = read(tmp_path, "./speculative -m t.gguf -md d.gguf --draft 8\n")
    assert c.engine == "llamacpp"


def test_the_mlx_lm_cli_subcommand(tmp_path: Path) -> None:
    # mlx_lm/cli.py@v0.31.3 pops the subcommand and runs mlx_lm.server's main
    c = read(tmp_path, "mlx_lm server --model m --draft-model d --num-draft-tokens 2\n")
    assert (c.engine, c.draft_length, c.verify_tokens) == ("mlxlm", 2, 3)
