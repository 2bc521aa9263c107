"""SGLang's launcher options file (trial3/07; docs/engines.md#command-lines-and-launchers).

SGLang's prepare_server_args reads ``--config FILE.yaml`` (PyPI wheels: 0.5.3
``sglang/srt/server_args.py:3159-3171``, 0.5.6.post2 ``:4475-4490``, 0.5.23 ``:683-689``):
ConfigArgumentMerger turns the YAML keys into ``--KEY VALUE`` words and returns them
before the command's own words (``config_args + before_config + after_config``), so
argparse keeps the command's. ``sglang serve`` (0.5.23 ``sglang/cli/serve.py``) builds its
arguments the same way. The file is the trial's sgl.yaml: EAGLE3, 4 steps, top-k 1,
5 draft tokens (D 4, as the same file named directly as engine_config reads).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines import read_engine_file
from specgate.inputs.types import EngineConfig

SGL = (
    "model-path: Qwen/Qwen3-8B\nspeculative-algorithm: EAGLE3\n"
    "speculative-draft-model-path: Tengyunw/qwen3_8b_eagle3\nspeculative-num-steps: 4\n"
    "speculative-eagle-topk: 1\nspeculative-num-draft-tokens: 5\ntp-size: 1\n"
)


def _read(root: Path, command: str) -> tuple[str | None, int | None, tuple[str, ...]]:
    (root / ".git").mkdir(exist_ok=True)
    (root / "sgl.yaml").write_text(SGL, "utf-8")
    (root / "run.sh").write_text(command + "\n", "utf-8")
    config = read_engine_file(root / "run.sh", "run.sh")
    assert config.engine == "sglang"
    return config.mechanism, config.draft_length, config.notes


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m sglang.launch_server --config sgl.yaml --port 30000",
        "python -m sglang.launch_server --port 30000 --config ./sgl.yaml",
        "sglang serve --config sgl.yaml",
    ],
)
def test_the_options_file_is_followed(tmp_path: Path, command: str) -> None:
    mechanism, d, notes = _read(tmp_path, command)
    assert (mechanism, d) == ("eagle3", 4)
    assert any("sgl.yaml" in n and "--config" in n for n in notes), notes


def test_speculative_flags_beside_the_file_are_not_merged(tmp_path: Path) -> None:
    # the command's --speculative-num-steps 2 wins over the file's 4 in SGLang: specgate
    # does not merge them, so D is not settled (SG314), never the file's 4
    command = "python3 -m sglang.launch_server --config sgl.yaml --speculative-num-steps 2"
    with pytest.raises(UnsettledValue) as caught:
        _read(tmp_path, command)
    assert caught.value.origin == "repository"
    assert caught.value.what == "--speculative-num-steps"


def test_a_file_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "sgl.yaml").write_text(SGL, "utf-8")
    with pytest.raises(InputError, match="leaves the repository"):
        _read(root, "python3 -m sglang.launch_server --config ../sgl.yaml")


def test_a_key_spelled_with_underscores_is_refused(tmp_path: Path) -> None:
    # ConfigArgumentMerger writes `--{key}` as written (0.5.6.post2 _add_scalar_arg,
    # 0.5.23 server_args_config_parser.py:230): `--speculative_num_steps` is no flag of
    # SGLang's argparse (flags spelled with `-`): "unrecognized arguments"
    (tmp_path / ".git").mkdir()
    (tmp_path / "sgl.yaml").write_text(
        SGL.replace("speculative-num-steps: 4", "speculative_num_steps: 4"), "utf-8"
    )
    (tmp_path / "run.sh").write_text("python3 -m sglang.launch_server --config sgl.yaml\n")
    config = read_engine_file(tmp_path / "run.sh", "run.sh")
    (issue,) = [i for i in config.issues if i.code == "SG307"]
    assert "`--speculative_num_steps`" in issue.message
    assert config.spans[issue.field].line == 4  # the key's line in sgl.yaml
    # the `-` spelling of the trial's file is what SGLang reads
    assert not [i for i in _config(tmp_path).issues if i.code == "SG307"]


def _config(root: Path) -> EngineConfig:
    (root / "sgl.yaml").write_text(SGL, "utf-8")
    return read_engine_file(root / "run.sh", "run.sh")
