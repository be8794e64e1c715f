#!/usr/bin/env bash
# hetplan's exact search, the paper's MIP on CBC and on HiGHS, a CP-SAT model
# and the paper's MIP on SCIP, side by side on the same instances with the
# same time limit (docs/results.md "Against the best solvers"):
#
#   bench/peers.sh OUT_DIR [LIMIT_S] [peers_benchmark options...]
#   bench/peers.sh --check OUT_DIR       random small instances, every proven
#                                        optimum against brute force
#
# Creates build/peers-venv (OR-Tools and PySCIPOpt from PyPI, pinned in
# bench/peers-requirements.txt) the first time; needs build/bench/peers_benchmark
# (./scripts/build.sh --target peers_benchmark).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${HETPLAN_PEERS_VENV:-build/peers-venv}"
REQ=bench/peers-requirements.txt
if [[ ! -f "$VENV/.installed" ]] || ! cmp -s "$REQ" "$VENV/.installed"; then
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --only-binary=:all: -r "$REQ"
  cp "$REQ" "$VENV/.installed"
fi
BENCH="${HETPLAN_PEERS_BENCHMARK:-build/bench/peers_benchmark}"
[[ -x "$BENCH" ]] || { echo "peers.sh: $BENCH is missing; run ./scripts/build.sh --target peers_benchmark" >&2; exit 2; }
if [[ "${1:-}" == "--check" ]]; then
  out="${2:?usage: bench/peers.sh --check OUT_DIR [N]}"
  mkdir -p "$out"
  rm -f "$out"/random*.json "$out"/random*.mps
  "$BENCH" --out "$out" --random "${3:-40}" --limit 10 --threads 2
  exec "$VENV/bin/python" bench/peers.py "$out" --check --table "$out/table.md"
fi
out="${1:?usage: bench/peers.sh OUT_DIR [LIMIT_S] [peers_benchmark options...]}"
limit="${2:-10}"
shift $(($# >= 2 ? 2 : 1))
echo "[peers] $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs" >&2
"$BENCH" --out "$out" --limit "$limit" --threads 2 "$@"
"$VENV/bin/python" bench/peers.py "$out" --limit "$limit" --threads 2 --table "$out/table.md"
echo "[peers] done $(date -u '+%H:%M:%S') UTC" >&2
