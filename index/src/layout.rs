//! The index byte layout, `index_version` 1. One layout, written and read natively and in the
//! browser. All integers little-endian, floats IEEE-754 fp32 little-endian, strings UTF-8 with a
//! length prefix. Sections follow each other without padding:
//!
//! ```text
//! off  size            field
//! ---- header ----------------------------------------------------------------------------
//!   0  4               magic "LEIX"
//!   4  2               index_version u16 (= 1)
//!   6  2               flags u16, reserved, must be 0
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
//!      slots·dims·4    vectors f32, row-major, L2-normalised, finite
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
//! ---- trailer ----------------------------------------------------------------------------
//!      32              SHA-256 of every preceding byte
//! ```
//!
//! Loading trusts no length: each is checked against the bytes that remain before anything is
//! allocated or sliced, and every cross-reference (neighbour ids, levels, entry point, count) is
//! validated, so any byte string either loads into an index that searches safely or is rejected
//! with an [`IndexError`].

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::error::IndexError;
use crate::graph::{Graph, Visited, MAX_LEVEL, NO_ENTRY};
use crate::index::{Document, Index, Params, Payload};
use crate::manifest::{Manifest, ManifestFields, Metric, ModelVersion};
use crate::util::SplitMix64;
use crate::INDEX_VERSION;

/// The four bytes every index starts with.
pub const MAGIC: [u8; 4] = *b"LEIX";

const HEADER_LEN: usize = 8;
const TRAILER_LEN: usize = 32;

struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
}

/// Reads fields from `buf`, refusing to go past its end.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Fails unless `n` more bytes are there.
    fn need(&self, n: u64, what: &'static str) -> Result<usize, IndexError> {
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

    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], IndexError> {
        let n = self.need(n, what)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], IndexError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64, what)?);
        Ok(a)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, IndexError> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, IndexError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, IndexError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, IndexError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, IndexError> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }
    fn str(&mut self, what: &'static str) -> Result<String, IndexError> {
        let n = self.u32(what)?;
        let bytes = self.take(n as u64, what)?;
        core::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| malformed(what, format!("not UTF-8 ({e})")))
    }
}

fn malformed(what: &'static str, detail: String) -> IndexError {
    IndexError::Malformed { what, detail }
}

/// Checks magic and `index_version` (the 8-byte header).
fn read_header(bytes: &[u8]) -> Result<(), IndexError> {
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
    if flags != 0 {
        return Err(malformed(
            "header flags",
            format!("reserved bits set ({flags:#06x})"),
        ));
    }
    Ok(())
}

fn read_manifest(r: &mut Reader<'_>) -> Result<Manifest, IndexError> {
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
    pub fn to_bytes(&self) -> Vec<u8> {
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
        let mut w = Writer {
            buf: Vec::with_capacity(
                256 + self.vectors.len() * 4 + slots * (8 * self.graph.m + 8) + payload_len,
            ),
        };
        // header
        w.buf.extend_from_slice(&MAGIC);
        w.u16(INDEX_VERSION);
        w.u16(0);
        // manifest
        let m = &self.manifest;
        w.u8(m.model_id.len() as u8);
        w.buf.extend_from_slice(m.model_id.as_bytes());
        w.u8(m.model_version.major);
        w.u8(m.model_version.minor);
        w.u16(m.model_version.patch);
        w.u32(m.dims as u32);
        w.u64(self.len() as u64);
        w.u8(m.metric.code());
        w.buf.extend_from_slice(&m.model_sha256);
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
        for &x in &self.vectors {
            w.f32(x);
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
        }
        // payloads
        for d in &self.docs {
            w.str(&d.id);
            w.str(&d.payload.title);
            w.str(&d.payload.url);
            w.str(&d.payload.snippet);
        }
        let digest = Sha256::digest(&w.buf);
        w.buf.extend_from_slice(&digest);
        w.buf
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
        read_header(bytes)?;
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
        parse_body(body)
    }
}

fn parse_body(body: &[u8]) -> Result<Index, IndexError> {
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
    let raw = r.take(n_floats * 4, "vectors")?;
    let mut vectors = Vec::with_capacity(n_floats as usize);
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
        pool: Mutex::new(Vec::new()),
    })
}
