#!/usr/bin/env bash
# Builds the ONNX C++ library (protobuf classes, operator schemas, checker,
# shape inference, version converter, inliner; Apache-2.0) from its PyPI
# source distribution, pinned by version and sha256, into third_party/onnx
# (git-ignored), against Debian's protobuf: static libraries, headers and the
# CMake config (find_package(ONNX CONFIG), targets ONNX::onnx and
# ONNX::onnx_proto). ONNX 1.22 knows opsets up to 27, as the ONNX Runtime
# setup_ort.sh installs does. Only the library is built, once; it is reused
# while the pinned version is unchanged. The source distribution's backend
# test corpus (onnx/backend/test/data) is kept in third_party/onnx/share for
# tests/graph/backend_corpus_test.cc.
#
# Its namespace and protobuf package are `hetplan_onnx`, not `onnx` (as
# PyTorch builds its copy `onnx_torch`): a process that loads hetplan's Python
# module and torch (whose libtorch links Debian's libonnx 1.12) would
# otherwise register onnx/onnx-ml.proto twice in the one libprotobuf, which
# aborts. hetplan's code says `onnx::`, an alias (include/hetplan/util/onnx_namespace.h).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="1.22.0"
SHA256="ef40c0aaf0b643857ea9306fc7eddce17eaf9fb0407e4801f1fc5758443a38e0"
URL="https://files.pythonhosted.org/packages/04/19/8ea73a64b368b75fe339771a20a02bc61ea1f551484c9e3d9d0bfbd0450f/onnx-$VERSION.tar.gz"
DEST="$ROOT/third_party/onnx"
NAMESPACE="hetplan_onnx"
STAMP="$DEST/.installed-$VERSION-$NAMESPACE"
[[ -f "$STAMP" ]] && exit 0

start=$SECONDS
echo "[setup] building ONNX $VERSION from PyPI's source distribution (about 2 minutes, once)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/scripts/sdist.sh"
fetch_sdist "$URL" "$SHA256" "${HETPLAN_ONNX_SDIST:-}" "$TMP"
SRC="$TMP/onnx-$VERSION"
# ONNX asks for CMake 3.26; Debian 12 has 3.25, and the library's build uses
# nothing newer (checked by building it).
sed -i 's/cmake_minimum_required(VERSION 3.26)/cmake_minimum_required(VERSION 3.25)/' "$SRC/CMakeLists.txt"
rm -rf "$DEST.tmp"
cmake_build_install "$SRC" "$TMP/build" ONNX -DONNX_ML=1 -DONNX_NAMESPACE="$NAMESPACE" \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DCMAKE_INSTALL_PREFIX="$DEST.tmp" -DCMAKE_INSTALL_LIBDIR=lib
mkdir -p "$DEST.tmp/share/onnx"
mv "$SRC/onnx/backend/test/data" "$DEST.tmp/share/onnx/backend-test-data"
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "onnx $VERSION sha256 $SHA256 namespace $NAMESPACE" >"$STAMP"
echo "[setup] ONNX $VERSION installed in $DEST ($((SECONDS - start)) s)"
