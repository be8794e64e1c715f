"""ONNX Runtime GenAI's model builder on this machine, against
make_decoders.py's reproduction of its form.

    third_party/builder-venv/bin/python tests/llm/check_builder.py --out DIR

Saves a random-weight LlamaForCausalLM of the test size (2 layers, hidden 64,
4/2 heads, FFN 128, vocabulary 256, 256 positions) and a byte-level tokenizer
trained offline (the builder insists on one), runs onnxruntime-genai's builder
on it at fp32 and int4 for the CPU (DIR/builder_fp32/model.onnx,
DIR/builder_int4/model.onnx), writes decoder_genai and decoder_genai_int4 with
make_decoders.py, and checks them node for node: each node's name, type,
domain, inputs, outputs and attributes, each initializer's name, dims and type,
the graph's inputs and outputs, and the opsets (the weights' values differ:
the builder's come from torch's initialisation). Exit 1 and the first
difference when they do not match.
"""
import argparse
import os
import subprocess
import sys

import onnx
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))


def save_llama(folder):
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5,
                      tie_word_embeddings=False)
    LlamaForCausalLM(cfg).eval().save_pretrained(folder)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=256, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["hello world"] * 10, trainer)
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>").save_pretrained(folder)


def form(path):
    """What must match: nodes, initializers' names/dims/types, inputs, outputs, opsets."""
    m = onnx.load(path, load_external_data=False)
    attrs = lambda n: {a.name: str(onnx.helper.get_attribute_value(a)) for a in n.attribute if a.name != "value"}
    values = lambda vs: [(v.name, v.type.tensor_type.elem_type,
                          [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]) for v in vs]
    return {
        "nodes": [(n.name, n.op_type, n.domain, list(n.input), list(n.output), attrs(n)) for n in m.graph.node],
        "initializers": sorted((t.name, list(t.dims), t.data_type) for t in m.graph.initializer),
        "inputs": values(m.graph.input),
        "outputs": values(m.graph.output),
        "opsets": sorted((o.domain, o.version) for o in m.opset_import),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    hf = os.path.join(args.out, "hf")
    save_llama(hf)
    ok = True
    for precision, name in (("fp32", "decoder_genai"), ("int4", "decoder_genai_int4")):
        out = os.path.join(args.out, "builder_" + precision)
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", hf, "-i", hf, "-o", out,
                        "-p", precision, "-e", "cpu", "-c", os.path.join(args.out, "cache")], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(HERE, "make_decoders.py"), "--out", args.out, "--only", name],
                       check=True)
        theirs, ours = form(os.path.join(out, "model.onnx")), form(os.path.join(args.out, name + ".onnx"))
        for key in theirs:
            if theirs[key] == ours[key]:
                continue
            ok = False
            pairs = list(zip(theirs[key], ours[key])) if isinstance(theirs[key], list) else [(theirs[key], ours[key])]
            first = next(((a, b) for a, b in pairs if a != b), (len(theirs[key]), len(ours[key])))
            print(f"{precision}: {key} differ: builder {first[0]}, make_decoders.py {first[1]}")
        print(f"{precision}: {len(theirs['nodes'])} nodes, {len(theirs['initializers'])} initializers: "
              f"{'the same form' if all(theirs[k] == ours[k] for k in theirs) else 'DIFFERENT'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
