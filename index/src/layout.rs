//! The index byte layout, `index_version` 2. One layout, written and read natively and in the
//! browser. All integers little-endian, floats IEEE-754 fp32 little-endian, strings UTF-8 with a
//! length prefix. In the keywords section, integers marked `varint` are unsigned LEB128 (7 bits
//! per byte, low first, high bit = more follows), at most 5 bytes, value ≤ `u32::MAX`, in the
//! shortest form (no trailing `0x80 … 0x00` padding). Sections follow each other without padding:
//!
//! ```text
//! off  size            field
//! ---- header ----------------------------------------------------------------------------
//!   0  4               magic "LEIX"
//!   4  2               index_version u16 (= 2; 1 had no keywords section)
//!   6  2               flags u16: bit 0 = int8 vectors (see "vectors"); other bits 0
//! ---- manifest (spec §8) ----------------------------------------------------------------
//!   8  1               model_id length L (1..=16)
//!   9  L               model_id, UTF-8, no NUL
//!      1 / 1 / 2       model_version major u8 / minor u8 / patch u16
//!      4               dims u32 (1..=65535)
//!      8               count u64 — live documents
//!      1               metric u8 (1 = cosine)
//!      32              model file SHA-256
//! ---- parameters -------------------------------------------------------------------------
//!      2               M u16 (2..=128)
//!      4               ef_construction u32 (1..=100000)
//!      4               ef_search u32 (1..=100000)
//!      8               seed u64
//!      4               compaction_threshold f32, (0, 1]
//!      8               PRNG state u64 (so inserts after a load draw what they would have)
//! ---- vectors ----------------------------------------------------------------------------
//!      4               slots u32 — live + deleted
//!      slots·dims·4    vectors f32, row-major, L2-normalised, finite — or, with header flag
//!                      bit 0, per slot: scale f32 (finite, > 0) + dims × i8 codes in
//!                      -127..=127 (value = code × scale): slots·(4 + dims) bytes
//! ---- tombstones -------------------------------------------------------------------------
//!      ⌈slots/8⌉       bitset, bit (i mod 8) of byte ⌊i/8⌋ set = slot i deleted; unused bits 0
//! ---- graph ------------------------------------------------------------------------------
//!      4               entry point slot u32 (0xFFFFFFFF when slots = 0)
//!      1               max level u8 (0..=16) = level of the entry point
//!      per slot:  1    level u8 (≤ max level)
//!                 per layer 0..=level:  2  count u16 (≤ 2M on layer 0, ≤ M above)
//!                                       4·count  neighbour slots u32 (< slots, ≠ self,
//!                                                distinct, level ≥ this layer)
//! ---- payloads ---------------------------------------------------------------------------
//!      per slot: id, title, url, snippet — each u32 byte length + UTF-8
//!                (ids of live slots distinct)
//! ---- keywords (BM25, see crate::keywords) -----------------------------------------------
//!      1               flags u8: bit 0 = English stemming; bit 1 = terms fold `ı` → `i`
//!                      (set by every writer since; an index without it is read with its
//!                      terms re-folded, `keywords::refold_legacy_term`); other bits 0
//!      varint          vocabulary size V
//!      per term:       varint byte length (≥ 1) + UTF-8; terms distinct; term id = position
//!      per slot:       varint term count T (≤ V)
//!                      T × (varint term id delta, varint tf ≥ 1): the first delta is the term
//!                          id, each later one ≥ 1 (ids strictly increasing), every id < V;
//!                          Σ tf ≤ u32::MAX is the slot's length |d| (not stored)
//!                      (deleted slots keep their lists; they count in no statistic)
//! ---- trailer ----------------------------------------------------------------------------
//!      32              SHA-256 of every preceding byte
//! ```
//!
//! Loading trusts no length: each is checked against the bytes that remain before anything is
//! allocated or sliced (a vocabulary of V terms needs ≥ 2·V bytes, a list of T pairs ≥ 2·T), and
//! every cross-reference (neighbour ids, levels, entry point, count, term ids) is validated, so
//! any byte string either loads into an index that searches safely or is rejected with an
//! [`IndexError`]. Keyword postings, document frequencies and lengths are derived on load, never
//! read. Every value has exactly one encoding, so `to_bytes(from_bytes(b)) == b` for every `b`
//! that loads.
//!
//! An index of another `index_version` (such as 1, written before keyword search) is refused
//! with [`IndexError::UnsupportedIndexVersion`] before anything past the header is read; it is
//! rebuilt with `lightembed index`.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::error::IndexError;
use crate::graph::{Graph, Visited, MAX_LEVEL, NO_ENTRY};
use crate::index::{Document, Index, Params, Payload};
use crate::keywords::Keywords;
use crate::manifest::{Manifest, ManifestFields, Metric, ModelVersion};
use crate::util::SplitMix64;

