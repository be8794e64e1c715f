#!/usr/bin/env bash
# `pip install --no-build-isolation .` works offline: into a fresh virtual
# environment that sees Debian's packages, from this tree, reusing the CMake
# build in $HETPLAN_BUILD_DIR; then the installed package plans a model from
# outside the tree. CTest: Python.PipInstall (labels python, slow).
#   python/tests/pip_install_check.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src="$1" build="$2" python="${3:-/usr/bin/python3}"
venv="$build/pip-check-venv"
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
cd "$src"
HETPLAN_BUILD_DIR="$build" PIP_NO_INDEX=1 "$venv/bin/pip" install --no-build-isolation --no-deps -q .
cd /tmp
out="$("$venv/bin/python" - <<'PY'
import hetplan, os
assert "pip-check-venv" in hetplan.__file__, hetplan.__file__
s = hetplan.plan(os.environ.get("MODEL", ""), "soc-example", "greedy") if os.environ.get("MODEL") else None
print("ok", hetplan.__file__, [m.name for m in hetplan.solvers()][:2], s.status if s else "")
PY
)"
echo "$out"
[[ "$out" == ok* ]]
rm -rf "$venv"
