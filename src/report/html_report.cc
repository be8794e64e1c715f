// The sweep report: reads the results, adds the framing (provenance, Gantt
// charts) around the papers' tables (paper_tables.cc), and renders the
// blocks once as Markdown and once as a self-contained HTML page.
#include "hetplan/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/report/plots.h"
#include "report/paper_tables.h"

namespace hetplan {

using report_internal::AddUnique;
using report_internal::Block;
using report_internal::FigureBlock;
using report_internal::Heading;
using report_internal::List;
using report_internal::OperatorsOf;
using report_internal::Para;
using report_internal::ReportDraft;

namespace {

std::string Html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MdCell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string RenderMarkdown(const std::string& title, const std::vector<Block>& blocks) {
  std::string md = "# " + title + "\n\n";
  for (const Block& b : blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading:
        md += "## " + b.text + "\n\n";
        break;
      case Block::Kind::kParagraph:
        md += b.text + "\n\n";
        break;
      case Block::Kind::kList:
        for (const std::string& i : b.items) md += "- " + i + "\n";
        md += "\n";
        break;
      case Block::Kind::kFigure:
        md += fmt::format("![{}]({})\n\n*{}* ([SVG]({}), [gnuplot script]({}), [data]({}))\n\n", b.figure.title,
                          b.figure.png, b.figure.caption, b.figure.svg, b.figure.script, b.figure.data);
        break;
      case Block::Kind::kTable: {
        if (!b.text.empty()) md += "*" + b.text + "*\n\n";
        md += "|";
        for (const std::string& h : b.header) md += " " + MdCell(h) + " |";
        md += "\n|";
        for (size_t i = 0; i < b.header.size(); ++i) md += i == 0 ? "---|" : "---:|";
        md += "\n";
        for (const auto& row : b.rows) {
          md += "|";
          for (const std::string& c : row) md += " " + MdCell(c) + " |";
          md += "\n";
        }
        md += "\n";
        break;
      }
    }
  }
  return md;
}

std::string RenderHtml(const std::string& title, const std::vector<Block>& blocks) {
  std::string h = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n"
      "<style>body{{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:1200px;margin:2em auto;"
      "padding:0 1em;color:#222;line-height:1.45}}h1{{font-size:1.6em}}h2{{border-bottom:1px solid #ccc;"
      "padding-bottom:.2em;margin-top:2em}}table{{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}}"
      "th,td{{border:1px solid #ccc;padding:.25em .6em;text-align:right}}th{{background:#f0f3f7}}"
      "td:first-child,th:first-child{{text-align:left}}figure{{margin:1em 0 2em}}figure img{{max-width:100%;"
      "border:1px solid #ddd}}figcaption,.caption{{font-size:.9em;color:#444}}.paper{{color:#8a4b00}}"
      "code{{background:#f4f4f4;padding:0 .2em}}</style></head><body>\n<h1>{}</h1>\n",
      Html(title), Html(title));
  for (const Block& b : blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading:
        h += "<h2>" + Html(b.text) + "</h2>\n";
        break;
      case Block::Kind::kParagraph:
        h += "<p>" + Html(b.text) + "</p>\n";
        break;
      case Block::Kind::kList:
        h += "<ul>\n";
        for (const std::string& i : b.items) h += "<li>" + Html(i) + "</li>\n";
        h += "</ul>\n";
        break;
      case Block::Kind::kFigure:
        h += fmt::format(
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{} (<a href=\"{}\">SVG</a>, <a href=\"{}\">gnuplot "
            "script</a>, <a href=\"{}\">data</a>)</figcaption></figure>\n",
            Html(b.figure.png), Html(b.figure.title), Html(b.figure.caption), Html(b.figure.svg), Html(b.figure.script),
            Html(b.figure.data));
        break;
      case Block::Kind::kTable: {
        if (!b.text.empty()) h += "<p class=\"caption\"><em>" + Html(b.text) + "</em></p>\n";
        h += "<table><tr>";
        for (const std::string& c : b.header) {
          h += (c.find("paper") != std::string::npos ? "<th class=\"paper\">" : "<th>") + Html(c) + "</th>";
        }
        h += "</tr>\n";
        for (const auto& row : b.rows) {
          h += "<tr>";
          for (size_t i = 0; i < row.size(); ++i) {
            const bool paper = i < b.header.size() && b.header[i].find("paper") != std::string::npos;
            h += (paper ? "<td class=\"paper\">" : "<td>") + Html(row[i]) + "</td>";
          }
          h += "</tr>\n";
        }
        h += "</table>\n";
        break;
      }
    }
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace

namespace report_internal {

Status ReportDraft::AddFigure(Result<Figure> f, const std::string& what) {
  if (f.ok()) {
    figures.push_back(*f);
    blocks.push_back(FigureBlock(*f));
    return Status::Ok();
  }
  if (f.status().code() == ErrorCode::kNotFound) {
    skipped.push_back(fmt::format("{}: {}", what, f.status().message()));
    return Status::Ok();
  }
  return f.status();
}

}  // namespace report_internal

namespace {

// The rows of every results file, in order; a point run twice (several
// files, a rerun) keeps its last row. Unreadable lines are counted.
Result<std::vector<nlohmann::json>> ReadResultRows(const std::vector<std::string>& results, int* bad_lines) {
  std::vector<nlohmann::json> rows;
  std::map<std::string, size_t> by_key;
  for (const std::string& path : results) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error(ErrorCode::kNotFound, "{}: cannot open the results file", path);
    for (std::string line; std::getline(f, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        ++*bad_lines;
        continue;
      }
      const std::string key = j.contains("key") && j["key"].is_string() ? j["key"].get<std::string>() : "";
      if (!key.empty()) {
        const auto [it, fresh] = by_key.emplace(key, rows.size());
        if (!fresh) {
          rows[it->second] = std::move(j);
          continue;
        }
      }
      rows.push_back(std::move(j));
    }
  }
  return rows;
}

// The report's opening: where the rows come from, and what is measured on
// which CPU. Lists the models and solvers of the rows.
void AddIntroduction(const std::vector<nlohmann::json>& rows, size_t frontier_files, std::vector<std::string>* models,
                     std::vector<std::string>* solvers, ReportDraft& draft) {
  std::vector<std::string> hosts, platforms;
  for (const nlohmann::json& r : rows) {
    if (!RowString(r, "host_cpu").empty()) AddUnique(hosts, RowString(r, "host_cpu"));
    AddUnique(*models, RowString(r, "model"));
    AddUnique(platforms, RowString(r, "platform"));
    AddUnique(*solvers, RowString(r, "solver"));
  }
  const std::string host = hosts.empty() ? std::string("unknown") : fmt::format("{}", fmt::join(hosts, ", "));
  {
    char date[32];
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    draft.blocks.push_back(Para(fmt::format(
        "Generated {} by `hetplan report` from {} result rows ({} models, {} platform settings, {} solvers){}. Numbers "
        "marked \"measured here\" come from this machine; numbers marked \"paper\" are copied from the papers (Klein "
        "et al., CPU–CIM ILP partitioning, §V; BIDENT, §IV) and were measured on other hardware.",
        date, rows.size(), models->size(), platforms.size(), solvers->size(),
        frontier_files == 0 ? std::string() : fmt::format(" and {} frontier files", frontier_files))));
  }
  draft.blocks.push_back(Heading("Read this first: what is measured, and on which CPU"));
  draft.blocks.push_back(List({
      fmt::format("Host CPU costs are measured here with ONNX Runtime, one operator at a time, on this machine's CPU: "
                  "{} (one intra-op thread, as the CIM paper's single-core hosts). The CIM paper measured an ARM "
                  "Cortex-A72 at 1.5 GHz (edge) and an AMD Ryzen 9 3900X at 3.8 GHz (x86). Speedups over CPU-only "
                  "depend directly on how fast the host is, so ours are not expected to match the paper's.",
                  host),
      "klein-arm and klein-x86 are the paper's two setups as platforms: here both hosts are this machine's CPU, so the "
      "two differ only in the CPU–CIM bus bandwidth (10.24 vs 20.48 GB/s) — not in host speed as in the paper.",
      "CIM and bus costs are analytical (the paper's eqs. 1–4), as in the paper; every schedule comes from the same "
      "cost model and passes the independent validator.",
      fmt::format("Our operator counts differ from the paper's (at this run's fusion level ResNet-18 has {} operators vs 38 in "
                  "Table I, YOLOv5n {} vs 251), so ILP sizes differ too. The paper solved with Gurobi (600 s limit); "
                  "we use the exact search (`--solver exact`, the default) or the paper's MIP on CBC (`--solver mip`), as "
                  "Table I's formulation column says, with the time limit stated under \"How this was produced\".",
                  OperatorsOf(rows, "resnet18"), OperatorsOf(rows, "yolov5n")),
      "BIDENT-style rows (platforms with power figures, such as soc-example) use the platform's illustrative roofline "
      "costs unless it names measured tables: they exercise the method, they are not measurements of an SoC.",
  }));

}

}  // namespace

Result<ReportOutput> WriteReport(const ReportInputs& in) {
  ReportOutput out;
  HETPLAN_ASSIGN_OR_RETURN(std::vector<nlohmann::json> all_rows, ReadResultRows(in.results, &out.bad_lines));
  out.rows = static_cast<int>(all_rows.size());
  // The grid's twin with a cell layout gets a table of its own.
  std::vector<nlohmann::json> rows, physical;
  for (nlohmann::json& r : all_rows) (report_internal::IsCellLayoutRow(r) ? physical : rows).push_back(std::move(r));
  // Every frontier file is read before anything is written: a bad one is one
  // error and an untouched folder.
  std::vector<FrontierFile> frontiers;
  for (const std::string& path : in.frontier_files) {
    HETPLAN_ASSIGN_OR_RETURN(FrontierFile f, ReadFrontierFile(path));
    out.frontier_curves += static_cast<int>(f.curves.size());
    frontiers.push_back(std::move(f));
  }
  if (in.figures && !GnuplotAvailable()) {
    return Error(ErrorCode::kNotFound,
                 "gnuplot is not on PATH: install it (Debian: apt-get install gnuplot-nox) or pass --no-figures");
  }
  std::error_code ec;
  std::filesystem::create_directories(in.out_dir, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", in.out_dir, ec.message());

  ReportDraft draft;
  draft.out_dir = in.out_dir;
  draft.draw_figures = in.figures;

  std::vector<std::string> models, solvers;
  AddIntroduction(rows, frontiers.size(), &models, &solvers, draft);

  // The papers' tables and figures, with our rows beside them (paper_tables.cc).
  HETPLAN_RETURN_IF_ERROR(report_internal::AddKleinSections(rows, draft));
  HETPLAN_RETURN_IF_ERROR(report_internal::AddPhysicalMappingSection(rows, physical, draft.partition_method, draft));
  HETPLAN_RETURN_IF_ERROR(report_internal::AddFrontierSection(frontiers, draft));
  if (!rows.empty()) {  // frontier files alone: no sweep section to leave out
    HETPLAN_RETURN_IF_ERROR(report_internal::AddBaselineSection(rows, models, solvers, draft));
    HETPLAN_RETURN_IF_ERROR(report_internal::AddBidentSections(rows, models, draft));
  }

  // Gantt charts.
  if (!in.schedule_files.empty()) {
    draft.blocks.push_back(Heading("Schedules"));
    int i = 0;
    for (const std::string& path : in.schedule_files) {
      HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) return Error(ErrorCode::kParseError, "{}: not JSON", path);
      HETPLAN_ASSIGN_OR_RETURN(const PlanFile s, ReadPlanFile(j, path));
      if (in.figures) {
        HETPLAN_RETURN_IF_ERROR(
            draft.AddFigure(PlotGantt(s, fmt::format("gantt_{}", i++), in.out_dir), "Gantt " + path));
      }
    }
  }

  // Provenance.
  draft.blocks.push_back(Heading("How this was produced"));
  std::vector<std::string> items = in.run_notes;
  for (const std::string& path : in.results) items.push_back("results file: " + path);
  for (const std::string& path : in.frontier_files) items.push_back("frontier file: " + path);
  if (out.bad_lines > 0) items.push_back(fmt::format("{} unreadable lines skipped", out.bad_lines));
  for (const std::string& s : draft.skipped) items.push_back("left out: " + s);
  items.push_back("every figure is drawn by gnuplot from the .gp script and .dat file next to it");
  draft.blocks.push_back(List(items));

  const std::filesystem::path dir(in.out_dir);
  out.html_path = (dir / "index.html").string();
  out.markdown_path = (dir / "report.md").string();
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(out.markdown_path, RenderMarkdown(in.title, draft.blocks)));
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(out.html_path, RenderHtml(in.title, draft.blocks)));
  out.figures = std::move(draft.figures);
  out.skipped = std::move(draft.skipped);
  return out;
}

}  // namespace hetplan