/// Keyword flags bit 1: the terms fold `ı` → `i` (see [`crate::keywords`], "Folding").
const KW_FOLDS_DOTLESS_I: u8 = 2;
use crate::INDEX_VERSION;

/// The four bytes every index starts with.
pub const MAGIC: [u8; 4] = *b"LEIX";

const HEADER_LEN: usize = 8;
const TRAILER_LEN: usize = 32;

pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    /// Unsigned LEB128, shortest form.
    pub(crate) fn varint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
}

/// The manifest fields (spec §8) as the layout stores them, with `count` live documents.
pub(crate) fn write_manifest(w: &mut Writer, m: &Manifest, count: u64) {
    w.u8(m.model_id.len() as u8);
    w.buf.extend_from_slice(m.model_id.as_bytes());
    w.u8(m.model_version.major);
    w.u8(m.model_version.minor);
    w.u16(m.model_version.patch);
    w.u32(m.dims as u32);
    w.u64(count);
    w.u8(m.metric.code());
    w.buf.extend_from_slice(&m.model_sha256);
}

/// Reads fields from `buf`, refusing to go past its end.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Fails unless `n` more bytes are there.
    pub(crate) fn need(&self, n: u64, what: &'static str) -> Result<usize, IndexError> {
        match usize::try_from(n) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => Err(IndexError::Truncated {
                what,
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            }),
        }
    }

    pub(crate) fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], IndexError> {
        let n = self.need(n, what)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], IndexError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64, what)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, IndexError> {
        Ok(self.array::<1>(what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, IndexError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, IndexError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, IndexError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn f32(&mut self, what: &'static str) -> Result<f32, IndexError> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }
    pub(crate) fn str(&mut self, what: &'static str) -> Result<String, IndexError> {
        let n = self.u32(what)?;
        let bytes = self.take(n as u64, what)?;
        core::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| malformed(what, format!("not UTF-8 ({e})")))
    }
    /// Unsigned LEB128 of at most 5 bytes, value ≤ `u32::MAX`, in its shortest form.
    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u32, IndexError> {
        let start = self.pos;
        let mut v: u64 = 0;
        for i in 0..5 {
            let b = self.u8(what)?;
            v |= ((b & 0x7F) as u64) << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return Err(malformed(
                        what,
                        format!("varint at byte {start} is not in its shortest form"),
                    ));
                }
                return u32::try_from(v).map_err(|_| {
                    malformed(what, format!("varint at byte {start} exceeds u32::MAX"))
                });
            }
        }
        Err(malformed(
            what,
            format!("varint at byte {start} is longer than 5 bytes"),
        ))
    }
}

pub(crate) fn malformed(what: &'static str, detail: String) -> IndexError {
    IndexError::Malformed { what, detail }
}

/// Checks magic and `index_version` (the 8-byte header).
fn read_header(bytes: &[u8]) -> Result<u16, IndexError> {
    if bytes.len() < 4 || bytes[..4] != MAGIC {
        if bytes.len() < 4 && MAGIC.starts_with(bytes) {
            return Err(IndexError::Truncated {
                what: "header",
                offset: 0,
                needed: HEADER_LEN as u64,
                available: bytes.len(),
            });
        }
        return Err(IndexError::BadMagic {
            found: bytes[..bytes.len().min(4)].to_vec(),
        });
    }
    let mut r = Reader { buf: bytes, pos: 4 };
    let version = r.u16("header")?;
    if version != INDEX_VERSION {
        return Err(IndexError::UnsupportedIndexVersion {
            found: version,
            supported: INDEX_VERSION,
        });
    }
    let flags = r.u16("header")?;
    if flags & !1 != 0 {
        return Err(malformed(
            "header flags",
            format!("reserved bits set ({flags:#06x})"),
        ));
    }
    Ok(flags)
}

