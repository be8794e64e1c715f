// Cost tables as CSV and JSON (docs/cost-table-format.md).
//
// Both forms go through one row reader: a CSV line and a JSON row object are
// first turned into cells keyed by column name, so that the two forms accept
// exactly the same tables and report the same problems. What a table means
// (its checks against a graph and a model) is in cost_table_check.cc.
#include "hetplan/cost/cost_table.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "hetplan/util/io.h"
#include "hetplan/util/utf8.h"

namespace hetplan {

const OpCost* CostTable::Find(const std::string& op_name, const std::string& pu) const {
  for (const OpCost& c : ops) {
    if (c.op_name == op_name && c.pu == pu) return &c;
  }
  return nullptr;
}

namespace {

// Every column, in the order the writers use. Readers go by name.
constexpr std::string_view kColumns[] = {
    "kind",   "op_id",         "op_name",  "pu",       "exec_us",  "dispatch_us",
    "h2d_us", "d2h_us",        "p10_us",   "p90_us",   "in_context_us", "framework_us", "power_w",
    "other_pu", "slowdown",    "other_op", "coexec_us", "bytes", "crossbars", "energy_uj"};
constexpr int kNumColumns = static_cast<int>(std::size(kColumns));

constexpr std::string_view kJsonFormat = "hetplan-cost-table";
constexpr int kJsonVersion = 1;

// Longest cell, column name or meta entry a table may hold. Names and numbers
// are short; a longer one is a broken file, and would be echoed whole into
// every message and schedule that names it.
constexpr size_t kMaxCellChars = 4096;

std::string TooLong(size_t chars) {
  return fmt::format("{} characters, more than the limit of {}", chars, kMaxCellChars);
}

// Shortest text that reads back to the same double.
std::string Num(double v) { return fmt::format("{}", v); }

// --- one row, whatever its source --------------------------------------------

// The cells of one row by column name. A column absent from the header (CSV)
// or the object (JSON) has no entry; an empty cell is an empty string.
struct Row {
  std::string where;  // "<label>:<line>" or "<label>:/rows/<i>"
  std::unordered_map<std::string, std::string> cells;
};

Status RowError(const Row& r, std::string_view column, std::string_view problem,
                std::string_view fix) {
  return Error(ErrorCode::kParseError, "{}: {}: {}; {}", r.where, column, problem, fix);
}

class RowReader {
 public:
  // `csv` selects the wording for a column that is not there at all.
  explicit RowReader(bool csv) : csv_(csv) {}

  Status Read(const Row& r, CostTable* t) {
    std::set<std::string> too_long;  // sorted: the message names the same column every time
    for (const auto& [column, text] : r.cells) {
      if (column.size() > kMaxCellChars || text.size() > kMaxCellChars) too_long.insert(column);
    }
    if (!too_long.empty()) {
      const std::string& column = *too_long.begin();
      if (column.size() > kMaxCellChars) {
        return RowError(r, column.substr(0, 40) + "...", fmt::format("the column name has {}", TooLong(column.size())),
                        "check that this is a cost table");
      }
      return RowError(r, column, fmt::format("the cell has {}", TooLong(r.cells.at(column).size())),
                      "names and numbers are short: check that this is a cost table");
    }
    const std::string* kind = Cell(r, "kind");
    if (kind == nullptr) {
      return RowError(r, "kind", csv_ ? "column missing from the header" : "missing",
                      "every row needs a kind: op, pu, slowdown, coexec, transfer, model or boundary");
    }
    if (*kind == "op") return ReadOp(r, t);
    if (*kind == "pu") return ReadPu(r, t);
    if (*kind == "slowdown") return ReadSlowdown(r, t);
    if (*kind == "coexec") return ReadCoexec(r, t);
    if (*kind == "model") return ReadModel(r, t);
    if (*kind == "transfer") return ReadTransfer(r, t);
    if (*kind == "boundary") return ReadBoundary(r, t);
    return RowError(r, "kind", fmt::format("unknown kind '{}'", *kind),
                    "use op, pu, slowdown, coexec, transfer, model or boundary");
  }

