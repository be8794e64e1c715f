// Frontier files in the report (frontier_plots.h): the reader, the two
// figures drawn from them with gnuplot, and the report's frontier section.
#include "hetplan/report/frontier_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <tuple>

#include "hetplan/util/io.h"
#include "report/gnuplot.h"
#include "report/paper_tables.h"

namespace hetplan {
namespace {

using report_internal::Color;
using report_internal::Draw;
using report_internal::Num;
using report_internal::Plain;
using report_internal::Quote;
using report_internal::Script;
using Json = nlohmann::json;

// Reads fields of one frontier file; every error names the file and the
// field's path inside it.
class FieldReader {
 public:
  explicit FieldReader(std::string path) : path_(std::move(path)) {}

  Status Bad(const std::string& field, const std::string& problem) const {
    return Error(ErrorCode::kParseError,
                 "{}: {}: {}; a frontier file is what `hetplan frontier … --out FILE` writes (docs/frontier.md)",
                 path_, field, problem);
  }

  Result<const Json*> Get(const Json& obj, const std::string& where, const char* key, const char* expected) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return Bad(Join(where, key), fmt::format("missing ({} expected)", expected));
    return &*it;
  }
  // A field that may be absent or null: null then.
  const Json* Optional(const Json& obj, const char* key) const {
    const auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  Result<int64_t> Int(const Json& obj, const std::string& where, const char* key) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, "an integer"));
    return AsInt(*v, Join(where, key));
  }
  Result<int64_t> AsInt(const Json& v, const std::string& field) const {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.get<int64_t>();
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
      return static_cast<int64_t>(v.get<double>());
    }
    return Bad(field, fmt::format("{} is not an integer", Shown(v)));
  }
  // A number; with `nullable`, null reads as NaN.
  Result<double> Number(const Json& obj, const std::string& where, const char* key, bool nullable = false) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, nullable ? "a number or null" : "a number"));
    if (nullable && v->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v->is_number()) return Bad(Join(where, key), fmt::format("{} is not a number", Shown(*v)));
    return v->get<double>();
  }
  Result<std::string> String(const Json& obj, const std::string& where, const char* key) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, "a string"));
    if (!v->is_string()) return Bad(Join(where, key), fmt::format("{} is not a string", Shown(*v)));
    return v->get<std::string>();
  }
  Result<bool> Bool(const Json& obj, const std::string& where, const char* key) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, "true or false"));
    if (!v->is_boolean()) return Bad(Join(where, key), fmt::format("{} is not true or false", Shown(*v)));
    return v->get<bool>();
  }
  Result<const Json*> Object(const Json& obj, const std::string& where, const char* key) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, "an object"));
    if (!v->is_object()) return Bad(Join(where, key), fmt::format("{} is not an object", Shown(*v)));
    return v;
  }
  Result<const Json*> Array(const Json& obj, const std::string& where, const char* key) const {
    HETPLAN_ASSIGN_OR_RETURN(const Json* v, Get(obj, where, key, "an array"));
    if (!v->is_array()) return Bad(Join(where, key), fmt::format("{} is not an array", Shown(*v)));
    return v;
  }
  Status ExpectObject(const Json& v, const std::string& field) const {
    return v.is_object() ? Status::Ok() : Bad(field, fmt::format("{} is not an object", Shown(v)));
  }

  static std::string Join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  // A value as the error shows it, cut short.
  static std::string Shown(const Json& v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }
  std::string path_;
};

// A breakpoint, or the saturation point: crossbars, makespan, speedup, status.
Result<FrontierStepPoint> ReadStep(const FieldReader& r, const Json& s, const std::string& where, bool stream) {
  HETPLAN_RETURN_IF_ERROR(r.ExpectObject(s, where));
  FrontierStepPoint out;
  HETPLAN_ASSIGN_OR_RETURN(out.crossbars, r.Int(s, where, "crossbars"));
  HETPLAN_ASSIGN_OR_RETURN(out.makespan_us, r.Number(s, where, stream ? "initiation_interval_us" : "makespan_us"));
  HETPLAN_ASSIGN_OR_RETURN(out.speedup, r.Number(s, where, "speedup", true));
  HETPLAN_ASSIGN_OR_RETURN(out.status, r.String(s, where, "status"));
  return out;
}