pub(crate) fn read_manifest(r: &mut Reader<'_>) -> Result<Manifest, IndexError> {
    let id_len = r.u8("model_id length")?;
    let id_bytes = r.take(id_len as u64, "model_id")?;
    let model_id = core::str::from_utf8(id_bytes)
        .map_err(|e| malformed("model_id", format!("not UTF-8 ({e})")))?
        .to_owned();
    let major = r.u8("model_version")?;
    let minor = r.u8("model_version")?;
    let patch = r.u16("model_version")?;
    let dims = r.u32("dims")? as usize;
    let count = r.u64("count")?;
    let metric_code = r.u8("metric")?;
    let metric = Metric::from_code(metric_code)
        .ok_or_else(|| malformed("metric", format!("unknown metric code {metric_code}")))?;
    let model_sha256 = r.array::<32>("model SHA-256")?;
    let fields = ManifestFields {
        model_id,
        model_version: ModelVersion::new(major, minor, patch),
        dims,
        metric,
        model_sha256,
    };
    fields.validate().map_err(|e| match e {
        IndexError::InvalidArgument { what, detail } => malformed(what, detail),
        e => e,
    })?;
    let mut m = Manifest::from_fields(fields);
    m.count = count;
    Ok(m)
}

/// Reads only the header and manifest of index bytes — enough for the §8 startup check before
/// loading (or fetching the rest of) a large index. Does **not** verify the checksum; a full
/// [`Index::from_bytes`] does.
///
/// Errors: [`IndexError::BadMagic`], [`IndexError::UnsupportedIndexVersion`],
/// [`IndexError::Truncated`], [`IndexError::Malformed`].
pub fn read_manifest_prefix(bytes: &[u8]) -> Result<Manifest, IndexError> {
    read_header(bytes)?;
    let mut r = Reader {
        buf: bytes,
        pos: HEADER_LEN,
    };
    read_manifest(&mut r)
}

