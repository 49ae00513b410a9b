//! A static model's query side in pieces, for a site visitor who needs one query vector and not
//! the model (issue 30 #1, clarification F.10).
//!
//! A static model embeds text as `normalize(mean_t r_t + b)` where `r_t = W·LN(e_t)` is a
//! per-token row (F.9). A browser that only embeds queries needs the tokenizer, the bias `b` and
//! the rows of the query's own tokens — not the embedding table, the LayerNorm or the projection.
//! [`Model::query_row_files`] cuts a static model into
//!
//! * a **head**: the model's identity (spec §3, §8), the tokenizer (vocabulary and settings,
//!   §5.2), the bias at the index dims, and the rows of `[CLS]`, `[SEP]` and `[UNK]` (in every
//!   query, or common);
//! * **row shards**: shard `s` holds the rows of ids `s·R .. min((s+1)·R, V)` (`R` rows per shard)
//!   at the index dims, f32 — the exact bits of the model's rows.
//!
//! [`QueryEncoder`] reads them back: [`QueryEncoder::missing_shards`] says which shards a query
//! needs, [`QueryEncoder::add_shard`] takes them, and [`QueryEncoder::embed`] returns **the same
//! bits as [`Model::embed`]** on the model the files were cut from (rows added in token order from
//! zero, one division by the token count, the bias, the same normalisation; tested bit for bit).
//!
//! # Byte layouts (version 1)
//!
//! Integers little-endian; `varint` unsigned LEB128; `str` a varint byte length + UTF-8. Each
//! file ends with the SHA-256 of its preceding bytes; a shard repeats the first 16 bytes of the
//! head's SHA-256 (the *head id*), so a shard of another head is refused instead of mixed in.
//!
//! ```text
//! head   "LEQH" u16 version=1
//!        str model_id; u8 major, u8 minor, u16 patch; 32-byte model SHA-256 (its trailer, §3)
//!        varint valid dims n; n × varint dims (ascending, each ≤ D)
//!        varint D (the dims of every row and of the bias)
//!        tokenizer: u32 unk, cls, sep, pad, mask ids; varint max_input_chars_per_word;
//!                   str continuing-subword prefix; u8 flags (bit 0 lowercase, bit 1 strip
//!                   accents); varint max_seq_len (≥ 2)
//!        varint V (vocabulary size); V × str token
//!        D × f32 bias
//!        varint R (rows per shard, ≥ 1); shards = ⌈V / R⌉
//!        3 × D × f32: the rows of unk, cls, sep (in that order)
//!        32-byte SHA-256
//! shard  "LEQR" u16 version=1, 16-byte head id, varint shard number s
//!        (min((s+1)·R, V) − s·R) × D × f32 rows
//!        32-byte SHA-256
//! ```

use std::fmt;

use sha2::{Digest, Sha256};

use crate::format::ModelVersion;
use crate::model::Model;
use crate::tokenizer::{Tokenizer, TokenizerConfig};

/// Version of the head and shard layouts written and read here.
pub const QUERY_ROWS_VERSION: u16 = 1;

/// Rows per shard when the caller has no reason to choose: 4 rows at 128 dims is 2 KiB, so a
/// query of ten tokens downloads ~20 KiB of rows.
pub const DEFAULT_ROWS_PER_SHARD: usize = 4;

const HEAD_MAGIC: [u8; 4] = *b"LEQH";
const SHARD_MAGIC: [u8; 4] = *b"LEQR";
const TRAILER: usize = 32;

/// A static model's query side as files: the head and the row shards, by number.
#[derive(Debug, Clone)]
pub struct QueryRowFiles {
    /// The head (fetched first).
    pub head: Vec<u8>,
    /// Row shard `s` at index `s`.
    pub shards: Vec<Vec<u8>>,
}

