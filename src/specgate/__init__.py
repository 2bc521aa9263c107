"""specgate: keep speculative-decoding claims honest in CI.

The package reads a claims file (accept length AL, draft length D, draft depth
ratio ρ, query heads per KV head G, claimed speedup), checks it against the
theory of speculative decoding and reports findings with file and line.
"""

from __future__ import annotations

__version__ = "0.1.0"
SCHEMA_VERSION = 1

__all__ = ["SCHEMA_VERSION", "__version__"]
