"""H6: integer literals too large for Python's int/str conversion, in every base and
every place a number is read, are input errors (or SG001) at their own line; the
run goes on with the other files (docs/trust.md#bounded-work, "integers out of range")."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.core.limits import MAX_INTEGER_DIGITS, bounded_int
from specgate.load.json_loader import load_json
from specgate.load.yaml_loader import load_yaml

from .conftest import BASE, InProcess, with_engine

# 3,602 hex digits = 4,335 decimal digits: the literal is short enough for a length
# check on characters but its decimal form is over the 4,300-digit limit.
LARGE = [
    "0x" + "f" * 3600,
    "0x" + "F" * 5000,
    "0o" + "7" * 4800,
    "9" * 4301,
    "-" + "1" * 4301,
    "+" + "0" * 3 + "7" * 4301,
]


def test_the_bound_is_on_decimal_digits_in_every_base() -> None:
    # worked by hand: 16**3571 has floor(3571 * log10 16) + 1 = 4,300 digits;
    # 16**3572 - 1 has 4,301. 8**4761 - 1 has 4,300 digits, 8**4762 - 1 has 4,301.
    assert MAX_INTEGER_DIGITS == 4300
    assert bounded_int("9" * 4300) == 10**4300 - 1
    assert bounded_int("9" * 4301) is None
    assert bounded_int("f" * 3571, 16) == 16**3571 - 1
    assert bounded_int("f" * 3572, 16) is None
    assert bounded_int("7" * 4761, 8) == 8**4761 - 1
    assert bounded_int("7" * 4762, 8) is None
    assert bounded_int("0" * 10_000 + "12") == 12  # leading zeros are not digits of the value
    assert bounded_int("0" * 10_000, 16) == 0


@pytest.mark.parametrize("literal", LARGE)
def test_yaml_integers_too_large_are_input_errors_at_their_place(literal: str) -> None:
    with pytest.raises(InputError, match="too long") as info:
        load_yaml("a: 1\nx-note:\n  v: " + literal + "\n", "f.yaml")
    assert (info.value.file, info.value.line, info.value.column) == ("f.yaml", 3, 6)


@pytest.mark.parametrize("literal", ["0x" + "f" * 3571, "0o" + "7" * 4761, "-" + "9" * 4300])
def test_yaml_integers_at_the_limit_still_load_and_print(literal: str) -> None:
    value = load_yaml("v: " + literal + "\n", "f.yaml").data["v"]
    assert len(str(abs(value))) == 4300


@pytest.mark.parametrize("literal", ["9" * 4301, "-" + "9" * 5000, "1" * 100_000])
def test_json_integers_too_large_are_input_errors_at_their_place(literal: str) -> None:
    with pytest.raises(InputError, match="too many digits") as info:
        load_json('{"a": 1,\n "b": [1, ' + literal + "]}", "f.json")
    assert (info.value.file, info.value.line, info.value.column) == ("f.json", 2, 11)


def _check_two(sg: InProcess, repo: Path, bad: str) -> dict:  # type: ignore[type-arg]
    """``bad`` as one claims file beside a good one: the run must report both."""
    (repo / "a.specgate.yaml").write_text(bad, "utf-8")
    (repo / "b.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "--format", "json", "a.specgate.yaml", "b.specgate.yaml"], repo)
    assert result.code in (1, 2), result.err
    assert "internal error" not in result.err
    data: dict = result.json()  # type: ignore[type-arg]
    files = {f["path"]: f for f in data["files"]}
    assert files["b.specgate.yaml"].get("error") is None
    assert files["b.specgate.yaml"]["deployments"], files["b.specgate.yaml"]
    return files["a.specgate.yaml"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("literal", LARGE)
@pytest.mark.parametrize("where", ["ignored x- key", "claims value", "claims key"])
def test_claims_file_integers(sg: InProcess, repo: Path, literal: str, where: str) -> None:
    if where == "ignored x- key":
        text = f"x-a: {literal}\n" + BASE
        line = 1
    elif where == "claims value":
        text = BASE + f"    claims:\n      speedup: {literal}\n"
        line = 13
    else:
        text = BASE + f"    x-map:\n      ? {literal}\n      : 1\n"
        line = 13
    report = _check_two(sg, repo, text)
    assert report["error"].startswith(f"a.specgate.yaml:{line}:"), report["error"]
    assert "too long" in report["error"]


@pytest.mark.parametrize("literal", LARGE)
@pytest.mark.parametrize("kind", ["yaml", "json", "command line"])
def test_referenced_engine_config_integers(
    sg: InProcess, repo: Path, literal: str, kind: str
) -> None:
    if kind == "yaml":
        name = "e.yaml"
        body = (
            "tensor_parallel_size: 2\n"
            f"speculative_config: {{method: ngram, num_speculative_tokens: {literal}}}\n"
        )
        line = 2
    elif kind == "json":
        if not literal.lstrip("+-")[:2].isdigit() or literal.startswith("+"):
            pytest.skip("JSON integers are decimal, without '+'")
        name = "e.json"
        body = (
            '{"tensor_parallel_size": 2,\n "speculative_config": '
            '{"method": "ngram", "num_speculative_tokens": ' + literal + "}}\n"
        )
        line = 2
    else:
        if not literal.lstrip("+-")[:2].isdigit():
            pytest.skip("argparse type=int reads decimal only (0x is 'not an integer')")
        name = "e.txt"
        body = (
            "python -m sglang.launch_server --model-path m \\\n"
            "  --speculative-algorithm EAGLE \\\n  --speculative-num-steps " + literal + "\n"
        )
        line = 3
    (repo / name).write_text(body, "utf-8")
    claims = with_engine(name, drop_draft_length=True)
    if kind == "command line":
        claims = claims.replace("engine: vllm", "engine: sglang")
    report = _check_two(sg, repo, claims)
    if kind == "yaml" and literal.startswith("+0"):
        # YAML 1.1 reads +000777… as octal: 8**4301 - 1 has 3,885 decimal digits, within
        # the integer bound but far above the draft-length bound. Contract change (new-user
        # trial D10): a number read past the D bound is SG315 at its line, not exit 2
        # (docs/engines.md#out-of-bounds)
        assert report["error"] is None
        (hit,) = [
            f for f in report["deployments"][0]["findings"] if f["code"] == "SG315"
        ]
        assert (hit["file"], hit["line"]) == (name, line)
        assert "(a 3,885-digit number) is above specgate's limit of 1024" in hit["message"]
        return
    if kind == "yaml" and literal.startswith("0o"):
        # the engines' PyYAML (YAML 1.1) reads 0o… as text, which vLLM's SpeculativeConfig
        # refuses as a count (int field, data vllm.json). Contract change (issue 24,
        # degrade never stop): SG307 at its line, no longer exit 2
        assert report["error"] is None
        (hit,) = [f for f in report["deployments"][0]["findings"] if f["code"] == "SG307"]
        assert (hit["file"], hit["line"]) == (name, line)
        assert hit["message"].endswith("num_speculative_tokens must be a whole number")
        assert "0o777" in hit["details"]
        assert len(hit["message"]) < 200
        return
    assert report["error"].startswith(f"{name}:{line}"), report["error"]
    assert "too long" in report["error"] or "too many digits" in report["error"]
