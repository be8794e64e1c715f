#!/usr/bin/python3
"""Writes the bad-input corpus that tests/bad_inputs/cases.json describes.

Run with Debian's python3 (it has onnx 1.12):

    /usr/bin/python3 tests/bad_inputs/make_corpus.py --out DIR [--big]

Every file is generated here, deterministically (fixed seeds), so that no
binary file is committed: truncated and bit-flipped ONNX models, protobufs
that are not models, broken graphs, hostile platform YAML, cost tables and
schedule files that lie. `--big` also writes the 100 MB files (strings of
100 MB in YAML, CSV and JSON); the corpus test asks for them, the fuzz seeds
do not. tests/robustness/corpus_test.cc runs each case of cases.json through
the real `hetplan` binary; a case whose file this script does not write fails
there.

Besides the bad files, DIR gets a few good ones the cases refer to:
tiny.onnx (Conv → Relu → Conv, operators conv0, relu0, conv1), tiny_costs.csv
(a complete cost table for it), good_schedule.json (a schedule that
validates), branchy.onnx, wide.onnx and wide_costs.csv (for the limits and
determinism tests), external_fifo*.onnx (whose external data the limits test
turns into FIFOs).
"""

import argparse
import copy
import json
import os
import random
import struct
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 13


# --- ONNX helpers -------------------------------------------------------------

def model(nodes, inputs, outputs, initializers=(), opset=OPSET, domains=()):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(graph, opset_imports=imports, producer_name="hetplan-bad-inputs")
    m.ir_version = 8
    return m


def tensor_in(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def tensor_out(name, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, None)


def weights(name, dims, value=0.01):
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [value] * n)


def tiny():
    """x[1,3,8,8] → conv0 → relu0 → conv1 → y. Valid."""
    return model(
        [helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
         helper.make_node("Conv", ["r0", "w1"], ["y"], name="conv1", pads=[1, 1, 1, 1])],
        [tensor_in("x", [1, 3, 8, 8])], [tensor_out("y")],
        [weights("w0", [4, 3, 3, 3]), weights("w1", [4, 4, 3, 3])])


def branchy():
    """A stem, two parallel branches and a join: something for the ILP to overlap."""
    return model(
        [helper.make_node("Conv", ["x", "ws"], ["s"], name="stem", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["s"], ["sr"], name="stem_relu"),
         helper.make_node("Conv", ["sr", "wa"], ["a"], name="a_conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["a"], ["ar"], name="a_relu"),
         helper.make_node("Conv", ["sr", "wb"], ["b"], name="b_conv"),
         helper.make_node("Add", ["ar", "b"], ["j"], name="join"),
         helper.make_node("Flatten", ["j"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "wh"], ["y"], name="head", transB=1)],
        [tensor_in("x", [1, 8, 16, 16])], [tensor_out("y")],
        [weights("ws", [16, 8, 3, 3]), weights("wa", [16, 16, 3, 3]), weights("wb", [16, 16, 1, 1]),
         weights("wh", [10, 16 * 16 * 16])])


def wide(branches=10, depth=5):
    """A stem, `branches` parallel Conv→Relu chains of `depth`, and a Sum: an ILP that
    CBC needs a couple of seconds to prove (time-limit and determinism tests)."""
    nodes = [helper.make_node("Conv", ["x", "w_stem"], ["s"], name="stem", pads=[1, 1, 1, 1])]
    inits = [weights("w_stem", [32, 8, 3, 3])]
    ends = []
    for b in range(branches):
        prev = "s"
        for d in range(depth):
            nodes.append(helper.make_node("Conv", [prev, f"w{b}_{d}"], [f"t{b}_{d}"], name=f"b{b}_conv{d}",
                                          pads=[1, 1, 1, 1]))
            inits.append(weights(f"w{b}_{d}", [32, 32, 3, 3]))
            nodes.append(helper.make_node("Relu", [f"t{b}_{d}"], [f"r{b}_{d}"], name=f"b{b}_relu{d}"))
            prev = f"r{b}_{d}"
        ends.append(prev)
    nodes.append(helper.make_node("Sum", ends, ["y"], name="join"))
    m = model(nodes, [tensor_in("x", [1, 8, 16, 16])], [tensor_out("y")], inits)
    rng = random.Random(3)
    rows = ["# source=synthetic", "# note=SYNTHETIC: seeded random CPU costs for tests, not measured",
            "kind,op_name,pu,exec_us"]
    for n in nodes:
        rows.append(f"op,{n.name},cpu,{rng.randint(8, 30) if n.op_type == 'Conv' else rng.randint(1, 6)}")
    return m.SerializeToString(), "\n".join(rows) + "\n"


def relu_chain(n):
    nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i}"], [f"t{i + 1}" if i + 1 < n else "y"],
                              name=f"relu{i}") for i in range(n)]
    return model(nodes, [tensor_in("x", [1, 16])], [tensor_out("y")])