Result<FrontierPareto> ReadPareto(const FieldReader& r, const Json& p, const std::string& where) {
  HETPLAN_RETURN_IF_ERROR(r.ExpectObject(p, where));
  FrontierPareto out;
  HETPLAN_ASSIGN_OR_RETURN(out.crossbars, r.Int(p, where, "crossbars"));
  HETPLAN_ASSIGN_OR_RETURN(out.complete, r.Bool(p, where, "complete"));
  HETPLAN_ASSIGN_OR_RETURN(const Json* points, r.Array(p, where, "points"));
  for (size_t i = 0; i < points->size(); ++i) {
    const std::string at = fmt::format("{}.points[{}]", where, i);
    const Json& q = (*points)[i];
    HETPLAN_RETURN_IF_ERROR(r.ExpectObject(q, at));
    ParetoPointRead pt;
    HETPLAN_ASSIGN_OR_RETURN(pt.makespan_us, r.Number(q, at, "makespan_us"));
    HETPLAN_ASSIGN_OR_RETURN(pt.energy_uj, r.Number(q, at, "energy_uj"));
    HETPLAN_ASSIGN_OR_RETURN(pt.status, r.String(q, at, "status"));
    if (!out.points.empty() && !(pt.makespan_us > out.points.back().makespan_us)) {
      return r.Bad(at + ".makespan_us", fmt::format("{} is not above the previous point's {} (makespans increase)",
                                                    pt.makespan_us, out.points.back().makespan_us));
    }
    out.points.push_back(std::move(pt));
  }
  return out;
}

