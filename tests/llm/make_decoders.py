"""Writes small LLaMA-style decoder-only language models with a KV cache, as
Hugging Face / optimum style exporters write them (issue 60),
deterministically, with ONNX 1.22 from PyPI (onnx.helper and numpy, onnx.checker
with full shape inference). Run with the virtual environment scripts/setup.sh
creates. Nothing binary is committed; tests/llm/check_decoders.py runs each
model's greedy generation on ONNX Runtime, with and without the cache.

    third_party/models-venv/bin/python tests/llm/make_decoders.py --out DIR [--size test|1b] [--only NAME,...]

Sizes (RMSNorm epsilon 1e-5, rotary base 10000, SwiGLU feed-forward):
  test (default)  2 layers, hidden 64, 4 query / 2 key-value heads, head 16,
                  FFN 128, vocabulary 256, 256 positions; weights inside the
                  file (0.2 to 0.5 MiB a model, under a second for all five).
  1b              16 layers, hidden 2048, 32 query / 8 key-value heads, head
                  64, FFN 8192, vocabulary 32000, 2048 positions (1.1 billion
                  parameters); only when asked, every weight in one external
                  NAME.onnx.data file (float32 4.4 GB, float16 2.2 GB, int4
                  0.9 GB); the checker reads the file back by path. The int4
                  model takes 20 s and peaks at 3.0 GB resident; float32
                  holds all its weights in memory before writing them.

The interface of every model, as optimum writes it:
  inputs   input_ids int64 [batch_size, sequence_length],
           attention_mask int64 [batch_size, total_sequence_length] (1 = attend),
           position_ids int64 [batch_size, sequence_length],
           past_key_values.N.key / .value [batch_size, KV heads,
           past_sequence_length, head] for each layer N (a prefill feeds a
           past of length 0);
  outputs  logits [batch_size, sequence_length, vocabulary],
           present.N.key / .value [batch_size, KV heads,
           total_sequence_length, head] (the past with this step's keys and
           values appended on axis 2).
Key j takes part for query i iff j <= past_sequence_length + i and
attention_mask[b, j] == 1. The weights are random but the same in every model
of a size (each tensor's generator is seeded by its name), normal with
standard deviation 0.1 for the embedding, 1/sqrt(in) for the projections
(2/sqrt(in) for lm_head) and 0.1 around 1 for the norms: the logits spread
(standard deviation about 2, 0.8 with the tied head) and greedy generation
does not repeat one token (a tied head over a larger embedding does). All
five test-size models run on ONNX Runtime 1.29's CPU provider; decoder,
decoder_fp16 and decoder_opset23 generate the same tokens. Projection weights
are stored [in, out] for MatMul and named as the module's
(model.layers.0.self_attn.q_proj.weight); nodes as torch's exporter names them
(/model/layers.0/self_attn/q_proj/MatMul, its output ..._output_0).

Each model:
  decoder.onnx          opset 18, float32, every operator decomposed as
                        torch's exporter writes a Hugging Face LLaMA: embedding
                        Gather; RMSNorm as Pow, ReduceMean (axes an input),
                        Add, Sqrt, Reciprocal, Mul, Mul by the weight;
                        q/k/v MatMuls, Reshape and Transpose to [b, heads, s,
                        head]; rotary cos/sin tables [positions, head]
                        Gathered by position_ids, rotate_half as Slice, Neg,
                        Concat; past Concat new on axis 2 (the present);
                        grouped-query heads repeated (Unsqueeze, Expand,
                        Reshape); MatMul with the transposed keys, Div by
                        sqrt(head), Add of the mask (Shape, Gather, Range,
                        LessOrEqual, Cast, And, Where: 0 or float32's lowest),
                        Softmax, MatMul with the values; o_proj; residual Add;
                        SwiGLU as gate and up MatMuls, Sigmoid and Mul (SiLU),
                        Mul, down MatMul; final RMSNorm; lm_head MatMul
                        [hidden, vocabulary].
  decoder_tied.onnx     decoder.onnx with the LM head tied to the embedding:
                        logits = MatMul(h, Transpose(model.embed_tokens.weight)).
  decoder_int4.onnx     decoder.onnx at opset 21 with every projection (q, k,
                        v, o, gate, up, down and lm_head) a block-wise 4-bit
                        weight as MatMul4BitsQuantizer's QDQ format writes it:
                        INT4 [K, N] (symmetric, no zero point),
                        DequantizeLinear(axis=0, block_size=32) with float
                        scales [K/32, N], then the MatMul. The embedding and
                        the norms stay float32.
  decoder_fp16.onnx     decoder.onnx in float16: weights, past, present and
                        logits (the ids and masks stay int64). As torch writes
                        a float16 LLaMA, RMSNorm computes in float32 between
                        Casts and so does Softmax; the mask's lowest value is
                        float16's.
  decoder_opset23.onnx  opset 23 with ONNX's own RMSNormalization,
                        RotaryEmbedding (4D, cos/sin tables [positions,
                        head/2] and the position_ids input) and Attention (4D,
                        q_num_heads / kv_num_heads set, past_key/past_value in,
                        present_key/present_value out, the boolean mask from
                        attention_mask as attn_mask: is_causal aligns upper
                        left, wrong with a past), float32; the same weights
                        and function as decoder.onnx.
"""

