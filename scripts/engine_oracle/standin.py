"""An inert stand-in for a package whose wheel does not load beside the CPU torch.

SGLang's server_args import reaches ``torchvision.transforms`` through its multimodal
configs (sglang/srt/multimodal/internvl_utils.py); PyPI's torchvision fails to import
beside torch 2.13.0+cpu ("operator torchvision::nms does not exist", env notes). Config
resolution never calls it, so any attribute is an inert placeholder. Used only where the
real package is absent.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any


class _Inert:
    """Callable, subscriptable, attribute-bearing nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Inert:
        return _Inert()

    def __getattr__(self, name: str) -> _Inert:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __getitem__(self, key: Any) -> _Inert:
        return _Inert()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname == self.root or fullname.startswith(self.root + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _Module(spec.name)
        module.__path__ = []  # type: ignore[attr-defined]
        module.__version__ = "0.0.0+inert-stand-in"  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install(root: str) -> bool:
    """Put an inert ``root`` package on the import path unless the real one loads.

    Returns:
        True when the stand-in was installed.
    """
    if importlib.util.find_spec(root) is not None:
        try:
            __import__(root)
            return False
        except Exception:  # the real wheel is there but does not load
            for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
                del sys.modules[name]
    sys.meta_path.insert(0, _Finder(root))
    return True
