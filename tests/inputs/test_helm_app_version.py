"""A chart's ``values.yaml`` that leaves ``image.tag`` empty runs the chart's
``appVersion`` where the chart's own template says so (docs/engines.md#versions).

Worked by hand from helm/helm ``pkg/chartutil/create.go``@0052fe64: ``helm create``'s
deployment template renders ``image: "{{ .Values.image.repository }}:{{ .Values.image.tag
| default .Chart.AppVersion }}"`` and its values set ``tag: ""``; sprig's ``default D V``
gives ``D`` for an empty or missing ``V``. A template that renders the tag otherwise, a
value handed whole to a helper, a non-string ``appVersion`` (``helm lint``: "appVersion
should be of type string") or a values file Helm does not read as the chart's defaults
leaves the tag unsettled: the image pins nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file

VALUES = """image:
  repository: vllm/vllm-openai
{tag}args:
  - "--model"
  - "meta-llama/Llama-3.1-8B-Instruct"
  - "--speculative-config"
  - '{{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}}'
"""
#: helm create's line (create.go@0052fe64)
CREATE = (
    '          image: "{{ .Values.image.repository }}:'
    '{{ .Values.image.tag | default .Chart.AppVersion }}"\n'
    "          imagePullPolicy: {{ .Values.image.pullPolicy }}\n"
)


def _chart(
    root: Path, template: str, *, app: str = '"v0.10.2"', tag: str = '  tag: ""\n',
    values: str = "values.yaml", folder: str = "chart",
) -> Path:
    (root / ".git").mkdir(exist_ok=True)
    chart = root / folder
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        f"apiVersion: v2\nname: c\nversion: 0.1.0\nappVersion: {app}\n", "utf-8"
    )
    (chart / "templates" / "deployment.yaml").write_text(template, "utf-8")
    (chart / values).write_text(VALUES.format(tag=tag), "utf-8")
    return chart / values


def _version(path: Path) -> tuple[str | None, str, str | None]:
    config = read_engine_file(path, path.name)
    return config.version, config.version_source, config.version_raw


@pytest.mark.parametrize(
    ("tag", "template"),
    [
        ('  tag: ""\n', CREATE),  # helm create's own values and template
        ("", CREATE),  # no tag: .Values.image.tag is nil, default gives appVersion
        ("  tag:\n", CREATE),  # null, the same
        # sprig's other order, and a helper in _helpers.tpl style with $.Values
        ('  tag: ""\n', '  image: "{{ .Values.image.repository }}:'
         '{{ default .Chart.AppVersion .Values.image.tag }}"\n'),
        ('  tag: ""\n', '{{- printf "%s:%s" $.Values.image.repository '
         "($.Values.image.tag | default .Chart.AppVersion) -}}\n"),
    ],
)
def test_the_app_version_is_the_tag_where_the_template_says_so(
    tmp_path: Path, tag: str, template: str
) -> None:
    assert _version(_chart(tmp_path, template, tag=tag)) == ("0.10.2", "image", "v0.10.2")


@pytest.mark.parametrize(
    ("template", "app", "values"),
    [
        # the tag rendered as it is: an empty tag renders "vllm/vllm-openai:"
        ('  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n',
         '"v0.10.2"', "values.yaml"),
        # the default form once, and the tag read another way elsewhere
        (CREATE + "{{- if .Values.image.tag }}x{{ end }}\n", '"v0.10.2"', "values.yaml"),
        # the whole mapping handed to a helper: how it renders the tag is not read
        (CREATE + '  image2: {{ include "c.image" .Values.image }}\n', '"v0.10.2"',
         "values.yaml"),
        # a YAML number: helm lint refuses it, and Go would print 0.1
        (CREATE, "0.10", "values.yaml"),
        (CREATE, '""', "values.yaml"),
        # an override file: the chart's values.yaml may set the tag it leaves out
        (CREATE, '"v0.10.2"', "values-prod.yaml"),
    ],
)
def test_otherwise_the_tag_is_unsettled(
    tmp_path: Path, template: str, app: str, values: str
) -> None:
    assert _version(_chart(tmp_path, template, app=app, values=values)) == (
        None, "assumed-newest", None
    )


def test_a_subchart_s_tag_is_unsettled(tmp_path: Path) -> None:
    # the parent chart's values may set sub.image.tag
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: p\nversion: 1.0.0\n", "utf-8")
    values = _chart(tmp_path, CREATE, folder="charts/sub")
    assert _version(values)[0] is None


def test_templates_outside_the_repository_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "templates").mkdir(parents=True)
    (outside / "templates" / "deployment.yaml").write_text(CREATE, "utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    values = _chart(repo, "", folder="chart")
    (values.parent / "templates" / "deployment.yaml").unlink()
    (values.parent / "templates").rmdir()
    os.symlink(outside / "templates", values.parent / "templates")
    assert _version(values)[0] is None


def test_a_pre_release_app_version_is_read_as_one(tmp_path: Path) -> None:
    # docs/engines.md#pre-releases: between 0.10.2 and 0.11.0 (vLLM's releases list)
    config = read_engine_file(_chart(tmp_path, CREATE, app='"v0.11.0rc1"'), "values.yaml")
    assert (config.version, config.version_source, config.version_raw) == (
        None, "image", "v0.11.0rc1"
    )
    assert config.implied_versions == {
        "from": "0.10.2", "before": "0.11.1", "newest_confirmed": "0.11.0"
    }


def test_a_nested_image_mapping(tmp_path: Path) -> None:
    # the container's args under server:, its image at server.image: the template names
    # .Values.server.image.tag (and never .Values.image.tag)
    nested = (
        "server:\n  image:\n    repository: vllm/vllm-openai\n    tag: \"\"\n  args:\n"
        '    - "--model"\n    - "m"\n    - "--speculative-config"\n'
        "    - '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'\n"
    )
    template = (
        '  image: "{{ .Values.server.image.repository }}:'
        '{{ .Values.server.image.tag | default .Chart.AppVersion }}"\n'
    )
    values = _chart(tmp_path, template)
    values.write_text(nested, "utf-8")
    assert _version(values) == ("0.10.2", "image", "v0.10.2")
    # the same chart rendering .Values.image.tag instead: not this mapping's tag
    (values.parent / "templates" / "deployment.yaml").write_text(CREATE, "utf-8")
    assert _version(values)[0] is None
