// Runs the bad-input corpus (tests/bad_inputs/cases.json, files written by
// tests/bad_inputs/make_corpus.py) through the real `hetplan` binary. For
// every case: a non-zero exit that is not an internal error, no crash
// signal, no hang (each run is killed after the manifest's timeout), exactly
// one line on stderr, "hetplan: error: <file>...: <problem>", naming the file
// and containing the expected words, and nothing written — the --out/--json
// file is not created, or, where it existed, is unchanged. `validate` cases
// print their violations on stdout, one line each naming the file, and then
// the one error line. Control cases (the good files) must succeed, so that a
// bad case fails for its stated reason and not because the harness is broken.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "robustness/run_binary.h"

namespace hetplan::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPreviousContent = "previous content: must survive a failed run\n";

struct Case {
  std::string name, file;
  std::vector<std::string> run;
  std::vector<std::string> expect, expect_stdout;
  std::optional<int> exit;
  bool out_exists = false;
  bool names_file = true;
};

std::vector<Case> ReadCases(const nlohmann::json& j, const char* key) {
  std::vector<Case> cases;
  for (const auto& c : j.at(key)) {
    Case k;
    k.name = c.at("name").get<std::string>();
    k.file = c.value("file", "");
    k.run = c.at("run").get<std::vector<std::string>>();
    k.expect = c.value("expect", std::vector<std::string>{});
    k.expect_stdout = c.value("expect_stdout", std::vector<std::string>{});
    if (c.contains("exit")) k.exit = c["exit"].get<int>();
    k.out_exists = c.value("out_exists", false);
    k.names_file = c.value("names_file", true);
    cases.push_back(std::move(k));
  }
  return cases;
}

std::string Substitute(std::string s, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    for (size_t p = s.find(k); p != std::string::npos; p = s.find(k, p + v.size())) s.replace(p, k.size(), v);
  }
  return s;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string Head(const std::string& s) { return s.size() <= 600 ? s : s.substr(0, 600) + "…"; }

class Corpus : public CorpusSuite {
 protected:
  static void SetUpTestSuite() {
    CorpusSuite::SetUpTestSuite();
    manifest_ = new nlohmann::json(
        nlohmann::json::parse(ReadText(std::string(HETPLAN_TEST_DATA_DIR) + "/bad_inputs/cases.json")));
  }
  static void TearDownTestSuite() {
    CorpusSuite::TearDownTestSuite();
    delete manifest_;
    manifest_ = nullptr;
  }

  // {dir}: the corpus folder; {file}: the case's file in it; {out}: an output
  // path in a fresh folder; {model}: the corpus's tiny.onnx.
  std::map<std::string, std::string> Vars(const Case& c, const fs::path& out_dir) const {
    return {{"{dir}", dir_->path.string()},
            {"{file}", File(c.file)},
            {"{out}", (out_dir / "out.json").string()},
            {"{model}", File("tiny.onnx")}};
  }

  static inline nlohmann::json* manifest_ = nullptr;
};

