"""Fingerprint experiments for docs/fingerprinting.md: similarity preservation, detection accuracy
with a 1,000-entry registry, and robustness (perturbed suspects, fewer probes, truncated prefixes).

    .venv/bin/python reference/fingerprint_eval.py [--model M.bin] [--trials 40] [--json OUT.json]

Model: `--model`, else `public/models/lightembed-en-2l.bin` if it exists, else the fixture
`tests/fixtures/fingerprint/plain.bin`. Registry: `tests/fixtures/fingerprint/registry.json`
(1,000 test licenses). Probes: the committed probe set.

How suspects are simulated: the probes' pooled hidden states `h` are computed once with the
reference forward pass (checked bit for bit against `forward.forward`); a licensed suspect's
vectors are `normalize((W'·h + b')[:dims])` in float32 with `W' = R·W`, `b' = R·b` rounded to f32
exactly as `pack.py --fingerprint-seed` stores them (a few are also packed for real and embedded
with `forward.embed` to confirm). Perturbations of the suspect:

* `fp16` / `int8`: its projection re-rounded (fp16; int8 per-row absmax/127, round-half-even,
  bias fp16) — a rotated model re-quantised by someone else;
* `noise σ`: Gaussian noise of total norm ≈ σ added to each unit vector (`σ·g/√dims`);
* `prefix d`: only the first `d` dims observed (a valid dims), so only the blocks inside it.

Scoring reproduces `fingerprint.detect` (vectorised over the registry; cross-checked on samples).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

# Many small SVDs/matmuls: OpenBLAS's default thread pool only oversubscribes a busy machine
# (measured 20× slower on 2 loaded cores). Results do not depend on it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fingerprint  # noqa: E402
import forward  # noqa: E402
import pack  # noqa: E402

ROOT = fingerprint.ROOT
FIXDIR = os.path.join(ROOT, "tests", "fixtures", "fingerprint")
REAL_MODEL = os.path.join(ROOT, "public", "models", "lightembed-en-2l.bin")
PROBE_GRID = [2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 334]


def pooled(model: forward.Model, ids) -> np.ndarray:
    """forward.forward without the projection (same operations, same order)."""
    h = model.header
    x = model.embedding[np.asarray(ids, dtype=np.int64)]
    for layer in model.layers:
        a = forward.layer_norm(x, layer.ln1_weight, layer.ln1_bias)
        x = (x + forward.attention(a, layer, h.n_heads)).astype(np.float32)
        f = forward.layer_norm(x, layer.ln2_weight, layer.ln2_bias)
        f = forward.gelu(forward.bitlinear(f, layer.up))
        x = (x + forward.bitlinear(f, layer.down)).astype(np.float32)
    x = forward.layer_norm(x, model.final_ln_weight, model.final_ln_bias)
    return x.mean(axis=0, dtype=np.float32)


def normalize_rows(p: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.sum(p * p, axis=1, dtype=np.float32))
    return (p / np.maximum(n, forward.NORMALIZE_EPS)[:, None]).astype(np.float32)


class Setup:
    def __init__(self, model_path: str, registry: fingerprint.Registry):
        with open(model_path, "rb") as f:
            self.data = f.read()
        self.model = forward.load(self.data)
        h = self.model.header
        self.output_dim = h.output_dim
        self.mdims = list(h.matryoshka_dims[: h.n_matryoshka])
        self.segs = fingerprint.segments(self.output_dim, self.mdims)
        self.probes = fingerprint.load_probes()
        t = time.time()
        self.H = np.stack([pooled(self.model, forward.tokenize(self.model, p)) for p in self.probes])
        self.pool_seconds = time.time() - t
        W, b = self.model.projection_weight, self.model.projection_bias
        for i in range(3):  # pooled() + projection == the reference forward pass, bit for bit
            ref = forward.forward(self.model, forward.tokenize(self.model, self.probes[i]))
            assert np.array_equal((self.H[i] @ W.T + b).astype(np.float32), ref)
        self.W, self.b = W, b
        self.registry = registry
        t = time.time()
        self.stacks = [np.zeros((len(registry.entries), bb - a, bb - a), np.float64) for a, bb in self.segs]
        for k, e in enumerate(registry.entries):
            for s, blk in zip(self.stacks, fingerprint.rotation_blocks(e.seed, self.output_dim, self.mdims)):
                s[k] = blk
        self.registry_seconds = time.time() - t
        self.flat = [st.reshape(len(registry.entries), -1) for st in self.stacks]
        self.ids = np.array([e.license_id for e in registry.entries])

    # -- suspects -------------------------------------------------------------------------------

    def fingerprinted_projection(self, blocks) -> tuple:
        """(R·W, R·b) rounded to f32 as pack.apply_fingerprint does."""
        w = self.W.astype(np.float64)
        b = self.b.astype(np.float64)
        w2, b2 = np.empty_like(w), np.empty_like(b)
        for (lo, hi), blk in zip(self.segs, blocks):
            w2[lo:hi] = blk @ w[lo:hi]
            b2[lo:hi] = blk @ b[lo:hi]
        return w2.astype(np.float32), b2.astype(np.float32)

    def vectors(self, w, b, dims, rows=None) -> np.ndarray:
        H = self.H if rows is None else self.H[rows]
        return normalize_rows((H @ w.T + b).astype(np.float32)[:, :dims])

    def suspect(self, blocks, perturb: str, dims: int, rows, rng) -> np.ndarray:
        w, b = self.fingerprinted_projection(blocks)
        if perturb == "fp16":
            w, b = w.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
        elif perturb == "int8":
            scale = (np.abs(w).max(axis=1) / 127).astype(np.float32)
            w = (np.clip(np.round(w / scale[:, None]), -127, 127) * scale[:, None]).astype(np.float32)
            b = b.astype(np.float16).astype(np.float32)
        y = self.vectors(w, b, dims, rows)
        if perturb.startswith("noise"):
            sigma = float(perturb.split("=")[1])
            y = (y + sigma * rng.standard_normal(y.shape) / math.sqrt(dims)).astype(np.float32)
        return y

    # -- scoring (fingerprint.detect, vectorised over the registry) ------------------------------

    def detect(self, x, y, metric="weighted", **kw) -> dict:
        return self.detect_many([(x, y)], metric, **kw)[0]

    def detect_many(self, pairs, metric="weighted", max_distance=fingerprint.MAX_DISTANCE,
                    min_margin=fingerprint.MIN_MARGIN) -> list:
        """fingerprint.detect for many (reference, suspect) pairs of one dims, batched: the
        candidates' ⟨R_b, T⟩ for all pairs are one matrix product per block."""
        dims = pairs[0][1].shape[1]
        blocks = [(a, b) for a, b in self.segs if b <= dims]
        n_reg = len(self.ids)
        d_reg = np.zeros((len(pairs), n_reg))
        d_id = np.zeros(len(pairs))
        for k, (a, b) in enumerate(blocks):
            fits = [fingerprint.BlockFit.from_vectors(x[:, a:b], y[:, a:b], metric) for x, y in pairs]
            targets = np.stack([f.target().reshape(-1) / f.norm if f.norm > 0 else 0 * f.target().reshape(-1)
                                for f in fits])  # [P, m²]
            sims = targets @ self.flat[k].T  # [P, n_reg]
            d_reg += np.sqrt(np.maximum(0.0, 2.0 - 2.0 * sims))
            d_id += np.array([f.distance(np.eye(b - a)) for f in fits])
        d_reg /= len(blocks)
        d_id /= len(blocks)
        ids = np.concatenate([[0], self.ids])
        out = []
        for p in range(len(pairs)):
            cand = np.concatenate([[d_id[p]], d_reg[p]])
            order = np.lexsort((ids, cand))
            best, runner = order[0], order[1]
            if cand[best] > max_distance:
                verdict = "no_match"
            elif cand[runner] - cand[best] < min_margin:
                verdict = "ambiguous"
            elif ids[best] == 0:
                verdict = "unfingerprinted"
            else:
                verdict = "match"
            out.append({"verdict": verdict, "best": int(ids[best]), "distance": float(cand[best]),
                        "runner_up": float(cand[runner]), "identity": float(d_id[p])})
        return out


