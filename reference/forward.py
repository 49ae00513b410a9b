"""lightembed `.bin` format v1 — the normative reference reader and forward pass.

This module is the executable form of the wire-format spec (`.bin` v1) and of
`docs/format-v1-clarifications.md`. Where the prose and this code disagree, this
code wins and the prose is a bug.

It is written to be read top to bottom:

1. constants and the `LoadError` rules,
2. `load(data) -> Model`: every validation, in the order the reference performs them,
3. `tokenize(model, text) -> ids`: BERT WordPiece via HF `tokenizers`, [CLS]/[SEP], truncation,
4. `embed(model, text, dims)`: the forward pass (BitLinear, attention, exact GELU, pooling,
   projection, Matryoshka truncate-then-normalise), computed in float32.

Only numpy, hashlib and `tokenizers` are used. No torch.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Optional, Sequence

import numpy as np

# ---------------------------------------------------------------------------------------------
# 1. Constants
# ---------------------------------------------------------------------------------------------

MAGIC = b"LEMB"
FORMAT_VERSION = 1
#: Inclusive range of `format_version` values this reader accepts (decision 10: exactly 1).
SUPPORTED_FORMAT_VERSIONS = (1, 1)

HEADER_SIZE = 64
SECTION_COUNT_SIZE = 2  # the u16 n_sections at offset 64
SECTION_ENTRY_SIZE = 20  # u16 type, u16 reserved, u64 offset, u64 length
HASH_SIZE = 32
#: Smallest file that can hold a header, an (empty) section table and the SHA-256 trailer.
MIN_FILE_SIZE = HEADER_SIZE + SECTION_COUNT_SIZE + HASH_SIZE
SECTION_ALIGNMENT = 8
MAX_MATRYOSHKA = 8
TOKENIZER_CONFIG_FIXED_SIZE = 5 * 4 + 2 + 1  # five u32 ids, u16 max chars, u8 prefix_len

LAYER_NORM_EPS = np.float32(1e-5)
ACTIVATION_RANGE_MAX = np.float32(128.0)  # max(|-128|, |127|), spec §6.3 item 3
ABSMAX_FLOOR = np.float32(1e-5)
NORMALIZE_EPS = np.float32(1e-12)  # decision 4, torch F.normalize


class EmbeddingQuant(IntEnum):
    FP32 = 0
    INT8 = 1
    INT4 = 2
    TERNARY = 3


class WeightQuant(IntEnum):
    FP32 = 0
    TERNARY = 1


class SectionType(IntEnum):
    TOKENIZER_VOCAB = 1
    TOKENIZER_CONFIG = 2
    EMBEDDING_WEIGHTS = 3
    EMBEDDING_SCALES = 4
    LAYERS = 5
    FINAL_LN = 6
    PROJECTION = 7
    METADATA = 8


FLAG_HAS_FINGERPRINT = 1 << 0
FLAG_DO_LOWER_CASE = 1 << 1
FLAG_STRIP_ACCENTS = 1 << 2
FLAG_RESERVED_MASK = 0xF8  # bits 3-7

#: Every rule `load` can reject a file for, in the order the reference checks them.
#: Each name is also the name of one file in tests/fixtures/malformed/.
RULES = (
    # file envelope
    "file_too_short",
    "bad_magic",
    "unsupported_format_version",
    "hash_mismatch",
    # header fields
    "unknown_embedding_quant",
    "unknown_weight_quant",
    "reserved_flags_set",
    "zero_dimension",
    "d_model_not_multiple_of_4",
    "n_heads_not_dividing_d_model",
    "ffn_dim_not_multiple_of_4",
    "n_matryoshka_too_large",
    "matryoshka_not_ascending",
    "matryoshka_exceeds_output_dim",
    "matryoshka_unused_not_zero",
    "max_seq_len_too_small",
    "model_id_not_utf8",
    "model_id_not_nul_padded",
    # section table, entry by entry
    "section_table_truncated",
    "section_reserved_nonzero",
    "section_out_of_bounds",
    "section_overlaps_header",
    "section_overlaps_table",
    "section_overlaps_hash",
    "section_misaligned",
    # section table, as a whole
    "duplicate_section",
    "sections_overlap",
    "unexpected_section",
    "missing_section_vocab",
    "missing_section_config",
    "missing_section_embedding_weights",
    "missing_section_embedding_scales",
    "missing_section_layers",
    "missing_section_final_ln",
    "missing_section_projection",
    "section_length_mismatch",
    # section contents
    "vocab_truncated",
    "vocab_not_utf8",
    "vocab_empty_token",
    "vocab_duplicate_token",
    "vocab_trailing_bytes",
    "tokenizer_config_truncated",
    "tokenizer_config_trailing_bytes",
    "special_token_out_of_range",
    "prefix_not_utf8",
    "ternary_reserved_code_embedding",
    "ternary_reserved_code_layers",
    "non_finite_float",
    "nonpositive_layer_scale",
    "metadata_not_utf8",
)

MISSING_RULE = {
    SectionType.TOKENIZER_VOCAB: "missing_section_vocab",
    SectionType.TOKENIZER_CONFIG: "missing_section_config",
    SectionType.EMBEDDING_WEIGHTS: "missing_section_embedding_weights",
    SectionType.EMBEDDING_SCALES: "missing_section_embedding_scales",
    SectionType.LAYERS: "missing_section_layers",
    SectionType.FINAL_LN: "missing_section_final_ln",
    SectionType.PROJECTION: "missing_section_projection",
}


class LoadError(Exception):
    """A file the engine must refuse. `.rule` names the violated rule (one of `RULES`)."""

    def __init__(self, rule: str, message: str):
        assert rule in RULES, rule
        super().__init__(f"{message} [{rule}]")
        self.rule = rule
        self.message = message


# ---------------------------------------------------------------------------------------------
# Model data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    format_version: int
    embedding_quant: int
    weight_quant: int
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    ffn_dim: int
    output_dim: int
    max_seq_len: int
    n_matryoshka: int
    flags: int
    matryoshka_dims: tuple  # all 8 raw u16 entries
    license_id: int
    version_major: int
    version_minor: int
    version_patch: int
    model_id: str

    @property
    def has_fingerprint(self) -> bool:
        return bool(self.flags & FLAG_HAS_FINGERPRINT)

    @property
    def do_lower_case(self) -> bool:
        return bool(self.flags & FLAG_DO_LOWER_CASE)

    @property
    def strip_accents(self) -> bool:
        return bool(self.flags & FLAG_STRIP_ACCENTS)

    @property
    def version(self) -> str:
        return f"{self.version_major}.{self.version_minor}.{self.version_patch}"


@dataclass(frozen=True)
class SectionEntry:
    index: int  # position in the table
    type: int
    reserved: int
    offset: int
    length: int

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True)
class TokenizerConfig:
    unk_token_id: int
    cls_token_id: int
    sep_token_id: int
    pad_token_id: int
    mask_token_id: int
    max_input_chars_per_word: int
    continuing_subword_prefix: str


@dataclass
class Linear:
    """One BitLinear (or, with weight_quant = fp32, plain linear) layer.

    `weight` is [out_features, in_features] float32: the ternary codes (-1/0/+1) when
    `ternary`, else the fp32 weights. `scale` is the AbsMedian scale (ternary only; the
    stored value is ignored for fp32 weights, decision 3). `bias` is None or [out] float32.
    """

    weight: np.ndarray
    scale: np.float32
    bias: Optional[np.ndarray]
    ternary: bool


@dataclass
class Layer:
    ln1_weight: np.ndarray
    ln1_bias: np.ndarray
    q: Linear
    k: Linear
    v: Linear
    out: Linear
    ln2_weight: np.ndarray
    ln2_bias: np.ndarray
    up: Linear
    down: Linear


@dataclass
class Model:
    header: Header
    sections: list
    vocab: list
    tokenizer_config: TokenizerConfig
    embedding: np.ndarray  # [vocab_size, d_model] float32, dequantised
    embedding_codes: Optional[np.ndarray]  # [vocab_size, d_model] int codes, None for fp32
    embedding_scales: Optional[np.ndarray]  # [vocab_size] float32, None for fp32
    layers: list
    final_ln_weight: np.ndarray
    final_ln_bias: np.ndarray
    projection_weight: np.ndarray  # [output_dim, d_model]
    projection_bias: np.ndarray  # [output_dim]
    metadata: Optional[str]
    sha256: str
    _hf_tokenizer: object = field(default=None, repr=False)

    @property
    def valid_dims(self) -> list:
        """Decision 8: matryoshka_dims[..n] ∪ {output_dim}, ascending, without repeats."""
        h = self.header
        return sorted(set(h.matryoshka_dims[: h.n_matryoshka]) | {h.output_dim})


# ---------------------------------------------------------------------------------------------
# 2. load(): every validation, in order
# ---------------------------------------------------------------------------------------------


def _u16(data: bytes, off: int) -> int:
    return struct.unpack_from("<H", data, off)[0]


def _u32(data: bytes, off: int) -> int:
    return struct.unpack_from("<I", data, off)[0]


def _decode_utf8(raw: bytes) -> Optional[str]:
    try:
        return raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return None


def _section_name(t: int) -> str:
    try:
        return SectionType(t).name
    except ValueError:
        return f"unknown type {t}"


def load(data: bytes) -> Model:
    """Parse and fully validate a `.bin` v1 file. Raises `LoadError`; never loads partially."""
    data = bytes(data)
    _check_envelope(data)
    header = _parse_header(data)
    entries = _parse_section_table(data, header)
    by_type = _check_section_set(header, entries)
    return _parse_sections(data, header, entries, by_type)


def _check_envelope(data: bytes) -> None:
    """Length, magic, format_version, then the SHA-256 trailer over everything before it."""
    if len(data) < MIN_FILE_SIZE:
        raise LoadError(
            "file_too_short",
            f"file is {len(data)} bytes; a v1 model is at least {MIN_FILE_SIZE} bytes "
            "(64-byte header, section count, 32-byte SHA-256)",
        )
    if data[0:4] != MAGIC:
        raise LoadError("bad_magic", f"bad magic {data[0:4]!r}; expected b'LEMB' — not a lightembed model")
    version = _u16(data, 4)
    lo, hi = SUPPORTED_FORMAT_VERSIONS
    if not lo <= version <= hi:
        raise LoadError(
            "unsupported_format_version",
            f"format_version {version} is not supported; this reader supports {lo}..={hi}",
        )
    digest = hashlib.sha256(data[:-HASH_SIZE]).digest()
    if digest != data[-HASH_SIZE:]:
        raise LoadError(
            "hash_mismatch",
            f"SHA-256 mismatch: trailer says {data[-HASH_SIZE:].hex()}, content hashes to {digest.hex()}"
            " — the file is corrupt or truncated",
        )


def _parse_header(data: bytes) -> Header:
    (
        magic, format_version, embedding_quant, weight_quant, vocab_size, d_model, n_layers,
        n_heads, ffn_dim, output_dim, max_seq_len, n_matryoshka, flags,
    ) = struct.unpack_from("<4sHBBIHBBHHHBB", data, 0)
    mdims = struct.unpack_from("<8H", data, 24)
    license_id, vmaj, vmin, vpatch = struct.unpack_from("<IBBH", data, 40)
    raw_id = data[48:64]

    if embedding_quant not in EmbeddingQuant._value2member_map_:
        raise LoadError("unknown_embedding_quant", f"unknown embedding_quant {embedding_quant}; known: 0..=3")
    if n_layers > 0 and weight_quant not in WeightQuant._value2member_map_:
        raise LoadError("unknown_weight_quant", f"unknown weight_quant {weight_quant}; known: 0..=1")
    if flags & FLAG_RESERVED_MASK:
        raise LoadError("reserved_flags_set", f"reserved flag bits set: flags = {flags:#04x}; bits 3-7 must be 0")

    zero_fields = [("vocab_size", vocab_size), ("d_model", d_model), ("output_dim", output_dim)]
    if n_layers > 0:
        zero_fields += [("n_heads", n_heads), ("ffn_dim", ffn_dim)]
    for name, value in zero_fields:
        if value == 0:
            raise LoadError("zero_dimension", f"{name} is 0")
    if d_model % 4 != 0:
        raise LoadError("d_model_not_multiple_of_4", f"d_model {d_model} is not a multiple of 4")
    if n_layers > 0 and d_model % n_heads != 0:
        raise LoadError("n_heads_not_dividing_d_model", f"n_heads {n_heads} does not divide d_model {d_model}")
    if n_layers > 0 and weight_quant == WeightQuant.TERNARY and ffn_dim % 4 != 0:
        raise LoadError(
            "ffn_dim_not_multiple_of_4",
            f"ffn_dim {ffn_dim} is not a multiple of 4 (ternary ffn.down packs ffn_dim inputs 4 per byte)",
        )

    if n_matryoshka > MAX_MATRYOSHKA:
        raise LoadError("n_matryoshka_too_large", f"n_matryoshka {n_matryoshka} > {MAX_MATRYOSHKA}")
    used = mdims[:n_matryoshka]
    prev = 0
    for d in used:
        if d <= prev:
            raise LoadError(
                "matryoshka_not_ascending",
                f"matryoshka_dims {list(used)} must be strictly ascending and greater than 0",
            )
        prev = d
    for d in used:
        if d > output_dim:
            raise LoadError(
                "matryoshka_exceeds_output_dim", f"matryoshka dim {d} exceeds output_dim {output_dim}"
            )
    if any(mdims[n_matryoshka:]):
        raise LoadError(
            "matryoshka_unused_not_zero",
            f"matryoshka_dims {list(mdims)}: entries past n_matryoshka={n_matryoshka} must be 0",
        )
    if max_seq_len < 2:
        raise LoadError("max_seq_len_too_small", f"max_seq_len {max_seq_len} < 2 (room for [CLS] and [SEP])")

    nul = raw_id.find(b"\x00")
    text_part, padding = (raw_id, b"") if nul < 0 else (raw_id[:nul], raw_id[nul:])
    model_id = _decode_utf8(text_part)
    if model_id is None:
        raise LoadError("model_id_not_utf8", f"model_id {raw_id!r} is not UTF-8")
    if padding.strip(b"\x00"):
        raise LoadError("model_id_not_nul_padded", f"model_id {raw_id!r}: bytes after the first NUL must be NUL")

    return Header(
        format_version=format_version, embedding_quant=embedding_quant, weight_quant=weight_quant,
        vocab_size=vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads, ffn_dim=ffn_dim,
        output_dim=output_dim, max_seq_len=max_seq_len, n_matryoshka=n_matryoshka, flags=flags,
        matryoshka_dims=tuple(mdims), license_id=license_id, version_major=vmaj,
        version_minor=vmin, version_patch=vpatch, model_id=model_id,
    )


def _parse_section_table(data: bytes, header: Header) -> list:
    """Every entry — known or unknown type — must lie in [table end, hash start), 8-aligned."""
    n_sections = _u16(data, HEADER_SIZE)
    table_end = HEADER_SIZE + SECTION_COUNT_SIZE + SECTION_ENTRY_SIZE * n_sections
    hash_start = len(data) - HASH_SIZE
    if table_end > hash_start:
        raise LoadError(
            "section_table_truncated",
            f"section table of {n_sections} entries ends at byte {table_end}, past the hash at {hash_start}",
        )
    entries = []
    for i in range(n_sections):
        t, reserved, offset, length = struct.unpack_from(
            "<HHQQ", data, HEADER_SIZE + SECTION_COUNT_SIZE + SECTION_ENTRY_SIZE * i
        )
        e = SectionEntry(i, t, reserved, offset, length)
        where = f"section #{i} ({_section_name(t)}, offset {offset}, length {length})"
        if reserved != 0:
            raise LoadError("section_reserved_nonzero", f"{where}: reserved field is {reserved}, must be 0")
        if e.end > len(data):  # Python ints: no overflow. Readers with u64 must use checked_add.
            raise LoadError("section_out_of_bounds", f"{where} ends past the end of the {len(data)}-byte file")
        if offset < HEADER_SIZE:
            raise LoadError("section_overlaps_header", f"{where} overlaps the 64-byte header")
        if offset < table_end:
            raise LoadError("section_overlaps_table", f"{where} overlaps the section table (ends at {table_end})")
        if e.end > hash_start:
            raise LoadError("section_overlaps_hash", f"{where} overlaps the SHA-256 trailer at {hash_start}")
        if offset % SECTION_ALIGNMENT != 0:
            raise LoadError("section_misaligned", f"{where}: offset is not a multiple of {SECTION_ALIGNMENT}")
        entries.append(e)
    return entries


def _expected_layers_length(h: Header) -> int:
    d, f = h.d_model, h.ffn_dim

    def matrix(out_f: int, in_f: int) -> int:
        if h.weight_quant == WeightQuant.TERNARY:
            return out_f * in_f // 4
        return out_f * in_f * 4

    block = (
        2 * d * 4  # ln1
        + 4 * (matrix(d, d) + 4)  # q, k, v, out weight + scale
        + d * 4  # attn.out.bias
        + 2 * d * 4  # ln2
        + matrix(f, d) + 4 + f * 4  # ffn.up
        + matrix(d, f) + 4 + d * 4  # ffn.down
    )
    return h.n_layers * block


def _embedding_row_bytes(h: Header) -> int:
    return {
        EmbeddingQuant.FP32: h.d_model * 4,
        EmbeddingQuant.INT8: h.d_model,
        EmbeddingQuant.INT4: h.d_model // 2,
        EmbeddingQuant.TERNARY: h.d_model // 4,
    }[EmbeddingQuant(h.embedding_quant)]


def _check_section_set(header: Header, entries: list) -> dict:
    """Duplicates, overlaps between known sections, unexpected/missing sections, exact lengths."""
    by_type: dict = {}
    for e in entries:
        if e.type not in SectionType._value2member_map_:
            continue  # unknown type: bounds/alignment were checked above, otherwise skipped (§4)
        if e.type in by_type:
            raise LoadError(
                "duplicate_section",
                f"section {_section_name(e.type)} appears twice (entries #{by_type[e.type].index} and #{e.index})",
            )
        by_type[e.type] = e

    spans = sorted((e for e in by_type.values() if e.length > 0), key=lambda e: (e.offset, e.index))
    for a, b in zip(spans, spans[1:]):
        if b.offset < a.end:
            raise LoadError(
                "sections_overlap",
                f"sections {_section_name(a.type)} [{a.offset}, {a.end}) and "
                f"{_section_name(b.type)} [{b.offset}, {b.end}) overlap",
            )

    if header.embedding_quant == EmbeddingQuant.FP32 and SectionType.EMBEDDING_SCALES in by_type:
        raise LoadError("unexpected_section", "EMBEDDING_SCALES present but embedding_quant is fp32")
    if header.n_layers == 0 and SectionType.LAYERS in by_type:
        raise LoadError("unexpected_section", "LAYERS present but n_layers is 0")

    required = [SectionType.TOKENIZER_VOCAB, SectionType.TOKENIZER_CONFIG, SectionType.EMBEDDING_WEIGHTS]
    if header.embedding_quant != EmbeddingQuant.FP32:
        required.append(SectionType.EMBEDDING_SCALES)
    if header.n_layers > 0:
        required.append(SectionType.LAYERS)
    required += [SectionType.FINAL_LN, SectionType.PROJECTION]
    for t in required:
        if t not in by_type:
            raise LoadError(MISSING_RULE[t], f"required section {t.name} is missing")

    h = header
    expected = {
        SectionType.EMBEDDING_WEIGHTS: h.vocab_size * _embedding_row_bytes(h),
        SectionType.EMBEDDING_SCALES: h.vocab_size * 4,
        SectionType.LAYERS: _expected_layers_length(h),
        SectionType.FINAL_LN: 2 * h.d_model * 4,
        SectionType.PROJECTION: (h.output_dim * h.d_model + h.output_dim) * 4,
    }
    for t, want in expected.items():
        if t in by_type and by_type[t].length != want:
            raise LoadError(
                "section_length_mismatch",
                f"section {t.name} is {by_type[t].length} bytes; the header implies {want}",
            )
    return by_type


# --- section contents ------------------------------------------------------------------------


def _parse_vocab(raw: bytes, vocab_size: int) -> list:
    tokens: list = []
    seen: dict = {}
    pos = 0
    for i in range(vocab_size):
        if pos >= len(raw):
            raise LoadError("vocab_truncated", f"vocab ends after {i} of {vocab_size} tokens")
        n = raw[pos]
        if pos + 1 + n > len(raw):
            raise LoadError("vocab_truncated", f"vocab token {i} ({n} bytes) runs past the end of the section")
        token = _decode_utf8(raw[pos + 1 : pos + 1 + n])
        if token is None:
            raise LoadError("vocab_not_utf8", f"vocab token {i} is not UTF-8: {raw[pos + 1 : pos + 1 + n]!r}")
        if n == 0:
            raise LoadError("vocab_empty_token", f"vocab token {i} is empty")
        if token in seen:
            raise LoadError("vocab_duplicate_token", f"vocab token {i} {token!r} duplicates token {seen[token]}")
        seen[token] = i
        tokens.append(token)
        pos += 1 + n
    if pos != len(raw):
        raise LoadError(
            "vocab_trailing_bytes", f"vocab section has {len(raw) - pos} bytes after its {vocab_size} tokens"
        )
    return tokens


def _parse_tokenizer_config(raw: bytes, vocab_size: int) -> TokenizerConfig:
    if len(raw) < TOKENIZER_CONFIG_FIXED_SIZE:
        raise LoadError(
            "tokenizer_config_truncated",
            f"tokenizer config is {len(raw)} bytes; at least {TOKENIZER_CONFIG_FIXED_SIZE} needed",
        )
    ids = struct.unpack_from("<5I", raw, 0)
    max_chars = _u16(raw, 20)
    prefix_len = raw[22]
    end = TOKENIZER_CONFIG_FIXED_SIZE + prefix_len
    if len(raw) < end:
        raise LoadError(
            "tokenizer_config_truncated", f"tokenizer config prefix of {prefix_len} bytes runs past the section"
        )
    if len(raw) > end:
        raise LoadError(
            "tokenizer_config_trailing_bytes", f"tokenizer config has {len(raw) - end} bytes after the prefix"
        )
    for name, tid in zip(("unk", "cls", "sep", "pad", "mask"), ids):
        if tid >= vocab_size:
            raise LoadError(
                "special_token_out_of_range", f"{name}_token_id {tid} is not below vocab_size {vocab_size}"
            )
    prefix = _decode_utf8(raw[TOKENIZER_CONFIG_FIXED_SIZE:end])
    if prefix is None:
        raise LoadError("prefix_not_utf8", f"continuing-subword prefix {raw[TOKENIZER_CONFIG_FIXED_SIZE:end]!r} is not UTF-8")
    return TokenizerConfig(*ids, max_input_chars_per_word=max_chars, continuing_subword_prefix=prefix)


def _f32(raw: bytes, count: int, what: str, *, check: bool = True) -> np.ndarray:
    """`count` little-endian fp32 values; NaN or ±Inf is a load error (`non_finite_float`)."""
    arr = np.frombuffer(raw, dtype="<f4", count=count).astype(np.float32)
    if check and not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise LoadError("non_finite_float", f"{what}[{bad}] is {arr[bad]} (NaN/Inf are not allowed)")
    return arr


#: 2-bit ternary codes: 00 -> 0, 01 -> +1, 10 -> -1; 11 is reserved (decision 5).
TERNARY_DECODE = np.array([0, 1, -1, 0], dtype=np.int8)


def unpack_ternary(raw: bytes, count: int, rule: str, what: str) -> np.ndarray:
    """Four codes per byte, low bits = low index. A `11` code raises LoadError(rule)."""
    b = np.frombuffer(raw, dtype=np.uint8, count=count // 4)
    pairs = np.stack([(b >> s) & 0b11 for s in (0, 2, 4, 6)], axis=-1).reshape(-1)
    if np.any(pairs == 0b11):
        bad = int(np.flatnonzero(pairs == 0b11)[0])
        raise LoadError(rule, f"{what}: element {bad} has the reserved ternary code 0b11")
    return TERNARY_DECODE[pairs]


def unpack_int4(raw: bytes, count: int) -> np.ndarray:
    """Two signed nibbles per byte, low nibble = even element; sign-extended (0x8 -> -8)."""
    b = np.frombuffer(raw, dtype=np.uint8, count=count // 2)
    nib = np.stack([b & 0x0F, b >> 4], axis=-1).reshape(-1).astype(np.int8)
    return np.where(nib >= 8, nib - 16, nib).astype(np.int8)


def _parse_sections(data: bytes, h: Header, entries: list, by_type: dict) -> Model:
    def raw(t: SectionType) -> bytes:
        e = by_type[t]
        return data[e.offset : e.end]

    vocab = _parse_vocab(raw(SectionType.TOKENIZER_VOCAB), h.vocab_size)
    tok_cfg = _parse_tokenizer_config(raw(SectionType.TOKENIZER_CONFIG), h.vocab_size)

    # Embedding table: value = code × scale[row] (§5.3).
    n_emb = h.vocab_size * h.d_model
    emb_raw = raw(SectionType.EMBEDDING_WEIGHTS)
    quant = EmbeddingQuant(h.embedding_quant)
    codes = None
    scales = None
    if quant == EmbeddingQuant.FP32:
        embedding = _f32(emb_raw, n_emb, "EMBEDDING_WEIGHTS").reshape(h.vocab_size, h.d_model)
    else:
        if quant == EmbeddingQuant.INT8:
            codes = np.frombuffer(emb_raw, dtype=np.int8, count=n_emb)
        elif quant == EmbeddingQuant.INT4:
            codes = unpack_int4(emb_raw, n_emb)
        else:
            codes = unpack_ternary(emb_raw, n_emb, "ternary_reserved_code_embedding", "EMBEDDING_WEIGHTS")
        codes = codes.reshape(h.vocab_size, h.d_model)
        scales = _f32(raw(SectionType.EMBEDDING_SCALES), h.vocab_size, "EMBEDDING_SCALES")
        embedding = codes.astype(np.float32) * scales[:, None]

    layers = []
    if h.n_layers > 0:
        layers = _parse_layers(raw(SectionType.LAYERS), h)

    fl = _f32(raw(SectionType.FINAL_LN), 2 * h.d_model, "FINAL_LN")
    pr = _f32(raw(SectionType.PROJECTION), h.output_dim * h.d_model + h.output_dim, "PROJECTION")

    metadata = None
    if SectionType.METADATA in by_type:
        metadata = _decode_utf8(raw(SectionType.METADATA))
        if metadata is None:
            raise LoadError("metadata_not_utf8", "METADATA section is not UTF-8")

    return Model(
        header=h,
        sections=entries,
        vocab=vocab,
        tokenizer_config=tok_cfg,
        embedding=embedding,
        embedding_codes=codes,
        embedding_scales=scales,
        layers=layers,
        final_ln_weight=fl[: h.d_model],
        final_ln_bias=fl[h.d_model :],
        projection_weight=pr[: h.output_dim * h.d_model].reshape(h.output_dim, h.d_model),
        projection_bias=pr[h.output_dim * h.d_model :],
        metadata=metadata,
        sha256=data[-HASH_SIZE:].hex(),
    )


def _parse_layers(raw: bytes, h: Header) -> list:
    ternary = h.weight_quant == WeightQuant.TERNARY
    pos = 0

    def take(nbytes: int) -> bytes:
        nonlocal pos
        chunk = raw[pos : pos + nbytes]
        pos += nbytes
        return chunk

    def vec(n: int, what: str) -> np.ndarray:
        return _f32(take(4 * n), n, what)

    def linear(out_f: int, in_f: int, has_bias: bool, what: str) -> Linear:
        n = out_f * in_f
        if ternary:
            w = unpack_ternary(take(n // 4), n, "ternary_reserved_code_layers", f"{what}.weight")
            w = w.astype(np.float32).reshape(out_f, in_f)
        else:
            w = _f32(take(4 * n), n, f"{what}.weight").reshape(out_f, in_f)
        # decision 3: with fp32 weights the scale is present but ignored (not validated)
        scale = _f32(take(4), 1, f"{what}.scale", check=ternary)[0]
        if ternary and not scale > 0:
            raise LoadError("nonpositive_layer_scale", f"{what}.scale is {scale}; must be > 0")
        bias = vec(out_f, f"{what}.bias") if has_bias else None
        return Linear(weight=w, scale=np.float32(scale), bias=bias, ternary=ternary)

    d, f = h.d_model, h.ffn_dim
    layers = []
    for i in range(h.n_layers):
        p = f"layers.{i}"
        ln1_w = vec(d, f"{p}.ln1.weight")
        ln1_b = vec(d, f"{p}.ln1.bias")
        q = linear(d, d, False, f"{p}.attn.q")
        k = linear(d, d, False, f"{p}.attn.k")
        v = linear(d, d, False, f"{p}.attn.v")
        out = linear(d, d, True, f"{p}.attn.out")
        ln2_w = vec(d, f"{p}.ln2.weight")
        ln2_b = vec(d, f"{p}.ln2.bias")
        up = linear(f, d, True, f"{p}.ffn.up")
        down = linear(d, f, True, f"{p}.ffn.down")
        layers.append(Layer(ln1_w, ln1_b, q, k, v, out, ln2_w, ln2_b, up, down))
    assert pos == len(raw)
    return layers


# ---------------------------------------------------------------------------------------------
# 3. Tokenizer (decisions 1, 7, 11)
# ---------------------------------------------------------------------------------------------


def hf_tokenizer(model: Model):
    """The HF `tokenizers` pipeline decision 7 prescribes, built from the file alone.

    No post-processor and no added/special tokens (decision 11): "[CLS]" typed in the text is
    plain text. Built once per model and cached.
    """
    if model._hf_tokenizer is None:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

        cfg = model.tokenizer_config
        wordpiece = models.WordPiece(
            {tok: i for i, tok in enumerate(model.vocab)},
            unk_token=model.vocab[cfg.unk_token_id],
            max_input_chars_per_word=cfg.max_input_chars_per_word,
            continuing_subword_prefix=cfg.continuing_subword_prefix,
        )
        tok = Tokenizer(wordpiece)
        tok.normalizer = normalizers.BertNormalizer(
            clean_text=True,
            handle_chinese_chars=True,
            strip_accents=model.header.strip_accents,
            lowercase=model.header.do_lower_case,
        )
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        model._hf_tokenizer = tok
    return model._hf_tokenizer


def tokenize(model: Model, text: str) -> list:
    """[CLS] + word pieces cut to max_seq_len − 2 + [SEP] (decision 1). Empty text → [CLS] [SEP]."""
    cfg = model.tokenizer_config
    pieces = hf_tokenizer(model).encode(text, add_special_tokens=False).ids
    pieces = pieces[: model.header.max_seq_len - 2]
    return [cfg.cls_token_id, *pieces, cfg.sep_token_id]


# ---------------------------------------------------------------------------------------------
# 4. Forward pass (§6), float32 throughout
# ---------------------------------------------------------------------------------------------

#: Optional observer for BitLinear's pre-rounding activations `x_norm * x_scale`.
#: make_fixtures.py uses it to reject fixtures whose values sit next to a rounding tie.
Observer = Optional[Callable[[np.ndarray], None]]


def layer_norm(x: np.ndarray, weight: Optional[np.ndarray], bias: Optional[np.ndarray]) -> np.ndarray:
    """Per row over the last axis; biased variance; eps 1e-5. weight/bias None = no affine."""
    mean = x.mean(axis=-1, keepdims=True, dtype=np.float32)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True, dtype=np.float32)
    y = centered / np.sqrt(var + LAYER_NORM_EPS)
    if weight is not None:
        y = y * weight + bias
    return y.astype(np.float32)


def bitlinear(x: np.ndarray, lin: Linear, observe: Observer = None) -> np.ndarray:
    """Spec §6.3 exactly; `x` is [tokens, in_features] float32.

    ternary:  x_norm = LN(x) without affine (per token row, decision 12)
              x_scale = 128 / max(|x_norm|, 1e-5)          per row
              x_q = clamp(round_half_even(x_norm * x_scale), -128, 127)
              y = x_q @ W_ternᵀ + bias                     bias BEFORE the rescale
              out = y / (scale * x_scale)
    fp32:     out = x @ Wᵀ + bias                          (no LN, no quantisation; scale ignored)
    """
    if not lin.ternary:
        y = x @ lin.weight.T
        if lin.bias is not None:
            y = y + lin.bias
        return y.astype(np.float32)
    x_norm = layer_norm(x, None, None)
    x_scale = ACTIVATION_RANGE_MAX / np.maximum(np.abs(x_norm).max(axis=-1, keepdims=True), ABSMAX_FLOOR)
    pre = (x_norm * x_scale).astype(np.float32)
    if observe is not None:
        observe(pre)
    x_q = np.clip(np.round(pre), -128, 127).astype(np.float32)  # np.round: ties to even
    y = x_q @ lin.weight.T  # exact: integer-valued operands, |sums| << 2^24
    if lin.bias is not None:
        y = y + lin.bias
    return (y / (lin.scale * x_scale)).astype(np.float32)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True, dtype=np.float32)).astype(np.float32)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact erf GELU 0.5·x·(1 + erf(x/√2)), evaluated in float64 and rounded to float32."""
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf, otypes=[np.float64])(x64 / math.sqrt(2.0))
    return (0.5 * x64 * (1.0 + erf)).astype(np.float32)


