"""Base parity (docs/change-gate.md#baseline): every file a reader follows at the head
is followed at the base revision by the same reader, the base revision's tree standing
in for the file system (:mod:`specgate.core.revision_tree`).

Each form below is committed, then read twice with no change: at the head (the
resolver on the work tree) and at ``HEAD`` (the base reader). The two readings are the
same deployment, field for field. Before the base read went through the readers' own
file access, a Compose ``.env`` and the requirement files beside a config were never
copied to the base, so a Compose deployment whose command takes its flags from ``.env``
was SG410 "not compared" and an AL cut passed with a warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.git_repo import Repo, Run, git

from specgate.change.baseline import open_baseline, read_base
from specgate.load.read import load_document
from specgate.model.build import build_deployment
from specgate.model.deployment import Deployment
from specgate.model.resolve import resolve

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
SPEC = (
    '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
)


def _claims(engine_config: str, al: float = 2.6) -> str:
    return (
        "version: 1\n"
        "deployments:\n"
        "  - name: chat\n"
        "    speculation:\n"
        "      enabled: true\n"
        "      engine: vllm\n"
        f"      engine_config: {engine_config}\n"
        "      draft_depth_ratio: 0.05\n"
        "    evidence:\n"
        "      cache_coherence_eval: true\n"
        f"      accept_length: {al}\n"
    )


# Compose fills ${VAR} from the .env beside the Compose file (Compose's documented
# interpolation: https://docs.docker.com/compose/how-tos/environment-variables/variable-interpolation/)
# The image's ENTRYPOINT is `vllm serve` (docs/engines.md#containers), so the command starts
# with the model: a command that repeats `vllm serve` is refused by vLLM (SG307).
COMPOSE = {
    "deploy/compose.yaml": (
        "services:\n"
        "  vllm:\n"
        "    image: vllm/vllm-openai:v0.32.0\n"
        '    command: ["${MODEL}", "--speculative-config", "${SPEC}",'
        ' "--max-model-len", "${MAXLEN}"]\n'
    ),
    "deploy/.env": f"MODEL={TARGET}\nSPEC={SPEC}\nMAXLEN=16384\n",
}

FORMS: dict[str, tuple[dict[str, str], str]] = {
    "compose-dotenv": (COMPOSE, "deploy/compose.yaml"),
    # the override file beside compose.yaml is merged in, `command` replaced by it
    # (Compose's override/merge.go, read by specgate.load.compose_files)
    "compose-override": (
        {
            "deploy/compose.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                f"    command: [{TARGET}]\n"
            ),
            "deploy/compose.override.yaml": (
                "services:\n  vllm:\n"
                f"    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
        },
        "deploy/compose.yaml",
    ),
    # `. ./x.env` before the flags: whatever the shell reader makes of the sourced file
    # at the head, it makes of it at the base
    "shell-sourcing": (
        {
            "serve/serve.sh": (
                ". ./serving.env\n"
                f"vllm serve {TARGET} --speculative-config '{SPEC}' --max-model-len 16384\n"
            ),
            "serve/serving.env": "PORT=8000\n",
        },
        "serve/serve.sh",
    ),
    # vllm serve --config FILE: the options file is followed (vllm/utils/argparse_utils.py)
    "vllm-config-yaml": (
        {
            "serve/serve.sh": f"vllm serve {TARGET} --config configs/spec.yaml\n",
            "serve/configs/spec.yaml": f"speculative-config: '{SPEC}'\nmax-model-len: 16384\n",
        },
        "serve/serve.sh",
    ),
    "kubernetes-manifest": (
        {
            "k8s/deploy.yaml": (
                "apiVersion: apps/v1\n"
                "kind: Deployment\n"
                "metadata:\n"
                "  name: chat\n"
                "spec:\n"
                "  template:\n"
                "    spec:\n"
                "      containers:\n"
                "        - name: server\n"
                "          image: vllm/vllm-openai:v0.27.1\n"
                "          args:\n"
                "            - vllm\n"
                "            - serve\n"
                f"            - {TARGET}\n"
                "            - --speculative-config\n"
                f"            - '{SPEC}'\n"
            )
        },
        "k8s/deploy.yaml",
    ),
    # a vLLM production-stack values file, rendered as its chart's template renders it
    "helm-values": (
        {
            "deploy/values.yaml": (
                "servingEngineSpec:\n"
                "  modelSpec:\n"
                "  - name: llama3\n"
                "    repository: vllm/vllm-openai\n"
                "    tag: v0.27.1\n"
                f"    modelURL: {TARGET}\n"
                "    vllmConfig:\n"
                "      maxModelLen: 16384\n"
                f"      extraArgs: ['--speculative-config', '{SPEC}']\n"
            )
        },
        "deploy/values.yaml",
    ),
    # the engine version from a requirement file beside the config (a folder listing)
    # docker compose run in a script, joined with its service (specgate.inputs.engines.
    # compose_run): the Compose file, its override and its .env are found at the base
    # as at the head; -f and --project-directory name them
    "compose-run": (
        {
            "deploy/compose.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n"
                f"    command: [{TARGET}]\n"
            ),
            "deploy/compose.override.yaml": (
                f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/.env": "TAG=v0.32.0\n",
            "deploy/serve.sh": "docker --context prod compose -p chat run --rm -e A=1 vllm\n",
        },
        "deploy/serve.sh",
    ),
    "compose-run-file": (
        {
            "deploy/serving.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                f"    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/serve.sh": "docker-compose -f serving.yaml run vllm\n",
        },
        "deploy/serve.sh",
    ),
    # a Compose project (docs/engines.md#containers): several -f files merged in order,
    # COMPOSE_FILE from the .env of the script's folder, a Compose file in a parent
    # folder with its override: each file found at the base as at the head
    "compose-run-files": (
        {
            "deploy/base.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                f"    command: [{TARGET}]\n"
            ),
            "deploy/prod.yaml": (
                f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/serve.sh": "docker compose -f base.yaml -f prod.yaml run vllm\n",
        },
        "deploy/serve.sh",
    ),
    # include: (compose-go loader/include.go): the included file, its project
    # directory's env_file and a nested include are found at the base as at the head
    "compose-include": (
        {
            "deploy/compose.yaml": (
                "include:\n  - path: ../shared/vllm.yaml\n    project_directory: ../shared\n"
                "services:\n  cache:\n    image: redis:7\n"
            ),
            "shared/vllm.yaml": (
                "include: [inner/more.yaml]\n"
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                "    env_file: vllm.env\n"
                f"    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "shared/vllm.env": "HF_HOME=/cache\n",
            "shared/inner/more.yaml": "services:\n  other:\n    image: busybox\n",
            "deploy/serve.sh": "docker compose up -d vllm\n",
        },
        "deploy/serve.sh",
    ),
    "compose-file-variable": (
        {
            "deploy/base.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n"
                f"    command: [{TARGET}]\n"
            ),
            "deploy/prod.yaml": (
                f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/.env": "COMPOSE_FILE=base.yaml:prod.yaml\nTAG=v0.32.0\n",
            "deploy/serve.sh": "docker compose run vllm\n",
        },
        "deploy/serve.sh",
    ),
    "compose-parent-folder": (
        {
            "compose.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                f"    command: [{TARGET}]\n"
            ),
            "compose.override.yaml": (
                f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/scripts/serve.sh": "docker compose run vllm\n",
        },
        "deploy/scripts/serve.sh",
    ),
    # docker compose up from a folder below: the project's files found up the folders
    "compose-up-parent": (
        {
            "deploy/compose.yaml": (
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
                f"    command: [{TARGET}]\n"
            ),
            "deploy/compose.override.yaml": (
                f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
            ),
            "deploy/scripts/up.sh": "docker compose up -d\n",
        },
        "deploy/scripts/up.sh",
    ),
    "requirements-beside": (
        {
            "serve/serve.sh": f"vllm serve {TARGET} --speculative-config '{SPEC}'\n",
            "serve/requirements.txt": "vllm==0.27.1\n",
        },
        "serve/serve.sh",
    ),
}


def _head(root: Path) -> Deployment:
    claims = root / "specgate.yaml"
    document = load_document(claims, "specgate.yaml")
    raw = document.data["deployments"][0]
    deployment, _ = build_deployment(raw, 0, document.scalar_text)
    deployment, _ = resolve(deployment, raw, document, claims)
    return deployment


@pytest.mark.parametrize("form", FORMS)
def test_every_reader_reads_the_same_deployment_at_the_base(repo: Repo, form: str) -> None:
    files, config = FORMS[form]
    repo.write({**files, "specgate.yaml": _claims(config)})
    repo.commit()
    head = _head(repo.root)
    found = read_base(open_baseline("HEAD", repo.root), repo.root / "specgate.yaml")
    assert found is not None and found.error is None and found.errors == {}
    assert found.deployments["chat"].deployment == head
    engine = head.inputs.engine if head.inputs else None
    assert engine is not None and engine.draft_length == 3  # num_speculative_tokens


def test_compose_dotenv_is_read_at_the_base(repo: Repo) -> None:
    # what .env settles is what both readings hold: D 3, the served 16384, the target
    repo.write({**COMPOSE, "specgate.yaml": _claims("deploy/compose.yaml")})
    repo.commit()
    found = read_base(open_baseline("HEAD", repo.root), repo.root / "specgate.yaml")
    assert found is not None
    inputs = found.deployments["chat"].deployment.inputs
    engine = inputs.engine if inputs else None
    assert engine is not None
    assert (engine.draft_length, engine.max_model_len, engine.target_model) == (3, 16384, TARGET)


def test_an_al_cut_on_a_compose_dotenv_deployment_fails(repo: Repo, run_json: Run) -> None:
    # AL 2.6 at HEAD, 2.0 now: (2.6 - 2.0) / 2.6 = 23.08 % > the default 5 % allowed
    # (docs/change-gate.md#baseline), no per-step histogram so no z test: SG401, exit 1.
    repo.write({**COMPOSE, "specgate.yaml": _claims("deploy/compose.yaml")})
    repo.commit()
    repo.write({"specgate.yaml": _claims("deploy/compose.yaml", al=2.0)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    found = report["files"][0]["deployments"][0]
    assert code == 1
    assert [f["code"] for f in found["findings"]] == ["SG401"]
    assert found["baseline"]["new"] is False and found["baseline"]["error"] is None
    assert found["baseline"]["delta_accept_length"] == pytest.approx(-0.6)
    assert "-23.0769 %" in found["findings"][0]["message"]


def test_sg410_never_asks_to_commit_a_file(repo: Repo, run_json: Run) -> None:
    # compose.yaml is committed but is no YAML at HEAD (an unclosed flow sequence): the
    # base cannot be edited, so the next action is to compare by hand, not to fix or
    # commit the file
    broken = {**COMPOSE, "deploy/compose.yaml": "services: [vllm\n"}
    repo.write({**broken, "specgate.yaml": _claims("deploy/compose.yaml")})
    repo.commit()
    repo.write({**COMPOSE})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    deployment = report["files"][0]["deployments"][0]
    assert code == 0 and [f["code"] for f in deployment["findings"]] == ["SG410"]
    (action,) = deployment["next_actions"]
    assert "commit" not in action.lower()
    assert action.startswith("HEAD is history and cannot be edited")


def test_a_compose_project_is_read_at_the_ref(repo: Repo) -> None:
    # --baseline REF reads every file of the project as REF holds it: at REF the -f
    # file prod.yaml sets num_speculative_tokens 3, now 5; the base reading says 3 and
    # the head 5, the files being merged the same way at both (docs/change-gate.md#baseline)
    files, config = FORMS["compose-file-variable"]
    repo.write({**files, "specgate.yaml": _claims(config)})
    ref = repo.commit()
    repo.write({"deploy/prod.yaml": files["deploy/prod.yaml"].replace(
        '"num_speculative_tokens":3', '"num_speculative_tokens":5')})
    repo.commit()
    head = _head(repo.root)
    head_engine = head.inputs.engine if head.inputs else None
    assert head_engine is not None and head_engine.draft_length == 5
    found = read_base(open_baseline(ref, repo.root), repo.root / "specgate.yaml")
    assert found is not None and found.error is None
    inputs = found.deployments["chat"].deployment.inputs
    engine = inputs.engine if inputs else None
    assert engine is not None and (engine.draft_length, engine.version) == (3, "0.32.0")


def test_check_at_a_ref_sees_a_compose_project_change(repo: Repo, run_json: Run) -> None:
    # `check --baseline REF`: the project `docker compose up` starts serves D 3 at REF
    # (prod.yaml's num_speculative_tokens) and D 5 now, with the AL evidence unchanged:
    # SG403 (docs/change-gate.md#sg403-evidence-stale-after-config-change), D 3 → 5
    files = {
        "deploy/base.yaml": (
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
            f"    command: [{TARGET}]\n"
        ),
        "deploy/prod.yaml": (
            f"services:\n  vllm:\n    command: [{TARGET}, --speculative-config, '{SPEC}']\n"
        ),
        "deploy/up.sh": "docker compose -f base.yaml -f prod.yaml up -d\n",
    }
    repo.write({**files, "specgate.yaml": _claims("deploy/up.sh")})
    ref = repo.commit()
    repo.write({"deploy/prod.yaml": files["deploy/prod.yaml"].replace(
        '"num_speculative_tokens":3', '"num_speculative_tokens":5')})
    repo.commit()
    _, report, _ = run_json("check", "--baseline", ref)
    found = report["files"][0]["deployments"][0]
    assert found["baseline"]["error"] is None and found["baseline"]["new"] is False
    sg403 = [f for f in found["findings"] if f["code"] == "SG403"]
    assert sg403 and "D 3 → 5" in sg403[0]["message"]


@pytest.mark.parametrize("folder", ["serve/draft", "draft"])
def test_a_local_assistant_folder_is_read_at_the_base(repo: Repo, folder: str) -> None:
    # from_pretrained("./draft") loads draft/generation_config.json (transformers 5.19.0
    # generation/utils.py adjust_generation_fn): its num_assistant_tokens 3 is D at the
    # head and at the base alike (specgate.load.assistant_folder), beside the script or
    # at the repository's top
    script = (
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f'tok = AutoTokenizer.from_pretrained("{TARGET}")\n'
        f'model = AutoModelForCausalLM.from_pretrained("{TARGET}")\n'
        'draft = AutoModelForCausalLM.from_pretrained("./draft")\n'
        'inputs = tok("Summarise the report.", return_tensors="pt")\n'
        "out = model.generate(**inputs, assistant_model=draft)\n"
    )
    own = '{"num_assistant_tokens": 3, "num_assistant_tokens_schedule": "constant"}\n'
    claims = _claims("serve/gen.py").replace(
        "engine: vllm", 'engine: transformers\n      engine_version: "5.19.0"'
    )
    repo.write({
        "serve/gen.py": script,
        f"{folder}/generation_config.json": own,
        "specgate.yaml": claims,
    })
    repo.commit()
    head = _head(repo.root)
    found = read_base(open_baseline("HEAD", repo.root), repo.root / "specgate.yaml")
    assert found is not None and found.error is None and found.errors == {}
    assert found.deployments["chat"].deployment == head
    engine = head.inputs.engine if head.inputs else None
    assert engine is not None and engine.draft_length == 3
    assert engine.draft_length_assumed is None and engine.draft_length_moves is None
    # the work tree's file changed, uncommitted: the base still reads REF's 3
    repo.write({f"{folder}/generation_config.json": own.replace("3", "4")})
    base = read_base(open_baseline("HEAD", repo.root), repo.root / "specgate.yaml")
    assert base is not None
    at_base = base.deployments["chat"].deployment.inputs
    assert at_base is not None and at_base.engine is not None
    now = _head(repo.root).inputs
    assert now is not None and now.engine is not None
    assert (at_base.engine.draft_length, now.engine.draft_length) == (3, 4)


# --- values not read at the base (docs/change-gate.md#sg410-and-sg412) ---------------------
#
# At the head each of these is a finding on the deployment (SG312 a form or model config
# not read, SG313 a value set outside the repository, SG314 one the repository sets in a
# way specgate does not follow, SG315 a count past the bound, SG307 a value not of its
# type), and the deployment is judged on what the claims file states. At REF a serving
# config value not read is judged the same way: chat is compared with REF (its AL 2.6
# read there), and its config, not known at REF, is never compared as "unset" (which
# gave SG403 "D unset → 3" with the same AL). A model config not read at REF leaves no G
# for the base's theory: that deployment is SG410 "not compared". The other deployment
# is compared either way: its AL cut 2.6 → 2.0 is SG401 ((2.6 − 2.0) / 2.6 = 23.08 % > 5 %).

GOOD = f"vllm serve {TARGET} --speculative-config '{SPEC}'\n"
UNREAD_AT_REF: dict[str, dict[str, str]] = {
    # a launcher of an engine specgate does not read (data/unread-launchers.json): SG312
    "form": {"chat/serve.sh": "ollama serve\n"},
    # SPEC set by no file specgate reads: the environment's (SG313)
    "outside": {"chat/serve.sh": f'vllm serve {TARGET} --speculative-config "$SPEC"\n'},
    # SPEC from a command substitution (SG314)
    "repository": {
        "chat/serve.sh": (
            f'SPEC=$(cat spec.json)\nvllm serve {TARGET} --speculative-config "$SPEC"\n'
        )
    },
    # 2,000 draft tokens, past specgate's bound of 1,024 (SG315)
    "bound": {
        "chat/serve.sh": GOOD.replace(
            '"num_speculative_tokens":3', '"num_speculative_tokens":2000'
        )
    },
    # `-tp four`, not an integer (SG307)
    "refused": {
        "chat/serve.sh": GOOD.replace("--speculative-config", "-tp four --speculative-config")
    },
    # a model config without a head count (SG312, docs/engines.md#model-config-not-read)
    "model-form": {"chat/t.json": '{"model_type": "llama", "hidden_size": 4096}\n'},
}


def _two(other_al: float) -> str:
    return (
        "version: 1\n"
        "deployments:\n"
        "  - name: chat\n"
        "    model: {hf_config: chat/t.json}\n"
        "    speculation: {enabled: true, engine: vllm, engine_config: chat/serve.sh,"
        " draft_depth_ratio: 0.05}\n"
        "    evidence: {cache_coherence_eval: true, accept_length: 2.6}\n"
        "  - name: other\n"
        "    speculation: {enabled: true, engine: vllm, engine_config: other/serve.sh,"
        " draft_depth_ratio: 0.05}\n"
        f"    evidence: {{cache_coherence_eval: true, accept_length: {other_al}}}\n"
    )


@pytest.mark.parametrize("kind", UNREAD_AT_REF)
def test_a_value_not_read_at_the_base_is_sg410_not_unset(
    repo: Repo, run_json: Run, kind: str
) -> None:
    good = {
        "chat/serve.sh": GOOD,
        "chat/t.json": '{"model_type": "llama", "num_attention_heads": 32, '
        '"num_key_value_heads": 8}\n',
        "other/serve.sh": GOOD,
    }
    repo.write({**good, **UNREAD_AT_REF[kind], "specgate.yaml": _two(2.6)})
    repo.commit()
    repo.write({**good, "specgate.yaml": _two(2.0)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    chat, other = report["files"][0]["deployments"]
    codes = [f["code"] for f in chat["findings"]]
    assert "SG403" not in codes
    if kind == "model-form":
        assert chat["baseline"]["error"] is not None and "SG410" in codes
    else:
        assert chat["baseline"]["error"] is None and chat["baseline"]["config_digest"] is None
        assert chat["baseline"]["accept_length"] == 2.6 and "SG410" not in codes
    assert other["baseline"]["error"] is None
    assert "SG401" in [f["code"] for f in other["findings"]]


def test_staged_reads_a_value_not_read_at_head_as_sg410(
    repo: Repo, run_json: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `check --staged` compares the index with HEAD through the same base reader: SPEC set
    # outside the repository at HEAD (SG313 there) is judged on the claims file's values
    # and compared (AL 2.6 at HEAD), never "D unset → 3" (SG403)
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)
    good = {
        "chat/serve.sh": GOOD,
        "chat/t.json": '{"model_type": "llama", "num_attention_heads": 32, '
        '"num_key_value_heads": 8}\n',
        "other/serve.sh": GOOD,
    }
    repo.write({**good, **UNREAD_AT_REF["outside"], "specgate.yaml": _two(2.6)})
    repo.commit()
    repo.write({**good, "specgate.yaml": _two(2.0)})
    git(repo.root, "add", "-A")
    _, report, _ = run_json("check", "--staged")
    chat, other = report["files"][0]["deployments"]
    codes = [f["code"] for f in chat["findings"]]
    assert chat["baseline"]["accept_length"] == 2.6
    assert "SG410" not in codes and "SG403" not in codes
    assert "SG401" in [f["code"] for f in other["findings"]]


def test_an_al_cut_behind_a_value_set_outside_is_sg401(repo: Repo, run_json: Run) -> None:
    # SPEC comes from the environment at both revisions (SG313 at each): the deployment is
    # judged on the claims file's mechanism and D 3, so its own AL cut 2.6 → 2.0 is SG401,
    # (2.6 − 2.0) / 2.6 = 23.08 % > 5 %; an SG410 there would let the regression through
    serve = f'vllm serve {TARGET} --speculative-config "$SPEC"\n'
    claims = (
        "version: 1\n"
        "deployments:\n"
        "  - name: chat\n"
        "    speculation: {enabled: true, engine: vllm, engine_config: chat/serve.sh,"
        " mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}\n"
        "    evidence: {cache_coherence_eval: true, accept_length: 2.6}\n"
    )
    repo.write({"chat/serve.sh": serve, "specgate.yaml": claims})
    repo.commit()
    repo.write({"specgate.yaml": claims.replace("2.6", "2.0")})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    (chat,) = report["files"][0]["deployments"]
    codes = sorted(f["code"] for f in chat["findings"])
    assert code == 1 and codes == ["SG313", "SG401"]
    assert chat["baseline"]["accept_length"] == 2.6
