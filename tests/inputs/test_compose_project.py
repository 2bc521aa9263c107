"""Compose projects a ``docker compose run`` line reads: several ``-f`` files,
``COMPOSE_FILE``, ``--project-directory``, the parent-folder search.

Expectations worked by hand from ``docker/compose@v5.5.0`` ``cmd/compose/compose.go``
(``toProjectOptions``: the environment, then the working folder's ``.env``, then
``COMPOSE_FILE``, then the default names up the folders, then the ``.env`` again) and
``compose-spec/compose-go@e70e961c`` (``cli/options.go``: ``WithConfigFileEnv`` splits
``COMPOSE_FILE`` at ``COMPOSE_PATH_SEPARATOR``, ``:`` on Linux; ``WithDefaultConfigPath``
adds the override file only when no file is named and climbs to the parent folders;
``loader/loader.go``: files merged in order, ``command`` replaced and ``environment``
joined by ``override/merge.go``). ``docker-compose config`` 1.29 gives the same model
for each project here (``tests/oracle/test_compose_project_oracle.py`` compares the
merged files with it). The image ``vllm/vllm-openai`` runs ``vllm serve`` (its
Dockerfile's ENTRYPOINT, image-entrypoints.json).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file
from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document

BASE = """\
services:
  vllm:
    image: vllm/vllm-openai:${TAG:-v0.26.0}
    command: [/models/base, --x]
    environment: [A=1, B=1]
"""
PROD = """\
services:
  vllm:
    command: [/models/prod]
    environment: [B=2]
