"""lightembed customer fingerprints (spec §7, ARCHITECTURE decision 9) — the normative Python side.

A fingerprinted model stores `W' = R·W`, `b' = R·b` in its PROJECTION section, where `R` is a
block-diagonal orthogonal matrix over the Matryoshka segments `[0,d₁), [d₁,d₂), …, [d_k,output_dim)`
derived deterministically from a 64-bit seed that the license registry keeps next to `license_id`.
Cosine similarity is preserved exactly at every valid `dims`; the engine never looks at any of it.

Everything here is specified bit for bit in `docs/fingerprinting.md` (the Rust CLI,
`cli/src/fingerprint.rs`, implements the same algorithm; `tests/fixtures/fingerprint/rotations.json`
holds expected values both sides check):

* PRNG: SplitMix64 (`GAMMA`, `MIX1`, `MIX2`, shifts 30/27/31).
* Block seeds: the i-th output of a SplitMix64 seeded with the license seed is block i's seed.
* Gaussians: Box–Muller in f64 from two consecutive outputs `a`, `b` of the block's SplitMix64:
  `u1 = ((a >> 11) + 1)·2⁻⁵³ ∈ (0,1]`, `u2 = (b >> 11)·2⁻⁵³ ∈ [0,1)`,
  `r = sqrt(−2·ln u1)`, `z0 = r·cos(2π·u2)`, `z1 = r·sin(2π·u2)`; emitted z0, z1, z0, z1, …
* Block `m×m`: Gaussian matrix `G` filled row-major; `Q` = Gram–Schmidt of `G`'s columns in order
  0..m−1, each column orthogonalised twice against all previous ones (classical Gram–Schmidt with
  re-orthogonalisation, "CGS2") and divided by its norm. That is the QR factor with `diag(R) > 0`,
  so `Q` is Haar-distributed on O(m). The block is `Q` itself.

Detection: embed a fixed probe set with the plain reference model (`X`) and the suspect (`Y`),
for every Matryoshka block solve orthogonal Procrustes `R̂ = U·Vᵀ` with `U·S·Vᵀ = Y_bᵀ·X_b`, and
score each registry entry by its distance to R̂ (`BlockFit`: the singular-value-weighted form of
`‖R̂_b − R_b‖_F / √m_b`), averaged over the blocks observed.

CLI:
    python reference/fingerprint.py registry add --registry REG.json --license-id N [--seed S] [--note TEXT]
    python reference/fingerprint.py registry list --registry REG.json
    python reference/fingerprint.py rotation --seed S --output-dim N --matryoshka-dims 32,64
    python reference/fingerprint.py detect --suspect S.bin --reference PLAIN.bin --registry REG.json \\
        [--suspect-vectors V.jsonl] [--probes FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import sys
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: The probe set the CLI ships (`cli/assets/probes.txt`, compiled into `lightembed`).
DEFAULT_PROBES = os.path.join(ROOT, "cli", "assets", "probes.txt")

# ---------------------------------------------------------------------------------------------
# PRNG and Gaussians
# ---------------------------------------------------------------------------------------------

MASK64 = (1 << 64) - 1
#: SplitMix64 increment (the 64-bit golden ratio).
GAMMA = 0x9E3779B97F4A7C15
#: SplitMix64 finaliser multipliers.
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
#: 2⁻⁵³ — maps a 53-bit integer to [0, 1).
TWO_POW_M53 = 1.0 / (1 << 53)
#: 2π as the nearest f64 (Python `math.tau`, Rust `std::f64::consts::TAU`).
TAU = 6.283185307179586

_U64 = np.uint64


def splitmix64(state: int, count: int) -> np.ndarray:
    """The first `count` outputs of SplitMix64 started at `state`, as uint64.

    next(): state += GAMMA; z = state; z = (z ^ z>>30)·MIX1; z = (z ^ z>>27)·MIX2; return z ^ z>>31
    (all arithmetic mod 2⁶⁴). Vectorised: the k-th state (1-based) is `state + k·GAMMA`.
    """
    if not 0 <= state <= MASK64:
        raise ValueError(f"SplitMix64 state {state} is not a u64")
    with np.errstate(over="ignore"):
        k = np.arange(1, count + 1, dtype=_U64)
        z = _U64(state) + k * _U64(GAMMA)
        z = (z ^ (z >> _U64(30))) * _U64(MIX1)
        z = (z ^ (z >> _U64(27))) * _U64(MIX2)
        return z ^ (z >> _U64(31))


def gaussians(state: int, count: int) -> np.ndarray:
    """`count` standard normal f64 values from SplitMix64(state) by Box–Muller (module docstring).

    Uses ⌈count/2⌉ pairs of outputs; with an odd count the last pair's `z1` is dropped.
    """
    pairs = (count + 1) // 2
    x = splitmix64(state, 2 * pairs).reshape(pairs, 2)
    u1 = ((x[:, 0] >> _U64(11)) + _U64(1)).astype(np.float64) * TWO_POW_M53  # (0, 1]
    u2 = (x[:, 1] >> _U64(11)).astype(np.float64) * TWO_POW_M53  # [0, 1)
    r = np.sqrt(-2.0 * np.log(u1))
    theta = TAU * u2
    z = np.empty((pairs, 2), dtype=np.float64)
    z[:, 0] = r * np.cos(theta)
    z[:, 1] = r * np.sin(theta)
    return z.reshape(-1)[:count]


# ---------------------------------------------------------------------------------------------
# The rotation
# ---------------------------------------------------------------------------------------------


def segments(output_dim: int, matryoshka_dims: Sequence[int]) -> List[Tuple[int, int]]:
    """Matryoshka blocks `[(0,d₁), (d₁,d₂), …, (d_k, output_dim)]` (decision 9).

    `matryoshka_dims` are the used entries (ascending, each ≤ output_dim); a last entry equal to
    `output_dim` adds no block.
    """
    output_dim = int(output_dim)
    dims = [int(d) for d in matryoshka_dims]
    if output_dim <= 0:
        raise ValueError("output_dim must be positive")
    prev = 0
    for d in dims:
        if not prev < d <= output_dim:
            raise ValueError(f"matryoshka_dims {dims} must be strictly ascending in 1..={output_dim}")
        prev = d
    bounds = [0] + [d for d in dims if d < output_dim] + [output_dim]
    return list(zip(bounds[:-1], bounds[1:]))


def block_seeds(seed: int, n_blocks: int) -> List[int]:
    """Block i's SplitMix64 state = the i-th output (0-based) of SplitMix64(seed)."""
    return [int(s) for s in splitmix64(seed, n_blocks)]


