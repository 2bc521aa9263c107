"""defuse(): the one rule that keeps ``##[`` (the runner's legacy command prefix, found
anywhere in a line by actions/runner ``ActionCommand.TryParse``) off every channel."""

from __future__ import annotations

import json

import yaml
from hypothesis import given
from hypothesis import strategies as st

from specgate.core.workflow_text import defuse
from support.runner_parser import REGISTERED_COMMANDS, parse_legacy_line


def test_hand_worked_values() -> None:
    assert defuse("deployment d ##[error]INJECTED") == "deployment d ##\\[error]INJECTED"
    assert defuse("###[a]") == "###\\[a]"  # the ``##[`` starting at index 1
    assert defuse("##[##[") == "##\\[##\\["
    assert defuse("# [ ## [") == "# [ ## ["  # nothing to do
    assert defuse('"##[x"', "\\u005b") == '"##\\u005bx"'


@given(st.text(alphabet="#[]x :;", max_size=40))
def test_no_legacy_prefix_survives(text: str) -> None:
    shown = defuse(text)
    assert "##[" not in shown
    assert parse_legacy_line(shown, REGISTERED_COMMANDS) is None


@given(st.text(max_size=30))
def test_json_and_yaml_escapes_read_back_as_the_text(text: str) -> None:
    # In a JSON string ``\u005b`` is ``[``; in a YAML double-quoted scalar ``\x5b`` is.
    assert json.loads(defuse(json.dumps(text), "\\u005b")) == text
    from specgate.measure.evidence import render

    assert yaml.safe_load(render({"dataset": "##[" + text}))["evidence"]["dataset"] == "##[" + text
    assert "##[" not in render({"dataset": "##[" + text})
