"""Location of each finding (docs/reports.md#finding-locations) where the per-rule YAML fixtures do
not reach: JSON files, values merged from an anchor, flow mappings. Columns counted by hand."""

from __future__ import annotations

from collections.abc import Callable

from specgate.check.report import FileReport

Check = Callable[..., FileReport]


def places(report: FileReport) -> list[tuple[str, int | None, int | None]]:
    return sorted((f.code, f.line, f.column) for f in report.all_findings())


def test_json_duplicate_key_at_the_second_occurrence(check_text: Check) -> None:
    text = (
        "{\n"
        '  "version": 1,\n'
        '  "deployments": [{"name": "j",\n'
        '    "speculation": {"enabled": false, "draft_length": 3,\n'
        '                    "draft_length": 5}}]\n'
        "}\n"
    )
    report = check_text(text, "c.specgate.json")
    # the second "draft_length" opens at line 5 col 21; SG002 blocks SG204 (ρ missing)
    assert places(report) == [("SG002", 5, 21)]
    assert report.deployments[0].metrics.draft_length == 5  # the last value, as json.loads
    assert "first at line 4" in report.all_findings()[0].message


def test_json_duplicate_deployment_name_on_the_later_name(check_text: Check) -> None:
    text = '{"version": 1,\n "deployments": [{"name": "a"},\n                 {"name": "a"}]}\n'
    # line 3 '                 {"name": "a"}]}': "a" value at col 27
    assert places(check_text(text, "c.specgate.json")) == [("SG003", 3, 27)]


def test_json_unknown_key_at_the_key_and_missing_key_at_the_holder(check_text: Check) -> None:
    text = (
        '{"version": 1, "deployments": [\n'
        '  {"name": "j", "speculation": {"draft_length": 3}, "claim": {"speedup": 2}}\n'
        "]}\n"
    )
    # line 2: '"speculation"' key at col 17 (missing "enabled"); '"claim"' key at col 53
    assert places(check_text(text, "c.specgate.json")) == [("SG001", 2, 17), ("SG001", 2, 53)]


def test_a_bad_value_merged_from_an_anchor_points_at_the_anchor(check_text: Check) -> None:
    text = (
        "x-spec: &spec\n"
        "  enabled: yes\n"
        "  draft_length: 3\n"
        "version: 1\n"
        "deployments:\n"
        "  - name: a\n"
        "    speculation:\n"
        "      <<: *spec\n"
        "      draft_depth_ratio: 0.05\n"
    )
    # "  enabled: yes" on line 2: value at col 12
    assert places(check_text(text)) == [("SG001", 2, 12)]


def test_explicit_key_beside_a_merge_keeps_its_own_place(check_text: Check) -> None:
    text = (
        "x-spec: &spec {enabled: true, draft_length: 3}\n"
        "version: 1\n"
        "deployments:\n"
        "  - name: a\n"
        "    speculation:\n"
        "      <<: *spec\n"
        "      draft_length: 40\n"
        "      draft_depth_ratio: 0.01\n"
        "    model: {query_heads_per_kv: 4}\n"
        "    workload: {attention_dominated: true}\n"
        "    evidence: {accept_length: 3.1, cache_coherence_eval: true}\n"
    )
    # D 40 (explicit, wins over 3) > D* 31 at G 4, 4·41 = 164: SG201 at line 7 col 21;
    # docs/theory.md#attention-tiles adds SG206 (164 rows → 2 tiles) at the same D
    assert places(check_text(text)) == [("SG201", 7, 21), ("SG206", 7, 21)]


def test_flow_mapping_scalar_positions(check_text: Check) -> None:
    text = (
        "version: 1\n"
        "deployments:\n"
        "  - {name: f, speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0},"
        " evidence: {accept_length: 5, cache_coherence_eval: true}}\n"
    )
    # AL 5 > 1 + 3; on line 3: "  - {" 5 + "name: f, " 9 + "speculation: " 13
    # + "{enabled: true, " 16 + "draft_length: 3, " 17 + "draft_depth_ratio: 0}, " 23
    # + "evidence: " 10 + "{accept_length: " 16 = 109 characters before "5" → col 110
    assert text.splitlines()[2][109] == "5"
    assert places(check_text(text)) == [("SG103", 3, 110)]


def test_file_level_findings_stay_file_level(check_text: Check) -> None:
    report = check_text("version: 1\ndeployments: []\nextra: 1\n")
    # "deployments" key 2:1 (fewer than 1 item); unknown "extra" key 3:1
    assert [(f.code, f.line, f.column) for f in report.findings] == [
        ("SG001", 2, 1),
        ("SG001", 3, 1),
    ]
    assert report.deployments == ()
    assert report.status == "fail"
