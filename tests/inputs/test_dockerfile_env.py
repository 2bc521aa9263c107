"""A Dockerfile's ``ENV`` is the environment of the image it builds (docs/engines.md
#environment-values): ``ENV SGLANG_ENABLE_SPEC_V2=1`` before ``CMD`` was not read (spec v2
read as off), ``ENV SGLANG_ENABLE_SPEC_V2=$V2`` is the build's (an ``ARG`` a
``--build-arg`` may override): unsettled, never its text.

Expected values are worked by hand from the Dockerfile reference
(https://docs.docker.com/reference/dockerfile/, "ENV": ``ENV MY_CAT=fluffy``, the older
``ENV MY_VAR my-value``, quotes removed; "FROM": the image is the last stage's); values
specgate does not follow (quotes with a blank, ``$``) must be unsettled, not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.rules.test_env_files import check
from tests.rules.test_environment_values import SGLANG_RUN, _sg307

from specgate.inputs.dockerfile_env import dockerfile_env, is_dockerfile


def _env(text: str) -> tuple[dict[str, str], set[str], bool]:
    files = dockerfile_env(text, "Dockerfile")
    values = {k: v for k, (v, _, _) in files.values.items()}
    return values, set(files.unsettled), files.opaque is not None


def test_the_reference_forms() -> None:
    values, unsettled, opaque = _env(
        "FROM busybox\nENV MY_CAT=fluffy\nENV MY_VAR my-value\nENV Q=\"1\" S='on'\n"
        "ENV MY_NAME=\"John Doe\"\nENV abc=hello\nENV abc=bye def=$abc\n"
        "ENV A=1 \\\n    B=2\n"
    )
    assert values == {"MY_CAT": "fluffy", "MY_VAR": "my-value", "Q": "1", "S": "on",
                      "abc": "bye", "A": "1", "B": "2"}
    # "John Doe" and def (hello, from the ENV before: not followed) are unsettled
    assert unsettled == {"MY_NAME", "def"} and not opaque


def test_only_the_last_stage_is_the_image() -> None:
    values, unsettled, opaque = _env("FROM x AS build\nENV A=1\nFROM y\nENV B=2\n")
    assert values == {"B": "2"} and not unsettled and not opaque
    # built from an earlier stage: its environment is not followed
    _, _, opaque = _env("FROM x AS base\nENV A=1\nFROM base\nENV B=2\n")
    assert opaque


def test_an_escape_directive_is_not_followed() -> None:
    assert _env("# escape=`\nFROM x\nENV A=1\n")[2]


@pytest.mark.parametrize("name", ["Dockerfile", "deploy/Dockerfile.gpu", "serve.Dockerfile",
                                  "Containerfile"])
def test_names(name: str) -> None:
    assert is_dockerfile(name)
    assert not is_dockerfile("docker-compose.yaml")


@pytest.mark.parametrize(("value", "expected"), [("1", ["fail"]), ("$V2", ["warn"]),
                                                 ("0", [])])
def test_sglang_reads_the_images_env(tmp_path: Path, value: str, expected: list[str]) -> None:
    dockerfile = (f"FROM lmsysorg/sglang:v0.5.7\nARG V2=1\nENV SGLANG_ENABLE_SPEC_V2={value}\n"
                  f"CMD {SGLANG_RUN}\n")
    _, dep = check(tmp_path, {"Dockerfile": dockerfile}, "Dockerfile")
    assert _sg307(dep) == expected
