"""TGI's launcher (clap) never takes a word starting with ``-`` as a flag's value
(docs/engines.md#flag-spellings).

huggingface/text-generation-inference launcher/src/main.rs@dfb3fbe78e0d1d69251bd33065591c61bafdfaa8
(v3.3.7, clap 4.5.32 in its Cargo.lock): ``struct Args`` sets neither ``allow_hyphen_values``
nor ``allow_negative_numbers`` on any field. clap (clap-rs/clap
clap_builder/src/parser/parser.rs@56fe5e0ec0f97a82651775252b4699e8442e81b1,
``Parser::is_new_arg``, ``parse_long_arg``, ``parse_short_arg``) reads such a word as a new
argument (``--`` as the end of options; ``-`` alone is a value), so the flag before it has
no value and the launcher refuses to start. specgate read ``--speculate -2`` as D -2 (SG315)
and ``--model-id --speculate 3`` as the model ``--speculate`` with no speculation configured
(SG312). Both are now SG307 at the flag's word: a warn, since the launcher was not run here.
``--speculate=3`` is read (clap's ``--long=value``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_exit2_degrade import _check

FIRST = (
    "    model: {name: org/m}\n"
    "    speculation: {enabled: true, mechanism: ngram, draft_length: 3,"
    " engine_config: tgi.sh}\n"
)
LAUNCH = "text-generation-launcher --model-id org/m "  # 42 characters


@pytest.mark.parametrize(
    ("command", "column", "followed_by"),
    [
        (LAUNCH + "--speculate -2\n", 43, "'-2'"),
        (LAUNCH + "--speculate --num-shard 2\n", 43, "'--num-shard'"),
        (LAUNCH + "--speculate --\n", 43, "'--'"),
        # "text-generation-launcher " is 25 characters
        ("text-generation-launcher --model-id --speculate 3\n", 26, "'--speculate'"),
    ],
)
def test_a_hyphen_word_is_no_value(
    tmp_path: Path, command: str, column: int, followed_by: str
) -> None:
    report = _check(tmp_path, FIRST, {"tgi.sh": command})
    findings = report.deployments[0].findings
    assert not [f for f in findings if f.code in ("SG312", "SG315")]
    (refused,) = [f for f in findings if f.code == "SG307"]
    assert (refused.severity, refused.file, refused.line, refused.column) == (
        "warn", "tgi.sh", 1, column
    )
    assert f"followed by {followed_by}, which its parser (clap)" in refused.message


def test_equals_form_is_read(tmp_path: Path) -> None:
    # the claims file says D 4; --speculate=3 is read as D 3 (a mismatch, SG301)
    first = FIRST.replace("draft_length: 3", "draft_length: 4")
    report = _check(tmp_path, first, {"tgi.sh": LAUNCH + "--speculate=3\n"})
    findings = report.deployments[0].findings
    assert not [f for f in findings if f.code in ("SG307", "SG312")]
    (mismatch,) = [f for f in findings if f.code == "SG301"]
    assert "says 4" in mismatch.message and "3" in mismatch.message


def test_a_flag_given_twice_is_refused(tmp_path: Path) -> None:
    # clap's Parser::react (clap_builder/src/parser/parser.rs@56fe5e0e): ArgAction::Set on an
    # argument already matched, without args_override_self (main.rs@dfb3fbe7 sets none), is
    # "the argument '--speculate <SPECULATE>' cannot be used multiple times". specgate read
    # the last (D 3); now SG307 at the second --speculate (42 + 14 characters before it)
    report = _check(tmp_path, FIRST, {"tgi.sh": LAUNCH + "--speculate 2 --speculate 3\n"})
    (refused,) = [f for f in report.deployments[0].findings if f.code == "SG307"]
    assert (refused.severity, refused.line, refused.column) == ("warn", 1, 57)
    assert "cannot be used multiple times" in refused.message
