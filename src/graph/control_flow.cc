// Inlining If branches (graph/control_flow.h).
#include "graph/control_flow.h"

#include <fmt/format.h>

#include <functional>
#include <set>
#include <unordered_map>

namespace hetplan::internal {
namespace {

const onnx::GraphProto* Branch(const onnx::NodeProto& n, bool then_branch) {
  const char* want = then_branch ? "then_branch" : "else_branch";
  for (const auto& a : n.attribute()) {
    if (a.name() == want && a.has_g()) return &a.g();
  }
  return nullptr;
}

// Names a graph defines: its inputs, initializers and node outputs.
std::unordered_set<std::string> Defined(const onnx::GraphProto& g) {
  std::unordered_set<std::string> d;
  for (const auto& vi : g.input()) d.insert(vi.name());
  for (const auto& t : g.initializer()) d.insert(t.name());
  for (const auto& t : g.sparse_initializer()) d.insert(t.values().name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      if (!o.empty()) d.insert(o);
    }
  }
  return d;
}

// Names `g` reads that it does not define (recursively through its nodes'
// subgraphs), appended to `out` once each.
void FreeNames(const onnx::GraphProto& g, std::vector<std::string>* out, std::unordered_set<std::string>* seen) {
  const auto defined = Defined(g);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen->insert(name).second) out->push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) use(in);
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      std::unordered_set<std::string> inner_seen;
      if (a.has_g()) FreeNames(a.g(), &inner, &inner_seen);
      for (const auto& sg : a.graphs()) FreeNames(sg, &inner, &inner_seen);
      for (const auto& name : inner) use(name);
    }
  }
  for (const auto& o : g.output()) use(o.name());
}

// Renames free uses of `from` names in `g` (a subgraph: its own
// definitions shadow nothing, since ONNX forbids shadowing, but a nested
// graph that defines a name is left alone for it).
void RenameFree(onnx::GraphProto* g, const std::unordered_map<std::string, std::string>& rename) {
  const auto defined = Defined(*g);
  auto fix = [&](std::string* name) {
    if (defined.count(*name)) return;
    if (auto it = rename.find(*name); it != rename.end()) *name = it->second;
  };
  for (auto& n : *g->mutable_node()) {
    for (auto& in : *n.mutable_input()) fix(&in);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameFree(a.mutable_g(), rename);
      for (auto& sg : *a.mutable_graphs()) RenameFree(&sg, rename);
    }
  }
  for (auto& o : *g->mutable_output()) fix(o.mutable_name());
}

// Every value name anywhere in the model's graph, subgraphs included, so
// that renamed values never collide with a name a later inlining brings up.
void AllNames(const onnx::GraphProto& g, std::unordered_set<std::string>* names, int skip_subgraphs_of = -1) {
  for (const auto& name : Defined(g)) names->insert(name);
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& in : n.input()) names->insert(in);
    if (i == skip_subgraphs_of) continue;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) AllNames(a.g(), names);
      for (const auto& sg : a.graphs()) AllNames(sg, names);
    }
  }
  for (const auto& o : g.output()) names->insert(o.name());
}

std::string Fresh(const std::string& base, std::unordered_set<std::string>* taken) {
  std::string name = base;
  for (int k = 1; taken->count(name); ++k) name = fmt::format("{}_{}", base, k);
  taken->insert(name);
  return name;
}

}  // namespace

void NameIfNodes(onnx::GraphProto* g, const std::string& prefix) {
  for (int i = 0; i < g->node_size(); ++i) {
    auto* n = g->mutable_node(i);
    if (n->op_type() == "If" && n->name().empty()) n->set_name(fmt::format("{}If_{}", prefix, i));
    for (auto& a : *n->mutable_attribute()) {
      std::string part = a.name() == "then_branch" ? "then" : (a.name() == "else_branch" ? "else" : a.name());
      const std::string inner = n->name().empty() ? prefix : fmt::format("{}/{}/", n->name(), part);
      if (a.has_g()) NameIfNodes(a.mutable_g(), inner);
      for (auto& sg : *a.mutable_graphs()) NameIfNodes(&sg, inner);
    }
  }
}

std::vector<std::string> IfNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& n : g.node()) {
    if (n.op_type() == "If") names.push_back(n.name());
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      if (a.has_g()) inner = IfNames(a.g());
      for (const auto& sg : a.graphs()) {
        auto more = IfNames(sg);
        inner.insert(inner.end(), more.begin(), more.end());
      }
      names.insert(names.end(), inner.begin(), inner.end());
    }
  }
  return names;
}

std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& a : node.attribute()) {
    std::vector<std::string> inner;
    std::unordered_set<std::string> inner_seen;
    if (a.has_g()) FreeNames(a.g(), &inner, &inner_seen);
    for (const auto& sg : a.graphs()) FreeNames(sg, &inner, &inner_seen);
    for (const auto& name : inner) {
      if (seen.insert(name).second) out.push_back(name);
    }
  }
  return out;
}

