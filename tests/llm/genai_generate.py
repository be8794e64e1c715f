"""Greedy generation with ONNX Runtime GenAI from a folder hetplan export
--format ort-genai wrote (no tokenizer: token ids in, token ids out).

    third_party/genai-venv/bin/python tests/llm/genai_generate.py OUT --prompt 1,2,3 [--new N]

Prints {"tokens": [...]}: the ids GenAI generated after the prompt, as JSON.
Without --new, it generates to the config's search.max_length.
"""
import argparse
import json

import onnxruntime_genai as og


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--prompt", required=True, help="comma-separated token ids")
    parser.add_argument("--new", type=int, default=0, help="tokens to generate (default: to max_length)")
    args = parser.parse_args()
    prompt = [int(t) for t in args.prompt.split(",")]
    config = og.Config(args.folder)
    config.clear_providers()  # the CPU
    model = og.Model(config)
    params = og.GeneratorParams(model)
    if args.new > 0:
        params.set_search_options(max_length=len(prompt) + args.new, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(prompt)
    while not generator.is_done():
        generator.generate_next_token()
    sequence = list(generator.get_sequence(0))
    print(json.dumps({"tokens": [int(t) for t in sequence[len(prompt):]]}))


if __name__ == "__main__":
    main()
