"""An AL that is only an estimate says so wherever it is shown
(docs/trust.md#names-say-how-a-number-is-known).

The JSON report marks such an AL ``inputs.acceptance.estimate`` (llama.cpp timings, a
per-request mean over ranks, a D that is only a maximum, an i.i.d. model …). The same
words go into every finding message that states that AL — so the text output, the job
summary, SARIF and the annotations say it too — and beside the number in the text and
summary metrics.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from specgate.core.numbers import fmt

if TYPE_CHECKING:
    from specgate.inputs.types import Acceptance
    from specgate.model.deployment import Deployment

#: Compiled on first use (``re``'s cache): most checks label no estimate.
_AL_VALUE = r"\bAL (\d+(?:\.\d+)?)(?![\d.])"


def estimate_label(acceptance: Acceptance) -> str:
    """`` (an estimate from FORMAT data)``."""
    return f" (an estimate from {acceptance.format} data)"


def labelled(message: str, deployment: Deployment, accept_length: float | None) -> str:
    """``message`` with the estimate label after its first ``AL <value>`` that states the
    deployment's AL, when that AL is an estimate and the message does not say so already.

    Example: ``"AL 2.6 is below the floor 2.7"`` → ``"AL 2.6 (an estimate from
    llamacpp-timings data) is below the floor 2.7"``.
    """
    acceptance = deployment.accept_length_estimate
    if acceptance is None or accept_length is None or "estimate" in message:
        return message
    shown = fmt(accept_length)
    for match in re.finditer(_AL_VALUE, message):
        if match.group(1) == shown:
            end = match.end()
            return message[:end] + estimate_label(acceptance) + message[end:]
    return message