impl QueryRowFiles {
    /// The head id in hex (32 digits): the first 16 bytes of the head's trailing SHA-256.
    pub fn head_id(&self) -> String {
        let n = self.head.len() - TRAILER;
        crate::format::to_hex(&self.head[n..n + 16])
    }
}

/// Why query-row files could not be made or used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryRowsError {
    /// The model is a transformer: its query vector is not a sum of per-token rows.
    NotStatic,
    /// `dims` is not one of the model's (or the head's) valid dims.
    InvalidDims {
        /// The requested length.
        dims: usize,
        /// The accepted lengths, ascending.
        valid: Vec<usize>,
    },
    /// `rows_per_shard` was 0.
    ZeroRowsPerShard,
    /// A file is not a head / shard of this version, or is damaged (`what`: "head" or
    /// "row shard N"; `detail`: what is wrong).
    Malformed {
        /// Which file.
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A row shard that belongs to another head (another build or model).
    ForeignShard {
        /// The shard's number.
        shard: u32,
    },
    /// [`QueryEncoder::embed`] before the rows of these shards were added.
    MissingRows {
        /// The shards still needed, ascending.
        shards: Vec<u32>,
    },
    /// The query vector is not finite (F.8).
    NonFinite,
}

impl fmt::Display for QueryRowsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryRowsError::NotStatic => write!(
                f,
                "query rows need a static model (n_layers = 0): a transformer's query vector is not a sum of token rows"
            ),
            QueryRowsError::InvalidDims { dims, valid } => write!(
                f,
                "invalid dims {dims}: the valid dims are {}",
                crate::format::dims_list(valid, ", ")
            ),
            QueryRowsError::ZeroRowsPerShard => write!(f, "rows per shard must be at least 1"),
            QueryRowsError::Malformed { what, detail } => write!(f, "{what}: {detail}"),
            QueryRowsError::ForeignShard { shard } => write!(
                f,
                "row shard {shard} belongs to another build (its head id differs): re-read the manifest"
            ),
            QueryRowsError::MissingRows { shards } => write!(
                f,
                "the rows of shards {:?} are not loaded yet (add them first)",
                shards
            ),
            QueryRowsError::NonFinite => write!(f, "the query vector is not finite"),
        }
    }
}

impl std::error::Error for QueryRowsError {}