 private:
  static const std::string* Cell(const Row& r, std::string_view column) {
    auto it = r.cells.find(std::string(column));
    return it == r.cells.end() ? nullptr : &it->second;
  }

  Status Missing(const Row& r, std::string_view column, std::string_view kind) const {
    if (csv_) {
      return RowError(r, column, fmt::format("column missing from the header, needed by {} rows", kind),
                      fmt::format("add a {} column", column));
    }
    return RowError(r, column, fmt::format("missing, needed by {} rows", kind),
                    fmt::format("add \"{}\" to the row", column));
  }

  Result<std::string> Text(const Row& r, std::string_view column, std::string_view kind) const {
    const std::string* c = Cell(r, column);
    if (c == nullptr) return Missing(r, column, kind);
    if (c->empty()) {
      return RowError(r, column, fmt::format("empty, but {} rows need it", kind), "fill in the cell");
    }
    return *c;
  }

  // A finite number ≥ 0 (> 0 when `positive`). Absent or empty optional
  // cells give nullopt.
  Result<std::optional<double>> Number(const Row& r, std::string_view column, std::string_view kind,
                                       bool required, bool positive = false) const {
    const std::string* c = Cell(r, column);
    if (c == nullptr) {
      if (required) return Missing(r, column, kind);
      return std::optional<double>();
    }
    if (c->empty()) {
      if (required) {
        return RowError(r, column, fmt::format("empty, but {} rows need it", kind),
                        "fill in the cell");
      }
      return std::optional<double>();
    }
    double v = 0;
    const char* first = c->data();
    const char* last = c->data() + c->size();
    if (*first == '+') ++first;  // from_chars refuses a leading '+'
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range) {
      return RowError(r, column, fmt::format("'{}' is out of range", *c),
                      "write a finite number such as 12.5");
    }
    if (ec != std::errc() || ptr != last) {
      return RowError(r, column, fmt::format("'{}' is not a number", *c),
                      "write a plain decimal number such as 12.5");
    }
    if (!std::isfinite(v)) {
      return RowError(r, column, fmt::format("'{}' is not finite", *c),
                      "write a finite number; leave an optional cell empty, or drop the row "
                      "when the operator is unsupported on that PU");
    }
    if (v < 0 || (positive && v == 0)) {
      return RowError(r, column, fmt::format("'{}' is {}", *c, v < 0 ? "negative" : "zero"),
                      positive ? "write a number > 0" : "times and powers are >= 0");
    }
    return std::optional<double>(v);
  }

