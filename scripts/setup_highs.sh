#!/usr/bin/env bash
# Builds the HiGHS MIP solver's C++ library (MIT) from its PyPI source
# distribution (highspy), pinned by version and sha256, into
# third_party/highs (git-ignored): a static library, its headers and its CMake
# config (find_package(highs CONFIG)). Only the library is built, once; it is
# reused while the pinned version is unchanged. Nothing is downloaded at build
# time (HiPO, which would fetch BLAS sources, is off). hetplan's CMake finds it
# when present (HETPLAN_HIGHS, docs/planners.md#mip-backends).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="1.16.0"
SHA256="83519368321b1ac0ed508b8562b335928b6fd249e2ab42ff0218491e1486d985"
URL="https://files.pythonhosted.org/packages/39/2a/900b9bd6663ffbc6be7c6f9adedda691734f7a392d4ed0d4b9c0d13beab3/highspy-$VERSION.tar.gz"
DEST="$ROOT/third_party/highs"
STAMP="$DEST/.installed-$VERSION"
[[ -f "$STAMP" ]] && exit 0

start=$SECONDS
echo "[setup] building HiGHS $VERSION from PyPI's highspy source distribution (a few minutes, once)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
TGZ="$TMP/highspy-$VERSION.tar.gz"
if [[ -n "${HETPLAN_HIGHS_SDIST:-}" ]]; then
  cp "$HETPLAN_HIGHS_SDIST" "$TGZ"  # an already downloaded copy (still checked below)
else
  curl -fsSL --retry 3 -o "$TGZ" "$URL"
fi
got="$(sha256sum "$TGZ" | cut -d' ' -f1)"
if [[ "$got" != "$SHA256" ]]; then
  echo "[setup] error: $TGZ sha256 $got does not match pinned $SHA256" >&2
  exit 1
fi
tar xzf "$TGZ" -C "$TMP"
SRC="$TMP/highspy-$VERSION"
# The source distribution leaves out two files its CMakeLists requires
# although the library does not use them.
mkdir -p "$SRC/app"
[[ -f "$SRC/app/CMakeLists.txt" ]] || : >"$SRC/app/CMakeLists.txt"
[[ -f "$SRC/highs.pc.in" ]] || : >"$SRC/highs.pc.in"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
cmake -S "$SRC" -B "$TMP/build" "${GEN[@]+"${GEN[@]}"}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DFAST_BUILD=ON -DBUILD_SHARED_LIBS=OFF -DBUILD_SHARED_EXTRAS_LIB=OFF \
  -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF -DZLIB=OFF -DHIPO=OFF -DPYTHON_BUILD_SETUP=OFF \
  -DCMAKE_INSTALL_PREFIX="$DEST.tmp" >"$TMP/configure.log" 2>&1 ||
  { tail -20 "$TMP/configure.log" >&2; echo "[setup] error: configuring HiGHS failed (log above)" >&2; exit 1; }
cmake --build "$TMP/build" -j"$(nproc)" >"$TMP/build.log" 2>&1 ||
  { tail -20 "$TMP/build.log" >&2; echo "[setup] error: building HiGHS failed (log above)" >&2; exit 1; }
rm -rf "$DEST.tmp"
cmake --install "$TMP/build" >/dev/null
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "highspy $VERSION sha256 $SHA256" >"$STAMP"
echo "[setup] HiGHS $VERSION installed in $DEST ($((SECONDS - start)) s)"
