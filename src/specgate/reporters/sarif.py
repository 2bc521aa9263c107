"""The SARIF format: one SARIF 2.1.0 log for GitHub code scanning and other viewers.

Built as plain dicts (OASIS SARIF 2.1.0 errata 01; GitHub's ingestion rules in
``docs/code-security/reference/code-scanning/sarif-files/sarif-support.md``):

- ``tool.driver.rules`` holds every rule of the report's catalogue, sorted by code, so a
  result's ``ruleIndex`` is stable whichever rules fired;
- each result points at its file by a URI relative to the repository root
  (``uriBaseId: %SRCROOT%``), with a 1-based ``region``;
- ``partialFingerprints["specgateFindingHash/v1"]`` hashes what identifies a
  finding (rule, file, deployment, JSON path), never its line, so an alert
  survives unrelated edits above it; ``partialFingerprints["specgateIdentity/v1"]``
  hashes the finding's identity as ``--only-new`` compares it (rule, the deployment's
  name, the JSON path without the deployment's index, the key it is about: never a
  file, line or message), so it survives moving a deployment to another file;
- with ``--only-new``, ``baselineState`` is ``new``, ``unchanged`` or ``updated``
  (SARIF §3.27.24; ``absent`` results, findings only the base revision had, are not
  listed);
- a file that could not be read or parsed becomes an error notification in
  ``invocations[0].toolExecutionNotifications`` (no rule fired on it).

No I/O here: the caller passes each shown path's repository-relative path.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from specgate import __version__
from specgate.check.report import FileReport, RunReport
from specgate.core.findings import Finding
from specgate.core.project import repository_url
from specgate.reporters.safe_text import json_text
from specgate.reporters.tally import FindingKey, finding_key, owners

if TYPE_CHECKING:
    from specgate.check.catalogue import RuleEntry

SarifLevel = Literal["error", "warning", "note"]

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
TOOL_NAME = "specgate"
#: The uriBaseId of repository-relative URIs (the name GitHub and CodeQL use).
SRCROOT = "%SRCROOT%"
#: Key of our entry in ``result.partialFingerprints``.
FINGERPRINT_KEY = "specgateFindingHash/v1"
#: Key of the identity's hash in ``result.partialFingerprints`` (``--only-new``'s identity).
IDENTITY_KEY = "specgateIdentity/v1"
#: Id of the notification descriptor for files that could not be read or parsed.
INPUT_ERROR_ID = "input-error"
#: GitHub truncates shortDescription and fullDescription beyond this length.
DESCRIPTION_LIMIT = 1024

LEVEL: dict[str, SarifLevel] = {
    "fail": "error",
    "warn": "warning",
    "info": "note",
    "note": "note",
}

_DEPLOYMENT_INDEX = re.compile(r"^deployments\[\d+\]")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _plain(markdown: str) -> str:
    """Markdown prose as plain text: bold markers dropped, code spans kept as written."""
    return _BOLD.sub(r"\1", markdown)


def _first_paragraph(doc: str) -> str:
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def _limit(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


def _help_text(rule: RuleEntry) -> str:
    parts = [f"{rule.code} {rule.name} (severity: {rule.severity}). {rule.summary}"]
    if rule.doc.strip():
        parts.append(_plain(rule.doc.strip()))
    if rule.fail_example.strip():
        parts.append("Failing example:\n\n" + rule.fail_example.rstrip())
    if rule.pass_example.strip():
        parts.append("Passing example:\n\n" + rule.pass_example.rstrip())
    return "\n\n".join(parts) + "\n"


def rule_descriptor(rule: RuleEntry) -> dict[str, Any]:
    """A ``reportingDescriptor`` for ``rule`` (every field GitHub marks required).

    The rule's whole doc travels in ``help.text``/``help.markdown``; ``helpUri``
    is given only when this project's docs address is known (``rule.help_uri``).
    """
    full = _first_paragraph(rule.doc) or rule.summary
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _limit(rule.summary)},
        "fullDescription": {"text": _limit(_plain(full)), "markdown": _limit(full)},
        "help": {"text": _help_text(rule), "markdown": rule.markdown},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"severity": rule.severity},
    }
    if rule.help_uri is not None:
        descriptor["helpUri"] = rule.help_uri
    return descriptor


def artifact_uri(shown: str, repo_path: str | None) -> dict[str, str]:
    """The ``artifactLocation`` of a file.

    Repository-relative (``uriBaseId: %SRCROOT%``) when ``repo_path`` is known;
    otherwise the path as shown, as a relative URI reference (``/`` separators, no
    ``./``), or a ``file:`` URI when the shown path is absolute.
    """
    if repo_path is not None:
        # A repository path already uses "/"; a backslash there is part of a name
        # (legal on POSIX) and is percent-encoded, not read as a separator.
        return {"uri": _encode(repo_path.removeprefix("./")), "uriBaseId": SRCROOT}
    if PureWindowsPath(shown).drive:
        return {"uri": PureWindowsPath(shown).as_uri()}
    posix = _posix(shown)
    if posix.startswith("/"):
        return {"uri": PurePosixPath(posix).as_uri()}
    return {"uri": _encode(posix)}


def _posix(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    prefix = "/" if path.startswith(("/", "\\")) else ""
    return prefix + "/".join(parts)


def _encode(path: str) -> str:
    # Percent-encode everything but unreserved characters and "/" (RFC 3986 §2.3),
    # so a ":" in the first segment cannot read as a scheme.
    # Undecodable file names reach us as lone surrogates: their original bytes are
    # percent-encoded (any other lone surrogate as its escape text).
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/")


def _physical_location(
    location: dict[str, str], line: int | None, column: int | None
) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": line if line and line > 0 else 1}
    if line and line > 0 and column and column > 0:
        region["startColumn"] = column
    return {"physicalLocation": {"artifactLocation": location, "region": region}}


def identity_fingerprint(finding: Finding, deployment: str | None, file_uri: str) -> str:
    """The hash of ``finding``'s identity (:mod:`specgate.check.only_new`): its rule,
    its deployment's name as ``--baseline`` compares names (else, for a file-level
    finding or a name the file repeats, the claims file's URI and the JSON path with
    the index), the JSON path without the deployment's index and ``subject``."""
    from specgate.core.names import name_key

    if deployment is not None:
        owner, path = "deployment", name_key(deployment)
        field = _DEPLOYMENT_INDEX.sub("", finding.path, count=1).lstrip(".")
    else:
        owner, path, field = "file", file_uri, finding.path
    parts = (finding.code, owner, path, field, finding.subject or "")
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _fingerprint(parts: tuple[str, ...], occurrence: int) -> str:
    key = "\x1f".join((*parts, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _stable_path(path: str, deployment: str | None) -> str:
    """The JSON path with ``deployments[i]`` replaced by the deployment's name, so
    reordering or inserting deployments keeps fingerprints."""
    if deployment is None:
        return path
    # A function replacement: a name such as 'C:\\models\\x' must not be read as
    # a regular-expression template.
    return _DEPLOYMENT_INDEX.sub(lambda _m: f"deployments[name={deployment}]", path, count=1)


def _file_findings(file: FileReport) -> list[tuple[Finding, str | None]]:
    """Each finding of ``file`` with the name of its deployment when that name is
    unique in the file (else ``None``: the JSON path's index identifies it)."""
    names = Counter(d.name for d in file.deployments)
    found: list[tuple[Finding, str | None]] = [
        (f, None) for f in (*file.findings, *file.suppressed_findings)
    ]
    for deployment in file.deployments:
        name = deployment.name if names[deployment.name] == 1 else None
        found.extend((f, name) for f in (*deployment.findings, *deployment.suppressed_findings))
    return found


def _result(  # noqa: PLR0917 - one result's parts
    finding: Finding,
    location: dict[str, str],
    fingerprint: str,
    rule_index: Mapping[str, int],
    location_of: Callable[[str], dict[str, str]] | None = None,
    identity: str | None = None,
    belongs: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    result["level"] = LEVEL[finding.severity]
    message = finding.message.strip() or finding.name
    result["message"] = {"text": message}
    result["locations"] = [_physical_location(location, finding.line, finding.column)]
    if finding.related and location_of is not None:
        # SARIF §3.27.22: other places the result concerns (SG301: the served value)
        result["relatedLocations"] = [
            {"id": index, **_physical_location(location_of(other), line, column)}
            for index, (other, line, column) in enumerate(finding.related)
        ]
    result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint}
    if identity is not None:
        result["partialFingerprints"][IDENTITY_KEY] = identity
    if finding.baseline_state is not None:
        result["baselineState"] = finding.baseline_state
    if finding.suppressed is not None:
        # SARIF §3.35: an inline directive is "inSource", configuration "external";
        # the reason travels as the justification.
        kind = "inSource" if finding.suppressed.startswith("inline:") else "external"
        result["suppressions"] = [
            {"kind": kind, "status": "accepted", "justification": finding.suppressed}
        ]
    result["properties"] = {"severity": finding.severity, "path": finding.path}
    if finding.details:
        # the evidence beside the message (formulas, sources, version reasoning): a
        # property, plain text, never Markdown a viewer would render
        result["properties"]["details"] = finding.details
    if belongs:
        # a finding in a file outside its claims file (a model config two deployments
        # share): which deployments it belongs to, each with its claims file's
        # artifactLocation (docs/reports.md#deployments-that-share-a-file)
        result["properties"]["deployments"] = [
            {
                "claimsFile": location_of(path) if location_of else artifact_uri(path, None),
                "name": name,
            }
            for path, name in belongs
        ]
    return result


def _notification(file: FileReport, location: dict[str, str]) -> dict[str, Any]:
    return {
        "descriptor": {"id": INPUT_ERROR_ID, "index": 0},
        "level": "error",
        "message": {"text": (file.error or "").strip() or f"{file.path}: could not be read"},
        "locations": [_physical_location(location, file.error_line, file.error_column)],
    }


def _notification_descriptor() -> dict[str, Any]:
    full = (
        "The file is missing, not UTF-8, not valid YAML or JSON, or over the size or "
        "alias limit. No rule ran on it; specgate checked the other files and exits 2."
    )
    return {
        "id": INPUT_ERROR_ID,
        "shortDescription": {"text": "A claims file could not be read or parsed."},
        "fullDescription": {"text": full},
        "help": {"text": full + " Fix the file at the reported line, then run specgate again."},
        "defaultConfiguration": {"level": "error"},
    }


def build(
    run: RunReport, repo_paths: Mapping[str, str | None], docs_url: str | None = None
) -> dict[str, Any]:
    """The SARIF log of ``run`` as a dict.

    Args:
        run: the report.
        repo_paths: each shown file path (claims files and any file a finding names)
            → its path relative to the git top-level with ``/`` separators, or
            ``None`` for a file outside any repository (then the URI is the shown
            path, without ``uriBaseId``). Paths missing from the mapping count as
            outside any repository.
        docs_url: this project's ``docs/rules.md`` address, for ``helpUri`` (none
            when ``None``).
    """
    rules = run.rule_catalogue(docs_url)
    rule_index = {rule.code: i for i, rule in enumerate(rules)}

    def location_of(shown: str) -> dict[str, str]:
        return artifact_uri(shown, repo_paths.get(shown))

    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    seen: Counter[tuple[str, ...]] = Counter()
    # Deployments that share a referenced file raise the same finding at its line: one
    # result says it (as one text line and one annotation do), else code scanning would
    # open an alert per deployment at the same place.
    reported: set[tuple[FindingKey, str | None]] = set()
    belongs = owners(run)
    for file in run.files:
        if file.error is not None:
            notifications.append(_notification(file, location_of(file.error_location_file)))
            continue
        for finding, deployment in _file_findings(file):
            said = (finding_key(finding, file.path), finding.suppressed)
            if said in reported:
                continue
            reported.add(said)
            location = location_of(finding.file or file.path)
            identity = (
                finding.code,
                location.get("uriBaseId", ""),
                location["uri"],
                deployment or "",
                _stable_path(finding.path, deployment),
            )
            seen[identity] += 1
            fingerprint = _fingerprint(identity, seen[identity])
            claims_uri = location_of(file.path)["uri"]
            results.append(
                _result(
                    finding,
                    location,
                    fingerprint,
                    rule_index,
                    location_of,
                    identity_fingerprint(finding, deployment, claims_uri),
                    belongs.get(said),
                )
            )

    driver: dict[str, Any] = {
        "name": TOOL_NAME,
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [rule_descriptor(rule) for rule in rules],
    }
    # The project's own pages: its repository when the docs address names it or the
    # repository is published (core/project.py); no address that does not exist yet
    # (informationUri is optional in SARIF 2.1.0, §3.19.6).
    information = (
        docs_url.split("/blob/", 1)[0]
        if docs_url is not None and "/blob/" in docs_url
        else repository_url()
    )
    if information is not None:
        driver["informationUri"] = information
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications:
        driver["notifications"] = [_notification_descriptor()]
        invocation["toolExecutionNotifications"] = notifications
    sarif_run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": SARIF_VERSION, "runs": [sarif_run]}


def render(
    run: RunReport, repo_paths: Mapping[str, str | None], docs_url: str | None = None
) -> str:
    """The SARIF log of ``run`` as JSON text ending with a newline (see :func:`build`)."""
    text = json.dumps(build(run, repo_paths, docs_url), indent=2, ensure_ascii=False)
    return json_text(text) + "\n"