"""
OVERRIDE = "services:\n  vllm:\n    command: [/models/override]\n"


def _joined(top: Path, files: dict[str, str], script: str = "serve.sh") -> object:
    (top / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text, "utf-8")
    path = top / script
    doc = load_engine_document(path, script)
    *_, source = commands_of(doc.data, doc, (), doc.data)
    return in_container(source, path)


def _argv_env(joined: object) -> tuple[tuple[str, ...], dict[str, str], str | None]:
    assert isinstance(joined, Joined)
    return joined.command.argv, dict(joined.command.env.items()), joined.image


PROD_RUN = (("vllm", "serve", "/models/prod"), {"A": "1", "B": "2"}, "vllm/vllm-openai:v0.26.0")
BASE_RUN = (("vllm", "serve", "/models/base", "--x"), {"A": "1", "B": "1"},
            "vllm/vllm-openai:v0.26.0")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # two -f files merged in order: prod's command replaces, its environment joins
        ({"serve.sh": "docker compose -f base.yaml -f prod.yaml run vllm\n"}, PROD_RUN),
        # the order decides: base last, its command wins, its B=1 after prod's B=2
        ({"serve.sh": "docker compose -f prod.yaml -f base.yaml run vllm\n"}, BASE_RUN),
        # COMPOSE_FILE in the .env of the script's folder, split at ':'
        ({".env": "COMPOSE_FILE=base.yaml:prod.yaml\n",
          "serve.sh": "docker compose run vllm\n"}, PROD_RUN),
        # COMPOSE_PATH_SEPARATOR changes the separator
        ({".env": "COMPOSE_PATH_SEPARATOR=,\nCOMPOSE_FILE=base.yaml,prod.yaml\n",
          "serve.sh": "docker compose run vllm\n"}, PROD_RUN),
        # the script's exported COMPOSE_FILE wins over the .env's
        ({".env": "COMPOSE_FILE=base.yaml\n",
          "serve.sh": "export COMPOSE_FILE=base.yaml:prod.yaml\ndocker compose run vllm\n"},
         PROD_RUN),
        ({"serve.sh": "COMPOSE_FILE=base.yaml:prod.yaml docker compose run vllm\n"}, PROD_RUN),
        # -f wins over COMPOSE_FILE
        ({".env": "COMPOSE_FILE=base.yaml:prod.yaml\n",
          "serve.sh": "docker compose -f base.yaml run vllm\n"}, BASE_RUN),
    ],
)
def test_several_files(
    tmp_path: Path, files: dict[str, str], expected: tuple[object, ...]
) -> None:
    joined = _joined(tmp_path, {"base.yaml": BASE, "prod.yaml": PROD, **files})
    assert _argv_env(joined) == expected


def test_a_named_default_file_is_read_without_its_override(tmp_path: Path) -> None:
    files = {"compose.yaml": BASE, "compose.override.yaml": OVERRIDE}
    named = _joined(tmp_path, {**files, "serve.sh": "docker compose -f compose.yaml run vllm\n"})
    assert _argv_env(named) == BASE_RUN
    # not named: found by its name, with the override beside it
    found = _joined(tmp_path, {**files, "serve.sh": "docker compose run vllm\n"})
    assert _argv_env(found)[0] == ("vllm", "serve", "/models/override")
    # COMPOSE_FILE names it too: no override
    listed = _joined(tmp_path, {**files, ".env": "COMPOSE_FILE=compose.yaml\n",
                                "serve.sh": "docker compose run vllm\n"})
    assert _argv_env(listed) == BASE_RUN


def test_the_compose_file_of_a_parent_folder(tmp_path: Path) -> None:
    files = {"compose.yaml": BASE, "compose.override.yaml": PROD,
             "scripts/serve.sh": "docker compose run vllm\n"}
    assert _argv_env(_joined(tmp_path, files, "scripts/serve.sh")) == PROD_RUN


def test_no_compose_file_above_the_repository_top(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(BASE, "utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    joined = _joined(repo, {"serve.sh": "docker compose run vllm\n"})
    assert not isinstance(joined, Joined)


def test_project_directory_and_env(tmp_path: Path) -> None:
    files = {
        "deploy/compose.yaml": BASE,
        "deploy/.env": "TAG=v0.27.1\n",
        ".env": "TAG=v0.9.0\n",
    }
    # --project-directory: the default file and the .env are deploy's
    joined = _joined(tmp_path, {**files, "serve.sh":
                                "docker compose --project-directory deploy run vllm\n"})
    assert _argv_env(joined)[2] == "vllm/vllm-openai:v0.27.1"
    # -f deploy/compose.yaml: the working folder is the file's, so is its .env
    joined = _joined(tmp_path, {**files, "serve.sh":
                                "docker compose -f deploy/compose.yaml run vllm\n"})
    assert _argv_env(joined)[2] == "vllm/vllm-openai:v0.27.1"
    # -f is taken from the current folder, not the project directory: .env is deploy's
    joined = _joined(tmp_path, {**files, "b.yaml": BASE, "serve.sh":
                                "docker compose --project-directory deploy -f b.yaml run vllm\n"})
    assert _argv_env(joined)[2] == "vllm/vllm-openai:v0.27.1"
    # the script's exported TAG wins over every .env
    script = "export TAG=v0.30.0\ndocker compose -f deploy/compose.yaml run vllm\n"
    joined = _joined(tmp_path, {**files, "serve.sh": script})
    assert _argv_env(joined)[2] == "vllm/vllm-openai:v0.30.0"


def test_a_file_found_up_reads_both_env_files(tmp_path: Path) -> None:
    # the .env of the current folder first, then the found file's folder's: the first to
    # set a name keeps it (compose-go Mapping.Merge)
    files = {"compose.yaml": BASE.replace("[A=1, B=1]", "[\"A=${A}\", \"B=${B}\"]"),
             ".env": "A=top\nB=top\n", "scripts/.env": "A=here\n",
             "scripts/serve.sh": "docker compose run vllm\n"}
    _, env, _ = _argv_env(_joined(tmp_path, files, "scripts/serve.sh"))
    assert env == {"A": "here", "B": "top"}


@pytest.mark.parametrize(
    "script",
    [
        'docker compose -f base.yaml -f "$PROD_FILE" run vllm\n',
        "export COMPOSE_FILE=$CF\ndocker compose run vllm\n",
        "docker compose --env-file prod.env -f base.yaml run vllm\n",  # .env replaced
        "docker compose -f oci://registry/app:1 run vllm\n",  # a remote file
        # a variable the script sets to a value it does not settle: not .env's
        "export TAG=$RELEASE\ndocker compose -f base.yaml run vllm\n",
    ],
)
def test_what_is_not_followed_stays_as_written(tmp_path: Path, script: str) -> None:
    joined = _joined(tmp_path, {"base.yaml": BASE, "prod.yaml": PROD, "serve.sh": script})
    assert not isinstance(joined, Joined)


CLAIMS = (
    "version: 1\ndeployments:\n  - name: d\n    model: {name: org/m}\n"
    "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
    " engine_config: serve.sh}\n"
)


@pytest.mark.parametrize(
    ("script", "what"),
    [
        ('docker compose -f base.yaml -f "$PROD_FILE" run vllm\n', "PROD_FILE"),
        ("export COMPOSE_FILE=$CF\ndocker compose run vllm\n", "COMPOSE_FILE"),
    ],
)
def test_files_named_from_outside_are_sg313(tmp_path: Path, script: str, what: str) -> None:
    (tmp_path / ".git").mkdir()
    for name, text in {"base.yaml": BASE, "serve.sh": script, "c.specgate.yaml": CLAIMS}.items():
        (tmp_path / name).write_text(text, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    findings = report.deployments[0].findings
    sg313 = [f for f in findings if f.code == "SG313"]
    assert sg313 and what in sg313[0].message
    assert not any(f.code in ("SG312", "SG314") for f in findings)


# docker compose up: the project's model is read as a Compose file named by the claims
# file (docs/engines.md#containers); the speculative flags here are vLLM's
# --speculative-config, D its num_speculative_tokens
NGRAM = '{{"method": "ngram", "num_speculative_tokens": {}, "prompt_lookup_max": 4}}'
SPEC_BASE = f"""\
services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
    command: [/models/m, --speculative-config, '{NGRAM.format(3)}']
