//! A read-only index cut into fragments, for static sites: a visitor downloads the small *core*
//! first, then only the keyword postings of the query's terms and the text of the results shown
//! (Pagefind's idea, with vectors).
//!
//! [`split`] turns a built [`Index`] into three kinds of files; [`FragmentedIndex`] reads them
//! back and ranks exactly like [`Index::query`] on the keyword side (same tokeniser, same BM25
//! statistics, same bits) and by an asymmetric binary code on the vector side:
//!
//! | fragment | holds | fetched |
//! |---|---|---|
//! | core | manifest (spec §8), section titles and URLs, per passage its section, its length in keyword tokens and a binary code of its vector | on the first query |
//! | term shard `s` | the postings `(passage, tf)` of every term `t` with `fnv1a(t) mod S = s` | for each term of a query |
//! | text chunk `c` | the text of consecutive passages (for excerpts) | for the results shown |
//! | typo shard `y` | per *typo key* `k` with `fnv1a(k) mod Y = y`, the indexed terms listed under it, each with its df | for a query term no passage holds (a typo?), after its term shard |
//!
//! **Typos.** A query term of at least 4 characters that no passage holds (its term shard is in
//! and does not list it) is taken for a typo: it is replaced by the indexed term within one edit
//! of it (a wrong, dropped, doubled or extra character, or two adjacent ones swapped) found in
//! the most passages, scored as that term (times [`crate::typos::TYPO_WEIGHT`]). The candidates
//! come from typo shards: every indexed term of at least 3 characters, a letter among them and
//! df ≥ 2 is listed under two keys, `^` + its first two characters and its last two + `$`; one
//! edit leaves one of them intact for a word of 5 or more characters, and a 4-character query
//! term also looks under `^` + its first and third characters (the middle two swapped; see
//! [`crate::typos`]). So a typo costs two or three small typo shards and the term shard of its
//! correction, fetched after the query's own term shards; a query whose terms all occur fetches
//! nothing more. Corrections use a term's typo shards once all of them are added
//! ([`FragmentedIndex::missing_typo_shards`]), and the correction's term shard is then one of
//! [`FragmentedIndex::missing_shards`]. [`Index::query`] has no typo tolerance: on a query whose
//! terms all occur the two rank alike.
//!
//! **Vectors.** Each passage vector `x` (L2-normalised, the index dims) is stored as the signs of
//! `x − μ` (`μ` the mean passage vector, kept in the core), one bit per dim, plus one byte for its
//! scale `α` (`α ≈ code / 255 · α_max`): the least-squares fit of `x − μ ≈ α · σ ⊙ sign(x − μ)`,
//! where `σ_j` is the mean `|x_j − μ_j|` over the passages (also in the core: in a Matryoshka
//! frame the leading dims spread most, and a bit of a leading dim stands for more). A query `q`
//! (normalised) scores `q·μ + α · Σ_j q_j σ_j sign_j` — the inner product with that
//! reconstruction, an estimate of the cosine computed without unpacking (a 256-entry table per
//! code byte). At 128
//! dims a passage costs 17 bytes instead of 132 (int8) or 512 (f32). The search over codes is
//! exact (every passage scored): for a site's few thousand to few ten thousand passages that is a
//! millisecond or two, and no graph has to be downloaded.
//!
//! # Byte layouts (version 4: typo shards, their count in the core; version 3: a section keeps its page title and heading apart, so a front end
//! never splits a display title back into them — Sphinx's `Page — Project` titles were split at
//! the wrong dash; version 2: keyword terms fold `ı` → `i`. Older bundles are refused with
//! "re-run `lightembed site`")
//!
//! Integers little-endian, `varint` unsigned LEB128 in shortest form (as in [`crate::layout`]),
//! `str` a `u32` byte length + UTF-8. Every fragment ends with the SHA-256 of its preceding bytes.
//! A shard or chunk repeats the first 16 bytes of the core's SHA-256 (the *build id*), so a
//! fragment of another build is refused instead of mixed in.
//!
//! ```text
//! core    "LEFI" u16 version=4 u16 flags (bit 0: English stemming)
//!         manifest (as crate::layout; count = passages n)
//!         varint sections S; S × (str url, str page title, str heading (empty: none));
//!             a section's display title is `lightembed_title::section_title` of the two
//!         n × (varint section < S, varint |d| in keyword tokens)
//!         dims × f32 μ; dims × f32 σ (finite, ≥ 0); f32 α_max (finite, ≥ 0); n × u8 α code;
//!         n × ⌈dims/8⌉ sign bytes
//!             (bit k of byte p = dim 8p + k, set = positive; bits past dims 0)
//!         varint term shards (≥ 1); u64 Σ|d|; varint typo shards (≥ 1)
//!         varint text chunks C (≥ 1 when n > 0); C × varint first passage (0, then increasing, < n)
//!         32-byte content digest: SHA-256 over every term shard, chunk and typo shard (in that
//!             order), each as u64 length + its
//!             bytes up to its trailer with the build id zeroed (so the build id, and every
//!             cached fragment name derived from it, changes when any text or posting does)
//!         32-byte SHA-256
//! shard   "LEFT" u16 version=4 16-byte build id, varint shard number
//!         varint terms; per term (distinct, each hashing to this shard): str term,
//!             varint df ≥ 1, df × (varint passage delta (first = passage), varint tf ≥ 1)
//!         32-byte SHA-256
//! chunk   "LEFC" u16 version=4 16-byte build id, varint chunk number
//!         varint count (= passages of the chunk per the core); count × str text
//!         32-byte SHA-256
//! typo    "LEFY" u16 version=4 16-byte build id, varint typo shard number
//!         varint keys; per key (distinct, ascending, each hashing to this shard): str key
//!             (`^` + a term's first two chars, or its last two + `$`), varint count ≥ 1,
//!             count × (str term (ascending, distinct, under that key), varint df ≥ 1)
//!         32-byte SHA-256
//! ```

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::error::IndexError;
use crate::hybrid::{checked_options, collapse_sections, fuse_candidates};
use crate::index::Index;
use crate::keywords::{avgdl, for_each_term, idf, term_score};
use crate::layout::{malformed, read_manifest, write_manifest, Reader, Writer};
use crate::manifest::Manifest;
use crate::util::{dot, sort_best_first, Scored};
use crate::{Mode, SearchOptions};

/// Version of the fragment layouts written and read here.
pub const FRAGMENTS_VERSION: u16 = 4;

const CORE_MAGIC: [u8; 4] = *b"LEFI";
const SHARD_MAGIC: [u8; 4] = *b"LEFT";
const CHUNK_MAGIC: [u8; 4] = *b"LEFC";
const TYPO_MAGIC: [u8; 4] = *b"LEFY";
const TRAILER: usize = 32;

