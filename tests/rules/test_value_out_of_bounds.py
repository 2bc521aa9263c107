"""SG315: a draft-token count the serving config sets past specgate's bounds is a
finding on that deployment at its line, never the end of the run (new-user trial D10,
"degrade, never stop"; docs/engines.md#out-of-bounds).

The bound is limits.MAX_DRAFT_LENGTH, 1,024 (docs/trust.md#bounded-work); the lines
and columns below are counted by hand in the files each test writes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main

DEPLOYMENT = """  - name: {name}
    speculation:
      enabled: true
      engine_config: {serving}
      mechanism: {mechanism}
      draft_length: 4
    evidence:
      accept_length: 2.1
      cache_coherence_eval: true
"""


def check(tmp: Path, serving: dict[str, str], mechanism: str = "ngram") -> tuple[int, Any]:
    """(exit code, JSON report) of ``specgate check`` over one deployment per serving
    file, each stating D 4 and ``mechanism``."""
    deployments = ""
    for index, (name, text) in enumerate(serving.items()):
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
        deployments += DEPLOYMENT.format(name=f"d{index}", serving=name, mechanism=mechanism)
    (tmp / "specgate.yaml").write_text("version: 1\ndeployments:\n" + deployments)
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(tmp)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "--format", "json", "specgate.yaml"])
    finally:
        os.chdir(here)
    return code, json.loads(out.getvalue())


def hits(report: Any, code: str, deployment: str | None = None) -> list[dict[str, Any]]:
    return [
        f for file in report["files"] for d in file["deployments"] for f in d["findings"]
        if f["code"] == code and deployment in (None, d["name"])
    ]


def vllm_sh(d: int) -> str:
    return (
        "#!/bin/sh\nvllm serve Qwen/Qwen3-8B \\\n"
        f"""  --speculative-config '{{"method": "ngram", "num_speculative_tokens": {d}, """
        """"prompt_lookup_max": 4}'\n"""
    )


def test_a_d_past_the_bound_is_a_finding_and_the_other_deployment_is_checked(
    tmp_path: Path,
) -> None:
    # D 2000 in big.sh, line 3: `  --speculative-config '{"method": "ngram",
    # "num_speculative_tokens": 2000, …` puts 2000 at column 71 (2 + 21 + 1 + 46 + 1)
    code, report = check(tmp_path, {"big.sh": vllm_sh(2000), "fine.sh": vllm_sh(4)})
    assert code == 1
    (file,) = report["files"]
    assert file["error"] is None
    (hit,) = hits(report, "SG315")
    assert (hit["file"], hit["line"], hit["column"], hit["severity"]) == (
        "big.sh", 3, 71, "fail",
    )
    assert "num_speculative_tokens 2000 is above specgate's limit of 1024" in hit["message"]
    assert "mechanism ngram and D 4" in hit["message"]  # the claims file's, used instead
    # fine.sh (D 4 as claimed) is judged on what it sets: no finding about its values
    names = [d["name"] for d in file["deployments"]]
    assert names == ["d0", "d1"]
    assert hits(report, "SG315", "d1") == [] and hits(report, "SG301", "d1") == []


@pytest.mark.parametrize(("d", "past"), [(1024, False), (1025, True)])
def test_the_bound_is_1024_in_a_yaml_config(tmp_path: Path, d: int, past: bool) -> None:
    config = (
        "speculative_config:\n  method: ngram\n"
        f"  num_speculative_tokens: {d}\n  prompt_lookup_max: 4\n"
    )
    code, report = check(tmp_path, {"vllm.yaml": config})
    assert report["files"][0]["error"] is None
    found = hits(report, "SG315")
    if past:
        (hit,) = found
        assert (hit["file"], hit["line"], hit["column"]) == ("vllm.yaml", 3, 27)
        assert code == 1
    else:
        assert found == []


def test_each_engine_reader_degrades_alike(tmp_path: Path) -> None:
    # SGLang --speculative-num-draft-tokens 2000 (line 2) and llama.cpp --draft-max 2000
    # (line 1), one deployment each; both are findings, neither stops the run
    sglang = (
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE \\\n"
        "  --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 2000\n"
    )
    llama = "llama-server -m m.gguf -md d.gguf --draft-max 2000\n"
    code, report = check(tmp_path, {"sglang.sh": sglang, "llama.sh": llama}, "eagle")
    assert report["files"][0]["error"] is None
    assert code == 1
    (first,) = hits(report, "SG315", "d0")
    (second,) = hits(report, "SG315", "d1")
    assert (first["file"], first["line"]) == ("sglang.sh", 2)
    assert (second["file"], second["line"]) == ("llama.sh", 1)


def test_a_count_below_what_counts_tokens_is_a_finding(tmp_path: Path) -> None:
    # TGI --speculate=-1 (line 1): a count of draft tokens cannot be negative. Contract
    # change: this was `--speculate -1`, which TGI's clap refuses as a flag given no value
    # (a word starting with - is a new argument: tests/integration/test_tgi_hyphen_values.py);
    # `--speculate=-1` hands clap the value -1
    code, report = check(
        tmp_path, {"tgi.sh": "text-generation-launcher --model-id m --speculate=-1\n"}
    )
    assert code == 1
    assert report["files"][0]["error"] is None
    (hit,) = hits(report, "SG315")
    assert (hit["file"], hit["line"]) == ("tgi.sh", 1)
    assert "--speculate -1 is below 0" in hit["message"]


def test_the_team_accepts_it_in_the_serving_file(tmp_path: Path) -> None:
    # the directive on the finding's line (line 3, the line of the value)
    script = vllm_sh(2000).replace(
        "4}'\n", "4}'  # specgate: ignore[SG315] -- a stress deployment\n"
    )
    code, report = check(tmp_path, {"big.sh": script})
    (hit,) = hits(report, "SG315")
    assert hit["suppressed"] is True
    assert hit["justification"] == "inline: a stress deployment"
    assert code == 0


def test_a_number_that_is_no_number_is_sg307_at_its_word(tmp_path: Path) -> None:
    # TGI's --speculate is a count: `four` is no number to specgate. Contract change
    # (issue 24, degrade never stop): SG307 on the deployment at its word, a warn (TGI's
    # own refusal of it is not recorded in specgate's data), no longer exit 2
    code, report = check(
        tmp_path, {"tgi.sh": "text-generation-launcher --model-id m --speculate four\n"}
    )
    assert report["files"][0]["error"] is None
    (hit,) = hits(report, "SG307")
    # `four` at column 51: "text-generation-launcher --model-id m --speculate " is 50
    assert (hit["file"], hit["line"], hit["column"], hit["severity"]) == ("tgi.sh", 1, 51, "warn")
    assert code != 2
