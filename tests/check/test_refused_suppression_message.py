"""A message lengthened after make_finding (a refused suppression, check/run.py) keeps
to the 200-character limit: the guard (core/concise.py) runs again there."""

from __future__ import annotations

from specgate.check.evaluate import make_finding
from specgate.check.report import FileReport
from specgate.check.run import _explain_refused
from specgate.core.findings import MESSAGE_LIMIT
from specgate.load.document import Span


def test_refused_suppression_keeps_the_message_limit() -> None:
    base = "claimed 2.9x exceeds the ceiling AL / β = 2.2 / 1 = 2.2x, true at any draft cost"
    message = base + " (ρ not stated or measured)" + "; x" * 20
    assert 150 < len(message) <= MESSAGE_LIMIT  # within the limit before it is lengthened
    finding = make_finding("SG104", message, (), ("c.yaml", Span(3, 1)))
    report = FileReport("c.yaml", "fail", None, (finding,), ())
    why = "an inline suppression the base revision did not have"
    (told,) = _explain_refused(report, {("SG104", 3): why}, "c.yaml").findings
    assert len(told.message) <= MESSAGE_LIMIT
    # nothing dropped: message and details hold every word written
    assert "not suppressed: " + why in told.details
    assert told.message.startswith(base)
