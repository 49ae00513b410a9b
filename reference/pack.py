"""lightembed packer: fp32 weights (+ vocab + config) → a `.bin` v1 file.

Library:
    pack(config, weights, *, embedding_quant, weight_quant, metadata=None,
         section_order=None, extra_sections=None) -> bytes

CLI:
    python reference/pack.py --weights W.npz --config C.json --out M.bin \\
        --embedding-quant {fp32,int8,int4,ternary} --weight-quant {fp32,ternary} [--metadata META.json] \\
        [--license-id N [--fingerprint-seed S | --registry REG.json]]

Fingerprinting (spec §7, decision 9; `reference/fingerprint.py`, docs/fingerprinting.md):
`fingerprint_seed` folds the block-diagonal rotation R(seed) into the projection
(W' = R·W, b' = R·b, computed in f64 and rounded to f32), sets `flags.has_fingerprint`, and
requires a non-zero `license_id`.

Every file `pack` writes is re-read with `forward.load` before it is returned, so the packer
can never emit a file the reference reader rejects. The low-level pieces (`build_header`,
`encode_*`, `assemble`) are also used by make_fixtures.py to write deliberately broken files.

Quantisation rules (see docs/format-v1-clarifications.md):
* layer weights (weight_quant = ternary): AbsMedian per matrix, spec §6.3 item 5 —
  m = lower median of |W| (torch.median semantics), scale = 1 / max(m, 1e-5),
  codes = clamp(round_half_even(W · scale), -1, 1). The stored `scale` is that divisor.
* embeddings, per row, stored scale is the multiplier (value = code × scale[row]):
    int8:    scale = max|row| / 127, codes = clamp(round(row / scale), -127, 127)
    int4:    scale = max|row| / 7,   codes = clamp(round(row / scale), -7, 7)
    ternary: codes by AbsMedian threshold (as the layers: round(row / max(m, 1e-5)) clamped),
             scale = least-squares optimum mean(|row[i]| for codes[i] != 0)
  An all-zero row gets scale 0 and codes 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import sys
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forward  # noqa: E402
from forward import (  # noqa: E402
    FLAG_DO_LOWER_CASE,
    FLAG_HAS_FINGERPRINT,
    FLAG_STRIP_ACCENTS,
    FORMAT_VERSION,
    HASH_SIZE,
    HEADER_SIZE,
    MAGIC,
    SECTION_ALIGNMENT,
    SECTION_COUNT_SIZE,
    SECTION_ENTRY_SIZE,
    EmbeddingQuant,
    SectionType,
    WeightQuant,
)

EMBEDDING_QUANT_NAMES = {q.name.lower(): q for q in EmbeddingQuant}
WEIGHT_QUANT_NAMES = {q.name.lower(): q for q in WeightQuant}
SPECIAL_TOKENS = ("unk", "cls", "sep", "pad", "mask")
SPECIAL_DEFAULTS = {"unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "mask": "[MASK]"}

# ---------------------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------------------

_F32 = np.float32


def lower_median(values: np.ndarray) -> np.float32:
    """torch.median semantics: the lower of the two middle values for an even count."""
    flat = np.sort(np.asarray(values, dtype=np.float32).reshape(-1))
    return _F32(flat[(flat.size - 1) // 2])


def absmedian_ternary(w: np.ndarray) -> tuple:
    """Spec §6.3 item 5: scale = 1 / clamp(median|W|, 1e-5); codes = clamp(round(W·scale), -1, 1)."""
    w = np.asarray(w, dtype=np.float32)
    scale = _F32(1.0) / max(lower_median(np.abs(w)), _F32(1e-5))
    codes = np.clip(np.round(w * scale), -1, 1).astype(np.int8)
    return codes, _F32(scale)


def pack_ternary(codes: np.ndarray) -> bytes:
    """2 bits per value, four per byte, low bits = low index; 0→00, +1→01, −1→10."""
    c = np.asarray(codes, dtype=np.int8).reshape(-1)
    assert c.size % 4 == 0 and np.all(np.abs(c) <= 1)
    bits = np.where(c == 1, 1, np.where(c == -1, 2, 0)).astype(np.uint8).reshape(-1, 4)
    return (bits[:, 0] | (bits[:, 1] << 2) | (bits[:, 2] << 4) | (bits[:, 3] << 6)).astype(np.uint8).tobytes()


def pack_int4(codes: np.ndarray) -> bytes:
    """Two's-complement nibbles, low nibble = element 2k, high nibble = element 2k+1."""
    c = np.asarray(codes, dtype=np.int8).reshape(-1)
    assert c.size % 2 == 0 and np.all((c >= -8) & (c <= 7))
    nib = (c.astype(np.int16) & 0x0F).astype(np.uint8).reshape(-1, 2)
    return (nib[:, 0] | (nib[:, 1] << 4)).astype(np.uint8).tobytes()