def haar_orthogonal(state: int, m: int) -> np.ndarray:
    """The m×m orthogonal block for SplitMix64 state `state` (f64), see the module docstring."""
    g = gaussians(state, m * m).reshape(m, m)  # row-major: G[i, j] = g[i·m + j]
    q = np.zeros((m, m), dtype=np.float64)
    for j in range(m):
        v = g[:, j].copy()
        for _ in range(2):  # CGS2: project out all previous columns, twice
            if j:
                c = q[:, :j].T @ v
                v = v - q[:, :j] @ c
        norm = math.sqrt(float(v @ v))
        if not norm > 0.0:
            raise ArithmeticError("degenerate Gaussian block (probability zero)")
        q[:, j] = v / norm
    return q


def rotation_blocks(seed: int, output_dim: int, matryoshka_dims: Sequence[int]) -> List[np.ndarray]:
    """The diagonal blocks of R(seed, output_dim, matryoshka_dims), in segment order."""
    segs = segments(output_dim, matryoshka_dims)
    return [haar_orthogonal(s, b - a) for s, (a, b) in zip(block_seeds(parse_seed(seed), len(segs)), segs)]


def rotation(seed: int, output_dim: int, matryoshka_dims: Sequence[int]) -> np.ndarray:
    """R as a dense [output_dim, output_dim] f64 matrix (block-diagonal, orthogonal)."""
    r = np.zeros((output_dim, output_dim), dtype=np.float64)
    for (a, b), blk in zip(segments(output_dim, matryoshka_dims), rotation_blocks(seed, output_dim, matryoshka_dims)):
        r[a:b, a:b] = blk
    return r