def similarity_check(s: Setup, seed: int) -> dict:
    """Pack a real fingerprinted file and compare cosines/rankings with the plain model."""
    plain = s.model
    h = plain.header
    w2, b2 = fingerprint.apply_rotation(s.W, s.b, seed, s.mdims)  # what pack.py --fingerprint-seed stores
    # Rebuild the file with only the PROJECTION section replaced (same bytes otherwise).
    fp_model = forward.load(replace_projection(s.data, w2, b2))
    texts = s.probes[:150]
    out = {}
    for dims in plain.valid_dims:
        a = forward.embed_batch(plain, texts, dims).astype(np.float64)
        b = forward.embed_batch(fp_model, texts, dims).astype(np.float64)
        ca, cb = a @ a.T, b @ b.T
        same_rank = sum(int(np.array_equal(np.argsort(-ca[i], kind="stable"), np.argsort(-cb[i], kind="stable")))
                        for i in range(len(texts)))
        top10 = sum(int(np.array_equal(np.argsort(-ca[i], kind="stable")[:10], np.argsort(-cb[i], kind="stable")[:10]))
                    for i in range(len(texts)))
        # pairs (j, k) ranked differently for query i although the plain scores differ by > 1e-5
        da = ca[:, :, None] - ca[:, None, :]
        db = cb[:, :, None] - cb[:, None, :]
        swaps = int(np.sum((np.abs(da) > 1e-5) & (np.sign(da) != np.sign(db))))
        out[dims] = {"max_abs_dcos": float(np.abs(ca - cb).max()), "max_coord_change": float(np.abs(a - b).max()),
                     "identical_full_ranking": f"{same_rank}/{len(texts)}", "identical_top10": f"{top10}/{len(texts)}",
                     "order_swaps_beyond_1e-5": swaps}
    return out