impl Model {
    /// Cuts this static model's query side into a head and row shards at `dims` (one of
    /// [`Model::valid_dims`]), `rows_per_shard` rows each (see the module docs). Computes every
    /// vocabulary row ([`Model::prepare_static_rows`]).
    ///
    /// # Errors
    /// [`QueryRowsError::NotStatic`] for a transformer, [`QueryRowsError::InvalidDims`],
    /// [`QueryRowsError::ZeroRowsPerShard`].
    pub fn query_row_files(
        &self,
        dims: usize,
        rows_per_shard: usize,
    ) -> Result<QueryRowFiles, QueryRowsError> {
        if self.static_rows.is_none() {
            return Err(QueryRowsError::NotStatic);
        }
        if !self.valid_dims().contains(&dims) {
            return Err(QueryRowsError::InvalidDims {
                dims,
                valid: self.valid_dims().to_vec(),
            });
        }
        if rows_per_shard == 0 {
            return Err(QueryRowsError::ZeroRowsPerShard);
        }
        self.prepare_static_rows();
        let tok = &self.tokenizer;
        let cfg = tok.config();
        let v = tok.vocab_size();
        let version = self.header.model_version();

        let mut h = Vec::new();
        h.extend_from_slice(&HEAD_MAGIC);
        h.extend_from_slice(&QUERY_ROWS_VERSION.to_le_bytes());
        put_str(&mut h, self.model_id());
        h.push(version.major);
        h.push(version.minor);
        h.extend_from_slice(&version.patch.to_le_bytes());
        h.extend_from_slice(&self.sha256());
        let valid: Vec<usize> = self
            .valid_dims()
            .iter()
            .copied()
            .filter(|&d| d <= dims)
            .collect();
        put_varint(&mut h, valid.len() as u64);
        for &d in &valid {
            put_varint(&mut h, d as u64);
        }
        put_varint(&mut h, dims as u64);
        for id in [
            cfg.unk_token_id,
            cfg.cls_token_id,
            cfg.sep_token_id,
            cfg.pad_token_id,
            cfg.mask_token_id,
        ] {
            h.extend_from_slice(&id.to_le_bytes());
        }
        put_varint(&mut h, cfg.max_input_chars_per_word as u64);
        put_str(&mut h, &cfg.continuing_subword_prefix);
        h.push(u8::from(cfg.do_lower_case) | (u8::from(cfg.strip_accents) << 1));
        put_varint(&mut h, cfg.max_seq_len as u64);
        put_varint(&mut h, v as u64);
        for id in 0..v as u32 {
            put_str(&mut h, tok.id_to_token(id).unwrap_or_default());
        }
        put_f32s(&mut h, &self.projection_bias[..dims]);
        put_varint(&mut h, rows_per_shard as u64);
        for id in [cfg.unk_token_id, cfg.cls_token_id, cfg.sep_token_id] {
            put_f32s(&mut h, &self.static_row(id)[..dims]);
        }
        let head_sha: [u8; 32] = Sha256::digest(&h).into();
        h.extend_from_slice(&head_sha);

        let shards = (0..v.div_ceil(rows_per_shard))
            .map(|s| {
                let mut b = Vec::with_capacity(32 + rows_per_shard * dims * 4 + TRAILER);
                b.extend_from_slice(&SHARD_MAGIC);
                b.extend_from_slice(&QUERY_ROWS_VERSION.to_le_bytes());
                b.extend_from_slice(&head_sha[..16]);
                put_varint(&mut b, s as u64);
                let end = ((s + 1) * rows_per_shard).min(v);
                for id in s * rows_per_shard..end {
                    put_f32s(&mut b, &self.static_row(id as u32)[..dims]);
                }
                let sha: [u8; 32] = Sha256::digest(&b).into();
                b.extend_from_slice(&sha);
                b
            })
            .collect();
        Ok(QueryRowFiles { head: h, shards })
    }
}

/// A query embedder from a head and the row shards a query needs (see the module docs).
///
/// ```text
/// let mut q = QueryEncoder::from_head(&head)?;
/// for s in q.missing_shards("how do I read a file") { q.add_shard(&fetch(s))?; }
/// let v = q.embed("how do I read a file", q.dims())?;   // == model.embed(…, dims), bit for bit
/// ```
#[derive(Clone)]
pub struct QueryEncoder {
    tokenizer: Tokenizer,
    model_id: String,
    version: ModelVersion,
    sha256: [u8; 32],
    valid_dims: Vec<usize>,
    dims: usize,
    bias: Vec<f32>,
    rows_per_shard: usize,
    head_id: [u8; 16],
    /// Row of each id once its shard (or the head) gave it.
    rows: Vec<Option<Box<[f32]>>>,
    /// Shards added.
    loaded: Vec<bool>,
}

impl fmt::Debug for QueryEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryEncoder")
            .field("model_id", &self.model_id)
            .field("dims", &self.dims)
            .field("vocab", &self.rows.len())
            .field("shards", &self.loaded.len())
            .field("loaded", &self.loaded.iter().filter(|&&l| l).count())
            .finish()
    }
}

