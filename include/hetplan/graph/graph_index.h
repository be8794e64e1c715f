// Where each tensor of an ONNX graph comes from: the node that produces it,
// the initializer or sparse initializer that holds it, and its value info (a
// graph input's, a value_info entry's or a graph output's). Built once per
// model by the code that cuts graphs apart: the profiler's operator extractor
// (cost/) and the plan splitter (deploy/).
#pragma once

#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

namespace hetplan {

struct GraphProtoIndex {
  explicit GraphProtoIndex(const onnx::GraphProto& g);

  std::unordered_map<std::string, int> producer;     // tensor → index of the node writing it
  std::unordered_map<std::string, int> initializer;  // tensor → index in g.initializer()
  std::unordered_map<std::string, int> sparse;       // tensor → index in g.sparse_initializer()
  std::unordered_map<std::string, const onnx::ValueInfoProto*> value_info;  // into g: it must outlive the index
};

}  // namespace hetplan