def parses(data):
    try:
        onnx.ModelProto().ParseFromString(data)
        return True
    except Exception:  # DecodeError, RuntimeWarning from upb, ...
        return False


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def external(t, location):
    """Turns initializer t into an external-data reference (the data is never written)."""
    t.ClearField("float_data")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    kv = t.external_data.add()
    kv.key = "location"
    kv.value = location


def onnx_files():
    files = {}
    good = tiny()
    good_bytes = good.SerializeToString()
    files["tiny.onnx"] = good_bytes
    files["branchy.onnx"] = branchy().SerializeToString()
    files["wide.onnx"], files["wide_costs.csv"] = wide()

    # Truncations: halfway (moved down until the protobuf no longer parses) and to 5 bytes.
    cut = len(good_bytes) // 2
    while parses(good_bytes[:cut]):
        cut -= 1
    files["truncated.onnx"] = good_bytes[:cut]
    files["truncated_header.onnx"] = good_bytes[:5]
    files["empty.onnx"] = b""
    rng = random.Random(8)
    files["garbage.onnx"] = bytes(rng.randrange(256) for _ in range(4096))

    # Bit flips (seeded): each file has 1, 4 or 16 flipped bits and no longer parses.
    for flips in (1, 4, 16):
        rng = random.Random(1000 + flips)
        while True:
            data = bytearray(good_bytes)
            for _ in range(flips):
                pos = rng.randrange(len(data))
                data[pos] ^= 1 << rng.randrange(8)
            if not parses(bytes(data)):
                break
        files[f"bitflip_{flips}.onnx"] = bytes(data)
    # One targeted flip that parses but breaks the graph: "Relu" → "Rdlu".
    pos = good_bytes.index(b"Relu")
    data = bytearray(good_bytes)
    data[pos + 1] ^= 0x01
    files["bitflip_op_type.onnx"] = bytes(data)

    # Valid protobufs that are not models.
    t = helper.make_tensor("t", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    files["not_a_model_tensor.onnx"] = t.SerializeToString()
    files["not_a_model_graph.onnx"] = good.graph.SerializeToString()
    # Nested 2000 deep (graph → node → attribute → graph → …): past protobuf's recursion limit.
    inner = b""
    for _ in range(2000):
        attr = field(1, b"body") + field(6, inner)   # AttributeProto{name, g}
        node = field(4, b"If") + field(5, attr)        # NodeProto{op_type, attribute}
        inner = field(1, node)                          # GraphProto{node}
    files["deep_nesting.onnx"] = varint(1 << 3) + varint(8) + field(7, inner)
    # A length prefix that claims 2 GiB.
    files["huge_length_prefix.onnx"] = varint(7 << 3 | 2) + varint((1 << 31) - 1) + b"\x0a\x00"

    # Graph structure.
    files["cycle.onnx"] = model(
        [helper.make_node("Add", ["x", "b"], ["a"], name="A"),
         helper.make_node("Relu", ["a"], ["b"], name="B")],
        [tensor_in("x", [1, 4])], [tensor_out("a")]).SerializeToString()
    files["self_loop.onnx"] = model(
        [helper.make_node("Add", ["x", "a"], ["a"], name="selfish")],
        [tensor_in("x", [1, 4])], [tensor_out("a")]).SerializeToString()
    files["dangling_edge.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "ghost"], ["y"], name="add")],
        [tensor_in("x", [1, 4])], [tensor_out("y")]).SerializeToString()
    files["duplicate_output.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu"),
         helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid")],
        [tensor_in("x", [1, 4])], [tensor_out("y")]).SerializeToString()
    files["output_without_producer.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [1, 4])], [tensor_out("y"), tensor_out("nowhere")]).SerializeToString()
    files["empty_graph.onnx"] = model([], [tensor_in("x", [1, 4])], [tensor_out("x")]).SerializeToString()
    no_opset = copy.deepcopy(good)
    del no_opset.opset_import[:]
    files["no_opset.onnx"] = no_opset.SerializeToString()

    # Sizes and shapes.
    files["zero_sized_input.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [1, 0, 4])], [tensor_out("y")]).SerializeToString()
    files["zero_sized_intermediate.onnx"] = model(
        [helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"], name="slice"),
         helper.make_node("Relu", ["s"], ["y"], name="relu")],
        [tensor_in("x", [1, 4])], [tensor_out("y")],
        [helper.make_tensor("st", TensorProto.INT64, [1], [2]),
         helper.make_tensor("en", TensorProto.INT64, [1], [2]),
         helper.make_tensor("ax", TensorProto.INT64, [1], [1])]).SerializeToString()
    files["huge_input.onnx"] = model(  # 2^40 elements
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [1024, 1024, 1024, 1024])], [tensor_out("y")]).SerializeToString()
    huge_w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1], [0.0])
    del huge_w.dims[:]
    huge_w.dims.extend([1 << 20, 1 << 20])  # 2^40 elements declared; the data is external, never read
    external(huge_w, "huge_w.bin")
    files["huge_initializer.onnx"] = model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
        [tensor_in("x", [1, 1 << 20])], [tensor_out("y")], [huge_w]).SerializeToString()
    files["symbolic_dims.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", ["batch", 3, 8, 8])], [tensor_out("y")]).SerializeToString()
    files["input_without_shape.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)], [tensor_out("y")]).SerializeToString()
    mis = tiny()
    del mis.graph.initializer[0].float_data[10:]  # w0 is [4,3,3,3] = 108 floats; keep 10
    files["initializer_size_mismatch.onnx"] = mis.SerializeToString()
    mis_raw = tiny()
    w = mis_raw.graph.initializer[1]  # w1 [4,4,3,3] = 144 floats, given 7 as raw bytes
    w.ClearField("float_data")
    w.raw_data = struct.pack("<7f", *([0.5] * 7))
    files["initializer_raw_size_mismatch.onnx"] = mis_raw.SerializeToString()
    files["shape_inference_error.onnx"] = model(  # [1,4] × [5,3]: ONNX shape inference refuses it
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
        [tensor_in("x", [1, 4])], [tensor_out("y")], [weights("w", [5, 3])]).SerializeToString()
    # A rank-2 input into a Conv with a rank-4 weight: ONNX 1.12's Conv shape
    # inference indexes past its vectors and segfaults (found by fuzz_onnx).
    rank = tiny()
    del rank.graph.input[0].type.tensor_type.shape.dim[2:]
    files["conv_rank_mismatch.onnx"] = rank.SerializeToString()
    # Inconsistencies ONNX shape inference lets through (the importer checks them).
    bad_conv = tiny()
    bad_conv.graph.initializer[1].CopyFrom(weights("w1", [4, 5, 3, 3]))  # conv1's input has 4 channels
    files["conv_channel_mismatch.onnx"] = bad_conv.SerializeToString()
    files["gemm_inner_mismatch.onnx"] = model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="gemm", transB=1)],
        [tensor_in("x", [1, 4])], [tensor_out("y")], [weights("w", [3, 5])]).SerializeToString()

    # Unsupported content.
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                               [tensor_out("t")])
    else_g = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["e"], name="else_sigmoid")], "else",
                               [], [tensor_out("e")])
    files["control_flow_if.onnx"] = model(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        [tensor_in("x", [1, 4]), tensor_in("cond", [], TensorProto.BOOL)], [tensor_out("y")]).SerializeToString()
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="keep"),
         helper.make_node("Relu", ["v_in"], ["v_out"], name="body_relu")], "body",
        [tensor_in("i", [], TensorProto.INT64), tensor_in("c_in", [], TensorProto.BOOL), tensor_in("v_in", [1, 4])],
        [tensor_out("c_out", TensorProto.BOOL), tensor_out("v_out")])
    files["control_flow_loop.onnx"] = model(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)],
        [tensor_in("x", [1, 4]), tensor_in("n", [], TensorProto.INT64)], [tensor_out("y")]).SerializeToString()
    files["unknown_domain_node.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("FancyOp", ["r"], ["y"], name="fancy", domain="com.vendor.fancy")],
        [tensor_in("x", [1, 4])], [tensor_out("y")]).SerializeToString()
    # Declared but unused: exporters list domains they never use (a control, not an error).
    files["unused_opset_domains.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [1, 4])], [tensor_out("y")],
        domains=["com.microsoft", "ai.onnx.ml", "org.pytorch.aten", "com.vendor"]).SerializeToString()
    files["unknown_microsoft_op.onnx"] = model(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("NotARealOp", ["r"], ["y"], name="mystery", domain="com.microsoft")],
        [tensor_in("x", [1, 4])], [tensor_out("y")], domains=["com.microsoft"]).SerializeToString()
    files["nchwc_layout.onnx"] = model(
        [helper.make_node("ReorderInput", ["x"], ["y"], name="reorder", domain="com.microsoft.nchwc")],
        [tensor_in("x", [1, 8, 4, 4])], [tensor_out("y")], domains=["com.microsoft.nchwc"]).SerializeToString()
    # An If on a score computed at run time (a two-stage detector), without --branch.
    then_s = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["t"], name="stage2")], "then", [],
                               [tensor_out("t")])
    else_s = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="skip")], "else", [],
                               [tensor_out("e")])
    files["data_dependent_if.onnx"] = model(
        [helper.make_node("ReduceMax", ["x"], ["score"], name="score", keepdims=0),
         helper.make_node("Greater", ["score", "threshold"], ["wake"], name="wake"),
         helper.make_node("If", ["wake"], ["y"], name="gate", then_branch=then_s, else_branch=else_s)],
        [tensor_in("x", [1, 4])], [tensor_out("y")],
        [helper.make_tensor("threshold", TensorProto.FLOAT, [], [0.5])]).SerializeToString()
    # A Loop inside the branch an If takes: refused once the branch is inlined.
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["lc_in"], ["lc_out"], name="lkeep"),
         helper.make_node("Relu", ["lv_in"], ["lv_out"], name="lrelu")], "lbody",
        [tensor_in("li", [], TensorProto.INT64), tensor_in("lc_in", [], TensorProto.BOOL), tensor_in("lv_in", [1, 4])],
        [tensor_out("lc_out", TensorProto.BOOL), tensor_out("lv_out")])
    then_l = helper.make_graph([helper.make_node("Loop", ["trips", "", "x"], ["tl"], name="inner_loop", body=loop_body)],
                               "then", [], [tensor_out("tl")])
    files["loop_in_taken_branch.onnx"] = model(
        [helper.make_node("If", ["always"], ["y"], name="outer", then_branch=then_l, else_branch=else_s)],
        [tensor_in("x", [1, 4])], [tensor_out("y")],
        [helper.make_tensor("always", TensorProto.BOOL, [], [True]),
         helper.make_tensor("trips", TensorProto.INT64, [], [3])]).SerializeToString()
    # Inputs without static shapes at ranks 2 and 4, one dim unnamed: one error lists both.
    b_in = tensor_in("b", ["n", 3, "h", "w"])
    b_in.type.tensor_type.shape.dim[3].Clear()
    files["missing_shapes.onnx"] = model(
        [helper.make_node("ReduceMean", ["b"], ["bm"], name="bmean", axes=[1, 2, 3], keepdims=0),
         helper.make_node("ReduceMean", ["a"], ["am"], name="amean", axes=[1], keepdims=0),
         helper.make_node("Add", ["am", "bm"], ["y"], name="sum")],
        [tensor_in("a", ["batch", 16000]), b_in], [tensor_out("y")]).SerializeToString()
    # A sample rate as an input (fixed with --value), and a value that fixes a shape.
    files["value_input.onnx"] = model(
        [helper.make_node("Cast", ["sr"], ["srf"], name="cast", to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "srf"], ["y"], name="scale")],
        [tensor_in("x", [1, 4]), tensor_in("sr", [], TensorProto.INT64)], [tensor_out("y")]).SerializeToString()
    files["shape_from_input_value.onnx"] = model(
        [helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
         helper.make_node("Relu", ["flat"], ["y"], name="relu")],
        [tensor_in("x", [1, 4, 6]), tensor_in("target", [2], TensorProto.INT64)], [tensor_out("y")]).SerializeToString()
    files["unknown_op.onnx"] = model(
        [helper.make_node("FooBar", ["x"], ["y"], name="foo")],
        [tensor_in("x", [1, 4])], [tensor_out("y")]).SerializeToString()

    # External data: out of the model's folder (refused, never opened) and missing.
    for name, location in [("external_escape.onnx", "../../etc/passwd"),
                           ("external_absolute.onnx", "/etc/shadow"),
                           ("external_sneaky.onnx", "weights/../../../secret.bin"),
                           ("external_missing.onnx", "weights_that_do_not_exist.bin"),
                           # tests/robustness/limits_test.cc makes these FIFOs: opening one would hang.
                           ("external_fifo.onnx", "weights.fifo"),
                           ("external_fifo_outside.onnx", "../outside.fifo")]:
        m = tiny()
        external(m.graph.initializer[0], location)
        files[name] = m.SerializeToString()
    # A shape argument in external data (read at import) whose data file is
    # shorter than the tensor; a weight whose declared length is not its size.
    target = helper.make_tensor("target", TensorProto.INT64, [2], [1, 24])
    external(target, "external_truncated.bin")
    files["external_truncated.onnx"] = model(
        [helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
         helper.make_node("Relu", ["flat"], ["y"], name="relu")],
        [tensor_in("x", [1, 4, 6])], [tensor_out("y")], [target]).SerializeToString()
    files["external_truncated.bin"] = bytes(4)
    m = tiny()
    external(m.graph.initializer[0], "w0.bin")
    kv = m.graph.initializer[0].external_data.add()
    kv.key, kv.value = "length", "7"
    files["external_length.onnx"] = m.SerializeToString()

    # A node name that is not UTF-8 (protobuf does not check ONNX's proto2 strings).
    files["name_not_utf8.onnx"] = good_bytes.replace(b"relu0", b"rel\xff0")
    files["many_operators.onnx"] = relu_chain(50).SerializeToString()
    return files


