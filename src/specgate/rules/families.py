"""The rule families a check runs: the catalogue (:mod:`specgate.rules.catalogue`)
imports every rule module; a check imports the ones a deployment can raise.

Importing this module registers the families every deployment needs. Four families
are silent without an input, every rule in them returning at once when it is missing,
so :func:`load_for` imports them only for a deployment that has it:

- :mod:`specgate.rules.baseline` (SG401–SG404, SG412) compares with the deployment at
  the base revision: ``--baseline`` and a deployment found there (or its read error);
  the run registers it itself for SG412, a file-level finding no deployment raises;
- :mod:`specgate.rules.provenance` (SG405–SG409, SG411) judges
  ``evidence.provenance``, and SG408 also the verification steps of referenced
  metrics (``inputs``);
- :mod:`specgate.rules.value_origin` (SG313-SG315) judges a serving config value
  the launcher reader could not settle (``inputs.engine_unread`` with an origin);
- :mod:`specgate.rules.measurement` (SG316) judges a metrics file's value that cannot
  be used as a measurement (``inputs.metrics_unread``).
"""

from specgate.rules import (  # noqa: F401 - imported to register their rules
    accept_length,
    draft_length,
    economics,
    engine_issues,
    estimate_risk,
    references,
    schema,
    speedup_claim,
)
from specgate.rules.registry import RuleContext


def load_for(ctx: RuleContext) -> None:
    """Register the families ``ctx`` may raise findings of beyond those every
    deployment needs (a module imported once stays registered)."""
    if ctx.baseline is not None:
        from specgate.rules import baseline  # noqa: F401
    deployment = ctx.deployment
    inputs = deployment.inputs
    if deployment.evidence.provenance is not None or inputs is not None:
        from specgate.rules import provenance  # noqa: F401
    unread = inputs.engine_unread if inputs is not None else None
    model_unread = inputs.model_unread if inputs is not None else None
    if (unread is not None and unread.origin != "form") or model_unread is not None:
        from specgate.rules import value_origin  # noqa: F401
    if inputs is not None and inputs.metrics_unread is not None:
        from specgate.rules import measurement  # noqa: F401