/// Sizes of the fragments [`split`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Target raw bytes of postings per term shard (the shard count is
    /// `⌈postings bytes / shard_bytes⌉`), and of typo lists per typo shard. Default 16 KiB.
    pub shard_bytes: usize,
    /// Target raw bytes of text per chunk (a chunk closes once it reaches this). Default 16 KiB.
    pub chunk_bytes: usize,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            shard_bytes: 16 << 10,
            chunk_bytes: 16 << 10,
        }
    }
}

/// The files of a fragmented index, as bytes: `core`, `shards[s]` (term shard `s`),
/// `chunks[c]` (text chunk `c`), `typos[y]` (typo shard `y`).
#[derive(Debug, Clone)]
pub struct Fragments {
    /// The core (always fetched first).
    pub core: Vec<u8>,
    /// Term shards, by number.
    pub shards: Vec<Vec<u8>>,
    /// Text chunks, by number.
    pub chunks: Vec<Vec<u8>>,
    /// Typo shards, by number.
    pub typos: Vec<Vec<u8>>,
}

impl Fragments {
    /// The build id of these fragments, as [`FragmentedIndex::build_id`] gives it: the first 16
    /// bytes of the core's trailing SHA-256, in hex (read off the core, not recomputed).
    pub fn build_id(&self) -> String {
        let n = self.core.len() - TRAILER;
        hex(&self.core[n..n + 16])
    }
}

use lightembed::format::to_hex as hex;

/// FNV-1a (32 bit) of `term`'s UTF-8 bytes: which shard holds it (`mod` the shard count); of a
/// typo key's, which typo shard holds its list.
pub fn term_hash(term: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in term.as_bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Cuts `index` into fragments. Live documents become passages `0..n` in slot order; a
/// passage's text is its payload snippet, its section its `(url, title)`.
///
/// Errors: [`IndexError::InvalidArgument`] when a size in `opts` is 0.
pub fn split(index: &Index, opts: &SplitOptions) -> Result<Fragments, IndexError> {
    let live: Vec<u32> = (0..index.docs.len() as u32)
        .filter(|&s| !index.deleted[s as usize])
        .collect();
    write(
        &Source {
            manifest: &index.manifest,
            keywords: &index.keywords,
            docs: &index.docs,
            vectors: &index.vectors,
            headings: None,
            live,
        },
        opts,
    )
}

/// Builds fragments straight from passages, with no HNSW graph (the fragments ship none): what
/// `lightembed site` uses. [`Builder::push`] takes what [`Index::insert_with_text`] takes and
/// checks it the same way, and [`Builder::finish`] writes exactly the bytes [`split`] writes for an
/// [`Index`] built by the same inserts (same manifest, stemming and order).
#[derive(Debug, Clone)]
pub struct Builder {
    manifest: Manifest,
    keywords: crate::keywords::Keywords,
    docs: Vec<crate::Document>,
    /// `docs.len() × dims`, row-major, each row L2-normalised.
    vectors: Vec<f32>,
    /// Per passage, `(page title, heading)`.
    headings: Vec<(String, String)>,
    ids: std::collections::HashSet<String>,
}

impl Builder {
    /// An empty builder for vectors described by `fields`, keywords stemmed (English Snowball)
    /// when `keyword_stemming`.
    ///
    /// Errors: as [`Index::new`] for `fields`.
    pub fn new(
        fields: crate::ManifestFields,
        keyword_stemming: bool,
    ) -> Result<Builder, IndexError> {
        fields.validate()?;
        Ok(Builder {
            manifest: Manifest::from_fields(fields),
            keywords: crate::keywords::Keywords::new(keyword_stemming),
            docs: Vec::new(),
            vectors: Vec::new(),
            headings: Vec::new(),
            ids: Default::default(),
        })
    }

    /// Vector dims.
    pub fn dims(&self) -> usize {
        self.manifest.dims
    }

    /// Passages pushed so far.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True before the first push.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The manifest the core will carry (its `count` is the passages pushed so far).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Adds a passage: `doc` (its snippet is the passage text shown), its embedding `vector`
    /// (length `dims`, finite; L2-normalised here) and the text BM25 indexes.
    ///
    /// Errors (nothing is changed): [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`],
    /// [`IndexError::DuplicateId`], [`IndexError::Full`].
    pub fn push(
        &mut self,
        doc: crate::Document,
        vector: &[f32],
        keyword_text: &str,
    ) -> Result<(), IndexError> {
        let page_title = doc.payload.title.clone();
        self.push_section(doc, vector, keyword_text, &page_title, "")
    }

    /// [`Builder::push`] with the passage's page title and section heading kept apart (what a
    /// front end groups results by and shows; `doc`'s title is not used for the section). The
    /// display title of a hit is [`lightembed_title::section_title`] of the two (ingestion's
    /// rule, `lightembed_ingest::section_title`).
    ///
    /// Errors: as [`Builder::push`].
    pub fn push_section(
        &mut self,
        doc: crate::Document,
        vector: &[f32],
        keyword_text: &str,
        page_title: &str,
        heading: &str,
    ) -> Result<(), IndexError> {
        let v = crate::util::checked_query(vector, self.dims())?;
        if self.ids.contains(&doc.id) {
            return Err(IndexError::DuplicateId(doc.id));
        }
        if self.docs.len() >= (u32::MAX - 1) as usize {
            return Err(IndexError::Full);
        }
        self.vectors.extend_from_slice(&v);
        self.ids.insert(doc.id.clone());
        self.docs.push(doc);
        self.headings
            .push((page_title.to_string(), heading.to_string()));
        self.keywords.push_text(keyword_text);
        self.manifest.count = self.docs.len() as u64;
        Ok(())
    }

    /// The fragments of every passage pushed, in push order.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when a size in `opts` is 0.
    pub fn finish(&self, opts: &SplitOptions) -> Result<Fragments, IndexError> {
        write(
            &Source {
                manifest: &self.manifest,
                keywords: &self.keywords,
                docs: &self.docs,
                vectors: &self.vectors,
                headings: Some(&self.headings),
                live: (0..self.docs.len() as u32).collect(),
            },
            opts,
        )
    }
}

/// What [`write`] cuts: an index's or a [`Builder`]'s parts, and the slots that are passages.
struct Source<'a> {
    manifest: &'a Manifest,
    keywords: &'a crate::keywords::Keywords,
    docs: &'a [crate::Document],
    vectors: &'a [f32],
    /// Per slot, `(page title, heading)` when known (a [`Builder`]); an [`Index`]'s documents
    /// have one title, taken as the page title.
    headings: Option<&'a [(String, String)]>,
    live: Vec<u32>,
}

