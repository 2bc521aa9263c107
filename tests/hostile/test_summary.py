"""The job summary: inert Markdown, failures first with links, budget under concurrency."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from specgate.reporters.summary import SUMMARY_LIMIT_BYTES, link_base, md

from .conftest import BASE, InProcess

FAILING = BASE.replace("accept_length: 2.4", "accept_length: 1.2")
SHA = "0123456789abcdef0123456789abcdef01234567"
LINKS = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": SHA}


SYNTAX = "[]!`*_|#$~"


def _only_escaped(shown: str) -> bool:
    """Every Markdown syntax character in ``shown`` is backslash-escaped, and no HTML."""
    for index, char in enumerate(shown):
        if char in SYNTAX:
            backslashes = len(shown[:index]) - len(shown[:index].rstrip("\\"))
            if backslashes % 2 == 0:
                return False
    return "<" not in shown and ">" not in shown


@pytest.mark.parametrize(
    "text",
    [
        "[Approve this PR](https://evil.example/phish)",
        "![t](https://evil.example/pixel.png)",
        "**bold** __b__ *i* _i_ ~~s~~",
        "`code` ```fence```",
        "a | b | c",
        "<img src=x onerror=alert(1)>",
        "<details><summary>x</summary>",
        "$\\color{red}{PASS}$",
        "[ref]: https://evil.example",
        "# heading",
        "\\[escaped\\](x)",
    ],
)
def test_md_neutralises_markdown(text: str) -> None:
    shown = md(text)
    assert _only_escaped(shown), shown
    assert "\n" not in shown


@pytest.mark.parametrize(
    "url", ["https://evil.example/x", "http://evil.example", "www.evil.example", "me@evil.example"]
)
def test_md_breaks_autolinks(url: str) -> None:
    # GitHub links bare URLs, www. names and e-mail addresses in text; a zero-width space
    # after the scheme separator, "www" and "@" stops it.
    shown = md(f"see {url} now")
    assert url not in shown
    assert "\u200b" in shown


def test_md_escapes_control_characters() -> None:
    assert md("a\nb\r\x1b[2J") == "a\\\\nb\\\\r\\\\x1b\\[2J"


@pytest.mark.parametrize(
    ("server", "repository", "sha", "expected"),
    [
        ("https://github.com", "o/r", SHA, f"https://github.com/o/r/blob/{SHA}/"),
        ("https://ghe.example/", "o/r", SHA[:7], f"https://ghe.example/o/r/blob/{SHA[:7]}/"),
        (None, "o/r", SHA, None),
        ("javascript:alert(1)", "o/r", SHA, None),
        ("https://github.com", "o/r)[x](y", SHA, None),
        ("https://github.com", "o/r", "main", None),
    ],
)
def test_link_base(server: str | None, repository: str, sha: str, expected: str | None) -> None:
    assert link_base(server, repository, sha) == expected


def _summary(sg: InProcess, repo: Path, args: list[str], env: dict[str, str] | None = None) -> str:
    path = repo / "summary.md"
    path.unlink(missing_ok=True)
    sg(["check", "--summary", str(path), *args], repo, env=env)
    return path.read_text("utf-8")


def test_failures_first_with_links_and_passing_folded(sg: InProcess, repo: Path) -> None:
    (repo / "deploy").mkdir()
    (repo / "deploy" / "bad.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / "ok.specgate.yaml").write_text(BASE.replace("name: dep", "name: fine"), "utf-8")
    text = _summary(sg, repo, ["."], LINKS)
    lines = text.splitlines()
    assert lines[0] == "## ❌ specgate: fail"
    findings = lines.index("### Findings")
    first_row = lines[findings + 4]
    assert "SG102" in first_row
    link = f"[deploy/bad.specgate.yaml:10](https://github.com/o/r/blob/{SHA}/deploy/bad.specgate.yaml#L10)"
    assert link in first_row
    # the failing deployment is shown open, the passing one folded (Contract change, issue
    # 26: a finding's cell folds its own details inline, so the fold is the <details> line)
    assert text.index("#### ❌ dep") < text.index("\n<details>\n") < text.index("#### ✅ fine")
    assert text.index("#### ✅ fine") < text.index("\n</details>\n")
    assert "—" not in text  # no rows of unknown values


def test_no_links_without_the_github_context(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    text = _summary(sg, repo, ["c.specgate.yaml"])
    assert "](" not in text.replace("](https://", "X") or "blob/" not in text
    assert "c.specgate.yaml:10" in text


@pytest.mark.parametrize("attention", [True, False])
def test_tile_rows_only_where_the_tile_rule_applies(
    sg: InProcess, repo: Path, attention: bool
) -> None:
    text = FAILING.replace(
        "  - name: dep\n", "  - name: dep\n    model: {query_heads: 64, kv_heads: 8}\n"
    ).replace(
        "    evidence:",
        f"    workload: {{attention_dominated: {str(attention).lower()}}}\n    evidence:",
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    summary = _summary(sg, repo, ["c.specgate.yaml"])
    assert ("| tile aligned |" in summary) is attention
    assert ("| attention-optimal D* | 15 |" in summary) is attention  # floor(128/8) - 1


def test_hostile_deployment_name_is_inert(sg: InProcess, repo: Path) -> None:
    name = "[Approve this PR](https://evil.example/phish) ![t](https://evil.example/p.png) | x"
    (repo / "c.specgate.yaml").write_text(FAILING.replace("name: dep", f'name: "{name}"'), "utf-8")
    text = _summary(sg, repo, ["c.specgate.yaml"], LINKS)
    assert "evil.example" in text  # shown as text …
    assert "](https://evil" not in text and "![" not in text  # … never as a link or image
    assert "https://evil" not in text


def test_suppressed_findings_are_listed_with_their_reason(sg: InProcess, repo: Path) -> None:
    text = FAILING.replace(
        "      accept_length: 1.2\n",
        "      accept_length: 1.2  # specgate: ignore[SG102] -- collapsed drafter, tracked in"
        " #12\n",
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    summary = _summary(sg, repo, ["c.specgate.yaml"])
    assert "### Suppressed findings" in summary
    assert "inline: collapsed drafter, tracked in \\#12" in summary
    assert "1 suppressed" in summary


def test_budget_is_held_when_steps_append_at_once(repo: Path) -> None:
    deployments = "".join(
        f"  - name: d{i}\n    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3,"
        " draft_depth_ratio: 0.05}\n    evidence: {accept_length: 1.5}\n    claims: {speedup: 9}\n"
        for i in range(25)
    )
    (repo / "big.specgate.yaml").write_text("version: 1\ndeployments:\n" + deployments, "utf-8")
    summary = repo / "sum.md"
    summary.write_bytes(b"y" * (SUMMARY_LIMIT_BYTES - 200_000))
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "specgate", "check", "--format", "github", "big.specgate.yaml"],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(8)
    ]
    assert [child.wait(timeout=120) for child in children] == [1] * 8
    size = summary.stat().st_size
    assert SUMMARY_LIMIT_BYTES - 200_000 < size <= SUMMARY_LIMIT_BYTES
    text = summary.read_bytes().decode("utf-8")
    assert text.count("## ❌ specgate: fail") >= 2  # several appended, each within budget
    assert "more line(s) left out" in text
