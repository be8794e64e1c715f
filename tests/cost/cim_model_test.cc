#include "hetplan/cost/cim_model.h"

#include <limits>

#include <gtest/gtest.h>

namespace hetplan {
namespace {

// A tensor of `elements` elements of `dtype` ("uint8": a quantized model's).
TensorInfo Tensor(const std::string& name, int64_t elements, const std::string& dtype = "uint8") {
  TensorInfo t;
  t.name = name;
  t.shape = {elements};
  t.elements = elements;
  t.dtype = dtype;
  t.element_bytes = dtype == "float32" ? 4 : 1;
  return t;
}

// ResNet-18's first conv: weight 64x3x7x7, stride 2, pad 3;
// input 1x3x224x224, output 1x64x112x112.
Operator ResNetConv1() {
  Operator op;
  op.name = "/conv1/Conv";
  op.type = "Conv";
  op.has_weight = true;
  op.weight_rows = 3 * 7 * 7;  // N_v = 147
  op.weight_cols = 64;         // M_v
  op.n_mvm = 112 * 112;        // 12,544
  op.groups = 1;
  op.input_elements = 3 * 224 * 224;    // 150,528
  op.output_elements = 64 * 112 * 112;  // 802,816
  op.inputs = {Tensor("x", op.input_elements)};  // INT8, as the paper runs it
  op.outputs = {Tensor("y", op.output_elements)};
  op.kernel_h = op.kernel_w = 7;
  return op;
}

// MobileNetV2's first depthwise conv: 32 channels, 3x3, groups 32,
// input 1x32x112x112, output 1x32x112x112.
Operator Depthwise() {
  Operator op;
  op.type = "Conv";
  op.has_weight = true;
  op.groups = 32;
  op.weight_rows = 1 * 3 * 3;  // C_in/groups * K_h * K_w = 9
  op.weight_cols = 32;         // C_out
  op.n_mvm = 112 * 112;
  op.input_elements = 32 * 112 * 112;
  op.output_elements = 32 * 112 * 112;
  op.inputs = {Tensor("x", op.input_elements)};
  op.outputs = {Tensor("y", op.output_elements)};
  return op;
}

CimParams Paper(double bandwidth_gbps = 10.24, double mvm_latency_ns = 50) {
  CimParams p;
  p.crossbar_rows = 256;
  p.crossbar_cols = 256;
  p.crossbars = 100;
  p.mvm_latency_ns = mvm_latency_ns;
  p.bandwidth_gbps = bandwidth_gbps;
  return p;
}

TEST(CimModel, ResNet18FirstConv) {
  Operator op = ResNetConv1();
  CimParams p = Paper();
  EXPECT_TRUE(CimSupports(op, p));
  EXPECT_EQ(CimCrossbars(op, p), 1);  // ceil(147/256) * ceil(64/256)
  EXPECT_EQ(CimMvmCount(op, p), 12544);
  EXPECT_EQ(CimLoadElements(op, p), 150528);
  // T_load = 1 B * 150528 / 10.24 GB/s = 150528 / 10240 µs = 14.7 µs
  // T_mvm  = 12544 * 50 ns = 627.2 µs
  // T_store = 802816 / 10240 µs = 78.4 µs
  EXPECT_NEAR(CimLatencyUs(op, p), 150528.0 / 10240.0 + 12544 * 0.05 + 802816.0 / 10240.0, 1e-9);
  EXPECT_NEAR(CimLatencyUs(op, p), 720.3, 1e-9);
  // x86 setup: 20.48 GB/s halves load and store.
  EXPECT_NEAR(CimLatencyUs(op, Paper(20.48)), 7.35 + 627.2 + 39.2, 1e-9);
  // T_mvm = 1000 ns.
  EXPECT_NEAR(CimLatencyUs(op, Paper(10.24, 1000)), 14.7 + 12544.0 + 78.4, 1e-9);
  // Two bytes per element double the bus terms only.
  p.element_bytes = 2;
  EXPECT_NEAR(CimLatencyUs(op, p), 29.4 + 627.2 + 156.8, 1e-9);
}

TEST(CimModel, BytesComeFromEachTensorsType) {
  CimParams p = Paper();
  Operator op = ResNetConv1();
  EXPECT_DOUBLE_EQ(CimLoadBytes(op, p), 150528);
  EXPECT_DOUBLE_EQ(CimStoreBytes(op, p), 802816);
  // The float model's conv moves four bytes per element; a conv reading
  // uint8 and writing float32 (a QDQ Conv whose Relu runs after it) mixes.
  Operator fp32 = op;
  fp32.inputs = {Tensor("x", op.input_elements, "float32")};
  fp32.outputs = {Tensor("y", op.output_elements, "float32")};
  EXPECT_DOUBLE_EQ(CimLoadBytes(fp32, p), 4.0 * 150528);
  EXPECT_NEAR(CimLatencyUs(fp32, p), 4 * 14.7 + 627.2 + 4 * 78.4, 1e-9);
  Operator mixed = op;
  mixed.outputs = fp32.outputs;
  EXPECT_NEAR(CimLatencyUs(mixed, p), 14.7 + 627.2 + 4 * 78.4, 1e-9);
  // Two inputs (an Add-like reader of two tensors) count both.
  op.inputs.push_back(Tensor("z", 1000, "float32"));
  EXPECT_DOUBLE_EQ(CimLoadBytes(op, p), 150528 + 4000);
  // cim.element_bytes, when set, overrides every tensor's size.
  p.element_bytes = 1;
  EXPECT_DOUBLE_EQ(CimLoadBytes(fp32, p), 150528);
  EXPECT_NEAR(CimLatencyUs(fp32, p), 720.3, 1e-9);
}

TEST(CimModel, CrossbarsTileBothDimensions) {
  Operator op;
  op.type = "Conv";
  op.has_weight = true;
  op.weight_rows = 4608;  // N_v = 512 * 3 * 3
  op.weight_cols = 512;   // M_v
  op.n_mvm = 7 * 7;
  CimParams p = Paper();
  EXPECT_EQ(CimCrossbars(op, p), 36);  // ceil(4608/256) = 18, ceil(512/256) = 2
  // Non-square crossbars: rows tile against crossbar_rows, columns against crossbar_cols.
  p.crossbar_rows = 512;
  p.crossbar_cols = 128;
  EXPECT_EQ(CimCrossbars(op, p), 9 * 4);
  // One more row or column starts a new tile.
  op.weight_rows = 257;
  op.weight_cols = 257;
  EXPECT_EQ(CimCrossbars(op, Paper()), 4);
  op.weight_rows = 256;
  op.weight_cols = 256;
  EXPECT_EQ(CimCrossbars(op, Paper()), 1);
}

// Weights as cells store them (issue 44): a weight of weight_bits bits in
// cells of bits_per_cell bits takes ⌈weight_bits / bits_per_cell⌉ cells, two
// signs each as a differential pair; in adjacent columns (NeuroSim, ISAAC) or
// in crossbars of their own (PUMA's bit-sliced MVMUs).
TEST(CimModel, CrossbarsCountTheCellsAWeightTakes) {
  Operator op;
  op.type = "Conv";
  op.has_weight = true;
  op.weight_rows = 4608;  // 512 * 3 * 3
  op.weight_cols = 512;
  op.n_mvm = 7 * 7;
  CimParams p = Paper();
  EXPECT_EQ(p.CellsPerWeight(), 1);  // unset: one cell a weight, eq. 1
  EXPECT_EQ(CimCrossbars(op, p), 36);
  p.bits_per_cell = 2;  // INT8 in 2-bit cells: 4 slices, 2048 columns
  EXPECT_EQ(p.CellsPerWeight(), 4);
  EXPECT_EQ(CimCrossbars(op, p), 18 * 8);
  p.signed_weights = SignedWeights::kDifferential;  // 4096 columns
  EXPECT_EQ(CimCrossbars(op, p), 18 * 16);
  p.bits_per_cell = 3;  // ⌈8/3⌉ = 3 slices, x2 signs
  EXPECT_EQ(p.CellsPerWeight(), 6);
  // A layer narrower than a crossbar packs its slices into the same one...
  Operator narrow;
  narrow.type = "Conv";
  narrow.has_weight = true;
  narrow.weight_rows = 147;  // ResNet-18's first conv: 3 * 7 * 7
  narrow.weight_cols = 64;
  narrow.n_mvm = 1;
  CimParams q = Paper();
  q.bits_per_cell = 2;
  EXPECT_EQ(CimCrossbars(narrow, q), 1);  // 256 columns
  // ...unless each slice has crossbars of its own.
  q.slice_mapping = SliceMapping::kCrossbars;
  EXPECT_EQ(CimCrossbars(narrow, q), 4);
  q.signed_weights = SignedWeights::kDifferential;
  EXPECT_EQ(CimCrossbars(narrow, q), 8);
}

// A weight the model stores as int4 (block-wise QDQ, MatMulNBits) needs half
// the slices of an 8-bit one; a float weight is quantized to the CIM's own
// weight_bits, and an integer wider than weight_bits is stored at weight_bits.
TEST(CimModel, AWeightStoredInFewerBitsTakesFewerSlices) {
  Operator op;
  op.type = "MatMul";
  op.has_weight = true;
  op.weight_rows = 512;
  op.weight_cols = 512;
  op.n_mvm = 1;
  CimParams p = Paper();
  p.bits_per_cell = 2;  // weight_bits 8: 4 slices
  EXPECT_EQ(p.CellsPerWeight(), 4);
  EXPECT_EQ(p.CellsPerWeight(4), 2);
  EXPECT_EQ(p.CellsPerWeight(16), 4);
  op.weight_bits = 0;  // float: 2048 columns, 2 x 8 crossbars
  EXPECT_EQ(CimCrossbars(op, p), 16);
  op.weight_bits = 8;
  EXPECT_EQ(CimCrossbars(op, p), 16);
  op.weight_bits = 4;  // 1024 columns
  EXPECT_EQ(CimCrossbars(op, p), 8);
  p.slice_mapping = SliceMapping::kCrossbars;  // a crossbar per slice: 2 copies of the 2 x 2 tiling
  EXPECT_EQ(CimCrossbars(op, p), 8);
  p.bits_per_cell.reset();  // one cell a weight, whatever its bits
  EXPECT_EQ(CimCrossbars(op, p), 4);
}

TEST(CimModel, DepthwiseBlockDiagonal) {
  Operator op = Depthwise();
  CimParams p = Paper();
  p.grouped_conv = GroupedConvMapping::kBlockDiagonal;
  // 288 x 32 block-diagonal matrix: ceil(288/256) * ceil(32/256) = 2.
  EXPECT_EQ(CimCrossbars(op, p), 2);
  EXPECT_EQ(CimMvmCount(op, p), 12544);
  EXPECT_NEAR(CimLatencyUs(op, p), 401408.0 / 10240 + 12544 * 0.05 + 401408.0 / 10240, 1e-9);
}

TEST(CimModel, DepthwisePerGroup) {
  Operator op = Depthwise();
  CimParams p = Paper();
  p.grouped_conv = GroupedConvMapping::kPerGroup;
  // One group's 9 x 1 matrix on one crossbar, reused by all 32 groups.
  EXPECT_EQ(CimCrossbars(op, p), 1);
  EXPECT_EQ(CimMvmCount(op, p), 12544 * 32);
  EXPECT_NEAR(CimLatencyUs(op, p), 401408.0 / 10240 + 401408 * 0.05 + 401408.0 / 10240, 1e-9);
}

TEST(CimModel, GroupedConvMappings) {
  // ResNeXt-style conv: 256 -> 256 channels, 3x3, groups 32: 8 channels a group.
  Operator op;
  op.type = "Conv";
  op.has_weight = true;
  op.groups = 32;
  op.weight_rows = 8 * 9;  // 72
  op.weight_cols = 256;
  op.n_mvm = 100;
  CimParams p = Paper();
  p.grouped_conv = GroupedConvMapping::kBlockDiagonal;
  EXPECT_EQ(CimCrossbars(op, p), 9);  // ceil(2304/256) * ceil(256/256)
  EXPECT_EQ(CimMvmCount(op, p), 100);
  p.grouped_conv = GroupedConvMapping::kPerGroup;
  EXPECT_EQ(CimCrossbars(op, p), 1);  // 72 x 8
  EXPECT_EQ(CimMvmCount(op, p), 3200);
  // Ungrouped operators ignore the mapping.
  Operator plain = ResNetConv1();
  EXPECT_EQ(CimMvmCount(plain, p), 12544);
  EXPECT_EQ(CimCrossbars(plain, p), 1);
}

TEST(CimModel, Im2colLoad) {
  Operator op = ResNetConv1();
  CimParams p = Paper();
  p.im2col_load = true;
  // Every input vector is loaded: n_mvm * N_v * groups = 12544 * 147.
  EXPECT_EQ(CimLoadElements(op, p), 1843968);
  EXPECT_NEAR(CimLatencyUs(op, p), 1843968.0 / 10240 + 627.2 + 78.4, 1e-9);
  // At the activation's element size: float32 quadruples the load.
  op.inputs = {Tensor("x", op.input_elements, "float32")};
  EXPECT_DOUBLE_EQ(CimLoadBytes(op, p), 4.0 * 1843968);
  Operator dw = Depthwise();
  EXPECT_EQ(CimLoadElements(dw, p), 12544 * 9 * 32);
  p.grouped_conv = GroupedConvMapping::kPerGroup;
  EXPECT_EQ(CimLoadElements(dw, p), 12544 * 9 * 32);  // the mapping does not change the data
}

TEST(CimModel, Support) {
  CimParams p = Paper();
  Operator matmul;
  matmul.type = "MatMul";
  matmul.has_weight = false;  // two activations: nothing to program
  matmul.n_mvm = 197;
  EXPECT_FALSE(CimSupports(matmul, p));
  EXPECT_EQ(CimCrossbars(matmul, p), 0);
  matmul.has_weight = true;
  matmul.weight_rows = 768;
  matmul.weight_cols = 3072;
  EXPECT_TRUE(CimSupports(matmul, p));
  EXPECT_EQ(CimCrossbars(matmul, p), 3 * 12);

  Operator relu;
  relu.type = "Relu";
  EXPECT_FALSE(CimSupports(relu, p));
  // A weighted type missing from supported_ops.
  p.supported_ops = {"Conv"};
  EXPECT_FALSE(CimSupports(matmul, p));
  EXPECT_TRUE(CimSupports(ResNetConv1(), p));
  p.supported_ops.clear();
  EXPECT_FALSE(CimSupports(ResNetConv1(), p));
  // Quantized operators run where their float type does.
  p.supported_ops = {"Conv", "MatMul"};
  Operator qconv = ResNetConv1();
  qconv.type = "QLinearConv";
  EXPECT_TRUE(CimSupports(qconv, p));
  matmul.type = "MatMulInteger";
  EXPECT_TRUE(CimSupports(matmul, p));
  matmul.type = "QGemm";
  EXPECT_FALSE(CimSupports(matmul, p));
}

TEST(CimModel, Saturates) {
  Operator op;
  op.type = "Gemm";
  op.has_weight = true;
  op.weight_rows = std::numeric_limits<int64_t>::max() / 2;
  op.weight_cols = std::numeric_limits<int64_t>::max() / 2;
  op.groups = 1000;
  op.n_mvm = std::numeric_limits<int64_t>::max() / 2;
  CimParams p = Paper();
  p.crossbar_rows = 1;
  p.crossbar_cols = 1;
  EXPECT_EQ(CimCrossbars(op, p), std::numeric_limits<int64_t>::max());
  p.grouped_conv = GroupedConvMapping::kPerGroup;
  EXPECT_EQ(CimMvmCount(op, p), std::numeric_limits<int64_t>::max());
}

TEST(Transfer, BandwidthAndLatency) {
  Link link{"cpu", "cim", 10.24, 0, std::nullopt};
  // Eq. 4: b_elem * N_out / B_shared; ResNet conv1's output as INT8 and as float32.
  EXPECT_NEAR(TransferUs(802816, link), 78.4, 1e-9);
  EXPECT_NEAR(TransferUs(4 * 802816, link), 313.6, 1e-9);
  link.latency_us = 3;
  EXPECT_NEAR(TransferUs(802816, link), 81.4, 1e-9);
  link.bandwidth_gbps = 20.48;
  EXPECT_NEAR(TransferUs(2000, link), 3 + 2000.0 / 20480, 1e-12);
  EXPECT_EQ(TransferUs(0, link), 0);
}

}  // namespace
}  // namespace hetplan

