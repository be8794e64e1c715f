// The co-run profiler: what measured PUs cost each other when they run at
// the same time, measured by running them at the same time (BIDENT §III-A:
// pairwise slowdown factors for intra-model parallelism, co-execution costs
// of operator pairs for two requests; and the hand-off between PUs that its
// transfer costs stand for). Every PU runs on a thread pinned to its cores
// with its own ONNX Runtime configuration, as `hetplan run` will run it.
//
// Three measurements, each written to the returned table
// (docs/cost-table-format.md):
//  - transfer rows: a tensor written by an operator on one PU and read by an
//    operator on another, in shared memory (zero copy), against the same
//    consumer reading it on the producer's PU; for a few tensor sizes.
//  - slowdown rows, SF(run, interfere): representative operators of the
//    model timed on `run` alone and while `interfere` runs the same operators
//    in a loop; SF = Σ co-run medians / Σ solo medians.
//  - coexec rows: every operator with itself (the aligned pairs of two
//    requests of one model) on every PU pair, started together at a barrier
//    on two PUs (makespan), back to back on one serial PU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hetplan/cost/cost_table.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct CoRunOptions {
  int warmup = 3;              // untimed runs before each timed block
  int runs = 20;               // timed runs per block (medians are reported)
  int rounds = 3;              // solo and co-run blocks alternate, so slow drift of the machine cancels
  int representative_ops = 6;  // operators SF is measured on: the heaviest of each op type, heaviest first
  bool coexec = true;          // measure operator pairs (two requests); the longest part
  std::vector<int64_t> transfer_bytes = {4096, 65536, 1 << 20, 8 << 20};
  std::string cache_dir;  // empty = no cache
  // Called with (steps done, steps in all); from the calling thread.
  std::function<void(int done, int total)> progress;
};

struct CoRunPu {
  std::string name;
  ProfileOptions runtime;           // threads, provider, provider options, cores (ForPu)
  const CostTable* solo = nullptr;  // the PU's profile: picks the representative operators
};

// Measures `pus` (two or more) against each other on `m`. With a cache_dir,
// a table measured earlier under the same key (model hash, input shapes,
// fusion, every PU's name and configuration, the options, ORT version, CPU,
// host) is returned without running anything (meta cache=hit). Errors: fewer
// than two PUs, a provider or core this machine lacks, an operator ONNX
// Runtime cannot run. ORT exceptions never escape.
Result<CostTable> ProfileCoRun(const LoadedModel& m, const std::vector<CoRunPu>& pus, const CoRunOptions& o);

std::string CoRunCacheKey(const LoadedModel& m, const std::vector<CoRunPu>& pus, const CoRunOptions& o);

// Adds `corun`'s slowdown, coexec and transfer rows to `t` (a PU's profile),
// and its provenance as meta `corun_*` keys.
void MergeCoRun(const CostTable& corun, CostTable* t);

}  // namespace hetplan