impl QueryEncoder {
    /// Reads a head (every field bounds-checked, the SHA-256 trailer verified; nothing is
    /// allocated from a count before the bytes it claims are known to be there).
    ///
    /// # Errors
    /// [`QueryRowsError::Malformed`] (`head: …`) naming what is wrong.
    pub fn from_head(bytes: &[u8]) -> Result<QueryEncoder, QueryRowsError> {
        let mut r = Rd::open(bytes, &HEAD_MAGIC, "head")?;
        let model_id = r.str()?.to_string();
        let major = r.u8()?;
        let minor = r.u8()?;
        let patch = u16::from_le_bytes(r.take(2)?.try_into().unwrap());
        let sha256: [u8; 32] = r.take(32)?.try_into().unwrap();
        let nv = r.count(1)?;
        let mut valid_dims = Vec::with_capacity(nv);
        for _ in 0..nv {
            valid_dims.push(r.varint_usize()?);
        }
        let dims = r.varint_usize()?;
        if dims == 0 {
            return Err(r.bad("dims 0"));
        }
        if valid_dims.windows(2).any(|w| w[0] >= w[1])
            || valid_dims.iter().any(|&d| d == 0 || d > dims)
            || !valid_dims.contains(&dims)
        {
            return Err(r.bad(format!(
                "valid dims {valid_dims:?} are not ascending dims ≤ {dims} that include {dims}"
            )));
        }
        let mut ids = [0u32; 5];
        for id in &mut ids {
            *id = r.u32()?;
        }
        let max_input_chars_per_word = r.varint_usize()?;
        let prefix = r.str()?.to_string();
        let flags = r.u8()?;
        if flags & !3 != 0 {
            return Err(r.bad(format!("unknown tokenizer flags {flags:#04x}")));
        }
        let max_seq_len = r.varint_usize()?;
        if max_seq_len < 2 {
            return Err(r.bad(format!("max_seq_len {max_seq_len} < 2")));
        }
        let v = r.count(1)?;
        if v == 0 {
            return Err(r.bad("an empty vocabulary"));
        }
        let mut vocab = Vec::with_capacity(v);
        for _ in 0..v {
            vocab.push(r.str()?.to_string());
        }
        if let Some(&id) = ids.iter().find(|&&id| id as usize >= v) {
            return Err(r.bad(format!("special token id {id} ≥ vocabulary size {v}")));
        }
        let bias = r.finite_f32s(dims, || "the bias".to_string())?;
        let rows_per_shard = r.varint_usize()?;
        if rows_per_shard == 0 {
            return Err(r.bad("0 rows per shard"));
        }
        let mut rows: Vec<Option<Box<[f32]>>> = vec![None; v];
        for &id in &[ids[0], ids[1], ids[2]] {
            let row = r.finite_f32s(dims, || format!("the row of token {id}"))?;
            rows[id as usize] = Some(row.into_boxed_slice());
        }
        if r.at != r.b.len() {
            return Err(r.bad(format!("{} bytes after the rows", r.b.len() - r.at)));
        }
        let config = TokenizerConfig {
            unk_token_id: ids[0],
            cls_token_id: ids[1],
            sep_token_id: ids[2],
            pad_token_id: ids[3],
            mask_token_id: ids[4],
            max_input_chars_per_word,
            continuing_subword_prefix: prefix,
            do_lower_case: flags & 1 != 0,
            strip_accents: flags & 2 != 0,
            max_seq_len,
        };
        let head_id: [u8; 16] = bytes[bytes.len() - TRAILER..][..16].try_into().unwrap();
        let shards = v.div_ceil(rows_per_shard);
        Ok(QueryEncoder {
            tokenizer: Tokenizer::new(vocab, config),
            model_id,
            version: ModelVersion::new(major, minor, patch),
            sha256,
            valid_dims,
            dims,
            bias,
            rows_per_shard,
            head_id,
            rows,
            loaded: vec![false; shards],
        })
    }

    /// The model's `model_id` (spec §3).
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The model's version.
    pub fn version(&self) -> ModelVersion {
        self.version
    }

    /// The model's SHA-256 (its trailer, §3): what an index's manifest names (§8).
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The dims [`QueryEncoder::embed`] accepts: the model's valid dims up to the head's.
    pub fn valid_dims(&self) -> &[usize] {
        &self.valid_dims
    }