# --- platforms ----------------------------------------------------------------

GOOD_PLATFORM = """\
name: table-pair
pus:
  - name: cpu
    kind: cpu
    cost: table
    table: tiny_costs.csv
  - name: cim
    kind: cim
    crossbars: 100
links:
  - between: [cpu, cim]
    bandwidth_gbps: 10.24
"""


def platform_files(big):
    f = {}
    base = "name: p\npus:\n  - name: cpu\n    kind: cpu\n"
    cim = "  - name: cim\n    kind: cim\n"
    f["platform_good.yaml"] = GOOD_PLATFORM
    f["platform_empty.yaml"] = ""
    f["platform_not_a_map.yaml"] = "- just\n- a\n- list\n"
    f["platform_syntax_error.yaml"] = "name: p\npus: [cpu, {kind: cpu\n"
    f["platform_lone_comma.yaml"] = ","  # yaml-cpp 0.7's LoadAll loops forever on this
    f["platform_two_documents.yaml"] = base + "---\n" + base
    f["platform_binary.yaml"] = "name: p\x00\x01\x02\npus: \xff\xfe\n"
    f["platform_latin1.yaml"] = "name: p\ndescription: \"caf\xe9\"\npus:\n  - name: cpu\n    kind: cpu\n"
    # Wrong types.
    f["platform_crossbars_string.yaml"] = base + cim + "    crossbars: \"100\"\n"
    f["platform_crossbars_fraction.yaml"] = base + cim + "    crossbars: 2.5\n"
    f["platform_pus_scalar.yaml"] = "name: p\npus: cpu\n"
    f["platform_name_list.yaml"] = "name: [a, b]\npus:\n  - name: cpu\n    kind: cpu\n"
    f["platform_unknown_kind.yaml"] = "name: p\npus:\n  - name: cpu\n    kind: laptop\n"
    f["platform_bool_as_number.yaml"] = base + cim + "    mvm_latency_ns: true\n"
    f["platform_spatial_cpu.yaml"] = base + "    execution: spatial\n"
    # NaN / inf / negative / zero.
    f["platform_nan.yaml"] = base + cim + "    mvm_latency_ns: .nan\n"
    f["platform_inf.yaml"] = base + cim + "links:\n  - between: [cpu, cim]\n    bandwidth_gbps: .inf\n"
    f["platform_negative.yaml"] = base + cim + "    crossbars: -5\n"
    f["platform_negative_latency.yaml"] = (base + cim +
                                           "links:\n  - between: [cpu, cim]\n    bandwidth_gbps: 1\n"
                                           "    latency_us: -1\n")
    f["platform_zero_power.yaml"] = base + "    power_w: 0\n"
    f["platform_out_of_range.yaml"] = base + cim + "    crossbars: 99999999999999999999999\n"
    # Unknown and duplicate keys.
    f["platform_unknown_top_key.yaml"] = base + "colour: blue\n"
    f["platform_unknown_pu_key.yaml"] = base + cim + "    crosbars: 100\n"
    f["platform_duplicate_key.yaml"] = base + cim + "    crossbars: 100\n    crossbars: 200\n"
    f["platform_duplicate_pu.yaml"] = base + "  - name: cpu\n    kind: gpu\n"
    f["platform_unknown_link_pu.yaml"] = base + "links:\n  - between: [cpu, gpu]\n    bandwidth_gbps: 1\n"
    f["platform_no_pus.yaml"] = "name: p\npus: []\n"
    f["platform_too_many_pus.yaml"] = "name: p\npus:\n" + "".join(
        f"  - name: cpu{i}\n    kind: cpu\n" for i in range(65))
    # Deep nesting, three ways.
    f["platform_deep_flow.yaml"] = "name: p\npus: " + "[" * 100000 + "]" * 100000 + "\n"
    f["platform_deep_dashes.yaml"] = "name: p\npus:\n" + "- " * 5000 + "x\n"
    f["platform_deep_indent.yaml"] = "name: p\npus:\n" + "".join(" " * (2 * i) + f"k{i}:\n" for i in range(600))
    f["platform_alias_bomb.yaml"] = ("a: &a [x, x, x, x, x, x, x, x, x]\n" +
                                     "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)},"
                                             f" *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
                                             for i in range(12)) +
                                     "name: p\npus:\n  - name: cpu\n    kind: cpu\n")
    # Long strings: 5000 characters (over the 4096 limit) and, with --big, 100 MB.
    f["platform_long_string.yaml"] = base.replace("name: p", "name: " + "p" * 5000)
    if big:
        f["platform_100mb_string.yaml"] = "name: p\ndescription: \"" + "x" * (100 << 20) + "\"\n" + base[8:]
    return f