import argparse
import os
import re
import zlib

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZES = {
    "test": dict(layers=2, hidden=64, heads=4, kv_heads=2, head=16, ffn=128, vocab=256, positions=256),
    "1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, head=64, ffn=8192, vocab=32000, positions=2048),
}
EPS, THETA, SEED, BLOCK = 1e-5, 10000.0, 60, 32
INT64_MAX = np.iinfo(np.int64).max


def normal(name, shape, std, mean=0.0):
    """Float32 N(mean, std) values for one tensor, seeded by its name, so that
    every model of a size holds the same weights whatever it builds first."""
    rng = np.random.default_rng([SEED, zlib.crc32(name.encode())])
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(std) + np.float32(mean)


def quantize_int4(w):
    """Symmetric block-wise INT4 of a float [K, N] weight along K: (q [K, N],
    scales [K/BLOCK, N])."""
    k, n = w.shape
    blocks = w.reshape(k // BLOCK, BLOCK, n)
    scales = np.abs(blocks).max(axis=1) / 7.0
    q = np.clip(np.round(blocks / scales[:, None, :]), -8, 7)
    return q.reshape(k, n).astype(ml_dtypes.int4), scales.astype(np.float32)


def scope(module):
    """torch's node scope of a module: model.layers.0.mlp -> /model/layers.0/mlp."""
    return "/" + re.sub(r"\.(?!\d)", "/", module)


class Builder:
    """The nodes and initializers of one model. dtype: the activations' and
    weights' numpy type; int4: projections as block-wise INT4 QDQ."""

    def __init__(self, cfg, dtype=np.float32, int4=False):
        self.cfg, self.dtype, self.int4 = cfg, np.dtype(dtype), int4
        self.elem = helper.np_dtype_to_tensor_dtype(self.dtype)
        self.nodes, self.inits, self.names = [], [], set()
        self.output_sep = "_"  # a node's output: NAME_output_0 as torch names it ("/": the model builder's)

    def op(self, op_type, name, *inputs, out=None, outs=None, **attrs):
        outputs = outs or [out or f"{name}{self.output_sep}output_0"]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def init(self, name, array):
        if name not in self.names:
            self.names.add(name)
            self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, name, value, dtype=np.int64):
        return self.init(name, np.array(value, dtype=dtype))

    def weight(self, name, shape, std, mean=0.0):
        return self.init(name, normal(name, shape, std, mean).astype(self.dtype))

    def linear(self, x, module, k, n, std, out=None):
        """x @ W, W [k, n] ~ N(0, std): a MatMul, or for int4 a DequantizeLinear feeding it."""
        name, s = module + ".weight", scope(module)
        if not self.int4:
            return self.op("MatMul", s + "/MatMul", x, self.weight(name, (k, n), std), out=out)
        q, scales = quantize_int4(normal(name, (k, n), std))
        dq = self.op("DequantizeLinear", s + "/MatMul_DQ_Q4", self.init(name + "_DQ_Q4", q),
                     self.init(name + "_DQ_scales", scales), axis=0, block_size=BLOCK)
        return self.op("MatMul", s + "/MatMul", x, dq, out=out)

    def value(self, name, value):
        """A scalar constant of the activations' type."""
        return self.const(f"{name}_{self.dtype.name}", value, self.dtype)


