"""The licence the package declares is the file it ships.

pyproject.toml says ``license = "Apache-2.0"`` (an SPDX expression, PEP 639); the text is
``LICENSE`` at the root, named by ``license-files`` so that the wheel and the sdist carry
it (``License-File: LICENSE`` in the core metadata).
"""

from __future__ import annotations

import hashlib
import sys
from importlib import metadata
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
#: MD5 of the unmodified Apache License 2.0 text as apache.org publishes it
#: (https://www.apache.org/licenses/LICENSE-2.0.txt): the checksum Yocto/OpenEmbedded
#: recipes pin for Apache-2.0 LICENSE files (e.g. python3-calver, onnx, stevedore),
#: and the md5 of Debian's /usr/share/common-licenses/Apache-2.0, which LICENSE copies.
APACHE_2_0_MD5 = "3b83ef96387f14655fc854ddc3c6bd57"


def test_license_is_the_unmodified_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.md5(text).hexdigest() == APACHE_2_0_MD5
    assert b"Apache License\n                           Version 2.0, January 2004" in text


def test_pyproject_names_the_licence_and_its_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]


def test_the_installed_metadata_carries_the_licence_file() -> None:
    # The README's test command installs the project (pip install -e), whose build
    # backend (setuptools >= 77, PEP 639) writes the core metadata from pyproject.toml.
    dist = metadata.distribution("specdec-gate")
    assert dist.metadata.get_all("License-Expression") == ["Apache-2.0"]
    assert dist.metadata.get_all("License-File") == ["LICENSE"]
    shipped = [f for f in dist.files or () if f.name == "LICENSE"]
    assert len(shipped) == 1
    assert hashlib.md5(shipped[0].read_binary()).hexdigest() == APACHE_2_0_MD5
