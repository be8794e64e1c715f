// docs/planners.md's options table is generated from the code
// (SolveOptionTableMarkdown, `hetplan solvers --options`); this fails when the
// two drift, so the reference never lies about a default.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hetplan/plan/options.h"

namespace hetplan {
namespace {

TEST(Planners, OptionsTableMatchesTheDocs) {
  std::ifstream in(std::string(HETPLAN_SOURCE_DIR) + "/docs/planners.md");
  ASSERT_TRUE(in) << "docs/planners.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string table = SolveOptionTableMarkdown();
  EXPECT_NE(doc.find(table), std::string::npos)
      << "docs/planners.md's options table differs from the code; regenerate it with `hetplan solvers --options`:\n"
      << table;
}

TEST(Planners, OptionsTableShowsTheDefaults) {
  const SolveOptions d;
  bool found = false;
  for (const OptionInfo& o : SolveOptionTable()) {
    EXPECT_FALSE(o.description.empty()) << o.name;
    if (o.name == "exact.node_limit") {
      found = true;
      EXPECT_EQ(o.default_text, std::to_string(d.exact.node_limit));
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace hetplan
