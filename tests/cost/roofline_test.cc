// The roofline cost source's element type and efficiency (issue 47): integer
// matrix operators run at the integer peak with their float operator's
// efficiency; a PU with no peak for a floating or quantized type does not run
// the operator; index arithmetic is priced as float32 work.
#include <gtest/gtest.h>

#include "hetplan/cost/build.h"

namespace hetplan {
namespace {

// A tensor of `elements` values of `dtype`, each its type's size.
TensorInfo TypedTensor(const std::string& dtype, int64_t elements) {
  TensorInfo t;
  t.dtype = dtype;
  t.elements = elements;
  t.element_bytes = dtype == "float32" || dtype == "int32" ? 4 : dtype == "int64" ? 8 : dtype == "float16" ? 2 : 1;
  return t;
}

// An operator of `type` reading `in` and writing `out` (its dtype), `work` MACs (or output elements when no matrix).
Operator Op(const std::string& type, const std::string& matrix_op, const TensorInfo& in, const TensorInfo& out,
            int64_t work) {
  Operator op;
  op.type = type;
  op.matrix_op = matrix_op;
  op.dtype = out.dtype;
  op.inputs = {in};
  op.outputs = {out};
  (matrix_op.empty() ? op.output_elements : op.macs) = work;
  return op;
}

// DynamicQuantizeLinear -> ConvInteger, as ONNX Runtime's dynamic quantizer writes it.
Operator ConvInteger() {
  return Op("ConvInteger", "Conv", TypedTensor("uint8", 1000), TypedTensor("int32", 1000), 50'000'000);
}

RooflineParams Params() {
  RooflineParams r;
  r.peak_gflops = {{"float32", 100}, {"int8", 1000}};
  r.memory_bandwidth_gbps = 1000;
  r.dispatch_us = 2;
  r.efficiency = {{"Conv", 0.5}, {"default", 0.1}};
  return r;
}

TEST(Roofline, IntegerMatrixOperatorsRunAtTheIntegerPeakWithTheirFloatOperatorsEfficiency) {
  const Operator op = ConvInteger();
  EXPECT_EQ(RooflineComputeDtype(op), "uint8");
  auto us = RooflineLatencyUs(op, Params());
  ASSERT_TRUE(us);
  // 1e8 flops at 1000 GFLOP/s = 100 µs, at Conv's efficiency 0.5; not 1e8 / 100 GFLOP/s / 0.1.
  EXPECT_NEAR(*us, 2 + 100 / 0.5, 1e-9);
  const Operator qlinear =
      Op("QLinearConv", "Conv", TypedTensor("uint8", 1000), TypedTensor("uint8", 1000), 50'000'000);
  EXPECT_NEAR(*RooflineLatencyUs(qlinear, Params()), 2 + 100 / 0.5, 1e-9);
}

TEST(Roofline, APuWithoutAPeakForTheTypeDoesNotRunIt) {
  RooflineParams float_only = Params();
  float_only.peak_gflops.erase("int8");
  EXPECT_FALSE(RooflineLatencyUs(ConvInteger(), float_only));
  const Operator half = Op("Conv", "Conv", TypedTensor("float16", 1000), TypedTensor("float16", 1000), 1000);
  EXPECT_FALSE(RooflineLatencyUs(half, Params()));
  RooflineParams with_half = Params();
  with_half.peak_gflops["float16"] = 200;
  EXPECT_TRUE(RooflineLatencyUs(half, with_half));
}

TEST(Roofline, IndexOperatorsArePricedInTheirInputsTypeOrAsFloat32Work) {
  const Operator argmax = Op("ArgMax", "", TypedTensor("float16", 1000), TypedTensor("int64", 10), 10);
  EXPECT_EQ(RooflineComputeDtype(argmax), "float16");
  EXPECT_FALSE(RooflineLatencyUs(argmax, Params()));  // no float16 peak
  const Operator gather = Op("Gather", "", TypedTensor("int64", 4), TypedTensor("int64", 2), 2);
  auto us = RooflineLatencyUs(gather, Params());
  ASSERT_TRUE(us);
  EXPECT_GT(*us, 2.0);
}

}  // namespace
}  // namespace hetplan