# --- cost tables --------------------------------------------------------------

HEADER = "kind,op_name,pu,exec_us,dispatch_us,h2d_us,d2h_us"


def tiny_costs():
    return ("# source=user\n" + HEADER + "\n" +
            "op,conv0,cpu,10,0,0,0\nop,relu0,cpu,2,0,0,0\nop,conv1,cpu,12,0,0,0\n")


def cost_files(big):
    f = {}
    good = tiny_costs()
    f["tiny_costs.csv"] = good
    f["costs_empty.csv"] = ""
    f["costs_only_comments.csv"] = "# source=user\n# nothing else\n"
    f["costs_no_kind_column.csv"] = "op_name,pu,exec_us\nconv0,cpu,10\n"
    f["costs_missing_exec_column.csv"] = "kind,op_name,pu\nop,conv0,cpu\n"
    f["costs_missing_pu_column.csv"] = "kind,op_name,exec_us\nop,conv0,10\n"
    f["costs_duplicate_row.csv"] = good + "op,relu0,cpu,3,0,0,0\n"
    f["costs_duplicate_column.csv"] = "kind,op_name,pu,exec_us,exec_us\nop,conv0,cpu,1,2\n"
    f["costs_non_numeric.csv"] = good.replace("op,relu0,cpu,2,", "op,relu0,cpu,fast,")
    f["costs_nan.csv"] = good.replace("op,relu0,cpu,2,", "op,relu0,cpu,nan,")
    f["costs_inf.csv"] = good.replace("op,conv1,cpu,12,", "op,conv1,cpu,inf,")
    f["costs_negative.csv"] = good.replace("op,conv0,cpu,10,", "op,conv0,cpu,-10,")
    f["costs_out_of_range.csv"] = good.replace("op,conv0,cpu,10,", "op,conv0,cpu,1e999,")
    f["costs_wrong_cell_count.csv"] = good + "op,conv1,cim,1,0\n"
    f["costs_unclosed_quote.csv"] = good + "op,\"conv1,cim,1,0,0,0\n"
    f["costs_unknown_kind.csv"] = good + "banana,conv0,cpu,1,0,0,0\n"
    f["costs_empty_name.csv"] = good + "op,,cpu,1,0,0,0\n"
    f["costs_other_model.csv"] = good.replace("conv1", "layer4.1.conv2")
    f["costs_uncovered_operator.csv"] = "".join(l + "\n" for l in good.splitlines() if "relu0" not in l)
    f["costs_bad_op_id.csv"] = ("kind,op_id,op_name,pu,exec_us\nop,0,conv0,cpu,1\nop,x1,relu0,cpu,1\n"
                                "op,2,conv1,cpu,1\n")
    f["costs_wrong_op_id.csv"] = ("kind,op_id,op_name,pu,exec_us\nop,0,conv0,cpu,1\nop,7,relu0,cpu,1\n"
                                  "op,2,conv1,cpu,1\n")
    f["costs_binary.csv"] = HEADER + "\n\x00\x01\xff,\xfe\n"
    f["costs_not_utf8.csv"] = good.replace("# source=user", "# source=caf\xe9")
    f["costs_table.txt"] = good
    # JSON tables.
    rows = [{"kind": "op", "op_name": n, "pu": "cpu", "exec_us": v}
            for n, v in (("conv0", 10), ("relu0", 2), ("conv1", 12))]
    f["costs_good.json"] = json.dumps({"format": "hetplan-cost-table", "version": 1, "meta": {}, "rows": rows})
    f["costs_not_json.json"] = "{\"format\": \"hetplan-cost-table\", \"rows\": [\n"
    f["costs_json_array.json"] = json.dumps(rows)
    f["costs_json_wrong_format.json"] = json.dumps({"format": "hetplan-schedule", "rows": rows})
    f["costs_json_version.json"] = json.dumps({"format": "hetplan-cost-table", "version": 99, "rows": rows})
    f["costs_json_rows_object.json"] = json.dumps({"format": "hetplan-cost-table", "rows": {"a": 1}})
    bad_rows = copy.deepcopy(rows)
    bad_rows[1]["exec_us"] = {"median": 2}
    f["costs_json_nested_value.json"] = json.dumps({"format": "hetplan-cost-table", "rows": bad_rows})
    bad_rows = copy.deepcopy(rows)
    bad_rows[2]["exec_us"] = -4
    f["costs_json_negative.json"] = json.dumps({"format": "hetplan-cost-table", "rows": bad_rows})
    f["costs_json_deep.json"] = "[" * 100000 + "]" * 100000
    if big:
        f["costs_100mb_cell.csv"] = good + "op," + "n" * (100 << 20) + ",cpu,1,0,0,0\n"
    return f


