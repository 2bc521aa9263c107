"""A plain YAML scalar read as the program that reads the file reads it.

``num_speculative_tokens: 010`` is 10 under the YAML 1.2 core schema but 8 for every
reader of serving configs: the engines load their YAML files with PyYAML's
``yaml.safe_load`` (YAML 1.1), Kubernetes and Compose with go-yaml, which keeps 1.1's
leading-zero octals. A number read otherwise than the engine reads it is a wrong
number, so each dialect here reproduces its reader (sources read):

- ``"core"``: the YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution),
  for claims files, which specgate alone reads.
- ``"pyyaml"``: PyYAML 6 ``SafeLoader`` (``yaml/resolver.py`` implicit resolvers,
  ``yaml/constructor.py`` ``construct_yaml_int``/``_float``/``_bool``): ``010`` is 8,
  ``0b101`` 5, ``1_000`` 1000, ``1:30`` 90 (base 60), ``yes``/``on`` true, while ``1e3``,
  ``1.5e3`` (no exponent sign) and ``0o10`` stay text. The readers: vLLM 0.32
  ``vllm/utils/argparse_utils.py`` (``vllm serve --config``), SGLang 0.5.23
  ``sglang/srt/utils/server_args_config_parser.py`` (``--config``), TensorRT-LLM
  ``tensorrt_llm/commands/serve.py`` at 00209af (``--extra_llm_api_options``), all
  ``yaml.safe_load``. A date stays text (nothing specgate reads is one).
- ``"go"``: go-yaml v3 ``resolve.go`` at 0d383ff (Compose; Kubernetes' fork of v2
  resolves numbers alike): underscores dropped, then ``strconv.ParseInt(s, 0, 64)``
  (``0x``, ``0o``, ``0b`` and a leading ``0`` for octal), else an unsigned, else a float
  of ``^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$``; ``010`` is 8, ``08``
  8.0, ``1e3`` 1000.0, ``1:30`` text; booleans are 1.2's (``true``/``false``).

Every integer literal is held to :data:`~specgate.core.limits.MAX_INTEGER_DIGITS`
before conversion (:class:`TooLong`).
"""

from __future__ import annotations

import math
import re
from typing import Literal, TypeAlias

from specgate.core.limits import bounded_int

Dialect: TypeAlias = Literal["core", "pyyaml", "go"]

#: What a plain scalar resolves to: ("str" | "int" | "float" | "bool" | "null" |
#: "merge" | "unread", value); "unread": a scalar the reader refuses (PyYAML's ``=``).
Resolved: TypeAlias = tuple[str, object]


class TooLong(ValueError):
    """An integer literal with more digits than specgate converts."""


# --- PyYAML 6, yaml/resolver.py (Resolver's implicit resolvers) ------------------------
_PY_BOOL = re.compile(
    r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"
)
_PY_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_PY_INT = re.compile(
    r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"
)
_PY_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_PY_FIRST = {
    "bool": "yYnNtTfFoO",
    "int": "-+0123456789",
    "float": "-+0123456789.",
}

# --- go-yaml v3, resolve.go ---------------------------------------------------------------
_GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_MAP: dict[str, Resolved] = {
    **dict.fromkeys(("true", "True", "TRUE"), ("bool", True)),
    **dict.fromkeys(("false", "False", "FALSE"), ("bool", False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), ("null", None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), ("float", math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), ("float", math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), ("float", -math.inf)),
    "<<": ("merge", "<<"),
}
_INT64 = 2**63
_UINT64 = 2**64


def _int(digits: str, base: int) -> int:
    """``digits`` in ``base`` (2, 8, 10, 16), held to the digit bound first."""
    if base == 2:
        if len(digits.lstrip("0")) > 14_300:  # 2**14300 > 10**4300
            raise TooLong(digits)
        value = int(digits or "0", 2)
        if value >= 10**4300:
            raise TooLong(digits)
        return value
    value_or_none = bounded_int(digits, base)
    if value_or_none is None:
        raise TooLong(digits)
    return value_or_none


def _pyyaml(text: str) -> Resolved:
    first = text[:1]
    if text == "<<":
        return "merge", "<<"
    if text == "=":  # the value tag, which SafeLoader has no constructor for
        return "unread", text
    if first in _PY_FIRST["bool"] and _PY_BOOL.match(text):
        return "bool", text.lower() in ("yes", "true", "on")
    if first in ("~", "n", "N", "") and _PY_NULL.match(text):
        return "null", None
    if first in _PY_FIRST["int"] and _PY_INT.match(text):
        return "int", _pyyaml_int(text)
    if first in _PY_FIRST["float"] and _PY_FLOAT.match(text):
        return "float", _pyyaml_float(text)
    return "str", text


