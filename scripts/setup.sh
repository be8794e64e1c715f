#!/usr/bin/env bash
# Installs everything hetplan needs on Debian 12, from Debian's archive, the
# npm registry (ONNX Runtime) and PyPI (the source distributions of ONNX and
# HiGHS, and the wheels of the test models' Python) only, each pinned.
# Idempotent: what is already present is skipped. Modes:
#   (none)       everything ./test.sh needs
#   --main-job   only what ./run.sh needs (the hetplan command, the default model's export, the main job): the
#                test tools, MPI, the Python module's packages, HiGHS (an optional MIP backend) and the test models'
#                Python are left to ./test.sh, so that a first run installs and builds less
#   --python     only what `pip install .` needs for the module (setup.py runs it); Debian packages are installed
#                only as root, otherwise one line names them
#   --apt-only   the Debian packages of a full setup, nothing else (bench/build_time.sh times the stages apart)
set -euo pipefail
MODE="${1:-full}"
case "$MODE" in
  full | --main-job | --python | --apt-only) ;;
  *) echo "setup.sh: unknown mode '$MODE' (none, --main-job, --python, --apt-only)" >&2; exit 2 ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# What building the library and the Python module needs.
APT_BUILD=(
  build-essential cmake ninja-build pkg-config git
  libprotobuf-dev protobuf-compiler
  coinor-libcbc-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  python3-dev
  nodejs npm openssl ca-certificates curl
)
# ./run.sh's job: the figures, and the default model's export (Debian's torch).
APT_MAIN=(gnuplot-nox python3-torch python3-torchvision python3-onnx)
# ./test.sh's: the tests and benchmarks, MPI, the Python module's tests, the fuzzers' clang.
APT_TEST=(
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  pybind11-dev python3-pytest python3-pandas python3-matplotlib
  python3-pip python3-setuptools python3-wheel python3-venv
  clang-14 libclang-rt-14-dev
)
case "$MODE" in
  --python) APT_PACKAGES=("${APT_BUILD[@]}") ;;
  --main-job) APT_PACKAGES=("${APT_BUILD[@]}" "${APT_MAIN[@]}") ;;
  *) APT_PACKAGES=("${APT_BUILD[@]}" "${APT_MAIN[@]}" "${APT_TEST[@]}") ;;
esac

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# nodejs/npm may come from elsewhere on a developer machine: accept any npm on PATH.
if command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    if [[ "$MODE" == --python ]] || ! command -v sudo >/dev/null; then
      echo "hetplan setup: Debian packages missing: ${missing[*]}; install them (sudo apt-get install ${missing[*]}) and run again" >&2
      exit 3
    fi
    SUDO="sudo"
  fi
  echo "[setup] installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # CMake finds what was just installed (GoogleTest, MPI, pybind11) only when it configures again:
  # scripts/build.sh configures again when a stamp under third_party/ is newer than its cache.
  mkdir -p "$ROOT/third_party/debian"
  printf '%s\n' "${missing[@]}" >"$ROOT/third_party/debian/.installed-packages"
fi

[[ "$MODE" == --apt-only ]] && exit 0
"$ROOT/scripts/setup_ort.sh"
"$ROOT/scripts/setup_onnx.sh"
if [[ "$MODE" == --main-job || "$MODE" == --python ]]; then
  exit 0
fi
"$ROOT/scripts/setup_highs.sh"
"$ROOT/scripts/setup_models_venv.sh"
"$ROOT/scripts/setup_genai_venv.sh"
"$ROOT/scripts/setup_openvino.sh"