def attention(h: np.ndarray, layer: Layer, n_heads: int, observe: Observer = None) -> np.ndarray:
    n, d = h.shape
    d_head = d // n_heads
    q = bitlinear(h, layer.q, observe)
    k = bitlinear(h, layer.k, observe)
    v = bitlinear(h, layer.v, observe)
    # [n, d] -> [heads, n, d_head]; head j owns columns j*d_head .. (j+1)*d_head
    q, k, v = (m.reshape(n, n_heads, d_head).transpose(1, 0, 2) for m in (q, k, v))
    scores = (q @ k.transpose(0, 2, 1)) / np.float32(math.sqrt(d_head))
    a = softmax(scores.astype(np.float32)) @ v  # [heads, n, d_head]
    merged = a.transpose(1, 0, 2).reshape(n, d).astype(np.float32)
    return bitlinear(merged, layer.out, observe)


def forward(model: Model, ids: Sequence[int], observe: Observer = None) -> np.ndarray:
    """ids → projected (un-normalised) [output_dim] float32. Spec §6.1 / §6.2."""
    h = model.header
    # The tokenizer never pads, so every id is active (see clarifications: pad_token_id).
    x = model.embedding[np.asarray(ids, dtype=np.int64)]  # [n_active, d_model]
    for layer in model.layers:
        a = layer_norm(x, layer.ln1_weight, layer.ln1_bias)
        x = (x + attention(a, layer, h.n_heads, observe)).astype(np.float32)
        f = layer_norm(x, layer.ln2_weight, layer.ln2_bias)
        f = gelu(bitlinear(f, layer.up, observe))
        x = (x + bitlinear(f, layer.down, observe)).astype(np.float32)
    x = layer_norm(x, model.final_ln_weight, model.final_ln_bias)
    pooled = x.mean(axis=0, dtype=np.float32)
    return (pooled @ model.projection_weight.T + model.projection_bias).astype(np.float32)