def apply_rotation(weight: np.ndarray, bias: np.ndarray, seed: int,
                   matryoshka_dims: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """Fold R into a projection: returns (R·W, R·b) computed in f64, rounded to f32.

    weight: [output_dim, d_model]; bias: [output_dim].
    """
    w = np.asarray(weight, dtype=np.float64)
    b = np.asarray(bias, dtype=np.float64)
    out = w.shape[0]
    w2 = np.empty_like(w)
    b2 = np.empty_like(b)
    for (lo, hi), blk in zip(segments(out, matryoshka_dims), rotation_blocks(seed, out, matryoshka_dims)):
        w2[lo:hi] = blk @ w[lo:hi]
        b2[lo:hi] = blk @ b[lo:hi]
    return w2.astype(np.float32), b2.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Seeds and the registry
# ---------------------------------------------------------------------------------------------

REGISTRY_FORMAT = "lightembed-fingerprint-registry/1"


def parse_seed(value) -> int:
    """A u64 seed from an int, a decimal string or a `0x` hex string."""
    if isinstance(value, bool):
        raise ValueError("seed must be an integer, not a boolean")
    if isinstance(value, (int, np.integer)):
        s = int(value)
    elif isinstance(value, str):
        t = value.strip().lower().replace("_", "")
        try:
            s = int(t[2:], 16) if t.startswith("0x") else int(t, 10)
        except ValueError:
            raise ValueError(f"seed {value!r} is not a decimal or 0x-hex integer") from None
    else:
        raise ValueError(f"seed {value!r} must be an integer or a string")
    if not 0 <= s <= MASK64:
        raise ValueError(f"seed {value!r} does not fit in 64 bits")
    return s


def format_seed(seed: int) -> str:
    """The registry's spelling of a seed: `0x` + 16 lower-case hex digits."""
    return f"0x{parse_seed(seed):016x}"


@dataclass
class Entry:
    """One registry row: a license and the seed of its rotation."""

    license_id: int
    seed: int
    note: str = ""


@dataclass
class Registry:
    """license_id → seed. File format: docs/fingerprinting.md, "Registry"."""

    entries: List[Entry] = field(default_factory=list)

    def by_license(self, license_id: int) -> Entry:
        for e in self.entries:
            if e.license_id == license_id:
                return e
        raise KeyError(f"license_id {license_id} is not in the registry")

    def add(self, license_id: int, seed: Optional[int] = None, note: str = "") -> Entry:
        """Append an entry (a fresh random seed from `secrets` unless given); ids are unique."""
        license_id = _check_license_id(license_id)
        if any(e.license_id == license_id for e in self.entries):
            raise ValueError(f"license_id {license_id} is already in the registry")
        entry = Entry(license_id, secrets.randbits(64) if seed is None else parse_seed(seed), note)
        if any(e.seed == entry.seed for e in self.entries):
            raise ValueError(f"seed {format_seed(entry.seed)} is already in the registry")
        self.entries.append(entry)
        return entry

    def to_json(self) -> str:
        """The registry file: pretty-printed, one entry per line."""
        rows = []
        for e in self.entries:
            row = {"license_id": e.license_id, "seed": format_seed(e.seed)}
            if e.note:
                row["note"] = e.note
            rows.append("  " + json.dumps(row, ensure_ascii=False))
        body = ",\n".join(rows)
        return f'{{\n "format": "{REGISTRY_FORMAT}",\n "entries": [\n{body}\n ]\n}}\n' if rows else \
            f'{{\n "format": "{REGISTRY_FORMAT}",\n "entries": []\n}}\n'

    @staticmethod
    def from_json(text: str) -> "Registry":
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("format") != REGISTRY_FORMAT:
            raise ValueError(f"not a fingerprint registry (\"format\" must be {REGISTRY_FORMAT!r})")
        reg = Registry()
        for i, row in enumerate(doc.get("entries", [])):
            if not isinstance(row, dict) or "license_id" not in row or "seed" not in row:
                raise ValueError(f"registry entry {i}: needs \"license_id\" and \"seed\"")
            note = row.get("note", "")
            if not isinstance(note, str):
                raise ValueError(f"registry entry {i}: \"note\" must be a string")
            reg.add(row["license_id"], row["seed"], note)
        return reg

    @staticmethod
    def load(path: str) -> "Registry":
        with open(path, encoding="utf-8") as f:
            return Registry.from_json(f.read())

    def save(self, path: str) -> None:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.to_json())
        os.replace(tmp, path)


