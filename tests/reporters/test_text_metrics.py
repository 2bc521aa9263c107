"""The text format's metrics block prints only what is known
(docs/trust.md#names-say-how-a-number-is-known: names say how a number is known): no "G —" or "D* —"
for a deployment whose G is unknown; "G unknown (state …)" where the tile rule applies and a reader
expects G; which G is shown (per rank at a known TP, else the model's with TP not stated)."""

from __future__ import annotations

from collections.abc import Callable

from tests.rules.test_rules import claims, dep, only

from specgate.check.report import FileReport
from specgate.reporters.text import metrics_block

Check = Callable[..., FileReport]


def block(check_text: Check, deployment: dict[str, object]) -> str:
    return "\n".join(metrics_block(only(check_text(claims(deployment)))))


def test_no_g_line_when_g_is_unknown_and_not_needed(check_text: Check) -> None:
    # D 3, AL 2.2, ρ 0.05: floor (1 + 0.15)·1.1 = 1.265; no heads, not attention-dominated
    text = block(check_text, dep(d=3, rho=0.05, al=2.2))
    assert "G " not in text and "D*" not in text and "tile aligned" not in text
    assert "    AL floor 1.265" in text.splitlines()
    assert "—" not in text.split("mechanism:")[0]


def test_g_unknown_is_said_where_the_tile_rule_applies(check_text: Check) -> None:
    text = block(check_text, dep(d=3, rho=0.05, al=2.2, workload={"attention_dominated": True}))
    assert "G unknown (state model.hf_config, or model.query_heads with model.kv_heads)" in text
    assert "D*" not in text


def test_which_g_is_shown(check_text: Check) -> None:
    # Attention-dominated, so D* and the tile alignment are shown (review #12: only where
    # the tile rule applies; without it the line keeps G and the AL floor).
    attention = {"attention_dominated": True}
    # H 64, KV 8 at TP 16: (64/16)/max(1, 8/16) = 4 per rank; D* = floor(128/4) − 1 = 31;
    # D 31: 4·32 = 128 rows, exactly one tile: aligned
    text = block(check_text, dep(d=31, rho=0.01, al=3.1, model={"query_heads": 64, "kv_heads": 8},
                                 hardware={"tensor_parallel": 16}, workload=attention))
    assert "    G 4 per rank (TP 16), D* 31, tile aligned yes, AL floor" in text
    text = block(check_text, dep(d=31, rho=0.01, al=3.1, model={"query_heads": 64, "kv_heads": 8},
                                 hardware={"tensor_parallel": 16}))
    assert "    G 4 per rank (TP 16), AL floor" in text
    # TP not stated: the model's G 8, D* 15; D 31 → 8·32 = 256 rows, two full tiles
    text = block(check_text, dep(d=31, rho=0.01, al=3.1, model={"query_heads": 64, "kv_heads": 8},
                                 workload=attention))
    assert "    G 8 (TP not stated), D* 15, tile aligned yes" in text
    # TP 1 stated: plain G
    text = block(check_text, dep(d=31, rho=0.01, al=3.1, model={"query_heads": 64, "kv_heads": 8},
                                 hardware={"tensor_parallel": 1}, workload=attention))
    assert "    G 8, D* 15, tile aligned yes" in text


def test_unknown_al_and_d_and_no_floor(check_text: Check) -> None:
    # D 0: no default floor (docs/theory.md#edge-cases), nothing to print for it; no AL, no claim
    text = block(check_text, dep(d=0))
    first = text.splitlines()[1]
    assert first.startswith(
        "    AL unknown (state evidence.accept_length or evidence.metrics), D 0")
    assert "claimed" not in first and "theoretical" not in first
    assert "AL floor" not in text
    text = block(check_text, dep(al=2.0))
    assert "D unknown (state speculation.draft_length)" in text
