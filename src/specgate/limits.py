"""Bounds on the work one claims file can ask for (DESIGN.md §11, "bounded work").

No loop or allocation may grow with a number read from the checked repository.
The claims-file schema enforces these maxima (SG001 at the value); values read
from referenced files (a serving config's D, a model config's heads) are held to
the same bounds by the resolver, as input errors at their line.

- ``MAX_DRAFT_LENGTH`` = 1,024: D (draft tokens per verification step). Published
  engines use D ≤ 64 (EAGLE trees verify at most a few hundred tokens); 1,024
  leaves room without letting a 300-byte file ask for 300,000,000 positions.
- ``MAX_HEADS`` = 65,536: query heads H and KV heads.
- ``MAX_COUNT`` = 2**53: any other whole number read from a referenced file
  (vocabulary size, context length, layer counts): the largest integer a float
  holds exactly, so no arithmetic on it overflows or rounds.
- ``MAX_PROFILE_ENTRIES`` = 1,024: entries of an inline acceptance profile
  (``marginal``/``conditional``) and accepted-draft counts in a histogram.
"""

from __future__ import annotations

MAX_DRAFT_LENGTH = 1024
MAX_HEADS = 65536
MAX_PROFILE_ENTRIES = 1024
MAX_COUNT = 2**53