def rms_norm(b, x, module, fused=False):
    """LlamaRMSNorm: weight * (x * rsqrt(mean(x^2) + eps)), in float32 for a float16 model."""
    s, w = scope(module), b.weight(module + ".weight", (b.cfg["hidden"],), 0.1, 1.0)
    if fused:
        return b.op("RMSNormalization", s + "/RMSNormalization", x, w, axis=-1, epsilon=EPS)
    half = b.dtype == np.float16
    h = b.op("Cast", s + "/Cast", x, to=TensorProto.FLOAT) if half else x
    p = b.op("Pow", s + "/Pow", h, b.const("two_float32", 2.0, np.float32))
    m = b.op("ReduceMean", s + "/ReduceMean", p, b.const("axes_last", [-1]), keepdims=1)
    a = b.op("Add", s + "/Add", m, b.const("eps_float32", EPS, np.float32))
    r = b.op("Reciprocal", s + "/Reciprocal", b.op("Sqrt", s + "/Sqrt", a))
    n = b.op("Mul", s + "/Mul", h, r)
    n = b.op("Cast", s + "/Cast_1", n, to=TensorProto.FLOAT16) if half else n
    return b.op("Mul", s + "/Mul_1", w, n)


def io(b):
    """The graph's inputs and outputs, named and shaped as optimum writes them."""
    c, i64 = b.cfg, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", i64, ["batch_size", "total_sequence_length"]),
              helper.make_tensor_value_info("position_ids", i64, ["batch_size", "sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", b.elem, ["batch_size", "sequence_length", c["vocab"]])]
    for i in range(c["layers"]):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", b.elem,
                                                        ["batch_size", c["kv_heads"], "past_sequence_length",
                                                         c["head"]]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", b.elem,
                                                         ["batch_size", c["kv_heads"], "total_sequence_length",
                                                          c["head"]]))
    return inputs, outputs


def attention_allowed(b):
    """Boolean [batch, 1, sequence, total]: key j for query i iff j <= past + i
    and attention_mask[b, j] == 1, the past being total - sequence."""
    s = "/model/attn_mask"
    one = b.const("one_scalar", 1)
    seq = b.op("Gather", s + "/Gather", b.op("Shape", s + "/Shape", "input_ids"), one, axis=0)
    total = b.op("Gather", s + "/Gather_1", b.op("Shape", s + "/Shape_1", "attention_mask"), one, axis=0)
    past = b.op("Sub", s + "/Sub", total, seq)
    queries = b.op("Range", s + "/Range", past, total, one)
    keys = b.op("Range", s + "/Range_1", b.const("zero_scalar", 0), total, one)
    column = b.op("Unsqueeze", s + "/Unsqueeze", queries, b.const("axes_1", [1]))
    causal = b.op("LessOrEqual", s + "/LessOrEqual", keys, column)
    padding = b.op("Cast", s + "/Cast", "attention_mask", to=TensorProto.BOOL)
    padding = b.op("Unsqueeze", s + "/Unsqueeze_1", padding, b.const("axes_1_2", [1, 2]))
    return b.op("And", s + "/And", causal, padding)


def attention_bias(b, allowed):
    """The additive mask: 0 where allowed, the type's lowest value elsewhere."""
    return b.op("Where", "/model/attn_mask/Where", allowed, b.value("zero", 0.0),
                b.value("lowest", np.finfo(b.dtype).min))


def rotary_tables(b, half, names=("model.rotary_emb.cos_cached", "model.rotary_emb.sin_cached")):
    """cos and sin of position * THETA^(-2j/head): [positions, head/2], or
    [positions, head] with the frequencies repeated (Hugging Face's cache)."""
    c = b.cfg
    inv = 1.0 / THETA ** (np.arange(0, c["head"], 2, dtype=np.float64) / c["head"])
    freqs = np.outer(np.arange(c["positions"], dtype=np.float64), inv)
    freqs = freqs if half else np.concatenate([freqs, freqs], axis=-1)
    return b.init(names[0], np.cos(freqs).astype(b.dtype)), b.init(names[1], np.sin(freqs).astype(b.dtype))


def rotary_gathered(b):
    """cos and sin Gathered by position_ids, [batch, 1, sequence, head]."""
    out = []
    for k, table in enumerate(rotary_tables(b, half=False)):
        s = f"/model/rotary_emb{'_' + str(k) if k else ''}"
        g = b.op("Gather", s + "/Gather", table, "position_ids", axis=0)
        out.append(b.op("Unsqueeze", s + "/Unsqueeze", g, b.const("axes_1", [1])))
    return out