# --- schedules ----------------------------------------------------------------

def good_schedule():
    """conv0 on cim [0,5], relu0 on cpu [7,9] after a 2 µs transfer, conv1 on cim [11,17]."""
    ops = [
        {"id": 0, "name": "conv0", "type": "Conv", "cost_us": {"cpu": 10.0, "cim": 5.0}, "crossbars": 1,
         "device": "cim", "start_us": 0.0, "finish_us": 5.0},
        {"id": 1, "name": "relu0", "type": "Relu", "cost_us": {"cpu": 2.0, "cim": None}, "crossbars": None,
         "device": "cpu", "start_us": 7.0, "finish_us": 9.0},
        {"id": 2, "name": "conv1", "type": "Conv", "cost_us": {"cpu": 12.0, "cim": 6.0}, "crossbars": 1,
         "device": "cim", "start_us": 11.0, "finish_us": 17.0},
    ]
    edges = [{"from": 0, "to": 1, "elements": 256, "bytes": 1024, "transfer_us": 2.0},
             {"from": 1, "to": 2, "elements": 256, "bytes": 1024, "transfer_us": 2.0}]
    return {
        "format": "hetplan-schedule", "version": 1,
        "model": {"name": "tiny", "file": "tiny.onnx", "sha256": "", "fusion": "none", "operators": 3},
        "objective": "latency", "mode": "partition",
        "devices": [
            {"name": "cpu", "kind": "cpu", "execution": "serial", "capacity_crossbars": None, "power_w": 2.0,
             "costs": "table"},
            {"name": "cim", "kind": "cim", "execution": "spatial", "capacity_crossbars": 2, "power_w": 1.0,
             "costs": "analytical"}],
        "operators": ops, "edges": edges, "makespan_us": 17.0, "energy_uj": 15.0,
    }