// The single-curve fields of `c` (a whole single-curve file, or one item of
// `curves`); `base_platform` stands in for a curve without `platform`.
Result<FrontierCurve> ReadCurve(const FieldReader& r, const Json& c, const std::string& where,
                                const Json* base_platform, bool stream) {
  FrontierCurve out;
  const Json* platform = r.Optional(c, "platform");
  if (platform == nullptr) platform = base_platform;
  if (platform == nullptr) {
    HETPLAN_ASSIGN_OR_RETURN(platform, r.Object(c, where, "platform"));
  }
  const std::string pwhere = platform == base_platform ? std::string("platform") : FieldReader::Join(where, "platform");
  HETPLAN_RETURN_IF_ERROR(r.ExpectObject(*platform, pwhere));
  HETPLAN_ASSIGN_OR_RETURN(out.platform, r.String(*platform, pwhere, "name"));
  if (const Json* o = r.Optional(*platform, "overrides")) {
    if (!o->is_array()) return r.Bad(pwhere + ".overrides", "not an array of strings");
    for (const Json& s : *o) {
      if (!s.is_string()) return r.Bad(pwhere + ".overrides", "not an array of strings");
      out.overrides.push_back(s.get<std::string>());
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(const Json* range, r.Array(c, where, "crossbars_range"));
  const std::string rwhere = FieldReader::Join(where, "crossbars_range");
  if (range->size() != 2) return r.Bad(rwhere, fmt::format("has {} items, not [LO, HI]", range->size()));
  HETPLAN_ASSIGN_OR_RETURN(out.lo, r.AsInt((*range)[0], rwhere + "[0]"));
  HETPLAN_ASSIGN_OR_RETURN(out.hi, r.AsInt((*range)[1], rwhere + "[1]"));
  if (out.hi < out.lo) return r.Bad(rwhere, fmt::format("[{}, {}] is an empty range", out.lo, out.hi));
  HETPLAN_ASSIGN_OR_RETURN(out.crossbars_for_all, r.Int(c, where, "crossbars_for_all"));
  HETPLAN_ASSIGN_OR_RETURN(out.cpu_only_us, r.Number(c, where, "cpu_only_us"));
  HETPLAN_ASSIGN_OR_RETURN(const Json* solver, r.Object(c, where, "solver"));
  const std::string swhere = FieldReader::Join(where, "solver");
  HETPLAN_ASSIGN_OR_RETURN(out.complete, r.Bool(*solver, swhere, "complete"));
  HETPLAN_ASSIGN_OR_RETURN(out.termination, r.String(*solver, swhere, "termination"));
  HETPLAN_ASSIGN_OR_RETURN(const Json* bps, r.Array(c, where, "breakpoints"));
  for (size_t i = 0; i < bps->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", FieldReader::Join(where, "breakpoints"), i);
    HETPLAN_ASSIGN_OR_RETURN(FrontierStepPoint s, ReadStep(r, (*bps)[i], at, stream));
    if (!out.steps.empty() && s.crossbars <= out.steps.back().crossbars) {
      return r.Bad(at + ".crossbars", fmt::format("{} is not above the previous breakpoint's {} (budgets increase)",
                                                  s.crossbars, out.steps.back().crossbars));
    }
    if (s.crossbars < out.lo || s.crossbars > out.hi) {
      return r.Bad(at + ".crossbars",
                   fmt::format("{} is outside crossbars_range [{}, {}]", s.crossbars, out.lo, out.hi));
    }
    out.steps.push_back(std::move(s));
  }
  if (const Json* s = r.Optional(c, "saturation")) {
    HETPLAN_ASSIGN_OR_RETURN(out.saturation, ReadStep(r, *s, FieldReader::Join(where, "saturation"), stream));
  }
  // A stream's (II, latency) front is not drawn yet.
  if (const Json* p = stream ? nullptr : r.Optional(c, "pareto")) {
    HETPLAN_ASSIGN_OR_RETURN(out.pareto, ReadPareto(r, *p, FieldReader::Join(where, "pareto")));
  }
  return out;
}

// "resnet18_int8" from "build/models/resnet18_int8.onnx".
std::string ModelName(const std::string& file) { return std::filesystem::path(file).stem().string(); }

// The data file's sets, numbered as gnuplot's `index` counts them (sets
// separated by two blank lines; an empty set is never written).
class DataSets {
 public:
  // Adds a set of blocks (each block a list of "x y" lines, drawn as one
  // line); returns its index, or -1 when it has no line.
  int Add(const std::string& comment, const std::vector<std::vector<std::string>>& blocks) {
    std::string set;
    for (const auto& block : blocks) {
      if (block.empty()) continue;
      if (!set.empty()) set += "\n";  // one blank line: a new block in the same set
      for (const std::string& line : block) set += line + "\n";
    }
    if (set.empty()) return -1;
    text_ += "# " + comment + "\n" + set + "\n\n";
    return count_++;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int count_ = 0;
};

std::string AxisUnit(const std::string& key) {
  auto ends = [&](const char* s) {
    const std::string e(s);
    return key.size() >= e.size() && key.compare(key.size() - e.size(), e.size(), e) == 0;
  };
  if (ends("_ns")) return " ns";
  if (ends("_us")) return " µs";
  if (ends("_ms")) return " ms";
  return "";
}

std::string FileLabel(const FrontierFile& f) {
  return fmt::format("{} on {} (PU {})", ModelName(f.model), f.platform, f.pu);
}

}  // namespace

Result<FrontierFile> ParseFrontierJson(const nlohmann::json& j, const std::string& path) {
  const FieldReader r(path);
  if (!j.is_object()) return r.Bad("(top level)", "not a JSON object");
  FrontierFile out;
  out.path = path;
  HETPLAN_ASSIGN_OR_RETURN(const std::string format, r.String(j, "", "format"));
  if (format != "hetplan-frontier") return r.Bad("format", fmt::format("'{}' is not 'hetplan-frontier'", format));
  HETPLAN_ASSIGN_OR_RETURN(const Json* model, r.Object(j, "", "model"));
  HETPLAN_ASSIGN_OR_RETURN(out.model, r.String(*model, "model", "file"));
  HETPLAN_ASSIGN_OR_RETURN(out.pu, r.String(j, "", "pu"));
  HETPLAN_ASSIGN_OR_RETURN(const Json* platform, r.Object(j, "", "platform"));
  HETPLAN_ASSIGN_OR_RETURN(out.platform, r.String(*platform, "platform", "name"));
  if (const Json* o = r.Optional(j, "objective")) {
    if (!o->is_string() || (*o != "latency" && *o != "throughput")) {
      return r.Bad("objective", fmt::format("{} is neither \"latency\" nor \"throughput\"", o->dump()));
    }
    out.stream = *o == "throughput";
  }
  const Json* curves = r.Optional(j, "curves");
  if (curves == nullptr) {
    if (!j.contains("breakpoints")) {
      return r.Bad("breakpoints", "missing (a single-curve file has `breakpoints`, a multi-curve one `curves`)");
    }
    HETPLAN_ASSIGN_OR_RETURN(FrontierCurve c, ReadCurve(r, j, "", platform, out.stream));
    out.curves.push_back(std::move(c));
    return out;
  }
  if (!curves->is_array()) return r.Bad("curves", "not an array");
  if (curves->empty()) return r.Bad("curves", "empty (a multi-curve file has one curve per axis value)");
  HETPLAN_ASSIGN_OR_RETURN(const Json* axis, r.Object(j, "", "axis"));
  HETPLAN_ASSIGN_OR_RETURN(out.axis_key, r.String(*axis, "axis", "key"));
  for (size_t i = 0; i < curves->size(); ++i) {
    const std::string at = fmt::format("curves[{}]", i);
    const Json& c = (*curves)[i];
    HETPLAN_RETURN_IF_ERROR(r.ExpectObject(c, at));
    HETPLAN_ASSIGN_OR_RETURN(const double value, r.Number(c, at, "value"));
    HETPLAN_ASSIGN_OR_RETURN(FrontierCurve curve, ReadCurve(r, c, at, platform, out.stream));
    curve.value = value;
    out.curves.push_back(std::move(curve));
  }
  return out;
}

Result<FrontierFile> ReadFrontierFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return Error(ErrorCode::kNotFound, "{}: cannot read the frontier file", path);
  const Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Error(ErrorCode::kParseError, "{}: not JSON; give a file `hetplan frontier` wrote", path);
  return ParseFrontierJson(j, path);
}

int64_t CurveReach(const FrontierCurve& curve, int64_t budget) {
  // Past crossbars_for_all every operator fits at once: nothing changes.
  return curve.hi >= curve.crossbars_for_all ? std::max(curve.hi, budget) : curve.hi;
}

const FrontierStepPoint* StepAtBudget(const FrontierCurve& curve, int64_t budget) {
  if (budget > CurveReach(curve, budget)) return nullptr;
  const FrontierStepPoint* at = nullptr;
  for (const FrontierStepPoint& s : curve.steps) {
    if (s.crossbars > budget) break;
    at = &s;
  }
  return at;
}

std::string CurveLabel(const FrontierFile& file, const FrontierCurve& curve) {
  if (!curve.value) return curve.platform;
  const std::string unit = AxisUnit(file.axis_key);
  if (!unit.empty()) return fmt::format("{:g}{}", *curve.value, unit);
  return fmt::format("{}={:g}", file.axis_key, *curve.value);
}

Result<Figure> PlotFrontier(const FrontierFile& file, const std::string& stem, const std::string& dir) {
  // `hi` is where the drawing ends: past the range where a curve's last step
  // holds for every larger budget (CurveReach).
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0, range_hi = 0;
  double ymax = 1;
  int steps = 0, unproven = 0;
  const int64_t last_budget = kPaperBudgets[std::size(kPaperBudgets) - 1];
  for (const FrontierCurve& c : file.curves) {
    lo = std::min(lo, c.lo);
    // A complete curve changes nothing past its last breakpoint: drawn a
    // quarter beyond it (or to the paper's last budget), not to a range's
    // end far past it.
    const int64_t reach = CurveReach(c, last_budget);
    hi = std::max(hi, c.complete && !c.steps.empty()
                          ? std::min(reach, std::max(last_budget, c.steps.back().crossbars * 5 / 4 + 1))
                          : reach);
    range_hi = std::max(range_hi, c.hi);
    for (const FrontierStepPoint& s : c.steps) {
      if (std::isfinite(s.speedup)) ymax = std::max(ymax, s.speedup);
      ++steps;
      unproven += s.status != "optimal";
    }
  }
  if (steps == 0) return Error(ErrorCode::kNotFound, "{}: no breakpoint in any curve", file.path);
  // The axis reaches past HI so that a step starting at HI shows, and the
  // value written right of a mark at HI (a paper budget there) fits.
  const double x_hi = static_cast<double>(hi) + std::max<double>(1.0, 0.07 * static_cast<double>(hi - lo));
  DataSets data;
  std::string plot, marks;
  std::vector<int64_t> budgets;
  for (int64_t b : kPaperBudgets) {
    if (b >= lo && b <= hi) budgets.push_back(b);
  }
  for (size_t k = 0; k < file.curves.size(); ++k) {
    const FrontierCurve& c = file.curves[k];
    const std::string label = CurveLabel(file, c);
    // Runs of steps with the same proof status, each a block that ends at
    // the next step's budget (its riser) or at HI.
    std::vector<std::vector<std::string>> proven, open;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const FrontierStepPoint& s = c.steps[i];
      auto& runs = s.status == "optimal" ? proven : open;
      const bool starts_run = i == 0 || (c.steps[i - 1].status == "optimal") != (s.status == "optimal");
      if (starts_run) runs.emplace_back();
      runs.back().push_back(fmt::format("{} {}", s.crossbars, Num(s.speedup)));
      const bool ends_run = i + 1 == c.steps.size() || (c.steps[i + 1].status == "optimal") != (s.status == "optimal");
      if (ends_run) {
        runs.back().push_back(i + 1 < c.steps.size()
                                  ? fmt::format("{} {}", c.steps[i + 1].crossbars, Num(c.steps[i + 1].speedup))
                                  : fmt::format("{} {}", std::min(CurveReach(c, last_budget), hi), Num(s.speedup)));
      }
    }
    const std::string color = Color(static_cast<int>(k));
    bool titled = false;
    for (const auto& [runs, dash, what] : {std::tuple{&proven, 1, "optimal"}, std::tuple{&open, 2, "not proven"}}) {
      const int index = data.Add(fmt::format("curve {} ({}), {} steps: crossbars speedup", k, label, what), *runs);
      if (index < 0) continue;
      plot += fmt::format("{}'{}.dat' index {} using 1:2 with steps lw 2 dt {} lc rgb '{}' {}",
                          plot.empty() ? "plot " : ", ", stem, index, dash, color,
                          titled ? std::string("notitle") : "title " + Quote(Plain(label)));
      titled = true;
    }
    std::vector<std::string> at;
    for (int64_t b : budgets) {
      const FrontierStepPoint* s = StepAtBudget(c, b);
      if (s != nullptr && std::isfinite(s->speedup)) at.push_back(fmt::format("{} {}", b, Num(s->speedup)));
    }
    const int index = data.Add(fmt::format("curve {} ({}) at the paper's budgets: crossbars speedup", k, label), {at});
    if (index >= 0) {
      marks += fmt::format(
          ", '{s}.dat' index {i} using 1:2 with points pt 7 ps 1.1 lc rgb '{c}' notitle, "
          "'' index {i} using 1:2:(sprintf('%.2f', $2)) with labels left offset 0.6,0.6 font ',8' tc rgb '{c}' "
          "notitle",
          fmt::arg("s", stem), fmt::arg("i", index), fmt::arg("c", color));
    }
  }
  const std::string what = file.axis_key.empty() ? std::string() : fmt::format(", per {}", file.axis_key);
  const std::string title =
      fmt::format("{}: exact {} over CPU-only vs crossbars{}", FileLabel(file),
                  file.stream ? "stream throughput (inputs/s)" : "speedup", what);
  std::string body = fmt::format(
      "set title {}\nset xlabel 'Crossbar budget of {}'\nset ylabel '{}'\nset xrange [{}:{}]\n"
      "set yrange [0:{}]\nset grid ytics\nset datafile missing '?'\nset key bottom right box opaque font ',9'\n",
      Quote(Plain(title)), Plain(file.pu),
      file.stream ? "Inputs per second over CPU-only (x)" : "Speedup over CPU-only", lo, Num(x_hi), Num(ymax * 1.18));
  for (int64_t b : budgets) {
    body += fmt::format(
        "set arrow from {b}, graph 0 to {b}, graph 1 nohead dt 3 lc rgb 'gray50'\n"
        "set label '{b}' at {b}, graph 1.02 center font ',8' tc rgb 'gray30'\n",
        fmt::arg("b", b));
  }
  body += plot + marks + ", 1 with lines dt 2 lc rgb 'gray60' notitle\n";
  std::string caption = fmt::format(
      "The exact frontier of {} from {}: the best {} over CPU-only ({} µs{}) at every crossbar budget from {} "
      "to {}, drawn as steps (each holds from its breakpoint's budget up to the next breakpoint){}{}. ",
      FileLabel(file), file.path,
      file.stream ? "stream throughput (the smallest II, copies of weights counted against the budget)" : "speedup",
      Num(file.curves.front().cpu_only_us),
      file.curves.size() > 1 ? " for the first curve; each curve has its own" : "", lo, range_hi,
      file.axis_key.empty() ? "" : fmt::format(", one line per {}", file.axis_key),
      hi > range_hi ? fmt::format("; past the range, up to {}, a curve whose range holds every operator at once keeps "
                                  "its last value",
                                  hi)
                    : std::string());
  if (!budgets.empty()) {
    std::vector<std::string> b;
    for (int64_t x : budgets) b.push_back(std::to_string(x));
    caption += fmt::format("Dotted verticals: the CIM paper's budgets ({}), each curve's value there read off its "
                           "steps. ",
                           fmt::join(b, ", "));
  }
  caption += unproven == 0 ? "Every step is proven optimal."
                           : fmt::format("{} of the {} steps are not proven optimal (the search stopped before "
                                         "proving them) and are dashed.",
                                         unproven, steps);
  return Draw(dir, stem, title, caption, data.text(), Script(stem, 900, 520, body));
}

