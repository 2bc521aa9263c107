"""Several configurations in one file: the same one repeated is one
(docs/engines.md#what-users-publish), different ones stay an input error naming what differs;
TensorRT-LLM disaggregated configs and overlays are one configuration
(tensorrt_llm/llmapi/disagg_utils.py extract_disagg_cfg)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.several import MAX_COMPARED
from specgate.inputs.types import EngineConfig


def read(tmp_path: Path, name: str, text: str, **kw: object) -> EngineConfig:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_engine_file(tmp_path / name, name, **kw)  # type: ignore[arg-type]


RECIPE = (
    "features:\n"  # 1
    "  spec:\n"  # 2
    "    args: ['--speculative-config.method', 'mtp',\n"  # 3
    "           '--speculative-config.num_speculative_tokens', '2']\n"  # 4
    "guide: |\n"  # 5
    "  ```bash\n"  # 6
    "  vllm serve org/model --tensor-parallel-size 4 \\\n"  # 7
    "    --speculative-config.method mtp --speculative-config.num_speculative_tokens 2\n"  # 8
    "  ```\n"  # 9
    "  Or on another platform:\n"  # 10
    "  ```bash\n"  # 11
    "  vllm serve org/model --tensor-parallel-size 4 \\\n"  # 12
    "    --speculative-config.method mtp --speculative-config.num_speculative_tokens 2\n"  # 13
    "  ```\n"  # 14
)


def test_the_same_configuration_three_times_is_one(tmp_path: Path) -> None:
    c = read(tmp_path, "recipe.yaml", RECIPE)
    # mtp, num_speculative_tokens 2: D 2, N_verify 3; the guide's commands state TP 4 and
    # the target, the argv list neither: the first command stating the most stands
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("mtp", 2, 3)
    assert (c.tensor_parallel_size, c.target_model) == (4, "org/model")
    assert c.pointer == "/guide"
    assert c.spans["draft_length"].line == 8
    assert "the same speculative configuration stands at" in c.notes[0]


def test_different_configurations_stay_an_error_naming_the_difference(tmp_path: Path) -> None:
    first = "num_speculative_tokens 2\n  ```\n  Or"
    text = RECIPE.replace(first, first.replace("2", "5"))
    with pytest.raises(InputError) as info:
        read(tmp_path, "recipe.yaml", text)
    reason = info.value.reason
    assert reason.startswith("3 speculative configurations in recipe.yaml: ")
    # the argv list says D 2, the guide's first command D 5
    assert "differ in D (2 and 5)" in reason
    assert reason.endswith("choose one with `pointer:`")


def test_a_pointer_still_picks_one(tmp_path: Path) -> None:
    c = read(tmp_path, "recipe.yaml", RECIPE, pointer="/features/spec/args")
    assert (c.mechanism, c.draft_length, c.tensor_parallel_size) == ("mtp", 2, None)


def test_many_configurations_are_not_read_one_by_one(tmp_path: Path) -> None:
    block = (
        "- ['--speculative-config.method', 'ngram', "
        "'--speculative-config.num_speculative_tokens', '3']\n"
    )
    with pytest.raises(InputError) as info:
        read(tmp_path, "many.yaml", block * (MAX_COMPARED + 1))
    assert info.value.reason.startswith(f"{MAX_COMPARED + 1} speculative configurations")
    assert "differ" not in info.value.reason  # listed, not read


DISAGG = (
    "model: org/target\n"  # 1
    "max_seq_len: 4096\n"  # 2
    "context_servers:\n"  # 3
    "  tensor_parallel_size: 2\n"  # 4
    "  speculative_config: &spec\n"  # 5
    "    decoding_type: Eagle3\n"  # 6
    "    max_draft_len: 4\n"  # 7
    "    speculative_model: org/eagle3\n"  # 8
    "generation_servers:\n"  # 9
    "  tensor_parallel_size: 8\n"  # 10
    "  speculative_config: *spec\n"  # 11
)


def test_disaggregated_generation_servers_decode(tmp_path: Path) -> None:
    c = read(tmp_path, "disagg.yaml", DISAGG)
    # one configuration: the generation servers' (TP 8), sharing the context servers'
    # anchor: Eagle3, max_draft_len 4 → D 4, N_verify 5; model and max_seq_len inherited
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == ("trtllm", "eagle3", 4, 5)
    assert (c.tensor_parallel_size, c.max_model_len) == (8, 4096)
    assert (c.target_model, c.draft_model) == ("org/target", "org/eagle3")
    assert c.spans["tensor_parallel_size"].line == 10
    assert any("generation_servers decode" in n for n in c.notes)
    assert c.issues == ()


def test_top_level_speculation_is_inherited(tmp_path: Path) -> None:
    text = (
        "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 2\n"
        "context_servers:\n  tensor_parallel_size: 4\n"
        "generation_servers:\n  tensor_parallel_size: 1\n"
    )
    c = read(tmp_path, "disagg.yaml", text)
    assert (c.mechanism, c.draft_length, c.tensor_parallel_size) == ("mtp", 2, 1)


def test_a_section_contradicting_the_top_level_is_refused(tmp_path: Path) -> None:
    text = DISAGG.replace("generation_servers:\n", "generation_servers:\n  max_seq_len: 8192\n")
    c = read(tmp_path, "disagg.yaml", text)
    # extract_disagg_cfg raises ValueError: max_seq_len 4096 at the top, 8192 in the section
    refusals = [i for i in c.issues if i.code == "SG307"]
    assert len(refusals) == 1 and "max_seq_len" in refusals[0].message
    assert c.spans[refusals[0].field].line == 10


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # read as the newest release specgate knows (1.2.0): a fail pinned there
        ("1.2.0", None),
        # older, or unpinned: not read there, a warning (issue 27)
        ("1.0.0", "warn"),
        (None, "warn"),
    ],
)
def test_a_contradicting_section_is_judged_at_the_release_read(
    tmp_path: Path, version: str | None, severity: str | None
) -> None:
    text = DISAGG.replace("generation_servers:\n", "generation_servers:\n  max_seq_len: 8192\n")
    c = read(tmp_path, "disagg.yaml", text, engine_version=version)
    refusals = [i for i in c.issues if i.code == "SG307" and "max_seq_len" in i.message]
    assert [i.severity for i in refusals] == [severity]


def test_only_the_context_servers_speculating_decodes_nothing(tmp_path: Path) -> None:
    text = DISAGG.replace("  speculative_config: *spec\n", "")
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read(tmp_path, "disagg.yaml", text)


def test_an_overlay_lays_its_options_over_its_parent(tmp_path: Path) -> None:
    text = (
        "trt_llm:\n  runtime:\n    tensor_parallel_size: 4\n    max_seq_len: 32768\n"
        "    patch_kwargs:\n      speculative_config:\n        decoding_type: MTP\n"
        "        max_draft_len: 1\n      max_seq_len: 16384\n"
    )
    c = read(tmp_path, "config.yaml", text)
    # TP 4 from the runtime; the patch's max_seq_len 16384 over the runtime's 32768
    assert (c.mechanism, c.draft_length, c.tensor_parallel_size, c.max_model_len) == (
        "mtp", 1, 4, 16384
    )
    assert c.pointer == "/trt_llm/runtime"


def test_a_disaggregated_launch_reads_its_config_file(tmp_path: Path) -> None:
    # trtllm-serve disaggregated -c FILE (tensorrt_llm/commands/serve.py:
    # parse_disagg_config_file(config_file)): the file is followed and read as one
    (tmp_path / "disagg.yaml").write_text(DISAGG, encoding="utf-8")
    c = read(tmp_path, "launch.sh", "trtllm-serve disaggregated -c disagg.yaml &\n")
    assert (c.path, c.mechanism, c.draft_length, c.tensor_parallel_size) == (
        "disagg.yaml", "eagle3", 4, 8
    )
