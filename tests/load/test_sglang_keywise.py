"""SGLang's Python API read keyword by keyword (docs/engines.md#unsettled-values).

``sgl.Engine(**kwargs)`` builds ``ServerArgs(**kwargs)``: each keyword is a dataclass
field of its own (sglang 0.5.23 python/sglang/srt/entrypoints/engine.py
``Engine.__init__``; the installed 0.5.18, engine.py lines 232-252, the same). So a
keyword the script leaves unsettled cannot change another: one that sets neither D,
N_verify nor the method is kept aside (SG313 when set outside the repository, SG314 when
the repository sets it in a way not followed) and the rest is judged. The draft path is
such a keyword only beside ``speculative_algorithm="EAGLE3"``: for EAGLE and NEXTN the
draft's config decides the method (a Gemma 4 assistant draft makes it FROZEN_KV_MTP:
speculative_hook.py ``_resolve_speculative_algorithm_alias`` at 0.5.18), and the steps,
topk and draft tokens set D.

Right values: chain at topk 1, D = num_steps 3 and N_verify = steps + 1 = 4 (SGLang
rewrites num_draft_tokens to that: ``_handle_eagle_family``), as the reader's existing
tests hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.core.errors import UnsettledValue
from specgate.inputs.engines import read_engine_file
from specgate.load.python_launcher import load_python_launcher

HEAD = "import os\nimport sglang as sgl\n\n"


def _script(algorithm: str, draft: str, *, tokens: int = 4, more: str = "") -> str:
    return (
        HEAD
        + 'DRAFT = os.environ["DRAFT"]\n'
        + "llm = sgl.Engine(\n"
        + '    model_path="meta-llama/Llama-3.1-8B-Instruct",\n'
        + f'    speculative_algorithm="{algorithm}",\n'
        + f"    speculative_draft_model_path={draft},\n"
        + "    speculative_num_steps=3,\n"
        + "    speculative_eagle_topk=1,\n"
        + f"    speculative_num_draft_tokens={tokens},\n"
        + more
        + ")\n"
    )


def test_an_eagle3_draft_from_the_environment_is_deferred_alone() -> None:
    doc = load_python_launcher(_script("EAGLE3", "DRAFT"), "serve.py")
    ((path, exc),) = doc.deferred.items()
    assert path == ("speculative_draft_model_path",)
    assert (exc.origin, exc.line) == ("outside", 8)
    assert isinstance(doc.data, dict)
    assert doc.data["speculative_num_steps"] == 3
    assert "speculative_draft_model_path" not in doc.data


def test_the_rest_of_the_call_is_judged(tmp_path: Path) -> None:
    path = tmp_path / "serve.py"
    path.write_text(_script("EAGLE3", "DRAFT", tokens=5), encoding="utf-8")
    config = read_engine_file(path, "serve.py", engine="sglang", engine_version="0.5.23")
    assert (config.mechanism, config.draft_length, config.verify_tokens) == ("eagle3", 3, 4)
    assert config.draft_model is None  # a draft runs; its name is not known
    assert config.deferred is not None and config.deferred.origin == "outside"
    # the draft tokens 5 beside topk 1 are still judged: SGLang rewrites them to 4
    assert any(i.code == "SG307" and "rewrites" in i.message for i in config.issues)


@pytest.mark.parametrize(
    ("algorithm", "draft", "more", "expected"),
    [
        # EAGLE / NEXTN: the draft decides the method, so neither it nor D is settled
        ("EAGLE", "DRAFT", "", (("the method", "D"), None, 8, "outside")),
        ("NEXTN", "DRAFT", "", (("the method", "D"), None, 8, "outside")),
        # D itself from the environment (through bool(...), a call: the repository's)
        ("EAGLE3", '"org/draft"', '    speculative_adaptive=bool(os.environ["A"]),\n',
         (("D",), "eagle3", 12, "repository")),
    ],
)
def test_a_keyword_that_may_change_d_or_the_method_is_deferred_alone(
    tmp_path: Path, algorithm: str, draft: str, more: str,
    expected: tuple[tuple[str, ...], str | None, int, str],
) -> None:
    left, mechanism, line, origin = expected
    # Contract change (issue 24): each left the whole call unsettled; each keyword is one
    # ServerArgs field, so the others are read and only what it may change is left to the
    # claims file (D and N_verify None, the method None where the draft decides it)
    path = tmp_path / "serve.py"
    path.write_text(_script(algorithm, draft, more=more), encoding="utf-8")
    config = read_engine_file(path, "serve.py", engine="sglang", engine_version="0.5.23")
    assert (config.mechanism, config.draft_length, config.verify_tokens) == (mechanism, None, None)
    assert config.resolution["unsettled"] == left
    assert config.deferred is not None
    assert (config.deferred.origin, config.deferred.line, config.deferred.column) == (
        origin, line, 5)


def test_steps_from_the_environment_are_deferred_alone(tmp_path: Path) -> None:
    # Contract change (issue 24): the call was unsettled as a whole. Now SG313 at the
    # keyword (line 9, column 5: "    speculative_num_steps="), the method eagle3 read,
    # D and N_verify left to the claims file, the target model and tp read
    text = _script("EAGLE3", '"org/draft"', more="    tp_size=2,\n").replace(
        "speculative_num_steps=3", 'speculative_num_steps=int(os.environ["S"])'
    )
    doc = load_python_launcher(text, "serve.py")
    assert list(doc.deferred) == [("speculative_num_steps",)]
    path = tmp_path / "serve.py"
    path.write_text(text, encoding="utf-8")
    config = read_engine_file(path, "serve.py", engine="sglang", engine_version="0.5.23")
    assert (config.mechanism, config.draft_length, config.verify_tokens) == ("eagle3", None, None)
    assert (config.draft_model, config.tensor_parallel_size) == ("org/draft", 2)
    assert config.deferred is not None
    assert (config.deferred.line, config.deferred.column) == (9, 5)


def test_an_algorithm_from_the_environment_leaves_the_call_unsettled() -> None:
    # unset, empty or NONE the algorithm turns speculation off (SpeculativeAlgorithm
    # .from_string), so whether the call speculates is not settled: the whole call, at
    # the keyword (line 7 "    speculative_algorithm=os.environ[...]", column 5)
    text = _script("EAGLE3", '"org/draft"').replace(
        'speculative_algorithm="EAGLE3"', 'speculative_algorithm=os.environ["ALGO"]')
    with pytest.raises(UnsettledValue) as caught:
        load_python_launcher(text, "serve.py")
    assert (caught.value.origin, caught.value.line, caught.value.column) == ("outside", 7, 5)


def test_unsettled_d_uses_the_claims_files_d(tmp_path: Path) -> None:
    # num_steps from the environment: SG313 (warn) at the keyword, the method eagle3 read
    # and agreeing with the claims file, D the claims file's 5 (no SG301 against steps 3)
    (tmp_path / ".git").mkdir()
    text = _script("EAGLE3", '"org/draft"').replace(
        "speculative_num_steps=3", 'speculative_num_steps=int(os.environ["S"])')
    (tmp_path / "serve.py").write_text(text, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: sglang, engine_config: serve.py,\n"
        '      engine_version: "0.5.23", mechanism: eagle3, draft_length: 5}\n'
        "    evidence: {accept_length: 2.5, cache_coherence_eval: true}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    found = report.all_findings()
    (sg313,) = [f for f in found if f.code == "SG313"]
    assert (sg313.severity, sg313.file, sg313.line, sg313.column) == ("warn", "serve.py", 9, 5)
    assert "leaves D unsettled: specgate used the claims file's D 5" in sg313.message
    assert not [f for f in found if f.code in ("SG301", "SG312")]
    (dep,) = report.deployments
    assert dep.metrics.draft_length == 5


def test_a_keyword_the_repository_computes_is_sg314_alone() -> None:
    # a token map made by a call of the repository: SG314 (a fail, suppressible) for that
    # key; D and the method are still read
    text = _script("EAGLE3", '"org/draft"', more="    speculative_token_map=make_map(),\n")
    text = text.replace("DRAFT = ", "def make_map():\n    return 'map.pt'\n\n\nDRAFT = ")
    doc = load_python_launcher(text, "serve.py")
    ((path, exc),) = doc.deferred.items()
    assert path == ("speculative_token_map",)
    assert exc.origin == "repository"
    assert isinstance(doc.data, dict) and doc.data["speculative_draft_model_path"] == "org/draft"


def test_a_check_that_needs_the_draft_unset_does_not_fire(tmp_path: Path) -> None:
    """eagle3-without-draft-loads-target (EAGLE3, no draft path, a Llama target) must not
    fire: the draft path is set, only its value is not known. SG313 warns at its line."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.py").write_text(_script("EAGLE3", "DRAFT"), encoding="utf-8")
    (tmp_path / "target.json").write_text(
        '{"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32,'
        ' "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072}',
        encoding="utf-8",
    )
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    model: {hf_config: target.json}\n"
        "    speculation: {enabled: true, engine: sglang, engine_config: serve.py,\n"
        '      engine_version: "0.5.23"}\n'
        "    evidence: {accept_length: 2.5, cache_coherence_eval: true}\n",
        encoding="utf-8",
    )
    # the same call with no draft path at all: the refusal fires (the check is live here)
    (tmp_path / "bare.py").write_text(
        _script("EAGLE3", "None").replace("    speculative_draft_model_path=None,\n", ""),
        encoding="utf-8",
    )
    bare = tmp_path / "bare.specgate.yaml"
    bare.write_text(
        (tmp_path / "c.specgate.yaml").read_text("utf-8").replace("serve.py", "bare.py"),
        encoding="utf-8",
    )
    refused = check_file(bare, "bare.specgate.yaml", CheckOptions()).all_findings()
    assert [f for f in refused if "without --speculative-draft-model-path" in f.message]
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    found = report.all_findings()
    assert not [f for f in found if "without --speculative-draft-model-path" in f.message]
    (sg313,) = [f for f in found if f.code == "SG313"]
    assert sg313.severity == "warn" and sg313.line == 8
    (dep,) = report.deployments
    assert dep.metrics.draft_length == 3