namespace hetplan {
namespace {

// LSTM/GRU/RNN (docs/platform-format.md, "Recurrent operators"): [W; R]
// stacked per direction, one MVM per step and direction, in sequence.
TEST(CimModel, RecurrentOperatorHoldsOneStackedMatrixPerDirection) {
  Operator op;
  op.type = "LSTM";
  op.matrix_op = "LSTM";
  op.has_weight = true;
  op.weight_rows = 200 + 300;  // input 200, hidden 300
  op.weight_cols = 4 * 300;    // four gates
  op.directions = 2;
  op.n_mvm = 50 * 1 * 2;  // 50 steps, batch 1, both directions
  op.input_elements = 50 * 200;
  op.output_elements = 50 * 2 * 300;
  op.inputs = {Tensor("x", op.input_elements)};  // uint8: one byte each
  op.outputs = {Tensor("y", op.output_elements)};
  CimParams p = Paper();
  p.supported_ops = {"Conv", "Gemm", "MatMul", "LSTM"};
  EXPECT_TRUE(CimSupports(op, p));
  EXPECT_EQ(CimCrossbars(op, p), 2 * 2 * 5);  // ⌈500/256⌉ · ⌈1200/256⌉ per direction
  EXPECT_EQ(CimMvmCount(op, p), 100);
  const double want = 10000.0 / 10240 + 100 * 0.05 + 30000.0 / 10240;
  EXPECT_NEAR(CimLatencyUs(op, p), want, 1e-9);
  p.supported_ops = {"Conv"};
  EXPECT_FALSE(CimSupports(op, p));
}

// An operator of another type that computes a standard product (com.microsoft's
// FusedConv) goes where that product may.
TEST(CimModel, SupportedOpsMatchTheProductAnOperatorComputes) {
  Operator op = ResNetConv1();
  op.type = "FusedConv";
  op.matrix_op = "Conv";
  CimParams p = Paper();
  EXPECT_TRUE(CimSupports(op, p));
  p.supported_ops = {"Gemm"};
  EXPECT_FALSE(CimSupports(op, p));
}


// T_mvm from the circuit (issue 44): PUMA's simulator gives 1.8 µs at 16-bit
// inputs and 1.0 µs at 8-bit ones (100 ns a bit, two pipeline stages more),
// ISAAC 16 cycles of 100 ns. Read from the presets, as a user gets them.
TEST(CimCircuit, TheDerivedMvmLatencyIsPumasAndIsaacs) {
  auto puma = LoadPlatform("puma");
  ASSERT_TRUE(puma.ok()) << puma.status().message();
  const CimParams& c = puma->pus[1].cim;
  ASSERT_FALSE(c.mvm_latency_ns.has_value());
  EXPECT_EQ(c.circuit.InputCycles(), 16);
  EXPECT_DOUBLE_EQ(c.MvmLatencyNs(), 1800);
  ASSERT_TRUE(ApplyOverride(*puma, "cim.input_bits=8").ok());
  EXPECT_DOUBLE_EQ(puma->pus[1].cim.MvmLatencyNs(), 1000);
  // A fixed mvm_latency_ns wins over the circuit (the paper's mode).
  ASSERT_TRUE(ApplyOverride(*puma, "cim.mvm_latency_ns=50").ok());
  EXPECT_DOUBLE_EQ(puma->pus[1].cim.MvmLatencyNs(), 50);

  auto isaac = LoadPlatform("isaac");
  ASSERT_TRUE(isaac.ok()) << isaac.status().message();
  EXPECT_DOUBLE_EQ(isaac->pus[1].cim.MvmLatencyNs(), 1600);
  // The slower of the read and the conversions sets the cycle: 2-bit DACs
  // halve the cycles, 256 columns an ADC double the conversions.
  ASSERT_TRUE(ApplyOverride(*isaac, "cim.dac_bits=2").ok());
  EXPECT_DOUBLE_EQ(isaac->pus[1].cim.MvmLatencyNs(), 8 * 100);
  ASSERT_TRUE(ApplyOverride(*isaac, "cim.columns_per_adc=128").ok());
  ASSERT_TRUE(ApplyOverride(*isaac, "cim.adc_conversion_ns=1.5").ok());
  EXPECT_DOUBLE_EQ(isaac->pus[1].cim.MvmLatencyNs(), 8 * 128 * 1.5);

  // NeuroSim's defaults: 8 input bits, each 8 conversions of one 2.05141 ns clock.
  auto neurosim = LoadPlatform("neurosim-rram");
  ASSERT_TRUE(neurosim.ok()) << neurosim.status().message();
  EXPECT_DOUBLE_EQ(neurosim->pus[1].cim.MvmLatencyNs(), 8 * 8 * 2.05141);
  // The Klein presets keep the paper's fixed 50 ns.
  auto klein = LoadPlatform("klein-arm");
  ASSERT_TRUE(klein.ok());
  EXPECT_FALSE(klein->pus[1].cim.circuit.given());
  EXPECT_DOUBLE_EQ(klein->pus[1].cim.MvmLatencyNs(), 50);
}

// A shared ADC pool on PUMA (one ADC per 128-column crossbar, 0.78125 ns a
// conversion, 100 ns reads): an operator holds one ADC per crossbar up to the
// pool, and past it each ADC converts more columns a cycle.
TEST(CimCircuit, SharedAdcsSetEachOperatorsShareAndSlowTheLargeOnes) {
  auto puma = LoadPlatform("puma", {"cim.shared_adcs=64"});
  ASSERT_TRUE(puma.ok()) << puma.status().message();
  const CimParams& c = puma->pus[1].cim;
  EXPECT_EQ(c.AdcDemand(8), 8);
  EXPECT_EQ(c.AdcDemand(64), 64);
  EXPECT_EQ(c.AdcDemand(200), 64);
  EXPECT_EQ(c.AdcDemand(0), 0);
  EXPECT_DOUBLE_EQ(c.MvmLatencyNs(8), 1800);   // 128 × 0.78125 = 100 ns: the read sets the cycle
  EXPECT_DOUBLE_EQ(c.MvmLatencyNs(64), 1800);
  // 200 crossbars × 128 columns over 64 ADCs: 400 columns each, 312.5 ns a cycle, 16 cycles + 200 ns.
  EXPECT_DOUBLE_EQ(c.MvmLatencyNs(200), 16 * 312.5 + 200);
  // Without the pool nothing changes.
  auto plain = LoadPlatform("puma");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pus[1].cim.AdcDemand(200), 0);
  EXPECT_DOUBLE_EQ(plain->pus[1].cim.MvmLatencyNs(200), 1800);
  // ResNet-18's conv1 on it: 147 × 64 weights of 16 bits in 2-bit cells, 8 slices in crossbars of their own.
  const Operator conv1 = ResNetConv1();
  const int64_t xb = CimCrossbars(conv1, c);
  EXPECT_EQ(xb, 16);
  EXPECT_EQ(c.AdcDemand(xb), 16);
  EXPECT_DOUBLE_EQ(CimLatencyUs(conv1, c), CimLatencyUs(conv1, plain->pus[1].cim));
  auto tight = LoadPlatform("puma", {"cim.shared_adcs=4"});
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->pus[1].cim.AdcDemand(xb), 4);
  EXPECT_GT(CimLatencyUs(conv1, tight->pus[1].cim), CimLatencyUs(conv1, c));
}