impl Index {
    /// Serialises the whole index (manifest, parameters, PRNG state, vectors, tombstones, graph,
    /// payloads, SHA-256 trailer) in the layout documented in [`crate::layout`].
    /// `from_bytes(&x.to_bytes())?.to_bytes() == x.to_bytes()` always holds.
    ///
    /// Allocates once: the buffer is sized from an upper bound of the serialised length
    /// ([`Index::write_chunks`] for a caller that must not hold the index's bytes whole).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_len_bound());
        self.write_chunks(1 << 20, &mut |piece| out.extend_from_slice(piece));
        out
    }

    /// An upper bound of `to_bytes().len()` in bytes, computed without serialising (each
    /// keyword varint counted at its 5-byte maximum).
    pub fn serialized_len_bound(&self) -> usize {
        let slots = self.docs.len();
        let payload_len: usize = self
            .docs
            .iter()
            .map(|d| {
                16 + d.id.len()
                    + d.payload.title.len()
                    + d.payload.url.len()
                    + d.payload.snippet.len()
            })
            .sum();
        let d = self.manifest.dims;
        let vectors = match &self.int8_scales {
            None => self.vectors.len() * 4,
            Some(_) => slots * (4 + d),
        };
        let graph: usize = (0..slots as u32)
            .map(|slot| {
                1 + (0..=self.graph.levels[slot as usize])
                    .map(|layer| 2 + 4 * self.graph.neighbors(slot, layer).len())
                    .sum::<usize>()
            })
            .sum();
        let kw = &self.keywords;
        let keywords = 1
            + 5
            + kw.vocab.iter().map(|t| 5 + t.len()).sum::<usize>()
            + (0..slots as u32)
                .map(|slot| 5 + 10 * kw.terms_of(slot).len())
                .sum::<usize>();
        512 + vectors + slots.div_ceil(8) + 5 + graph + payload_len + keywords + 32
    }

    /// Serialises the index as [`Index::to_bytes`] does, handing it to `sink` in pieces of about
    /// `chunk_bytes` (at least one whole field; the last piece is the SHA-256 trailer), so that a
    /// caller can move it elsewhere (the browser app: into JavaScript memory, for IndexedDB)
    /// without the whole serialised index ever sitting in its own heap beside the index. The
    /// concatenated pieces equal `to_bytes()`.
    pub fn write_chunks(&self, chunk_bytes: usize, sink: &mut dyn FnMut(&[u8])) {
        let chunk_bytes = chunk_bytes.max(1);
        let mut hasher = Sha256::new();
        let mut w = Writer {
            buf: Vec::with_capacity(chunk_bytes.min(self.serialized_len_bound()) + 1024),
        };
        // Hands the pieces written so far on once they reach `chunk_bytes`.
        let mut flush = |w: &mut Writer, force: bool| {
            if !w.buf.is_empty() && (force || w.buf.len() >= chunk_bytes) {
                hasher.update(&w.buf);
                sink(&w.buf);
                w.buf.clear();
            }
        };
        let slots = self.docs.len();
        // header
        w.buf.extend_from_slice(&MAGIC);
        w.u16(INDEX_VERSION);
        w.u16(u16::from(self.int8_scales.is_some()));
        // manifest
        write_manifest(&mut w, &self.manifest, self.len() as u64);
        // parameters
        let p = &self.params;
        w.u16(p.m as u16);
        w.u32(p.ef_construction as u32);
        w.u32(p.ef_search as u32);
        w.u64(p.seed);
        w.f32(p.compaction_threshold);
        w.u64(self.rng.state);
        // vectors
        w.u32(slots as u32);
        match &self.int8_scales {
            None => {
                for (i, &x) in self.vectors.iter().enumerate() {
                    w.f32(x);
                    if i % 4096 == 4095 {
                        flush(&mut w, false);
                    }
                }
            }
            Some(scales) => {
                let d = self.manifest.dims;
                for (slot, &scale) in scales.iter().enumerate() {
                    w.f32(scale);
                    for &x in &self.vectors[slot * d..(slot + 1) * d] {
                        // Exact: the stored values are code × scale (quantize_in_place).
                        w.buf.push((x / scale).round() as i8 as u8);
                    }
                    flush(&mut w, false);
                }
            }
        }
        // tombstones
        let mut bits = vec![0u8; slots.div_ceil(8)];
        for (i, &del) in self.deleted.iter().enumerate() {
            if del {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        w.buf.extend_from_slice(&bits);
        // graph
        let g = &self.graph;
        w.u32(g.entry);
        w.u8(g.max_level);
        for slot in 0..slots as u32 {
            let level = g.levels[slot as usize];
            w.u8(level);
            for layer in 0..=level {
                let list = g.neighbors(slot, layer);
                w.u16(list.len() as u16);
                for &n in list {
                    w.u32(n);
                }
            }
            flush(&mut w, false);
        }
        // payloads
        for d in &self.docs {
            w.str(&d.id);
            w.str(&d.payload.title);
            w.str(&d.payload.url);
            w.str(&d.payload.snippet);
            flush(&mut w, false);
        }
        // keywords
        let kw = &self.keywords;
        w.u8(kw.stem as u8 | KW_FOLDS_DOTLESS_I);
        w.varint(kw.vocab.len() as u32);
        for term in &kw.vocab {
            w.varint(term.len() as u32);
            w.buf.extend_from_slice(term.as_bytes());
            flush(&mut w, false);
        }
        for slot in 0..slots as u32 {
            let list = kw.terms_of(slot);
            w.varint(list.len() as u32);
            let mut prev = 0;
            for (i, &(id, tf)) in list.iter().enumerate() {
                w.varint(if i == 0 { id } else { id - prev });
                w.varint(tf);
                prev = id;
            }
            flush(&mut w, false);
        }
        flush(&mut w, true);
        drop(flush);
        let digest = hasher.finalize();
        sink(&digest);
    }

    /// Loads an index written by [`Index::to_bytes`] (natively or in the browser).
    ///
    /// Checks, in order: magic ([`IndexError::BadMagic`]), `index_version`
    /// ([`IndexError::UnsupportedIndexVersion`], the §8 message), the SHA-256 trailer
    /// ([`IndexError::ChecksumMismatch`]), then every field and cross-reference
    /// ([`IndexError::Truncated`], [`IndexError::Malformed`], [`IndexError::TrailingBytes`]).
    /// Never panics, never allocates more than the bytes justify.
    ///
    /// Model compatibility is a separate step: call [`Index::check_compatible`] next.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index, IndexError> {
        let flags = read_header(bytes)?;
        if bytes.len() < HEADER_LEN + TRAILER_LEN {
            return Err(IndexError::Truncated {
                what: "SHA-256 trailer",
                offset: HEADER_LEN,
                needed: TRAILER_LEN as u64,
                available: bytes.len().saturating_sub(HEADER_LEN),
            });
        }
        let (body, trailer) = bytes.split_at(bytes.len() - TRAILER_LEN);
        if Sha256::digest(body).as_slice() != trailer {
            return Err(IndexError::ChecksumMismatch);
        }
        parse_body(body, flags)
    }
}

