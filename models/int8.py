"""INT8 variants of hetplan's model zoo (post-training static quantization).

The CIM paper runs every model quantized to 8-bit integers; these are the
zoo's INT8 models, all calibrated on seeded random inputs (uniform in
[-1, 1], the inputs hetplan profiles and runs with). Two routes:

* torch (resnet18_int8, resnet50_int8, mobilenetv2_int8): torchvision's
  quantizable models through PyTorch's eager-mode flow, as a user would run
  it: fuse_model (Conv+BN+ReLU) → prepare → calibrate → convert, then
  torch.onnx.export at opset 13, which writes QuantizeLinear/DequantizeLinear
  around every quantized kernel (QDQ form), with a uint8→uint8 Cast before
  each DequantizeLinear.
* ONNX (vit_b_16_int8, yolov5n_int8, resnet18_int8_qop): torch 1.13 cannot
  export a quantized attention or SiLU, so `quantize_onnx` quantizes the FP32
  zoo model over its ONNX graph the way ONNX Runtime's quantize_static does
  (QDQ form): activations uint8 per tensor (asymmetric), weights int8 per
  output channel (symmetric), biases int32 at scale x_scale·w_scale. The
  activation ranges come from running the FP32 model with ONNX Runtime
  (`hetplan_calibrate`, models/calibrate.cc). With `qoperator=True` every
  quantized Conv is written as one QLinearConv instead (QOperator form).

Which operators stay float (docs/models.md): in the ONNX route, every
operator not in QUANTIZED_OPS and not a two-activation Add/Mul — LayerNorm's
decomposition (ReduceMean, Sub, Pow, Sqrt, Div and its Mul/Add with γ, β),
the bias Add after MatMul, GELU's Div/Erf/Add/Mul chain, the attention's
Div by √d, and YOLOv5n's Detect decode after its three 1×1 convolutions; in
the torch route, nothing between QuantStub and DeQuantStub (torch fuses each
ReLU into its Conv or Add kernel).
"""

import collections
import contextlib
import json
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CALIBRATION_RUNS = 8
CALIBRATION_SEED = 1

# name -> (route, FP32 zoo model it derives from)
INT8_ZOO = {
    "resnet18_int8": ("torch", "resnet18"),
    "resnet50_int8": ("torch", "resnet50"),
    "mobilenetv2_int8": ("torch", "mobilenetv2"),
    "vit_b_16_int8": ("onnx", "vit_b_16"),
    "yolov5n_int8": ("onnx", "yolov5n"),
    "resnet18_int8_qop": ("onnx-qop", "resnet18"),
}
INT8_MODELS = list(INT8_ZOO)

# Operators whose inputs and outputs the ONNX route quantizes. Weight
# operators get int8 weights; the data-movement ones keep their input's
# quantization parameters (ONNX Runtime then drops their Q/DQ and runs the
# integer kernel).
WEIGHT_OPS = {"Conv", "Gemm", "MatMul"}
OWN_RANGE_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "Sigmoid", "Softmax", "Relu", "Clip",
                 "GlobalAveragePool", "AveragePool"}
SAME_RANGE_OPS = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather", "MaxPool",
                  "Resize", "Split"}
QUANTIZED_OPS = OWN_RANGE_OPS | SAME_RANGE_OPS
# The data input(s) of each quantized operator; the others (shapes, indices,
# scales, Clip bounds) stay as they are.
DATA_INPUTS = {"Add": (0, 1), "Mul": (0, 1), "MatMul": (0, 1), "Concat": None}


# --------------------------------------------------------------------------
# torch route
# --------------------------------------------------------------------------