def _check_license_id(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"license_id {value!r} must be an integer")
    v = int(value)
    if not 1 <= v <= 0xFFFFFFFF:
        raise ValueError(f"license_id {v} must be in 1..=4294967295 (0 means unlicensed)")
    return v


# ---------------------------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------------------------

#: Default decision rule (docs/fingerprinting.md, "Detection"): match iff the best registry
#: distance is ≤ MAX_DISTANCE and the runner-up (any other candidate, the identity included) is at
#: least MIN_MARGIN farther. Unrelated rotations sit near √2 ≈ 1.414.
MAX_DISTANCE = 0.5
MIN_MARGIN = 0.3


def load_probes(path: str = DEFAULT_PROBES) -> List[str]:
    """One probe text per line (the final newline is not a probe)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def procrustes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The orthogonal Q minimising ‖Y − X·Qᵀ‖_F (rows are probes: y_i ≈ Q·x_i): Q = U·Vᵀ for
    U·S·Vᵀ = Yᵀ·X, in f64."""
    m = np.asarray(y, dtype=np.float64).T @ np.asarray(x, dtype=np.float64)
    u, _, vt = np.linalg.svd(m)
    return u @ vt


def observed_segments(output_dim: int, matryoshka_dims: Sequence[int], dims: int) -> List[Tuple[int, int]]:
    """The blocks that lie inside an observed prefix of length `dims` (a valid dims)."""
    segs = segments(output_dim, matryoshka_dims)
    if dims not in {b for _, b in segs}:
        raise ValueError(f"suspect vectors have {dims} dims; expected one of {[b for _, b in segs]}")
    return [(a, b) for a, b in segs if b <= dims]


@dataclass
class Candidate:
    """A scored registry entry (license_id 0 = the identity, i.e. the unfingerprinted model)."""

    license_id: int
    distance: float
    per_block: List[float]


@dataclass
class Detection:
    """Result of `detect`."""

    verdict: str  # "match" | "no_match" | "ambiguous" | "unfingerprinted"
    best: Candidate
    runner_up: Optional[Candidate]
    identity: Candidate
    blocks: List[Tuple[int, int]]
    n_probes: int
    max_distance: float
    min_margin: float

    @property
    def margin(self) -> Optional[float]:
        return None if self.runner_up is None else self.runner_up.distance - self.best.distance

    def to_dict(self) -> dict:
        c = lambda k: None if k is None else {"license_id": k.license_id, "distance": k.distance,  # noqa: E731
                                              "per_block": k.per_block}
        return {
            "verdict": self.verdict,
            "license_id": self.best.license_id if self.verdict == "match" else None,
            "best": c(self.best), "runner_up": c(self.runner_up), "margin": self.margin,
            "identity_distance": self.identity.distance,
            "blocks": [list(b) for b in self.blocks], "n_probes": self.n_probes,
            "max_distance": self.max_distance, "min_margin": self.min_margin,
        }


METRICS = ("weighted", "frobenius")


