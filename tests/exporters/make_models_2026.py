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
  onnxscript_functions.onnx  model-local functions written by onnxscript 0.7
                          itself (nested @script functions, an attribute
                          default and one set by the call, unnamed nodes).
Narrow types (ml_dtypes, which onnx 1.22 depends on, for bfloat16, int4, uint4):
  bf16_mlp.onnx         bfloat16 throughout (input, output, weights), opset
                        21: MatMul -> Add -> Relu -> MatMul, 1x16x64 through
                        64x64 weights. ONNX Runtime's CPU provider has no
                        bfloat16 kernel for MatMul, Add or Relu.
  int4_blockwise.onnx   opset 21 block-wise weight quantization as ONNX
                        Runtime's MatMul4BitsQuantizer writes it with
                        quant_format=QDQ: a [K, N] weight initializer of 4-bit
                        integers, DequantizeLinear(axis=0, block_size=32) with
                        float scales [K/32, N], feeding a MatMul. /fc1 is INT4
                        symmetric (no zero point), /fc2 is UINT4 with UINT4
                        zero points [K/32, N]. The float32 activation goes
                        through a per-tensor uint8 QuantizeLinear ->
                        DequantizeLinear pair first, as a static quantizer
                        writes it.
  matmul_nbits.onnx     ONNX Runtime's com.microsoft MatMulNBits (bits=4,
                        block_size=32, K=64, N=64) between float32
                        activations, as MatMul4BitsQuantizer's default
                        (QOperator) format writes it: B uint8 [N, K/32, 16],
                        scales float [N*K/32]; /fc1 with uint8 zero_points
                        [N*ceil(K/32/2)], /fc2 without (zero point 8). Opset
                        21 in the default domain, com.microsoft 1.
  fp16_cast_ops.onnx    float16 throughout, opset 21: Conv -> Gelu ->
                        ReduceMean -> MatMul -> LayerNormalization -> Softmax.
                        ONNX Runtime 1.29's CPU provider has float16 kernels
                        for MatMul and LayerNormalization only; for Conv,
                        Gelu, ReduceMean and Softmax its InsertCastTransformer
                        runs the float32 kernel between inserted Casts.