def apply_rotary(b, x, cos, sin, s):
    """x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1)."""
    half = b.cfg["head"] // 2
    minus_one = b.const("axes_last", [-1])
    x1 = b.op("Slice", s + "/Slice", x, b.const("zero_1", [0]), b.const("half_head", [half]), minus_one)
    x2 = b.op("Slice", s + "/Slice_1", x, b.const("half_head", [half]), b.const("int64_max", [INT64_MAX]), minus_one)
    rotated = b.op("Concat", s + "/Concat", b.op("Neg", s + "/Neg", x2), x1, axis=-1)
    return b.op("Add", s + "/Add", b.op("Mul", s + "/Mul", x, cos), b.op("Mul", s + "/Mul_1", rotated, sin))


def split_heads(b, x, heads, s):
    """[b, s, heads * head] -> [b, heads, s, head]."""
    shape = b.const(f"shape_{heads}_heads", [0, 0, heads, b.cfg["head"]])
    return b.op("Transpose", s + "/Transpose", b.op("Reshape", s + "/Reshape", x, shape), perm=[0, 2, 1, 3])


def merge_heads(b, x, s):
    """[b, heads, s, head] -> [b, s, heads * head]."""
    t = b.op("Transpose", s + "/Transpose", x, perm=[0, 2, 1, 3])
    return b.op("Reshape", s + "/Reshape", t, b.const("shape_merged", [0, 0, b.cfg["heads"] * b.cfg["head"]]))


def projections(b, x, module):
    """q, k, v of a layer, each [b, heads, s, head]."""
    c = b.cfg
    std, s = c["hidden"] ** -0.5, scope(module)
    out = []
    for p, heads in (("q", c["heads"]), ("k", c["kv_heads"]), ("v", c["kv_heads"])):
        y = b.linear(x, f"{module}.{p}_proj", c["hidden"], heads * c["head"], std)
        out.append(split_heads(b, y, heads, f"{s}/{p}"))
    return out


