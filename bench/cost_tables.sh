# Sourced by the benchmarks that compare two hetplan binaries (plans_before_after.sh, exact_search_counts.sh,
# instruction_counts.sh): the fixed cost tables both binaries plan on.

# ensure_cost_table HETPLAN ZOO_DIR TABLES_DIR MODEL: profiles MODEL once into TABLES_DIR/MODEL.csv (20 runs after 5
# warm-ups, 5 whole-model runs, no cache) unless that table exists; on failure prints the profiler's errors and
# returns 2.
ensure_cost_table() {
  local bin=$1 zoo=$2 tables=$3 model=$4 err
  [[ -f $tables/$model.csv ]] && return 0
  mkdir -p "$tables"
  err=$(mktemp)
  if ! "$bin" profile "$zoo/$model.onnx" --runs 20 --warmup 5 --model-runs 5 --no-cache --out "$tables/$model.csv" \
       >/dev/null 2>"$err"; then
    cat "$err" >&2
    rm -f "$err"
    return 2
  fi
  rm -f "$err"
}
