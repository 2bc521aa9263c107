"""Ask SGLang itself: ``prepare_server_args(argv + ["--device", "cuda"])``, ``resolve_once()``,
``resolved_dict()`` (sglang 0.5.23: python/sglang/srt/server_args.py and the resolution
pipeline sglang/srt/arg_groups/, speculative handlers in arg_groups/speculative_hook.py).

``prepare_server_args`` alone returns the input unresolved; resolution runs the
speculative handlers (defaults, rewrites, refusals). Releases before ``resolve_once``
(0.5.18 and older: ``ServerArgs.__post_init__`` runs ``_run_resolution_pipeline``,
python/sglang/srt/server_args.py at v0.5.18) resolve while ``prepare_server_args``
builds the object: there the recorder builds it with ``__post_init__`` held back, records
the fields as parsed, then runs that release's own ``__post_init__`` as the resolve stage.
``--device cuda`` answers as on a GPU host; each case also runs with ``--device cpu``
and, where that answer differs, keeps it as ``cpu_answer`` (``--device cpu`` refuses
DFLASH, DSPARK and UNO outright: SOURCES.md).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from engine_oracle import standin

STANDIN = standin.install("torchvision")


def _sglang_release() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(p) for p in version("sglang").split(".")[:3] if p.isdigit())


#: SGLang 0.5.8.post1 and older import sgl_kernel (a CUDA kernel wheel, absent here) on
#: the way to resolution (sglang/srt/layers/moe/moe_runner/deep_gemm.py at module level:
#: every case answered "No module named 'sgl_kernel'"); resolution calls none of it. Later
#: releases do not import it there, so they run without the stand-in, as recorded.
SGL_KERNEL_STANDIN = _sglang_release() < (0, 5, 9) and standin.install("sgl_kernel")
#: SGLang 0.4.10.post2 and older import vllm._custom_ops (vLLM's compiled GPU kernels) at
#: module level in sglang/srt/layers/quantization/fp8.py:101-102 on a host that is neither
#: CUDA, NPU, HIP nor a CPU with SGLang's AMX backend (this one: every case answered "No
#: module named 'vllm'"); a GPU host, which --device cuda answers for, skips the import.
#: Resolution calls none of it; 0.5.1 and later import no vllm there.
VLLM_STANDIN = _sglang_release() < (0, 5, 1) and standin.install("vllm")

import sglang  # noqa: E402
from sglang.srt import server_args as sa  # noqa: E402

from engine_oracle.common import (  # noqa: E402
    CASE_TIMEOUT_S,
    Placeholders,
    Timeout,
    WarningCatcher,
    caveat,
    clip,
    plain,
    quiet,
    refusal,
    time_limit,
)
from engine_oracle.models import ensure_arch_variants  # noqa: E402

VERSION = getattr(sglang, "__version__", "unknown")
#: The release resolves inside ServerArgs.__post_init__ (no resolve_once: 0.5.18 and older).
LEGACY_RESOLUTION = not hasattr(sa.ServerArgs, "resolve_once")

#: Resolved fields recorded (what specgate reads, and what SGLang rewrites beside them).
FIELDS = (
    "model_path",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_dflash_block_size",
    "speculative_accept_threshold_single",
    "speculative_accept_threshold_acc",
    "speculative_use_rejection_sampling",
    "speculative_token_map",
    "speculative_adaptive",
    "speculative_draft_window_size",
    "tp_size",
    "dp_size",
    "enable_dp_attention",
    "context_length",
    "max_running_requests",
    "disable_overlap_schedule",
    "mem_fraction_static",
    "enable_mixed_chunk",
    "device",
)


#: Refusals that come from this CPU host or from a stand-in model, not from the configuration.
CAVEATS = [
    (
        "platform support for Mamba cache state snapshots",
        "host: SGLang's platform check answers for this CPU host (no Mamba state snapshots); a GPU "
        "host would go on to the speculative checks",
    ),
    (
        "extra_buffer needs CUDA/MUSA/NPU",  # 0.5.15: "CUDA/MUSA/NPU (FLA)"; 0.5.18: "/ROCm/XPU"
        "host: SGLang's Mamba extra-buffer check asks is_cuda() or another accelerator "
        "(_validate_mamba_extra_buffer, server_args.py:5809 at 0.5.18) and answers for this CPU "
        "host; a GPU host would go on to the speculative checks",
    ),
    (
        "target:arch-|object has no attribute",
        "model: the arch-* stand-in is a DeepSeek-V3 config under another architecture name; the "
        "real checkpoint has the fields this handler reads",
    ),
]


#: A warning is kept when it speaks of speculation (SGLang logs much else at start-up).
SPECULATIVE_WORDS = (
    "specul",
    "draft",
    "ngram",
    "dflash",
    "eagle",
    "mtp",
    "nextn",
    "topk",
    "adaptive",
    "max running requests",
    "dp attention",
    "dp-attention",
)


def header() -> dict[str, Any]:
    return {
        "torchvision": "inert stand-in module" if STANDIN else "real",
        **({"sgl_kernel": "inert stand-in module"} if SGL_KERNEL_STANDIN else {}),
        **({"vllm": "inert stand-in module"} if VLLM_STANDIN else {}),
        "device_answer": "cuda (cpu_answer kept where --device cpu differs)",
        "resolution": "ServerArgs.__post_init__ (the release has no resolve_once)"
        if LEGACY_RESOLUTION
        else "resolve_once()",
    }


def known_names(knowledge: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for s in knowledge["settings"]:
        names += [s["name"], *s.get("aliases", [])]
    names += list(FIELDS)
    return list(dict.fromkeys(names))


class Recorder:
    def __init__(self, knowledge: dict[str, Any], models: Path) -> None:
        from engine_oracle import sglang_corpus

        ensure_arch_variants(models, sglang_corpus.arch_variants(knowledge))
        self.names = known_names(knowledge)
        self.models = models

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        record = dict(case)
        gpu = self._once(case, "cuda")
        record["answer"] = gpu
        why = caveat(gpu, case["target"], CAVEATS)
        if why:
            record["caveat"] = why
        cpu = self._once(case, "cpu")
        if _comparable(cpu) != _comparable(gpu):
            record["cpu_answer"] = cpu
        return record

    def _once(self, case: dict[str, Any], device: str) -> dict[str, Any]:
        ph = Placeholders(self.models, Path("/nonexistent-case-dir"))
        env = case.get("env") or {}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        catcher = WarningCatcher(("sglang",), ph, SPECULATIVE_WORDS)
        self.catcher = catcher
        logging.getLogger().addHandler(catcher)
        try:
            with time_limit(CASE_TIMEOUT_S):
                answer = self._ask(case, ph, device)
        except Timeout as exc:
            answer = {
                "status": "timeout",
                "stage": "unknown",
                "refusal": {"exception": "Timeout", "message": str(exc)},
            }
        finally:
            logging.getLogger().removeHandler(catcher)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if catcher.seen:
            answer["warnings"] = catcher.seen
        return answer

    def _ask(self, case: dict[str, Any], ph: Placeholders, device: str) -> dict[str, Any]:
        argv = [*ph.expand(case["argv"]), "--device", device]
        given = {w.split("=", 1)[0] for w in case["argv"] if w.startswith("--")}
        stage = "parse"
        try:
            with quiet() as err:
                post_init = sa.ServerArgs.__post_init__
                if LEGACY_RESOLUTION:  # build it unresolved: resolution is the next stage
                    sa.ServerArgs.__post_init__ = lambda self: None  # type: ignore[method-assign]
                try:
                    args = sa.prepare_server_args(argv)
                except SystemExit as exc:
                    lines = err.getvalue().strip().splitlines()
                    message = next(
                        (ln.split("error: ", 1)[1] for ln in reversed(lines) if "error: " in ln),
                        " ".join(lines[-1:]) or f"exit {exc.code}",
                    )
                    ref = {
                        "exception": "SystemExit",
                        "message": clip(ph.fold(message)),
                        "exit_code": exc.code,
                    }
                    flags = [
                        w.rstrip(":,.")
                        for w in message.replace(",", " ").split()
                        if w.startswith("--")
                    ]
                    if flags:
                        ref["concerns"] = flags[0]
                    return {"status": "refused", "stage": "parse", "refusal": ref}
                finally:
                    sa.ServerArgs.__post_init__ = post_init  # type: ignore[method-assign]
            # prepare_server_args calls logging.basicConfig(force=True), which drops every
            # root handler: put the warning catcher back before resolution logs.
            root = logging.getLogger()
            if self.catcher not in root.handlers:
                root.addHandler(self.catcher)
            parsed = {
                f: plain(ph.fold(getattr(args, f, None)))
                for f in FIELDS
                if getattr(args, f, None) is not None
            }
            stage = "resolve"
            with quiet():
                if LEGACY_RESOLUTION:
                    post_init(args)
                    resolved = {f: getattr(args, f) for f in FIELDS if hasattr(args, f)}
                else:
                    args.resolve_once()
                    resolved = args.resolved_dict()
        except Timeout:
            raise
        except (Exception, SystemExit, AssertionError) as exc:
            out: dict[str, Any] = {
                "status": "refused",
                "stage": stage,
                "refusal": refusal(exc, "sglang", self.names, ph, given),
            }
            if stage == "resolve":
                out["parsed"] = parsed
            return out
        answer = {f: plain(ph.fold(resolved.get(f))) for f in FIELDS if f in resolved}
        return {"status": "ok", "stage": "resolve", "parsed": parsed, "resolved": answer}


def _comparable(answer: dict[str, Any]) -> Any:
    """What a CPU answer must match to count as the same: the verdict and the speculative
    fields (device-specific scheduling fields such as the overlap schedule are left out)."""
    resolved = answer.get("resolved") or {}
    return (
        answer["status"],
        answer["stage"],
        answer.get("refusal"),
        {
            k: v
            for k, v in resolved.items()
            if k.startswith("speculative_") or k in ("tp_size", "dp_size")
        },
    )