def quantize_embedding(table: np.ndarray, quant: EmbeddingQuant) -> tuple:
    """[vocab, d] fp32 → (section bytes, per-row scales or None). Rules in the module docstring."""
    e = np.asarray(table, dtype=np.float32)
    if quant == EmbeddingQuant.FP32:
        return e.astype("<f4").tobytes(), None
    absmax = np.abs(e).max(axis=1)
    if quant in (EmbeddingQuant.INT8, EmbeddingQuant.INT4):
        qmax = _F32(127.0 if quant == EmbeddingQuant.INT8 else 7.0)
        scales = (absmax / qmax).astype(np.float32)
        safe = np.where(scales > 0, scales, _F32(1.0)).astype(np.float32)
        codes = np.clip(np.round(e / safe[:, None]), -qmax, qmax).astype(np.int8)
        codes[scales == 0] = 0
        data = codes.tobytes() if quant == EmbeddingQuant.INT8 else pack_int4(codes)
        return data, scales
    # ternary: per-row AbsMedian threshold, least-squares scale
    codes = np.zeros(e.shape, dtype=np.int8)
    scales = np.zeros(e.shape[0], dtype=np.float32)
    for r, row in enumerate(e):
        c, _ = absmedian_ternary(row)
        nz = c != 0
        codes[r] = c
        scales[r] = _F32(np.abs(row[nz]).mean(dtype=np.float32)) if nz.any() else _F32(0.0)
    return pack_ternary(codes), scales


# ---------------------------------------------------------------------------------------------
# Encoders for each part of the file
# ---------------------------------------------------------------------------------------------


def f32_bytes(*arrays: np.ndarray) -> bytes:
    return b"".join(np.asarray(a, dtype=np.float32).astype("<f4").reshape(-1).tobytes() for a in arrays)


def build_header(
    *,
    vocab_size: int,
    d_model: int,
    n_layers: int,
    n_heads: int,
    ffn_dim: int,
    output_dim: int,
    max_seq_len: int,
    matryoshka_dims: Sequence[int],
    embedding_quant: int,
    weight_quant: int,
    flags: int,
    license_id: int = 0,
    version: Sequence[int] = (0, 0, 0),
    model_id: Union[str, bytes] = b"",
    magic: bytes = MAGIC,
    format_version: int = FORMAT_VERSION,
    n_matryoshka: Optional[int] = None,
) -> bytes:
    """The 64-byte header. `matryoshka_dims` may hold up to 8 raw entries; `n_matryoshka`
    defaults to len(matryoshka_dims) (overridable for malformed fixtures)."""
    mdims = list(matryoshka_dims) + [0] * (8 - len(matryoshka_dims))
    if n_matryoshka is None:
        n_matryoshka = len(matryoshka_dims)
    mid = model_id.encode("utf-8") if isinstance(model_id, str) else bytes(model_id)
    if len(mid) > 16:
        raise ValueError(f"model_id {model_id!r} is longer than 16 UTF-8 bytes")
    header = struct.pack(
        "<4sHBBIHBBHHHBB8HIBBH16s",
        magic, format_version, embedding_quant, weight_quant, vocab_size, d_model, n_layers, n_heads,
        ffn_dim, output_dim, max_seq_len, n_matryoshka, flags, *mdims, license_id,
        version[0], version[1], version[2], mid.ljust(16, b"\x00"),
    )
    assert len(header) == HEADER_SIZE
    return header


