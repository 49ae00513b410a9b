"""Machine-independent comparison of regenerated fixtures with the committed ones.

Fixture generators (`make_fixtures.py`, `make_fingerprint_fixtures.py`) run numpy, BLAS, LAPACK
and libm, whose last bits differ between CPUs, OpenBLAS core types and thread counts. A `--check`
that compared files as text would fail on a machine that did nothing wrong. So:

* **decisions** compare exactly: integers, strings, booleans, token ids, verdicts, license ids,
  JSON structure, `.bin` headers, vocabularies and quantised codes (int8/int4/ternary);
* **values** compare within a stated tolerance: every JSON float and every float32 section of a
  `.bin` (`|have − want| ≤ atol + rtol·|want|`, elementwise);
* the trailing SHA-256 of a `.bin` is checked by loading it (`forward.load`), not compared: it
  changes whenever a float's last bit does.

Each function returns a list of human-readable differences (empty = equal within tolerance).
"""

from __future__ import annotations

import json
import math
import os
from typing import Callable, List, Optional

import numpy as np

import forward
from forward import SectionType as ST

#: Default tolerance for float32 sections of a `.bin`: a few ulps of float32 (2⁻²³ ≈ 1.2e-7).
BIN_RTOL = 1e-6
BIN_ATOL = 1e-7


def compare_json(want, have, *, atol: float, rtol: float = 0.0, path: str = "$") -> List[str]:
    """Differences between two parsed JSON documents: floats within `atol + rtol·|want|`,
    everything else (keys, lengths, ints, strings, booleans, null) exactly. An int on one side and
    a float on the other compare as values (JSON writers differ on `1.0` vs `1`)."""
    num = (int, float)
    if isinstance(want, bool) or isinstance(have, bool):
        return [] if want is have else [f"{path}: {have!r} != {want!r}"]
    if isinstance(want, num) and isinstance(have, num):
        if isinstance(want, int) and isinstance(have, int):
            return [] if want == have else [f"{path}: {have} != {want}"]
        w, h = float(want), float(have)
        if math.isfinite(w) and math.isfinite(h) and abs(h - w) <= atol + rtol * abs(w):
            return []
        if w == h:  # infinities
            return []
        return [f"{path}: {h!r} differs from {w!r} by more than {atol:g} + {rtol:g}·|want|"]
    if isinstance(want, dict) and isinstance(have, dict):
        if want.keys() != have.keys():
            return [f"{path}: keys {sorted(have)} != {sorted(want)}"]
        out: List[str] = []
        for k in want:
            out += compare_json(want[k], have[k], atol=atol, rtol=rtol, path=f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(have, list):
        if len(want) != len(have):
            return [f"{path}: {len(have)} items != {len(want)}"]
        out = []
        for i, (a, b) in enumerate(zip(want, have)):
            out += compare_json(a, b, atol=atol, rtol=rtol, path=f"{path}[{i}]")
        return out
    return [] if want == have and type(want) is type(have) else [f"{path}: {have!r} != {want!r}"]


def _float_sections(m: forward.Model) -> set:
    """Section types whose payload is float32 values only (decoded and compared with tolerance);
    every other section holds codes, text or integers and must be byte-identical."""
    types = {ST.EMBEDDING_SCALES, ST.FINAL_LN, ST.PROJECTION}
    if m.header.embedding_quant == forward.EmbeddingQuant.FP32:
        types.add(ST.EMBEDDING_WEIGHTS)
    if m.header.n_layers > 0 and m.header.weight_quant == forward.WeightQuant.FP32:
        types.add(ST.LAYERS)
    return types


def compare_bin(want: bytes, have: bytes, *, rtol: float = BIN_RTOL, atol: float = BIN_ATOL) -> List[str]:
    """Differences between two `.bin` v1 files: both must load; header, section table and every
    code/text section byte-identical; float32 sections within `atol + rtol·|want|`."""
    if want == have:
        return []
    try:
        mw = forward.load(want)
    except forward.LoadError as e:
        return [f"the regenerated file does not load: {e}"]
    try:
        mh = forward.load(have)
    except forward.LoadError as e:
        return [f"the file on disk does not load: {e}"]
    layout = lambda m: [(e.type, e.offset, e.length) for e in m.sections]  # noqa: E731
    if len(want) != len(have) or layout(mw) != layout(mh):
        return ["file size or section table differs"]
    floats = _float_sections(mw)
    out = []
    # Everything outside the float32 sections (header, table, padding, code and text sections)
    # must be identical; the SHA-256 trailer (already verified by load) is not compared.
    exact_w, exact_h = bytearray(want[:-32]), bytearray(have[:-32])
    for e in mw.sections:
        if e.type in floats and e.length % 4 == 0:
            fa = np.frombuffer(want[e.offset:e.end], "<f4").astype(np.float64)
            fb = np.frombuffer(have[e.offset:e.end], "<f4").astype(np.float64)
            if not (np.all(np.isfinite(fb)) and np.all(np.abs(fb - fa) <= atol + rtol * np.abs(fa))):
                worst = float(np.max(np.abs(fb - fa)))
                out.append(f"section {ST(e.type).name}: float32 values differ by up to {worst:g} "
                           f"(allowed {atol:g} + {rtol:g}·|want|)")
            exact_w[e.offset:e.end] = exact_h[e.offset:e.end] = bytes(e.length)
    if exact_w != exact_h:
        first = next(i for i, (a, b) in enumerate(zip(exact_w, exact_h)) if a != b)
        out.insert(0, f"byte {first} differs outside the float32 sections (header, codes or text)")
    return out


def compare_text_json(want: bytes, have: bytes, *, atol: float, rtol: float = 0.0) -> List[str]:
    """`compare_json` on two UTF-8 JSON files given as bytes."""
    if want == have:
        return []
    try:
        return compare_json(json.loads(want), json.loads(have), atol=atol, rtol=rtol)
    except ValueError as e:
        return [f"not JSON: {e}"]


def compare_dir(files: dict, out_dir: str, json_atol: Callable[[str], Optional[float]],
                limit: int = 5) -> List[str]:
    """Differences between freshly generated `files` ({relative path: bytes}) and the files in
    `out_dir`, each prefixed with its path (at most `limit` per file): `.bin` by `compare_bin`;
    JSON by `compare_json` where `json_atol(path)` gives a tolerance; everything else (text,
    JSON without floats) byte for byte. A file missing on disk is reported as `missing`."""
    problems = []
    for rel, data in files.items():
        path = os.path.join(out_dir, rel)
        if not os.path.exists(path):
            problems.append(f"{rel}: missing")
            continue
        with open(path, "rb") as f:
            disk = f.read()
        if disk == data:
            continue
        atol = json_atol(rel)
        if rel.endswith(".bin"):
            diffs = compare_bin(data, disk)
        elif atol is not None:
            diffs = compare_text_json(data, disk, atol=atol)
        else:
            diffs = ["differs"]
        problems += [f"{rel}: {d}" for d in diffs[:limit]]
    return problems
