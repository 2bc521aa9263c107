"""Bounds on the work one claims file can ask for (docs/trust.md#bounded-work, "bounded work").

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
- ``MAX_INTEGER_DIGITS`` = 4,300: decimal digits of any integer literal (YAML
  decimal, ``0x`` or ``0o``; JSON; command-line values). Python's own bound on
  int/str conversion (``sys.get_int_max_str_digits``); checked on the literal's
  digits before any conversion, so a 3,600-digit hex literal (4,335 decimal
  digits) is refused at its line instead of failing later when printed.
- ``MAX_PROFILE_ENTRIES`` = 1,024: entries of an inline acceptance profile
  (``marginal``/``conditional``) and accepted-draft counts in a histogram.
- Work per *file*, not per scalar (:class:`FileBudget`): the characters shell-variable
  expansion may add over every command string of one serving config together (its
  length plus 64 KiB), and the YAML nodes built for it and every document embedded in
  its strings together (100,000), so a 1 MB Compose file of many small commands or
  embedded documents costs what one of that size does.
- ``MAX_NESTING`` = 100: levels of mappings and lists in any document specgate reads
  (claims files, serving and model configs, metrics records, JSON or YAML embedded
  in a string). Real configurations nest fewer than 20; the bound keeps every walker
  over a document far from Python's recursion limit, so a deep file is an input error
  at the line where it gets too deep, whichever code reads it (the check, the
  ``--changed`` lookup, the base revision of ``--baseline``).
- Physical bounds (:data:`PHYSICAL_BOUNDS`): every number of the claims file that the
  theory multiplies or divides by has a floor and a ceiling in its unit, far outside
  any hardware or model that exists and inside the range where the formulas stay
  finite (a rate of 1e-320 TB/s or a concurrency of 1e300 made β NaN, and every
  comparison with NaN is false: hostile review defect 1). The schema holds the same
  numbers (tests/hostile/test_physical_bounds.py compares them); ``doctor``'s flags
  of the same names refuse what the schema refuses.
"""

from __future__ import annotations

from functools import cache

MAX_DRAFT_LENGTH = 1024
MAX_HEADS = 65536
MAX_PROFILE_ENTRIES = 1024
MAX_COUNT = 2**53
MAX_INTEGER_DIGITS = 4300
MAX_NESTING = 100

#: B, sequences decoding at once (workload.concurrency, provenance.concurrency): 2^20.
MAX_CONCURRENCY = 2**20
#: C, prefill tokens sharing one decode step: 2^24 tokens.
MAX_PREFILL_TOKENS = 2**24
#: c̄, mean tokens in a sequence's KV cache: 2^30 tokens.
MAX_CONTEXT_TOKENS = 2**30

#: (minimum, maximum), both included, of each claims-file number by its key, in the
#: key's unit (the schema's descriptions name them).
PHYSICAL_BOUNDS: dict[str, tuple[float, float]] = {
    "parameters_b": (1e-6, 1e5),  # billions of parameters: a thousand to 10^14
    "active_parameters_b": (1e-6, 1e5),
    "kv_bytes_per_token": (1.0, 2.0**40),  # bytes per cached token: 1 B to 1 TiB
    "peak_tflops": (1e-3, 1e6),  # TFLOP/s: 1 GFLOP/s to 1 EFLOP/s
    "memory_bandwidth_tbps": (1e-3, 1e3),  # TB/s: 1 GB/s to 1 PB/s
    "allreduce_gbps": (1e-3, 1e6),  # GB/s: 1 MB/s to 1 PB/s
    "allreduce_latency_us": (0.0, 1e6),  # µs: up to one second
    "weight_bytes": (0.0625, 8.0),  # bytes per element: half a bit to FP64
    "kv_cache_bytes": (0.0625, 8.0),
    "draft_depth_ratio": (0.0, 1e3),  # ρ, a ratio
    "verify_cost_ratio": (1.0, 1e6),  # β, a ratio
    "context_length": (0.0, float(MAX_CONTEXT_TOKENS)),
}



