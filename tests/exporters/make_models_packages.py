"""Writes the patterns of the ONNX files that Python packages ship in their
wheels in 2026 (issue 58; docs/graph-format.md, "What exporters write"),
deterministically, with ONNX 1.22 and ONNX Runtime 1.29's own quantization
tool (onnxruntime.quantization) from PyPI. Run with the virtual environment
scripts/setup.sh creates; nothing binary is committed:
tests/exporters/exporters_test.cc runs this script into a temporary folder.

    third_party/models-venv/bin/python tests/exporters/make_models_packages.py --out DIR

Each model:
  qdq_bias.onnx        a Conv and a Gemm with biases through quantize_static
                       (QDQ, per tensor, MinMax over four calibration inputs),
                       with axis=1 on the rank-1 biases' per-tensor
                       DequantizeLinear, as the quantized models packages
                       ship carry it (ONNX and ONNX Runtime ignore the axis
                       of a per-tensor scale).
  lstm_dynamic.onnx    a voice-filter style LSTM (a MatMul, an LSTM over 12
                       steps, a projection) through quantize_dynamic (int8
                       weights): com.microsoft DynamicQuantizeLSTM with int8
                       W [1, 24, 128] and R [1, 32, 128], and
                       DynamicQuantizeLinear -> MatMulInteger for the MatMuls.
  fp16_inside.onnx     float32 input and output, float16 layers between Casts,
                       as a PyTorch model exported after .half() with casts at
                       its edges: Cast -> Conv -> Relu -> Conv -> Relu -> Conv ->
                       Cast, float16 weights. ONNX Runtime's whole-model run
                       removes the Cast pairs it inserts around its float32
                       kernels, so it computes in float32 throughout; a split
                       rounds to float16 at every boundary.
  tts_durations.onnx (+ tts_tokens.npy)  a text-to-speech length regulator:
                       token embeddings, an encoder, a duration predictor
                       (MatMul -> Abs -> Mul -> Ceil -> Cast), then each
                       token repeated by its duration (CumSum, ReduceSum,
                       Range, GreaterOrEqual, ReduceSum, Gather) and two Conv1d
                       over the frames: the frame count depends on the
                       tokens' values. tts_tokens.npy holds six token ids
                       (int64 [1, 6]) that give 8 frames (six zeros give 6).
  kv_decoder_4l.onnx   a four-layer decoder with a KV cache per layer
                       (past_key_values.N.key/value in, present.N.key/value
                       out: 8 cache inputs), shapes symbolic: planned with
                       --shape 'past_key_values.*.key=1x2x8x16'.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

RNG = np.random.default_rng(58)


def weight(name, *dims, scale=0.1, dtype=np.float32):
    return numpy_helper.from_array((RNG.standard_normal(dims) * scale).astype(dtype), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(path, name, nodes, inputs, outputs, inits, opset):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="hetplan-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


class Calibration(CalibrationDataReader):
    def __init__(self, name, shape, count=4):
        self.batches = [{name: RNG.standard_normal(shape).astype(np.float32)} for _ in range(count)]

    def get_next(self):
        return self.batches.pop() if self.batches else None


def qdq_bias_model(out):
    float_path = os.path.join(out, "qdq_bias_float.onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/conv1/Conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"], name="/relu1/Relu"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="/conv2/Conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="/relu2/Relu"),
        helper.make_node("Flatten", ["r2"], ["f"], name="/flatten/Flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], name="/fc/Gemm", transB=1),
    ]
    inits = [weight("w1", 16, 3, 3, 3), weight("b1", 16), weight("w2", 16, 16, 3, 3), weight("b2", 16),
             weight("w3", 10, 256), weight("b3", 10)]
    save(float_path, "qdq_bias", nodes, [x], [y], inits, 17)
    path = os.path.join(out, "qdq_bias.onnx")
    quantize_static(float_path, path, Calibration("x", (1, 3, 16, 16)), quant_format=QuantFormat.QDQ,
                    per_channel=False)
    model = onnx.load(path)
    one_value = {i.name for i in model.graph.initializer if int(np.prod(i.dims)) == 1}
    marked = 0
    for n in model.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in ("b1", "b2", "b3") and n.input[1] in one_value:
            n.attribute.append(helper.make_attribute("axis", 1))
            marked += 1
    assert marked == 3, f"expected three per-tensor bias DequantizeLinear nodes, found {marked}"
    onnx.save(model, path)
    os.remove(float_path)


def lstm_dynamic_model(out):
    float_path = os.path.join(out, "lstm_dynamic_float.onnx")
    steps, features, inner, hidden = 12, 40, 24, 32
    x = helper.make_tensor_value_info("spectrogram", TensorProto.FLOAT, [steps, 1, features])
    y = helper.make_tensor_value_info("mask", TensorProto.FLOAT, [steps, 1, features])
    nodes = [
        helper.make_node("MatMul", ["spectrogram", "w_in"], ["e"], name="/encoder/MatMul"),
        helper.make_node("Relu", ["e"], ["er"], name="/encoder/Relu"),
        helper.make_node("LSTM", ["er", "W", "R", "B"], ["Y", "Y_h", "Y_c"], name="/lstm/LSTM", hidden_size=hidden),
        helper.make_node("Squeeze", ["Y", "one"], ["Ys"], name="/lstm/Squeeze"),
        helper.make_node("MatMul", ["Ys", "w_out"], ["p"], name="/proj/MatMul"),
        helper.make_node("Sigmoid", ["p"], ["mask"], name="/proj/Sigmoid"),
    ]
    inits = [weight("w_in", features, inner), weight("W", 1, 4 * hidden, inner), weight("R", 1, 4 * hidden, hidden),
             weight("B", 1, 8 * hidden), weight("w_out", hidden, features), ints("one", [1])]
    save(float_path, "lstm_dynamic", nodes, [x], [y], inits, 17)
    path = os.path.join(out, "lstm_dynamic.onnx")
    quantize_dynamic(float_path, path, weight_type=QuantType.QInt8)
    types = [n.op_type for n in onnx.load(path).graph.node]
    assert "DynamicQuantizeLSTM" in types and "MatMulInteger" in types, types
    os.remove(float_path)


def fp16_inside_model(out):
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 8, 32, 32])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 4, 32, 32])
    nodes = [helper.make_node("Cast", ["image"], ["x16"], name="/Cast", to=TensorProto.FLOAT16)]
    previous = "x16"
    for k, (cin, cout) in enumerate([(8, 16), (16, 16), (16, 4)]):
        nodes.append(helper.make_node("Conv", [previous, f"w{k}", f"b{k}"], [f"c{k}"], name=f"/conv{k}/Conv",
                                      pads=[1, 1, 1, 1]))
        previous = f"c{k}"
        if k < 2:
            nodes.append(helper.make_node("Relu", [previous], [f"r{k}"], name=f"/relu{k}/Relu"))
            previous = f"r{k}"
    nodes.append(helper.make_node("Cast", [previous], ["logits"], name="/Cast_1", to=TensorProto.FLOAT))
    inits = []
    for k, (cin, cout) in enumerate([(8, 16), (16, 16), (16, 4)]):
        inits += [weight(f"w{k}", cout, cin, 3, 3, scale=0.3, dtype=np.float16), weight(f"b{k}", cout, dtype=np.float16)]
    save(os.path.join(out, "fp16_inside.onnx"), "fp16_inside", nodes, [x], [y], inits, 17)


def kv_decoder_layers_model(out, layers=4):
    heads, head, hidden = 2, 16, 32
    x = helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["batch", "seq", hidden])
    inputs, outputs, nodes, inits = [x], [], [], []
    inits += [ints("heads_shape", [0, -1, heads, head]), ints("hidden_shape", [0, -1, hidden]),
              numpy_helper.from_array(np.array(1 / np.sqrt(head), dtype=np.float32), "scale")]
    h = "hidden_states"
    for n in range(layers):
        inputs += [helper.make_tensor_value_info(f"past_key_values.{n}.{kv}", TensorProto.FLOAT,
                                                 ["batch", heads, "past", head]) for kv in ("key", "value")]
        outputs += [helper.make_tensor_value_info(f"present.{n}.{kv}", TensorProto.FLOAT,
                                                  ["batch", heads, "total", head]) for kv in ("key", "value")]
        p = f"/layers.{n}"
        for m in ("q", "k", "v"):
            nodes += [helper.make_node("MatMul", [h, f"w{m}{n}"], [f"{m}{n}"], name=f"{p}/{m}_proj/MatMul"),
                      helper.make_node("Reshape", [f"{m}{n}", "heads_shape"], [f"{m}4_{n}"], name=f"{p}/{m}/Reshape"),
                      helper.make_node("Transpose", [f"{m}4_{n}"], [f"{m}t{n}"], name=f"{p}/{m}/Transpose",
                                       perm=[0, 2, 1, 3])]
        nodes += [
            helper.make_node("Concat", [f"past_key_values.{n}.key", f"kt{n}"], [f"present.{n}.key"],
                             name=f"{p}/k/Concat", axis=2),
            helper.make_node("Concat", [f"past_key_values.{n}.value", f"vt{n}"], [f"present.{n}.value"],
                             name=f"{p}/v/Concat", axis=2),
            helper.make_node("Transpose", [f"present.{n}.key"], [f"kT{n}"], name=f"{p}/k/Transpose_1",
                             perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", [f"qt{n}", f"kT{n}"], [f"s{n}"], name=f"{p}/attn/MatMul"),
            helper.make_node("Mul", [f"s{n}", "scale"], [f"ss{n}"], name=f"{p}/attn/Mul"),
            helper.make_node("Softmax", [f"ss{n}"], [f"pr{n}"], name=f"{p}/attn/Softmax", axis=-1),
            helper.make_node("MatMul", [f"pr{n}", f"present.{n}.value"], [f"c{n}"], name=f"{p}/attn/MatMul_1"),
            helper.make_node("Transpose", [f"c{n}"], [f"ct{n}"], name=f"{p}/ctx/Transpose", perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [f"ct{n}", "hidden_shape"], [f"c3{n}"], name=f"{p}/ctx/Reshape"),
            helper.make_node("MatMul", [f"c3{n}", f"wo{n}"], [f"o{n}"], name=f"{p}/o_proj/MatMul"),
            helper.make_node("Add", [h, f"o{n}"], [f"h{n}"], name=f"{p}/residual/Add"),
        ]
        inits += [weight(f"w{m}{n}", hidden, hidden) for m in ("q", "k", "v", "o")]
        h = f"h{n}"
    nodes.append(helper.make_node("Identity", [h], ["out"], name="/out/Identity"))
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", hidden])
    save(os.path.join(out, "kv_decoder_4l.onnx"), "kv_decoder_4l", nodes, inputs, [y] + outputs, inits, 18)


def tts_durations_model(out):
    channels, vocabulary = 16, 32
    floats = [weight("emb", vocabulary, channels, scale=0.3), weight("w_enc", channels, channels, scale=0.3),
              weight("w_dur", channels, 1, scale=0.3), weight("w_c1", channels, channels, 3, scale=0.3),
              weight("b_c1", channels, scale=0.3), weight("w_c2", 8, channels, 3, scale=0.3), weight("b_c2", 8, scale=0.3),
              numpy_helper.from_array(np.array(8.0, np.float32), "gain")]
    nodes = [
        helper.make_node("Gather", ["emb", "tokens"], ["e"], name="/embed/Gather"),
        helper.make_node("MatMul", ["e", "w_enc"], ["enc"], name="/encoder/MatMul"),
        helper.make_node("Relu", ["enc"], ["encr"], name="/encoder/Relu"),
        helper.make_node("MatMul", ["encr", "w_dur"], ["d0"], name="/duration/MatMul"),
        helper.make_node("Abs", ["d0"], ["da"], name="/duration/Abs"),
        helper.make_node("Mul", ["da", "gain"], ["d1"], name="/duration/Mul"),
        helper.make_node("Ceil", ["d1"], ["d2"], name="/duration/Ceil"),
        helper.make_node("Cast", ["d2"], ["d3"], to=TensorProto.INT64, name="/duration/Cast"),
        helper.make_node("Squeeze", ["d3", "axes02"], ["dur"], name="/duration/Squeeze"),
        helper.make_node("CumSum", ["dur", "zero"], ["ends"], name="/regulate/CumSum"),
        helper.make_node("ReduceSum", ["dur", "axis0"], ["total"], keepdims=1, name="/regulate/ReduceSum"),
        helper.make_node("Squeeze", ["total"], ["total_s"], name="/regulate/Squeeze"),
        helper.make_node("Range", ["zero", "total_s", "one"], ["frames"], name="/regulate/Range"),
        helper.make_node("Unsqueeze", ["frames", "axis1"], ["fcol"], name="/regulate/Unsqueeze"),
        helper.make_node("GreaterOrEqual", ["fcol", "ends"], ["ge"], name="/regulate/GreaterOrEqual"),
        helper.make_node("Cast", ["ge"], ["gei"], to=TensorProto.INT64, name="/regulate/Cast"),
        helper.make_node("ReduceSum", ["gei", "axis1"], ["idx"], keepdims=0, name="/regulate/ReduceSum_1"),
        helper.make_node("Gather", ["encr", "idx"], ["x"], axis=1, name="/regulate/Gather"),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1], name="/decoder/Transpose"),
        helper.make_node("Conv", ["xt", "w_c1", "b_c1"], ["c1"], pads=[1, 1], name="/decoder/Conv"),
        helper.make_node("Relu", ["c1"], ["r1"], name="/decoder/Relu"),
        helper.make_node("Conv", ["r1", "w_c2", "b_c2"], ["mel"], pads=[1, 1], name="/decoder/Conv_1"),
    ]
    inits = floats + [ints("axes02", [0, 2]), numpy_helper.from_array(np.array(0, np.int64), "zero"),
                      numpy_helper.from_array(np.array(1, np.int64), "one"), ints("axis0", [0]), ints("axis1", [1])]
    x = helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, "tokens"])
    y = helper.make_tensor_value_info("mel", TensorProto.FLOAT, [1, 8, "frames"])
    save(os.path.join(out, "tts_durations.onnx"), "tts_durations", nodes, [x], [y], inits, 17)
    np.save(os.path.join(out, "tts_tokens.npy"), np.array([[3, 7, 1, 12, 5, 9]], np.int64))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    qdq_bias_model(args.out)
    lstm_dynamic_model(args.out)
    fp16_inside_model(args.out)
    kv_decoder_layers_model(args.out)
    tts_durations_model(args.out)


if __name__ == "__main__":
    main()
