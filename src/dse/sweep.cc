// The sweep's product, its keys and the results file format.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "hetplan/dse/dse.h"
#include "hetplan/solve/solver.h"

namespace hetplan {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

Result<SweepAxis> ParseSweep(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "--sweep '{}': expected KEY=V1,V2,... with a platform key, e.g. cim.crossbars=25,50,100,200", text);
  }
  SweepAxis axis;
  axis.key = Trim(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string_view::npos) comma = rest.size();
    std::string v = Trim(rest.substr(start, comma - start));
    if (v.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--sweep '{}': an empty value; separate values with single commas",
                   text);
    }
    if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end()) {
      return Error(ErrorCode::kInvalidArgument, "--sweep '{}': value '{}' is given twice", text, v);
    }
    axis.values.push_back(std::move(v));
    start = comma + 1;
  }
  if (axis.key.empty() || axis.values.empty()) {
    return Error(ErrorCode::kInvalidArgument, "--sweep '{}': expected KEY=V1,V2,...", text);
  }
  return axis;
}

std::vector<DsePoint> ExpandPoints(const DseSpec& spec) {
  std::vector<DsePoint> points;
  const size_t naxes = spec.sweeps.size();
  size_t combos = 1;
  for (const SweepAxis& axis : spec.sweeps) combos *= axis.values.size();
  std::vector<size_t> idx(naxes, 0);
  for (size_t m = 0; m < spec.models.size(); ++m) {
    for (size_t p = 0; p < spec.platforms.size(); ++p) {
      for (size_t combo = 0; combo < combos; ++combo) {
        // Mixed radix, the first axis the most significant digit.
        size_t rest = combo;
        for (size_t a = naxes; a-- > 0;) {
          idx[a] = rest % spec.sweeps[a].values.size();
          rest /= spec.sweeps[a].values.size();
        }
        for (Objective objective : spec.objectives) {
          for (const std::string& solver : spec.solvers) {
            DsePoint pt;
            pt.model = static_cast<int>(m);
            pt.platform = static_cast<int>(p);
            pt.overrides = spec.overrides;
            for (size_t a = 0; a < naxes; ++a) {
              const SweepAxis& axis = spec.sweeps[a];
              pt.overrides.push_back(axis.key + "=" + axis.values[idx[a]]);
              pt.params[axis.key] = axis.values[idx[a]];
            }
            pt.objective = objective;
            pt.solver = solver;
            const Solver* method = FindSolver(solver);
            if (spec.all_pairs && method != nullptr && method->info().requests == 2) {
              for (size_t j = m; j < spec.models.size(); ++j) {
                pt.second = j == m ? -1 : static_cast<int>(j);  // with itself: the same point as without all_pairs
                points.push_back(pt);
              }
              continue;
            }
            points.push_back(std::move(pt));
          }
        }
      }
    }
  }
  return points;
}

std::string PointKey(const std::string& model_sha256, const std::string& platform,
                     const std::vector<std::string>& overrides, const std::string& solver, Objective objective,
                     bool charge_boundary) {
  return fmt::format("{}|{}|{}|{}|{}{}", model_sha256, platform, fmt::join(overrides, ";"), solver, ToString(objective),
                     charge_boundary ? "|boundary=fitted" : "");
}

Result<DseResults> ReadDseResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kNotFound, "{}: cannot open the results file", path);
  DseResults out;
  std::string line;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.bad_lines;
      continue;
    }
    out.rows.push_back(std::move(j));
  }
  return out;
}

}  // namespace hetplan