def schedule_files(big):
    f = {}
    good = good_schedule()
    f["good_schedule.json"] = json.dumps(good, indent=1)

    def lie(name, mutate):
        s = copy.deepcopy(good)
        mutate(s)
        f[name] = json.dumps(s, indent=1)

    def overlap(s):  # a second CPU operator inside relu0's slot
        s["operators"][2].update(device="cpu", start_us=8.0, finish_us=20.0, crossbars=None)
        s["makespan_us"] = 20.0
        s["energy_uj"] = 5.0 + 4.0 + 24.0
    lie("schedule_overlap.json", overlap)
    lie("schedule_wrong_cost.json", lambda s: s["operators"][1].update(finish_us=8.0))
    lie("schedule_capacity.json", lambda s: s["devices"][1].update(capacity_crossbars=1))
    lie("schedule_precedence.json", lambda s: s["operators"][1].update(start_us=6.0, finish_us=8.0))
    lie("schedule_makespan.json", lambda s: s.update(makespan_us=12.0))
    lie("schedule_energy.json", lambda s: s.update(energy_uj=1.0))
    lie("schedule_unsupported.json", lambda s: s["operators"][1].update(device="cim", crossbars=1))
    lie("schedule_unknown_device.json", lambda s: s["operators"][0].update(device="gpu"))
    lie("schedule_negative_start.json",
        lambda s: s["operators"][0].update(start_us=-5.0, finish_us=0.0))
    lie("schedule_duplicate_id.json", lambda s: s["operators"][2].update(id=1))
    lie("schedule_edge_to_nowhere.json", lambda s: s["edges"].append({"from": 0, "to": 42, "transfer_us": 0}))
    lie("schedule_slowdown_below_one.json",
        lambda s: s["operators"][1].update(slowdown=0.5, finish_us=8.0))
    # Wrong types and missing parts.
    lie("schedule_format_number.json", lambda s: s.update(format=7))
    lie("schedule_device_name_number.json", lambda s: s["devices"][0].update(name=3))
    lie("schedule_start_string.json", lambda s: s["operators"][0].update(start_us="0"))
    lie("schedule_no_devices.json", lambda s: s.pop("devices"))
    lie("schedule_operators_object.json", lambda s: s.update(operators={"0": {}}))
    lie("schedule_huge_number.json", lambda s: s.update(makespan_us="PLACEHOLDER"))
    f["schedule_huge_number.json"] = f["schedule_huge_number.json"].replace('"PLACEHOLDER"', "1e999")
    f["schedule_not_json.json"] = "{\"format\": \"hetplan-schedule\", \"operators\": [\n"
    f["schedule_not_object.json"] = "[1, 2, 3]\n"
    f["schedule_deep.json"] = "[" * 100000 + "]" * 100000
    f["schedule_empty.json"] = ""
    if big:
        s = copy.deepcopy(good)
        s["operators"][0]["name"] = "PLACEHOLDER"
        s["operators"][0]["finish_us"] = 4.0  # a violation that names the 100 MB operator
        f["schedule_100mb_name.json"] = json.dumps(s).replace("PLACEHOLDER", "o" * (100 << 20))
    return f


