#!/usr/bin/env bash
# Creates third_party/VENV, a Python virtual environment of Debian's Python
# with the wheels REQUIREMENTS pins by version and sha256 (pip
# --require-hashes, binary wheels only, no dependency resolution), checked by
# importing IMPORTS. Reused while the requirements file is unchanged.
#   scripts/setup_venv.sh VENV REQUIREMENTS IMPORTS WHAT
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/third_party/$1"
REQ="$2"
IMPORTS="$3"
WHAT="$4"
STAMP="$VENV/.installed-$(sha256sum "$REQ" | cut -c1-16)"
[[ -f "$STAMP" ]] && exit 0
start=$SECONDS
echo "[setup] creating $VENV ($WHAT from PyPI, pinned)"
rm -rf "$VENV"
/usr/bin/python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --only-binary :all: --require-hashes -r "$REQ" ||
  { rm -rf "$VENV"; echo "[setup] error: installing $REQ into $VENV failed (above)" >&2; exit 1; }
"$VENV/bin/python" -c "import $IMPORTS" ||
  { rm -rf "$VENV"; echo "[setup] error: $VENV cannot import $IMPORTS" >&2; exit 1; }
touch "$STAMP"
echo "[setup] $VENV ready ($((SECONDS - start)) s)"
