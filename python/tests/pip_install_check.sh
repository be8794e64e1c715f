#!/usr/bin/env bash
# `pip install .` in one step, as a Python user runs it: a fresh virtual environment of the machine's Python (no
# system site packages), build isolation (pip fetches the pinned build requirements from PyPI), the extension built
# by setup.py in BUILD_DIR (reused: incremental) with the shared libraries it needs bundled; then, from outside the
# tree, the installed package plans a model, and every library the extension loads beyond the C and C++ runtimes
# comes from the package's own folder. Then `pip wheel .` and the wheel installed into a second environment, checked
# the same way. CTest: Python.PipInstall (labels python, slow).
#   python/tests/pip_install_check.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src="$1" build="$2" python="${3:-/usr/bin/python3}"
work="$build/pip-check"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

check() {  # VENV: imports, plans, and loads its libraries from the package
  local venv="$1"
  local out
  out="$(cd /tmp && "$venv/bin/python" - <<'PY'
import hetplan, os
assert os.path.realpath(hetplan.__file__).startswith(os.path.realpath(os.environ["VENV"])), hetplan.__file__
s = hetplan.plan(os.environ["MODEL"], "soc-example", "greedy") if os.environ.get("MODEL") else None
print("ok", hetplan.__file__, [m.name for m in hetplan.solvers()][:2], s.status if s else "")
PY
)"
  echo "$out"
  [[ "$out" == ok* ]]
  local core pkg
  core="$(ls "$venv"/lib/python3*/site-packages/hetplan/_core*.so)"
  pkg="$(dirname "$core")"
  # Every resolved library outside the C and C++ runtimes must sit in the package.
  local foreign
  foreign="$(ldd "$core" | awk '$2 == "=>" { print $1, $3 }' |
    grep -Ev '^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libstdc\+\+\.so|libgcc_s\.so)' |
    awk -v pkg="$pkg" 'index($2, pkg "/") != 1' || true)"
  if [[ -n "$foreign" ]]; then
    echo "pip_install_check: libraries loaded from outside $pkg:" >&2
    echo "$foreign" >&2
    return 1
  fi
  echo "libraries: $(ls "$pkg" | grep -c '\.so') shared objects, all in the package"
}

"$python" -m venv "$work/venv"
cd "$src"
HETPLAN_BUILD_DIR="$build" "$work/venv/bin/pip" install -q .
VENV="$work/venv" check "$work/venv"

HETPLAN_BUILD_DIR="$build" "$work/venv/bin/pip" wheel -q --no-deps -w "$work/wheels" .
wheel="$(ls "$work"/wheels/hetplan-*.whl)"
echo "wheel: $(basename "$wheel"), $(( $(stat -c %s "$wheel") / 1048576 )) MiB"
"$python" -m venv "$work/venv2"
"$work/venv2/bin/pip" install -q --no-index "$wheel"
VENV="$work/venv2" check "$work/venv2"
