// The list scheduler: turns an assignment (and optionally a priority order)
// into a timed schedule. Operators are taken in priority order (a
// topological order); each starts as soon as its inputs have arrived
// (predecessor finish + transfer when on another PU) and, on a serial PU, the
// PU is free. Spatial PUs run operators concurrently; on one with a shared ADC
// pool (PuInfo::adc_pool) an operator also waits until its ADCs are free for
// its whole run. Baselines, heuristics, warm starts and the reference
// schedules use it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan {

// A cumulative resource (a shared ADC pool, or the crossbars rewritten
// operators take in turn) held over time by the operators placed so far:
// operator i holds amount_i of `pool` over [start_i, finish_i).
class CumulativeProfile {
 public:
  explicit CumulativeProfile(int64_t pool = 0) : pool_(pool) {}
  // The earliest t ≥ ready at which `amount` more are free over
  // [t, t + dur): ready itself or the finish of a placed operator (when
  // amount exceeds the pool, never: +inf).
  double EarliestFit(double ready, double dur, int64_t amount) const;
  void Add(double start, double finish, int64_t amount) { holds_.push_back({start, finish, amount}); }
  void Pop() { holds_.pop_back(); }

 private:
  struct Hold {
    double start, finish;
    int64_t amount;
  };
  int64_t Held(double t) const;  // Σ amount over holds with start ≤ t < finish
  int64_t pool_;
  std::vector<Hold> holds_;
};

// `assignment[v]` = PU of v (must be supported). `order`, when given, is a
// topological order used as the dispatch order; otherwise the graph's.
// `rewritten`, when given, marks the operators rewritten on a reprogramming
// PU: each takes its write and its run, holding its crossbars only then, and
// waits until they are free among those no resident operator holds.
Schedule ListSchedule(const Problem& p, const std::vector<int>& assignment, const std::vector<int>* order = nullptr,
                      const std::vector<char>* rewritten = nullptr);

// Each operator's PU and the order a schedule starts them in (ties: finish,
// id): with ListSchedule, the schedule re-timed on other costs of the same PUs.
void ScheduleOrder(const Schedule& schedule, std::vector<int>* device, std::vector<int>* order);

// Checks the capacity of spatial PUs for an assignment: the resident
// operators' crossbars within the capacity; with `rewritten`, each rewritten
// operator within what the resident ones leave, and the endurance budget
// (lifetime_inferences × Σ rewritten crossbars ≤ endurance_writes × that).
bool FitsCapacity(const Problem& p, const std::vector<int>& assignment,
                  const std::vector<char>* rewritten = nullptr);

// The crossbars of a reprogramming PU `q` that no resident operator holds:
// its capacity less the crossbars of the operators assigned to it and not
// rewritten.
int64_t RewritableCrossbars(const Problem& p, int q, const std::vector<int>& assignment,
                            const std::vector<char>* rewritten);

// The earliest t ≥ ready at which both profiles fit an operator of `dur` µs
// holding `crossbars` of the first and `adcs` of the second (0: no need).
double EarliestFitBoth(const CumulativeProfile& xb, int64_t crossbars, const CumulativeProfile& adc, int64_t adcs,
                       double ready, double dur);

// The endurance budget of reprogramming PU `pu`: `written` crossbars
// rewritten every inference, wear-levelled over the `free` ones no resident
// operator holds, within endurance_writes over lifetime_inferences (beside
// the writes PuInfo::other_lifetime_writes spends there).
bool WithinEndurance(const PuInfo& pu, int64_t written, int64_t free);

// Every operator on `pu`, list-scheduled; nullopt when some operator is
// unsupported there or the whole model exceeds its capacity.
std::optional<Schedule> SinglePuSchedule(const Problem& p, int pu);

}  // namespace hetplan
