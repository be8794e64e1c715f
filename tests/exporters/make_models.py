#!/usr/bin/python3
"""Writes one small ONNX model per pattern that real exporters produce
(issue 24; docs/graph-format.md, "What exporters write"), deterministically,
with Debian's onnx 1.12 (onnx.helper). Nothing binary is committed: the
tests (tests/exporters/exporters_test.cc) run this script into a temporary
folder, and save `ms_fused.onnx` from `ms_fused_source.onnx` with ONNX
Runtime's graph optimizer themselves.

    /usr/bin/python3 tests/exporters/make_models.py --out DIR

Each model, and the options a user gives hetplan for it:
  unused_domains.onnx        tf2onnx/torch-style opset imports (ai.onnx.ml,
                             org.pytorch.aten, com.microsoft, ...) that no
                             node uses.                         (no options)
  paddle_shape_chain.onnx    Paddle2ONNX at opset 9: Shape -> Cast -> Slice
                             (attribute form) -> Cast -> Concat -> Reshape,
                             batch symbolic.          --shape x=1x3x16x16
  vad.onnx                   a voice-activity detector as TorchScript
                             exports it: If(sr == 16000) around the network,
                             nested Ifs on the input's length, LSTMs inside.
                             --shape input=1x512 --value sr=16000
  kws_two_stage.onnx         a keyword spotter whose second stage runs
                             under If(score >= threshold).
                             --branch second_stage=then
  ms_fused_source.onnx       float model whose patterns ONNX Runtime's
                             optimizer fuses into com.microsoft FusedConv,
                             BiasGelu/Gelu, SkipLayerNormalization,
                             FusedMatMul (the test saves ms_fused.onnx).
  ms_contrib.onnx            com.microsoft operators as ONNX Runtime's
                             quantization and transformer tools write them:
                             QLinearAdd, QLinearSigmoid, MatMulNBits,
                             Attention, FastGelu.                (no options)
  symbolic_inputs.onnx       inputs with symbolic dims at ranks 2 and 4,
                             one of them unnamed.
                             --shape audio=1x1600 --shape image=1x3x8x8
  tf2onnx_split_pads.onnx    tf2onnx's Pad whose pads are computed from an
                             initializer: Identity -> Split -> Concat ->
                             Squeeze, all constant.            (no options)
  paddle_minus_one.onnx      Paddle2ONNX's declared -1 (a dim_value, not a
                             name) on the input's and the output's batch and
                             on a value_info.         --shape x=1x3x48x192
  fp16_chain.onnx            a float16 network (as shipped in fp16): each
                             split boundary rounds to float16.  (no options)
  ort_dynamic_quant.onnx     ONNX Runtime's dynamic quantizer on Convs:
                             DynamicQuantizeLinear -> ConvInteger (int32
                             out) -> Cast -> Mul by the scales -> Add bias.
                                                                (no options)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(24)


def w(name, *shape, scale=0.1, dtype=np.float32):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(dtype), name)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(graph, opset, extra_imports=(), ir=8):
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_imports]
    m = helper.make_model(graph, opset_imports=imports, producer_name="hetplan-tests")
    m.ir_version = ir
    onnx.checker.check_model(m)
    return m


def unused_domains():
    # tf2onnx lists ai.onnx.ml; torch.onnx lists a handful more.
    nodes = [
        helper.make_node("Reshape", ["input_1", "to4d"], ["x4"], name="reshape"),
        helper.make_node("Conv", ["x4", "conv_w", "conv_b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fc_w"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fc_b"], ["logits"], name="fc_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    g = helper.make_graph(
        nodes, "kws_tf2onnx", [vi("input_1", TensorProto.FLOAT, [1, 16, 10])], [vi("probs", TensorProto.FLOAT, [1, 12])],
        [const("to4d", [1, 1, 16, 10]), w("conv_w", 8, 1, 3, 3), w("conv_b", 8), w("fc_w", 8 * 8 * 5, 12), w("fc_b", 12)])
    return model(g, 13, [("ai.onnx.ml", 2), ("org.pytorch.aten", 1), ("com.microsoft", 1),
                         ("com.microsoft.experimental", 1), ("ai.onnx.preview.training", 1), ("ai.onnx.training", 1),
                         ("com.ms.internal.nhwc", 1), ("org.pytorch._caffe2", 1), ("ai.onnx.contrib", 1)])


def paddle_shape_chain():
    # Paddle2ONNX's opset-9 flatten: the target shape from the tensor's own shape.
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["conv"], name="conv2d_0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu_0"),
        helper.make_node("Shape", ["relu"], ["shape"], name="shape_0"),
        helper.make_node("Cast", ["shape"], ["shape_f"], name="cast_0", to=TensorProto.FLOAT),
        helper.make_node("Slice", ["shape_f"], ["batch_f"], name="slice_0", starts=[0], ends=[1], axes=[0]),
        helper.make_node("Cast", ["batch_f"], ["batch"], name="cast_1", to=TensorProto.INT64),
        helper.make_node("Concat", ["batch", "minus_one"], ["target"], name="concat_0", axis=0),
        helper.make_node("Reshape", ["relu", "target"], ["flat"], name="reshape_0"),
        helper.make_node("MatMul", ["flat", "fc_w"], ["fc"], name="matmul_0"),
        helper.make_node("Add", ["fc", "fc_b"], ["fc_out"], name="elementwise_add_0"),
        # An Expand to a shape computed the same way (Paddle's expand_as).
        helper.make_node("Shape", ["fc_out"], ["fc_shape"], name="shape_1"),
        helper.make_node("Expand", ["bias2", "fc_shape"], ["bias2_full"], name="expand_0"),
        helper.make_node("Add", ["fc_out", "bias2_full"], ["out"], name="elementwise_add_1"),
    ]
    g = helper.make_graph(
        nodes, "paddle_opset9", [vi("x", TensorProto.FLOAT, ["batch", 3, 16, 16])], [vi("out", TensorProto.FLOAT, ["batch", 10])],
        [w("conv_w", 4, 3, 3, 3), w("conv_b", 4), const("minus_one", [-1]), w("fc_w", 4 * 16 * 16, 10), w("fc_b", 10),
         w("bias2", 1, 10)])
    return model(g, 9, ir=4)


def lstm_block(prefix, frames, stride, hidden, out_name, hn_name, cn_name):
    """Conv1d framing → LSTM → linear → sigmoid, reading the outer `input`, `h`, `c`."""
    p = prefix
    feat = 8
    nodes = [
        helper.make_node("Reshape", ["input", f"{p}_to3d"], [f"{p}_x3"], name=f"{p}/reshape"),
        helper.make_node("Conv", [f"{p}_x3", f"{p}_stft_w"], [f"{p}_spec"], name=f"{p}/stft", strides=[stride]),
        helper.make_node("Relu", [f"{p}_spec"], [f"{p}_mag"], name=f"{p}/relu"),
        helper.make_node("Transpose", [f"{p}_mag"], [f"{p}_seq"], name=f"{p}/transpose", perm=[2, 0, 1]),
        helper.make_node("LSTM", [f"{p}_seq", f"{p}_W", f"{p}_R", f"{p}_B", "", "h", "c"],
                         [f"{p}_Y", out_name + "_h", cn_name], name=f"{p}/lstm", hidden_size=hidden),
        helper.make_node("Identity", [out_name + "_h"], [hn_name], name=f"{p}/hn"),
        helper.make_node("Squeeze", [out_name + "_h", f"{p}_axis0"], [f"{p}_last"], name=f"{p}/squeeze"),
        helper.make_node("MatMul", [f"{p}_last", f"{p}_dec_w"], [f"{p}_logit"], name=f"{p}/decoder"),
        helper.make_node("Sigmoid", [f"{p}_logit"], [out_name], name=f"{p}/sigmoid"),
    ]
    inits = [const(f"{p}_to3d", [1, 1, -1]), w(f"{p}_stft_w", feat, 1, stride * 2), w(f"{p}_W", 1, 4 * hidden, feat),
             w(f"{p}_R", 1, 4 * hidden, hidden), w(f"{p}_B", 1, 8 * hidden), const(f"{p}_axis0", [0]),
             w(f"{p}_dec_w", hidden, 1)]
    return nodes, inits


def vad():
    hidden = 16
    outs = [vi("out", TensorProto.FLOAT, [1, 1]), vi("hn", TensorProto.FLOAT, [1, 1, hidden]),
            vi("cn", TensorProto.FLOAT, [1, 1, hidden])]

    def branch(name, nodes, inits, result):
        return helper.make_graph(nodes + [helper.make_node("Identity", [r], [o.name + "_" + name], name=f"{name}/out{i}")
                                          for i, (r, o) in enumerate(zip(result, outs))],
                                 name, [], [vi(o.name + "_" + name, TensorProto.FLOAT, None) for o in outs], inits)

    # 16 kHz: a chunk of 512 samples goes through the network; another length
    # is refused by a nested If on the chunk's length, as silero-vad does.
    n16, i16 = lstm_block("sr16", 32, 16, hidden, "o16", "h16", "c16")
    # Inside: an If on the sequence length the framing gives (a shape again).
    deep_then = branch("deep_then", [helper.make_node("Identity", ["o16"], ["o16d"], name="deep/pass")], [],
                       ["o16d", "h16", "c16"])
    deep_else = branch("deep_else", [helper.make_node("Mul", ["o16", "zero"], ["o16z"], name="deep/mute")],
                       [numpy_helper.from_array(np.zeros([1], np.float32), "zero")], ["o16z", "h16", "c16"])
    n16 += [
        helper.make_node("Shape", ["sr16_seq"], ["sr16_seq_shape"], name="sr16/seq_shape"),
        helper.make_node("Gather", ["sr16_seq_shape", "idx0"], ["sr16_steps"], name="sr16/steps", axis=0),
        helper.make_node("Greater", ["sr16_steps", "min_steps"], ["sr16_enough"], name="sr16/enough"),
        helper.make_node("If", ["sr16_enough"], ["o16_2", "h16_2", "c16_2"], name="sr16/steps_if",
                         then_branch=deep_then, else_branch=deep_else),
    ]
    i16 += [const("idx0", 0), const("min_steps", 4)]
    len_ok = branch("len512", n16, i16, ["o16_2", "h16_2", "c16_2"])
    len_bad = branch("len_other", [helper.make_node("Mul", ["input", "zero_in"], ["z"], name="len_other/zero"),
                                   helper.make_node("ReduceMean", ["z"], ["zm"], name="len_other/mean", axes=[1]),
                                   helper.make_node("Identity", ["h"], ["h_keep"], name="len_other/h"),
                                   helper.make_node("Identity", ["c"], ["c_keep"], name="len_other/c")],
                     [numpy_helper.from_array(np.zeros([1], np.float32), "zero_in")], ["zm", "h_keep", "c_keep"])
    then16 = branch("sr16k", [
        helper.make_node("Shape", ["input"], ["in_shape"], name="sr16k/shape"),
        helper.make_node("Gather", ["in_shape", "one"], ["samples"], name="sr16k/samples", axis=0),
        helper.make_node("Equal", ["samples", "n512"], ["is512"], name="sr16k/is512"),
        helper.make_node("If", ["is512"], ["o16k", "h16k", "c16k"], name="sr16k/len_if", then_branch=len_ok,
                         else_branch=len_bad)], [const("one", 1), const("n512", 512)], ["o16k", "h16k", "c16k"])
    # 8 kHz: another network on half the samples' rate.
    n8, i8 = lstm_block("sr8", 32, 8, hidden, "o8", "h8", "c8")
    else8 = branch("sr8k", n8, i8, ["o8", "h8", "c8"])
    nodes = [
        helper.make_node("Equal", ["sr", "sr16000"], ["is16k"], name="sr_check"),
        helper.make_node("If", ["is16k"], ["out", "hn", "cn"], name="sr_if", then_branch=then16, else_branch=else8),
    ]
    g = helper.make_graph(
        nodes, "vad", [vi("input", TensorProto.FLOAT, ["batch", "samples"]), vi("sr", TensorProto.INT64, []),
                       vi("h", TensorProto.FLOAT, [1, 1, hidden]), vi("c", TensorProto.FLOAT, [1, 1, hidden])],
        outs, [const("sr16000", 16000)])
    return model(g, 16)


def kws_two_stage():
    then_g = helper.make_graph([
        helper.make_node("Gemm", ["feat", "w2", "b2"], ["s2"], name="stage2/gemm", transB=1),
        helper.make_node("Relu", ["s2"], ["s2r"], name="stage2/relu"),
        helper.make_node("Gemm", ["s2r", "w3", "b3"], ["s3"], name="stage2/classifier"),
        helper.make_node("Softmax", ["s3"], ["kw_then"], name="stage2/softmax", axis=1),
    ], "stage2", [], [vi("kw_then", TensorProto.FLOAT, [1, 12])], [w("w2", 64, 320), w("b2", 64), w("w3", 64, 12), w("b3", 12)])
    else_g = helper.make_graph([helper.make_node("Identity", ["no_keyword"], ["kw_else"], name="stage2/skip")], "skip",
                               [], [vi("kw_else", TensorProto.FLOAT, [1, 12])],
                               [numpy_helper.from_array(np.full([1, 12], 1 / 12, np.float32), "no_keyword")])
    nodes = [
        helper.make_node("Flatten", ["features"], ["feat"], name="flatten"),
        helper.make_node("Gemm", ["feat", "w1", "b1"], ["s1"], name="stage1/gemm"),
        helper.make_node("Sigmoid", ["s1"], ["p1"], name="stage1/sigmoid"),
        helper.make_node("ReduceMax", ["p1"], ["score"], name="stage1/score", keepdims=0),
        helper.make_node("GreaterOrEqual", ["score", "threshold"], ["wake"], name="stage1/wake"),
        helper.make_node("If", ["wake"], ["keyword"], name="second_stage", then_branch=then_g, else_branch=else_g),
    ]
    g = helper.make_graph(nodes, "kws", [vi("features", TensorProto.FLOAT, [1, 32, 10])],
                          [vi("keyword", TensorProto.FLOAT, [1, 12]), vi("score", TensorProto.FLOAT, [])],
                          [w("w1", 320, 1), w("b1", 1), numpy_helper.from_array(np.array(0.5, np.float32), "threshold")])
    return model(g, 13)


def ms_fused_source():
    """Patterns ONNX Runtime's level-2 optimizer rewrites into com.microsoft operators."""
    hid = 32
    nodes = [
        # Conv + Relu → FusedConv.
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["conv_relu"], name="conv_relu"),
        helper.make_node("GlobalAveragePool", ["conv_relu"], ["pooled"], name="pool"),
        helper.make_node("Flatten", ["pooled"], ["img_feat"], name="img_flatten"),
        # MatMul + Add(bias) + erf-GELU → MatMul + BiasGelu.
        helper.make_node("MatMul", ["tokens", "ff1_w"], ["ff1"], name="ff1"),
        helper.make_node("Add", ["ff1", "ff1_b"], ["ff1_b_out"], name="ff1_bias"),
        helper.make_node("Div", ["ff1_b_out", "sqrt2"], ["g_div"], name="gelu_div"),
        helper.make_node("Erf", ["g_div"], ["g_erf"], name="gelu_erf"),
        helper.make_node("Add", ["g_erf", "one"], ["g_add"], name="gelu_add"),
        helper.make_node("Mul", ["ff1_b_out", "g_add"], ["g_mul"], name="gelu_mul"),
        helper.make_node("Mul", ["g_mul", "half"], ["gelu"], name="gelu_half"),
        helper.make_node("MatMul", ["gelu", "ff2_w"], ["ff2"], name="ff2"),
        helper.make_node("Add", ["ff2", "ff2_b"], ["ff2_b_out"], name="ff2_bias"),
        # Residual Add + LayerNorm (decomposed) → SkipLayerNormalization.
        helper.make_node("Add", ["ff2_b_out", "tokens"], ["resid"], name="residual"),
        helper.make_node("ReduceMean", ["resid"], ["mean"], name="ln_mean", axes=[-1]),
        helper.make_node("Sub", ["resid", "mean"], ["centered"], name="ln_sub"),
        helper.make_node("Pow", ["centered", "two"], ["sq"], name="ln_pow"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="ln_var", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["var_eps"], name="ln_eps"),
        helper.make_node("Sqrt", ["var_eps"], ["std"], name="ln_sqrt"),
        helper.make_node("Div", ["centered", "std"], ["normed"], name="ln_div"),
        helper.make_node("Mul", ["normed", "gamma"], ["scaled"], name="ln_gamma"),
        helper.make_node("Add", ["scaled", "beta"], ["ln_out"], name="ln_beta"),
        # Self-similarity with a transposed operand → FusedMatMul.
        helper.make_node("Transpose", ["ln_out"], ["ln_t"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["ln_out", "ln_t"], ["sim"], name="similarity"),
        helper.make_node("Softmax", ["sim"], ["attn"], name="attn_softmax", axis=-1),
        helper.make_node("MatMul", ["attn", "ln_out"], ["ctx"], name="attn_ctx"),
    ]
    g = helper.make_graph(
        nodes, "ms_fused_source",
        [vi("image", TensorProto.FLOAT, [1, 3, 8, 8]), vi("tokens", TensorProto.FLOAT, [1, 8, hid])],
        [vi("img_feat", TensorProto.FLOAT, [1, 4]), vi("ctx", TensorProto.FLOAT, [1, 8, hid])],
        [w("conv_w", 4, 3, 3, 3), w("conv_b", 4), w("ff1_w", hid, 4 * hid), w("ff1_b", 4 * hid),
         w("ff2_w", 4 * hid, hid), w("ff2_b", hid),
         numpy_helper.from_array(np.array(1.4142135381698608, np.float32), "sqrt2"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one"), numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(2.0, np.float32), "two"), numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
         numpy_helper.from_array(np.ones([hid], np.float32), "gamma"), numpy_helper.from_array(np.zeros([hid], np.float32), "beta")])
    return model(g, 13)


def ms_contrib():
    """com.microsoft operators as ONNX Runtime's quantization and transformer tools write them."""
    hid, k, n, block = 32, 64, 32, 32
    ms = "com.microsoft"
    # MatMulNBits: B holds 4-bit weights, two per byte, in blocks of `block` along K.
    packed = RNG.integers(0, 256, size=(n, k // block, block // 2), dtype=np.uint8)
    scales = (RNG.random(n * (k // block)) * 0.02 + 0.01).astype(np.float32)
    nodes = [
        helper.make_node("Attention", ["x", "attn_w", "attn_b"], ["attn"], name="attention", domain=ms, num_heads=4),
        helper.make_node("FastGelu", ["attn", "fg_b"], ["fg"], name="fast_gelu", domain=ms),
        helper.make_node("MatMul", ["fg", "up_w"], ["up"], name="up"),
        helper.make_node("MatMulNBits", ["up", "nb_w", "nb_s"], ["down"], name="matmul_4bit", domain=ms, K=k, N=n,
                         bits=4, block_size=block),
        helper.make_node("QuantizeLinear", ["down", "q_s", "q_z"], ["down_q"], name="quant"),
        helper.make_node("QuantizeLinear", ["x", "q_s", "q_z"], ["x_q"], name="quant_x"),
        helper.make_node("QLinearAdd", ["down_q", "q_s", "q_z", "x_q", "q_s", "q_z", "q_s", "q_z"], ["sum_q"],
                         name="qlinear_add", domain=ms),
        helper.make_node("QLinearSigmoid", ["sum_q", "q_s", "q_z", "sig_s", "sig_z"], ["sig_q"], name="qlinear_sigmoid",
                         domain=ms),
        helper.make_node("DequantizeLinear", ["sig_q", "sig_s", "sig_z"], ["y"], name="dequant"),
    ]
    g = helper.make_graph(
        nodes, "ms_contrib", [vi("x", TensorProto.FLOAT, [1, 8, hid])], [vi("y", TensorProto.FLOAT, [1, 8, hid])],
        [w("attn_w", hid, 3 * hid), w("attn_b", 3 * hid), w("fg_b", hid), w("up_w", hid, k),
         numpy_helper.from_array(packed, "nb_w"), numpy_helper.from_array(scales, "nb_s"),
         numpy_helper.from_array(np.array(0.02, np.float32), "q_s"), numpy_helper.from_array(np.array(128, np.uint8), "q_z"),
         numpy_helper.from_array(np.array(1 / 256, np.float32), "sig_s"), numpy_helper.from_array(np.array(0, np.uint8), "sig_z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)],
                          producer_name="hetplan-tests")
    m.ir_version = 8
    return m  # the checker does not know com.microsoft


def symbolic_inputs():
    nodes = [
        helper.make_node("MatMul", ["audio", "a_w"], ["a"], name="audio_proj"),
        helper.make_node("Conv", ["image", "c_w"], ["c"], name="image_conv", pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c"], ["cp"], name="image_pool"),
        helper.make_node("Flatten", ["cp"], ["cf"], name="image_flatten"),
        helper.make_node("Concat", ["a", "cf"], ["both"], name="concat", axis=1),
        helper.make_node("Gemm", ["both", "h_w"], ["y"], name="head"),
    ]
    image = vi("image", TensorProto.FLOAT, ["N", 3, "H", 8])
    image.type.tensor_type.shape.dim[2].Clear()  # an unnamed dim: neither value nor name
    g = helper.make_graph(nodes, "symbolic", [vi("audio", TensorProto.FLOAT, ["batch", 1600]), image],
                          [vi("y", TensorProto.FLOAT, ["N", 2])],
                          [w("a_w", 1600, 8), w("c_w", 4, 3, 3, 3), w("h_w", 12, 2)])
    return model(g, 13)


def tf2onnx_split_pads():
    # NCHW paddings [[0, 0], [0, 0], [1, 2], [2, 1]] as tf2onnx carries them.
    nodes = [
        helper.make_node("Identity", ["paddings"], ["paddings_id"], name="paddings_identity"),
        helper.make_node("Split", ["paddings_id", "split_sizes"], ["begins2d", "ends2d"], name="pads_split", axis=1),
        helper.make_node("Concat", ["begins2d", "ends2d"], ["pads2d"], name="pads_concat", axis=0),
        helper.make_node("Squeeze", ["pads2d", "squeeze_axes"], ["pads"], name="pads_squeeze"),
        helper.make_node("Pad", ["x", "pads"], ["xp"], name="model/Pad", mode="constant"),
        helper.make_node("Conv", ["xp", "c1_w", "c1_b"], ["c1"], name="model/conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="model/relu1"),
        helper.make_node("Conv", ["r1", "c2_w"], ["c2"], name="model/conv2", pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["y"], name="model/pool"),
    ]
    g = helper.make_graph(
        nodes, "tf2onnx_pad", [vi("x", TensorProto.FLOAT, [1, 3, 16, 16])], [vi("y", TensorProto.FLOAT, [1, 8, 1, 1])],
        [const("paddings", [[0, 0], [0, 0], [1, 2], [2, 1]]), const("split_sizes", [1, 1]),
         const("squeeze_axes", [1]), w("c1_w", 8, 3, 3, 3), w("c1_b", 8), w("c2_w", 8, 8, 3, 3)])
    return model(g, 13)


def paddle_minus_one():
    nodes = [
        helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], name="conv2d_0", strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu_0"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool2d_0"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten_0"),
        helper.make_node("MatMul", ["f", "fc_w"], ["logits"], name="linear_0"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax_0", axis=1),
    ]
    g = helper.make_graph(nodes, "paddle_cls", [vi("x", TensorProto.FLOAT, [-1, 3, 48, 192])],
                          [vi("y", TensorProto.FLOAT, [-1, 2])], [w("c_w", 8, 3, 3, 3), w("c_b", 8), w("fc_w", 8, 2)],
                          value_info=[vi("r", TensorProto.FLOAT, [-1, 8, 24, 96])])
    return model(g, 11)


def fp16_chain():
    h = np.float16
    nodes = [
        helper.make_node("Conv", ["x", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "c2_w", "c2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"], name="sigmoid2"),
        helper.make_node("Mul", ["c2", "s2"], ["m2"], name="silu2"),
        helper.make_node("Conv", ["m2", "c3_w", "c3_b"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "r1"], ["a3"], name="residual"),
        helper.make_node("Conv", ["a3", "c4_w", "c4_b"], ["y"], name="conv4"),
    ]
    g = helper.make_graph(
        nodes, "fp16_chain", [vi("x", TensorProto.FLOAT16, [1, 16, 32, 32])], [vi("y", TensorProto.FLOAT16, [1, 4, 32, 32])],
        # Weights scaled by 1/sqrt(fan-in), as trained networks' normalisation keeps activations near 1.
        [w("c1_w", 32, 16, 3, 3, scale=0.08, dtype=h), w("c1_b", 32, dtype=h),
         w("c2_w", 32, 32, 3, 3, scale=0.06, dtype=h), w("c2_b", 32, dtype=h),
         w("c3_w", 32, 32, 3, 3, scale=0.06, dtype=h), w("c3_b", 32, dtype=h),
         w("c4_w", 4, 32, 1, 1, scale=0.18, dtype=h), w("c4_b", 4, dtype=h)])
    return model(g, 13)


def ort_dynamic_quant():
    nodes, last = [], "x"
    for i, (cin, cout) in enumerate([(16, 32), (32, 32)]):
        p = f"conv{i}"
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [last], [f"{p}_xq", f"{p}_xs", f"{p}_xz"], name=f"{p}_quant"),
            helper.make_node("ConvInteger", [f"{p}_xq", f"{p}_w", f"{p}_xz", f"{p}_wz"], [f"{p}_i32"],
                             name=f"{p}_quant_ConvInteger", pads=[1, 1, 1, 1]),
            helper.make_node("Cast", [f"{p}_i32"], [f"{p}_f"], name=f"{p}_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{p}_xs", f"{p}_ws"], [f"{p}_scale"], name=f"{p}_scale_mul"),
            helper.make_node("Mul", [f"{p}_f", f"{p}_scale"], [f"{p}_deq"], name=f"{p}_output_mul"),
            helper.make_node("Add", [f"{p}_deq", f"{p}_b"], [f"{p}_y"], name=f"{p}_bias_add"),
            helper.make_node("Relu", [f"{p}_y"], [f"{p}_r"], name=f"{p}_relu"),
        ]
        last = f"{p}_r"
    inits = []
    for i, (cin, cout) in enumerate([(16, 32), (32, 32)]):
        p = f"conv{i}"
        inits += [numpy_helper.from_array(RNG.integers(0, 256, (cout, cin, 3, 3)).astype(np.uint8), f"{p}_w"),
                  numpy_helper.from_array(np.array(128, dtype=np.uint8), f"{p}_wz"),
                  numpy_helper.from_array(np.array(0.002, dtype=np.float32), f"{p}_ws"), w(f"{p}_b", cout, 1, 1)]
    g = helper.make_graph(nodes, "dynamic_quant", [vi("x", TensorProto.FLOAT, [1, 16, 32, 32])],
                          [vi(last, TensorProto.FLOAT, [1, 32, 32, 32])], inits)
    return model(g, 11)


MODELS = {
    "unused_domains.onnx": unused_domains,
    "paddle_shape_chain.onnx": paddle_shape_chain,
    "vad.onnx": vad,
    "kws_two_stage.onnx": kws_two_stage,
    "ms_fused_source.onnx": ms_fused_source,
    "ms_contrib.onnx": ms_contrib,
    "symbolic_inputs.onnx": symbolic_inputs,
    "tf2onnx_split_pads.onnx": tf2onnx_split_pads,
    "paddle_minus_one.onnx": paddle_minus_one,
    "fp16_chain.onnx": fp16_chain,
    "ort_dynamic_quant.onnx": ort_dynamic_quant,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, make in MODELS.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(make().SerializeToString())


if __name__ == "__main__":
    main()