def encode_vocab(tokens: Iterable[Union[str, bytes]]) -> bytes:
    out = bytearray()
    for tok in tokens:
        b = tok.encode("utf-8") if isinstance(tok, str) else bytes(tok)
        if len(b) > 255:
            raise ValueError(f"vocab token {tok!r} is longer than 255 UTF-8 bytes")
        out.append(len(b))
        out += b
    return bytes(out)


def encode_tokenizer_config(
    ids: Sequence[int], max_input_chars_per_word: int, prefix: Union[str, bytes]
) -> bytes:
    p = prefix.encode("utf-8") if isinstance(prefix, str) else bytes(prefix)
    if len(p) > 255:
        raise ValueError("continuing_subword_prefix longer than 255 bytes")
    return struct.pack("<5IHB", *ids, max_input_chars_per_word, len(p)) + p


def encode_linear(w: np.ndarray, weight_quant: WeightQuant, bias: Optional[np.ndarray]) -> bytes:
    """weight (quantised) + scale (+ bias), as one LAYERS sub-block field group."""
    w = np.asarray(w, dtype=np.float32)
    if weight_quant == WeightQuant.TERNARY:
        codes, scale = absmedian_ternary(w)
        out = pack_ternary(codes) + f32_bytes(np.array([scale]))
    else:
        out = f32_bytes(w) + f32_bytes(np.array([1.0]))  # decision 3: scale written as 1.0
    if bias is not None:
        out += f32_bytes(bias)
    return out


def encode_layers(weights: dict, n_layers: int, weight_quant: WeightQuant) -> bytes:
    out = bytearray()
    for i in range(n_layers):
        p = f"layers.{i}."
        w = lambda name: weights[p + name]  # noqa: E731
        out += f32_bytes(w("ln1.weight"), w("ln1.bias"))
        out += encode_linear(w("attn.q.weight"), weight_quant, None)
        out += encode_linear(w("attn.k.weight"), weight_quant, None)
        out += encode_linear(w("attn.v.weight"), weight_quant, None)
        out += encode_linear(w("attn.out.weight"), weight_quant, w("attn.out.bias"))
        out += f32_bytes(w("ln2.weight"), w("ln2.bias"))
        out += encode_linear(w("ffn.up.weight"), weight_quant, w("ffn.up.bias"))
        out += encode_linear(w("ffn.down.weight"), weight_quant, w("ffn.down.bias"))
    return bytes(out)


@dataclass
class Section:
    """One section to place. `offset`/`length`/`reserved` override what goes into the table
    (for malformed fixtures); `gap` adds bytes before the section after alignment."""

    type: int
    data: bytes
    reserved: int = 0
    offset: Optional[int] = None
    length: Optional[int] = None
    gap: int = 0


def align_up(n: int, a: int = SECTION_ALIGNMENT) -> int:
    return (n + a - 1) // a * a


def assemble(header: bytes, sections: Sequence[Section], *, n_sections: Optional[int] = None,
             tail_pad: bool = True, rehash: bool = True) -> bytes:
    """header + table + sections (each 8-aligned, zero padding) + SHA-256 of everything before.

    The region after the last section is also zero-padded to a multiple of 8 so the trailer
    starts aligned; readers do not depend on that.
    """
    count = len(sections) if n_sections is None else n_sections
    pos = HEADER_SIZE + SECTION_COUNT_SIZE + SECTION_ENTRY_SIZE * len(sections)
    body = bytearray()
    start = pos
    placed = []
    for s in sections:
        off = align_up(pos) + s.gap
        body += b"\x00" * (off - pos)
        body += s.data
        pos = off + len(s.data)
        placed.append(off)
    if tail_pad:
        body += b"\x00" * (align_up(pos) - pos)
    table = bytearray(struct.pack("<H", count))
    for s, off in zip(sections, placed):
        table += struct.pack(
            "<HHQQ", s.type, s.reserved, off if s.offset is None else s.offset,
            len(s.data) if s.length is None else s.length,
        )
    assert HEADER_SIZE + len(table) == start
    content = bytes(header) + bytes(table) + bytes(body)
    return content + (hashlib.sha256(content).digest() if rehash else b"\x00" * HASH_SIZE)


