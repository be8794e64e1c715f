# Sourced by the setup scripts that build a library from a PyPI source
# distribution (setup_onnx.sh, setup_highs.sh).
#
# fetch_sdist URL SHA256 COPY DIR: downloads URL (or copies COPY, a file
# already downloaded, when it is not empty) into DIR, checks its sha256
# against the pinned SHA256 and unpacks it in DIR; exits on a mismatch.
fetch_sdist() {
  local url="$1" sha256="$2" copy="$3" dir="$4"
  local tgz
  tgz="$dir/$(basename "$url")"
  if [[ -n "$copy" ]]; then
    cp "$copy" "$tgz"  # still checked below
  else
    curl -fsSL --retry 3 -o "$tgz" "$url"
  fi
  local got
  got="$(sha256sum "$tgz" | cut -d' ' -f1)"
  if [[ "$got" != "$sha256" ]]; then
    echo "[setup] error: $tgz sha256 $got does not match pinned $sha256" >&2
    exit 1
  fi
  tar xzf "$tgz" -C "$dir"
}

# cmake_build_install SRC BUILD NAME CMAKE_ARGS...: configures SRC into BUILD
# (Ninja when present, Release at -O2), builds it on every core and installs it
# (its install prefix is in CMAKE_ARGS); on a failure, the log's tail and exit.
cmake_build_install() {
  local src="$1" build="$2" name="$3"
  shift 3
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S "$src" -B "$build" "${gen[@]+"${gen[@]}"}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF "$@" >"$build.configure.log" 2>&1 ||
    { tail -20 "$build.configure.log" >&2; echo "[setup] error: configuring $name failed (log above)" >&2; exit 1; }
  cmake --build "$build" -j"$(nproc)" >"$build.build.log" 2>&1 ||
    { tail -20 "$build.build.log" >&2; echo "[setup] error: building $name failed (log above)" >&2; exit 1; }
  cmake --install "$build" >/dev/null
}
