#include "graph/functions.h"

#include <fmt/format.h>
#include <onnx/inliner/inliner.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/graph/graph_walk.h"

namespace hetplan::internal {
namespace {

constexpr int kMaxCallDepth = 64;
// Calls that each call the next twice expand to 2^depth copies, as ONNX's own
// inliner would make them: refused past this many inlined nodes.
constexpr int64_t kMaxInlinedNodes = 1000000;

std::string Key(const std::string& domain, const std::string& name, const std::string& overload) {
  return domain + '\n' + name + '\n' + overload;
}

// Gives every call its own copy of the function, whose nodes carry the
// call's name as a prefix; ONNX's inliner then appends "__N" to each, which
// RestoreNames takes off again where the name is free.
class CallRenamer {
 public:
  explicit CallRenamer(const onnx::ModelProto& model) {
    for (const auto& f : model.functions()) functions_[Key(f.domain(), f.name(), f.overload())] = f;
  }

  // The calls among `nodes` (and in their subgraphs), whose names already
  // carry their own caller's prefix; false with error() set past the depth.
  bool Rewrite(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes, int depth) {
    for (int i = 0; i < nodes->size(); ++i) {
      onnx::NodeProto* n = nodes->Mutable(i);
      for (auto& a : *n->mutable_attribute()) {
        if (a.has_g() && !Rewrite(a.mutable_g()->mutable_node(), depth)) return false;
        for (auto& g : *a.mutable_graphs()) {
          if (!Rewrite(g.mutable_node(), depth)) return false;
        }
      }
      auto it = functions_.find(Key(n->domain(), n->op_type(), n->overload()));
      if (it == functions_.end()) continue;
      const std::string call = n->name().empty() ? fmt::format("{}_{}", n->op_type(), i) : n->name();
      if (depth >= kMaxCallDepth) {
        error_ = fmt::format("function calls nest deeper than {} (at '{}'); the model's functions call each other "
                             "in a cycle or are corrupt: re-export it",
                             kMaxCallDepth, call);
        return false;
      }
      inlined_nodes_ += it->second.node_size();
      if (inlined_nodes_ > kMaxInlinedNodes) {
        error_ = fmt::format("the model's function calls expand to more than {} nodes (at '{}'); export the model "
                             "with its functions inlined, or with fewer calls",
                             kMaxInlinedNodes, call);
        return false;
      }
      onnx::FunctionProto copy = it->second;
      copy.set_name(fmt::format("{}__call{}", copy.name(), copies_.size()));
      for (int k = 0; k < copy.node_size(); ++k) {
        onnx::NodeProto* inner = copy.mutable_node(k);
        inner->set_name(call + "/" + (inner->name().empty() ? fmt::format("{}_{}", inner->op_type(), k) : inner->name()));
        intended_.insert(inner->name());
      }
      // A reference the call leaves unset takes the function's default;
      // ONNX's inliner (1.22) drops it instead, so the call states it.
      for (const auto& d : copy.attribute_proto()) {
        const bool set = std::any_of(n->attribute().begin(), n->attribute().end(),
                                     [&](const onnx::AttributeProto& a) { return a.name() == d.name(); });
        if (!set) *n->add_attribute() = d;
      }
      n->set_op_type(copy.name());
      copies_.emplace_back();  // reserve the name's number before the nested calls take theirs
      const size_t slot = copies_.size() - 1;
      if (!Rewrite(copy.mutable_node(), depth + 1)) return false;
      copies_[slot] = std::move(copy);
    }
    return true;
  }

  std::vector<onnx::FunctionProto>& copies() { return copies_; }
  const std::string& error() const { return error_; }
  // The names given to the functions' nodes, before ONNX's inliner appends
  // "__N" to each.
  const std::set<std::string>& intended() const { return intended_; }

 private:
  std::map<std::string, onnx::FunctionProto> functions_;
  std::set<std::string> intended_;
  std::vector<onnx::FunctionProto> copies_;
  int64_t inlined_nodes_ = 0;
  std::string error_;
};

// ONNX's inliner makes every inlined node's name unique by appending "__N",
// even where the name was free: the names the calls gave are restored where
// no other node has them (`taken`: every name in the model).
void RestoreNames(onnx::GraphProto* g, const std::set<std::string>& intended, std::set<std::string>* taken) {
  (void)ForEachGraph(g, [&](onnx::GraphProto* graph) {
    for (auto& n : *graph->mutable_node()) {
      const size_t cut = n.name().rfind("__");
      if (cut == std::string::npos || cut + 2 == n.name().size()) continue;
      if (n.name().find_first_not_of("0123456789", cut + 2) != std::string::npos) continue;
      const std::string base = n.name().substr(0, cut);
      if (intended.count(base) && taken->insert(base).second) n.set_name(base);
    }
    return Status::Ok();
  });
}

}  // namespace

Status InlineModelFunctions(onnx::ModelProto* model, const std::string& label) {
  if (model->functions_size() == 0) return Status::Ok();
  CallRenamer renamer(*model);
  if (!renamer.Rewrite(model->mutable_graph()->mutable_node(), 0)) {
    return Status(ErrorCode::kUnsupported, fmt::format("{}: {}", label, renamer.error()));
  }
  model->clear_functions();
  for (auto& f : renamer.copies()) *model->add_functions() = std::move(f);
  try {
    onnx::inliner::InlineLocalFunctions(*model, /*convert_version=*/true);
  } catch (const std::exception& e) {
    std::string what = e.what();
    return Status(ErrorCode::kUnsupported,
                  fmt::format("{}: ONNX could not inline the model's local functions ({}); export the model with "
                              "its functions inlined",
                              label, what.substr(0, what.find('\n'))));
  }
  model->clear_functions();
  std::set<std::string> taken;
  (void)ForEachGraph(model->mutable_graph(), [&](onnx::GraphProto* g) {
    for (const auto& n : g->node()) taken.insert(n.name());
    return Status::Ok();
  });
  RestoreNames(model->mutable_graph(), renamer.intended(), &taken);
  return Status::Ok();
}

}  // namespace hetplan::internal