Result<Figure> PlotFrontierPareto(const FrontierFile& file, const std::string& stem, const std::string& dir) {
  DataSets data;
  std::string plot;
  int points = 0, unproven = 0;
  double xmax = 0;
  for (size_t k = 0; k < file.curves.size(); ++k) {
    const FrontierCurve& c = file.curves[k];
    if (!c.pareto || c.pareto->points.empty()) continue;
    std::vector<std::string> all, proven, open;
    for (const ParetoPointRead& p : c.pareto->points) {
      const std::string line = fmt::format("{} {}", Num(p.makespan_us / 1000), Num(p.energy_uj));
      all.push_back(line);
      (p.status == "optimal" ? proven : open).push_back(line);
      xmax = std::max(xmax, p.makespan_us / 1000);
      ++points;
      unproven += p.status != "optimal";
    }
    const std::string label = fmt::format("{} ({} crossbars)", CurveLabel(file, c), c.pareto->crossbars);
    const std::string color = Color(static_cast<int>(k));
    const int steps = data.Add(fmt::format("curve {} ({}): makespan_ms energy_uj", k, label), {all});
    plot += fmt::format("{}'{}.dat' index {} using 1:2 with steps lw 2 lc rgb '{}' title {}",
                        plot.empty() ? "plot " : ", ", stem, steps, color, Quote(Plain(label)));
    for (const auto& [set, pt, what] : {std::tuple{&proven, 7, "optimal"}, std::tuple{&open, 6, "not proven"}}) {
      const int index = data.Add(fmt::format("curve {} ({}), {} points", k, label, what), {*set});
      if (index >= 0) {
        plot += fmt::format(", '' index {} using 1:2 with points pt {} ps 1.0 lc rgb '{}' notitle", index, pt, color);
      }
    }
  }
  if (points == 0) return Error(ErrorCode::kNotFound, "{}: no curve has a Pareto front", file.path);
  const std::string title = fmt::format("{}: latency–energy Pareto front", FileLabel(file));
  const std::string body = fmt::format(
      "set title {}\nset xlabel 'Makespan (ms)'\nset ylabel 'Energy (µJ)'\nset xrange [0:{}]\nset yrange [0:*]\n"
      "set grid\nset key top right box opaque font ',9'\n{}\n",
      Quote(Plain(title)), Num(xmax * 1.1), plot);
  const std::string caption = fmt::format(
      "The latency–energy Pareto front of {} from {}: the least energy under each latency cap, drawn as steps (a "
      "point's energy holds from its makespan up to the next point's). {}",
      FileLabel(file), file.path,
      unproven == 0 ? std::string("Every point is proven optimal (filled).")
                    : fmt::format("{} of the {} points are not proven optimal (hollow).", unproven, points));
  return Draw(dir, stem, title, caption, data.text(), Script(stem, 900, 520, body));
}

}  // namespace hetplan

