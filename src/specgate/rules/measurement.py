"""SG316: a metrics file that parses but holds a value that cannot be used as a
measurement (docs/engines.md#metrics-not-read). The finding sits at the value's line
in the metrics file; the deployment is judged without that measurement."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.core.findings import Severity
from specgate.load.document import Span
from specgate.rules.registry import Hit, RuleContext, rule


@rule(
    "SG316",
    "metrics-unusable",
    "fail",
    "The metrics file parses, but a value in it cannot be used as a measurement (a value "
    "its format forbids fails, a form specgate does not read warns); no AL is taken from it.",
    fail_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
              metrics:
                format: vllm-prometheus
                path: bench/metrics.txt
        # === bench/metrics.txt ===
        # TYPE vllm:spec_decode_num_drafts_total counter
        vllm:spec_decode_num_drafts_total{model_name="m"} 400
        # TYPE vllm:spec_decode_num_accepted_tokens_total counter
        vllm:spec_decode_num_accepted_tokens_total{model_name="m"} -440
    """,
    pass_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
              metrics:
                format: vllm-prometheus
                path: bench/metrics.txt
        # === bench/metrics.txt ===
        # TYPE vllm:spec_decode_num_drafts_total counter
        vllm:spec_decode_num_drafts_total{model_name="m"} 400
        # TYPE vllm:spec_decode_num_accepted_tokens_total counter
        vllm:spec_decode_num_accepted_tokens_total{model_name="m"} 440
    """,
)
def metrics_unusable(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The metrics file `evidence.metrics` points at parses as its
    format, and every value the AL is computed from can be used as a measurement.
    Where one cannot, this finding names it at its line in the metrics file, and
    the deployment is judged without that measurement, as when none is given (an
    `evidence.accept_length` the claims file states is judged alone; with none,
    SG101). Every other deployment and file is still checked. It fails where the
    file holds a value its format forbids: a Prometheus counter that is negative,
    fractional, NaN or infinite, a count that is not a number, accepted tokens
    beyond the drafted ones. It warns where the file holds its measurement in a
    form specgate does not read: no speculative counters or lines found, per-request
    records that give `mean_acceptance_length` without `num_spec_steps` (so they
    cannot be pooled), a log of several configurations, a counter reset between
    two scrapes, a counter in the after scrape missing from the before one (no
    window for it), zero drafts measured. Inline metrics the claims file states that
    give no measurement (a histogram of zero steps, `iid-rate` with no D stated
    anywhere) fail at their line in the claims file. A metrics file that cannot be
    parsed at all as its format (not JSON, not Prometheus text exposition) stays an
    input error of the run (exit 2), as does a path that leaves the repository.

    **Why.** One unusable value in one evidence file used to stop the whole run
    (exit 2), so every other deployment went unchecked. A value the format
    forbids is the repository's own statement and cannot come from the engine, so
    it fails as a schema violation of the claims file does (SG001); a form
    specgate does not read is no fault of the file, so it warns
    (docs/engines.md#metrics-not-read).
    """
    inputs = ctx.deployment.inputs
    unusable = inputs.metrics_unread if inputs is not None else None
    if inputs is None or unusable is None:
        return
    span = Span(unusable.line, unusable.column or 1) if unusable.line is not None else None
    severity: Severity = "warn" if unusable.severity == "warn" else "fail"
    yield Hit(
        f"{unusable.reason}; no AL is taken from "
        + ("evidence.metrics" if unusable.file == inputs.claims_file else unusable.file),
        ctx.deployment.path("evidence", "metrics"),
        "Point evidence.metrics at the engine's own output for the run (docs/engines.md"
        "#metrics-formats)"
        + (
            ", or remove it: the stated evidence.accept_length is judged alone."
            if ctx.deployment.evidence.accept_length is not None
            else ", or record evidence.accept_length."
        ),
        where=(unusable.file, span),
        severity=severity,
        subject="metrics",
        details="docs/engines.md#metrics-not-read",
    )