// The energy of an operator's MVMs, counted by hand for ResNet-18's conv1
// (147 x 64 weights, 12,544 MVMs) on 128x128 crossbars, 2-bit cells, 8-bit
// weights (4 cells a weight), 8-bit inputs through 1-bit DACs.
TEST(CimCircuit, OperatorEnergyCountsEachComponent) {
  CimParams p;
  p.crossbar_rows = 128;
  p.crossbar_cols = 128;
  p.bits_per_cell = 2;
  p.weight_bits = 8;
  p.circuit.input_bits = 8;
  p.circuit.adc_energy_pj = 2.0;
  p.circuit.dac_energy_pj = 0.5;
  p.circuit.array_energy_pj = 10.0;
  p.circuit.shift_add_energy_pj = 0.25;
  p.circuit.buffer_energy_pj_per_byte = 1.0;
  const Operator op = ResNetConv1();
  // Columns: 64 x 4 = 256 -> 2 column tiles; rows 147 -> 2 row tiles.
  ASSERT_EQ(CimCrossbars(op, p), 4);
  const double cycles = 12544.0 * 8;
  const CimEnergy e = CimOperatorEnergy(op, p);
  EXPECT_DOUBLE_EQ(e.array_reads, cycles * 4);
  EXPECT_DOUBLE_EQ(e.conversions, cycles * 2 * 256);  // each row tile's 256 columns
  EXPECT_DOUBLE_EQ(e.row_drives, cycles * 147 * 2);   // each row into both column tiles
  EXPECT_DOUBLE_EQ(e.shift_adds, e.conversions);
  EXPECT_DOUBLE_EQ(e.buffer_bytes, 150528.0 + 802816.0);
  EXPECT_DOUBLE_EQ(e.total_pj(), cycles * 4 * 10.0 + cycles * 512 * 2.0 + cycles * 294 * 0.5 +
                                     cycles * 512 * 0.25 + (150528.0 + 802816.0) * 1.0);
  // Slices in crossbars of their own: the same cells, so the same counts but
  // the reads (4 copies of a 2 x 1 tiling: 8 reads a cycle).
  p.slice_mapping = SliceMapping::kCrossbars;
  const CimEnergy f = CimOperatorEnergy(op, p);
  EXPECT_EQ(CimCrossbars(op, p), 8);
  EXPECT_DOUBLE_EQ(f.array_reads, cycles * 8);
  EXPECT_DOUBLE_EQ(f.conversions, cycles * 2 * 64 * 4);
  EXPECT_DOUBLE_EQ(f.row_drives, cycles * 147 * 4);
  // No energy keys: nothing priced.
  CimParams none;
  none.circuit.input_bits = 8;
  EXPECT_DOUBLE_EQ(CimOperatorEnergy(op, none).total_pj(), 0.0);
}

}  // namespace
}  // namespace hetplan
