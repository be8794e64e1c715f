// The ONNX backend test corpus of the ONNX release hetplan builds against
// (ONNX 1.22's onnx/backend/test/data, kept by scripts/setup_onnx.sh in
// third_party/onnx/share/onnx/backend-test-data: node, light, pytorch-converted,
// pytorch-operator, real, simple; opsets up to 27). Every model the importer
// imported when the list was written (tests/data/backend_corpus_imported.txt,
// written by `hetplan graph` at the commit its first line names) still
// imports, and every model it refuses is refused with one line. The counts
// are in docs/results.md.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hetplan/graph/onnx_import.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(HETPLAN_SOURCE_DIR) / "third_party/onnx/share/onnx/backend-test-data";

TEST(BackendCorpus, EveryModelImportedBeforeStillImportsAndEveryRefusalIsOneLine) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus << " is missing: run scripts/setup_onnx.sh (scripts/setup.sh does)";
  std::ifstream list(std::string(HETPLAN_TEST_DATA_DIR) + "/data/backend_corpus_imported.txt");
  ASSERT_TRUE(list.good());
  std::vector<std::string> before;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty() && line[0] != '#') before.push_back(line);
  }
  ASSERT_GT(before.size(), 1000u);
  for (const auto& name : before) {
    // A test folder's model.onnx, or a light/*.onnx file named as it is.
    const fs::path model = name.ends_with(".onnx") ? kCorpus / name : kCorpus / name / "model.onnx";
    ASSERT_TRUE(fs::exists(model)) << model;
    auto m = LoadOnnxModel(model.string());
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().message();
  }
  // All of it, for the record (docs/results.md); a refusal is one line.
  std::vector<fs::path> models;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.path().extension() == ".onnx") models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  int imported = 0;
  for (const auto& path : models) {
    auto m = LoadOnnxModel(path.string());
    if (m.ok()) {
      ++imported;
      continue;
    }
    const std::string& message = m.status().message();
    EXPECT_FALSE(message.empty()) << path;
    EXPECT_EQ(message.find('\n'), std::string::npos) << path << ": " << message;
  }
  RecordProperty("models", static_cast<int>(models.size()));
  RecordProperty("imported", imported);
  std::printf("backend corpus: %d of %zu models import (%zu listed)\n", imported, models.size(), before.size());
  EXPECT_GE(imported, static_cast<int>(before.size()));
}

}  // namespace
}  // namespace hetplan
