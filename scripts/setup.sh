#!/usr/bin/env bash
# Installs everything hetplan needs on Debian 12, from Debian's archive, the
# npm registry (ONNX Runtime) and PyPI (the source distributions of ONNX and
# HiGHS, and the wheels of the test models' Python) only, each pinned.
# Idempotent: what is already present is skipped. With --main-job (./run.sh)
# only what the main job needs: HiGHS (an optional MIP backend) and the test
# models' Python are left to ./test.sh.
set -euo pipefail
MAIN_JOB=0
[[ "${1:-}" == "--main-job" ]] && MAIN_JOB=1
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libprotobuf-dev protobuf-compiler
  coinor-libcbc-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox
  libopenmpi-dev openmpi-bin
  python3-torch python3-torchvision python3-onnx
  pybind11-dev python3-dev python3-pytest python3-pandas python3-matplotlib
  python3-pip python3-setuptools python3-wheel python3-venv
  clang-14 libclang-rt-14-dev
  nodejs npm openssl ca-certificates curl
)

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
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$ROOT/scripts/setup_ort.sh"
"$ROOT/scripts/setup_onnx.sh"
if ((MAIN_JOB)); then
  exit 0
fi
"$ROOT/scripts/setup_highs.sh"
"$ROOT/scripts/setup_models_venv.sh"
