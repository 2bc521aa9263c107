"""An assistant checkpoint's folder in the repository: its own generation settings read
(specgate/load/assistant_folder.py, docs/engines.md#transformers-scripts).

What transformers does, read in 5.19.0 and asked of it (the vLLM CPU environment's
transformers 5.19.0, a tiny Llama checkpoint): ``from_pretrained("./d")`` loads
``d/generation_config.json`` (modeling_utils.py line 4345 → generation/utils.py
``adjust_generation_fn``); without one, ``config.json`` through ``from_model_config``
(``num_assistant_tokens: 6`` and ``"heuristic"`` there gave the loaded model 6 and
``heuristic``); a null value is unset and the defaults table gives 20, ``constant``, 0.4
(``_get_default_generation_params``). ``AssistedCandidateGenerator.__init__``
(candidate_generator.py lines 119-123) drafts with those values.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.types import EngineConfig
from specgate.load.assistant_folder import local_name

SCRIPT = """\
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
draft = AutoModelForCausalLM.from_pretrained({load})
{extra}inputs = tok("Summarise the report.", return_tensors="pt")
out = model.generate(**inputs, assistant_model=draft, do_sample=False)
"""

OWN = (
    '{\n  "bos_token_id": 1,\n  "num_assistant_tokens": 7,\n'
    '  "num_assistant_tokens_schedule": "constant",\n  "assistant_confidence_threshold": 0\n}\n'
)


def _repo(tmp_path: Path, load: str = '"./draft"', extra: str = "", own: str | None = OWN,
          folder: str = "serve/draft") -> Path:
    """A repository: serve/gen.py loading the assistant, its folder holding ``own``."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve").mkdir(exist_ok=True)
    (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / folder / "config.json").write_text('{"model_type": "llama"}\n', "utf-8")
    if own is not None:
        (tmp_path / folder / "generation_config.json").write_text(own, encoding="utf-8")
    script = tmp_path / "serve" / "gen.py"
    script.write_text(SCRIPT.format(load=load, extra=extra), encoding="utf-8")
    return script


def _read(script: Path) -> EngineConfig:
    return read_engine_file(script, "serve/gen.py", engine="transformers",
                            engine_version="5.19.0")


def test_a_local_assistant_folder_settles_d_schedule_and_threshold(tmp_path: Path) -> None:
    config = _read(_repo(tmp_path))
    # 7 drafted, constant, threshold 0: a fixed D, nothing assumed
    assert (config.draft_length, config.verify_tokens, config.draft_length_is_max) == (7, 8, False)
    assert config.draft_length_assumed is None and config.draft_length_moves is None
    span = config.spans["draft_length"]  # line 3 of the assistant's own file
    assert (span.file, span.line) == ("serve/draft/generation_config.json", 3)
    assert any("read from serve/draft/generation_config.json" in n for n in config.notes)


def test_a_key_the_folder_leaves_unset_is_the_release_default_settled(tmp_path: Path) -> None:
    # null is unset (the defaults table fills it): 20, constant, 0.4 (a maximum), known
    config = _read(_repo(tmp_path, own='{"num_assistant_tokens": null}\n'))
    assert (config.draft_length, config.draft_length_is_max) == (20, True)
    assert config.draft_length_assumed is None and config.draft_length_moves is None


def test_config_json_stands_in_for_a_missing_generation_config(tmp_path: Path) -> None:
    script = _repo(tmp_path, own=None)
    (tmp_path / "serve/draft/config.json").write_text(
        '{"model_type": "llama",\n "num_assistant_tokens": 6,\n'
        ' "num_assistant_tokens_schedule": "heuristic"}\n', encoding="utf-8")
    config = _read(script)
    assert config.draft_length == 6
    assert config.draft_length_moves is not None and "'heuristic'" in config.draft_length_moves
    assert config.spans["draft_length"].file == "serve/draft/config.json"


def test_the_script_assignment_after_loading_wins(tmp_path: Path) -> None:
    extra = "draft.generation_config.num_assistant_tokens = 3\n"
    config = _read(_repo(tmp_path, extra=extra))
    assert config.draft_length == 3
    span = config.spans["draft_length"]
    assert (span.file, span.line) == (None, 5)  # the script's own line
    assert config.draft_length_moves is None  # the folder's constant schedule still read


def test_the_folder_at_the_repository_top_is_read_too(tmp_path: Path) -> None:
    # `python serve/gen.py` from the top: ./draft is the top's folder
    config = _read(_repo(tmp_path, folder="draft"))
    assert config.draft_length == 7
    assert config.spans["draft_length"].file == "draft/generation_config.json"


def test_two_folders_that_disagree_are_not_read(tmp_path: Path) -> None:
    script = _repo(tmp_path)
    _repo(tmp_path, own=OWN.replace("7", "9"), folder="draft")
    config = _read(script)  # the working directory decides which: not known
    assert config.draft_length == 20 and config.draft_length_assumed is not None
    assert any("working directory" in n for n in config.notes)


@pytest.mark.parametrize(
    "load",
    [
        '"./draft", subfolder="v2"',
        '"./draft", generation_config=None',
        '"./draft", trust_remote_code=True',
        '"./draft", **opts',
        '"./draft", "x"',
    ],
)
def test_from_pretrained_given_more_than_the_name_is_not_read(tmp_path: Path, load: str) -> None:
    extra_binding = "opts = {}\n" if "**" in load else ""
    script = _repo(tmp_path, load=load)
    if extra_binding:
        script.write_text(extra_binding + script.read_text("utf-8"), encoding="utf-8")
    config = _read(script)
    assert config.draft_length == 20 and config.draft_length_assumed is not None
    assert any("given more than the folder's name" in n for n in config.notes)