def normalize(v: np.ndarray) -> np.ndarray:
    """v / max(‖v‖₂, 1e-12) (decision 4)."""
    norm = np.sqrt(np.sum(v * v, dtype=np.float32))
    return (v / np.maximum(norm, NORMALIZE_EPS)).astype(np.float32)


def check_dims(model: Model, dims: Optional[int]) -> int:
    """Decision 8: only matryoshka_dims[..n] ∪ {output_dim}; None means output_dim."""
    if dims is None:
        return model.header.output_dim
    valid = model.valid_dims
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or int(dims) not in valid:
        raise ValueError(f"dims {dims!r} is not valid for this model; valid dims: {valid}")
    return int(dims)


def embed_ids(model: Model, ids: Sequence[int], dims: Optional[int] = None, observe: Observer = None) -> np.ndarray:
    dims = check_dims(model, dims)
    projected = forward(model, ids, observe)
    with np.errstate(over="ignore", invalid="ignore"):
        out = normalize(projected[:dims])  # §6.4: truncate, then normalise
    if not np.all(np.isfinite(out)):
        # Clarification F.8: an overflowing forward pass is an error, never a NaN vector.
        raise FloatingPointError("the forward pass overflowed: the embedding is not finite "
                                 "(the model's weights are numerically broken)")
    return out


def embed(model: Model, text: str, dims: Optional[int] = None) -> np.ndarray:
    """The L2-normalised float32 embedding of `text`, truncated to `dims` (default output_dim)."""
    dims = check_dims(model, dims)
    return embed_ids(model, tokenize(model, text), dims)


def embed_batch(model: Model, texts: Sequence[str], dims: Optional[int] = None) -> np.ndarray:
    """[len(texts), dims] float32; each row exactly `embed(model, text, dims)`."""
    dims = check_dims(model, dims)
    out = np.zeros((len(texts), dims), dtype=np.float32)
    for i, text in enumerate(texts):
        out[i] = embed(model, text, dims)
    return out
