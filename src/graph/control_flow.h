// Control flow the planner can see through: an If whose branch is known
// (its condition folded to a constant, or the user chose one with --branch)
// is replaced by that branch's nodes, with outer-scope names resolved.
// Loop and Scan are not handled here: the importer refuses them.
//
// Internal to the library.
#pragma once

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hetplan/util/status.h"

namespace hetplan::internal {

// Gives every unnamed If, in the graph and its subgraphs, a name that does
// not depend on what is inlined later: "If_<index>" in the main graph,
// "<parent>/then/If_<index>" (or else) inside a branch. --branch and the
// schedule refer to Ifs by these names.
void NameIfNodes(onnx::GraphProto* g, const std::string& prefix = "");

// Every If name in `g` and its subgraphs, in order.
std::vector<std::string> IfNames(const onnx::GraphProto& g);

// The outer-scope tensors the node's subgraphs read (recursively), in order
// of first use: the node's implicit inputs.
std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node);

// Replaces node `index` of `g`, an If, by the nodes of its then (`then_branch`)
// or else branch: the branch's initializers join g's, a value name that
// collides with one already in g is renamed (everywhere the branch and its
// own subgraphs read it), the node producing each branch output writes the
// If's output instead (an Identity does when the branch output is an outer
// or constant value), and node names that exist in g get the If's name as a
// prefix. Returns the number of nodes that replaced it. The graph is left
// in node order (the branch where the If was); the caller re-sorts.
int InlineIf(onnx::GraphProto* g, int index, bool then_branch);

// Replaces every If named in `branches` (true = then), wherever it is in the
// model, by its chosen branch; Ifs are named by NameIfNodes first. Used to
// run the unsplit model under the branch assumptions a plan was made with.
// Error: a name that is not an If of the model.
Status PinBranches(onnx::ModelProto* model, const std::map<std::string, bool>& branches);

}  // namespace hetplan::internal