TEST_F(Corpus, EveryBadInputFailsCleanlyWithOneLineAndWritesNothing) {
  // The 100 MB files only for this test (each test runs in its own process under CTest).
  ASSERT_EQ(MakeCorpus(dir_->path, /*big=*/true), "");
  const double timeout_s = manifest_->value("timeout_s", 30.0);
  std::vector<Case> cases = ReadCases(*manifest_, "cases");
  ASSERT_GT(cases.size(), 50u);
  std::set<std::string> names;
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + c.name + " (" + c.file + ")");
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name";
    if (!c.file.empty()) {
      ASSERT_TRUE(fs::exists(dir_->path / c.file)) << "make_corpus.py did not write " << c.file;
    }
    TempDir out_dir("case");
    auto vars = Vars(c, out_dir.path);
    const fs::path out = vars.at("{out}");
    if (c.out_exists) {
      std::ofstream(out) << kPreviousContent;
    }
    std::vector<std::string> args;
    for (const std::string& a : c.run) args.push_back(Substitute(a, vars));
    RunResult r = RunHetplan(args, WithTimeout(timeout_s));

    EXPECT_FALSE(r.timed_out) << "killed after " << timeout_s << " s: a hang";
    EXPECT_EQ(r.signal, 0) << "ended by signal " << r.signal << "; stderr: " << Head(r.err);
    EXPECT_NE(r.exit_code, 0) << "a bad input was accepted; stdout: " << Head(r.out);
    EXPECT_NE(r.exit_code, 70) << "an internal error (a bug): " << Head(r.err);
    if (c.exit) {
      EXPECT_EQ(r.exit_code, *c.exit) << Head(r.err);
    }
    if (r.signal != 0 || r.timed_out) continue;

    // Exactly one short line on stderr: "hetplan: error: <file>: <problem>".
    EXPECT_LT(r.err_bytes, 2048u) << "the error is not one short line: " << Head(r.err);
    EXPECT_LT(r.out_bytes, 64u << 10) << "a failed run printed too much: " << Head(r.out);
    std::vector<std::string> err_lines = Lines(r.err);
    ASSERT_EQ(err_lines.size(), 1u) << "stderr: " << Head(r.err);
    EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << Head(r.err);
    const std::string& line = err_lines[0];
    EXPECT_EQ(line.rfind("hetplan: error: ", 0), 0u) << line;
    if (c.names_file && !c.file.empty()) {
      EXPECT_NE(line.find(vars.at("{file}")), std::string::npos) << "does not name the file: " << line;
    }
    for (const std::string& e : c.expect) {
      EXPECT_NE(line.find(Substitute(e, vars)), std::string::npos) << "missing '" << e << "' in: " << line;
    }
    // `validate` prints one violation per line on stdout, each naming the file.
    if (!c.expect_stdout.empty()) {
      std::vector<std::string> out_lines = Lines(r.out);
      EXPECT_FALSE(out_lines.empty());
      for (const std::string& l : out_lines) {
        EXPECT_EQ(l.rfind(vars.at("{file}") + ": ", 0), 0u) << "violation line without the file: " << Head(l);
      }
      for (const std::string& e : c.expect_stdout) {
        EXPECT_NE(r.out.find(e), std::string::npos) << "missing '" << e << "' on stdout: " << Head(r.out);
      }
    } else if (args[0] != "validate") {
      EXPECT_EQ(r.out, "") << "a failed run printed a result";
    }

    // Nothing written: no output file (or the old one unchanged), no temp files left.
    if (c.out_exists) {
      EXPECT_EQ(ReadText(out), kPreviousContent) << "a failed run changed the existing output";
    } else {
      EXPECT_FALSE(fs::exists(out)) << "a failed run wrote " << out;
    }
    for (const auto& entry : fs::directory_iterator(out_dir.path)) {
      EXPECT_EQ(entry.path(), out) << "left behind: " << entry.path();
    }
  }
}

TEST_F(Corpus, GoodControlFilesSucceed) {
  for (const Case& c : ReadCases(*manifest_, "controls")) {
    SCOPED_TRACE("control " + c.name);
    TempDir out_dir("control");
    auto vars = Vars(c, out_dir.path);
    std::vector<std::string> args;
    for (const std::string& a : c.run) args.push_back(Substitute(a, vars));
    RunResult r = RunHetplan(args, WithTimeout(manifest_->value("timeout_s", 30.0)));
    EXPECT_EQ(r.exit_code, 0) << Head(r.err) << Head(r.out);
    EXPECT_EQ(r.err, "");
    for (const std::string& e : c.expect_stdout) {
      EXPECT_NE(r.out.find(e), std::string::npos) << "missing '" << e << "' on stdout: " << Head(r.out);
    }
  }
}

// Every file the script writes is used by a case or a control, so that the
// corpus and the manifest cannot drift apart silently.
TEST_F(Corpus, EveryGeneratedFileHasACase) {
  std::set<std::string> used;
  for (const char* key : {"cases", "controls"}) {
    for (const Case& c : ReadCases(*manifest_, key)) {
      if (!c.file.empty()) used.insert(c.file);
      for (const std::string& a : c.run) {
        std::smatch m;
        static const std::regex kDirRef(R"(\{dir\}/([A-Za-z0-9_.-]+))");
        for (auto it = std::sregex_iterator(a.begin(), a.end(), kDirRef); it != std::sregex_iterator(); ++it) {
          used.insert((*it)[1]);
        }
      }
    }
  }
  used.insert("tiny.onnx");  // {model}
  const nlohmann::json elsewhere = manifest_->value("used_elsewhere", nlohmann::json::object());
  for (auto it = elsewhere.begin(); it != elsewhere.end(); ++it) used.insert(it.key());
  // Written with --big only; the first test runs them.
  for (const char* big : {"platform_100mb_string.yaml", "costs_100mb_cell.csv", "schedule_100mb_name.json"}) {
    EXPECT_TRUE(used.count(big)) << big << " has no case";
  }
  for (const auto& entry : fs::directory_iterator(dir_->path)) {
    std::string name = entry.path().filename().string();
    EXPECT_TRUE(used.count(name)) << name << " is generated but no case uses it";
  }
}

}  // namespace
}  // namespace hetplan::testing
