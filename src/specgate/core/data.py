"""The package's data files (``specgate/data/``), read one way: by a path from here.

Every reader of shipped data (the claims-file schema, the GPU table, the engine
knowledge files, the starter claims file) asks this module, so a module that moves
never breaks a data path. The package is installed as files; ``importlib.resources``
would cost every command its imports (``zipfile``, ``tempfile``, ``random``) and
``pathlib`` the doctor's start-up, so the path is built with :mod:`os.path`.
"""

import os

#: The folder holding the package data, ``specgate/data``.
FOLDER = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")


def data_path(name: str) -> str:
    """The path of the data file ``name``, written with ``/`` (``"gpus.json"``,
    ``"engines/vllm.json"``)."""
    return os.path.join(FOLDER, *name.split("/"))


def read_data(name: str) -> str:
    """The text (UTF-8) of the data file ``name`` (see :func:`data_path`).

    Raises:
        OSError: no such data file (a broken install or an unknown name).
    """
    with open(data_path(name), encoding="utf-8") as handle:
        return handle.read()
