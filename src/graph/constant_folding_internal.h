// The constant folder's tensor kernels and small helpers, shared by
// constant_folding.cc (reading and writing constants, EvaluateNode's dispatch)
// and constant_folding_ops.cc (the kernels).
//
// Internal to graph/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/attributes.h"
#include "graph/constant_folding.h"

namespace hetplan::internal::folding {

// Product of `dims`; nullopt when a dim is negative or the product exceeds kMaxFoldElements.
std::optional<int64_t> Product(const std::vector<int64_t>& dims);

// The node's attribute `name`, nullptr when it has none.
const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const char* name);
// AttrInt (an int attribute, `def` when absent) is graph/attributes.h's.
// An ints attribute, nullopt when absent.
std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& n, const char* name);

// An INT64 tensor of `dims` holding `values`.
ConstTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> values);
// An empty tensor of `dtype` with `dims`, values to be pushed.
ConstTensor Empty(int32_t dtype, std::vector<int64_t> dims);

// Wraps an integer to the element type's range, as a C++ cast does.
int64_t WrapTo(int32_t dtype, int64_t v);
// `axis` in [0, rank), negative counting from the end; nullopt when out of range.
std::optional<int64_t> Axis(int64_t axis, int64_t rank);

bool IsComparison(const std::string& op);
bool IsLogical(const std::string& op);
bool IsArithmetic(const std::string& op);

// The kernels; each returns nullopt when it cannot fold its inputs.

// Elementwise binary (and variadic Max/Min/Sum: tf2onnx writes AddN as Sum) with broadcasting.
std::optional<ConstTensor> Elementwise(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& in);
std::optional<ConstTensor> Unary(const std::string& op, const ConstTensor& x);
// Gather along `axis` of any-rank data.
std::optional<ConstTensor> Gather(const ConstTensor& x, const ConstTensor& idx, int64_t axis_attr);
// Slice of any-rank data (both forms: the caller gathers starts/ends/axes/steps).
std::optional<ConstTensor> Slice(const ConstTensor& x, const std::vector<int64_t>& starts,
                                 const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                 std::vector<int64_t> steps);
std::optional<ConstTensor> Concat(const std::vector<const ConstTensor*>& in, int64_t axis_attr);
std::optional<ConstTensor> Cast(const ConstTensor& x, int32_t to);
std::optional<ConstTensor> Reshape(const ConstTensor& x, std::vector<int64_t> dims, bool allowzero);
std::optional<ConstTensor> Expand(const ConstTensor& x, const std::vector<int64_t>& shape);
std::optional<ConstTensor> Where(const ConstTensor& c, const ConstTensor& a, const ConstTensor& b);
std::optional<ConstTensor> Reduce(const std::string& op, const ConstTensor& x, std::vector<int64_t> axes,
                                  bool keepdims, bool noop_with_empty_axes);
std::optional<ConstTensor> Tile(const ConstTensor& x, const std::vector<int64_t>& repeats);
// perm empty: the axes reversed (the ONNX default).
std::optional<ConstTensor> Transpose(const ConstTensor& x, std::vector<int64_t> perm);
std::optional<ConstTensor> Range(const ConstTensor& start, const ConstTensor& limit, const ConstTensor& delta);
// Axes from the attribute (older opsets) or from input `k` (newer ones).
std::optional<std::vector<int64_t>> AxesOf(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& in,
                                           size_t k);

}  // namespace hetplan::internal::folding
