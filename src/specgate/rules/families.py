"""The rule families a check runs: the catalogue (:mod:`specgate.rules.catalogue`)
imports every rule module; a check imports the ones a deployment can raise.

Importing this module registers the families every deployment needs. Two families
are silent without an input, every rule in them returning at once when it is missing,
so :func:`load_for` imports them only for a deployment that has it:

- :mod:`specgate.rules.baseline` (SG401–SG404, SG412) compares with the deployment at
  the base revision: ``--baseline`` and a deployment found there (or its read error);
  the run registers it itself for SG412, a file-level finding no deployment raises;
- :mod:`specgate.rules.provenance` (SG405–SG409, SG411) judges
  ``evidence.provenance``, and SG408 also the verification steps of referenced
  metrics (``inputs``).
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
    if deployment.evidence.provenance is not None or deployment.inputs is not None:
        from specgate.rules import provenance  # noqa: F401