"""
SPEC_PROD = f"""\
services:
  vllm:
    command: [/models/m, --speculative-config, '{NGRAM.format(5)}']
"""


def _read(top: Path, files: dict[str, str], script: str = "serve.sh") -> object:
    from specgate.core.errors import InputError
    from specgate.inputs.engines import read_engine_file

    (top / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text, "utf-8")
    try:
        return read_engine_file(top / script, script)
    except InputError as exc:
        return exc


@pytest.mark.parametrize(
    ("files", "script", "draft_length", "path"),
    [
        # the -f files merged in order: prod's command replaces base's (D 5)
        ({"base.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD,
          "serve.sh": "docker compose -f base.yaml -f prod.yaml up -d\n"},
         "serve.sh", 5, "base.yaml"),
        ({"base.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD,
          "serve.sh": "docker-compose -f prod.yaml -f base.yaml up\n"},
         "serve.sh", 3, "prod.yaml"),
        # COMPOSE_FILE in the .env
        ({"base.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD,
          ".env": "COMPOSE_FILE=base.yaml:prod.yaml\n", "serve.sh": "docker compose up\n"},
         "serve.sh", 5, "base.yaml"),
        # run from a folder without a Compose file: the parent folder's, with its override
        ({"compose.yaml": SPEC_BASE, "compose.override.yaml": SPEC_PROD,
          "deploy/up.sh": "set -e\ndocker compose up -d vllm\n"},
         "deploy/up.sh", 5, "compose.yaml"),
        # -f names the default file: read alone, no override
        ({"compose.yaml": SPEC_BASE, "compose.override.yaml": SPEC_PROD,
          "serve.sh": "docker compose -f compose.yaml up\n"},
         "serve.sh", 3, "compose.yaml"),
    ],
)
def test_up_reads_the_project(
    tmp_path: Path, files: dict[str, str], script: str, draft_length: int, path: str
) -> None:
    config = _read(tmp_path, files, script)
    from specgate.inputs.types import EngineConfig

    assert isinstance(config, EngineConfig), config
    assert (config.engine, config.draft_length, config.path) == ("vllm", draft_length, path)
    assert config.version == "0.26.0"
    assert any("docker compose up" in note for note in config.notes)


@pytest.mark.parametrize(
    "files",
    [
        # no Compose file up to the repository's top
        {"serve.sh": "docker compose up\n"},
        # two services with different configurations: `up` with no name starts both
        {"compose.yaml": SPEC_BASE + SPEC_PROD.replace("services:\n  vllm:\n", "  other:\n")
         .replace("    command", "    image: vllm/vllm-openai:v0.26.0\n    command"),
         "serve.sh": "docker compose up\n"},
        # two up lines starting different projects
        {"base.yaml": SPEC_BASE, "prod.yaml": SPEC_BASE,
         "serve.sh": "docker compose -f base.yaml up -d\ndocker compose -f prod.yaml up -d\n"},
    ],
)
def test_up_not_read(tmp_path: Path, files: dict[str, str]) -> None:
    from specgate.core.errors import InputError

    found = _read(tmp_path, files)
    assert isinstance(found, InputError) and "no speculative decoding" in found.reason


def test_up_with_files_from_outside_is_sg313(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    files = {"base.yaml": SPEC_BASE, "c.specgate.yaml": CLAIMS,
             "serve.sh": 'docker compose -f base.yaml -f "$OVERLAY" up -d\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    codes = [f.code for f in report.deployments[0].findings]
    assert "SG313" in codes and "SG312" not in codes and "SG301" not in codes


def test_up_d_is_checked_against_the_claims_file(tmp_path: Path) -> None:
    # the claims file says D 4; the project serves 5 (prod.yaml's): SG301
    (tmp_path / ".git").mkdir()
    files = {"base.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD, "c.specgate.yaml": CLAIMS,
             "serve.sh": "docker compose -f base.yaml -f prod.yaml up -d\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    (sg301,) = [f for f in report.deployments[0].findings if f.code == "SG301"]
    assert "says 4" in sg301.message and "5" in sg301.message


def test_compose_file_paths_are_taken_from_the_current_folder(tmp_path: Path) -> None:
    # compose-go cli/options.go WithConfigFileEnv: filepath.Abs of each COMPOSE_FILE
    # path, i.e. from the folder docker compose runs in, not --project-directory's
    files = {"deploy/base.yaml": BASE, "deploy/prod.yaml": PROD,
             "deploy/.env": "COMPOSE_FILE=deploy/base.yaml:deploy/prod.yaml\n",
             "serve.sh": "docker compose --project-directory deploy run vllm\n"}
    assert _argv_env(_joined(tmp_path, files)) == PROD_RUN
    # the same names taken from deploy/ would be deploy/deploy/…: nothing there
    files["deploy/.env"] = "COMPOSE_FILE=base.yaml:prod.yaml\n"
    assert not isinstance(_joined(tmp_path, files), Joined)


def test_files_the_repository_names_in_a_way_not_followed_are_sg314(tmp_path: Path) -> None:
    # $(…) is the script's own text, not run: the repository sets the file, specgate
    # cannot follow it (docs/engines.md#unsettled-values)
    (tmp_path / ".git").mkdir()
    script = 'F=$(ls deploy/*.yaml | head -1)\ndocker compose -f "$F" up -d\n'
    for name, text in {"base.yaml": BASE, "serve.sh": script, "c.specgate.yaml": CLAIMS}.items():
        (tmp_path / name).write_text(text, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    codes = [f.code for f in report.deployments[0].findings]
    assert "SG314" in codes and "SG312" not in codes and "SG313" not in codes


# A Compose file the claims file names is the model `docker compose` builds in its folder:
# COMPOSE_FILE in the .env beside it lists the files (docker-compose 1.29 `config` in that
# folder gives D 5 for the first case: checked by hand)
@pytest.mark.parametrize(
    ("dotenv", "draft_length"),
    [
        ("COMPOSE_FILE=compose.yaml:prod.yaml\n", 5),  # listed first: prod merged over it
        ("COMPOSE_FILE=prod.yaml:compose.yaml\n", 3),  # listed last: it wins
        ("COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE=compose.yaml;prod.yaml\n", 5),
        ("TAG=x\n", 7),  # no COMPOSE_FILE: the override file beside it
    ],
)
def test_a_named_compose_file_with_compose_file_in_env(
    tmp_path: Path, dotenv: str, draft_length: int
) -> None:
    override = SPEC_PROD.replace('"num_speculative_tokens": 5', '"num_speculative_tokens": 7')
    files = {"compose.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD,
             "compose.override.yaml": override, ".env": dotenv}
    config = _read(tmp_path, files, "compose.yaml")
    from specgate.inputs.types import EngineConfig

    assert isinstance(config, EngineConfig), config
    assert config.draft_length == draft_length


def test_a_named_compose_file_compose_does_not_read_there(tmp_path: Path) -> None:
    from specgate.core.errors import UnreadForm
    from specgate.inputs.types import EngineConfig

    files = {"compose.yaml": SPEC_BASE, "prod.yaml": SPEC_PROD,
             ".env": "COMPOSE_FILE=prod.yaml\n"}
    # not listed, no override beside it: alone or not, the model is the same (D 3)
    config = _read(tmp_path, files, "compose.yaml")
    assert isinstance(config, EngineConfig) and config.draft_length == 3
    # with an override beside it: alone (D 3) or with it (D 5) is not known
    (tmp_path / "compose.override.yaml").write_text(SPEC_PROD, "utf-8")
    assert isinstance(_read(tmp_path, files, "compose.yaml"), UnreadForm)


def test_up_of_a_project_without_speculation_leaves_the_script_s_reading(
    tmp_path: Path,
) -> None:
    # `up` starts a database: the script's own message stands, not the project's
    from specgate.core.errors import InputError

    files = {"compose.yaml": "services:\n  db:\n    image: postgres:16\n",
             "serve.sh": "docker compose up -d db\n"}
    found = _read(tmp_path, files)
    assert isinstance(found, InputError)
    assert found.reason.startswith("no speculative decoding configured in serve.sh")


def test_a_dotenv_that_changes_the_env_files_is_not_followed(tmp_path: Path) -> None:
    # docker/compose cmd/compose/compose.go@v5.5.0 setEnvWithDotEnv: the .env's COMPOSE_*
    # variables are set in Compose's own environment, COMPOSE_DISABLE_ENV_FILE with them
    files = {"base.yaml": BASE, ".env": "COMPOSE_DISABLE_ENV_FILE=1\nTAG=v0.27.1\n",
             "serve.sh": "docker compose -f base.yaml run vllm\n"}
    assert not isinstance(_joined(tmp_path, files), Joined)


def test_an_override_of_an_extended_service_does_not_reach_the_extending_one(
    tmp_path: Path,
) -> None:
    # compose-go loader/loader.go@e70e961c applies each file's extends within it before
    # merging the next (a maintainer says the same of docker-compose 1:
    # docker/compose#3843); docker-compose 1.29 `config` gives vllm D 3, base D 5.
    # specgate read D 5 for vllm before: the override was merged before extends.
    from specgate.inputs.engines.read import load_engine_document

    (tmp_path / ".git").mkdir()
    base = SPEC_BASE.replace("  vllm:\n", "  base:\n") + "  vllm:\n    extends: base\n"
    over = SPEC_PROD.replace("  vllm:\n", "  base:\n")
    (tmp_path / "compose.yaml").write_text(base, "utf-8")
    (tmp_path / "compose.override.yaml").write_text(over, "utf-8")
    services = load_engine_document(tmp_path / "compose.yaml", "compose.yaml").data["services"]
    assert services["vllm"]["command"][2] == NGRAM.format(3)
    assert services["base"]["command"][2] == NGRAM.format(5)


@pytest.mark.parametrize(
    ("script", "joined"),
    [
        # cd to the script's own folder: where it is read as run from anyway
        ('cd "$(dirname "$0")"\ndocker compose run vllm\n', True),
        ('cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1\ndocker compose run vllm\n', True),
        # anywhere else (or maybe, in a branch): the folder Compose starts from is not
        # known, and from deploy/ it would find deploy/compose.yaml, not compose.yaml
        ("cd deploy\ndocker compose run vllm\n", False),
        ("cd deploy && docker compose run vllm\n", False),
        ("if [ -d deploy ]; then cd deploy; fi\ndocker compose run vllm\n", False),
        ("pushd deploy\ndocker compose run vllm\n", False),
        ("sh -c 'cd deploy && docker compose run vllm'\n", False),
    ],
)
def test_a_script_that_changes_its_folder(tmp_path: Path, script: str, joined: bool) -> None:
    files = {"compose.yaml": BASE, "deploy/compose.yaml": PROD.replace(
        "  vllm:\n", "  vllm:\n    image: vllm/vllm-openai:v0.26.0\n"), "serve.sh": script}
    found = _joined(tmp_path, files)
    assert isinstance(found, Joined) is joined
    if joined:
        assert _argv_env(found) == BASE_RUN


def test_up_after_cd_is_not_read(tmp_path: Path) -> None:
    from specgate.core.errors import InputError

    files = {"compose.yaml": SPEC_BASE, "deploy/compose.yaml": SPEC_PROD.replace(
        "  vllm:\n", "  vllm:\n    image: vllm/vllm-openai:v0.26.0\n"),
        "serve.sh": "cd deploy\ndocker compose up -d\n"}
    found = _read(tmp_path, files)
    assert isinstance(found, InputError) and "no speculative decoding" in found.reason


def test_a_listed_file_the_repository_leaves_out_is_sg312(tmp_path: Path) -> None:
    # COMPOSE_FILE=compose.yaml:compose.local.yaml with the local file not committed:
    # Compose stops there; the deployment is not read (SG312), the run goes on
    (tmp_path / ".git").mkdir()
    files = {"compose.yaml": SPEC_BASE, ".env": "COMPOSE_FILE=compose.yaml:compose.local.yaml\n",
             "c.specgate.yaml": CLAIMS.replace("serve.sh", "compose.yaml")}
    for name, text in files.items():
        (tmp_path / name).write_text(text, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    (sg312,) = [f for f in report.deployments[0].findings if f.code == "SG312"]
    assert "compose.local.yaml" in sg312.message


# `up` starts no service its profiles keep off (no profile active) nor one scaled to 0
# (Compose specification 05-services.md: profiles, scale, deploy.replicas)
GATED = SPEC_BASE + SPEC_PROD.replace("services:\n  vllm:\n", "  spec:\n").replace(
    "    command", "    image: vllm/vllm-openai:v0.26.0\n    profiles: [spec]\n    command")


@pytest.mark.parametrize(
    ("files", "draft_length"),
    [
        # the profile-gated `spec` service (D 5) is not started: `vllm` (D 3) is
        ({"compose.yaml": GATED, "serve.sh": "docker compose up -d\n"}, 3),
        # scaled to 0: not started
        ({"compose.yaml": GATED.replace("profiles: [spec]", "scale: 0"),
          "serve.sh": "docker compose up -d\n"}, 3),
        ({"compose.yaml": GATED.replace("profiles: [spec]", "deploy: {replicas: 0}"),
          "serve.sh": "docker compose up -d\n"}, 3),
        # only the gated service speculates: what up starts configures nothing
        ({"compose.yaml": GATED.replace(SPEC_BASE, "services:\n  vllm:\n    image: x\n"),
          "serve.sh": "docker compose up -d\n"}, None),
        # a profile may be active, or words after up may name the gated service: not known
        ({"compose.yaml": GATED, "serve.sh": "docker compose --profile spec up -d\n"}, None),
        ({"compose.yaml": GATED, ".env": "COMPOSE_PROFILES=spec\n",
          "serve.sh": "docker compose up -d\n"}, None),
        # `up spec` starts the named service, its profile enabled (cmd/compose/up.go@v5.5.0
        # → pkg/compose/loader.go postProcessProject: WithServicesEnabled, then
        # WithSelectedServices): D 5; `up vllm` starts vllm alone: D 3
        ({"compose.yaml": GATED, "serve.sh": "docker compose up -d spec\n"}, 5),
        ({"compose.yaml": GATED, "serve.sh": "docker compose up vllm -d\n"}, 3),
        ({"compose.yaml": GATED.replace("profiles: [spec]", "scale: 0"),
          "serve.sh": "docker compose up -d --scale=spec=1\n"}, None),
    ],
)
def test_up_reads_the_services_it_starts(
    tmp_path: Path, files: dict[str, str], draft_length: int | None
) -> None:
    from specgate.core.errors import InputError
    from specgate.inputs.types import EngineConfig

    found = _read(tmp_path, files)
    if draft_length is None:
        assert isinstance(found, InputError) and "no speculative decoding" in found.reason
    else:
        assert isinstance(found, EngineConfig) and found.draft_length == draft_length


@pytest.mark.parametrize(
    "script",
    [
        # podman-compose reads COMPOSE_FILE (and COMPOSE_PROJECT_DIR) from its environment
        # (podman_compose.py@v1.6.0, _parse_compose_file): not followed there
        "export COMPOSE_FILE=prod.yaml\npodman-compose run vllm\n",
        "COMPOSE_PROJECT_DIR=deploy podman-compose run vllm\n",
        # podman compose runs either provider: docker-compose reads prod.yaml, podman-compose
        # is not followed, so the command is not known
        "export COMPOSE_FILE=compose.yaml:prod.yaml\npodman compose run vllm\n",
    ],
)
def test_podman_compose_with_compose_variables(tmp_path: Path, script: str) -> None:
    files = {"compose.yaml": BASE, "prod.yaml": PROD, "serve.sh": script}
    assert not isinstance(_joined(tmp_path, files), Joined)


def test_docker_compose_1_and_2_read_other_env_files(tmp_path: Path) -> None:
    # from scripts/, with compose.yaml and .env in the folder above: Compose 2 reads that
    # .env (compose-go WithEnvFiles a second time), docker-compose 1.29 does not (its
    # `config` there leaves ${TAG} empty): `docker-compose` may be either
    files = {"compose.yaml": BASE.replace("${TAG:-v0.26.0}", "${TAG}"), ".env": "TAG=v0.27.1\n",
             "scripts/a.sh": "docker compose run vllm\n",
             "scripts/b.sh": "docker-compose run vllm\n"}
    assert _argv_env(_joined(tmp_path, files, "scripts/a.sh"))[2] == "vllm/vllm-openai:v0.27.1"
    assert not isinstance(_joined(tmp_path, files, "scripts/b.sh"), Joined)


def test_up_lines_one_of_them_after_cd(tmp_path: Path) -> None:
    # the second `up` starts deploy/'s project, which is not followed: neither is read
    from specgate.core.errors import InputError

    files = {"compose.yaml": SPEC_BASE, "deploy/compose.yaml": SPEC_BASE,
             "serve.sh": "docker compose up -d\ncd deploy\ndocker compose up -d\n"}
    found = _read(tmp_path, files)
    assert isinstance(found, InputError) and "no speculative decoding" in found.reason
