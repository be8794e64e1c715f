// Internal to graph/: reading a node's integer attribute, the one accessor
// the importer, the domains, the QDQ reader and constant folding share.
#pragma once

#include <cstdint>

#include <onnx/onnx_pb.h>

namespace hetplan::internal {

// The integer attribute `name` of n (its first, as ONNX Runtime reads it), or def.
inline int64_t AttrInt(const onnx::NodeProto& n, const char* name, int64_t def) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return def;
}

}  // namespace hetplan::internal
