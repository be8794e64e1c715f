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
. "$ROOT/scripts/sdist.sh"
fetch_sdist "$URL" "$SHA256" "${HETPLAN_HIGHS_SDIST:-}" "$TMP"
SRC="$TMP/highspy-$VERSION"
# A unity build (CMake batches HiGHS' sources): the same library in 70 s
# instead of 158 s here (docs/results.md, "The first run's time").
# The source distribution leaves out two files its CMakeLists requires
# although the library does not use them.
mkdir -p "$SRC/app"
[[ -f "$SRC/app/CMakeLists.txt" ]] || : >"$SRC/app/CMakeLists.txt"
[[ -f "$SRC/highs.pc.in" ]] || : >"$SRC/highs.pc.in"
rm -rf "$DEST.tmp"
cmake_build_install "$SRC" "$TMP/build" HiGHS -DFAST_BUILD=ON -DBUILD_SHARED_EXTRAS_LIB=OFF \
  -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF -DZLIB=OFF -DHIPO=OFF -DPYTHON_BUILD_SETUP=OFF \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_INSTALL_PREFIX="$DEST.tmp"
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "highspy $VERSION sha256 $SHA256" >"$STAMP"
echo "[setup] HiGHS $VERSION installed in $DEST ($((SECONDS - start)) s)"
