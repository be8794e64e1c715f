// The option table (plan/options.h) against every place an option surfaces:
// each flag in a command's help, each Python keyword in hetplan.plan() and its
// stub, each row in docs/planners.md; and a dummy row added to the table is
// reported missing from all four, so the check can fail.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "hetplan/plan/options.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

std::string Read(const std::string& relative) {
  std::ifstream f(std::string(HETPLAN_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(f) << relative;
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The parameter names of the Python function whose definition starts with
// `head` ("def _plan_call(") in `source`, up to the `)` that closes it.
std::vector<std::string> Keywords(const std::string& source, const std::string& head) {
  const size_t begin = source.find(head);
  EXPECT_NE(begin, std::string::npos) << head;
  if (begin == std::string::npos) return {};
  const size_t end = source.find(") ->", begin);
  const std::string params = source.substr(begin + head.size(), end - begin - head.size());
  std::vector<std::string> names;
  const std::regex name(R"((?:^|[,(\s])\s*\*?\s*([A-Za-z_]\w*)\s*[:=])");
  for (auto it = std::sregex_iterator(params.begin(), params.end(), name); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

OptionSurfaces Surfaces() {
  OptionSurfaces s;
  for (const char* command : {"partition --help", "map --help", "dse --help"}) {
    s.cli_help += test_util::Hetplan(command).out;
  }
  s.python_keywords = Keywords(Read("python/hetplan/_plan.py"), "def _plan_call(");
  s.python_stub_keywords = Keywords(Read("python/hetplan/__init__.pyi"), "def plan(");
  s.docs = Read("docs/planners.md");
  return s;
}

TEST(OptionTable, EveryOptionSurfacesInTheCliPythonTheStubAndTheDocs) {
  const OptionSurfaces s = Surfaces();
  ASSERT_FALSE(s.python_keywords.empty());
  ASSERT_FALSE(s.python_stub_keywords.empty());
  for (const std::string& line : OptionTableDrift(SolveOptionTable(), s)) ADD_FAILURE() << line;
}

TEST(OptionTable, ADummyOptionIsReportedMissingEverywhere) {
  std::vector<OptionInfo> table = SolveOptionTable();
  OptionInfo dummy;
  dummy.name = "exact.dummy_option";
  dummy.type = "int";
  dummy.cli = "--dummy-option";
  dummy.python = "dummy_option";
  dummy.methods = {"exact"};
  table.push_back(dummy);
  const std::vector<std::string> drift = OptionTableDrift(table, Surfaces());
  ASSERT_EQ(drift.size(), 4u);
  for (const std::string& line : drift) EXPECT_EQ(line.rfind("exact.dummy_option: ", 0), 0u) << line;
  EXPECT_NE(drift[0].find("--dummy-option"), std::string::npos);
  EXPECT_NE(drift[3].find("docs/planners.md"), std::string::npos);
}

}  // namespace
}  // namespace hetplan
