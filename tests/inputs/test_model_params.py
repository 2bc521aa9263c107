"""Total and active parameters counted from hf config shapes (docs/theory.md#step-time-inputs).

Two oracles: the counts the model publishers give (within 2 %: the model cards round,
Qwen3-30B-A3B's active "3.3 B" is 3.353 B), and the exact counts worked out by hand from
every shape (term by term, e.g. Llama-3.1-8B: layer =
41,943,040 + 176,160,768 + 8,192 = 218,112,000; ×32 + 2·128,256·4,096 + 4,096 =
8,030,261,248). Sources of the configs and counts: tests/data/theory/SOURCES.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.inputs.model_params import count_parameters

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "real" / "hf-config" / "config"
THEORY = DATA / "theory" / "hf-config"

# file, published total B, published active B, hand-counted total, hand-counted active
CASES = [
    (REAL / "meta-llama--Meta-Llama-3.1-8B_config.json", 8.03, 8.03, 8_030_261_248, None),
    (THEORY / "meta-llama--Meta-Llama-3.1-70B_config.json", 70.6, 70.6, 70_553_706_496, None),
    (THEORY / "meta-llama--Meta-Llama-3.1-405B_config.json", 405, 405, 405_853_388_800, None),
    (REAL / "mistralai--Mixtral-8x7B-v0.1_config.json", 46.7, 12.9, 46_702_792_704,
     12_879_925_248),
    (THEORY / "mistralai--Mixtral-8x22B-v0.1_config.json", 141, 39, 140_620_634_112,
     39_152_031_744),
    (THEORY / "Qwen--Qwen3-30B-A3B_config.json", 30.5, 3.3, 30_532_122_624, 3_353_032_704),
    (THEORY / "Qwen--Qwen3-235B-A22B_config.json", 235, 22, 235_093_634_560, 22_190_763_520),
    (THEORY / "Qwen--Qwen2-57B-A14B_config.json", 57.4, 14, 57_408_658_944, 14_249_270_784),
    (REAL / "deepseek-ai--DeepSeek-V3_config.json", 671, 37, 671_026_419_200, 37_552_297_472),
    (REAL / "meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json", 400, 17,
     400_711_848_960, 17_184_691_200),
    (THEORY / "meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json", 109, 17,
     107_769_861_120, 17_172_894_720),
]


def _count(path: Path) -> tuple[int, int]:
    data = json.loads(path.read_text(encoding="utf-8"))
    fields = data.get("text_config", data)
    counted = count_parameters(fields, fields.get("model_type") or data.get("model_type"))
    assert counted is not None, path.name
    return counted.total, counted.active


@pytest.mark.parametrize(("path", "total_b", "active_b", "total", "active"), CASES,
                         ids=[c[0].name.removesuffix("_config.json") for c in CASES])
def test_counts_match_published_and_hand_counts(
    path: Path, total_b: float, active_b: float, total: int, active: int | None
) -> None:
    counted_total, counted_active = _count(path)
    assert counted_total == total
    assert counted_active == (total if active is None else active)
    assert counted_total / 1e9 == pytest.approx(total_b, rel=0.02)
    assert counted_active / 1e9 == pytest.approx(active_b, rel=0.02)


def test_deepseek_counts_three_dense_layers_and_no_mtp_module() -> None:
    # first_k_dense_replace 3: a reader that made all 61 layers MoE would count
    # 3·(11,507,286,272 − 583,483,392) = 32.8 B more (+4.9 %); the MTP module (11.6 B) is
    # not part of the published 671 B.
    total, _ = _count(REAL / "deepseek-ai--DeepSeek-V3_config.json")
    assert total == 671_026_419_200


def test_qwen3_moe_ignores_the_unused_dense_intermediate_size() -> None:
    # every layer is MoE (decoder_sparse_step 1, mlp_only_layers []): counting
    # intermediate_size 6144 too would add 48·3·2048·6144 = 1.81 B (+5.9 %)
    total, _ = _count(THEORY / "Qwen--Qwen3-30B-A3B_config.json")
    assert total == 30_532_122_624


def test_mlp_only_layers_are_dense() -> None:
    # Qwen3-30B-A3B with layer 0 dense: MoE layer MLP 128·4,718,592 + router 262,144 =
    # 604,241,920 replaced by 3·2048·6144 = 37,748,736 → 30,532,122,624 − 566,493,184
    fields = json.loads((THEORY / "Qwen--Qwen3-30B-A3B_config.json").read_text())
    fields["mlp_only_layers"] = [0]
    counted = count_parameters(fields, "qwen3_moe")
    assert counted is not None
    assert counted.total == 30_532_122_624 - 566_493_184


def test_unknown_family_and_missing_shapes_are_not_counted() -> None:
    fields = json.loads((REAL / "openai--gpt-oss-20b_config.json").read_text())
    assert count_parameters(fields, fields.get("model_type")) is None  # not a counted family
    llama = json.loads((REAL / "meta-llama--Meta-Llama-3.1-8B_config.json").read_text())
    del llama["intermediate_size"]
    assert count_parameters(llama, "llama") is None


def test_hostile_shapes_are_not_counted() -> None:
    # a product of huge shapes is no model (and no float overflow later)
    fields = {"num_hidden_layers": 2**52, "hidden_size": 2**52, "num_attention_heads": 1,
              "vocab_size": 2**52, "intermediate_size": 2**52}
    assert count_parameters(fields, "llama") is None