def _pyyaml_int(text: str) -> int:
    """``SafeConstructor.construct_yaml_int``."""
    value = text.replace("_", "")
    sign = -1 if value[:1] == "-" else 1
    if value[:1] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * _int(value[2:], 2)
    if value.startswith("0x"):
        return sign * _int(value[2:], 16)
    if value[0] == "0":
        return sign * _int(value, 8)
    if ":" in value:
        total = 0
        for part in value.split(":"):
            total = total * 60 + _int(part, 10)
        return sign * total
    return sign * _int(value, 10)


def _pyyaml_float(text: str) -> float:
    """``SafeConstructor.construct_yaml_float``."""
    value = text.replace("_", "").lower()
    sign = -1.0 if value[:1] == "-" else 1.0
    if value[:1] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        total = 0.0
        for part in value.split(":"):
            total = total * 60 + float(part)
        return sign * total
    return sign * float(value)


def _go_parse_int(plain: str) -> int | None:
    """``strconv.ParseInt(plain, 0, 64)``, then ``ParseUint``: the value, or None."""
    sign = ""
    body = plain
    if body[:1] in "+-":
        sign, body = body[0], body[1:]
    lowered = body[:2].lower()
    if lowered in ("0x", "0o", "0b"):
        base = {"0x": 16, "0o": 8, "0b": 2}[lowered]
        digits = body[2:]
    elif body[:1] == "0" and len(body) > 1:
        base, digits = 8, body[1:]
    else:
        base, digits = 10, body
    allowed = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01", 10: "0123456789"}[base]
    if not digits or any(c not in allowed for c in digits):
        return None
    value = _int(digits, base)
    if sign == "-":
        return -value if value <= _INT64 else None
    if value < _INT64 or (not sign and value < _UINT64):
        return value
    return None


def _go(text: str) -> Resolved:
    if text in _GO_MAP:
        return _GO_MAP[text]
    first = text[:1]
    if first == ".":  # strconv.ParseFloat(in): ".5", ".5e3"
        value = float(text) if _GO_FLOAT.match(text) else math.inf
        return ("float", value) if math.isfinite(value) else ("str", text)
    if first not in "+-0123456789":
        return "str", text
    # (a timestamp, tried first by go-yaml, is text here: nothing specgate reads is one)
    plain = text.replace("_", "")
    number = _go_parse_int(plain)
    if number is not None:
        return "int", number
    if _GO_FLOAT.match(plain):
        if len(plain) > 4300:
            raise TooLong(plain)
        value = float(plain)
        if math.isfinite(value):  # ParseFloat's ErrRange: go-yaml keeps the text
            return "float", value
    return "str", text


def resolve_plain(text: str, dialect: Dialect) -> Resolved:
    """What the ``dialect``'s reader makes of the plain (unquoted, untagged) scalar
    ``text`` (``"core"`` is resolved by the loader itself and is not handled here).

    Raises:
        TooLong: an integer of more than 4,300 decimal digits.
    """
    if dialect == "go":
        return _go(text)
    return _pyyaml(text)


def resolve_tagged(text: str, tag: str, dialect: Dialect) -> object:
    """The value of a scalar tagged ``!!int``, ``!!float``, ``!!bool`` or ``!!null``
    (``tag`` without its ``tag:yaml.org,2002:`` prefix), as the ``dialect``'s reader
    constructs it, when specgate can settle it: the text must be one the reader
    resolves untagged to that kind (PyYAML's ``construct_yaml_int`` reads ``!!int 010``
    as 8, like an untagged ``010``), or an integer under ``!!float`` (PyYAML: ``float(text)``
    with underscores dropped, so ``!!float 010`` is 10.0; go-yaml: the integer as a float).

    Raises:
        ValueError: any other text (``!!int 0o10``, which PyYAML reads through
            ``int(text, 8)``; ``!!bool YeS``): not settled.
        TooLong: an integer of more than 4,300 decimal digits.
    """
    kind, value = resolve_plain(text, dialect)
    if kind == tag:
        return value
    if tag == "float" and kind == "int":
        if dialect == "go":
            return float(value)  # type: ignore[arg-type]
        plain = text.replace("_", "")
        if re.fullmatch(r"[-+]?[0-9]+", plain) and len(plain) <= 4300:
            return float(plain)
    raise ValueError(text)


_MANIFEST = re.compile(r"^(?:apiVersion|kind|services)\s*:", re.MULTILINE)


def serving_dialect(text: str) -> Dialect:
    """The reader of a serving YAML file: go-yaml for a Kubernetes manifest or a
    Compose file (a top-level ``apiVersion``/``kind`` or ``services`` key), else the
    engine's PyYAML (an engine's own config file, an options file)."""
    return "go" if _MANIFEST.search(text) else "pyyaml"