def replace_projection(data: bytes, w: np.ndarray, b: np.ndarray) -> bytes:
    """The same file with its PROJECTION bytes replaced (and the hash redone); header untouched
    except has_fingerprint and license_id 1 (what the packer would write)."""
    import struct
    m = forward.load(data)
    e = next(e for e in m.sections if e.type == forward.SectionType.PROJECTION)
    new = pack.f32_bytes(w, b)
    assert len(new) == e.length
    buf = bytearray(data)
    buf[e.offset:e.offset + e.length] = new
    buf[23] |= forward.FLAG_HAS_FINGERPRINT
    struct.pack_into("<I", buf, 40, 1)
    return pack.rehash(bytes(buf))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="plain model (default: public/models/lightembed-en-2l.bin, else the fixture)")
    ap.add_argument("--trials", type=int, default=40, help="licensed suspects (and impostors) per grid cell")
    ap.add_argument("--metric", default="weighted", choices=["weighted", "frobenius", "both"])
    ap.add_argument("--json", help="write all results here")
    ap.add_argument("--similarity-only", action="store_true", help="stop after the similarity table")
    args = ap.parse_args(argv)
    model_path = args.model or (REAL_MODEL if os.path.exists(REAL_MODEL) else os.path.join(FIXDIR, "plain.bin"))
    reg = fingerprint.Registry.load(os.path.join(FIXDIR, "registry.json"))
    s = Setup(model_path, reg)
    h = s.model.header
    print(f"model {os.path.relpath(model_path, ROOT)}: {h.model_id} v{h.version}, d_model {h.d_model}, "
          f"{h.n_layers} layers, output_dim {h.output_dim}, valid dims {s.model.valid_dims}, blocks {s.segs}")
    print(f"{len(s.probes)} probes pooled in {s.pool_seconds:.1f}s; {len(reg.entries)} registry rotations "
          f"in {s.registry_seconds:.1f}s")
    results = {"model": os.path.relpath(model_path, ROOT), "blocks": s.segs, "probes": len(s.probes)}
    metrics = ["weighted", "frobenius"] if args.metric == "both" else [args.metric]

    # 1. similarity preserved (a real packed + loaded fingerprinted model)
    sim = similarity_check(s, reg.entries[16].seed)
    results["similarity"] = sim
    print("\n## similarity (150 probe texts, all pairs)\n| dims | max abs Δcos | max coordinate change | "
          "identical full ranking | identical top-10 | order swaps beyond 1e-5 |\n|---|---|---|---|---|---|")
    for dims, r in sim.items():
        print(f"| {dims} | {r['max_abs_dcos']:.1e} | {r['max_coord_change']:.3f} | {r['identical_full_ranking']} | "
              f"{r['identical_top10']} | {r['order_swaps_beyond_1e-5']} |")

    if args.similarity_only:
        return 0
    rng = np.random.default_rng(7)
    full = s.output_dim
    x_full = s.vectors(s.W, s.b, full)

    # cross-check the vectorised scorer with fingerprint.detect on two suspects
    for k in (0, 16):
        blocks = [st[k] for st in s.stacks]
        y = s.suspect(blocks, "clean", full, None, rng)
        ref = fingerprint.detect(x_full, y, full, s.mdims, reg)
        mine = s.detect(x_full, y)
        assert ref.best.license_id == mine["best"] and abs(ref.best.distance - mine["distance"]) < 1e-6, (ref, mine)
        assert abs(ref.runner_up.distance - mine["runner_up"]) < 1e-6

    # 2. accuracy over the whole registry, all probes, full dims
    for metric in metrics:
        t = time.time()
        res = []
        for lo in range(0, len(reg.entries), 50):
            ks = range(lo, min(lo + 50, len(reg.entries)))
            res += s.detect_many([(x_full, s.suspect([st[k] for st in s.stacks], "clean", full, None, rng))
                                  for k in ks], metric)
        ok = sum(r["verdict"] == "match" and r["best"] == reg.entries[k].license_id for k, r in enumerate(res))
        imp_pairs = []
        for i in range(200):
            seed = int(fingerprint.splitmix64(0xDEC0_1000 + i, 1)[0])
            imp_pairs.append((x_full, s.suspect(fingerprint.rotation_blocks(seed, full, s.mdims), "clean", full,
                                                None, rng)))
        imp = []
        for lo in range(0, len(imp_pairs), 50):
            imp += s.detect_many(imp_pairs[lo:lo + 50], metric)
        plain = s.detect(x_full, x_full, metric)
        acc = {"metric": metric, "licensed_correct": f"{ok}/{len(res)}",
               "licensed_max_distance": max(r["distance"] for r in res),
               "licensed_min_runner_up": min(r["runner_up"] for r in res),
               "impostor_false_matches": f"{sum(r['verdict'] == 'match' for r in imp)}/{len(imp)}",
               "impostor_min_best_distance": min(r["distance"] for r in imp),
               "plain_verdict": plain["verdict"], "seconds": round(time.time() - t, 1)}
        results.setdefault("accuracy", []).append(acc)
        print(f"\n## accuracy, registry of {len(reg.entries)} ({metric})\n{json.dumps(acc)}")

    # 3. robustness: smallest probe count that identifies every trial correctly
    conditions = ["clean", "fp16", "int8"] + [f"noise={v}" for v in (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)]
    conditions += [f"prefix={d}" for d in s.model.valid_dims if d < full]
    trial_ids = rng.choice(len(reg.entries), size=args.trials, replace=False)
    imp_seeds = [int(v) for v in fingerprint.splitmix64(0xFA1E_0000, args.trials)]
    imp_blocks = [fingerprint.rotation_blocks(sd, full, s.mdims) for sd in imp_seeds]
    grid = [n for n in PROBE_GRID if n <= len(s.probes)]
    results["robustness"] = []
    for metric in metrics:
        print(f"\n## robustness ({metric}; {args.trials} licensed suspects + {args.trials} impostors per cell, "
              f"random probe subsets)\n| condition | smallest n: all correct | correct at n=" +
              " / ".join(str(n) for n in grid) + " | false matches (all n) | right license ranked first, n=all | "
              "its distance, n=all: median / max | min runner-up, n=all |\n|---|---|---|---|---|---|---|")
        for cond in conditions:
            dims = int(cond.split("=")[1]) if cond.startswith("prefix") else full
            perturb = "clean" if cond.startswith("prefix") else cond
            per_n, fm = [], 0
            dist_all, runner_all = [], []
            for n in grid:
                pairs, ipairs = [], []
                for t_i, k in enumerate(trial_ids):
                    rows = np.sort(rng.choice(len(s.probes), size=n, replace=False))
                    x = s.vectors(s.W, s.b, dims, rows)
                    pairs.append((x, s.suspect([st[k] for st in s.stacks], perturb, dims, rows, rng)))
                    ipairs.append((x, s.suspect(imp_blocks[t_i], perturb, dims, rows, rng)))
                res = s.detect_many(pairs, metric)
                good = sum(r["verdict"] == "match" and r["best"] == reg.entries[k].license_id
                           for r, k in zip(res, trial_ids))
                if n == grid[-1]:
                    dist_all = [r["distance"] for r in res]
                    runner_all = [r["runner_up"] for r in res]
                    rank1 = sum(r["best"] == reg.entries[k].license_id for r, k in zip(res, trial_ids))
                fm += sum(r["verdict"] == "match" for r in s.detect_many(ipairs, metric))
                per_n.append(good)
            smallest = next((n for n, g in zip(grid, per_n) if g == len(trial_ids)
                             and all(gg == len(trial_ids) for gg in per_n[grid.index(n):])), None)
            row = {"metric": metric, "condition": cond, "smallest_n_all_correct": smallest,
                   "correct_by_n": dict(zip(grid, per_n)), "false_matches": fm,
                   "median_distance_all_probes": float(np.median(dist_all)),
                   "max_distance_all_probes": float(np.max(dist_all)), "min_runner_up": float(min(runner_all)),
                   "rank1_all_probes": rank1}
            results["robustness"].append(row)
            print(f"| {cond} | {smallest} | " + " / ".join(str(g) for g in per_n) +
                  f" | {fm}/{len(trial_ids) * len(grid)} | {rank1}/{len(trial_ids)} | "
                  f"{row['median_distance_all_probes']:.3f} / {row['max_distance_all_probes']:.3f} | "
                  f"{row['min_runner_up']:.3f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