    /// The dims of the rows (the index dims the files were cut at).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The head id in hex (32 digits): names the folder of its shards.
    pub fn head_id(&self) -> String {
        crate::format::to_hex(&self.head_id)
    }

    /// Number of row shards.
    pub fn shard_count(&self) -> usize {
        self.loaded.len()
    }

    /// The tokenizer (the model's, rebuilt from the head).
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Token ids of `text` as the model sees them (`[CLS]` … `[SEP]`, §5.2).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// The shards (ascending, distinct) whose rows `text`'s tokens need and that are not added
    /// yet. Empty: [`QueryEncoder::embed`] can answer now.
    pub fn missing_shards(&self, text: &str) -> Vec<u32> {
        self.missing_for(&self.tokenize(text))
    }

    fn missing_for(&self, ids: &[u32]) -> Vec<u32> {
        let mut s: Vec<u32> = ids
            .iter()
            .filter(|&&id| self.rows[id as usize].is_none())
            .map(|&id| (id as usize / self.rows_per_shard) as u32)
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    }

    /// Adds a row shard; returns its number. Adding a shard twice is harmless.
    ///
    /// # Errors
    /// [`QueryRowsError::Malformed`] (`row shard: …`), [`QueryRowsError::ForeignShard`].
    pub fn add_shard(&mut self, bytes: &[u8]) -> Result<u32, QueryRowsError> {
        let mut r = Rd::open(bytes, &SHARD_MAGIC, "row shard")?;
        let head_id = r.take(16)?;
        let s = r.varint_usize()?;
        if s >= self.loaded.len() {
            return Err(r.bad(format!(
                "shard number {s} ≥ the head's {} shards",
                self.loaded.len()
            )));
        }
        if head_id != self.head_id {
            return Err(QueryRowsError::ForeignShard { shard: s as u32 });
        }
        let first = s * self.rows_per_shard;
        let end = (first + self.rows_per_shard).min(self.rows.len());
        let want = (end - first) * self.dims * 4;
        if r.b.len() - r.at != want {
            return Err(r.bad(format!(
                "{} bytes of rows, expected {want} ({} rows of {} dims)",
                r.b.len() - r.at,
                end - first,
                self.dims
            )));
        }
        for id in first..end {
            let row = r.finite_f32s(self.dims, || format!("the row of token {id}"))?;
            self.rows[id].get_or_insert_with(|| row.into_boxed_slice());
        }
        self.loaded[s] = true;
        Ok(s as u32)
    }

    /// The embedding of `text` at `dims`: bit for bit [`Model::embed`]`(text, dims)` of the
    /// model the files were cut from.
    ///
    /// # Errors
    /// [`QueryRowsError::InvalidDims`], [`QueryRowsError::MissingRows`] (add those shards
    /// first), [`QueryRowsError::NonFinite`].
    pub fn embed(&self, text: &str, dims: usize) -> Result<Vec<f32>, QueryRowsError> {
        if !self.valid_dims.contains(&dims) {
            return Err(QueryRowsError::InvalidDims {
                dims,
                valid: self.valid_dims.clone(),
            });
        }
        let ids = self.tokenize(text);
        let missing = self.missing_for(&ids);
        if !missing.is_empty() {
            return Err(QueryRowsError::MissingRows { shards: missing });
        }
        // As Model::static_project_prefix: rows added in token order from zero, then one
        // division by the token count and the bias; then Model::embed's normalisation.
        let mut p = vec![0f32; dims];
        for &id in &ids {
            let row = self.rows[id as usize].as_deref().expect("checked above");
            for (pj, &rj) in p.iter_mut().zip(row) {
                *pj += rj;
            }
        }
        let count = ids.len() as f32;
        for (pj, &bj) in p.iter_mut().zip(&self.bias) {
            *pj = *pj / count + bj;
        }
        crate::forward::normalize_checked_owned(p).map_err(|_| QueryRowsError::NonFinite)
    }
}

