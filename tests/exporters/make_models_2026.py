"""Writes one small ONNX model per pattern that current exporters produce at
opset 18 and newer (issue 43; docs/graph-format.md, "What exporters write"),
deterministically, with ONNX 1.22 from PyPI (onnx.helper, onnx.checker with
full shape inference). Run with the virtual environment scripts/setup.sh
creates; Debian's onnx 1.12 stops at opset 17. Nothing binary is committed:
tests/exporters/exporters_test.cc runs this script into a temporary folder.

    third_party/models-venv/bin/python tests/exporters/make_models_2026.py --out DIR

Each model (none needs an option):
  opset18_reduce.onnx     the issue's reproducer: Conv -> Relu -> ReduceMean,
                          the axes an input, as torch's exporter writes
                          opset 18.
  opset21_reduce.onnx     the same declared at opset 21 (ONNX Runtime's
                          quantizer writes 21).
  opset21_forms.onnx      the signatures that changed at 18-21: Split with
                          num_outputs (18), Pad with axes (18), ReduceMax with
                          axes as input (18), Resize with antialias and
                          keep_aspect_ratio_policy (18/19), GroupNormalization
                          with per-channel scale and bias (21).
  opset23_transformer.onnx  operators new at 20-23 in a decoder-style block:
                          Gelu (20), RMSNormalization, RotaryEmbedding and
                          Attention (23), between MatMuls with weights.
  local_functions.onnx    model-local functions, as torch's torch.export-
                          based exporter and onnxscript write them: a Stage
                          calling a ConvAct twice (nested calls, an attribute
                          reference with its default and one set by the call)
                          and one more ConvAct call in the main graph.
  kv_decoder.onnx         a decoder layer's attention with a KV cache, as
                          Hugging Face style exporters write it:
                          past_key_values.0.key/value in, present.0.key/value
                          out, batch, seq and past symbolic. Prefill:
                          --shape hidden_states=1x8x64 --shape
                          past_key_values.0.key=1x4x0x16 (and .value): the
                          past is empty; decode: hidden_states=1x1x64 and a
                          past of 8 (1x4x8x16).
  external_transformer.onnx (+ .onnx.data)  opset23_transformer with every
                          tensor in external data (size_threshold=0), the
                          int64 position ids too.
  external_forms.onnx (+ .onnx.data)  opset21_forms saved as onnx.save does
                          by default (size_threshold=1024): the larger
                          weights external, the arguments inside.
  external_arguments.onnx (+ .onnx.data)  opset21_forms with every tensor
                          external, the arguments (pads, axes, sizes) too:
                          import reads them; ONNX Runtime 1.29 itself refuses
                          the file ("Cannot parse data from external tensors").
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(43)


def weight(name, *dims, scale=0.1):
    return numpy_helper.from_array((RNG.standard_normal(dims) * scale).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(out, name, nodes, inputs, outputs, inits, opset):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="hetplan-tests")
    model.ir_version = 10 if opset <= 21 else 11
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def reduce_model(out, opset):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
        helper.make_node("ReduceMean", ["r", "axes"], ["y"], name="/pool/ReduceMean", keepdims=1),
    ]
    inits = [weight("w", 8, 3, 3, 3), weight("b", 8), ints("axes", [2, 3])]
    save(out, f"opset{opset}_reduce", nodes, [x], [y], inits, opset)


def forms_model(out):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/conv1/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("GroupNormalization", ["c1", "gn_scale", "gn_bias"], ["gn"], name="/gn/GroupNormalization",
                         num_groups=2, epsilon=1e-5),
        helper.make_node("Split", ["gn"], ["s0", "s1"], name="/split/Split", axis=1, num_outputs=2),
        helper.make_node("Pad", ["s0", "pads", "", "pad_axes"], ["p"], name="/pad/Pad", mode="reflect"),
        helper.make_node("MaxPool", ["p"], ["m"], name="/pool/MaxPool", kernel_shape=[3, 3]),
        helper.make_node("ReduceMax", ["s1", "rmax_axes"], ["g"], name="/squeeze/ReduceMax", keepdims=1),
        helper.make_node("Resize", ["g", "", "", "sizes"], ["u"], name="/up/Resize", mode="nearest", antialias=0,
                         keep_aspect_ratio_policy="stretch"),
        helper.make_node("Mul", ["s1", "u"], ["e"], name="/excite/Mul"),
        helper.make_node("Concat", ["m", "e"], ["cat"], name="/cat/Concat", axis=1),
        helper.make_node("Conv", ["cat", "w2", "b2"], ["y"], name="/conv2/Conv"),
    ]
    inits = [weight("w1", 8, 8, 3, 3), weight("b1", 8), weight("gn_scale", 8, scale=1.0), weight("gn_bias", 8),
             ints("pads", [1, 1, 1, 1]), ints("pad_axes", [2, 3]), ints("rmax_axes", [2, 3]),
             ints("sizes", [1, 4, 16, 16]), weight("w2", 8, 8, 1, 1), weight("b2", 8)]
    save(out, "opset21_forms", nodes, [x], [y], inits, 21)


def transformer_model(out):
    seq, hidden, heads = 16, 64, 4
    head = hidden // heads
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])
    positions = np.arange(seq, dtype=np.float32)[:, None] / (10000 ** (np.arange(head // 2, dtype=np.float32) / (head // 2)))
    nodes = [
        helper.make_node("RMSNormalization", ["x", "norm_scale"], ["n"], name="/norm/RMSNormalization", axis=-1,
                         epsilon=1e-6),
        helper.make_node("MatMul", ["n", "wq"], ["q"], name="/attn/q_proj/MatMul"),
        helper.make_node("MatMul", ["n", "wk"], ["k"], name="/attn/k_proj/MatMul"),
        helper.make_node("MatMul", ["n", "wv"], ["v"], name="/attn/v_proj/MatMul"),
        helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "position_ids"], ["qr"], name="/attn/q_rope",
                         num_heads=heads),
        helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "position_ids"], ["kr"], name="/attn/k_rope",
                         num_heads=heads),
        helper.make_node("Attention", ["qr", "kr", "v"], ["a"], name="/attn/Attention", q_num_heads=heads,
                         kv_num_heads=heads, is_causal=1),
        helper.make_node("MatMul", ["a", "wo"], ["o"], name="/attn/o_proj/MatMul"),
        helper.make_node("Add", ["x", "o"], ["h"], name="/residual/Add"),
        helper.make_node("MatMul", ["h", "w_up"], ["up"], name="/mlp/up_proj/MatMul"),
        helper.make_node("Gelu", ["up"], ["act"], name="/mlp/act/Gelu", approximate="tanh"),
        helper.make_node("MatMul", ["act", "w_down"], ["down"], name="/mlp/down_proj/MatMul"),
        helper.make_node("Add", ["h", "down"], ["y"], name="/residual2/Add"),
    ]
    inits = [weight("norm_scale", hidden, scale=1.0), weight("wq", hidden, hidden), weight("wk", hidden, hidden),
             weight("wv", hidden, hidden), weight("wo", hidden, hidden), weight("w_up", hidden, 4 * hidden),
             weight("w_down", 4 * hidden, hidden),
             numpy_helper.from_array(np.cos(positions).astype(np.float32), "cos"),
             numpy_helper.from_array(np.sin(positions).astype(np.float32), "sin"),
             ints("position_ids", [list(range(seq))])]
    save(out, "opset23_transformer", nodes, [x], [y], inits, 23)


def functions_model(out):
    # ConvAct(X, W, B) -> Y: Conv, then LeakyRelu whose alpha refers to the call's (default 0.1).
    act = helper.make_node("LeakyRelu", ["C"], ["Y"], name="act")
    alpha = onnx.AttributeProto()
    alpha.name, alpha.ref_attr_name, alpha.type = "alpha", "alpha", onnx.AttributeProto.FLOAT
    act.attribute.append(alpha)
    conv_act = helper.make_function(
        "pkg.hetplan", "ConvAct", ["X", "W", "B"], ["Y"],
        [helper.make_node("Conv", ["X", "W", "B"], ["C"], name="conv", pads=[1, 1, 1, 1]), act],
        opset_imports=[helper.make_opsetid("", 18)], attribute_protos=[helper.make_attribute("alpha", 0.1)])
    stage = helper.make_function(
        "pkg.hetplan", "Stage", ["X", "W1", "B1", "W2", "B2"], ["Y"],
        [helper.make_node("ConvAct", ["X", "W1", "B1"], ["H"], name="block_a", domain="pkg.hetplan"),
         helper.make_node("ConvAct", ["H", "W2", "B2"], ["Y"], name="block_b", domain="pkg.hetplan", alpha=0.2)],
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("pkg.hetplan", 1)])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])
    nodes = [
        helper.make_node("Stage", ["x", "w1", "b1", "w2", "b2"], ["s"], name="/stage1/Stage", domain="pkg.hetplan"),
        helper.make_node("ConvAct", ["s", "w3", "b3"], ["y"], name="/head/ConvAct", domain="pkg.hetplan"),
    ]
    inits = [weight("w1", 8, 8, 3, 3), weight("b1", 8), weight("w2", 8, 8, 3, 3), weight("b2", 8),
             weight("w3", 8, 8, 3, 3), weight("b3", 8)]
    graph = helper.make_graph(nodes, "local_functions", [x], [y], inits)
    model = helper.make_model(graph, functions=[conv_act, stage], producer_name="hetplan-tests",
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("pkg.hetplan", 1)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "local_functions.onnx"))


def kv_decoder_model(out):
    heads, head, hidden = 4, 16, 64
    x = helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["batch", "seq", hidden])
    past = [helper.make_tensor_value_info(f"past_key_values.0.{kv}", TensorProto.FLOAT,
                                          ["batch", heads, "past", head]) for kv in ("key", "value")]
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", hidden])
    present = [helper.make_tensor_value_info(f"present.0.{kv}", TensorProto.FLOAT, ["batch", heads, "total", head])
               for kv in ("key", "value")]
    nodes = []
    for p in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["hidden_states", f"w{p}"], [p], name=f"/{p}_proj/MatMul"),
                  helper.make_node("Reshape", [p, "heads_shape"], [f"{p}4"], name=f"/{p}/Reshape"),
                  helper.make_node("Transpose", [f"{p}4"], [f"{p}t"], name=f"/{p}/Transpose", perm=[0, 2, 1, 3])]
    nodes += [
        helper.make_node("Concat", ["past_key_values.0.key", "kt"], ["present.0.key"], name="/k/Concat", axis=2),
        helper.make_node("Concat", ["past_key_values.0.value", "vt"], ["present.0.value"], name="/v/Concat", axis=2),
        helper.make_node("Transpose", ["present.0.key"], ["kT"], name="/k/Transpose_1", perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qt", "kT"], ["scores"], name="/attn/MatMul"),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="/attn/Mul"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="/attn/Softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "present.0.value"], ["ctx"], name="/attn/MatMul_1"),
        helper.make_node("Transpose", ["ctx"], ["ctxt"], name="/ctx/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctxt", "hidden_shape"], ["ctx3"], name="/ctx/Reshape"),
        helper.make_node("MatMul", ["ctx3", "wo"], ["o"], name="/o_proj/MatMul"),
        helper.make_node("Add", ["hidden_states", "o"], ["out"], name="/residual/Add"),
    ]
    inits = [weight("wq", hidden, hidden), weight("wk", hidden, hidden), weight("wv", hidden, hidden),
             weight("wo", hidden, hidden), ints("heads_shape", [0, -1, heads, head]),
             ints("hidden_shape", [0, -1, hidden]),
             numpy_helper.from_array(np.array(1 / np.sqrt(head), dtype=np.float32), "scale")]
    save(out, "kv_decoder", nodes, [x] + past, [y] + present, inits, 18)


def external_copies(out):
    for source, name, threshold in (("opset23_transformer", "external_transformer", 0),
                                    ("opset21_forms", "external_forms", 1024),
                                    ("opset21_forms", "external_arguments", 0)):
        model = onnx.load(os.path.join(out, source + ".onnx"))
        onnx.save(model, os.path.join(out, name + ".onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                  location=name + ".onnx.data", size_threshold=threshold)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    reduce_model(args.out, 18)
    reduce_model(args.out, 21)
    forms_model(args.out)
    transformer_model(args.out)
    functions_model(args.out)
    kv_decoder_model(args.out)
    external_copies(args.out)


if __name__ == "__main__":
    main()