  Status ReadOp(const Row& r, CostTable* t) {
    OpCost c;
    HETPLAN_ASSIGN_OR_RETURN(c.op_name, Text(r, "op_name", "op"));
    HETPLAN_ASSIGN_OR_RETURN(c.pu, Text(r, "pu", "op"));
    if (const std::string* id = Cell(r, "op_id"); id != nullptr && !id->empty()) {
      int v = 0;
      auto [ptr, ec] = std::from_chars(id->data(), id->data() + id->size(), v);
      if (ec != std::errc() || ptr != id->data() + id->size() || v < 0) {
        return RowError(r, "op_id", fmt::format("'{}' is not an operator id", *id),
                        "write the operator's 0-based id or leave the cell empty");
      }
      c.op_id = v;
    }
    HETPLAN_ASSIGN_OR_RETURN(auto exec, Number(r, "exec_us", "op", true));
    c.exec_us = *exec;
    HETPLAN_ASSIGN_OR_RETURN(auto dispatch, Number(r, "dispatch_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(auto h2d, Number(r, "h2d_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(auto d2h, Number(r, "d2h_us", "op", false));
    c.dispatch_us = dispatch.value_or(0);
    c.h2d_us = h2d.value_or(0);
    c.d2h_us = d2h.value_or(0);
    HETPLAN_ASSIGN_OR_RETURN(c.p10_us, Number(r, "p10_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(c.p90_us, Number(r, "p90_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(c.in_context_us, Number(r, "in_context_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(c.framework_us, Number(r, "framework_us", "op", false));
    HETPLAN_ASSIGN_OR_RETURN(auto crossbars, Number(r, "crossbars", "op", false));
    if (crossbars) {
      if (*crossbars != std::floor(*crossbars) || *crossbars > 1e9) {
        return RowError(r, "crossbars", fmt::format("'{}' is not a whole number of crossbars", *Cell(r, "crossbars")),
                        "write the crossbars the operator's weights occupy, e.g. 4");
      }
      c.crossbars = static_cast<int64_t>(*crossbars);
    }
    HETPLAN_ASSIGN_OR_RETURN(c.energy_uj, Number(r, "energy_uj", "op", false));  // refuses negatives
    auto [it, fresh] = op_rows_.emplace(std::make_pair(c.op_name, c.pu), r.where);
    if (!fresh) {
      return RowError(r, "op_name",
                      fmt::format("second row for operator '{}' on PU '{}' (first at {})", c.op_name,
                                  c.pu, it->second),
                      "keep one row per (operator, PU)");
    }
    t->ops.push_back(std::move(c));
    return Status::Ok();
  }

  Status ReadPu(const Row& r, CostTable* t) {
    HETPLAN_ASSIGN_OR_RETURN(std::string pu, Text(r, "pu", "pu"));
    HETPLAN_ASSIGN_OR_RETURN(auto power, Number(r, "power_w", "pu", true));
    auto [it, fresh] = pu_rows_.emplace(pu, r.where);
    if (!fresh) {
      return RowError(r, "pu", fmt::format("second pu row for '{}' (first at {})", pu, it->second),
                      "keep one pu row per PU");
    }
    t->power_w[pu] = *power;
    return Status::Ok();
  }

  Status ReadBoundary(const Row& r, CostTable* t) {
    HETPLAN_ASSIGN_OR_RETURN(std::string pu, Text(r, "pu", "boundary"));
    HETPLAN_ASSIGN_OR_RETURN(auto us, Number(r, "exec_us", "boundary", true));
    auto [it, fresh] = boundary_rows_.emplace(pu, r.where);
    if (!fresh) {
      return RowError(r, "pu", fmt::format("second boundary row for '{}' (first at {})", pu, it->second),
                      "keep one boundary row per PU");
    }
    t->boundary_us[pu] = *us;
    return Status::Ok();
  }

  Status ReadSlowdown(const Row& r, CostTable* t) {
    Slowdown s;
    HETPLAN_ASSIGN_OR_RETURN(s.run_pu, Text(r, "pu", "slowdown"));
    HETPLAN_ASSIGN_OR_RETURN(s.interfere_pu, Text(r, "other_pu", "slowdown"));
    HETPLAN_ASSIGN_OR_RETURN(auto f, Number(r, "slowdown", "slowdown", true, /*positive=*/true));
    s.factor = *f;
    auto [it, fresh] = slowdown_rows_.emplace(std::make_pair(s.run_pu, s.interfere_pu), r.where);
    if (!fresh) {
      return RowError(r, "pu",
                      fmt::format("second slowdown row for '{}' under '{}' (first at {})", s.run_pu,
                                  s.interfere_pu, it->second),
                      "keep one slowdown row per PU pair");
    }
    t->slowdowns.push_back(std::move(s));
    return Status::Ok();
  }

  Status ReadCoexec(const Row& r, CostTable* t) {
    CoExecution c;
    HETPLAN_ASSIGN_OR_RETURN(c.op_a, Text(r, "op_name", "coexec"));
    HETPLAN_ASSIGN_OR_RETURN(c.pu_a, Text(r, "pu", "coexec"));
    HETPLAN_ASSIGN_OR_RETURN(c.op_b, Text(r, "other_op", "coexec"));
    HETPLAN_ASSIGN_OR_RETURN(c.pu_b, Text(r, "other_pu", "coexec"));
    HETPLAN_ASSIGN_OR_RETURN(auto us, Number(r, "coexec_us", "coexec", true));
    c.makespan_us = *us;
    auto key = fmt::format("{}\n{}\n{}\n{}", c.op_a, c.pu_a, c.op_b, c.pu_b);
    auto [it, fresh] = coexec_rows_.emplace(key, r.where);
    if (!fresh) {
      return RowError(r, "op_name",
                      fmt::format("second coexec row for '{}' on '{}' with '{}' on '{}' (first at {})",
                                  c.op_a, c.pu_a, c.op_b, c.pu_b, it->second),
                      "keep one coexec row per pair");
    }
    t->coexec.push_back(std::move(c));
    return Status::Ok();
  }

  Status ReadTransfer(const Row& r, CostTable* t) {
    TransferCost x;
    HETPLAN_ASSIGN_OR_RETURN(x.from_pu, Text(r, "pu", "transfer"));
    HETPLAN_ASSIGN_OR_RETURN(x.to_pu, Text(r, "other_pu", "transfer"));
    HETPLAN_ASSIGN_OR_RETURN(auto bytes, Number(r, "bytes", "transfer", true));
    HETPLAN_ASSIGN_OR_RETURN(auto us, Number(r, "exec_us", "transfer", true));
    x.bytes = *bytes;
    x.us = *us;
    HETPLAN_ASSIGN_OR_RETURN(x.p10_us, Number(r, "p10_us", "transfer", false));
    HETPLAN_ASSIGN_OR_RETURN(x.p90_us, Number(r, "p90_us", "transfer", false));
    auto key = fmt::format("{}\n{}\n{}", x.from_pu, x.to_pu, Num(x.bytes));
    auto [it, fresh] = transfer_rows_.emplace(key, r.where);
    if (!fresh) {
      return RowError(r, "bytes",
                      fmt::format("second transfer row from '{}' to '{}' for {} bytes (first at {})", x.from_pu,
                                  x.to_pu, Num(x.bytes), it->second),
                      "keep one transfer row per PU pair and size");
    }
    t->transfers.push_back(std::move(x));
    return Status::Ok();
  }

  Status ReadModel(const Row& r, CostTable* t) {
    if (!model_row_.empty()) {
      return RowError(r, "kind", fmt::format("second model row (first at {})", model_row_),
                      "keep one model row");
    }
    model_row_ = r.where;
    HETPLAN_ASSIGN_OR_RETURN(auto median, Number(r, "exec_us", "model", true));
    t->model_median_us = median;
    HETPLAN_ASSIGN_OR_RETURN(t->model_p10_us, Number(r, "p10_us", "model", false));
    HETPLAN_ASSIGN_OR_RETURN(t->model_p90_us, Number(r, "p90_us", "model", false));
    return Status::Ok();
  }

  bool csv_;
  std::map<std::pair<std::string, std::string>, std::string> op_rows_, slowdown_rows_;
  std::map<std::string, std::string> pu_rows_, boundary_rows_, coexec_rows_, transfer_rows_;
  std::string model_row_;
};

// --- the rows a table writes -------------------------------------------------

// One cell of a row being written; empty text = empty cell / absent key.
struct OutCell {
  std::string_view col;
  std::string text;
  std::optional<double> num;  // set for numeric cells (JSON writes the number)
  OutCell(std::string_view c, std::string t) : col(c), text(std::move(t)) {}
  OutCell(std::string_view c, double v) : col(c), text(Num(v)), num(v) {}
  OutCell(std::string_view c, const std::optional<double>& v)
      : col(c), text(v ? Num(*v) : std::string()), num(v) {}
};
using OutRow = std::vector<OutCell>;

std::vector<OutRow> TableRows(const CostTable& t) {
  std::vector<OutRow> rows;
  if (t.model_median_us) {
    rows.push_back({{"kind", "model"},
                    {"exec_us", *t.model_median_us},
                    {"p10_us", t.model_p10_us},
                    {"p90_us", t.model_p90_us}});
  }
  for (const auto& [pu, w] : t.power_w) {
    rows.push_back({{"kind", "pu"}, {"pu", pu}, {"power_w", w}});
  }
  for (const auto& [pu, us] : t.boundary_us) {
    rows.push_back({{"kind", "boundary"}, {"pu", pu}, {"exec_us", us}});
  }
  for (const OpCost& c : t.ops) {
    rows.push_back({{"kind", "op"},
                    {"op_id", c.op_id >= 0 ? std::to_string(c.op_id) : std::string()},
                    {"op_name", c.op_name},
                    {"pu", c.pu},
                    {"exec_us", c.exec_us},
                    {"dispatch_us", c.dispatch_us},
                    {"h2d_us", c.h2d_us},
                    {"d2h_us", c.d2h_us},
                    {"p10_us", c.p10_us},
                    {"p90_us", c.p90_us},
                    {"in_context_us", c.in_context_us},
                    {"framework_us", c.framework_us},
                    {"crossbars", c.crossbars ? std::optional<double>(static_cast<double>(*c.crossbars))
                                              : std::optional<double>()},
                    {"energy_uj", c.energy_uj}});
  }
  for (const Slowdown& s : t.slowdowns) {
    rows.push_back({{"kind", "slowdown"},
                    {"pu", s.run_pu},
                    {"other_pu", s.interfere_pu},
                    {"slowdown", s.factor}});
  }
  for (const CoExecution& c : t.coexec) {
    rows.push_back({{"kind", "coexec"},
                    {"op_name", c.op_a},
                    {"pu", c.pu_a},
                    {"other_op", c.op_b},
                    {"other_pu", c.pu_b},
                    {"coexec_us", c.makespan_us}});
  }
  for (const TransferCost& x : t.transfers) {
    rows.push_back({{"kind", "transfer"},
                    {"pu", x.from_pu},
                    {"other_pu", x.to_pu},
                    {"bytes", x.bytes},
                    {"exec_us", x.us},
                    {"p10_us", x.p10_us},
                    {"p90_us", x.p90_us}});
  }
  return rows;
}

// --- CSV text ----------------------------------------------------------------

std::string CsvCell(const std::string& s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '#'));
  if (!quote) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

// Splits one CSV record starting at `pos` (RFC 4180 quoting; a quoted cell
// may span lines). Advances `pos` past the record and counts the lines it used.
Result<std::vector<std::string>> SplitRecord(std::string_view text, size_t* pos, int* line,
                                             const std::string& label) {
  std::vector<std::string> cells(1);
  const int start_line = *line;
  bool quoted = false;
  size_t i = *pos;
  for (; i < text.size(); ++i) {
    char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cells.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++*line;
        cells.back() += ch;
      }
      continue;
    }
    if (ch == '"' && cells.back().empty()) {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else if (ch == '\n') {
      break;
    } else if (ch == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) {
      // CRLF line end
    } else {
      cells.back() += ch;
    }
  }
  if (quoted) {
    return Error(ErrorCode::kParseError, "{}:{}: row: a quoted cell is never closed; close it with \"",
                 label, start_line);
  }
  *pos = i < text.size() ? i + 1 : i;
  ++*line;
  return cells;
}

std::string Trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return std::string(s.substr(a, b - a));
}

// A meta key or value as both readers keep it: on one line, trimmed — what
// the CSV form can hold, so that a table survives CSV → JSON → CSV.
std::string MetaText(std::string_view s) { return Trim(OneLine(std::string(s))); }

}  // namespace

std::string CostTableToCsv(const CostTable& t) {
  std::string out;
  // Meta values live on one "# key=value" line.
  for (const auto& [k, v] : t.meta) out += fmt::format("# {}={}\n", OneLine(k), OneLine(v));
  for (int c = 0; c < kNumColumns; ++c) {
    if (c) out += ',';
    out += kColumns[c];
  }
  out += '\n';
  for (const OutRow& row : TableRows(t)) {
    std::vector<std::string> cells(kNumColumns);
    for (const OutCell& cell : row) {
      for (int c = 0; c < kNumColumns; ++c) {
        if (kColumns[c] == cell.col) cells[c] = CsvCell(cell.text);
      }
    }
    for (int c = 0; c < kNumColumns; ++c) {
      if (c) out += ',';
      out += cells[c];
    }
    out += '\n';
  }
  return out;
}

Result<CostTable> ParseCostTableCsv(std::string_view text, const std::string& label) {
  CostTable t;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  if (std::string bad = DescribeInvalidUtf8(text, label); !bad.empty()) {
    return Error(ErrorCode::kParseError, "{}; save the table as UTF-8", bad);
  }
  size_t pos = 0;
  int line = 1;
  // Leading "# key=value" lines (and blank lines) before the header.
  std::vector<std::string> header;
  int header_line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    std::string trimmed = Trim(raw);
    if (trimmed.empty() || trimmed[0] == '#') {
      if (!trimmed.empty()) {
        std::string body = Trim(std::string_view(trimmed).substr(1));
        size_t eq = body.find('=');
        // A '#' line without '=' is a comment.
        if (eq != std::string::npos && body.size() > kMaxCellChars) {
          return Error(ErrorCode::kParseError, "{}:{}: meta: the '# key=value' line has {}; shorten it",
                       label, line, TooLong(body.size()));
        }
        if (eq != std::string::npos) t.meta[MetaText(body.substr(0, eq))] = MetaText(body.substr(eq + 1));
      }
      pos = end < text.size() ? end + 1 : end;
      ++line;
      continue;
    }
    header_line = line;
    HETPLAN_ASSIGN_OR_RETURN(header, SplitRecord(text, &pos, &line, label));
    break;
  }
  if (header.empty()) {
    return Error(ErrorCode::kParseError, "{}:{}: kind: no header row; the first line after the "
                 "'# key=value' lines must name the columns, e.g. kind,op_name,pu,exec_us", label, line);
  }
  std::set<std::string> seen;
  for (auto& h : header) {
    h = Trim(h);
    if (h.size() > kMaxCellChars) {
      return Error(ErrorCode::kParseError, "{}:{}: header: a column name has {}; check that this is a cost table",
                   label, header_line, TooLong(h.size()));
    }
    if (h.empty()) {
      return Error(ErrorCode::kParseError, "{}:{}: header: an empty column name; name every column",
                   label, header_line);
    }
    if (!seen.insert(h).second) {
      return Error(ErrorCode::kParseError, "{}:{}: {}: the column appears twice in the header; keep one",
                   label, header_line, h);
    }
  }
  if (!seen.count("kind")) {
    return Error(ErrorCode::kParseError, "{}:{}: kind: column missing from the header; add a kind "
                 "column (op | pu | slowdown | coexec | transfer | model)", label, header_line);
  }

  RowReader reader(/*csv=*/true);
  while (pos < text.size()) {
    const int row_line = line;
    // Blank lines and later '#' lines are comments.
    size_t end = text.find('\n', pos);
    std::string trimmed = Trim(text.substr(pos, (end == std::string_view::npos ? text.size() : end) - pos));
    if (trimmed.empty() || trimmed[0] == '#') {
      pos = end == std::string_view::npos ? text.size() : end + 1;
      ++line;
      continue;
    }
    HETPLAN_ASSIGN_OR_RETURN(auto cells, SplitRecord(text, &pos, &line, label));
    Row r;
    r.where = fmt::format("{}:{}", label, row_line);
    if (cells.size() != header.size()) {
      return Error(ErrorCode::kParseError, "{}: row: {} cells, but the header has {} columns; give "
                   "every row one cell per column (empty cells are allowed)",
                   r.where, cells.size(), header.size());
    }
    for (size_t c = 0; c < cells.size(); ++c) r.cells[header[c]] = Trim(cells[c]);
    HETPLAN_RETURN_IF_ERROR(reader.Read(r, &t));
  }
  return t;
}

nlohmann::json CostTableToJson(const CostTable& t) {
  nlohmann::json j;
  j["format"] = kJsonFormat;
  j["version"] = kJsonVersion;
  j["meta"] = nlohmann::json::object();
  for (const auto& [k, v] : t.meta) j["meta"][k] = v;
  j["rows"] = nlohmann::json::array();
  for (const OutRow& row : TableRows(t)) {
    nlohmann::json o = nlohmann::json::object();
    for (const OutCell& cell : row) {
      if (cell.text.empty()) continue;
      if (cell.num) {
        o[std::string(cell.col)] = *cell.num;
      } else if (cell.col == "op_id") {
        o["op_id"] = std::stoi(cell.text);  // written from an int just above
      } else {
        o[std::string(cell.col)] = cell.text;
      }
    }
    j["rows"].push_back(std::move(o));
  }
  return j;
}

Result<CostTable> CostTableFromJson(const nlohmann::json& j, const std::string& label) {
  if (!j.is_object()) {
    return Error(ErrorCode::kParseError, "{}: /: not a JSON object; a cost table is "
                 "{{\"format\": \"{}\", \"meta\": {{...}}, \"rows\": [...]}}", label, kJsonFormat);
  }
  if (j.contains("format") && j["format"] != kJsonFormat) {
    return Error(ErrorCode::kParseError, "{}: /format: '{}' is not a cost table; expected \"{}\"", label,
                 j["format"].dump(), kJsonFormat);
  }
  if (j.contains("version") && (!j["version"].is_number_integer() || j["version"].get<int>() > kJsonVersion)) {
    return Error(ErrorCode::kParseError, "{}: /version: {} is not a version this hetplan reads (<= {}); "
                 "upgrade hetplan or re-write the table", label, j["version"].dump(), kJsonVersion);
  }
  CostTable t;
  if (j.contains("meta")) {
    if (!j["meta"].is_object()) {
      return Error(ErrorCode::kParseError, "{}: /meta: not an object; write meta as {{\"key\": \"value\"}}",
                   label);
    }
    for (const auto& [k, v] : j["meta"].items()) {
      std::string value = v.is_string() ? v.get<std::string>() : v.dump();
      if (k.size() > kMaxCellChars || value.size() > kMaxCellChars) {
        return Error(ErrorCode::kParseError, "{}: /meta: an entry has {}; shorten it", label,
                     TooLong(std::max(k.size(), value.size())));
      }
      if (k.find('=') != std::string::npos) {
        return Error(ErrorCode::kParseError, "{}: /meta: the key '{}' contains '='; a CSV table could not "
                     "hold it (# key=value): rename it", label, OneLine(k.substr(0, 40)));
      }
      t.meta[MetaText(k)] = MetaText(value);
    }
  }
  if (!j.contains("rows") || !j["rows"].is_array()) {
    return Error(ErrorCode::kParseError, "{}: /rows: missing or not an array; give the rows as an array "
                 "of objects", label);
  }
  RowReader reader(/*csv=*/false);
  for (size_t i = 0; i < j["rows"].size(); ++i) {
    const auto& o = j["rows"][i];
    Row r;
    r.where = fmt::format("{}:/rows/{}", label, i);
    if (!o.is_object()) {
      return Error(ErrorCode::kParseError, "{}: row: not an object; write each row as "
                   "{{\"kind\": \"op\", \"op_name\": ..., ...}}", r.where);
    }
    for (const auto& [k, v] : o.items()) {
      if (v.is_null()) continue;
      if (v.is_string()) {
        r.cells[k] = Trim(v.get<std::string>());  // as a CSV cell is
      } else if (v.is_number_integer()) {
        r.cells[k] = v.dump();
      } else if (v.is_number()) {
        r.cells[k] = Num(v.get<double>());
      } else {
        return Error(ErrorCode::kParseError, "{}: {}: {} is neither a number nor a string; write a "
                     "number or a name", r.where, k, v.dump());
      }
    }
    HETPLAN_RETURN_IF_ERROR(reader.Read(r, &t));
  }
  return t;
}

Result<CostTable> LoadCostTable(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext != ".csv" && ext != ".json") {
    return Error(ErrorCode::kInvalidArgument, "{}: unknown cost table extension '{}'; name the file "
                 ".csv or .json", path, ext);
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (ext == ".csv") return ParseCostTableCsv(text, path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON ({}); re-write the table", path, e.what());
  }
  return CostTableFromJson(j, path);
}

Status SaveCostTable(const CostTable& t, const std::string& csv_path, const std::string& json_path) {
  if (!csv_path.empty()) HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(csv_path, CostTableToCsv(t)));
  if (!json_path.empty()) {
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(json_path, CostTableToJson(t).dump(1) + "\n"));
  }
  return Status::Ok();
}

}  // namespace hetplan
