"""Writes a dynamic-uint8 encoder-decoder segmentation model at a given
resolution: a stem, four levels of two 3x3 Conv+Relu with a strided Conv down,
a middle Conv, four levels of nearest Resize up, Concat with the skip and two
Conv+Relu, a 1x1 head to 4 classes (189 ONNX nodes), random weights, then
ONNX Runtime's quantize_dynamic on its Convs (uint8: DynamicQuantizeLinear ->
ConvInteger -> Cast -> Mul -> Add), as segmentation models Python packages
ship. Activations grow with the resolution squared: at 1024x1024 the first
level's are 64 MiB each. Run with third_party/models-venv's Python.

    third_party/models-venv/bin/python bench/make_segmentation.py --size 1024 --out seg1024.onnx
"""
import argparse
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic


def build(size):
    rng = np.random.default_rng(0)
    nodes, inits = [], []

    def conv(x, cin, cout, name, stride=1):
        inits.append(numpy_helper.from_array((rng.standard_normal((cout, cin, 3, 3)) * 0.05).astype(np.float32),
                                             name + "_w"))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.05).astype(np.float32), name + "_b"))
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name + "_c"], pads=[1, 1, 1, 1],
                                      strides=[stride] * 2, name=name + "/Conv"))
        nodes.append(helper.make_node("Relu", [name + "_c"], [name + "_r"], name=name + "/Relu"))
        return name + "_r"

    x, skips, c = conv("image", 3, 16, "/stem"), [], 16
    for level in range(4):
        x = conv(conv(x, c, c, f"/enc{level}a"), c, c, f"/enc{level}b")
        skips.append((x, c))
        x = conv(x, c, c * 2, f"/down{level}", stride=2)
        c *= 2
    x = conv(x, c, c, "/mid")
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    for level in reversed(range(4)):
        nodes.append(helper.make_node("Resize", [x, "", "scales"], [f"up{level}"], mode="nearest",
                                      name=f"/up{level}/Resize"))
        skip, skip_c = skips[level]
        nodes.append(helper.make_node("Concat", [f"up{level}", skip], [f"cat{level}"], axis=1,
                                      name=f"/cat{level}/Concat"))
        x = conv(conv(f"cat{level}", c + skip_c, skip_c, f"/dec{level}a"), skip_c, skip_c, f"/dec{level}b")
        c = skip_c
    inits.append(numpy_helper.from_array((rng.standard_normal((4, c, 1, 1)) * 0.05).astype(np.float32), "head_w"))
    nodes.append(helper.make_node("Conv", [x, "head_w"], ["mask"], name="/head/Conv"))
    graph = helper.make_graph(nodes, "segmentation",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 4, size, size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        float_path = os.path.join(tmp, "float.onnx")
        onnx.save(build(args.size), float_path)
        quantize_dynamic(float_path, args.out, weight_type=QuantType.QUInt8, op_types_to_quantize=["Conv"])


if __name__ == "__main__":
    main()