int InlineIf(onnx::GraphProto* g, int index, bool then_branch) {
  const onnx::NodeProto node = g->node(index);  // a copy: g changes below
  const onnx::GraphProto* found = Branch(node, then_branch);
  onnx::GraphProto branch = found ? *found : onnx::GraphProto();
  const std::string if_name = node.name().empty() ? fmt::format("If_{}", index) : node.name();

  // Names anywhere else in g (its other nodes' subgraphs included, not this
  // If's own branches, which go away).
  std::unordered_set<std::string> taken;
  AllNames(*g, &taken, index);
  std::unordered_set<std::string> node_names;
  for (const auto& n : g->node()) node_names.insert(n.name());

  // Values the branch defines that g already has get fresh names.
  const auto defined = Defined(branch);
  std::unordered_map<std::string, std::string> rename;
  for (const auto& name : Defined(branch)) {
    if (taken.count(name)) rename[name] = Fresh(fmt::format("{}/{}", if_name, name), &taken);
  }
  for (const auto& name : defined) taken.insert(name);
  auto renamed = [&](const std::string& name) {
    auto it = rename.find(name);
    return it == rename.end() ? name : it->second;
  };
  for (auto& n : *branch.mutable_node()) {
    for (auto& in : *n.mutable_input()) in = renamed(in);
    for (auto& out : *n.mutable_output()) out = renamed(out);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameFree(a.mutable_g(), rename);
      for (auto& sg : *a.mutable_graphs()) RenameFree(&sg, rename);
    }
    if (!n.name().empty() && node_names.count(n.name())) n.set_name(Fresh(fmt::format("{}/{}", if_name, n.name()), &node_names));
    node_names.insert(n.name());
  }
  for (auto& t : *branch.mutable_initializer()) t.set_name(renamed(t.name()));
  for (auto& t : *branch.mutable_sparse_initializer()) t.mutable_values()->set_name(renamed(t.values().name()));

  // Branch output k becomes the If's output k: its producer writes it
  // directly when the branch computes it (and no other output is the same
  // value), else an Identity copies it.
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < branch.node_size(); ++i) {
    for (int k = 0; k < branch.node(i).output_size(); ++k) producer[branch.node(i).output(k)] = i;
  }
  std::unordered_map<std::string, int> uses;  // reads of each branch value inside the branch, and as outputs
  for (const auto& n : branch.node()) {
    for (const auto& in : n.input()) ++uses[in];
  }
  for (const auto& o : branch.output()) ++uses[renamed(o.name())];
  std::vector<onnx::NodeProto> identities;
  std::unordered_map<std::string, std::string> redirect;  // branch value → the If output it became
  for (int k = 0; k < node.output_size() && k < branch.output_size(); ++k) {
    const std::string& target = node.output(k);
    if (target.empty()) continue;
    const std::string value = renamed(branch.output(k).name());
    auto p = producer.find(value);
    if (p != producer.end() && uses[value] == 1 && !redirect.count(value)) {
      auto* n = branch.mutable_node(p->second);
      for (auto& out : *n->mutable_output()) {
        if (out == value) out = target;
      }
      redirect[value] = target;
      continue;
    }
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name(Fresh(fmt::format("{}/output_{}", if_name, k), &node_names));
    id.add_input(redirect.count(value) ? redirect[value] : value);
    id.add_output(target);
    identities.push_back(std::move(id));
  }

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < index; ++i) *nodes.Add() = g->node(i);
  for (const auto& n : branch.node()) *nodes.Add() = n;
  for (const auto& n : identities) *nodes.Add() = n;
  for (int i = index + 1; i < g->node_size(); ++i) *nodes.Add() = g->node(i);
  g->mutable_node()->Swap(&nodes);
  for (const auto& t : branch.initializer()) *g->add_initializer() = t;
  for (const auto& t : branch.sparse_initializer()) *g->add_sparse_initializer() = t;
  return branch.node_size() + static_cast<int>(identities.size());
}

Status PinBranches(onnx::ModelProto* model, const std::map<std::string, bool>& branches) {
  NameIfNodes(model->mutable_graph());
  std::set<std::string> missing;
  for (const auto& [name, then] : branches) missing.insert(name);
  std::function<void(onnx::GraphProto*)> pin = [&](onnx::GraphProto* g) {
    for (int i = 0; i < g->node_size();) {
      const onnx::NodeProto& n = g->node(i);
      auto it = n.op_type() == "If" ? branches.find(n.name()) : branches.end();
      if (it != branches.end()) {
        missing.erase(it->first);
        InlineIf(g, i, it->second);  // the inlined nodes are visited next
        continue;
      }
      for (auto& a : *g->mutable_node(i)->mutable_attribute()) {
        if (a.has_g()) pin(a.mutable_g());
        for (auto& sg : *a.mutable_graphs()) pin(&sg);
      }
      ++i;
    }
  };
  pin(model->mutable_graph());
  if (!missing.empty()) {
    return Error(ErrorCode::kInvalidArgument, "no If node named '{}' in the model", *missing.begin());
  }
  return Status::Ok();
}

}  // namespace hetplan::internal