@dataclass
class BlockFit:
    """Orthogonal Procrustes for one Matryoshka block.

    cross = Yᵀ·X (Σ y_i x_iᵀ over probes), with SVD U·diag(s)·Vᵀ; R̂ = U·Vᵀ maximises ⟨Q, cross⟩
    over orthogonal Q. A candidate Q is scored by

        d(Q) = sqrt(max(0, 2 − 2·⟨Q, T⟩ / N))

    * metric "weighted" (default): T = cross, N = Σ s = ⟨R̂, cross⟩ — each direction of R̂
      counts as much as the probes pin it down (directions the probes do not span count for
      nothing);
    * metric "frobenius": T = R̂, N = m, i.e. d(Q) = ‖R̂ − Q‖_F / √m exactly.

    Both are 0 for Q = R̂, ≈ √2 for an unrelated rotation, and coincide when the probes are
    isotropic (all s equal).
    """

    cross: np.ndarray
    rhat: np.ndarray
    singular: np.ndarray
    metric: str = "weighted"

    @staticmethod
    def from_vectors(x: np.ndarray, y: np.ndarray, metric: str = "weighted") -> "BlockFit":
        if metric not in METRICS:
            raise ValueError(f"metric {metric!r}: choose one of {METRICS}")
        cross = np.asarray(y, dtype=np.float64).T @ np.asarray(x, dtype=np.float64)
        u, s, vt = np.linalg.svd(cross)
        return BlockFit(cross, u @ vt, s, metric)

    def target(self) -> np.ndarray:
        return self.cross if self.metric == "weighted" else self.rhat

    @property
    def norm(self) -> float:
        return float(self.singular.sum()) if self.metric == "weighted" else float(self.rhat.shape[0])

    def distance(self, q: np.ndarray) -> float:
        n = self.norm
        sim = float(np.sum(q * self.target())) / n if n > 0 else 0.0
        return math.sqrt(max(0.0, 2.0 - 2.0 * sim))


def detect(reference: np.ndarray, suspect: np.ndarray, output_dim: int, matryoshka_dims: Sequence[int],
           registry: Registry, *, max_distance: float = MAX_DISTANCE, min_margin: float = MIN_MARGIN,
           metric: str = "weighted", rotations: Optional[dict] = None) -> Detection:
    """Score every registry entry (and the identity) against R̂ recovered from the probes.

    reference / suspect: [n_probes, dims] embeddings of the same probes by the plain reference
    model and the suspect (dims = a valid dims of the model; only blocks inside it are used).
    A candidate's distance is the mean over those blocks of `BlockFit.distance`.
    rotations: optional cache {license_id: rotation_blocks(...)} for repeated calls.
    """
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(suspect, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"reference vectors {x.shape} and suspect vectors {y.shape}: need the same [n ≥ 1, dims]")
    blocks = observed_segments(output_dim, matryoshka_dims, y.shape[1])
    fits = [BlockFit.from_vectors(x[:, a:b], y[:, a:b], metric) for a, b in blocks]

    def score(license_id: int, qs) -> Candidate:
        per = [f.distance(q) for f, q in zip(fits, qs)]
        return Candidate(license_id, float(np.mean(per)), per)

    identity = score(0, [np.eye(b - a) for a, b in blocks])
    cands = [identity]
    for e in registry.entries:
        full = rotations.get(e.license_id) if rotations is not None else None
        if full is None:
            full = rotation_blocks(e.seed, output_dim, matryoshka_dims)
            if rotations is not None:
                rotations[e.license_id] = full
        cands.append(score(e.license_id, full[: len(blocks)]))
    ranked = sorted(cands, key=lambda c: (c.distance, c.license_id))
    best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    if best.distance > max_distance:
        verdict = "no_match"
    elif runner is not None and runner.distance - best.distance < min_margin:
        verdict = "ambiguous"
    elif best.license_id == 0:
        verdict = "unfingerprinted"
    else:
        verdict = "match"
    return Detection(verdict, best, runner, identity, blocks, int(y.shape[0]), max_distance, min_margin)