@cache
def _integer_bound() -> int:
    """10**MAX_INTEGER_DIGITS, made on first use: the power is 0.5M instructions, more
    than a one-file check spends on most modules, and only an ``0o``/``0x`` literal
    needs it."""
    bound: int = 10**MAX_INTEGER_DIGITS
    return bound


#: Most digits a literal in base 8 or 16 can have below ``_integer_bound()``.
_MOST_DIGITS = {8: 4762, 16: 3572}


def bounded_int(digits: str, base: int = 10) -> int | None:
    """The value of ``digits`` (no sign, no ``0x``/``0o`` prefix) in ``base`` (8, 10
    or 16), or None when it has more than :data:`MAX_INTEGER_DIGITS` decimal digits.

    Leading zeros do not count. The decimal check counts characters before calling
    :func:`int` (quadratic in the length for base 10); bases 8 and 16 convert in
    linear time and are compared with 10**4,300 after a length pre-check.
    """
    significant = digits.lstrip("0") or "0"
    if base == 10:
        return int(significant) if len(significant) <= MAX_INTEGER_DIGITS else None
    if len(significant) > _MOST_DIGITS[base]:
        return None
    value = int(significant, base)
    return value if value < _integer_bound() else None


#: Characters shell-variable expansion may add beyond a file's own length.
EXPANSION_ALLOWANCE = 64 * 1024


#: YAML nodes one file may build, its embedded documents (a ConfigMap's ``extra.yaml: |``,
#: JSON strings read as YAML) included: the loader's own per-document bound.
FILE_NODES = 100_000


class FileBudget:
    """What the readers of one file may still spend, shared by every scalar in it.

    Attributes:
        chars: characters that shell-variable expansion may still add (reaching the
            bound refuses the file: :class:`specgate.core.errors.LimitReached`).
        spent: characters expansion added so far.
        nodes: YAML nodes that may still be built (the file and every document
            embedded in its strings together).
    """

    def __init__(self, chars: int, nodes: int = FILE_NODES) -> None:
        self.chars = chars
        self.nodes = nodes
        self.spent = 0

    @property
    def allowance(self) -> int:
        """The characters expansion may add in all, spent or not (for messages)."""
        return self.chars + self.spent

    def spend(self, chars: int) -> None:
        """Take ``chars`` from :attr:`chars` (the caller checked they are there)."""
        self.chars -= chars
        self.spent += chars


#: The budget of the file being read (one at most: reads do not nest across threads;
#: a plain list rather than a ContextVar, and a class rather than
#: ``contextlib.contextmanager``, whose imports a one-file check would pay).
_BUDGET: list[FileBudget] = []


class _Budgeted:
    """The ``with`` block of :func:`file_budget`; ``as`` gives the budget."""

    __slots__ = ("length", "pushed")

    def __init__(self, length: int) -> None:
        self.length = length
        self.pushed = False

    def __enter__(self) -> FileBudget:
        if _BUDGET:
            return _BUDGET[-1]
        budget = FileBudget(self.length + EXPANSION_ALLOWANCE)
        _BUDGET.append(budget)
        self.pushed = True
        return budget

    def __exit__(self, *exc: object) -> None:
        if self.pushed:
            _BUDGET.pop()


def file_budget(length: int) -> _Budgeted:
    """The budget of a file of ``length`` characters for the duration of its reading
    (:data:`EXPANSION_ALLOWANCE` beyond its length); inside a read already budgeted
    (an options file followed from a launcher) the outer budget goes on."""
    return _Budgeted(length)


def active_budget() -> FileBudget | None:
    """The budget of the file being read, if one is being read."""
    return _BUDGET[-1] if _BUDGET else None


def current_budget(length: int) -> FileBudget:
    """The budget of the file being read, else one of its own for a text of
    ``length`` characters read alone."""
    return _BUDGET[-1] if _BUDGET else FileBudget(length + EXPANSION_ALLOWANCE)
