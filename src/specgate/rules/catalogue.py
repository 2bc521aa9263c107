"""The rule catalogue: importing this module registers every rule (docs/rules.md and
docs/claims-file.md#referenced-files).

The registry feeds ``specgate rules``, the docs, the SARIF descriptors (through the
report's catalogue snapshot) and the tests. Rules are small pure functions over a
typed deployment, one module per family.
"""

from specgate.rules import (
    accept_length,  # registers SG101-SG103, SG105
    baseline,  # registers SG401-SG403
    draft_length,  # registers SG201-SG206
    economics,  # registers SG106-SG111
    engine_issues,  # registers SG304, SG307, SG310, SG311, SG312
    estimate_risk,  # registers SG112, SG207
    measurement,  # registers SG316
    provenance,  # registers SG405-SG409
    references,  # registers SG301-SG303, SG305, SG306, SG308, SG309
    schema,  # registers SG001-SG003
    speedup_claim,  # registers SG104
    value_origin,  # registers SG313, SG314, SG315
)
from specgate.rules.registry import REGISTRY, lookup

__all__ = [
    "REGISTRY",
    "accept_length",
    "baseline",
    "draft_length",
    "economics",
    "engine_issues",
    "estimate_risk",
    "lookup",
    "measurement",
    "provenance",
    "references",
    "schema",
    "speedup_claim",
    "value_origin",
]
