"""The JSON format (DESIGN.md §4): a stable machine contract."""

from __future__ import annotations

import json

from specgate.check.report import RunReport, to_json
from specgate.reporters.safe_text import json_text


def render(run: RunReport) -> str:
    """The JSON report, pretty-printed, UTF-8 characters kept, ending with a newline."""
    return json_text(json.dumps(to_json(run), indent=2, ensure_ascii=False)) + "\n"