def export_torch_int8(name, base, out_path, randomize, opset):
    """torchvision's quantizable `base`, calibrated, converted, exported (QDQ)."""
    import torch
    from torch.ao.quantization import MinMaxObserver, PerChannelMinMaxObserver, QConfig
    from torchvision.models import quantization as tq

    engines = torch.backends.quantized.supported_engines
    for engine in ("x86", "fbgemm", "qnnpack", "onednn"):
        if engine in engines:
            torch.backends.quantized.engine = engine
            break
    torch.manual_seed(0)
    model = {"resnet18": tq.resnet18, "resnet50": tq.resnet50, "mobilenetv2": tq.mobilenet_v2}[base](
        weights=None, quantize=False)
    randomize(model)
    model.eval()
    model.fuse_model()
    model.qconfig = QConfig(
        activation=MinMaxObserver.with_args(dtype=torch.quint8),
        weight=PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric))
    torch.ao.quantization.prepare(model, inplace=True)
    gen = torch.Generator().manual_seed(CALIBRATION_SEED)
    with torch.no_grad():
        for _ in range(CALIBRATION_RUNS):
            model(torch.rand(1, 3, 224, 224, generator=gen) * 2 - 1)
    with warnings.catch_warnings():
        # A FloatFunctional that a block never calls (MobileNetV2's skip_add
        # where there is no residual) has an observer that saw nothing.
        warnings.filterwarnings("ignore", message="must run observer before calling calculate_qparams")
        torch.ao.quantization.convert(model, inplace=True)
    x = torch.rand(1, 3, 224, 224, generator=gen) * 2 - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # torch.onnx.export traces a quantized model itself, with check_trace,
        # which runs it three more times (a third of the export's time); the
        # trace is the same without the check.
        traced = torch.jit.trace(model, (x,), check_trace=False)
        torch.onnx.export(traced, (x,), out_path, export_params=True, opset_version=opset,
                          do_constant_folding=True, input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.EVAL)


# --------------------------------------------------------------------------
# ONNX route
# --------------------------------------------------------------------------