fn write(src: &Source<'_>, opts: &SplitOptions) -> Result<Fragments, IndexError> {
    if opts.shard_bytes == 0 || opts.chunk_bytes == 0 {
        return Err(IndexError::InvalidArgument {
            what: "split options",
            detail: "shard_bytes and chunk_bytes must be > 0".into(),
        });
    }
    let dims = src.manifest.dims;
    let live = &src.live;
    let n = live.len();
    let kw = src.keywords;

    // Sections: distinct (url, page title, heading), in first-seen order.
    let mut section_ids: HashMap<(&str, &str, &str), u32> = HashMap::new();
    let mut sections: Vec<(&str, &str, &str)> = Vec::new();
    let mut section_of = Vec::with_capacity(n);
    let mut lens = Vec::with_capacity(n);
    for &slot in live {
        let p = &src.docs[slot as usize].payload;
        let (page_title, heading) = match src.headings {
            Some(h) => {
                let (t, h) = &h[slot as usize];
                (t.as_str(), h.as_str())
            }
            // An index keeps one title per document: it is the page title, with no heading.
            None => (p.title.as_str(), ""),
        };
        let key = (p.url.as_str(), page_title, heading);
        let id = *section_ids.entry(key).or_insert_with(|| {
            sections.push(key);
            sections.len() as u32 - 1
        });
        section_of.push(id);
        lens.push(kw.terms_of(slot).iter().map(|&(_, tf)| tf).sum::<u32>());
    }
    let total_len: u64 = lens.iter().map(|&l| l as u64).sum();

    // Binary codes of the centred vectors.
    let vec_of = |slot: u32| &src.vectors[slot as usize * dims..(slot as usize + 1) * dims];
    let mut mean = vec![0.0f64; dims];
    for &slot in live {
        for (m, &x) in mean.iter_mut().zip(vec_of(slot)) {
            *m += x as f64;
        }
    }
    let mean: Vec<f32> = mean
        .iter()
        .map(|&m| if n == 0 { 0.0 } else { (m / n as f64) as f32 })
        .collect();
    // σ_j = mean |x_j − μ_j|: the spread of each dim (in a Matryoshka/PCA frame the leading
    // dims spread most), so a sign bit stands for ±σ_j.
    let mut sigma = vec![0.0f64; dims];
    for &slot in live {
        for ((s, &x), &m) in sigma.iter_mut().zip(vec_of(slot)).zip(&mean) {
            *s += (x - m).abs() as f64;
        }
    }
    let sigma: Vec<f32> = sigma
        .iter()
        .map(|&s| if n == 0 { 0.0 } else { (s / n as f64) as f32 })
        .collect();
    let sigma_sq: f64 = sigma.iter().map(|&s| (s as f64) * (s as f64)).sum();
    let nbytes = dims.div_ceil(8);
    let mut codes = vec![0u8; n * nbytes];
    let mut alphas = Vec::with_capacity(n);
    for (i, &slot) in live.iter().enumerate() {
        // α = the least-squares scale of x − μ ≈ α · σ ⊙ sign(x − μ).
        let mut fit = 0.0f64;
        for (j, ((&x, &m), &sg)) in vec_of(slot).iter().zip(&mean).zip(&sigma).enumerate() {
            let c = x - m;
            fit += (c.abs() as f64) * sg as f64;
            if c > 0.0 {
                codes[i * nbytes + j / 8] |= 1 << (j % 8);
            }
        }
        alphas.push(if sigma_sq > 0.0 {
            (fit / sigma_sq) as f32
        } else {
            0.0
        });
    }
    let alpha_max = alphas.iter().copied().fold(0.0f32, f32::max);

    // Postings per term over passages.
    let mut postings: Vec<Vec<(u32, u32)>> = vec![Vec::new(); kw.vocab.len()];
    for (i, &slot) in live.iter().enumerate() {
        for &(t, tf) in kw.terms_of(slot) {
            postings[t as usize].push((i as u32, tf));
        }
    }
    let posting_bytes: usize = kw
        .vocab
        .iter()
        .zip(&postings)
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, p)| t.len() + 6 + 3 * p.len())
        .sum();
    let n_shards = posting_bytes.div_ceil(opts.shard_bytes).clamp(1, 1 << 16);
    let mut by_shard: Vec<Vec<u32>> = vec![Vec::new(); n_shards];
    for (t, term) in kw.vocab.iter().enumerate() {
        if !postings[t].is_empty() {
            by_shard[(term_hash(term) % n_shards as u32) as usize].push(t as u32);
        }
    }

    // Typo lists: each listed term under its two keys, the keys hashed into typo shards.
    let mut typo_lists: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for (t, term) in kw.vocab.iter().enumerate() {
        if crate::typos::listed(term, postings[t].len() as u32) {
            for key in crate::typos::term_keys(term).into_iter().flatten() {
                typo_lists.entry(key).or_default().push(t as u32);
            }
        }
    }
    let typo_bytes: usize = typo_lists
        .iter()
        .map(|(k, ts)| {
            k.len()
                + 2
                + ts.iter()
                    .map(|&t| kw.vocab[t as usize].len() + 3)
                    .sum::<usize>()
        })
        .sum();
    let n_typos = typo_bytes.div_ceil(opts.shard_bytes).clamp(1, 1 << 16);
    let mut by_typo: Vec<Vec<(&String, &mut Vec<u32>)>> =
        (0..n_typos).map(|_| Vec::new()).collect();
    for (key, terms) in typo_lists.iter_mut() {
        terms.sort_by(|&a, &b| kw.vocab[a as usize].cmp(&kw.vocab[b as usize]));
        by_typo[(term_hash(key) % n_typos as u32) as usize].push((key, terms));
    }

    // Text chunks: consecutive passages up to chunk_bytes.
    let mut chunk_starts: Vec<u32> = Vec::new();
    let mut acc = usize::MAX;
    for (i, &slot) in live.iter().enumerate() {
        if acc >= opts.chunk_bytes {
            chunk_starts.push(i as u32);
            acc = 0;
        }
        acc += src.docs[slot as usize].payload.snippet.len() + 4;
    }

    // Core.
    let mut w = Writer { buf: Vec::new() };
    w.buf.extend_from_slice(&CORE_MAGIC);
    w.u16(FRAGMENTS_VERSION);
    w.u16(u16::from(kw.stem));
    write_manifest(&mut w, src.manifest, n as u64);
    w.varint(sections.len() as u32);
    for (url, page_title, heading) in &sections {
        varstr(&mut w, url);
        varstr(&mut w, page_title);
        varstr(&mut w, heading);
    }
    for i in 0..n {
        w.varint(section_of[i]);
        w.varint(lens[i]);
    }
    for &m in mean.iter().chain(&sigma) {
        w.f32(m);
    }
    w.f32(alpha_max);
    for &a in &alphas {
        let code = if alpha_max > 0.0 {
            (a / alpha_max * 255.0).round().clamp(0.0, 255.0) as u8
        } else {
            0
        };
        w.u8(code);
    }
    w.buf.extend_from_slice(&codes);
    w.varint(n_shards as u32);
    w.u64(total_len);
    w.varint(n_typos as u32);
    w.varint(chunk_starts.len() as u32);
    for &s in &chunk_starts {
        w.varint(s);
    }
    let mut core = w;

    // Shards and chunks are written with a zeroed build id, hashed into the core, then given
    // the core's build id and sealed.
    let shards: Vec<Writer> = by_shard
        .iter_mut()
        .enumerate()
        .map(|(s, terms)| {
            terms.sort_by(|&a, &b| kw.vocab[a as usize].cmp(&kw.vocab[b as usize]));
            let mut w = Writer { buf: Vec::new() };
            w.buf.extend_from_slice(&SHARD_MAGIC);
            w.u16(FRAGMENTS_VERSION);
            w.buf.extend_from_slice(&[0; 16]);
            w.varint(s as u32);
            w.varint(terms.len() as u32);
            for &t in terms.iter() {
                varstr(&mut w, &kw.vocab[t as usize]);
                let list = &postings[t as usize];
                w.varint(list.len() as u32);
                let mut prev = 0;
                for (k, &(p, tf)) in list.iter().enumerate() {
                    w.varint(if k == 0 { p } else { p - prev });
                    w.varint(tf);
                    prev = p;
                }
            }
            w
        })
        .collect();
    let chunks: Vec<Writer> = (0..chunk_starts.len())
        .map(|c| {
            let from = chunk_starts[c] as usize;
            let to = chunk_starts.get(c + 1).map_or(n, |&x| x as usize);
            let mut w = Writer { buf: Vec::new() };
            w.buf.extend_from_slice(&CHUNK_MAGIC);
            w.u16(FRAGMENTS_VERSION);
            w.buf.extend_from_slice(&[0; 16]);
            w.varint(c as u32);
            w.varint((to - from) as u32);
            for &slot in &live[from..to] {
                varstr(&mut w, &src.docs[slot as usize].payload.snippet);
            }
            w
        })
        .collect();
    let typos: Vec<Writer> = by_typo
        .iter()
        .enumerate()
        .map(|(y, keys)| {
            let mut w = Writer { buf: Vec::new() };
            w.buf.extend_from_slice(&TYPO_MAGIC);
            w.u16(FRAGMENTS_VERSION);
            w.buf.extend_from_slice(&[0; 16]);
            w.varint(y as u32);
            w.varint(keys.len() as u32);
            for (key, terms) in keys {
                varstr(&mut w, key);
                w.varint(terms.len() as u32);
                for &t in terms.iter() {
                    varstr(&mut w, &kw.vocab[t as usize]);
                    w.varint(postings[t as usize].len() as u32);
                }
            }
            w
        })
        .collect();
    let mut content = Sha256::new();
    for w in shards.iter().chain(&chunks).chain(&typos) {
        content.update((w.buf.len() as u64).to_le_bytes());
        content.update(&w.buf);
    }
    core.buf.extend_from_slice(&content.finalize());
    let digest = Sha256::digest(&core.buf);
    core.buf.extend_from_slice(&digest);
    let build_id: [u8; 16] = digest[..16].try_into().expect("16 bytes");
    let seal = |mut w: Writer| {
        w.buf[6..22].copy_from_slice(&build_id);
        let digest = Sha256::digest(&w.buf);
        w.buf.extend_from_slice(&digest);
        w.buf
    };
    Ok(Fragments {
        core: core.buf,
        shards: shards.into_iter().map(seal).collect(),
        chunks: chunks.into_iter().map(seal).collect(),
        typos: typos.into_iter().map(seal).collect(),
    })
}