namespace hetplan::report_internal {
namespace {

// "3.41×", with the step's status when it is not proven.
std::string SpeedupCell(const FrontierStepPoint* s) {
  if (s == nullptr) return "no schedule";
  const std::string v = std::isfinite(s->speedup) ? fmt::format("{:.2f}×", s->speedup) : std::string("?");
  return s->status == "optimal" ? v : fmt::format("{} ({})", v, s->status);
}

// A file name part: letters, digits, '-' and '_' only.
std::string Safe(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '-'; },
                  '_');
  return s;
}

}  // namespace

Status AddFrontierSection(const std::vector<FrontierFile>& files, ReportDraft& draft) {
  if (files.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("Exact frontiers over the crossbar budget"));
  draft.blocks.push_back(Para(
      "Each curve is one exact search (`hetplan frontier`, docs/frontier.md): the best makespan at every crossbar "
      "budget, not only at the grid's four. A step holds from its breakpoint's budget up to the next breakpoint; "
      "the value at a budget is that of the last breakpoint at or below it. Speedups are over the curve's CPU-only "
      "plan; \"feasible\" marks a step the search did not prove optimal before it stopped. A curve whose range "
      "reaches the crossbars of every operator at once keeps its last value at every larger budget. A throughput "
      "curve (`--objective throughput`, docs/throughput.md) holds a stream's smallest II instead of the makespan: "
      "its speedup is inputs per second over the CPU-only model's, and copies of weights count against the budget."));
  std::vector<std::string> header = {"model", "platform", "curve", "budgets", "breakpoints", "search",
                                     "saturation (crossbars)", "saturation speedup"};
  for (int64_t b : kPaperBudgets) header.push_back(fmt::format("at {}", b));
  header.push_back("objective");
  std::vector<std::vector<std::string>> rows;
  for (const FrontierFile& f : files) {
    for (const FrontierCurve& c : f.curves) {
      int proven = 0;
      for (const FrontierStepPoint& s : c.steps) proven += s.status == "optimal";
      std::vector<std::string> row = {
          ModelName(f.model),
          c.platform,
          c.value ? CurveLabel(f, c) : std::string("—"),
          fmt::format("{}–{}", c.lo, c.hi),
          proven == static_cast<int>(c.steps.size()) ? std::to_string(c.steps.size())
                                                     : fmt::format("{} ({} optimal)", c.steps.size(), proven),
          c.complete ? std::string("complete") : "stopped: " + c.termination,
      };
      if (c.saturation) {
        row.push_back(fmt::format("{} ({})", c.saturation->crossbars, c.saturation->status));
        row.push_back(std::isfinite(c.saturation->speedup) ? fmt::format("{:.2f}×", c.saturation->speedup) : "?");
      } else {
        row.push_back("not in the file");
        row.push_back("—");
      }
      for (int64_t b : kPaperBudgets) {
        row.push_back(b < c.lo || b > CurveReach(c, b) ? std::string("outside the range")
                                                        : SpeedupCell(StepAtBudget(c, b)));
      }
      row.push_back(f.stream ? "throughput (II)" : "latency");
      rows.push_back(std::move(row));
    }
  }
  draft.blocks.push_back(Table(
      "Per curve: its breakpoints, the saturation budget (beyond which no budget improves; \"optimal\" when proven) "
      "and the speedup over CPU-only at the CIM paper's four crossbar budgets, read off the steps.",
      header, rows));
  if (!draft.draw_figures) return Status::Ok();
  for (size_t i = 0; i < files.size(); ++i) {
    const FrontierFile& f = files[i];
    const std::string stem =
        Safe(fmt::format("frontier_{}_{}_{}", i, ModelName(f.model), std::filesystem::path(f.platform).stem().string()));
    HETPLAN_RETURN_IF_ERROR(draft.AddFigure(PlotFrontier(f, stem, draft.out_dir), "frontier " + f.path));
    bool pareto = false;
    for (const FrontierCurve& c : f.curves) pareto = pareto || (c.pareto && !c.pareto->points.empty());
    if (pareto) {
      HETPLAN_RETURN_IF_ERROR(
          draft.AddFigure(PlotFrontierPareto(f, "pareto" + stem.substr(8), draft.out_dir), "Pareto front " + f.path));
    }
  }
  return Status::Ok();
}

}  // namespace hetplan::report_internal