fn parse_body(body: &[u8], flags: u16) -> Result<Index, IndexError> {
    let mut r = Reader {
        buf: body,
        pos: HEADER_LEN,
    };
    let manifest = read_manifest(&mut r)?;
    let dims = manifest.dims;

    // parameters
    let params = Params {
        m: r.u16("M")? as usize,
        ef_construction: r.u32("ef_construction")? as usize,
        ef_search: r.u32("ef_search")? as usize,
        seed: r.u64("seed")?,
        compaction_threshold: r.f32("compaction_threshold")?,
    };
    params.validate().map_err(|e| match e {
        IndexError::InvalidArgument { what, detail } => malformed(what, detail),
        e => e,
    })?;
    let rng = SplitMix64 {
        state: r.u64("PRNG state")?,
    };

    // vectors
    let slots = r.u32("slot count")? as usize;
    if slots as u32 == NO_ENTRY {
        return Err(malformed("slot count", "0xFFFFFFFF slots".into()));
    }
    let n_floats = (slots as u64) * (dims as u64);
    let mut int8_scales = None;
    let mut vectors;
    if flags & 1 == 0 {
        let raw = r.take(n_floats * 4, "vectors")?;
        vectors = Vec::with_capacity(n_floats as usize);
        for c in raw.chunks_exact(4) {
            let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if !x.is_finite() {
                return Err(malformed(
                    "vectors",
                    format!("non-finite component at float {}", vectors.len()),
                ));
            }
            vectors.push(x);
        }
    } else {
        let raw = r.take((slots as u64) * (4 + dims as u64), "int8 vectors")?;
        vectors = Vec::with_capacity(n_floats as usize);
        let mut scales = Vec::with_capacity(slots);
        for (slot, row) in raw.chunks_exact(4 + dims).enumerate() {
            let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
            if !(scale.is_finite() && scale > 0.0) {
                return Err(malformed(
                    "int8 vectors",
                    format!("slot {slot}: scale {scale} is not a finite number > 0"),
                ));
            }
            for &b in &row[4..] {
                let code = b as i8;
                if code == i8::MIN {
                    return Err(malformed(
                        "int8 vectors",
                        format!("slot {slot}: code -128 (codes are -127..=127)"),
                    ));
                }
                let x = code as f32 * scale;
                if !x.is_finite() {
                    return Err(malformed(
                        "int8 vectors",
                        format!("slot {slot}: non-finite value"),
                    ));
                }
                vectors.push(x);
            }
            scales.push(scale);
        }
        int8_scales = Some(scales);
    }

    // tombstones
    let bits = r.take(slots.div_ceil(8) as u64, "tombstones")?;
    let mut deleted = Vec::with_capacity(slots);
    for i in 0..slots {
        deleted.push(bits[i / 8] & (1 << (i % 8)) != 0);
    }
    let used_bits = slots % 8;
    if used_bits != 0 && bits[slots / 8] >> used_bits != 0 {
        return Err(malformed(
            "tombstones",
            "bits set beyond the last slot".into(),
        ));
    }
    let n_deleted = deleted.iter().filter(|&&d| d).count();
    if manifest.count != (slots - n_deleted) as u64 {
        return Err(malformed(
            "count",
            format!(
                "manifest says {} live documents, tombstones leave {}",
                manifest.count,
                slots - n_deleted
            ),
        ));
    }

    // graph
    let entry = r.u32("entry point")?;
    let max_level = r.u8("max level")?;
    if max_level > MAX_LEVEL {
        return Err(malformed("max level", format!("{max_level} > {MAX_LEVEL}")));
    }
    // Each slot needs ≥ 3 graph bytes and ≥ 16 payload bytes: refuse counts the bytes cannot hold
    // before reserving per-slot storage.
    r.need(slots as u64 * 19, "graph and payloads")?;
    let mut graph = Graph::new(params.m);
    for slot in 0..slots as u32 {
        let level = r.u8("node level")?;
        if level > max_level {
            return Err(malformed(
                "node level",
                format!("slot {slot} has level {level} > max level {max_level}"),
            ));
        }
        graph.push_node(level);
        for layer in 0..=level {
            let n = r.u16("neighbour count")? as usize;
            if n > graph.cap(layer) {
                return Err(malformed(
                    "neighbour count",
                    format!("slot {slot} layer {layer}: {n} > {}", graph.cap(layer)),
                ));
            }
            let raw = r.take(n as u64 * 4, "neighbour list")?;
            let list: Vec<u32> = raw
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            graph.set_neighbors(slot, layer, &list);
        }
    }
    if slots == 0 {
        if entry != NO_ENTRY || max_level != 0 {
            return Err(malformed("entry point", "set in an empty index".into()));
        }
    } else {
        if entry as usize >= slots {
            return Err(malformed(
                "entry point",
                format!("slot {entry} ≥ {slots} slots"),
            ));
        }
        let top = graph.levels.iter().copied().max().unwrap_or(0);
        if graph.levels[entry as usize] != max_level || top != max_level {
            return Err(malformed(
                "entry point",
                format!(
                    "max level {max_level}, entry level {}, highest level {top}",
                    graph.levels[entry as usize]
                ),
            ));
        }
    }
    graph.entry = entry;
    graph.max_level = max_level;
    // every link must point at an existing slot that lives on that layer, no self-links, no repeats
    let mut seen = Visited::default();
    for slot in 0..slots as u32 {
        for layer in 0..=graph.levels[slot as usize] {
            seen.reset(slots);
            for &n in graph.neighbors(slot, layer) {
                if n as usize >= slots
                    || graph.levels[n as usize] < layer
                    || n == slot
                    || !seen.insert(n)
                {
                    return Err(malformed(
                        "neighbour list",
                        format!("slot {slot} layer {layer}: invalid, self or repeated link to {n}"),
                    ));
                }
            }
        }
    }

    // payloads
    let mut docs = Vec::with_capacity(slots);
    let mut ids = HashMap::with_capacity(slots - n_deleted);
    for (slot, &is_deleted) in deleted.iter().enumerate() {
        let id = r.str("document id")?;
        let title = r.str("document title")?;
        let url = r.str("document url")?;
        let snippet = r.str("document snippet")?;
        if !is_deleted && ids.insert(id.clone(), slot as u32).is_some() {
            return Err(malformed("document id", format!("{id:?} appears twice")));
        }
        docs.push(Document {
            id,
            payload: Payload {
                title,
                url,
                snippet,
            },
        });
    }
    let keywords = read_keywords(&mut r, &deleted)?;
    if r.remaining() != 0 {
        return Err(IndexError::TrailingBytes {
            count: r.remaining(),
        });
    }

    Ok(Index {
        manifest,
        params,
        rng,
        vectors,
        docs,
        deleted,
        n_deleted,
        ids,
        graph,
        keywords,
        int8_scales,
        pool: Mutex::new(Vec::new()),
    })
}

