"""Runs the decoders tests/llm/make_decoders.py writes on ONNX Runtime's CPU
provider (issue 60): for each model in DIR, greedy generation of 16 new tokens
after a 7-token prompt, batch 1, twice:
  cached    a prefill of the prompt with an empty past ([1, KV heads, 0,
            head]), then one token a step, the presents fed back as the past,
            attention_mask grown by one, position_ids the past's length;
  full      no cache: the whole sequence again each step, an empty past.
The two must choose the same tokens, and not one token throughout; the largest
difference between the two runs' logits is printed with the tokens. Then a
padded batch: the prompt beside a shorter prompt left-padded with two masked
positions, each row's logits those of the row alone. Needs
onnxruntime and numpy only (a throwaway venv will do); exits 1 when a model
fails to load or run, or the checks fail.

    PYTHON tests/llm/check_decoders.py DIR [--only NAME,...]
"""

import argparse
import glob
import os
import sys

import numpy as np
import onnxruntime as ort

PROMPT = [1, 17, 42, 99, 3, 250, 7]
NEW_TOKENS = 16
TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}


class Decoder:
    """One model on ONNX Runtime's CPU provider, its cache's layout read from its inputs."""

    def __init__(self, path):
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        past = [i for i in self.session.get_inputs() if i.name.startswith("past_key_values.")]
        self.past_names = [i.name for i in past]
        self.present_names = [n.replace("past_key_values.", "present.") for n in self.past_names]
        _, self.kv_heads, _, self.head = past[0].shape
        self.dtype = TYPES[past[0].type]

    def run(self, ids, mask, positions, past=None):
        """Logits [b, s, vocabulary] and the presents; past None: empty."""
        batch = len(ids)
        if past is None:
            past = [np.zeros((batch, self.kv_heads, 0, self.head), dtype=self.dtype)] * len(self.past_names)
        feeds = {"input_ids": np.array(ids, dtype=np.int64), "attention_mask": np.array(mask, dtype=np.int64),
                 "position_ids": np.array(positions, dtype=np.int64)}
        feeds.update(zip(self.past_names, past))
        outputs = self.session.run(["logits"] + self.present_names, feeds)
        logits, presents = outputs[0], outputs[1:]
        assert logits.shape[:2] == feeds["input_ids"].shape, logits.shape
        total = feeds["attention_mask"].shape[1]
        assert all(p.shape == (batch, self.kv_heads, total, self.head) for p in presents), [p.shape for p in presents]
        return logits.astype(np.float32), presents

    def step(self, ids, past, total):
        """Logits of the last position and the presents for ids [1, s] after a
        past of total - s positions."""
        positions = [list(range(total - len(ids), total))]
        logits, presents = self.run([ids], [[1] * total], positions, past)
        return logits[0, -1], presents


def generate(decoder, cached):
    """Greedy tokens after PROMPT and each step's last logits."""
    ids, tokens, rows, past = list(PROMPT), [], [], None
    for _ in range(NEW_TOKENS):
        if cached:
            new = ids if past is None else ids[-1:]
            logits, past = decoder.step(new, past, len(ids))
        else:
            logits, _ = decoder.step(ids, None, len(ids))
        token = int(np.argmax(logits))
        tokens.append(token)
        rows.append(logits)
        ids.append(token)
    return tokens, np.stack(rows)


def check_padding(decoder):
    """A batch of the prompt and, left-padded with two masked positions, the
    prompt less its first two tokens: the second row's logits must be those
    of the shorter prompt alone (position_ids counting from its first token).
    Returns the largest difference."""
    short = PROMPT[2:]
    ids = [PROMPT, [0, 0] + short]
    mask = [[1] * len(PROMPT), [0, 0] + [1] * len(short)]
    positions = [list(range(len(PROMPT))), [0, 0] + list(range(len(short)))]
    padded, _ = decoder.run(ids, mask, positions)
    alone, _ = decoder.run([short], [[1] * len(short)], [list(range(len(short)))])
    unpadded, _ = decoder.run([PROMPT], [[1] * len(PROMPT)], [positions[0]])
    diff = max(float(np.max(np.abs(padded[1, 2:] - alone[0]))), float(np.max(np.abs(padded[0] - unpadded[0]))))
    tolerance = 0.05 if decoder.dtype == np.float16 else 1e-4
    assert diff <= tolerance, f"padded batch differs from the rows alone by {diff:.3g}"
    return diff


def check(path):
    """Checks one model; returns a line for the report, or raises."""
    decoder = Decoder(path)
    cached, cached_logits = generate(decoder, cached=True)
    full, full_logits = generate(decoder, cached=False)
    diff = float(np.max(np.abs(cached_logits - full_logits)))
    assert cached == full, f"cached {cached} != full {full} (max logits difference {diff:.3g})"
    assert len(set(cached)) > 1, f"one token throughout: {cached}"
    padding = check_padding(decoder)
    spread = float(np.std(cached_logits))
    return f"tokens {cached} (logits std {spread:.3g}, cached - full max {diff:.3g}, padded batch {padding:.3g})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--only", default="", help="comma-separated model names")
    args = parser.parse_args()
    names = [n.removesuffix(".onnx") for n in args.only.split(",") if n]
    paths = [os.path.join(args.dir, n + ".onnx") for n in names] or sorted(glob.glob(os.path.join(args.dir, "*.onnx")))
    print(f"onnxruntime {ort.__version__}, prompt {PROMPT}")
    failed = 0
    for path in paths:
        name = os.path.basename(path)
        try:
            print(f"{name}: {check(path)}")
        except Exception as error:  # noqa: BLE001 - a line per model, then the next
            failed += 1
            print(f"{name}: FAILED: {type(error).__name__}: {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