/// A string as `varint` length + UTF-8 (fragments use varint lengths: titles and terms are short).
fn varstr(w: &mut Writer, s: &str) {
    w.varint(s.len() as u32);
    w.buf.extend_from_slice(s.as_bytes());
}

fn read_varstr(r: &mut Reader<'_>, what: &'static str) -> Result<String, IndexError> {
    let len = r.varint(what)?;
    let bytes = r.take(len as u64, what)?;
    core::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|e| malformed(what, format!("not UTF-8 ({e})")))
}

/// One result of [`FragmentedIndex::query`].
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentHit {
    /// The passage number (`0..len()`): ask [`FragmentedIndex::chunk_of`] which text chunk
    /// holds its text.
    pub passage: u32,
    /// Higher is better: the estimated cosine (vector mode), BM25 (keyword mode) or the fused
    /// score (hybrid), as in [`Index::query`].
    pub score: f32,
    /// The passage's section title as shown: [`lightembed_title::section_title`] of `page_title`
    /// and `heading` (the title ingestion gave the passage).
    pub title: String,
    /// The title of the passage's page (group results by page with it).
    pub page_title: String,
    /// The passage's section heading (empty before the page's first heading).
    pub heading: String,
    /// The passage's section URL.
    pub url: String,
}

/// A fragmented index being read: the core, plus whatever term shards and text chunks have been
/// added. Queries need the shards of their terms ([`FragmentedIndex::missing_shards`]); excerpts
/// need the chunks of their passages.
#[derive(Debug, Clone)]
pub struct FragmentedIndex {
    manifest: Manifest,
    stem: bool,
    build_id: [u8; 16],
    /// `(url, page title, heading)`.
    sections: Vec<(String, String, String)>,
    section_of: Vec<u32>,
    lens: Vec<u32>,
    total_len: u64,
    mean: Vec<f32>,
    sigma: Vec<f32>,
    alphas: Vec<f32>,
    codes: Vec<u8>,
    n_shards: u32,
    shard_loaded: Vec<bool>,
    postings: HashMap<String, Vec<(u32, u32)>>,
    n_typos: u32,
    typo_loaded: Vec<bool>,
    /// Typo key → the listed terms under it, with their df.
    typo_lists: HashMap<String, Vec<(String, u32)>>,
    chunk_starts: Vec<u32>,
    texts: Vec<Option<String>>,
}