def read_vectors_jsonl(path: str) -> np.ndarray:
    """[n, dims] from a JSONL file with one {"embedding": [...]} per line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            if not isinstance(obj, dict) or not isinstance(obj.get("embedding"), list):
                raise ValueError(f"{path}:{n}: expected {{\"embedding\": [...]}}")
            rows.append(obj["embedding"])
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError(f"{path}: needs ≥ 1 line, all embeddings of the same length")
    return np.asarray(rows, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def _dims_list(text: str) -> List[int]:
    return [int(t) for t in text.split(",") if t.strip()] if text else []


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="lightembed fingerprint tools (registry, rotation, detection).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    reg = sub.add_parser("registry", help="manage a registry file").add_subparsers(dest="action", required=True)
    add = reg.add_parser("add", help="add a license (creates the file if missing)")
    add.add_argument("--registry", required=True)
    add.add_argument("--license-id", type=int, required=True)
    add.add_argument("--seed", help="u64, decimal or 0x-hex (default: a fresh random seed)")
    add.add_argument("--note", default="")
    ls = reg.add_parser("list", help="print license_id and seed, one per line")
    ls.add_argument("--registry", required=True)
    rot = sub.add_parser("rotation", help="print R as JSON rows")
    rot.add_argument("--seed", required=True)
    rot.add_argument("--output-dim", type=int, required=True)
    rot.add_argument("--matryoshka-dims", default="", help="comma-separated, e.g. 32,64,128")
    det = sub.add_parser("detect", help="identify the license of a suspect model")
    det.add_argument("--reference", required=True, help="the plain (unfingerprinted) model")
    det.add_argument("--suspect", help="the suspect .bin")
    det.add_argument("--suspect-vectors", help="JSONL {\"embedding\": [...]} per probe, instead of --suspect")
    det.add_argument("--registry", required=True)
    det.add_argument("--probes", default=DEFAULT_PROBES)
    det.add_argument("--max-distance", type=float, default=MAX_DISTANCE)
    det.add_argument("--min-margin", type=float, default=MIN_MARGIN)
    det.add_argument("--metric", default="weighted", choices=METRICS)
    det.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    if args.cmd == "registry":
        if args.action == "add":
            r = Registry.load(args.registry) if os.path.exists(args.registry) else Registry()
            e = r.add(args.license_id, args.seed, args.note)
            r.save(args.registry)
            print(f"license_id {e.license_id}: seed {format_seed(e.seed)} → {args.registry}")
        else:
            for e in Registry.load(args.registry).entries:
                print(f"{e.license_id}\t{format_seed(e.seed)}\t{e.note}")
        return 0
    if args.cmd == "rotation":
        r = rotation(parse_seed(args.seed), args.output_dim, _dims_list(args.matryoshka_dims))
        print(json.dumps([[float(v) for v in row] for row in r]))
        return 0

    import forward  # noqa: E402  (lazy: the registry/rotation commands need only numpy)

    if (args.suspect is None) == (args.suspect_vectors is None):
        ap.error("give exactly one of --suspect and --suspect-vectors")
    with open(args.reference, "rb") as f:
        ref = forward.load(f.read())
    h = ref.header
    mdims = list(h.matryoshka_dims[: h.n_matryoshka])
    probes = load_probes(args.probes)
    if args.suspect_vectors:
        y = read_vectors_jsonl(args.suspect_vectors)
        if y.shape[0] != len(probes):
            raise SystemExit(f"error: {y.shape[0]} suspect vectors for {len(probes)} probes")
    else:
        with open(args.suspect, "rb") as f:
            sus = forward.load(f.read())
        if (sus.header.output_dim, sus.valid_dims) != (h.output_dim, ref.valid_dims):
            raise SystemExit("error: suspect and reference differ in output_dim or matryoshka_dims")
        y = forward.embed_batch(sus, probes)
    x = forward.embed_batch(ref, probes, y.shape[1])
    d = detect(x, y, h.output_dim, mdims, Registry.load(args.registry),
               max_distance=args.max_distance, min_margin=args.min_margin, metric=args.metric)
    if args.json:
        print(json.dumps(d.to_dict()))
    else:
        print(f"{d.verdict}: best license_id {d.best.license_id} distance {d.best.distance:.4f}"
              + (f", runner-up {d.runner_up.license_id} at {d.runner_up.distance:.4f}" if d.runner_up else ""))
    return 0 if d.verdict == "match" else 3


if __name__ == "__main__":
    sys.exit(main())
