"""Catalogue entries for the rules the loader and schema raise (SG001–SG003).

They have no check function: the checker raises them while reading the file,
at the offending key or value.
"""

from __future__ import annotations

from specgate.rules.registry import Rule, register

SCHEMA_VIOLATION = register(
    Rule(
        code="SG001",
        name="schema-violation",
        severity="fail",
        summary="The claims file breaks the schema (one finding per violation, at its line).",
        raw_doc=(
            "**What it checks.** The claims file against the JSON Schema printed by "
            "`specgate schema`: required keys, types, ranges and enums; unknown keys (typos "
            "must not pass silently); finite numbers only (`.nan`, `.inf` are violations), "
            "each within its physical bounds (the schema's descriptions give them in their "
            "units: `workload.concurrency` at most 2^20, `hardware.memory_bandwidth_tbps` "
            "from 0.001 to 1,000, bytes per element from 1/16 to 8, ...); "
            "model shape consistency (H needs KV; a G that disagrees with H/KV); an empty "
            "document (at 1:1). Also a deployment whose numbers, each within bounds, still "
            "price a metric (β, S, the AL floor) as NaN or infinity: the finding sits on the "
            "deployment and names the metrics.\n\n"
            "**Why.** A gate that ignores a misspelt `draft_lenght` checks nothing while "
            "showing green, and one that compares with NaN passes everything (every "
            "comparison with NaN is false: a bandwidth of 1e-320 made β NaN and a 100x "
            "claim passed). Other rules do not run on a deployment with schema violations: "
            "fix the schema first.\n"
        ),
        raw_fail_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: true\n      draft_lenght: 3\n"
        ),
        raw_pass_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false\n      draft_length: 3\n"
        ),
    )
)

DUPLICATE_KEY = register(
    Rule(
        code="SG002",
        name="duplicate-key",
        severity="fail",
        summary="A mapping repeats a key.",
        raw_doc=(
            "**What it checks.** No mapping holds the same key twice. The finding sits on "
            "the second occurrence; like the engines, specgate reads the last value.\n\n"
            "**Why.** YAML parsers silently keep one of the two values (PyYAML the last), so "
            "a reviewer reads one number while the engine uses another.\n"
        ),
        raw_fail_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false\n      draft_length: 3\n      draft_length: 5\n"
        ),
        raw_pass_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false\n      draft_length: 3\n"
        ),
    )
)

DUPLICATE_DEPLOYMENT_NAME = register(
    Rule(
        code="SG003",
        name="duplicate-deployment-name",
        severity="fail",
        summary="Two deployments share a name.",
        raw_doc=(
            "**What it checks.** Deployment names are unique within a file; the finding "
            "sits on the later duplicate's name.\n\n"
            "**Why.** Reports, annotations and job summaries are keyed by name; two "
            "deployments with one name make findings ambiguous.\n"
        ),
        raw_fail_example=("version: 1\ndeployments:\n  - name: chat\n  - name: chat\n"),
        raw_pass_example=(
            "version: 1\ndeployments:\n  - name: chat\n  - name: chat-long-context\n"
        ),
    )
)

UNKNOWN_RULE_REFERENCE = register(
    Rule(
        code="SG004",
        name="unknown-rule-reference",
        severity="warn",
        summary="A suppression (inline or in the configuration) names no rule, or a rule "
        "that cannot be suppressed; a bare `# specgate: ignore` names none.",
        raw_doc=(
            "**What it checks.** Every code or name in `# specgate: ignore[...]` comments and "
            "in `[tool.specgate]` `per-file-ignores` names a rule of the catalogue; "
            "SG001–SG003 cannot be suppressed (an unknown rule in `select` or `ignore`, or "
            "an empty `select`, is an input error: it would switch the gate off). A bare "
            "`# specgate: ignore` (no `[SGnnn]`) suppresses nothing: blanket suppressions "
            "hide every future finding on the line, so each must name its rules.\n\n"
            "**Why.** A misspelt suppression suppresses nothing, and a suppressed schema "
            "rule would let a file the gate could not read pass.\n"
        ),
        raw_fail_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false  # specgate: ignore[SG999] not a rule\n"
        ),
        raw_pass_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false\n"
        ),
    )
)

UNUSED_SUPPRESSION = register(
    Rule(
        code="SG005",
        name="unused-suppression",
        severity="warn",
        summary="An inline `# specgate: ignore[...]` suppresses no finding.",
        raw_doc=(
            "**What it checks.** Each code in a `# specgate: ignore[SGnnn] -- reason` "
            "comment silences a finding of that rule on the line it covers (its own line, "
            "or the next line when the comment stands alone).\n\n"
            "**Why.** A suppression that no longer matches anything was left behind by a "
            "fix or a move; kept, it would silently hide the next finding that lands on "
            "that line. Suppressed findings stay in the JSON report (`\"suppressed\": "
            "true`), in SARIF (`suppressions`, with the reason as justification) and in "
            "the job summary, so every suppression can be audited.\n"
        ),
        raw_fail_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false  # specgate: ignore[SG104] -- claim checked by hand\n"
        ),
        raw_pass_example=(
            "version: 1\ndeployments:\n  - name: chat-8b\n    speculation:\n"
            "      enabled: false\n"
        ),
    )
)
