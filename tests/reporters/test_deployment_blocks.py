"""What a deployment's block prints (review #12, #14): the tile alignment and D* only
where the tile rule applies (attention-dominated decode), and for a deployment that does
not speculate none of the numbers of a speculation that does not run."""

from __future__ import annotations

from collections.abc import Callable

from specgate.check.report import FileReport, RunReport
from specgate.reporters import summary, text

CHAT = """\
version: 1
deployments:
  - name: chat-8b
    model: {{query_heads: 32, kv_heads: 8}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    workload: {{attention_dominated: {dominated}}}
    evidence: {{accept_length: 2.4}}
"""
OFF = """\
version: 1
deployments:
  - name: off
    model: {{query_heads: 64, kv_heads: 8}}
    speculation: {{enabled: false}}
    workload: {{attention_dominated: {dominated}}}
"""


def _block(report: FileReport) -> list[str]:
    (deployment,) = report.deployments
    return text.metrics_block(deployment)


def _summary(report: FileReport) -> str:
    return summary.render(RunReport(report.status, (report,)), charts=False)


def test_no_tile_advice_where_the_tile_rule_does_not_apply(
    check_text: Callable[..., FileReport],
) -> None:
    # G = 32 / 8 = 4, D 3: 16 rows, one tile; not attention-dominated, so neither D* nor
    # "tile aligned no (tile-aligned D 31)" (which read as advice to draft 31 tokens).
    block = _block(check_text(CHAT.format(dominated="false")))
    (tiles,) = [line for line in block if line.startswith("    G ")]
    assert tiles.startswith("    G 4 (TP not stated), AL floor ")
    assert "tile" not in "\n".join(block) and "D*" not in "\n".join(block)


def test_tile_alignment_where_the_tile_rule_applies(
    check_text: Callable[..., FileReport],
) -> None:
    # Attention-dominated: D* = floor(128/4) − 1 = 31, tile-aligned D = floor(1·128/4) − 1
    # = 31 ≠ D 3.
    block = _block(check_text(CHAT.format(dominated="true")))
    (tiles,) = [line for line in block if line.startswith("    G ")]
    assert tiles.startswith(
        "    G 4 (TP not stated), D* 31, tile aligned no (tile-aligned D 31), AL floor "
    )


def test_a_disabled_deployment_shows_no_speculative_numbers(
    check_text: Callable[..., FileReport],
) -> None:
    report = check_text(OFF.format(dominated="false"))
    assert _block(report) == [
        "  deployment off: ready",
        "    speculation disabled (speculation.enabled: false)",
    ]
    shown = _summary(report)
    assert "Speculation disabled (`speculation.enabled: false`)." in shown
    for absent in ("draft depth ratio", "verify cost", "AL floor", "Mechanism", "typical"):
        assert absent not in shown


def test_a_disabled_attention_dominated_deployment_keeps_g_and_d_star(
    check_text: Callable[..., FileReport],
) -> None:
    # G = 64 / 8 = 8: D* = floor(128/8) − 1 = 15, what SG202 suggests as the first D.
    report = check_text(OFF.format(dominated="true"))
    block = _block(report)
    assert block[1] == (
        "    speculation disabled (speculation.enabled: false); G 8 (TP not stated), D* 15"
    )
    assert any("D = 15" in line for line in block[2:])  # SG202's next action
    shown = _summary(report)
    assert "| query heads per KV head G | 8 (TP not stated) |" in shown
    assert "| attention-optimal D* | 15 |" in shown
    assert "AL floor" not in shown and "Mechanism" not in shown