/// Checks magic, version and trailer; returns a reader after the version field.
fn open<'a>(bytes: &'a [u8], magic: [u8; 4], what: &'static str) -> Result<Reader<'a>, IndexError> {
    if bytes.len() < 6 + TRAILER {
        return Err(IndexError::Truncated {
            what,
            offset: 0,
            needed: (6 + TRAILER) as u64,
            available: bytes.len(),
        });
    }
    if bytes[..4] != magic {
        return Err(malformed(
            what,
            format!(
                "expected magic {:?}, found {:02x?}",
                core::str::from_utf8(&magic).unwrap_or("?"),
                &bytes[..4]
            ),
        ));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != FRAGMENTS_VERSION {
        return Err(malformed(
            what,
            format!(
                "fragment layout v{version}, this lightembed reads v{FRAGMENTS_VERSION}; \
                 re-run `lightembed site`"
            ),
        ));
    }
    let body = bytes.len() - TRAILER;
    if Sha256::digest(&bytes[..body]).as_slice() != &bytes[body..] {
        return Err(IndexError::ChecksumMismatch);
    }
    Ok(Reader {
        buf: &bytes[..body],
        pos: 6,
    })
}

fn done(r: &Reader<'_>) -> Result<(), IndexError> {
    match r.remaining() {
        0 => Ok(()),
        count => Err(IndexError::TrailingBytes { count }),
    }
}

impl FragmentedIndex {
    /// Loads the core written by [`split`]. Checks magic, version, the SHA-256 trailer and every
    /// field (lengths against the bytes left before anything is allocated, section numbers,
    /// finite floats, chunk starts); never panics.
    ///
    /// Errors: [`IndexError::Truncated`], [`IndexError::Malformed`],
    /// [`IndexError::ChecksumMismatch`], [`IndexError::TrailingBytes`].
    pub fn from_core(bytes: &[u8]) -> Result<FragmentedIndex, IndexError> {
        let mut r = open(bytes, CORE_MAGIC, "fragmented index core")?;
        let flags = r.u16("core flags")?;
        if flags & !1 != 0 {
            return Err(malformed(
                "core flags",
                format!("reserved bits set ({flags:#06x})"),
            ));
        }
        let manifest = read_manifest(&mut r)?;
        let dims = manifest.dims;
        let n = r.need(manifest.count, "passages")?; // each passage takes ≥ 2 bytes below
        let n_sections = r.varint("sections")? as usize;
        r.need(3 * n_sections as u64, "sections")?;
        let mut sections = Vec::with_capacity(n_sections);
        for _ in 0..n_sections {
            let url = read_varstr(&mut r, "section url")?;
            let page_title = read_varstr(&mut r, "section page title")?;
            let heading = read_varstr(&mut r, "section heading")?;
            sections.push((url, page_title, heading));
        }
        r.need(2 * n as u64, "passages")?;
        let mut section_of = Vec::with_capacity(n);
        let mut lens = Vec::with_capacity(n);
        for _ in 0..n {
            let s = r.varint("passage section")?;
            if s as usize >= n_sections {
                return Err(malformed(
                    "passage section",
                    format!("section {s} of {n_sections}"),
                ));
            }
            section_of.push(s);
            lens.push(r.varint("passage length")?);
        }
        r.need(8 * dims as u64, "mean vector")?;
        let mut mean = Vec::with_capacity(dims);
        for _ in 0..dims {
            let m = r.f32("mean vector")?;
            if !m.is_finite() {
                return Err(malformed("mean vector", "non-finite component".into()));
            }
            mean.push(m);
        }
        let mut sigma = Vec::with_capacity(dims);
        for _ in 0..dims {
            let x = r.f32("dim spreads")?;
            if !(x.is_finite() && x >= 0.0) {
                return Err(malformed("dim spreads", format!("{x} is not finite ≥ 0")));
            }
            sigma.push(x);
        }
        let alpha_max = r.f32("alpha_max")?;
        if !(alpha_max.is_finite() && alpha_max >= 0.0) {
            return Err(malformed(
                "alpha_max",
                format!("{alpha_max} is not finite ≥ 0"),
            ));
        }
        let alphas = r
            .take(n as u64, "alpha codes")?
            .iter()
            .map(|&c| c as f32 / 255.0 * alpha_max)
            .collect();
        let nbytes = dims.div_ceil(8);
        let codes = r.take((n as u64) * nbytes as u64, "sign codes")?.to_vec();
        if dims % 8 != 0 {
            let pad = !((1u8 << (dims % 8)) - 1);
            if codes.chunks(nbytes).any(|c| c[nbytes - 1] & pad != 0) {
                return Err(malformed("sign codes", "bits set past dims".into()));
            }
        }
        let n_shards = r.varint("term shards")?;
        if n_shards == 0 || n_shards > 1 << 16 {
            return Err(malformed(
                "term shards",
                format!("{n_shards} is not in 1..=65536"),
            ));
        }
        let total_len = r.u64("total length")?;
        if total_len != lens.iter().map(|&l| l as u64).sum::<u64>() {
            return Err(malformed(
                "total length",
                "is not the sum of the passage lengths".into(),
            ));
        }
        let n_typos = r.varint("typo shards")?;
        if n_typos == 0 || n_typos > 1 << 16 {
            return Err(malformed(
                "typo shards",
                format!("{n_typos} is not in 1..=65536"),
            ));
        }
        let n_chunks = r.varint("text chunks")? as usize;
        r.need(n_chunks as u64, "text chunks")?;
        let mut chunk_starts = Vec::with_capacity(n_chunks);
        for c in 0..n_chunks {
            let s = r.varint("chunk start")?;
            let ok = if c == 0 {
                s == 0
            } else {
                s > chunk_starts[c - 1] && (s as usize) < n
            };
            if !ok || (s as usize) >= n {
                return Err(malformed("chunk start", format!("chunk {c} starts at {s}")));
            }
            chunk_starts.push(s);
        }
        if n > 0 && n_chunks == 0 {
            return Err(malformed(
                "text chunks",
                "no chunk holds the passages".into(),
            ));
        }
        r.take(32, "content digest")?;
        done(&r)?;
        let mut build_id = [0u8; 16];
        build_id.copy_from_slice(&bytes[bytes.len() - TRAILER..bytes.len() - TRAILER + 16]);
        Ok(FragmentedIndex {
            manifest,
            stem: flags & 1 != 0,
            build_id,
            sections,
            section_of,
            lens,
            total_len,
            mean,
            sigma,
            alphas,
            codes,
            n_shards,
            shard_loaded: vec![false; n_shards as usize],
            postings: HashMap::new(),
            n_typos,
            typo_loaded: vec![false; n_typos as usize],
            typo_lists: HashMap::new(),
            chunk_starts,
            texts: vec![None; n],
        })
    }

    /// The manifest (spec §8): check it against the model with [`Manifest::check_compatible`].
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The first 16 bytes of the core's SHA-256, as 32 hex digits: names this build's
    /// fragments (every shard and chunk carries it; any change of the index changes it).
    pub fn build_id(&self) -> String {
        hex(&self.build_id)
    }

    /// Number of passages.
    pub fn len(&self) -> usize {
        self.section_of.len()
    }

    /// `true` without passages.
    pub fn is_empty(&self) -> bool {
        self.section_of.is_empty()
    }

    /// Vector dims (a query embedding must have this length).
    pub fn dims(&self) -> usize {
        self.manifest.dims
    }

    /// Whether keyword text was stemmed (queries are tokenised the same way).
    pub fn keyword_stemming(&self) -> bool {
        self.stem
    }

    /// Number of term shards.
    pub fn shard_count(&self) -> u32 {
        self.n_shards
    }

    /// Number of text chunks.
    pub fn chunk_count(&self) -> u32 {
        self.chunk_starts.len() as u32
    }

    /// The query's distinct terms, in query order (the index's tokeniser and stemming).
    fn query_terms(&self, query: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for_each_term(query, self.stem, &mut |t| {
            if !out.iter().any(|x| x == t) {
                out.push(t.to_string());
            }
        });
        out
    }

    /// The query's words as typed (folded, not stemmed), by their term: stemming never changes
    /// the number of tokens, so the two tokenisations pair up.
    fn raw_words(&self, query: &str) -> HashMap<String, String> {
        let mut raw = Vec::new();
        for_each_term(query, false, &mut |t| raw.push(t.to_string()));
        let mut out = HashMap::new();
        let mut i = 0;
        for_each_term(query, self.stem, &mut |t| {
            if let Some(w) = raw.get(i) {
                out.entry(t.to_string()).or_insert_with(|| w.clone());
            }
            i += 1;
        });
        out
    }

    /// The term shards `query`'s terms live in that are not loaded yet, ascending — and those of
    /// the corrections of its typos once their typo shards are in
    /// ([`FragmentedIndex::missing_typo_shards`]). Empty when the query can be answered.
    pub fn missing_shards(&self, query: &str) -> Vec<u32> {
        let mut terms = self.query_terms(query);
        let fixes: Vec<String> = self
            .corrections_of(&terms, query)
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        terms.extend(fixes);
        self.missing_for(&terms)
    }

    /// Number of typo shards (files `n<y>.bin` of a bundle).
    pub fn typo_shard_count(&self) -> u32 {
        self.n_typos
    }

    /// The typo shards `query` needs that are not loaded yet, ascending: those of its terms of at
    /// least [`crate::typos::MIN_TYPO_CHARS`] characters that no passage holds (known once their
    /// term shards are in: ask after [`FragmentedIndex::missing_shards`] is empty). Empty for a
    /// query whose terms all occur.
    pub fn missing_typo_shards(&self, query: &str) -> Vec<u32> {
        let raw = self.raw_words(query);
        let mut out: Vec<u32> = self
            .query_terms(query)
            .iter()
            .filter(|t| self.is_unknown(t))
            .flat_map(|t| typo_keys(t, raw.get(t)))
            .map(|k| term_hash(&k) % self.n_typos)
            .filter(|&y| !self.typo_loaded[y as usize])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The corrections the keyword side makes in `query`: `(query term, indexed term)` for each
    /// term no passage holds whose typo shards are in and list a term within one edit of it (the
    /// one found in the most passages; ties: the first in byte order). Terms are as the index
    /// tokenises them (stemmed when it stems).
    pub fn corrections(&self, query: &str) -> Vec<(String, String)> {
        self.corrections_of(&self.query_terms(query), query)
    }

    /// True when `term`'s term shard is in and does not hold it.
    fn is_unknown(&self, term: &str) -> bool {
        self.shard_loaded[(term_hash(term) % self.n_shards) as usize]
            && !self.postings.contains_key(term)
    }

    fn corrections_of(&self, terms: &[String], query: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut raw: Option<HashMap<String, String>> = None;
        for t in terms {
            if !self.is_unknown(t) {
                continue;
            }
            let raw = raw.get_or_insert_with(|| self.raw_words(query));
            let keys = typo_keys(t, raw.get(t));
            if keys.is_empty()
                || keys
                    .iter()
                    .any(|k| !self.typo_loaded[(term_hash(k) % self.n_typos) as usize])
            {
                continue;
            }
            // With stemming, also the stems of the typed word's one-edit variants.
            let stems: HashSet<String> = match raw.get(t) {
                Some(w) if self.stem && w.bytes().all(|b| b.is_ascii_lowercase()) => {
                    crate::typos::one_edit_variants(w)
                        .iter()
                        .flat_map(|v| crate::keywords::terms_with(v, true))
                        .collect()
                }
                _ => HashSet::new(),
            };
            let mut best: Option<(&str, u32)> = None;
            for k in &keys {
                for (c, df) in self.typo_lists.get(k).map_or(&[][..], Vec::as_slice) {
                    if !crate::typos::within_one_edit(t, c) && !stems.contains(c) {
                        continue;
                    }
                    let better = match best {
                        None => true,
                        Some((b, bdf)) => *df > bdf || (*df == bdf && c.as_str() < b),
                    };
                    if better {
                        best = Some((c, *df));
                    }
                }
            }
            if let Some((c, _)) = best {
                if !terms.iter().any(|x| x == c) && !out.iter().any(|(_, x)| x == c) {
                    out.push((t.clone(), c.to_string()));
                }
            }
        }
        out
    }

    /// Adds a typo shard written by [`split`] for this core; returns its number. Adding one again
    /// is a no-op.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`] (another build's shard, a key in the wrong shard,
    /// listed twice, out of order or not of the key form, a term not under its key, listed twice
    /// or out of order, a df of 0 or above the passages).
    pub fn add_typo_shard(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let mut r = open(bytes, TYPO_MAGIC, "typo shard")?;
        self.check_build(&mut r, "typo shard")?;
        let y = r.varint("typo shard number")?;
        if y >= self.n_typos {
            return Err(malformed(
                "typo shard number",
                format!("{y} of {}", self.n_typos),
            ));
        }
        if self.typo_loaded[y as usize] {
            return Ok(y);
        }
        let n = self.len() as u64;
        let n_keys = r.varint("typo keys")?;
        r.need(4 * n_keys as u64, "typo keys")?;
        let mut lists: Vec<(String, Vec<(String, u32)>)> = Vec::with_capacity(n_keys as usize);
        for _ in 0..n_keys {
            let key = read_varstr(&mut r, "typo key")?;
            let pair: Vec<char> = key
                .trim_start_matches('^')
                .trim_end_matches('$')
                .chars()
                .collect();
            let prefix = key.starts_with('^');
            let form =
                pair.len() == 2 && (prefix != key.ends_with('$')) && key.chars().count() == 3;
            if !form
                || term_hash(&key) % self.n_typos != y
                || lists.last().is_some_and(|(k, _)| *k >= key)
            {
                return Err(malformed(
                    "typo key",
                    format!("{key:?} is not a key, not in typo shard {y}, or out of order"),
                ));
            }
            let count = r.varint("typo key terms")? as u64;
            if count == 0 {
                return Err(malformed("typo key terms", format!("none under {key:?}")));
            }
            r.need(2 * count, "typo key terms")?;
            let pair: String = pair.into_iter().collect();
            let mut terms: Vec<(String, u32)> = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let term = read_varstr(&mut r, "typo term")?;
                let under = if prefix {
                    term.starts_with(&pair)
                } else {
                    term.ends_with(&pair)
                };
                if !under || terms.last().is_some_and(|(t, _)| *t >= term) {
                    return Err(malformed(
                        "typo term",
                        format!("{term:?} is not under {key:?}, or out of order"),
                    ));
                }
                let df = r.varint("typo term df")?;
                if df == 0 || df as u64 > n {
                    return Err(malformed("typo term df", format!("{df} for {n} passages")));
                }
                terms.push((term, df));
            }
            lists.push((key, terms));
        }
        done(&r)?;
        self.typo_lists.extend(lists);
        self.typo_loaded[y as usize] = true;
        Ok(y)
    }

    /// The shards of `terms` not loaded yet, ascending.
    fn missing_for(&self, terms: &[String]) -> Vec<u32> {
        let mut out: Vec<u32> = terms
            .iter()
            .map(|t| term_hash(t) % self.n_shards)
            .filter(|&s| !self.shard_loaded[s as usize])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Adds a term shard written by [`split`] for this core; returns its number. Adding a shard
    /// again is a no-op.
    ///
    /// Errors: [`IndexError::Truncated`], [`IndexError::ChecksumMismatch`],
    /// [`IndexError::TrailingBytes`], [`IndexError::Malformed`] (another build's shard, a term
    /// in the wrong shard or listed twice, a passage out of range or out of order, tf 0).
    pub fn add_shard(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let mut r = open(bytes, SHARD_MAGIC, "term shard")?;
        self.check_build(&mut r, "term shard")?;
        let s = r.varint("shard number")?;
        if s >= self.n_shards {
            return Err(malformed(
                "shard number",
                format!("{s} of {}", self.n_shards),
            ));
        }
        if self.shard_loaded[s as usize] {
            return Ok(s);
        }
        let n = self.len() as u64;
        let n_terms = r.varint("shard terms")?;
        r.need(3 * n_terms as u64, "shard terms")?;
        let mut terms: Vec<(String, Vec<(u32, u32)>)> = Vec::with_capacity(n_terms as usize);
        let mut seen = HashSet::new();
        for _ in 0..n_terms {
            let term = read_varstr(&mut r, "shard term")?;
            if term.is_empty()
                || term_hash(&term) % self.n_shards != s
                || !seen.insert(term.clone())
            {
                return Err(malformed(
                    "shard term",
                    format!("{term:?} is empty, listed twice or not in shard {s}"),
                ));
            }
            let df = r.varint("document frequency")? as u64;
            if df == 0 || df > n {
                return Err(malformed(
                    "document frequency",
                    format!("{df} for {n} passages"),
                ));
            }
            r.need(2 * df, "postings")?;
            let mut list = Vec::with_capacity(df as usize);
            let mut prev: u64 = 0;
            for k in 0..df {
                let delta = r.varint("posting")? as u64;
                let p = if k == 0 { delta } else { prev + delta };
                if (k > 0 && delta == 0) || p >= n {
                    return Err(malformed(
                        "posting",
                        format!("passage {p} out of order or ≥ {n}"),
                    ));
                }
                let tf = r.varint("term frequency")?;
                if tf == 0 || tf > self.lens[p as usize] {
                    return Err(malformed(
                        "term frequency",
                        format!("{tf} in passage {p} of length {}", self.lens[p as usize]),
                    ));
                }
                list.push((p as u32, tf));
                prev = p;
            }
            terms.push((term, list));
        }
        done(&r)?;
        self.postings.extend(terms);
        self.shard_loaded[s as usize] = true;
        Ok(s)
    }

    /// The text chunk that holds `passage`'s text (`None` for a passage out of range).
    pub fn chunk_of(&self, passage: u32) -> Option<u32> {
        if passage as usize >= self.len() {
            return None;
        }
        Some(self.chunk_starts.partition_point(|&s| s <= passage) as u32 - 1)
    }

    /// Adds a text chunk written by [`split`] for this core; returns its number.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`], plus a passage count that is not the core's.
    pub fn add_chunk(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let mut r = open(bytes, CHUNK_MAGIC, "text chunk")?;
        self.check_build(&mut r, "text chunk")?;
        let c = r.varint("chunk number")? as usize;
        if c >= self.chunk_starts.len() {
            return Err(malformed(
                "chunk number",
                format!("{c} of {}", self.chunk_starts.len()),
            ));
        }
        let from = self.chunk_starts[c] as usize;
        let to = self
            .chunk_starts
            .get(c + 1)
            .map_or(self.len(), |&x| x as usize);
        let count = r.varint("chunk passages")? as usize;
        if count != to - from {
            return Err(malformed(
                "chunk passages",
                format!("{count}, the core says {}", to - from),
            ));
        }
        let mut texts = Vec::with_capacity(count);
        for _ in 0..count {
            texts.push(read_varstr(&mut r, "passage text")?);
        }
        done(&r)?;
        for (slot, t) in self.texts[from..to].iter_mut().zip(texts) {
            *slot = Some(t);
        }
        Ok(c as u32)
    }

    /// The section `(url, page title, heading)` of `passage` (`None` out of range; the heading
    /// is empty for a passage before the page's first heading).
    pub fn section(&self, passage: u32) -> Option<(&str, &str, &str)> {
        let s = *self.section_of.get(passage as usize)? as usize;
        let (url, page_title, heading) = &self.sections[s];
        Some((url, page_title, heading))
    }

    /// The text of `passage` once its chunk is added.
    pub fn text(&self, passage: u32) -> Option<&str> {
        self.texts.get(passage as usize)?.as_deref()
    }

    fn check_build(&self, r: &mut Reader<'_>, what: &'static str) -> Result<(), IndexError> {
        let id = r.array::<16>("build id")?;
        if id != self.build_id {
            return Err(malformed(
                what,
                "belongs to another build of the index (its build id differs from the core's)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The estimated cosine of every passage to the normalised query `q` (see the module docs).
    fn vector_scores(&self, q: &[f32]) -> Vec<f32> {
        let dims = self.dims();
        let nbytes = dims.div_ceil(8);
        // table[p][byte] = Σ_k q[8p+k] · (±1 by bit k)
        let mut table = vec![0.0f32; nbytes * 256];
        for p in 0..nbytes {
            let qs: Vec<f32> = (0..8)
                .map(|k| {
                    let j = 8 * p + k;
                    q.get(j).copied().unwrap_or(0.0) * self.sigma.get(j).copied().unwrap_or(0.0)
                })
                .collect();
            for byte in 0..256usize {
                let mut s = 0.0f32;
                for (k, &qk) in qs.iter().enumerate() {
                    s += if byte >> k & 1 == 1 { qk } else { -qk };
                }
                table[p * 256 + byte] = s;
            }
        }
        let base = dot(q, &self.mean);
        self.codes
            .chunks_exact(nbytes.max(1))
            .zip(&self.alphas)
            .map(|(code, &a)| {
                let s: f32 = code
                    .iter()
                    .enumerate()
                    .map(|(p, &b)| table[p * 256 + b as usize])
                    .sum();
                base + a * s
            })
            .collect()
    }

    /// The `k` best passages for a query, as [`Index::query`] ranks them: `vector` is the
    /// query's embedding at [`FragmentedIndex::dims`] (required unless `opts.mode` is
    /// [`Mode::Keyword`]), `text` the query text for BM25. `opts.ef_search` is ignored (the
    /// vector side scores every passage's code). Keyword scores equal [`Index::query`]'s on the
    /// index this was split from.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when the vector is missing, a fusion parameter is
    /// out of range, or a term shard the query needs is not added yet
    /// ([`FragmentedIndex::missing_shards`]); [`IndexError::VectorDims`],
    /// [`IndexError::NonFiniteVector`].
    pub fn query(
        &self,
        vector: Option<&[f32]>,
        text: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<FragmentHit>, IndexError> {
        let q = checked_options(opts, vector, self.dims())?;
        let terms = if opts.mode == Mode::Vector {
            Vec::new()
        } else {
            let mut terms: Vec<(String, f32)> = self
                .query_terms(text)
                .into_iter()
                .map(|t| (t, 1.0))
                .collect();
            let plain: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
            terms.extend(
                self.corrections_of(&plain, text)
                    .into_iter()
                    .map(|(_, c)| (c, crate::typos::TYPO_WEIGHT)),
            );
            let all: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
            if let Some(s) = self.missing_for(&all).first() {
                return Err(IndexError::InvalidArgument {
                    what: "query",
                    detail: format!("term shard {s} is not loaded (add it with add_shard)"),
                });
            }
            terms
        };
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let c = opts.candidates.max(k).max(1);
        let n = self.len();
        let (lists, weights): (Vec<&[(u32, u32)]>, Vec<f32>) = terms
            .iter()
            .filter_map(|(t, w)| {
                let l = self.postings.get(t)?;
                Some((l.as_slice(), idf(n, l.len() as u32) * w))
            })
            .unzip();
        let avg = avgdl(self.total_len, n);
        let bm25_of = |p: u32| -> f32 {
            let mut score = 0.0f32;
            for (list, &w) in lists.iter().zip(&weights) {
                if let Ok(i) = list.binary_search_by_key(&p, |&(x, _)| x) {
                    let x = term_score(w, list[i].1, self.lens[p as usize], avg);
                    if x > 0.0 {
                        score += x;
                    }
                }
            }
            score
        };
        let bm25_top = || -> Vec<Scored> {
            let mut acc: HashMap<u32, f32> = HashMap::new();
            let mut order: Vec<u32> = Vec::new();
            for (list, &w) in lists.iter().zip(&weights) {
                for &(p, tf) in list.iter() {
                    let x = term_score(w, tf, self.lens[p as usize], avg);
                    if x <= 0.0 {
                        continue;
                    }
                    let e = acc.entry(p).or_insert_with(|| {
                        order.push(p);
                        0.0
                    });
                    *e += x;
                }
            }
            let mut found: Vec<Scored> = order
                .into_iter()
                .map(|p| Scored {
                    score: acc[&p],
                    id: p,
                })
                .collect();
            top_n(&mut found, c);
            found
        };
        let vector_top = |q: &[f32]| -> (Vec<Scored>, Vec<f32>) {
            let all = self.vector_scores(q);
            let mut found: Vec<Scored> = all
                .iter()
                .enumerate()
                .map(|(i, &score)| Scored {
                    score,
                    id: i as u32,
                })
                .collect();
            top_n(&mut found, c);
            (found, all)
        };
        let ranked: Vec<Scored> = match (opts.mode, &q) {
            (Mode::Keyword, _) => bm25_top(),
            (Mode::Vector, Some(q)) => vector_top(q).0,
            (Mode::Hybrid, Some(q)) => {
                let (vtop, all) = vector_top(q);
                fuse_candidates(
                    vtop.iter().map(|s| s.id),
                    bm25_top().into_iter().map(|s| s.id),
                    |p| all[p as usize],
                    bm25_of,
                    |p| self.section(p).map_or("", |(url, _, _)| url),
                    opts,
                )
            }
            (_, None) => unreachable!("checked above"),
        };
        let url_of = |p: u32| self.section(p).map_or("", |(url, _, _)| url);
        let out = collapse_sections(ranked, k, opts.collapse_sections, url_of)
            .into_iter()
            .map(|s| {
                let (url, page_title, heading) = self.section(s.id).expect("ranked passages exist");
                FragmentHit {
                    passage: s.id,
                    score: s.score,
                    title: lightembed_title::section_title(page_title, heading),
                    page_title: page_title.to_string(),
                    heading: heading.to_string(),
                    url: url.to_string(),
                }
            })
            .collect();
        Ok(out)
    }
}

/// The typo keys of the unknown query term `term` typed as `raw`: its own
/// ([`crate::typos::query_keys`]), and when stemming changed the word, those of the word as
/// typed (a stem of one of its one-edit variants may lie there: `ggeneric` → `generic`).
fn typo_keys(term: &str, raw: Option<&String>) -> Vec<String> {
    let mut keys = crate::typos::query_keys(term);
    if let Some(w) = raw.filter(|w| w.as_str() != term && !keys.is_empty()) {
        for k in crate::typos::query_keys(w) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}

/// Keeps the `n` best of `v`, best first (ties by id).
fn top_n(v: &mut Vec<Scored>, n: usize) {
    if v.len() > n {
        v.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
        v.truncate(n);
    }
    sort_best_first(v);
}