def test_weights_keywords_keep_the_folder_read(tmp_path: Path) -> None:
    load = '"./draft", dtype="float32", low_cpu_mem_usage=True, attn_implementation="eager"'
    assert _read(_repo(tmp_path, load=load)).draft_length == 7


@pytest.mark.parametrize(
    ("own", "why"),
    [
        ('{"num_assistant_tokens": "7"}', "not of the type"),
        ('{"num_assistant_tokens": true}', "not of the type"),
        ('{"num_assistant_tokens": 7', "JSON syntax error"),
        ("[7]", "not a JSON object"),
    ],
)
def test_a_value_not_read_leaves_the_default_assumed(
    tmp_path: Path, own: str, why: str
) -> None:
    config = _read(_repo(tmp_path, own=own))
    assert config.draft_length == 20 and config.draft_length_assumed is not None
    assert any("not read" in n and why in n for n in config.notes), config.notes


def test_a_file_over_the_size_bound_is_not_read(tmp_path: Path) -> None:
    big = json.dumps({"num_assistant_tokens": 7, "pad": "x" * (1024 * 1024)})
    config = _read(_repo(tmp_path, own=big))
    assert config.draft_length == 20 and config.draft_length_assumed is not None


def test_a_symlink_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "generation_config.json").write_text(OWN, encoding="utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    script = _repo(repo, own=None)
    os.symlink(outside / "generation_config.json", repo / "serve/draft/generation_config.json")
    config = _read(script)
    assert config.draft_length == 20 and config.draft_length_assumed is not None
    assert any("leads out of the repository" in n for n in config.notes)


def test_a_hub_id_is_not_looked_for_in_the_repository(tmp_path: Path) -> None:
    # "org/draft" is a hub id unless the working directory holds such a folder, which a
    # script does not say: today's assumption stays, even with the folder present
    config = _read(_repo(tmp_path, load='"org/draft"', folder="serve/org/draft"))
    assert config.draft_length == 20 and config.draft_length_assumed is not None


@pytest.mark.parametrize(
    ("name", "local"),
    [
        ("./draft", True),
        ("../models/draft", True),
        ("models/v2/draft", True),  # no hub id has two slashes
        ("org/draft", False),
        ("draft", False),
        ("/abs/draft", False),
        ("C:\\draft", False),
    ],
)
def test_which_names_are_folders(name: str, local: bool) -> None:
    assert local_name(name) is local


def test_a_fail_at_the_folders_fixed_d_stands(tmp_path: Path) -> None:
    # D 5 fixed by the folder (constant, threshold 0), ρ 0.05, β 1: AL 2.0 / (1 + 0.05·5)
    # = 1.6x, so a claimed 1.7x fails; the same script with a hub assistant only warns
    # (tests/inputs/test_engines_transformers.py, the schedule not read)
    from specgate.check.run import CheckOptions, check_file

    _repo(tmp_path, own=OWN.replace("7", "5"))
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: serve/gen.py,\n"
        '      engine_version: "5.19.0", draft_depth_ratio: 0.05}\n'
        "    evidence: {accept_length: 2.0, cache_coherence_eval: true}\n"
        "    claims: {speedup: 1.7}\n",
        encoding="utf-8",
    )
    report = check_file(claims, "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    assert ("SG104", "fail") in {(f.code, f.severity) for f in report.all_findings()}


def test_a_count_past_the_bound_is_sg315_in_the_folders_file(tmp_path: Path) -> None:
    # 10**23 draft tokens: past specgate's bound (SG315), at the file and line that set it
    from specgate.core.errors import OutOfBounds

    with pytest.raises(OutOfBounds) as caught:
        _read(_repo(tmp_path, own='{\n "num_assistant_tokens": 100000000000000000000000\n}\n'))
    assert (caught.value.file, caught.value.line) == ("serve/draft/generation_config.json", 2)


PIPELINE = """\
from transformers import pipeline
pipe = pipeline("text-generation", model="meta-llama/Llama-3.1-8B-Instruct",
                assistant_model={name})
print(pipe("Summarise the report.", do_sample=False))
"""


@pytest.mark.parametrize(("name", "d", "assumed"), [('"./draft"', 7, False),
                                                    ('"org/draft"', 20, True)])
def test_a_pipeline_assistant_given_as_a_string_reads_its_folder(
    tmp_path: Path, name: str, d: int, assumed: bool
) -> None:
    # transformers 5.19.0 pipelines/base.py load_assistant_model: a string is loaded by
    # Cls.from_pretrained(name) alone (load_model passes only _from_pipeline), so the
    # folder's generation_config.json drafts, as for generate() (asked of transformers:
    # tests/integration/test_transformers_assistant_tokens_live.py); a hub id stays the
    # release's default 20, assumed
    script = _repo(tmp_path, folder="serve/draft" if name == '"./draft"' else "serve/org/draft")
    script.write_text(PIPELINE.format(name=name), encoding="utf-8")
    config = _read(script)
    assert config.draft_length == d
    assert (config.draft_length_assumed is not None) is assumed
    if not assumed:
        span = config.spans["draft_length"]
        assert (span.file, span.line) == ("serve/draft/generation_config.json", 3)