"""

import argparse
import os

import ml_dtypes
import numpy as np
import onnx
import onnxscript
from onnx import TensorProto, helper, numpy_helper
from onnxscript import FLOAT, script
from onnxscript import opset18 as op18

RNG = np.random.default_rng(43)


def weight(name, *dims, scale=0.1, dtype=np.float32):
    return numpy_helper.from_array((RNG.standard_normal(dims) * scale).astype(np.float32).astype(dtype), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(out, name, nodes, inputs, outputs, inits, opset, extra_opsets=(), value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits, value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="hetplan-tests")
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


BLOCK = 32


def bf16_mlp_model(out):
    bf16 = ml_dtypes.bfloat16
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 16, 64])
    y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [1, 16, 64])
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/fc1/MatMul"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="/fc1/Add"),
        helper.make_node("Relu", ["hb"], ["r"], name="/act/Relu"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="/fc2/MatMul"),
    ]
    inits = [weight("w1", 64, 64, dtype=bf16), weight("b1", 64, dtype=bf16), weight("w2", 64, 64, dtype=bf16)]
    save(out, "bf16_mlp", nodes, [x], [y], inits, 21)


def quantize_blocks(w, signed):
    """Block-wise 4-bit quantization of a float [K, N] weight along K (axis 0),
    as MatMul4BitsQuantizer does: symmetric INT4 (no zero point) or asymmetric
    UINT4 with a zero point per block. Returns (q [K, N], scales [K/B, N],
    zero_points [K/B, N] or None)."""
    k, n = w.shape
    blocks = w.reshape(k // BLOCK, BLOCK, n)
    if signed:
        scales = np.abs(blocks).max(axis=1) / 7.0
        q = np.clip(np.round(blocks / scales[:, None, :]), -8, 7)
        return q.reshape(k, n).astype(ml_dtypes.int4), scales.astype(np.float32), None
    lo, hi = np.minimum(blocks.min(axis=1), 0), np.maximum(blocks.max(axis=1), 0)
    scales = (hi - lo) / 15.0
    zp = np.clip(np.round(-lo / scales), 0, 15)
    q = np.clip(np.round(blocks / scales[:, None, :]) + zp[:, None, :], 0, 15)
    return q.reshape(k, n).astype(ml_dtypes.uint4), scales.astype(np.float32), zp.astype(ml_dtypes.uint4)


def int4_blockwise_model(out):
    k = n = 64
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, n])
    inits = [numpy_helper.from_array(np.array(0.02, dtype=np.float32), "x_scale"),
             numpy_helper.from_array(np.array(128, dtype=np.uint8), "x_zero_point")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero_point"], ["x_q"], name="/fc1/input_QuantizeLinear"),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero_point"], ["x_dq"],
                         name="/fc1/input_DequantizeLinear"),
    ]
    prev = "x_dq"
    for layer, signed, act in (("fc1", True, "r"), ("fc2", False, "y")):
        w = f"/{layer}/weight"  # names as MatMul4BitsQuantizer writes them: <B>_DQ_Q4, <B>_DQ_scales, ...
        q, scales, zp = quantize_blocks(RNG.standard_normal((k, n)).astype(np.float32) * 0.1, signed)
        inits += [numpy_helper.from_array(q, w + "_DQ_Q4"), numpy_helper.from_array(scales, w + "_DQ_scales")]
        dq_inputs = [w + "_DQ_Q4", w + "_DQ_scales"]
        if zp is not None:
            inits.append(numpy_helper.from_array(zp, w + "_DQ_zero_points"))
            dq_inputs.append(w + "_DQ_zero_points")
        out_name = f"/{layer}/MatMul_output_0" if act == "r" else "y"
        nodes += [
            helper.make_node("DequantizeLinear", dq_inputs, [w + "_DQ_Q4_output"], name=f"/{layer}/MatMul_DQ_Q4",
                             axis=0, block_size=BLOCK),
            helper.make_node("MatMul", [prev, w + "_DQ_Q4_output"], [out_name], name=f"/{layer}/MatMul"),
        ]
        if act == "r":
            nodes.append(helper.make_node("Relu", [out_name], ["r"], name="/act/Relu"))
        prev = act
    save(out, "int4_blockwise", nodes, [x], [y], inits, 21)


def pack_nbits(w, with_zero_points):
    """MatMulNBits' layout of a float [K, N] weight, 4 bits, blocks of BLOCK
    along K: B uint8 [N, K/B, B/2] (two values a byte, the even k in the low
    nibble), scales float [N * K/B], zero_points uint8 [N * ceil(K/B / 2)]
    (two blocks a byte, low nibble first) or None (zero point 8)."""
    k, n = w.shape
    n_blocks = k // BLOCK
    blocks = w.T.reshape(n, n_blocks, BLOCK)
    if with_zero_points:
        lo, hi = np.minimum(blocks.min(axis=2), 0), np.maximum(blocks.max(axis=2), 0)
        scales = (hi - lo) / 15.0
        zp = np.clip(np.round(-lo / scales), 0, 15).astype(np.uint8)
    else:
        scales = np.abs(blocks).max(axis=2) / 7.0
        zp = np.full((n, n_blocks), 8, dtype=np.uint8)
    q = np.clip(np.round(blocks / scales[:, :, None]) + zp[:, :, None], 0, 15).astype(np.uint8)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    zp_padded = np.concatenate([zp, np.zeros((n, n_blocks % 2), np.uint8)], axis=1)
    zp_packed = (zp_padded[:, 0::2] | (zp_padded[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    return packed, scales.astype(np.float32).reshape(-1), zp_packed if with_zero_points else None


def matmul_nbits_model(out):
    k = n = 64
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, n])
    nodes, inits, prev = [], [], "x"
    for layer, with_zp in (("fc1", True), ("fc2", False)):
        w = f"/{layer}/weight"
        packed, scales, zp = pack_nbits(RNG.standard_normal((k, n)).astype(np.float32) * 0.1, with_zp)
        inits += [numpy_helper.from_array(packed, w + "_Q4"), numpy_helper.from_array(scales, w + "_scales")]
        inputs = [prev, w + "_Q4", w + "_scales"]
        if zp is not None:
            inits.append(numpy_helper.from_array(zp, w + "_zero_points"))
            inputs.append(w + "_zero_points")
        out_name = f"/{layer}/MatMul_output_0" if layer == "fc1" else "y"
        nodes.append(helper.make_node("MatMulNBits", inputs, [out_name], name=f"/{layer}/MatMul_Q4",
                                      domain="com.microsoft", K=k, N=n, bits=4, block_size=BLOCK))
        if layer == "fc1":
            nodes.append(helper.make_node("Relu", [out_name], ["r"], name="/act/Relu"))
        prev = "r"
    # ONNX's shape inference does not know com.microsoft: state the first MatMulNBits' output.
    value_info = [helper.make_tensor_value_info("/fc1/MatMul_output_0", TensorProto.FLOAT, [1, 16, n])]
    save(out, "matmul_nbits", nodes, [x], [y], inits, 21, extra_opsets=[("com.microsoft", 1)], value_info=value_info)


def fp16_cast_ops_model(out):
    f16 = np.float16
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 8, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 16])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Gelu", ["c"], ["g"], name="/act/Gelu"),
        helper.make_node("ReduceMean", ["g", "axes"], ["p"], name="/pool/ReduceMean", keepdims=0),
        helper.make_node("MatMul", ["p", "w_fc"], ["f"], name="/fc/MatMul"),
        helper.make_node("LayerNormalization", ["f", "ln_scale", "ln_bias"], ["n"], name="/norm/LayerNormalization",
                         axis=-1, epsilon=1e-5),
        helper.make_node("Softmax", ["n"], ["y"], name="/head/Softmax", axis=-1),
    ]
    inits = [weight("w", 8, 8, 3, 3, dtype=f16), weight("b", 8, dtype=f16), ints("axes", [2, 3]),
             weight("w_fc", 8, 16, scale=1.0, dtype=f16), weight("ln_scale", 16, scale=1.0, dtype=f16),
             weight("ln_bias", 16, dtype=f16)]
    save(out, "fp16_cast_ops", nodes, [x], [y], inits, 21)


# onnxscript's functions (it reads their annotations from the module's globals).
BLOCKS = onnxscript.values.Opset("hetplan.blocks", 1)


@script(BLOCKS)
def ConvAct(X, W, B, alpha: float = 0.1):
    C = op18.Conv(X, W, B, pads=[1, 1, 1, 1])
    return op18.LeakyRelu(C, alpha=alpha)


@script(BLOCKS)
def Stage(X, W1, B1, W2, B2):
    a = ConvAct(X, W1, B1)
    return ConvAct(a, W2, B2, alpha=0.2)


@script(default_opset=op18)
def stage_net(x: FLOAT[1, 4, 16, 16], w1: FLOAT[8, 4, 3, 3], b1: FLOAT[8], w2: FLOAT[8, 8, 3, 3],
              b2: FLOAT[8]) -> FLOAT[1, 8, 16, 16]:
    s = Stage(x, w1, b1, w2, b2)
    return op18.Relu(s)


def onnxscript_functions_model(out):
    """Model-local functions as onnxscript 0.7 writes them (stage_net: nested
    @script functions, an attribute default and one set by the call, nodes
    unnamed), the weights moved from graph inputs to initializers as torch's
    exporter stores parameters."""
    model = stage_net.to_model_proto()
    weights = {"w1": (8, 4, 3, 3), "b1": (8,), "w2": (8, 8, 3, 3), "b2": (8,)}
    inputs = [vi for vi in model.graph.input if vi.name not in weights]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    model.graph.initializer.extend(weight(name, *dims) for name, dims in weights.items())
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "onnxscript_functions.onnx"))


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
    bf16_mlp_model(args.out)
    int4_blockwise_model(args.out)
    matmul_nbits_model(args.out)
    fp16_cast_ops_model(args.out)
    onnxscript_functions_model(args.out)


if __name__ == "__main__":
    main()