def repeat_kv(b, x, s):
    """[b, kv_heads, t, head] -> [b, heads, t, head], each KV head repeated heads / kv_heads times."""
    c = b.cfg
    u = b.op("Unsqueeze", s + "/Unsqueeze", x, b.const("axes_2", [2]))
    e = b.op("Expand", s + "/Expand", u, b.const("repeat_kv", [1, 1, c["heads"] // c["kv_heads"], 1, 1]))
    return b.op("Reshape", s + "/Reshape", e, b.const("shape_repeated", [0, c["heads"], -1, c["head"]]))


def attention(b, x, i, bias, cos, sin):
    """Self-attention of layer i, decomposed; writes present.i.key/value."""
    c, module = b.cfg, f"model.layers.{i}.self_attn"
    s = scope(module)
    q, k, v = projections(b, x, module)
    q, k = apply_rotary(b, q, cos, sin, s + "/q_rotary"), apply_rotary(b, k, cos, sin, s + "/k_rotary")
    keys = b.op("Concat", s + "/Concat", f"past_key_values.{i}.key", k, axis=2, out=f"present.{i}.key")
    values = b.op("Concat", s + "/Concat_1", f"past_key_values.{i}.value", v, axis=2, out=f"present.{i}.value")
    keys, values = repeat_kv(b, keys, s + "/repeat_k"), repeat_kv(b, values, s + "/repeat_v")
    kt = b.op("Transpose", s + "/Transpose", keys, perm=[0, 1, 3, 2])
    scores = b.op("Div", s + "/Div", b.op("MatMul", s + "/MatMul", q, kt), b.value("sqrt_head", c["head"] ** 0.5))
    scores = b.op("Add", s + "/Add", scores, bias)
    if b.dtype == np.float16:
        scores = b.op("Cast", s + "/Cast", scores, to=TensorProto.FLOAT)
    probs = b.op("Softmax", s + "/Softmax", scores, axis=-1)
    if b.dtype == np.float16:
        probs = b.op("Cast", s + "/Cast_1", probs, to=TensorProto.FLOAT16)
    context = merge_heads(b, b.op("MatMul", s + "/MatMul_1", probs, values), s + "/context")
    return b.linear(context, module + ".o_proj", c["heads"] * c["head"], c["hidden"], (c["heads"] * c["head"]) ** -0.5)


def attention_op23(b, x, i, allowed, tables):
    """Self-attention of layer i with opset 23's RotaryEmbedding and Attention."""
    c, module = b.cfg, f"model.layers.{i}.self_attn"
    s = scope(module)
    q, k, v = projections(b, x, module)
    q = b.op("RotaryEmbedding", s + "/q_rotary/RotaryEmbedding", q, *tables, "position_ids")
    k = b.op("RotaryEmbedding", s + "/k_rotary/RotaryEmbedding", k, *tables, "position_ids")
    y = b.op("Attention", s + "/Attention", q, k, v, allowed, f"past_key_values.{i}.key", f"past_key_values.{i}.value",
             outs=[s + "/Attention_output_0", f"present.{i}.key", f"present.{i}.value"],
             q_num_heads=c["heads"], kv_num_heads=c["kv_heads"])[0]
    context = merge_heads(b, y, s + "/context")
    return b.linear(context, module + ".o_proj", c["heads"] * c["head"], c["hidden"], (c["heads"] * c["head"]) ** -0.5)


def mlp(b, x, i):
    """SwiGLU: down(silu(gate(x)) * up(x)), SiLU as Sigmoid and Mul."""
    c, module = b.cfg, f"model.layers.{i}.mlp"
    s = scope(module)
    gate = b.linear(x, module + ".gate_proj", c["hidden"], c["ffn"], c["hidden"] ** -0.5)
    act = b.op("Mul", s + "/act_fn/Mul", gate, b.op("Sigmoid", s + "/act_fn/Sigmoid", gate))
    up = b.linear(x, module + ".up_proj", c["hidden"], c["ffn"], c["hidden"] ** -0.5)
    return b.linear(b.op("Mul", s + "/Mul", act, up), module + ".down_proj", c["ffn"], c["hidden"], c["ffn"] ** -0.5)


def lm_head(b, h, tied):
    """logits = h @ lm_head.weight [hidden, vocabulary], or @ the embedding transposed."""
    c = b.cfg
    if not tied:
        return b.linear(h, "lm_head", c["hidden"], c["vocab"], 2 * c["hidden"] ** -0.5, out="logits")
    t = b.op("Transpose", "/lm_head/Transpose", "model.embed_tokens.weight", perm=[1, 0])
    return b.op("MatMul", "/lm_head/MatMul", h, t, out="logits")


def decoder(b, fused=False, tied=False):
    """Embedding, the layers, the final norm and the LM head into b; fused:
    opset 23's RMSNormalization, RotaryEmbedding and Attention."""
    c = b.cfg
    embed = b.weight("model.embed_tokens.weight", (c["vocab"], c["hidden"]), 0.1)
    h = b.op("Gather", "/model/embed_tokens/Gather", embed, "input_ids", axis=0)
    allowed = attention_allowed(b)
    if fused:
        tables = rotary_tables(b, half=True)
    else:
        bias, (cos, sin) = attention_bias(b, allowed), rotary_gathered(b)
    for i in range(c["layers"]):
        s, x = f"/model/layers.{i}", rms_norm(b, h, f"model.layers.{i}.input_layernorm", fused)
        a = attention_op23(b, x, i, allowed, tables) if fused else attention(b, x, i, bias, cos, sin)
        h = b.op("Add", s + "/Add", h, a)
        x = rms_norm(b, h, f"model.layers.{i}.post_attention_layernorm", fused)
        h = b.op("Add", s + "/Add_1", h, mlp(b, x, i))
    lm_head(b, rms_norm(b, h, "model.norm", fused), tied)


def quantize_nbits(w):
    """MatMulNBits' INT4 of a float [K, N] weight: per column, blocks of BLOCK
    along K, q = round(w / scale) + 8 in [0, 15] (zero point 8), two per byte,
    the lower nibble first: (B uint8 [N, K/BLOCK, BLOCK/2], scales [N, K/BLOCK])."""
    k, n = w.shape
    blocks = w.T.reshape(n, k // BLOCK, BLOCK)
    scales = np.abs(blocks).max(axis=2) / 7.0
    q = (np.clip(np.round(blocks / scales[:, :, None]), -8, 7) + 8).astype(np.uint8)
    packed = q[:, :, 0::2] | (q[:, :, 1::2] << 4)
    return packed, scales.astype(np.float32)


def builder_linear(b, x, module, k, n, std, out=None):
    """The model builder's projection: a MatMul, or MatMulNBits (INT4), named
    as the builder names them (SCOPE/MatMul[_Q4], MODULE.MatMul.weight[_Q4])."""
    name, s = module + ".weight", scope(module)
    out = out or f"{s}/MatMul/output_0"
    if not b.int4:
        w = b.init(module + ".MatMul.weight", normal(name, (k, n), std).astype(b.dtype))
        return b.op("MatMul", s + "/MatMul", x, w, out=out)
    packed, scales = quantize_nbits(normal(name, (k, n), std))
    return b.op("MatMulNBits", s + "/MatMul_Q4", x, b.init(module + ".MatMul.weight_Q4", packed),
                b.init(module + ".MatMul.weight_scales", scales), out=out, domain="com.microsoft", K=k, N=n,
                accuracy_level=4, bits=4, block_size=BLOCK)


def builder_norm(b, new, residual, module, last=False):
    """SimplifiedLayerNormalization (ONNX Runtime's, in the default domain) on
    the first use; later com.microsoft's SkipSimplifiedLayerNormalization of
    residual + new, whose fourth output is that sum: (normed, the sum)."""
    s, w = scope(module), b.weight(module + ".weight", (b.cfg["hidden"],), 0.1, 1.0)
    if residual is None:
        y = b.op("SimplifiedLayerNormalization", s + "/LayerNorm", new, w, out=s + "/output_0", axis=-1, epsilon=EPS,
                 stash_type=1)
        return y, new
    outs = [s + "/output_0"] if last else [s + "/output_0", "", "", s + "/output_3"]
    y = b.op("SkipSimplifiedLayerNormalization", s + "/SkipLayerNorm", residual, new, w, outs=outs,
             domain="com.microsoft", epsilon=EPS)
    return (y, None) if last else (y[0], y[3])


def builder_constant(b, name, value):
    """The builder's Constant node of an int64 value: /model/constants/INT64/NAME."""
    out = f"/model/constants/INT64/{name}"
    b.op("Constant", f"/model/constant_nodes/INT64/{name}", out=out,
         value=numpy_helper.from_array(np.array(value, dtype=np.int64), out))
    return out


def decoder_genai(b):
    """ONNX Runtime GenAI's model builder form of the same decoder, node for
    node as onnxruntime-genai 0.18's builder writes a LLaMA (names, operators,
    attributes; checked against it): no position_ids; the cache's head dim
    symbolic ('kv_cache_dim'); seqlens_k = Σ mask − 1 and
    total_sequence_length = the mask's length (int32); Q, K and V from one
    packed projection (attn/qkv_proj) into GroupQueryAttention with the rotary
    inside (do_rotary, cos and sin caches [positions, head/2]); Simplified
    and SkipSimplified layer norms; MatMulNBits for INT4."""
    c = b.cfg
    b.output_sep = "/"
    one_1 = builder_constant(b, "[1]", [1])
    s = "/model/attn_mask_reformat/attn_mask_subgraph"
    total = b.op("ReduceSum", s + "/ReduceSum", "attention_mask", one_1, keepdims=0)
    seqlens = b.op("Cast", s + "/Sub/Cast", b.op("Sub", s + "/Sub", total, one_1), to=TensorProto.INT32)
    shape = b.op("Shape", s + "/Shape", "attention_mask")
    length = b.op("Gather", s + "/Gather", shape, builder_constant(b, "1", 1), axis=0)
    length = b.op("Cast", s + "/Gather/Cast", length, to=TensorProto.INT32)
    embed = b.weight("model.embed_tokens.weight", (c["vocab"], c["hidden"]), 0.1)
    h = b.op("Gather", "/model/embed_tokens/Gather", embed, "input_ids")
    tables = rotary_tables(b, half=True, names=("cos_cache", "sin_cache"))
    x, residual = h, None
    for i in range(c["layers"]):
        module = f"model.layers.{i}"
        x, residual = builder_norm(b, x, residual, module + ".input_layernorm")
        a = scope(module + ".attn")
        qkv = builder_linear(b, x, module + ".attn.qkv_proj", c["hidden"],
                             (c["heads"] + 2 * c["kv_heads"]) * c["head"], c["hidden"] ** -0.5)
        y = b.op("GroupQueryAttention", a + "/GroupQueryAttention", qkv, "", "", f"past_key_values.{i}.key",
                 f"past_key_values.{i}.value", seqlens, length, *tables, "", "", "",
                 outs=[a + "/GroupQueryAttention/output_0", f"present.{i}.key", f"present.{i}.value"],
                 domain="com.microsoft", num_heads=c["heads"], kv_num_heads=c["kv_heads"], scale=c["head"] ** -0.5,
                 local_window_size=-1, softcap=0.0, do_rotary=1, rotary_interleaved=0)[0]
        o = builder_linear(b, y, module + ".attn.o_proj", c["heads"] * c["head"], c["hidden"],
                           (c["heads"] * c["head"]) ** -0.5)
        x, residual = builder_norm(b, o, residual, module + ".post_attention_layernorm")
        m = scope(module + ".mlp")
        gate = builder_linear(b, x, module + ".mlp.gate_proj", c["hidden"], c["ffn"], c["hidden"] ** -0.5)
        up = builder_linear(b, x, module + ".mlp.up_proj", c["hidden"], c["ffn"], c["hidden"] ** -0.5)
        act = b.op("Mul", m + "/act_fn/Mul", gate, b.op("Sigmoid", m + "/act_fn/Sigmoid", gate))
        x = builder_linear(b, b.op("Mul", m + "/Mul", act, up), module + ".mlp.down_proj", c["ffn"], c["hidden"],
                           c["ffn"] ** -0.5)
    h, _ = builder_norm(b, x, residual, f"model.layers.{c['layers']}.final_norm_layernorm", last=True)
    builder_linear(b, h, "lm_head", c["hidden"], c["vocab"], 2 * c["hidden"] ** -0.5, out="logits")


def save(out, name, b, opset, external):
    """Checks the model (full shape inference) and writes it; external: every
    tensor over 1 KiB into one NAME.onnx.data, checked by path (over 2 GB)."""
    inputs, outputs = io(b)
    genai = any(n.domain == "com.microsoft" for n in b.nodes)
    if genai:  # the builder's models have no position_ids, and the cache's head dim is symbolic
        inputs = [i for i in inputs if i.name != "position_ids"]
        # every layer's key, then every layer's value, as the builder orders them
        order = lambda v: (0, 0, 0) if not v.name.startswith(("past_key_values.", "present.")) else (
            1, v.name.endswith(".value"), int(v.name.split(".")[-2]))
        inputs, outputs = sorted(inputs, key=order), sorted(outputs, key=order)
        for v in inputs + outputs:
            if v.name.startswith(("past_key_values.", "present.")):
                v.type.tensor_type.shape.dim[3].dim_param = "kv_cache_dim"
    graph = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if genai else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="hetplan-tests")
    model.ir_version = 10 if opset <= 21 else 11
    path = os.path.join(out, name + ".onnx")
    if genai:  # onnx.checker refuses SimplifiedLayerNormalization in the default domain, as it does the builder's
        if external:
            onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=name + ".onnx.data", size_threshold=1024)
        else:
            onnx.save(model, path)
        return
    if not external:
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, path)
        return
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")  # save_model appends to an existing data file
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=name + ".onnx.data", size_threshold=1024)
    onnx.checker.check_model(path, full_check=True)


# name: (opset, activation type, int4 projections, fused operators, tied head)
MODELS = {
    "decoder": (18, np.float32, False, False, False),
    "decoder_tied": (18, np.float32, False, False, True),
    "decoder_int4": (21, np.float32, True, False, False),
    "decoder_fp16": (18, np.float16, False, False, False),
    "decoder_opset23": (23, np.float32, False, True, False),
    # ONNX Runtime GenAI's model builder form (fused: "genai")
    "decoder_genai": (22, np.float32, False, "genai", False),
    "decoder_genai_int4": (22, np.float32, True, "genai", False),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", choices=sorted(SIZES), default="test")
    parser.add_argument("--only", default="", help="comma-separated model names (decoder, decoder_int4, ...)")
    args = parser.parse_args()
    names = [n.removesuffix(".onnx") for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        opset, dtype, int4, fused, tied = MODELS[name]
        b = Builder(SIZES[args.size], dtype, int4)
        if fused == "genai":
            decoder_genai(b)
        else:
            decoder(b, fused, tied)
        save(args.out, name, b, opset, external=args.size == "1b")


if __name__ == "__main__":
    main()
