"""How ``--only-new`` pairs a finding with the base revision's (:mod:`specgate.check.only_new`),
on hand-made findings: the identity is rule + JSON path without the deployment index +
the key it is about; lines, columns, files and messages are not part of it."""

from __future__ import annotations

from specgate.check.only_new import identity, states
from specgate.core.findings import Finding, Severity


def finding(
    code: str = "SG107",
    path: str = "deployments[0].claims.speedup",
    *,
    severity: Severity = "fail",
    message: str = "claimed 2x exceeds the measured 1.8x",
    line: int = 14,
    subject: str | None = None,
    excess: float | None = None,
) -> Finding:
    return Finding(
        code, "rule", severity, message, "a.yaml", path, line, 16, subject=subject, excess=excess
    )


def marks(head: list[Finding], base: list[Finding] | None) -> list[str | None]:
    return [f.baseline_state for f in states(tuple(head), None if base is None else tuple(base))]


def test_identity_ignores_index_line_column_file_and_message() -> None:
    a = finding(path="deployments[0].claims.speedup", line=14, message="claimed 2x")
    b = finding(path="deployments[3].claims.speedup", line=90, message="another text")
    b = b._replace(file="elsewhere.json", column=2)
    assert identity(a) == identity(b) == ("SG107", "claims.speedup", "")


def test_nothing_at_the_base_is_new() -> None:
    assert marks([finding()], None) == ["new"]
    assert marks([finding()], []) == ["new"]


def test_the_same_finding_is_unchanged_even_less_severe() -> None:
    assert marks([finding(message="reworded", line=3)], [finding()]) == ["unchanged"]
    assert marks([finding(severity="warn")], [finding(severity="fail")]) == ["unchanged"]


def test_a_more_severe_level_is_updated() -> None:
    # warn at REF, fail now (an engine issue confirmed at the version now served)
    assert marks([finding(severity="fail")], [finding(severity="warn")]) == ["updated"]
    assert marks([finding(severity="warn")], [finding(severity="note")]) == ["updated"]


def test_a_larger_excess_is_updated_a_smaller_or_equal_one_unchanged() -> None:
    # SG107: claim / measured, 2.0 / 1.8 = 1.1111 at REF
    at_ref = [finding(excess=2.0 / 1.8)]
    assert marks([finding(excess=2.0 / 1.6)], at_ref) == ["updated"]  # 1.25
    assert marks([finding(excess=1.9 / 1.8)], at_ref) == ["unchanged"]  # 1.0556
    assert marks([finding(excess=2.0 / 1.8)], at_ref) == ["unchanged"]
    # an excess on one side only compares nothing
    assert marks([finding(excess=9.0)], [finding()]) == ["unchanged"]


def test_regression_rules_are_always_new() -> None:
    for code in ("SG401", "SG402", "SG403", "SG404", "SG410", "SG412"):
        regression = finding(code, "deployments[0].evidence.accept_length")
        assert marks([regression], [regression]) == ["new"]
    # an evidence rule judges the head alone: compared like the others
    stale = finding("SG405", "deployments[0].evidence.provenance.measured_at", severity="warn")
    assert marks([stale], [stale]) == ["unchanged"]


def test_engine_keys_are_told_apart_by_subject() -> None:
    path = "deployments[0].speculation.engine_config"
    mtp = finding("SG307", path, subject="draft_length")
    greedy = finding("SG307", path, subject="mechanism")
    assert marks([mtp, greedy], [mtp]) == ["unchanged", "new"]


def test_more_of_one_identity_than_at_the_base_are_all_new() -> None:
    # which of two SG005 on one path is the added one cannot be told: neither is hidden
    sg005 = finding("SG005", "", severity="warn")
    assert marks([sg005, sg005._replace(line=20)], [sg005]) == ["new", "new"]
    assert marks([sg005], [sg005, sg005]) == ["unchanged"]
