#!/usr/bin/env bash
# Installs the ONNX Runtime C/C++ headers and Linux x64 library from the npm
# package com.github.asus4.onnxruntime (MIT), pinned by version and integrity,
# into third_party/onnxruntime (git-ignored). Nothing is copied into the repo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="com.github.asus4.onnxruntime"
VERSION="0.4.9"
INTEGRITY="sha512-BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg=="
DEST="$ROOT/third_party/onnxruntime"
STAMP="$DEST/.installed-$VERSION"
[[ -f "$STAMP" ]] && exit 0

echo "[setup] fetching $PKG@$VERSION from the npm registry"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "$PKG@$VERSION" >/dev/null)
TGZ="$TMP/$PKG-$VERSION.tgz"
got="sha512-$(openssl dgst -sha512 -binary "$TGZ" | base64 -w0)"
if [[ "$got" != "$INTEGRITY" ]]; then
  echo "[setup] error: $TGZ integrity $got does not match pinned $INTEGRITY" >&2
  exit 1
fi
HDR='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
LIB='package/Plugins/Linux/x64'
tar xzf "$TGZ" -C "$TMP" "$HDR" "$LIB"
rm -rf "$DEST"
mkdir -p "$DEST/include" "$DEST/lib"
cp "$TMP/$HDR"/*.h "$DEST/include/"
cp "$TMP/$LIB"/libonnxruntime.so "$TMP/$LIB"/libonnxruntime_providers_shared.so "$DEST/lib/"
ln -sf libonnxruntime.so "$DEST/lib/libonnxruntime.so.1"
echo "$PKG@$VERSION $INTEGRITY" > "$STAMP"
echo "[setup] ONNX Runtime installed in $DEST"
