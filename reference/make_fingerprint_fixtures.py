"""Generate tests/fixtures/fingerprint/ — the cross-language fingerprint fixtures.

    .venv/bin/python reference/make_fingerprint_fixtures.py [--check]

Writes (deterministic; `--check` compares with disk instead of writing):

* `cli/assets/probes.txt` (not in the fixtures folder: a shipped asset) — the detection probe
  set: every third line of `bench/sentences.txt` (334 real English sentences from the Python
  3.11 tutorial/HOWTOs, Debian's python3.11-doc). Copied, so the probe set never changes when the
  benchmark corpus does. The Rust CLI compiles it in.
* `rotations.json` — expected SplitMix64 outputs, Gaussians and full rotations R for small
  shapes (odd block sizes, a block of 1, a last Matryoshka dim equal to output_dim, seed 2⁶⁴−1).
  Python and Rust must both reproduce every R within 1e-12 (max |diff|, f64).
* `registry.json` — a test registry of 1,000 licenses (ids 1..=1000) whose seeds are the outputs
  of SplitMix64(REGISTRY_MASTER). Test keys only, never used for a real customer.
* `plain.bin` — a small static model (int8 embeddings, vocab = the word pieces of the probes,
  d_model 32, output_dim 48, matryoshka_dims [8, 16, 32] → blocks 8, 8, 16, 16), license 0.
* `licensed_17.bin` — the same weights fingerprinted for registry license 17.
* `impostor.bin` — the same weights fingerprinted with a seed that is not in the registry
  (license_id 4242 in its header).
* `expected.json` — what the reference's `detect` reports for each suspect (verdict, license,
  distances) and the probe embeddings' cosine checks; Rust compares verdicts and distances (1e-4).

`--check` compares machine-independently (see `check`): decisions exactly, floats within a stated
tolerance, never as text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fingerprint  # noqa: E402
import fixture_compare  # noqa: E402
import forward  # noqa: E402
import pack  # noqa: E402

ROOT = fingerprint.ROOT
OUT = os.path.join(ROOT, "tests", "fixtures", "fingerprint")
PROBES_OUT = fingerprint.DEFAULT_PROBES
SENTENCES = os.path.join(ROOT, "bench", "sentences.txt")
VOCAB_FULL = os.path.join(ROOT, "tests", "fixtures", "tokenizer", "vocab.txt")

REGISTRY_MASTER = 0x1E6B_ED00_F1A9_0001
LICENSED_ID = 17
IMPOSTOR_ID = 4242
IMPOSTOR_SEED = 0xBAD5_EED0_0000_4242

ROTATION_CASES = [
    {"seed": "0x0123456789abcdef", "output_dim": 10, "matryoshka_dims": [3, 7]},
    {"seed": "42", "output_dim": 8, "matryoshka_dims": [4, 8]},
    {"seed": "0xffffffffffffffff", "output_dim": 5, "matryoshka_dims": []},
    {"seed": "0", "output_dim": 6, "matryoshka_dims": [1, 2]},
]

MODEL = {"d_model": 32, "output_dim": 48, "matryoshka_dims": [8, 16, 32]}


def probes() -> list:
    with open(SENTENCES, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line for i, line in enumerate(lines) if i % 3 == 0]


def _fmt(x: float) -> float:
    return float(repr(float(x)))  # shortest round-trip repr: exact f64


def rotations_doc() -> dict:
    cases = []
    for c in ROTATION_CASES:
        seed = fingerprint.parse_seed(c["seed"])
        segs = fingerprint.segments(c["output_dim"], c["matryoshka_dims"])
        r = fingerprint.rotation(seed, c["output_dim"], c["matryoshka_dims"])
        cases.append({**c, "blocks": [list(s) for s in segs],
                      "block_seeds": [f"0x{s:016x}" for s in fingerprint.block_seeds(seed, len(segs))],
                      "rotation": [[_fmt(v) for v in row] for row in r]})
    return {
        "description": "Expected values for docs/fingerprinting.md; Python and Rust check them (max |diff| ≤ 1e-12).",
        "splitmix64": [{"state": f"0x{s:016x}", "outputs": [f"0x{int(v):016x}" for v in fingerprint.splitmix64(s, 4)]}
                       for s in (0, 0x0123456789ABCDEF, fingerprint.MASK64)],
        "gaussians": [{"state": f"0x{s:016x}", "values": [_fmt(v) for v in fingerprint.gaussians(s, 5)]}
                      for s in (0, 0x0123456789ABCDEF)],
        "cases": cases,
    }


def registry() -> fingerprint.Registry:
    reg = fingerprint.Registry()
    for i, s in enumerate(fingerprint.splitmix64(REGISTRY_MASTER, 1000)):
        reg.add(i + 1, int(s), "" if i else "test keys only (fixture registry): never a real customer")
    return reg


def fixture_vocab(texts) -> list:
    """Specials + exactly the word pieces the bert-base-uncased vocab gives the probes (greedy
    WordPiece on a superset of the pieces it picks gives the same pieces)."""
    full = pack._load_vocab(VOCAB_FULL)
    cfg = {"vocab": full, "d_model": 4, "n_layers": 0, "output_dim": 4, "max_seq_len": 512,
           "matryoshka_dims": [], "do_lower_case": True, "strip_accents": True}
    w = {"embedding": np.zeros((len(full), 4), np.float32), "projection.weight": np.zeros((4, 4), np.float32),
         "projection.bias": np.zeros(4, np.float32)}
    m = forward.load(pack.pack(cfg, w, embedding_quant="int8", weight_quant="fp32"))
    used = set()
    for t in texts:
        used.update(forward.tokenize(m, t))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return specials + [full[i] for i in sorted(used) if full[i] not in specials]


def models(texts, reg) -> dict:
    vocab = fixture_vocab(texts)
    rng = np.random.default_rng(20240917)
    d, out = MODEL["d_model"], MODEL["output_dim"]
    weights = {
        "embedding": rng.standard_normal((len(vocab), d)).astype(np.float32),
        "projection.weight": (rng.standard_normal((out, d)) / np.sqrt(d)).astype(np.float32),
        "projection.bias": (0.1 * rng.standard_normal(out)).astype(np.float32),
    }
    cfg = {"vocab": vocab, "d_model": d, "n_layers": 0, "n_heads": 1, "ffn_dim": 0, "output_dim": out,
           "max_seq_len": 64, "matryoshka_dims": MODEL["matryoshka_dims"], "do_lower_case": True,
           "strip_accents": True, "model_id": "fp-fixture", "version": "1.0.0"}
    kw = {"embedding_quant": "int8", "weight_quant": "fp32"}
    return {
        "plain.bin": pack.pack(cfg, weights, **kw),
        f"licensed_{LICENSED_ID}.bin": pack.pack(cfg, weights, **kw, license_id=LICENSED_ID,
                                                 fingerprint_seed=reg.by_license(LICENSED_ID).seed),
        "impostor.bin": pack.pack(cfg, weights, **kw, license_id=IMPOSTOR_ID, fingerprint_seed=IMPOSTOR_SEED),
    }


def expected_doc(texts, reg, bins) -> dict:
    plain = forward.load(bins["plain.bin"])
    h = plain.header
    mdims = list(h.matryoshka_dims[: h.n_matryoshka])
    cache = {}
    out = {"probes": len(texts), "registry_entries": len(reg.entries), "suspects": []}
    for name in ("plain.bin", f"licensed_{LICENSED_ID}.bin", "impostor.bin"):
        suspect = forward.load(bins[name])
        for dims in plain.valid_dims:
            det = fingerprint.detect(forward.embed_batch(plain, texts, dims), forward.embed_batch(suspect, texts, dims),
                                     h.output_dim, mdims, reg, rotations=cache)
            out["suspects"].append({
                "file": name, "dims": dims, "verdict": det.verdict,
                "license_id": det.best.license_id if det.verdict == "match" else None,
                "best_license_id": det.best.license_id, "best_distance": round(det.best.distance, 8),
                "runner_up_distance": round(det.runner_up.distance, 8),
                "identity_distance": round(det.identity.distance, 8),
            })
    # One, two and three probes: Yᵀ·X is rank-deficient (rank ≤ n), where an inexact SVD breaks
    # the singular-value-weighted distance. Full dims; the probes are the first n of the set.
    out["few_probes"] = []
    for n in (1, 2, 3):
        for name in ("plain.bin", f"licensed_{LICENSED_ID}.bin"):
            suspect = forward.load(bins[name])
            det = fingerprint.detect(forward.embed_batch(plain, texts[:n], h.output_dim),
                                     forward.embed_batch(suspect, texts[:n], h.output_dim),
                                     h.output_dim, mdims, reg, rotations=cache)
            out["few_probes"].append({
                "file": name, "n_probes": n, "verdict": det.verdict,
                "best_license_id": det.best.license_id, "best_distance": round(det.best.distance, 8),
                "runner_up_distance": round(det.runner_up.distance, 8),
                "identity_distance": round(det.identity.distance, 8),
                "identity_per_block": [round(x, 8) for x in det.identity.per_block],
            })
    return out


def generate() -> dict:
    texts = probes()
    reg = registry()
    bins = models(texts, reg)
    files = {
        "rotations.json": (json.dumps(rotations_doc(), indent=1) + "\n").encode("utf-8"),
        "registry.json": reg.to_json().encode("utf-8"),
        **bins,
    }
    files["expected.json"] = (json.dumps(expected_doc(texts, reg, bins), indent=1) + "\n").encode("utf-8")
    return files


#: Tolerances of `--check` (values from numpy/LAPACK/libm differ in their last bits between
#: machines; decisions — verdicts, license ids, SplitMix64 outputs, block layout — must not).
ROTATION_ATOL = 1e-12  # rotations.json: Gaussians and rotation entries (f64, |x| ≤ ~5)
DISTANCE_ATOL = 1e-6   # expected.json: distances, written rounded to 8 decimals


def check(files: dict) -> list:
    """Differences between the freshly generated `files` and the committed fixtures, compared
    machine-independently (`fixture_compare`): text files exactly, JSON floats within the
    tolerances above, `.bin` models exactly except float32 sections (a few ulps)."""
    # registry.json holds integers only: compared byte for byte (probes.txt too, in main()).
    json_atol = {"rotations.json": ROTATION_ATOL, "expected.json": DISTANCE_ATOL}.get
    return fixture_compare.compare_dir(files, OUT, json_atol)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with disk instead of writing")
    args = ap.parse_args(argv)
    files = generate()
    probes_bytes = ("\n".join(probes()) + "\n").encode("utf-8")
    with open(PROBES_OUT, "rb") as f:
        probes_ok = f.read() == probes_bytes
    if args.check:
        bad = check(files) + ([] if probes_ok else [os.path.relpath(PROBES_OUT, ROOT)])
        if bad:
            print("out of date (run reference/make_fingerprint_fixtures.py):\n  " + "\n  ".join(bad))
            return 1
        print(f"{len(files)} fingerprint fixtures up to date")
        return 0
    os.makedirs(OUT, exist_ok=True)
    with open(PROBES_OUT, "wb") as f:
        f.write(probes_bytes)
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to {os.path.relpath(OUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