/// The bytes of a file between its 6-byte prefix check and its trailer: magic, version and the
/// SHA-256 trailer verified.
fn checked_body<'a>(
    bytes: &'a [u8],
    magic: &[u8; 4],
    what: &str,
) -> Result<&'a [u8], QueryRowsError> {
    let bad = |detail: String| QueryRowsError::Malformed {
        what: what.to_string(),
        detail,
    };
    if bytes.len() < 6 + TRAILER {
        return Err(bad(format!("{} bytes is too short", bytes.len())));
    }
    if bytes[..4] != magic[..] {
        return Err(bad(format!(
            "not a lightembed {what} (magic {:?}, expected {:?})",
            String::from_utf8_lossy(&bytes[..4]),
            String::from_utf8_lossy(magic)
        )));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != QUERY_ROWS_VERSION {
        return Err(bad(format!(
            "version {version}, this reader reads {QUERY_ROWS_VERSION}: re-run `lightembed site`"
        )));
    }
    let (body, trailer) = bytes.split_at(bytes.len() - TRAILER);
    if Sha256::digest(body)[..] != trailer[..] {
        return Err(bad(
            "damaged: its SHA-256 does not match its trailer".to_string()
        ));
    }
    Ok(body)
}

/// A bounds-checked reader over a file's body.
struct Rd<'a> {
    b: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Rd<'a> {
    /// A reader over the body of `bytes` ([`checked_body`]), past its magic and version.
    fn open(
        bytes: &'a [u8],
        magic: &[u8; 4],
        what: &'static str,
    ) -> Result<Rd<'a>, QueryRowsError> {
        Ok(Rd {
            b: checked_body(bytes, magic, what)?,
            at: 6,
            what,
        })
    }

    fn bad(&self, detail: impl Into<String>) -> QueryRowsError {
        QueryRowsError::Malformed {
            what: self.what.to_string(),
            detail: detail.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], QueryRowsError> {
        if self.b.len() - self.at < n {
            return Err(self.bad(format!("truncated at byte {} (needs {n} more)", self.at)));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, QueryRowsError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, QueryRowsError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn varint(&mut self) -> Result<u64, QueryRowsError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.bad(format!("a varint longer than 10 bytes at byte {}", self.at)))
    }

    fn varint_usize(&mut self) -> Result<usize, QueryRowsError> {
        let v = self.varint()?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= u32::MAX as usize)
            .ok_or_else(|| self.bad(format!("{v} is out of range")))
    }

    /// A count of items of at least `min_bytes` each: refused when the bytes left cannot hold
    /// them (so no allocation is sized by an unchecked field).
    fn count(&mut self, min_bytes: usize) -> Result<usize, QueryRowsError> {
        let n = self.varint_usize()?;
        if n.saturating_mul(min_bytes) > self.b.len() - self.at {
            return Err(self.bad(format!(
                "a count of {n} with {} bytes left",
                self.b.len() - self.at
            )));
        }
        Ok(n)
    }

    fn str(&mut self) -> Result<&'a str, QueryRowsError> {
        let n = self.varint_usize()?;
        let at = self.at;
        let b = self.take(n)?;
        std::str::from_utf8(b).map_err(|_| self.bad(format!("a string at byte {at} is not UTF-8")))
    }

    /// `n` floats, refused (`NAME is not finite`) unless every one is finite.
    fn finite_f32s(
        &mut self,
        n: usize,
        name: impl FnOnce() -> String,
    ) -> Result<Vec<f32>, QueryRowsError> {
        let b = self.take(
            n.checked_mul(4)
                .ok_or_else(|| self.bad("too many floats"))?,
        )?;
        let v: Vec<f32> = b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        if v.iter().any(|x| !x.is_finite()) {
            return Err(self.bad(format!("{} is not finite", name())));
        }
        Ok(v)
    }
}

/// LEB128 varint writer, shared with `crate::unicode`'s file writer.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_f32s(out: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}
