// A plan's PUs on the nodes of the planned model's file as an application
// reads it (src/deploy/split_internal.h): what the exports to other
// runtimes annotate.
#include <unordered_map>

#include "deploy/split_internal.h"
#include "hetplan/util/io.h"

namespace hetplan::deploy_internal {

Result<onnx::ModelProto> ReadPlannedFile(const LoadedModel& model) {
  if (!model.external_data_dir.empty()) {
    return Error(ErrorCode::kUnsupported, "{}: keeps {} weights as external data, which hetplan's exports do not "
                 "carry yet; save the weights inside the model", model.path, model.external_tensors);
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(model.path, int64_t{1} << 31));
  onnx::ModelProto source;
  if (!source.ParseFromString(bytes)) return Error(ErrorCode::kParseError, "{}: not an ONNX model", model.path);
  return source;
}

std::vector<std::string> PlannedPuOfFileNodes(const PlanFile& plan, const LoadedModel& model,
                                              const onnx::ModelProto& source) {
  std::unordered_map<std::string, std::string> pu_of_tensor;
  for (const Operator& op : model.graph.operators()) {
    for (int n : op.node_indices) {
      for (const std::string& t : model.model->graph().node(n).output()) {
        pu_of_tensor[t] = plan.operators[static_cast<size_t>(op.id)].device;
      }
    }
  }
  const auto& nodes = source.graph().node();
  std::vector<std::string> pu(static_cast<size_t>(nodes.size()));
  for (int i = 0; i < nodes.size(); ++i) {
    for (const std::string& t : nodes[i].output()) {
      if (auto it = pu_of_tensor.find(t); it != pu_of_tensor.end()) {
        pu[static_cast<size_t>(i)] = it->second;
        break;
      }
    }
  }
  return pu;
}

}  // namespace hetplan::deploy_internal
