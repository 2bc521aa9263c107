"""``check --changed FILE…`` and ``--changed-since REF`` (docs/change-gate.md#changed-files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.git_repo import Repo

from specgate.change.changed import affected
from specgate.cli.main import main

REFERRING = """\
version: 1
deployments:
  - name: chat-8b
    model:
      hf_config: {{path: ../models/llama/config.json}}
    speculation:
      enabled: true
      engine: vllm
      engine_config: serving/vllm-serve
    evidence:
      cache_coherence_eval: true
      metrics:
        format: vllm-prometheus
        path: bench/after.prom
        baseline_path: bench/before.prom
"""
SERVE = (
    "speculative-config:\n  method: eagle3\n  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
    "  num_speculative_tokens: {d}\n"
)
PROM = (
    "# TYPE vllm:spec_decode_num_drafts_total counter\n"
    'vllm:spec_decode_num_drafts_total{{engine="0"}} {drafts}\n'
    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
    'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
)
MODEL = json.dumps({"num_attention_heads": 32, "num_key_value_heads": 8})
SELF_CONTAINED = (
    "version: 1\ndeployments:\n  - name: other\n    speculation:\n      enabled: false\n"
)


@pytest.fixture
def tree(repo: Repo) -> Repo:
    repo.write(
        {
            "deploy/chat.specgate.yaml": REFERRING.format(),
            "deploy/serving/vllm-serve": SERVE.format(d=3),
            "deploy/bench/before.prom": PROM.format(drafts=0, accepted=0),
            "deploy/bench/after.prom": PROM.format(drafts=1000, accepted=1600),
            "models/llama/config.json": MODEL,
            "other/specgate.yaml": SELF_CONTAINED,
            "broken/x.specgate.yaml": "version: 1\ndeployments: [\n",
            "README.md": "hello\n",
        }
    )
    repo.commit()
    return repo


@pytest.mark.parametrize(
    "changed",
    [
        "deploy/serving/vllm-serve",
        "deploy/bench/after.prom",
        "deploy/bench/before.prom",
        "models/llama/config.json",
    ],
)
def test_a_referenced_file_selects_its_claims(tree: Repo, changed: str) -> None:
    found = affected([Path(changed)])
    assert [shown for _, shown in found.claims] == ["deploy/chat.specgate.yaml"]
    assert found.ignored == []


def test_claims_files_pass_and_others_are_ignored(tree: Repo) -> None:
    found = affected([Path("other/specgate.yaml"), Path("README.md")])
    assert [shown for _, shown in found.claims] == ["other/specgate.yaml"]
    assert found.ignored == ["README.md"]
    assert ("broken/x.specgate.yaml" in {name for name, _ in found.skipped}) is False


def test_unparseable_claims_are_skipped_and_named(tree: Repo) -> None:
    # the broken file's text names no changed file: not even parsed
    (tree.root / "broken/x.specgate.yaml").write_text(
        "version: 1\ndeployments: [vllm-serve\n", encoding="utf-8"
    )
    found = affected([Path("deploy/serving/vllm-serve")])
    assert [shown for _, shown in found.claims] == ["deploy/chat.specgate.yaml"]
    assert [name for name, _ in found.skipped] == ["broken/x.specgate.yaml"]


def test_escaped_path_is_still_found(tree: Repo) -> None:
    # JSON may write the path with escapes; the base name then is not in the text.
    (tree.root / "deploy/esc.specgate.json").write_text(
        json.dumps(
            {
                "version": 1,
                "deployments": [
                    {"name": "e", "speculation": {"enabled": True, "engine_config": "X"}}
                ],
            }
        ).replace('"X"', '"serving/vllm\\u002dserve"'),
        encoding="utf-8",
    )
    found = affected([Path("deploy/serving/vllm-serve")])
    assert [s for _, s in found.claims] == ["deploy/chat.specgate.yaml", "deploy/esc.specgate.json"]


def test_cli_only_a_serving_config_changed(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    (tree.root / "deploy/serving/vllm-serve").write_text(SERVE.format(d=1), encoding="utf-8")
    code = main(["check", "--changed", "deploy/serving/vllm-serve"])
    out = capsys.readouterr().out
    # AL 1 + 1600/1000 = 2.6 at D = 1 is above 1 + D = 2: SG103 on the claims file.
    assert code == 1
    assert "deploy/chat.specgate.yaml" in out and "SG103" in out


def test_cli_nothing_affected(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--changed", "README.md", "--verbose"]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and "no claims file" in out
    assert "ignored README.md" in err
    assert main(["check", "--changed", "README.md", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == [] and report["status"] == "ready"


def test_cli_changed_since_includes_deleted_files(
    tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree.root / "deploy/bench/before.prom").unlink()
    code = main(["check", "--changed-since", "HEAD"])
    out, err = capsys.readouterr()
    # The claims file that reads the deleted file is checked and fails to read it.
    assert code == 2
    assert "before.prom" in out + err


def test_cli_changed_since_bad_ref(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--changed-since", "nope"]) == 2
    assert "--changed-since" in capsys.readouterr().err


def test_deleted_claims_file_is_skipped(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    (tree.root / "other/specgate.yaml").unlink()
    assert main(["check", "--changed", "other/specgate.yaml", "--verbose"]) == 0
    assert "skipped other/specgate.yaml: deleted" in capsys.readouterr().err


def test_file_names_after_other_options_count_as_changed(
    tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    # pre-commit appends file names after the hook's args: `--changed --format json F`
    assert main(["check", "--changed", "--format", "json", "other/specgate.yaml"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in report["files"]] == ["other/specgate.yaml"]


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("vllm serve.yaml", "'serving/vllm serve.yaml'"),
        ("it's.yaml", "'serving/it''s.yaml'"),
        ("a,b.yaml", '"serving/a,b.yaml"'),
        ("plain.yaml", "serving/plain.yaml   # the config"),
    ],
)
def test_odd_names_are_found(repo: Repo, name: str, written: str) -> None:
    repo.write(
        {
            "specgate.yaml": "version: 1\ndeployments:\n  - name: a\n    speculation:\n"
            f"      enabled: true\n      engine_config: {written}\n",
            f"serving/{name}": SERVE.format(d=3),
            "other.specgate.yaml": SELF_CONTAINED,
        }
    )
    found = affected([Path("serving") / name])
    assert [shown for _, shown in found.claims] == ["specgate.yaml"]


def test_an_options_file_a_launcher_names_selects_the_claims(repo: Repo) -> None:
    # deploy/serve.sh (the engine config) names configs/mtp.yaml through
    # trtllm-serve --extra_llm_api_options; the claims file never names mtp.yaml.
    repo.write(
        {
            "deploy/chat.specgate.yaml": (
                "version: 1\ndeployments:\n  - name: chat\n    speculation:\n"
                "      enabled: true\n      engine: trtllm\n      engine_config: serve.sh\n"
            ),
            "deploy/serve.sh": (
                "trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options configs/mtp.yaml\n"
            ),
            "deploy/configs/mtp.yaml": (
                "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n"
            ),
            "deploy/configs/unused.yaml": "speculative_config: {}\n",
            "other/specgate.yaml": SELF_CONTAINED,
        }
    )
    repo.commit()
    found = affected([Path("deploy/configs/mtp.yaml")])
    assert [shown for _, shown in found.claims] == ["deploy/chat.specgate.yaml"]
    assert found.ignored == []
    unused = affected([Path("deploy/configs/unused.yaml")])
    assert unused.claims == []
    assert unused.ignored == ["deploy/configs/unused.yaml"]


def test_an_engine_config_linked_out_of_the_repository_is_not_read(
    repo: Repo, tmp_path: Path
) -> None:
    # deploy/serve.sh is a symlink to a launcher outside the repository that names
    # configs/mtp.yaml: the lookup must not read it (check reports the escape itself),
    # so what the outside file says cannot choose the claims files to check.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "serve.sh").write_text(
        "trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options configs/mtp.yaml\n", "utf-8"
    )
    repo.write(
        {
            "deploy/chat.specgate.yaml": (
                "version: 1\ndeployments:\n  - name: chat\n    speculation:\n"
                "      enabled: true\n      engine: trtllm\n      engine_config: serve.sh\n"
            ),
            "deploy/configs/mtp.yaml": "speculative_config: {decoding_type: MTP}\n",
        }
    )
    (repo.root / "deploy" / "serve.sh").symlink_to(outside / "serve.sh")
    found = affected([Path("deploy/configs/mtp.yaml")])
    assert found.claims == []
    assert found.ignored == ["deploy/configs/mtp.yaml"]


def test_a_claims_file_linked_out_of_the_repository_is_not_read(
    repo: Repo, tmp_path: Path
) -> None:
    # Issue 18: the reverse lookup read a claims symlink's outside target, so whether the
    # outside file named the changed file decided what was checked (a one-bit oracle).
    outside = tmp_path / "outside.specgate.yaml"
    outside.write_text(
        "version: 1\ndeployments:\n  - name: x\n    model: {hf_config: m.json}\n", "utf-8"
    )
    repo.write({"m.json": MODEL})
    (repo.root / "leak.specgate.yaml").symlink_to(outside)
    found = affected([Path("m.json")])
    assert found.claims == [] and found.ignored == ["m.json"]
    assert [shown for shown, _ in found.skipped] == ["leak.specgate.yaml"]
    assert "leads out of the repository" in found.skipped[0][1]


def test_references_that_lead_out_are_not_matched_by_their_target(
    repo: Repo, tmp_path: Path
) -> None:
    # The changed file and a referenced file are both links to one outside file: real
    # paths would match, so the outside file would decide; only paths inside count.
    outside = tmp_path / "shared.json"
    outside.write_text(MODEL, "utf-8")
    claims = "version: 1\ndeployments:\n  - name: x\n    model: {hf_config: b.json}\n"
    repo.write({"c.specgate.yaml": claims})
    (repo.root / "a.json").symlink_to(outside)
    (repo.root / "b.json").symlink_to(outside)
    found = affected([Path("a.json")])
    assert found.claims == [] and found.ignored == ["a.json"]
    # a link inside the repository is still matched where it leads
    (repo.root / "b.json").unlink()
    (repo.root / "real.json").write_text(MODEL, "utf-8")
    (repo.root / "b.json").symlink_to("real.json")
    assert [shown for _, shown in affected([Path("b.json")]).claims] == ["c.specgate.yaml"]


@pytest.mark.parametrize("kind", ["yaml-block", "yaml-flow", "json", "json-in-string"])
def test_deep_launcher_values_are_input_errors_under_changed(
    repo: Repo, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # Issue 18: a deeply nested launcher value under --changed/--staged (the pre-commit
    # hook) was an internal error; now the lookup passes over it and check reports it
    # at its line (specgate.core.limits.MAX_NESTING).
    depth = 150
    if kind == "yaml-block":
        launcher = "command:\n" + "".join("  " * (i + 1) + "- a:\n" for i in range(depth))
        launcher += "  " * (depth + 1) + "- trtllm-serve\n"
    elif kind == "yaml-flow":
        launcher = "command: " + "[" * depth + "x" + "]" * depth + "\n"
    elif kind == "json":
        launcher = '{"command": ' + "[" * depth + '"x"' + "]" * depth + "}"
    else:
        launcher = "speculative_config: '" + '{"a": ' * depth + "1" + "}" * depth + "'\n"
    name = "serve.json" if kind == "json" else "serve.yaml"
    engine = "vllm" if kind == "json-in-string" else "trtllm"
    repo.write(
        {
            "c.specgate.yaml": "version: 1\ndeployments:\n  - name: d\n    speculation:\n"
            f"      enabled: true\n      engine: {engine}\n      engine_config: {name}\n",
            name: launcher,
        }
    )
    code = main(["check", "--changed", name])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "too deep" in out and f"{name}:" in out and "internal error" not in err
