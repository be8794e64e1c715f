// Frontier files (`hetplan frontier`, docs/frontier.md) in the report: a
// tolerant reader of single- and multi-curve files, the speedup-over-
// crossbars step figure with the CIM paper's four budgets marked, and the
// latency–energy Pareto figure. `hetplan report --frontier FILE` draws them
// with a table per curve (docs/dse.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/report/plots.h"
#include "hetplan/util/status.h"

namespace hetplan {

// The CIM paper's crossbar budgets (Klein et al., §V), marked on every curve.
inline constexpr int64_t kPaperBudgets[] = {25, 50, 100, 200};

struct FrontierStepPoint {
  int64_t crossbars = 0;  // the first budget of the step
  double makespan_us = 0;  // a stream's II where the file's objective is throughput
  double speedup = 0;  // NaN when the file has null (a zero makespan)
  std::string status;  // "optimal" or "feasible"
};

// The saturation point: the last breakpoint, with its own proof status.
using FrontierSaturation = FrontierStepPoint;

struct ParetoPointRead {
  double makespan_us = 0, energy_uj = 0;
  std::string status;
};

struct FrontierPareto {
  int64_t crossbars = 0;  // the budget the front was computed at
  std::vector<ParetoPointRead> points;  // makespans increasing
  bool complete = false;
};

// One curve of a frontier file.
struct FrontierCurve {
  std::optional<double> value;  // the axis value; absent for a single-curve file
  std::string platform;         // the platform's name
  std::vector<std::string> overrides;
  int64_t lo = 0, hi = 0;  // crossbars_range
  int64_t crossbars_for_all = 0;
  double cpu_only_us = 0;
  bool complete = false;
  std::string termination;
  std::vector<FrontierStepPoint> steps;  // budgets increasing
  std::optional<FrontierSaturation> saturation;
  std::optional<FrontierPareto> pareto;
};

struct FrontierFile {
  std::string path;
  std::string model;  // model.file
  std::string pu;
  std::string platform;  // the (base) platform's name
  std::string axis_key;  // "" for a single-curve file
  // The objective is throughput: each step's value is a stream's II and its
  // speedup inputs per second over CPU-only's.
  bool stream = false;
  std::vector<FrontierCurve> curves;
};

// Reads a frontier file. Every error is one line naming the file and the
// field ("f.json: curves[1].breakpoints[0].crossbars: missing (an integer)").
Result<FrontierFile> ReadFrontierFile(const std::string& path);
// The same for a document already parsed; `path` names it in errors.
Result<FrontierFile> ParseFrontierJson(const nlohmann::json& j, const std::string& path);

// The largest budget a curve answers for, asked about `budget`: its range's
// HI, or any budget when HI reaches crossbars_for_all (every operator fits
// at once there, so larger budgets change nothing).
int64_t CurveReach(const FrontierCurve& curve, int64_t budget);
// The step holding at budget b: the last breakpoint with crossbars ≤ b;
// null below the first breakpoint (no schedule) or past the curve's reach.
const FrontierStepPoint* StepAtBudget(const FrontierCurve& curve, int64_t budget);

// A curve's label in figures and tables: "50 ns" for cim.mvm_latency_ns,
// "KEY=V" for other axes, the platform's name for a single curve.
std::string CurveLabel(const FrontierFile& file, const FrontierCurve& curve);

// Speedup over CPU-only against crossbars, one step line per curve, steps
// that are not proven optimal dashed, the paper's budgets inside the range
// marked with the speedup read off the steps. `stem` names the files.
Result<Figure> PlotFrontier(const FrontierFile& file, const std::string& stem, const std::string& dir);
// Energy against makespan for every curve with a Pareto front (points and
// steps; points not proven optimal hollow). kNotFound when none has one.
Result<Figure> PlotFrontierPareto(const FrontierFile& file, const std::string& stem, const std::string& dir);

}  // namespace hetplan
