"""The rule catalogue: small pure functions over a typed deployment.

Importing this package registers every rule (DESIGN.md §3 and §7); the
registry feeds ``specgate rules``, the docs, SARIF descriptors and the tests.
"""

from __future__ import annotations

from specgate.rules import accept_length as accept_length  # registers SG101-SG105
from specgate.rules import baseline as baseline  # registers SG401-SG403
from specgate.rules import draft_length as draft_length  # registers SG201-SG206
from specgate.rules import economics as economics  # registers SG106-SG111, SG207
from specgate.rules import provenance as provenance  # registers SG405-SG409
from specgate.rules import references as references  # registers SG301-SG311
from specgate.rules import schema as schema  # registers SG001-SG003
from specgate.rules.registry import REGISTRY, Hit, Rule, RuleContext, lookup

__all__ = ["REGISTRY", "Hit", "Rule", "RuleContext", "lookup"]
