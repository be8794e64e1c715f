// libFuzzer target: the ONNX importer on arbitrary bytes. Whatever the bytes,
// LoadOnnxModelFromBytes must return a model or an error naming the label —
// never crash, hang, throw, or trip ASan/UBSan.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hetplan/graph/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hetplan::ImportOptions options;
  // Small limits keep each run fast; the checks against them are under test too.
  options.max_operators = 2000;
  options.max_tensor_elements = int64_t{1} << 30;
  // Half the inputs use activation fusion (chosen by the first byte's low bit,
  // which the protobuf parser also reads, so both paths see every shape).
  if (size > 0 && (data[0] & 1)) options.fusion = hetplan::FusionLevel::kActivation;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto model = hetplan::LoadOnnxModelFromBytes(bytes, "fuzz.onnx", options);
  if (!model.ok()) {
    // Every error names its source.
    if (model.status().message().rfind("fuzz.onnx", 0) != 0) std::abort();
  } else if (model->graph.size() == 0) {
    std::abort();  // the importer promises at least one operator
  }
  return 0;
}