# --- quantized models (QDQ) ----------------------------------------------------

def qdq_tiny(edit=None):
    """x → Q → DQ → conv (weight: int8, per-channel DQ) → Q → DQ → y, the
    form torch.onnx and ONNX Runtime's quantizer write. `edit(parts)` breaks
    one parameter first; parts maps names to the initializers and nodes."""
    import numpy as np
    from onnx import numpy_helper
    inits = {
        "x_scale": numpy_helper.from_array(np.array(0.02, dtype=np.float32), "x_scale"),
        "x_zero_point": numpy_helper.from_array(np.array(128, dtype=np.uint8), "x_zero_point"),
        "w_quantized": numpy_helper.from_array((np.arange(4 * 3 * 9) % 15 - 7).astype(np.int8).reshape(4, 3, 3, 3),
                                               "w_quantized"),
        "w_scale": numpy_helper.from_array(np.array([0.01, 0.02, 0.03, 0.04], dtype=np.float32), "w_scale"),
        "w_zero_point": numpy_helper.from_array(np.zeros(4, dtype=np.int8), "w_zero_point"),
        "y_scale": numpy_helper.from_array(np.array(0.05, dtype=np.float32), "y_scale"),
        "y_zero_point": numpy_helper.from_array(np.array(128, dtype=np.uint8), "y_zero_point"),
    }
    nodes = {
        "quant": helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero_point"], ["xq"], name="quant"),
        "dequant": helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero_point"], ["xd"], name="dequant"),
        "w_dequant": helper.make_node("DequantizeLinear", ["w_quantized", "w_scale", "w_zero_point"], ["w"],
                                      name="w_dequant", axis=0),
        "conv0": helper.make_node("Conv", ["xd", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        "conv0_quant": helper.make_node("QuantizeLinear", ["c", "y_scale", "y_zero_point"], ["cq"],
                                        name="conv0_quant"),
        "conv0_dequant": helper.make_node("DequantizeLinear", ["cq", "y_scale", "y_zero_point"], ["y"],
                                          name="conv0_dequant"),
    }
    parts = dict(inits)
    parts.update(nodes)
    if edit:
        edit(parts)
    return model([parts[k] for k in nodes], [tensor_in("x", [1, 3, 8, 8])], [tensor_out("y")],
                 [v for v in parts.values() if isinstance(v, TensorProto)]).SerializeToString()


def quantized_files():
    import numpy as np
    from onnx import numpy_helper
    f = {"qdq_tiny.onnx": qdq_tiny()}

    def replace(name, array):
        return lambda p: p.update({name: numpy_helper.from_array(array, name)})

    f["qdq_scale_zero_point_shapes.onnx"] = qdq_tiny(replace("w_zero_point", np.zeros(3, dtype=np.int8)))
    f["qdq_axis_out_of_range.onnx"] = qdq_tiny(
        lambda p: p.update(w_dequant=helper.make_node(
            "DequantizeLinear", ["w_quantized", "w_scale", "w_zero_point"], ["w"], name="w_dequant", axis=4)))
    f["qdq_zero_scale.onnx"] = qdq_tiny(replace("x_scale", np.array(0.0, dtype=np.float32)))
    f["qdq_negative_scale.onnx"] = qdq_tiny(replace("w_scale", np.array([0.01, -0.02, 0.03, 0.04], dtype=np.float32)))
    # A uint8 zero point stored as 300 in int32_data: protobuf holds it, no uint8 can.
    f["qdq_zero_point_outside_type.onnx"] = qdq_tiny(
        lambda p: p.update(y_zero_point=helper.make_tensor("y_zero_point", TensorProto.UINT8, [], [300])))
    # The Q writes uint8 (its zero point's type), the DQ reads it with an int8 zero point.
    def disagree(p):
        p["y_zero_point_int8"] = numpy_helper.from_array(np.array(0, dtype=np.int8), "y_zero_point_int8")
        p["conv0_dequant"] = helper.make_node("DequantizeLinear", ["cq", "y_scale", "y_zero_point_int8"], ["y"],
                                              name="conv0_dequant")
    f["qdq_types_disagree.onnx"] = qdq_tiny(disagree)
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to write the corpus to (created)")
    ap.add_argument("--big", action="store_true", help="also write the 100 MB files")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = {}
    files.update(onnx_files())
    files.update(quantized_files())
    files.update(platform_files(args.big))
    files.update(cost_files(args.big))
    files.update(schedule_files(args.big))
    for name, content in sorted(files.items()):
        data = content if isinstance(content, bytes) else content.encode("latin-1" if any(
            k in name for k in ("latin1", "binary", "not_utf8")) else "utf-8")
        with open(os.path.join(args.out, name), "wb") as fh:
            fh.write(data)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