def run_calibrator(calibrator, model_path, out_json, runs):
    """Runs hetplan_calibrate; returns {tensor: (min, max)}."""
    done = subprocess.run([calibrator, model_path, out_json, "--runs", str(runs), "--seed", str(CALIBRATION_SEED)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{calibrator} {model_path} failed: {done.stderr.strip()}")
    with open(out_json) as f:
        return {k: tuple(v) for k, v in json.load(f)["ranges"].items()}


def activation_params(lo, hi):
    """uint8 asymmetric parameters covering [lo, hi] and 0 (ONNX Runtime's formula)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0
    if scale <= 0 or not np.isfinite(scale):
        scale = 1.0  # a tensor that is always 0: any positive scale represents it
    zero_point = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero_point)


def weight_params(w, axis):
    """int8 symmetric parameters per slice along `axis`."""
    reduce = tuple(d for d in range(w.ndim) if d != axis)
    amax = np.abs(w).max(axis=reduce)
    scale = (amax / 127.0).astype(np.float32)
    scale[scale <= 0] = 1.0  # an all-zero channel
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def downstream_of(graph, starts):
    """Nodes that read, directly or not, an output of a node named in `starts` (those excluded)."""
    tainted = set()
    names = set()
    for n in graph.node:
        if n.name in starts:
            tainted.update(n.output)
            continue
        if any(i in tainted for i in n.input):
            tainted.update(n.output)
            names.add(n.name)
    return names


def gelu_muls(graph):
    """The Mul(x, 1 + erf(x/√2)) of every erf-GELU: it stays float with the rest of the GELU."""
    producer = {o: n for n in graph.node for o in n.output}
    out = set()
    for n in graph.node:
        if n.op_type != "Mul":
            continue
        for i in n.input:
            p = producer.get(i)
            if p is not None and p.op_type == "Add" and any(
                    producer.get(j) is not None and producer[j].op_type == "Erf" for j in p.input):
                out.add(n.name)
    return out


def quantize_onnx(src_path, dst_path, calibrator, float_nodes=(), qoperator=False):
    """Quantizes the FP32 ONNX model at `src_path` into `dst_path` (see the module doc)."""
    model = onnx.load(src_path)
    graph = model.graph
    inferred = onnx.shape_inference.infer_shapes(model)
    elem = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        elem[vi.name] = vi.type.tensor_type.elem_type
    inits = {t.name: t for t in graph.initializer}
    const = set(inits)
    for n in graph.node:
        if n.op_type == "Constant" or (n.input and all(i in const for i in n.input if i)):
            const.update(n.output)
    graph_outputs = {o.name for o in graph.output}
    float_nodes = set(float_nodes) | gelu_muls(graph)

    def is_act(t):
        return bool(t) and t not in const and elem.get(t) == TensorProto.FLOAT

    def data_inputs(n):
        idx = DATA_INPUTS.get(n.op_type, (0,))
        return list(n.input) if idx is None else [n.input[i] for i in idx if i < len(n.input)]

    quantized = []  # nodes whose float inputs and outputs get Q/DQ
    for n in graph.node:
        if n.name in float_nodes or n.op_type not in QUANTIZED_OPS:
            continue
        ins = data_inputs(n)
        # A MatMul's B may be its weight; a Concat may join a constant.
        allowed_const = {i for k, i in enumerate(ins) if (n.op_type == "MatMul" and k == 1 and i in inits)
                         or (n.op_type == "Concat" and i in const)}
        if not ins or not all(is_act(i) or i in allowed_const for i in ins):
            continue
        if n.op_type in ("Add", "Mul") and not all(is_act(i) for i in ins):
            continue  # a bias or γ/β: the operator stays float
        if n.op_type in WEIGHT_OPS and n.op_type != "MatMul":
            if len(n.input) < 2 or n.input[1] not in inits:
                continue
        quantized.append(n)
    qnames = {n.name for n in quantized}
    tensors = []  # quantized tensors, first seen first
    seen = set()
    for n in quantized:
        for t in [i for i in data_inputs(n) if is_act(i)] + [o for o in n.output if is_act(o)]:
            if t not in seen:
                seen.add(t)
                tensors.append(t)

    # Calibrate: the FP32 model with every quantized tensor as an output.
    with tempfile.TemporaryDirectory(prefix="hetplan_int8_") as tmp:
        cal = onnx.ModelProto()
        cal.CopyFrom(model)
        for t in tensors:
            if t not in graph_outputs:
                cal.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
        cal_path = os.path.join(tmp, "calibration.onnx")
        onnx.save(cal, cal_path)
        ranges = run_calibrator(calibrator, cal_path, os.path.join(tmp, "ranges.json"), CALIBRATION_RUNS)
    missing = [t for t in tensors if t not in ranges]
    if missing:
        raise RuntimeError(f"{src_path}: no calibration range for {missing[:3]}")

    # Parameters: own range, or the input's for data movement.
    params = {}
    producer = {o: n for n in graph.node for o in n.output}
    for t in tensors:
        p = producer.get(t)
        if p is not None and p.name in qnames and p.op_type in SAME_RANGE_OPS and p.input[0] in params:
            params[t] = params[p.input[0]]
        else:
            params[t] = activation_params(*ranges[t])

    new_inits = []
    def add_init(name, array):
        new_inits.append(numpy_helper.from_array(array, name))
        return name

    qname = {t: t + "_quantized" for t in tensors}
    dqname = {t: t + "_dequantized" for t in tensors}
    sname, zname = {}, {}
    for t in tensors:
        s, z = params[t]
        sname[t] = add_init(t + "_scale", np.array(s, dtype=np.float32))
        zname[t] = add_init(t + "_zero_point", np.array(z, dtype=np.uint8))
    # A quantized graph output: its producer writes <t>_float, the last DQ writes t.
    renamed = {t: t + "_float" for t in tensors if t in graph_outputs}
    for t in renamed:
        dqname[t] = t

    def q_node(t):
        return helper.make_node("QuantizeLinear", [renamed.get(t, t), sname[t], zname[t]], [qname[t]],
                                name=t + "_QuantizeLinear")

    def dq_node(t, out):
        return helper.make_node("DequantizeLinear", [qname[t], sname[t], zname[t]], [out],
                                name=out + "_DequantizeLinear")

    # A weight read by several nodes (a layer applied at every time step) is
    # quantized once; a bias depends on its reader's input scale, so a shared
    # one is quantized per reader, under the reader's name.
    readers = collections.Counter(t for n in graph.node for t in n.input)
    weights = {}

    def quantize_weight(n, k, axis):
        base = n.input[k]
        if (base, axis) not in weights:
            w = numpy_helper.to_array(inits[base]).astype(np.float32)
            q, s = weight_params(w, axis)
            weights[(base, axis)] = (add_init(base + "_quantized", q), add_init(base + "_scale", s),
                                     add_init(base + "_zero_point", np.zeros(s.shape, dtype=np.int8)), s)
        return weights[(base, axis)]

    def bias_base(n, k):
        return n.input[k] if readers[n.input[k]] == 1 else f"{n.input[k]}_{n.name}"

    def quantize_bias(n, k, x_scale, w_scale):
        b = numpy_helper.to_array(inits[n.input[k]]).astype(np.float64)
        s = (np.float64(x_scale) * w_scale.astype(np.float64)).astype(np.float32)
        q = np.clip(np.round(b / s), -2**31, 2**31 - 1).astype(np.int32)
        base = bias_base(n, k)
        return (add_init(base + "_quantized", q), add_init(base + "_scale", s),
                add_init(base + "_zero_point", np.zeros(s.shape, dtype=np.int32)))

    def copy_node(n, inputs, outputs, op_type=None):
        new = helper.make_node(op_type or n.op_type, inputs, outputs, name=n.name)
        new.attribute.extend(n.attribute)
        return new

    # Nodes in order; ("dq", t) marks where t's DQ goes (right after its Q).
    nodes = []
    qoperator_outputs = set()  # written quantized by a QLinearConv: no float tensor
    def after_producer(t):
        if t not in qoperator_outputs:
            nodes.append(q_node(t))
        nodes.append(("dq", t))

    for t in tensors:
        if t not in producer:  # a graph input
            after_producer(t)
    for n in graph.node:
        outputs = [renamed.get(o, o) for o in n.output]
        if n.name not in qnames:
            # A float reader of a quantized tensor reads it dequantized, as
            # ONNX Runtime's quantizer writes it (the producer then runs its
            # integer kernel and the DQ opens the float region).
            nodes.append(copy_node(n, [dqname[t] if t in params else t for t in n.input], outputs))
        elif n.op_type == "Conv" and qoperator:
            x, y = n.input[0], n.output[0]
            wq, ws, wz, wscale = quantize_weight(n, 1, 0)
            ins = [qname[x], sname[x], zname[x], wq, ws, wz, sname[y], zname[y]]
            if len(n.input) > 2 and n.input[2]:
                ins.append(quantize_bias(n, 2, params[x][0], wscale)[0])
            qoperator_outputs.add(y)
            nodes.append(copy_node(n, ins, [qname[y]], "QLinearConv"))
        else:
            idx = DATA_INPUTS.get(n.op_type, (0,))
            inputs = [dqname[t] if t in params and (idx is None or i in idx) else t for i, t in enumerate(n.input)]
            if n.op_type in ("Conv", "Gemm") or (n.op_type == "MatMul" and n.input[1] in inits):
                trans_b = next((a.i for a in n.attribute if a.name == "transB"), 0)
                axis = 0 if n.op_type == "Conv" or (n.op_type == "Gemm" and trans_b) else 1
                first_use = (n.input[1], axis) not in weights
                wq, ws, wz, wscale = quantize_weight(n, 1, axis)
                inputs[1] = n.input[1] + "_dequantized"
                if first_use:
                    nodes.append(helper.make_node("DequantizeLinear", [wq, ws, wz], [inputs[1]],
                                                  name=inputs[1] + "_DequantizeLinear", axis=axis))
                if n.op_type != "MatMul" and len(n.input) > 2 and n.input[2] in inits:
                    bq, bs, bz = quantize_bias(n, 2, params[n.input[0]][0], wscale)
                    inputs[2] = bias_base(n, 2) + "_dequantized"
                    nodes.append(helper.make_node("DequantizeLinear", [bq, bs, bz], [inputs[2]],
                                                  name=inputs[2] + "_DequantizeLinear", axis=0))
            nodes.append(copy_node(n, inputs, outputs))
        for o in n.output:
            if o in params:
                after_producer(o)

    # Each DQ only where something reads it.
    reads = {i for n in nodes if not isinstance(n, tuple) for i in n.input} | graph_outputs
    final = []
    for n in nodes:
        if not isinstance(n, tuple):
            final.append(n)
        elif dqname[n[1]] in reads:
            final.append(dq_node(n[1], dqname[n[1]]))
    # Drop the float initializers that quantized ones replaced.
    used = {i for n in final for i in n.input}
    kept_inits = [t for t in graph.initializer if t.name in used] + [t for t in new_inits if t.name in used]
    del graph.node[:]
    graph.node.extend(final)
    del graph.initializer[:]
    graph.initializer.extend(kept_inits)
    del graph.value_info[:]
    model.producer_name = "hetplan-int8"
    onnx.checker.check_model(model)
    onnx.save(model, dst_path)
    return {"quantized_nodes": len(quantized), "quantized_tensors": len(tensors)}


# --------------------------------------------------------------------------
# Entry point (called by export.py)
# --------------------------------------------------------------------------

@contextlib.contextmanager
def written_atomically(path):
    """Yields a temp file beside `path` and renames it to `path` when the block
    succeeds, so that an interrupted export never leaves a partial model."""
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def export_int8(name, out_dir, force, calibrator, export_fp32, randomize, opset, zoo=None):
    """Writes <out_dir>/<name>.onnx; `zoo` maps name -> (route, FP32 base model), INT8_ZOO by default."""
    route, base = (zoo or INT8_ZOO)[name]
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path) and not force:
        print(f"{name:18s} exists, skipped ({path})", flush=True)
        return
    if route != "torch" and not calibrator:
        raise RuntimeError(f"{name}: the ONNX route needs --calibrator (the hetplan_calibrate binary; "
                           "cmake --build build --target hetplan_calibrate)")
    t0 = time.time()
    with written_atomically(path) as tmp:
        if route == "torch":
            export_torch_int8(name, base, tmp, randomize, opset)
            info = ""
        else:
            src = os.path.join(out_dir, base + ".onnx")
            if not os.path.exists(src):
                export_fp32(base, out_dir, False)
            float_nodes = ()
            if base == "yolov5n":
                float_nodes = downstream_of(onnx.load(src, load_external_data=False).graph,
                                            {"/detect.0/Conv", "/detect.1/Conv", "/detect.2/Conv"})
            stats = quantize_onnx(src, tmp, calibrator, float_nodes, qoperator=route == "onnx-qop")
            info = f"  ({stats['quantized_nodes']} nodes quantized)"
        proto = onnx.load(tmp, load_external_data=False)
        if any(n.op_type == "Identity" for n in proto.graph.node):
            raise RuntimeError(f"{name}: the exported graph has Identity nodes")
        if calibrator:  # ONNX Runtime must load and run what was written
            with tempfile.TemporaryDirectory(prefix="hetplan_int8_") as check:
                run_calibrator(calibrator, tmp, os.path.join(check, "check.json"), 1)
    print(f"{name:18s} nodes={len(proto.graph.node):5d}  {time.time() - t0:6.1f}s  -> {path}{info}", flush=True)