def rehash(data: bytes) -> bytes:
    """Replace the trailer with the SHA-256 of everything before it."""
    return data[:-HASH_SIZE] + hashlib.sha256(data[:-HASH_SIZE]).digest()


# ---------------------------------------------------------------------------------------------
# pack()
# ---------------------------------------------------------------------------------------------


def _quant(value, names: dict, enum):
    if isinstance(value, str):
        if value.lower() not in names:
            raise ValueError(f"unknown quantisation {value!r}; choose one of {sorted(names)}")
        return names[value.lower()]
    return enum(value)


def _load_vocab(vocab, base_dir: Optional[str] = None) -> list:
    if isinstance(vocab, (list, tuple)):
        return [str(t) for t in vocab]
    path = str(vocab)
    if base_dir and not os.path.isabs(path) and os.path.exists(os.path.join(base_dir, path)):
        path = os.path.join(base_dir, path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    tokens = [line[:-1] if line.endswith("\r") else line for line in lines]
    if "" in tokens:
        raise ValueError(f"{path}: empty line at token id {tokens.index('')} (empty tokens are invalid)")
    return tokens


def _parse_version(v) -> tuple:
    if isinstance(v, (list, tuple)):
        parts = [int(x) for x in v]
    else:
        parts = [int(x) for x in str(v).split(".")]
    if len(parts) != 3 or not (0 <= parts[0] <= 255 and 0 <= parts[1] <= 255 and 0 <= parts[2] <= 65535):
        raise ValueError(f"version {v!r} must be major.minor.patch with u8.u8.u16 parts")
    return tuple(parts)


def build_sections(config: dict, weights: dict, *, embedding_quant, weight_quant,
                   metadata=None, base_dir: Optional[str] = None) -> tuple:
    """(header bytes, {SectionType: bytes}) for a valid model. Validates shapes first."""
    eq = _quant(embedding_quant, EMBEDDING_QUANT_NAMES, EmbeddingQuant)
    wq = _quant(weight_quant, WEIGHT_QUANT_NAMES, WeightQuant)
    vocab = _load_vocab(config["vocab"], base_dir)
    d = int(config["d_model"])
    n_layers = int(config.get("n_layers", 0))
    n_heads = int(config.get("n_heads", 0))
    ffn = int(config.get("ffn_dim", 0))
    out_dim = int(config["output_dim"])
    mdims = [int(x) for x in config.get("matryoshka_dims", [])]

    token_id = {t: i for i, t in enumerate(vocab)}
    if len(token_id) != len(vocab):
        raise ValueError("vocab has duplicate tokens")
    ids = []
    for name in SPECIAL_TOKENS:
        tok = config.get(f"{name}_token", SPECIAL_DEFAULTS[name])
        if tok not in token_id:
            raise ValueError(f"{name}_token {tok!r} is not in the vocab")
        ids.append(token_id[tok])

    def shape(key, *want):
        arr = np.asarray(weights[key])
        if arr.shape != tuple(want):
            raise ValueError(f"weight {key} has shape {arr.shape}, expected {tuple(want)}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"weight {key} has NaN/Inf")
        return arr

    shape("embedding", len(vocab), d)
    for i in range(n_layers):
        p = f"layers.{i}."
        for k in ("ln1.weight", "ln1.bias", "attn.out.bias", "ln2.weight", "ln2.bias", "ffn.down.bias"):
            shape(p + k, d)
        for k in ("attn.q.weight", "attn.k.weight", "attn.v.weight", "attn.out.weight"):
            shape(p + k, d, d)
        shape(p + "ffn.up.weight", ffn, d)
        shape(p + "ffn.up.bias", ffn)
        shape(p + "ffn.down.weight", d, ffn)
    if "final_ln.weight" in weights:
        shape("final_ln.weight", d)
        shape("final_ln.bias", d)
        final_ln = (weights["final_ln.weight"], weights["final_ln.bias"])
    else:  # §5.6: a static model may write identity
        final_ln = (np.ones(d, np.float32), np.zeros(d, np.float32))
    shape("projection.weight", out_dim, d)
    shape("projection.bias", out_dim)

    flags = (
        (FLAG_HAS_FINGERPRINT if config.get("has_fingerprint", False) else 0)
        | (FLAG_DO_LOWER_CASE if config.get("do_lower_case", False) else 0)
        | (FLAG_STRIP_ACCENTS if config.get("strip_accents", False) else 0)
    )
    header = build_header(
        vocab_size=len(vocab), d_model=d, n_layers=n_layers, n_heads=n_heads, ffn_dim=ffn,
        output_dim=out_dim, max_seq_len=int(config["max_seq_len"]), matryoshka_dims=mdims,
        embedding_quant=eq, weight_quant=wq if n_layers > 0 else WeightQuant.FP32, flags=flags,
        license_id=int(config.get("license_id", 0)), version=_parse_version(config.get("version", "0.0.0")),
        model_id=config.get("model_id", ""),
    )
    emb_bytes, emb_scales = quantize_embedding(weights["embedding"], eq)
    sections = {
        SectionType.TOKENIZER_VOCAB: encode_vocab(vocab),
        SectionType.TOKENIZER_CONFIG: encode_tokenizer_config(
            ids, int(config.get("max_input_chars_per_word", 100)), config.get("continuing_subword_prefix", "##")
        ),
        SectionType.EMBEDDING_WEIGHTS: emb_bytes,
    }
    if emb_scales is not None:
        sections[SectionType.EMBEDDING_SCALES] = f32_bytes(emb_scales)
    if n_layers > 0:
        sections[SectionType.LAYERS] = encode_layers(weights, n_layers, wq)
    sections[SectionType.FINAL_LN] = f32_bytes(*final_ln)
    sections[SectionType.PROJECTION] = f32_bytes(weights["projection.weight"], weights["projection.bias"])
    if metadata is not None:
        if isinstance(metadata, bytes):
            sections[SectionType.METADATA] = metadata
        elif isinstance(metadata, str):
            sections[SectionType.METADATA] = metadata.encode("utf-8")
        else:
            sections[SectionType.METADATA] = json.dumps(
                metadata, ensure_ascii=False, sort_keys=True, separators=(",", ":")
            ).encode("utf-8")
    return header, sections


def pack(config: dict, weights: dict, *, embedding_quant, weight_quant, metadata=None,
         section_order: Optional[Sequence[int]] = None,
         extra_sections: Optional[Sequence[tuple]] = None, base_dir: Optional[str] = None,
         license_id: Optional[int] = None, fingerprint_seed=None) -> bytes:
    """fp32 weights → `.bin` v1 bytes, verified by `forward.load` before returning.

    section_order: section type ids in the order to write them (types not listed follow in
    ascending type order, then extra sections). extra_sections: [(type, bytes)], e.g. an
    unknown type 200 that readers must skip.
    license_id: overrides `config["license_id"]` (u32; 0 = unlicensed).
    fingerprint_seed: u64 (int, decimal or 0x-hex string). Folds the customer rotation into the
    projection and sets `has_fingerprint`; needs a non-zero license_id. `weights` is not modified.
    """
    config, weights = apply_fingerprint(config, weights, license_id=license_id, fingerprint_seed=fingerprint_seed)
    header, sections = build_sections(
        config, weights, embedding_quant=embedding_quant, weight_quant=weight_quant,
        metadata=metadata, base_dir=base_dir,
    )
    items = [Section(int(t), data) for t, data in sections.items()]
    items += [Section(int(t), bytes(data)) for t, data in (extra_sections or [])]
    if section_order is not None:
        rank = {int(t): i for i, t in enumerate(section_order)}
        items.sort(key=lambda s: rank.get(s.type, len(rank) + s.type))
    data = assemble(header, items)
    forward.load(data)  # never emit a file the reference rejects
    return data


def apply_fingerprint(config: dict, weights: dict, *, license_id: Optional[int] = None,
                      fingerprint_seed=None) -> tuple:
    """(config, weights) with `license_id` set and, given a seed, R folded into the projection.

    Returns new dicts (the inputs are not modified); with neither argument, the inputs themselves.
    """
    if license_id is None and fingerprint_seed is None:
        return config, weights
    import fingerprint  # noqa: E402  (numpy only)

    config = dict(config)
    if license_id is not None:
        if isinstance(license_id, bool) or not 0 <= int(license_id) <= 0xFFFFFFFF:
            raise ValueError(f"license_id {license_id!r} must be a u32")
        config["license_id"] = int(license_id)
    if fingerprint_seed is None:
        return config, weights
    if int(config.get("license_id", 0)) == 0:
        raise ValueError("a fingerprinted model needs a non-zero license_id (0 means unlicensed)")
    seed = fingerprint.parse_seed(fingerprint_seed)
    out_dim = int(config["output_dim"])
    w, b = np.asarray(weights["projection.weight"]), np.asarray(weights["projection.bias"])
    if w.ndim == 2 and w.shape[0] == out_dim and b.shape == (out_dim,):  # else build_sections reports it
        weights = dict(weights)
        weights["projection.weight"], weights["projection.bias"] = fingerprint.apply_rotation(
            w, b, seed, [int(x) for x in config.get("matryoshka_dims", [])])
    config["has_fingerprint"] = True
    return config, weights


def summarize(data: bytes) -> str:
    model = forward.load(data)
    h = model.header
    parts = ", ".join(
        f"{forward._section_name(e.type).lower() if e.type in SectionType._value2member_map_ else f'type{e.type}'}"
        f" {e.length} B"
        for e in model.sections
    )
    kind = "static" if h.n_layers == 0 else f"{h.n_layers}-layer {WeightQuant(h.weight_quant).name.lower()}"
    return (
        f"{h.model_id or '(no id)'} v{h.version}: {len(data)} bytes, {kind}, "
        f"{EmbeddingQuant(h.embedding_quant).name.lower()} embeddings, vocab {h.vocab_size}, "
        f"d_model {h.d_model}, output_dim {h.output_dim}, dims {model.valid_dims}; sections: {parts}; "
        f"sha256 {model.sha256[:16]}…"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Pack fp32 weights into a lightembed .bin v1 file.")
    ap.add_argument("--weights", required=True, help=".npz with the weight names of reference/pack.py")
    ap.add_argument("--config", required=True, help="config JSON (vocab path relative to it or to cwd)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--embedding-quant", required=True, choices=sorted(EMBEDDING_QUANT_NAMES))
    ap.add_argument("--weight-quant", required=True, choices=sorted(WEIGHT_QUANT_NAMES))
    ap.add_argument("--metadata", help="JSON file stored verbatim (must be UTF-8) as the METADATA section")
    ap.add_argument("--license-id", type=int, help="header license_id (u32; overrides the config's)")
    fp = ap.add_mutually_exclusive_group()
    fp.add_argument("--fingerprint-seed", help="fold the customer rotation for this u64 seed (decimal or 0x-hex) "
                    "into the projection and set has_fingerprint; needs --license-id ≠ 0")
    fp.add_argument("--registry", help="like --fingerprint-seed, with the seed of --license-id in this registry JSON")
    args = ap.parse_args(argv)
    seed = args.fingerprint_seed
    if args.registry:
        import fingerprint  # noqa: E402

        if args.license_id is None:
            ap.error("--registry needs --license-id")
        seed = fingerprint.Registry.load(args.registry).by_license(args.license_id).seed

    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    with np.load(args.weights) as npz:
        weights = {k: npz[k].astype(np.float32) for k in npz.files}
    metadata = None
    if args.metadata:
        with open(args.metadata, "rb") as f:
            metadata = f.read()
    data = pack(
        config, weights, embedding_quant=args.embedding_quant, weight_quant=args.weight_quant,
        metadata=metadata, base_dir=os.path.dirname(os.path.abspath(args.config)),
        license_id=args.license_id, fingerprint_seed=seed,
    )
    with open(args.out, "wb") as f:
        f.write(data)
    print(f"{args.out}: {summarize(data)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