/// The keywords section (see the table at the top): vocabulary and per-slot term lists, checked
/// in full; postings and statistics are rebuilt from them.
fn read_keywords(r: &mut Reader<'_>, deleted: &[bool]) -> Result<Keywords, IndexError> {
    let flags = r.u8("keyword flags")?;
    if flags & !(1 | KW_FOLDS_DOTLESS_I) != 0 {
        return Err(malformed(
            "keyword flags",
            format!("reserved bits set ({flags:#04x})"),
        ));
    }
    let n_terms = r.varint("keyword vocabulary size")?;
    // each term takes ≥ 2 bytes (length + at least one byte)
    r.need(n_terms as u64 * 2, "keyword vocabulary")?;
    let mut vocab = Vec::with_capacity(n_terms as usize);
    let mut seen = HashMap::with_capacity(n_terms as usize);
    for id in 0..n_terms {
        let len = r.varint("keyword term length")?;
        if len == 0 {
            return Err(malformed("keyword term", format!("term {id} is empty")));
        }
        let bytes = r.take(len as u64, "keyword term")?;
        let term = core::str::from_utf8(bytes)
            .map_err(|e| malformed("keyword term", format!("term {id} is not UTF-8 ({e})")))?;
        if let Some(first) = seen.insert(term, id) {
            return Err(malformed(
                "keyword term",
                format!("{term:?} is both term {first} and term {id}"),
            ));
        }
        vocab.push(term.to_owned());
    }
    drop(seen);
    // each slot takes ≥ 1 byte (its term count)
    r.need(deleted.len() as u64, "keyword term lists")?;
    let stem = flags & 1 != 0;
    let legacy = flags & KW_FOLDS_DOTLESS_I == 0;
    // An index written before `ı` folded to `i`: its terms as today's tokeniser makes them, two
    // old terms that now coincide merged (their term frequencies added per slot), so queries and
    // later inserts meet the same vocabulary a fresh build would have.
    let remap: Option<Vec<u32>> = (legacy && vocab.iter().any(|t| t.contains('ı'))).then(|| {
        let mut ids: HashMap<String, u32> = HashMap::with_capacity(vocab.len());
        let mut merged = Vec::with_capacity(vocab.len());
        let map = vocab
            .iter()
            .map(|t| {
                let t = crate::keywords::refold_legacy_term(t, stem);
                *ids.entry(t.clone()).or_insert_with(|| {
                    merged.push(t);
                    merged.len() as u32 - 1
                })
            })
            .collect();
        vocab = merged;
        map
    });
    let mut kw = Keywords::with_vocab(stem, vocab);
    kw.refolded = legacy;
    let mut list: Vec<(u32, u32)> = Vec::new();
    for (slot, &is_deleted) in deleted.iter().enumerate() {
        let count = r.varint("keyword term count")?;
        if count > n_terms {
            return Err(malformed(
                "keyword term count",
                format!("slot {slot} lists {count} terms but the vocabulary has {n_terms}"),
            ));
        }
        // each (delta, tf) pair takes ≥ 2 bytes
        r.need(count as u64 * 2, "keyword term list")?;
        list.clear();
        let mut total: u64 = 0;
        let mut prev: u64 = 0;
        for i in 0..count {
            let delta = r.varint("keyword term id")? as u64;
            if i > 0 && delta == 0 {
                return Err(malformed(
                    "keyword term id",
                    format!("slot {slot}: term ids not strictly increasing"),
                ));
            }
            let id = if i == 0 { delta } else { prev + delta };
            if id >= n_terms as u64 {
                return Err(malformed(
                    "keyword term id",
                    format!("slot {slot}: term id {id} ≥ vocabulary size {n_terms}"),
                ));
            }
            let tf = r.varint("keyword term frequency")?;
            if tf == 0 {
                return Err(malformed(
                    "keyword term frequency",
                    format!("slot {slot}: term {id} occurs 0 times"),
                ));
            }
            total += tf as u64;
            list.push((id as u32, tf));
            prev = id;
        }
        if total > u32::MAX as u64 {
            return Err(malformed(
                "keyword term frequency",
                format!("slot {slot}: {total} tokens in all, more than u32::MAX"),
            ));
        }
        if let Some(map) = &remap {
            for e in list.iter_mut() {
                e.0 = map[e.0 as usize];
            }
            list.sort_unstable_by_key(|e| e.0);
            list.dedup_by(|b, a| {
                // `a` is kept: adjacent equal ids (two old terms of one new term) add up
                if a.0 == b.0 {
                    a.1 += b.1;
                    true
                } else {
                    false
                }
            });
        }
        kw.push_slot(&list, is_deleted);
    }
    Ok(kw)
}
