#!/usr/bin/env bash
# Where a first run's time goes: every stage of ./run.sh, then of ./test.sh (and, with --ci, of the sanitizer run
# .ci/run adds), run in the order those scripts run them, in a fresh clone, each timed; then the compiler's share
# from Ninja's log (translation units, their total seconds, the ten slowest). A regression in the build shows as a
# stage or a unit that grew.
#
#   bench/build_time.sh [--ci] [--rev REV] [--keep] [--dir DIR]
#
#   --rev REV  clone this commit (default HEAD) of the repository this script sits in
#   --dir DIR  clone into DIR (default a new temporary folder; removed at the end unless --keep)
#   --ci       also time the sanitizer run (HETPLAN_SANITIZE=1 ./test.sh), as CI=true .ci/run does
#
# Debian's packages are taken as installed (the setup's apt-get stage is timed, and takes a second when nothing is
# missing); everything the setup builds or downloads (ONNX Runtime from npm, ONNX and HiGHS from PyPI's source
# distributions, the models venv, the zoo) starts from nothing in the clone. Prints a Markdown table of stages
# (run.sh's stages, then test.sh's, with their sums) and one of the slowest units; exits non-zero when a stage fails.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REV=HEAD; DIR=""; KEEP=0; CI_RUN=0
while (($#)); do
  case "$1" in
    --rev) REV="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --ci) CI_RUN=1; shift ;;
    *) echo "build_time.sh: unknown argument '$1' (--ci, --rev REV, --dir DIR, --keep)" >&2; exit 2 ;;
  esac
done
if [[ -z "$DIR" ]]; then
  DIR="$(mktemp -d /tmp/hetplan-build-time.XXXXXX)"
elif [[ -e "$DIR" ]]; then
  echo "build_time.sh: $DIR exists; name a new folder (the measurement starts from a fresh clone)" >&2; exit 2
fi
((KEEP)) || trap 'rm -rf "$DIR"' EXIT
git clone -q "$REPO" "$DIR"
git -C "$DIR" checkout -q "$REV"
cd "$DIR"
echo "build_time.sh: $(git rev-parse --short HEAD) in $DIR; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

names=(); secs=(); groups=()
stage() {  # GROUP NAME COMMAND...
  local group="$1" name="$2" start=$SECONDS
  shift 2
  echo "[build_time] $name: $*" >&2
  if ! "$@" >"$DIR/stage-$name.log" 2>&1; then
    tail -20 "$DIR/stage-$name.log" >&2
    echo "build_time.sh: stage $name failed (log: $DIR/stage-$name.log)" >&2
    exit 1
  fi
  names+=("$name"); secs+=($((SECONDS - start))); groups+=("$group")
}
export CI=true  # -Werror, as CI builds
# ./run.sh: the main job's setup, the command alone, the default model, the main job.
# (A commit from before setup.sh --apt-only has no such stage; it takes a second when nothing is missing.)
if grep -q -- '--apt-only' scripts/setup.sh; then
  stage run.sh apt scripts/setup.sh --apt-only
fi
stage run.sh setup-ort scripts/setup_ort.sh
stage run.sh setup-onnx scripts/setup_onnx.sh
if grep -q export_pid run.sh; then  # the export beside the compiles, as run.sh does it
  stage run.sh build-hetplan+export-resnet18 bash -c 'mkdir -p build/models
    /usr/bin/python3 models/export.py --out-dir build/models --models resnet18 >build/models/export.log 2>&1 &
    scripts/build.sh --target hetplan && wait $!'
else
  stage run.sh build-hetplan scripts/build.sh --target hetplan
  stage run.sh export-resnet18 /usr/bin/python3 models/export.py --out-dir build/models --models resnet18
fi
stage run.sh main-job scripts/main_job.sh build/models/resnet18.onnx
# ./test.sh after it: the rest of the setup, everything else built (the zoo beside the compiles), the tests.
stage test.sh setup-highs scripts/setup_highs.sh
stage test.sh setup-models-venv scripts/setup_models_venv.sh
stage test.sh build-all scripts/build.sh --target all zoo
stage test.sh ctest ctest --test-dir build -j"$(nproc)" -LE slow
if ((CI_RUN)); then
  stage ci sanitizer env HETPLAN_SANITIZE=1 ./test.sh
fi

echo "| stage | script | seconds |"
echo "|---|---|---:|"
declare -A total=()
for i in "${!names[@]}"; do
  echo "| ${names[$i]} | ${groups[$i]} | ${secs[$i]} |"
  total[${groups[$i]}]=$(( ${total[${groups[$i]}]:-0} + secs[i] ))
done
for g in run.sh test.sh ci; do
  [[ -n "${total[$g]:-}" ]] && echo "| **$g** | | **${total[$g]}** |"
done
echo
# Ninja's log: one line per output (start and end in ms); object files are the compiler's work.
python3 - build/.ninja_log <<'PY'
import sys
t = {}
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if not line.startswith('#') and len(f) == 5 and f[3].endswith('.o'):
        t[f[3]] = (int(f[1]) - int(f[0])) / 1000
print(f'build/: {len(t)} translation units, {sum(t.values()):.0f} compiler-seconds\n')
print('| slowest units | seconds |\n|---|---:|')
for o, s in sorted(t.items(), key=lambda x: -x[1])[:10]:
    print(f'| {o} | {s:.1f} |')
PY
