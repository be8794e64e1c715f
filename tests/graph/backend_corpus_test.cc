// The ONNX backend test corpus (Debian's libonnx-testdata, installed by
// scripts/setup.sh): every model the importer imported before issue 24
// (tests/data/backend_corpus_imported.txt, written by `hetplan graph` at
// main d9f5709) still imports. The counts before and after are in
// docs/results.md.
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

const fs::path kCorpus = "/usr/share/libonnx-testdata/data";

TEST(BackendCorpus, EveryModelImportedBeforeStillImports) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus << " is missing: install libonnx-testdata (scripts/setup.sh)";
  std::ifstream list(std::string(HETPLAN_TEST_DATA_DIR) + "/data/backend_corpus_imported.txt");
  ASSERT_TRUE(list.good());
  std::vector<std::string> before;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty() && line[0] != '#') before.push_back(line);
  }
  ASSERT_GT(before.size(), 500u);
  for (const auto& name : before) {
    const fs::path model = kCorpus / name / "model.onnx";
    ASSERT_TRUE(fs::exists(model)) << model;
    auto m = LoadOnnxModel(model.string());
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().message();
  }
  // All of it now, for the record (docs/results.md).
  int total = 0, imported = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.path().filename() != "model.onnx") continue;
    ++total;
    imported += LoadOnnxModel(entry.path().string()).ok() ? 1 : 0;
  }
  RecordProperty("models", total);
  RecordProperty("imported", imported);
  std::printf("backend corpus: %d of %d models import (%zu before issue 24)\n", imported, total, before.size());
  EXPECT_GE(imported, static_cast<int>(before.size()));
}

}  // namespace
}  // namespace hetplan
