"""``specgate rules``: the catalogue as text, JSON or Markdown, from the registry."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from specgate.core.errors import UsageError
from specgate.rules.catalogue import REGISTRY, lookup
from specgate.rules.registry import Rule

#: Where the rule docs live inside this repository (and inside the Action's checkout).
DOCS_PATH = "docs/rules.md"


def anchor(rule: Rule) -> str:
    """The rule's anchor in docs/rules.md, e.g. ``sg104-claimed-speedup-over-theory``."""
    return f"{rule.code.lower()}-{rule.name}"


def docs_base_url(
    configured: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The address of this project's ``docs/rules.md``, or ``None`` when unknown.

    ``--docs-url`` or ``[tool.specgate] docs-url`` when set; else, inside the GitHub
    Action, the Action's own copy: ``$GITHUB_SERVER_URL/<repository>/blob/<ref>/
    docs/rules.md``, the repository and ref being ``$SPECGATE_ACTION_REPOSITORY`` and
    ``$SPECGATE_ACTION_REF`` (action.yml sets them from ``github.action_repository`` and
    ``github.action_ref`` in the step's ``env``: in a composite action's ``run`` the
    runner leaves ``$GITHUB_ACTION_REPOSITORY`` and ``$GITHUB_ACTION_REF`` empty, and
    GitHub's contexts reference says to read them through ``env``; actions/runner#2473),
    else ``$GITHUB_ACTION_REPOSITORY`` and ``$GITHUB_ACTION_REF`` (a JavaScript or
    container action step). Never a guessed site: the name ``specgate`` belongs to other
    projects elsewhere (docs/trust.md#hostile-repositories).
    """
    if configured:
        return configured
    env = os.environ if environ is None else environ
    server = env.get("GITHUB_SERVER_URL", "").rstrip("/")
    repository = env.get("SPECGATE_ACTION_REPOSITORY") or env.get("GITHUB_ACTION_REPOSITORY", "")
    ref = env.get("SPECGATE_ACTION_REF") or env.get("GITHUB_ACTION_REF", "")
    safe = re.compile(r"^[A-Za-z0-9._/-]+$")
    if server.startswith("https://") and safe.fullmatch(repository) and safe.fullmatch(ref):
        return f"{server}/{repository}/blob/{ref}/{DOCS_PATH}"
    return None


def help_uri(rule: Rule, base: str | None) -> str | None:
    """The rule's documentation address under ``base`` (see :func:`docs_base_url`)."""
    if base is None:
        return None
    return f"{base}#{anchor(rule)}"


def rule_json(rule: Rule) -> dict[str, Any]:
    """A rule as JSON (``specgate rules --format json``)."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "summary": rule.summary,
        "doc": rule.doc,
        "fail_example": rule.fail_example,
        "pass_example": rule.pass_example,
        "help_uri": help_uri(rule, docs_base_url()),
    }


def render_rules(fmt: str = "text") -> str:
    """The catalogue: one line per rule, a JSON list, or the Markdown of docs/rules.md."""
    rules = sorted(REGISTRY.values(), key=lambda r: r.code)
    if fmt == "json":
        return json.dumps([rule_json(r) for r in rules], indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_catalogue_markdown()
    width = max(len(r.name) for r in rules)
    lines = [f"{r.code}  {r.severity:<4}  {r.name:<{width}}  {r.summary}" for r in rules]
    lines.append("")
    lines.append("`specgate rules CODE` prints a rule's doc with failing and passing examples.")
    return "\n".join(lines) + "\n"


EXAMPLE_CLAIMS_NAME = "specgate.yaml"
_FILE_MARKER = re.compile(r"^# === (\S+) ===$")
BASE_PREFIX = "base:"
"""An example file named ``base:PATH`` is PATH as committed at the base revision
(``check --baseline``); the other files are the work tree."""


def split_example(text: str) -> list[tuple[str, str]]:
    """An example's files: the claims file (``specgate.yaml``) first, then each file
    introduced by a ``# === relative/path ===`` line (referenced serving, model or
    metrics files)."""
    files: list[tuple[str, list[str]]] = [(EXAMPLE_CLAIMS_NAME, [])]
    for line in text.splitlines():
        marker = _FILE_MARKER.match(line)
        if marker:
            files.append((marker.group(1), []))
        else:
            files[-1][1].append(line)
    return [(name, "\n".join(lines).strip("\n") + "\n") for name, lines in files]


def _example_markdown(text: str) -> str:
    parts = []
    for name, content in split_example(text):
        language = "json" if name.endswith(".json") else "yaml"
        label = f"`{name}`"
        if name.startswith(BASE_PREFIX):
            label = f"`{name[len(BASE_PREFIX) :]}` at the base revision (`--baseline REF`)"
        parts.append(f"{label}:\n\n```{language}\n{content}```\n")
    return "\n".join(parts)


def rule_markdown(rule: Rule, heading: str = "###") -> str:
    """One rule's full doc as Markdown."""
    return (
        f"{heading} {rule.code} {rule.name}\n\n"
        f"Severity: `{rule.severity}`. {rule.summary}\n\n"
        f"{rule.doc}\n"
        f"Failing example:\n\n{_example_markdown(rule.fail_example)}\n"
        f"Passing example:\n\n{_example_markdown(rule.pass_example)}"
    )


def render_rule(key: str, fmt: str = "text") -> str:
    """One rule's doc.

    Raises:
        UsageError: no rule has that code or name.
    """
    rule = lookup(key)
    if rule is None:
        raise UsageError(f"specgate rules: no rule {key!r} (run `specgate rules` for the list)")
    if fmt == "json":
        return json.dumps(rule_json(rule), indent=2, ensure_ascii=False) + "\n"
    return rule_markdown(rule, heading="#")


def render_catalogue_markdown() -> str:
    """docs/rules.md: an index table, then every rule's doc with its examples.

    Generated by ``specgate rules --format markdown > docs/rules.md``; a test
    fails when the committed file is stale.
    """
    rules = sorted(REGISTRY.values(), key=lambda r: r.code)
    lines = [
        "# specgate rules",
        "",
        "<!-- Generated by `specgate rules --format markdown`; do not edit by hand. -->",
        "",
        "Severities: `fail` fails the run; `warn` and `info` make a deployment actionable; "
        "a `note` is an info that never changes the status. Suppress a rule with "
        "`# specgate: ignore[CODE] reason` on the finding's line or the line above (YAML), or "
        "with `ignore` / `per-file-ignores` in `[tool.specgate]`.",
        "",
        "With `specgate check --baseline REF --only-new` every finding is marked `new`, "
        "`unchanged` or `updated` against the findings these rules make at REF, and an "
        "unchanged one changes no status: a finding is the same when its rule, its "
        "deployment (paired as `--baseline` pairs them, renames included) and the key it "
        "is about are; it is `updated` when its severity rose, or when SG102 (floor / AL), "
        "SG104 (claim / bound) or SG107 (claim / measured speedup) is further past its "
        "bound than at REF. SG401–SG404, SG410 and SG412 compare with REF themselves and "
        "are always new "
        "(README, \"Only new findings\").",
        "",
        "| code | name | severity | summary |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| [{r.code}](#{anchor(r)}) | {r.name} | {r.severity} | {r.summary} |" for r in rules
    ]
    out = "\n".join(lines) + "\n"
    for rule in rules:
        out += "\n" + rule_markdown(rule)
    return out
