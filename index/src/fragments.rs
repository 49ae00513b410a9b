//! A read-only index cut into fragments, for static sites: a visitor downloads the small *core*
//! first, then only the keyword postings of the query's terms, the vector codes of the query's
//! nearest partitions and the text of the results shown (Pagefind's idea, with vectors).
//!
//! [`split`] turns a built [`Index`] into seven kinds of files; [`FragmentedIndex`] reads them
//! back and ranks like [`Index::query`] on the keyword side (same tokeniser, same BM25
//! statistics, same bits; exactly when every tier is read, see *impact tiers*) and by an
//! asymmetric binary code on the vector side:
//!
//! | fragment | holds | fetched |
//! |---|---|---|
//! | core | manifest (spec §8), the code's frame (μ, σ, α_max), the partitions' centroids; nothing per passage or per section | on the first query |
//! | term shard `s` | the first tier of postings `(passage, tf, passage length, place)` of every term `t` with `fnv1a(t) mod S = s` | for each term of a query |
//! | tail shard `u` | the postings past the first tier of every common term `t` with `fnv1a(t) mod U = u` | never by the widget; by a reader asked for every tier |
//! | centroid cell `g` | (two-level bundles) the centroids of the partitions in coarse cell `g` | the cells nearest the query vector, before its partitions |
//! | partition `v` | the binary codes (and places) of the passages whose vectors k-means put in cluster `v` — a range of passage numbers | the `probes` partitions nearest the query vector |
//! | text chunk `c` | passages `c·P .. (c+1)·P`: their text and their sections' URLs and titles | for the results shown |
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
//! **Impact tiers: a query's keyword bytes do not grow with the site.** A term in more than
//! `T` passages ([`SplitOptions::tier_postings`], default [`DEFAULT_TIER_POSTINGS`]) keeps in its
//! term shard only its `T` postings of highest BM25 impact (`term_score` of its tf and the
//! passage's length: the idf is the term's, so this is the order of its BM25 contributions) and
//! its df (the idf needs it); the rest go to a *tail shard*. Each tier is stored in passage
//! order (for the deltas' sake). Without this, the postings of a query's common words
//! ("how", "file", "line") grow with the passages: 1.75 MB of the big Debian docs site's 1.97 MB
//! first query. Rankings read the first tiers only, unless asked for every tier
//! ([`FragmentedIndex::set_all_tiers`]: then exactly [`Index::query`]'s BM25). With the first
//! tiers alone, a passage missing from a term's first tier scores 0 for that term, where its true
//! contribution is somewhere between 0 (it may not hold the term) and the lowest contribution in
//! that first tier (the bound: the first tier holds the term's best); so a passage's BM25 is
//! never above its exact value, a one-term query's top `T` are exact, and what the first tiers
//! miss is a passage holding several common query words, none of them among its `T` best.
//! Every front end reads the first tiers by default, so the widget and `lightembed search` rank
//! alike. A *common word* — in more than `n /` [`COMMON_DF_DIVISOR`] of the `n` passages and more
//! than [`COMMON_TIER_MULTIPLE`]` × T` — keeps a smaller first tier,
//! [`SplitOptions::common_tier_postings`] (default [`DEFAULT_COMMON_TIER_POSTINGS`]): its idf is
//! low, so its contributions are small, and a long question ("Returns the value to which the
//! specified key is mapped") holds several, each otherwise bringing `T` postings (the big Debian
//! docs site's questions: term shards 229 → 151 kB, success@10 0.425 → 0.432). The reader needs
//! no rule: a first tier is `m ≤ df` postings, the term's best, whatever `m` the build chose.
//!
//! **The core does not grow with the site.** It holds no per-passage or per-section data: a
//! passage's keyword length travels in its postings (BM25 needs it only for passages a query
//! term holds), its *place* — `(page, anchor)` numbers that say which passages share a URL and
//! which a page, all that collapsing to one hit per section and page evidence need — in its
//! postings and its partition entry, and its section's URL, page title and heading in its text
//! chunk. A chunk is a fixed number `P` of consecutive passages, so no chunk table is needed
//! either. What the core keeps per partition (a centroid, an entry count) grows with √n. The
//! price: a hit's URL and titles are known once its chunk is added — one round trip after the
//! ranking (a front end fetches the chunks of the hits it shows, as it does for excerpts, and
//! titles them then; [`FragmentHit`]'s strings are empty before).
//!
//! **Vectors.** Each passage vector `x` (L2-normalised, the index dims) is stored as the signs of
//! `x − μ` (`μ` the mean passage vector, kept in the core), one bit per dim, plus one byte for its
//! scale `α` (`α ≈ code / 255 · α_max`): the least-squares fit of `x − μ ≈ α · σ ⊙ sign(x − μ)`,
//! where `σ_j` is the mean `|x_j − μ_j|` over the passages (also in the core: in a Matryoshka
//! frame the leading dims spread most, and a bit of a leading dim stands for more). A query `q`
//! (normalised) scores `q·μ + α · Σ_j q_j σ_j sign_j` — the inner product with that
//! reconstruction, an estimate of the cosine computed without unpacking (a 256-entry table per
//! code byte). At 128 dims a passage costs 17 bytes instead of 132 (int8) or 512 (f32).
//!
//! **Partitions (IVF).** The codes are cut by spherical k-means of the passage vectors
//! ([`crate::kmeans`]: seeded, so a build is reproducible) into `K` partitions; the core keeps
//! each partition's mean vector (int8 with one f32 scale per centroid: a centroid only ranks
//! partitions, and int8 moves a centroid score by well under the gap between partitions, at a
//! quarter of f32's bytes and half of f16's). A query scores the centroids (cosine to the
//! direction of each mean), takes the `probes` best partitions (the core's default, chosen at
//! build time; [`SearchOptions::ef_search`] overrides it) and scores every code in them; so a
//! query downloads `K` centroids and `probes` partitions of `≈ n/K` codes instead of `n` codes.
//! `K` is chosen by bytes: the first query's vector bytes `K·(dims + 5) + probes·(n/K)·(code +
//! place)` are least at `K = √(probes · n · entry / centroid)`; sites under
//! [`PARTITION_MIN_PASSAGES`] passages keep one partition, an exact scan. **Passages are numbered
//! partition by partition** (in source order within one), so a partition is a range of passage
//! numbers: its file lists no passage numbers, and a passage's partition is known from its
//! number alone ([`FragmentedIndex::partition_of`]). On the hybrid side a keyword candidate
//! outside the probed partitions has no code loaded; its vector score is the query's inner
//! product with its partition's mean vector (the expected cosine of a member; giving it the
//! lowest score of the scanned codes instead cost the big Debian docs site 2.7 points of
//! success@10 against the exact scan). Everything a ranking reads is decided by the query alone
//! (the probed set, not whatever other partitions happen to be loaded), so every front end
//! ranks alike. The numbering has one visible effect: passages with equal scores are ordered by
//! passage number, which is no longer the source order, so the keyword ranking equals
//! [`Index::query`]'s score for score but may order tied passages differently.
//!
//! **Two-level centroids: the core does not grow with √n either.** The centroids of `K`
//! partitions cost `K · (dims + 5)` bytes, and with `K ∝ √n` they were the biggest single part of
//! a big site's first query (81 kB of the big Debian docs site's 404 kB). Above
//! [`TWO_LEVEL_MIN_PARTITIONS`] partitions (as the one-level rule would choose them) the
//! partitions are grouped into `C ≈ √(cell probes · K)` *cells* by a first, coarse k-means of the
//! passage vectors; each cell's passages are then cut by their own k-means into partitions (their
//! number in proportion to the cell's passages). The core keeps the cells' mean vectors only;
//! the centroids of a cell's partitions live in a *centroid cell* file `g<c>.bin`. A query scores
//! the cells' centroids, fetches the nearest cells' files (at least the core's cell probes, and
//! as many more, nearest first, as it takes to hold `probes` partitions), scores the partitions
//! in them and fetches the `probes` best: one more dependent round trip (core → cells →
//! partitions). Partitions are numbered cell by cell, so a cell is a range of partitions and of
//! passages. With the centroids cheap, partitions can be small: the first query's vector bytes
//! `C·c + cells·(K/C)·c + probes·(n/K)·e` (`c` a centroid's bytes, `e` an entry's) are least at
//! `K = (probes · n · e / (c · √cells))^(2/3)`, `C = √(cells · K)`. A keyword candidate outside
//! the probed partitions is scored with its partition's mean when its cell was fetched, with its
//! cell's mean otherwise (decided by the query alone, as before).
//!
//! **Places.** Pages (the distinct URLs before `#`, first seen first) are numbered from 1; page
//! 0 is "no URL" (never collapsed, no page evidence). A passage's anchor is the number of its URL
//! among its page's distinct URLs (first seen first). Two passages share a section (one hit per
//! section) when their places are equal, a page when their page numbers are.
//!
//! # Byte layouts (version 7: two-level centroids — the core may hold coarse cells, their
//! partitions' centroids in centroid cell files; version 6: impact tiers — term shards hold each term's first tier and its df,
//! tail shards the rest; version 5: partitioned vector codes and a core that holds nothing per passage
//! or section — postings carry lengths and places, chunks carry sections; version 4: typo shards,
//! their count in the core; version 3: a section keeps its page title and heading apart; version
//! 2: keyword terms fold `ı` → `i`. Older bundles are refused with "re-run `lightembed site`")
//!
//! Integers little-endian, `varint` unsigned LEB128 in shortest form (as in [`crate::layout`]),
//! `str` a `varint` byte length + UTF-8, `zigzag` a signed value as a varint (`2v` for `v ≥ 0`,
//! `−2v − 1` below). Every fragment ends with the SHA-256 of its preceding bytes. A shard,
//! partition or chunk repeats the first 16 bytes of the core's SHA-256 (the *build id*), so a
//! fragment of another build is refused instead of mixed in. `m × place` is two columns: `m ×
//! zigzag (page − the previous entry's page, 0 before the first)`, then `m × varint anchor`
//! (anchor 0 when page 0). Lists are written column by column: gzip finds more in a column of
//! like values (term shards 16 % smaller than row by row on the Python docs).
//!
//! ```text
//! core      "LEFI" u16 version=7 u16 flags (bit 0: English stemming)
//!           manifest (as crate::layout; count = passages n < 2³²−1)
//!           varint term shards (1..=65536); u64 Σ|d| (keyword tokens of every passage);
//!           varint typo shards (1..=65536); varint tail shards U (0..=65536)
//!           varint chunk passages P (≥ 1; text chunks = ⌈n / P⌉)
//!           dims × f32 μ; dims × f32 σ (finite, ≥ 0); f32 α_max (finite, ≥ 0)
//!           varint partitions K (≥ 1 when n > 0, ≤ 65536); varint probes (1..=K; 0 when K = 0)
//!           varint cells C (0: one level; else 1..=K); varint cell probes (1..=C; 0 when C = 0)
//!           C = 0: K × centroid (varint entries ≥ 1; f32 scale (finite, ≥ 0); dims × i8)
//!               (Σ entries = n; partition v holds passages Σ_{u<v} entries_u onwards; a centroid
//!               is its partition's mean vector ≈ scale · i8)
//!           C > 0: C × (varint partitions k_c ≥ 1; centroid, its entries ≥ k_c: the cell's
//!               passages and mean vector) (Σ k_c = K; cell c holds partitions Σ_{d<c} k_d
//!               onwards and passages Σ_{d<c} entries_d onwards)
//!           32-byte content digest: SHA-256 over every term shard, partition, chunk, typo
//!               shard, tail shard and centroid cell (in that order), each as u64 length + its bytes up to its trailer with the build id
//!               zeroed (so the build id, and every cached fragment name derived from it,
//!               changes when any text, posting or code does)
//!           32-byte SHA-256
//! shard     "LEFT" u16 version=7 16-byte build id, varint shard number
//!           varint terms; per term (distinct, each hashing to this shard): str term,
//!               varint df ≥ 1, postings (1 ≤ m ≤ df: the term's first tier, min(df, T) —
//!               a common word's min(df, common tier))
//!           32-byte SHA-256
//! postings  varint m, m × varint passage delta (first = passage; increasing, < n),
//!               m × varint tf ≥ 1, m × varint |d| ≥ tf (the passage's keyword length),
//!               m × place
//! tail      "LEFU" u16 version=7 16-byte build id, varint tail shard number
//!           varint terms; per term (distinct, each hashing to this shard, df > T): str term,
//!               postings (m = df − T ≥ 1: the rest, in passage order)
//!           32-byte SHA-256
//! cell      "LEFG" u16 version=7 16-byte build id, varint cell number c
//!           varint partitions (= the core's k_c); k_c × centroid (Σ entries = the core's entries
//!               of the cell; partition i of the cell is the cell's first partition + i)
//!           32-byte SHA-256
//! partition "LEFV" u16 version=7 16-byte build id, varint partition number
//!           varint entries m (= the core's count for it; entry i is passage start_v + i)
//!           m × place; m × u8 α code; m × ⌈dims/8⌉ sign bytes
//!               (bit k of byte p = dim 8p + k, set = positive; bits past dims 0)
//!           32-byte SHA-256
//! chunk     "LEFC" u16 version=7 16-byte build id, varint chunk number
//!           varint count (= min(P, n − c·P)); varint sections S (1..=count; 0 when count 0);
//!           S × (str url, str page title, str heading (empty: none));
//!               a section's display title is `lightembed_title::section_title` of the two
//!           count × (varint section < S, str text)
//!           32-byte SHA-256
//! typo      "LEFY" u16 version=7 16-byte build id, varint typo shard number
//!           varint keys; per key (distinct, ascending, each hashing to this shard): str key
//!               (`^` + a term's first two chars, or its last two + `$`), varint count ≥ 1,
//!               count × (str term (ascending, distinct, under that key), varint df ≥ 1)
//!           32-byte SHA-256
//! ```

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::error::IndexError;
use crate::hybrid::{checked_options, collapse_sections, fuse_candidates, Place};
use crate::index::Index;
use crate::keywords::{avgdl, for_each_term, idf, term_score};
use crate::layout::{malformed, read_manifest, write_manifest, Reader, Writer};
use crate::manifest::Manifest;
use crate::util::{dot, sort_best_first, Scored};
use crate::{Mode, SearchOptions};

/// Version of the fragment layouts written and read here.
pub const FRAGMENTS_VERSION: u16 = 7;

const CORE_MAGIC: [u8; 4] = *b"LEFI";
const SHARD_MAGIC: [u8; 4] = *b"LEFT";
const PART_MAGIC: [u8; 4] = *b"LEFV";
const CHUNK_MAGIC: [u8; 4] = *b"LEFC";
const TYPO_MAGIC: [u8; 4] = *b"LEFY";
const TAIL_MAGIC: [u8; 4] = *b"LEFU";
const CELL_MAGIC: [u8; 4] = *b"LEFG";
const TRAILER: usize = 32;

/// Below this many passages a bundle keeps one partition (every code scored: exact). Chosen by
/// bytes and recall on the Rust book and the Python docs (`bench/RESULTS.md`, "Partitioned
/// vectors, flat core"; the book's 3,585 passages in 67 partitions: 8.9 kB of codes per query
/// instead of 60 kB, hybrid MRR@10 0.924 against 0.904 for the exact scan).
pub const PARTITION_MIN_PASSAGES: usize = 2048;

/// Partitions a query probes by default ([`SplitOptions::probes`]).
pub const DEFAULT_PROBES: usize = 8;

/// Above this many partitions (as the one-level rule `√(probes · n · entry / centroid)` would
/// choose them) a bundle keeps two levels of centroids: coarse cells in the core, each cell's
/// partition centroids in a file of its own (module docs, *two-level centroids*). Below, one
/// level keeps a query to one round trip for its vectors and its ranking as it was: two levels
/// would save the Python docs' first query 22 kB (145 → 123 kB) but move its hybrid MRR@10 from
/// 0.883 to 0.858 (`bench/RESULTS.md`, "Two-level centroids"); the big Debian docs site (361k
/// passages) gets two levels, 48 kB of vector bytes per query instead of 160 kB.
pub const TWO_LEVEL_MIN_PARTITIONS: usize = 256;

/// Coarse cells a query fetches the partition centroids of, at least, in a two-level bundle
/// ([`SplitOptions::cell_probes`]).
pub const DEFAULT_CELL_PROBES: usize = 4;

/// Postings a term's first tier holds by default ([`SplitOptions::tier_postings`]). Measured at
/// 1,024 and 4,096 (`bench/RESULTS.md`, "Flat keyword side: impact tiers"): on the big Debian
/// docs site's mechanical questions 1,024 cost 3.2 points of success@10 (0.398 against 0.430),
/// 4,096 1.3 points (0.417), within the 2 asked; a query's term shards there 126 kB and 219 kB
/// (1.70 MB with every posting), on the Python docs 41 kB and 69 kB (97 kB), whose hybrid MRR@10
/// is 0.871 and 0.883 (0.865).
pub const DEFAULT_TIER_POSTINGS: usize = 4096;

/// A term in more than `n / COMMON_DF_DIVISOR` of a site's `n` passages and more than
/// [`COMMON_TIER_MULTIPLE`] × [`SplitOptions::tier_postings`] is a common word: its first tier
/// holds [`SplitOptions::common_tier_postings`].
pub const COMMON_DF_DIVISOR: usize = 16;

/// See [`COMMON_DF_DIVISOR`]: a common word is in more than this many times
/// [`SplitOptions::tier_postings`] passages, so a site of the Python docs' size (31,508
/// passages) has few (the, a, of, …) and a small site none.
pub const COMMON_TIER_MULTIPLE: usize = 4;

/// Postings in a common word's first tier by default ([`SplitOptions::common_tier_postings`]).
/// Measured at 4,096 (none smaller), 1,024 and 512 (`bench/RESULTS.md`, "Common words: smaller
/// first tiers"): on the big Debian docs site (360,977 passages, a common word there is in more
/// than 22,561) a question's term shards 229, 161 and 151 kB, success@10 0.425, 0.427 and 0.432;
/// on the Python docs (31,508 passages: more than 16,384) 69, 48 and 48 kB, MRR@10 0.883 each.
pub const DEFAULT_COMMON_TIER_POSTINGS: usize = 512;

/// Most partitions a core may list.
const MAX_PARTITIONS: usize = 1 << 16;

/// Sizes of the fragments [`split`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Target raw bytes of postings per term shard (the shard count is
    /// `⌈postings bytes / shard_bytes⌉`), and of typo lists per typo shard. Default 8 KiB.
    pub shard_bytes: usize,
    /// Target raw bytes of text per chunk: a chunk holds a fixed number of passages, that many
    /// as hold this much text on average. Default 4 KiB.
    pub chunk_bytes: usize,
    /// Vector partitions: `None` chooses by bytes (one below [`PARTITION_MIN_PASSAGES`]
    /// passages, else `√(probes · n · entry bytes / centroid bytes)`); `Some(k)` asks for `k`
    /// (fewer when k-means leaves some empty; at most 65,536).
    pub partitions: Option<usize>,
    /// Partitions a query probes by default (written in the core; at most the partitions).
    /// Default [`DEFAULT_PROBES`].
    pub probes: usize,
    /// Coarse centroid cells: `None` chooses by bytes (none — one level — unless the partitions
    /// are more than [`TWO_LEVEL_MIN_PARTITIONS`], then `√(cell_probes · partitions)`);
    /// `Some(0)` one level; `Some(c)` asks for `c` (at most the partitions; fewer when k-means
    /// leaves some empty).
    pub cells: Option<usize>,
    /// Cells a query fetches the partition centroids of, at least (written in the core; at most
    /// the cells). Default [`DEFAULT_CELL_PROBES`].
    pub cell_probes: usize,
    /// Postings in a term's first tier (its term shard, what a query fetches): a term in more
    /// passages keeps there the `tier_postings` with the highest BM25 impact, and the rest go
    /// to a tail shard that a ranking reads only when asked for every tier
    /// ([`FragmentedIndex::set_all_tiers`]). Default [`DEFAULT_TIER_POSTINGS`].
    pub tier_postings: usize,
    /// Postings in the first tier of a *common word*: a term in more than
    /// [`COMMON_TIER_MULTIPLE`] × `tier_postings` passages and more than `n /`
    /// [`COMMON_DF_DIVISOR`] of the `n` passages (words such as "the", "returns", "value" on a
    /// big site). Its idf is low, so what a passage past its first
    /// tier loses is small, and a long question holds several such words: each would otherwise
    /// bring `tier_postings` postings to its first query. At most `tier_postings` (more is taken
    /// as `tier_postings`). Default [`DEFAULT_COMMON_TIER_POSTINGS`].
    pub common_tier_postings: usize,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            shard_bytes: 8 << 10,
            chunk_bytes: 4 << 10,
            partitions: None,
            probes: DEFAULT_PROBES,
            cells: None,
            cell_probes: DEFAULT_CELL_PROBES,
            tier_postings: DEFAULT_TIER_POSTINGS,
            common_tier_postings: DEFAULT_COMMON_TIER_POSTINGS,
        }
    }
}

/// The files of a fragmented index, as bytes: `core`, `shards[s]` (term shard `s`),
/// `partitions[v]` (vector partition `v`), `chunks[c]` (text chunk `c`), `typos[y]` (typo shard
/// `y`), `tails[u]` (tail shard `u`), `cells[g]` (centroid cell `g`).
#[derive(Debug, Clone)]
pub struct Fragments {
    /// Where each passage came from, by passage number (passages are numbered partition by
    /// partition): the index slot ([`split`]) or the push number ([`Builder::finish`]). Not
    /// written to any file.
    pub slots: Vec<u32>,
    /// The core (always fetched first).
    pub core: Vec<u8>,
    /// Term shards, by number.
    pub shards: Vec<Vec<u8>>,
    /// Vector partitions, by number.
    pub partitions: Vec<Vec<u8>>,
    /// Text chunks, by number.
    pub chunks: Vec<Vec<u8>>,
    /// Typo shards, by number.
    pub typos: Vec<Vec<u8>>,
    /// Tail shards (the postings past each term's first tier), by number.
    pub tails: Vec<Vec<u8>>,
    /// Centroid cells (the partition centroids of each coarse cell), by number: none in a
    /// one-level bundle.
    pub cells: Vec<Vec<u8>>,
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

/// Cuts `index` into fragments. Live documents become passages `0..n`, partition by partition
/// and in slot order within one ([`Fragments::slots`] says which is which); a
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

/// The number of partitions and of coarse cells (0: one level) for `n` passages of `dims` dims:
/// `opts.partitions` and `opts.cells`, or by bytes (module docs).
fn partitions_for_size(n: usize, dims: usize, opts: &SplitOptions) -> (usize, usize) {
    if n == 0 {
        return (0, 0);
    }
    // A code (α + signs) and its place and passage delta (~4 bytes); a centroid (its i8 dims,
    // its scale, its count).
    let entry = (dims.div_ceil(8) + 5) as f64;
    let centroid = (dims + 6) as f64;
    let probes = opts.probes as f64;
    let one_level = (probes * n as f64 * entry / centroid).sqrt().round() as usize;
    let two_level = opts.cells.is_none_or(|c| c > 0)
        && opts.partitions.unwrap_or(one_level) > TWO_LEVEL_MIN_PARTITIONS;
    let k = match opts.partitions {
        Some(k) => k,
        None if n < PARTITION_MIN_PASSAGES => 1,
        None if !two_level => one_level,
        // C·c + cells·(K/C)·c + probes·(n/K)·e with C = √(cells·K): least at this K.
        None => (probes * n as f64 * entry / (centroid * (opts.cell_probes as f64).sqrt()))
            .powf(2.0 / 3.0)
            .round() as usize,
    };
    let k = k.clamp(1, MAX_PARTITIONS).min(n);
    let cells = match opts.cells {
        Some(c) => c,
        None if k > TWO_LEVEL_MIN_PARTITIONS => {
            ((opts.cell_probes * k) as f64).sqrt().round() as usize
        }
        None => 0,
    };
    (k, cells.min(k))
}

/// A passage's place in a fragment: `(page, anchor)`, page 0 = no URL (module docs).
type FragPlace = (u32, u32);

/// As [`crate::hybrid`]'s [`Place`]: pages by number, sections by page and anchor.
fn place_key((page, anchor): FragPlace) -> Place<u64> {
    (page != 0).then(|| (page as u64, (page as u64) << 32 | anchor as u64))
}

/// `places` as two columns: each page as a zigzag delta from the one before (0 before the
/// first), then each anchor.
fn write_places(w: &mut Writer, places: impl Iterator<Item = FragPlace> + Clone) {
    let mut prev: i64 = 0;
    for (page, _) in places.clone() {
        let d = page as i64 - prev;
        // Pages are fewer than 2³¹ (checked in `write`), so the zigzag value fits a u32.
        let z = if d >= 0 { 2 * d } else { -2 * d - 1 };
        w.varint(z as u32);
        prev = page as i64;
    }
    for (_, anchor) in places {
        w.varint(anchor);
    }
}

/// `m` places written by [`write_places`] (the caller checked that the bytes can hold them).
fn read_places(r: &mut Reader<'_>, m: usize) -> Result<Vec<FragPlace>, IndexError> {
    let mut out = Vec::with_capacity(m);
    let mut prev: i64 = 0;
    for _ in 0..m {
        let z = r.varint("place page")? as i64;
        let page = prev + if z & 1 == 0 { z >> 1 } else { -(z >> 1) - 1 };
        if !(0..=u32::MAX as i64).contains(&page) {
            return Err(malformed("place page", format!("page {page}")));
        }
        out.push((page as u32, 0));
        prev = page;
    }
    for x in out.iter_mut() {
        x.1 = r.varint("place anchor")?;
        if x.0 == 0 && x.1 != 0 {
            return Err(malformed(
                "place anchor",
                "a passage without a URL has anchor 0".into(),
            ));
        }
    }
    Ok(out)
}

fn write(src: &Source<'_>, opts: &SplitOptions) -> Result<Fragments, IndexError> {
    if opts.shard_bytes == 0
        || opts.chunk_bytes == 0
        || opts.probes == 0
        || opts.partitions == Some(0)
        || opts.cell_probes == 0
        || opts.tier_postings == 0
        || opts.common_tier_postings == 0
    {
        return Err(IndexError::InvalidArgument {
            what: "split options",
            detail: "shard_bytes, chunk_bytes, probes, partitions, cell_probes, tier_postings and common_tier_postings \
                     must be > 0"
                .into(),
        });
    }
    let dims = src.manifest.dims;
    let n = src.live.len();
    let kw = src.keywords;
    let vec_of = |slot: u32| &src.vectors[slot as usize * dims..(slot as usize + 1) * dims];

    // Partitions: spherical k-means of the passage vectors (one partition below the size where
    // it pays; two levels — coarse cells, each cut into partitions by its own k-means — above
    // TWO_LEVEL_MIN_PARTITIONS). Passages are numbered partition by partition (in source order
    // within one) and partitions cell by cell, so a partition is a range of passage numbers and a
    // cell a range of partitions: a passage's partition and cell need no bytes.
    let (k, n_cells) = partitions_for_size(n, dims, opts);
    let rows: std::borrow::Cow<'_, [f32]> = if k <= 1 {
        std::borrow::Cow::Borrowed(&[])
    } else if src.live.iter().enumerate().all(|(i, &s)| s as usize == i) {
        std::borrow::Cow::Borrowed(&src.vectors[..n * dims])
    } else {
        std::borrow::Cow::Owned(src.live.iter().flat_map(|&s| vec_of(s).to_vec()).collect())
    };
    let mut grouping = if k <= 1 {
        // One partition (or none): its mean is the mean vector, computed below.
        Grouping {
            means: Vec::new(),
            assign: vec![0; n],
            cells: Vec::new(),
        }
    } else if n_cells == 0 {
        let c = crate::kmeans::spherical_kmeans(&rows, dims, k, crate::kmeans::SEED);
        Grouping {
            means: c.means,
            assign: c.assign,
            cells: Vec::new(),
        }
    } else {
        two_level(&rows, dims, k, n_cells)
    };
    drop(rows);
    let k = if k <= 1 {
        k
    } else {
        grouping.means.len() / dims.max(1)
    };
    let n_cells = grouping.cells.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| grouping.assign[i]); // stable: source order within a partition
    let live: Vec<u32> = order.iter().map(|&i| src.live[i]).collect();
    let live = &live;
    let mut sizes = vec![0usize; k];
    for &c in &grouping.assign {
        sizes[c as usize] += 1;
    }
    let probes = opts.probes.min(k);
    let cell_probes = if n_cells == 0 {
        0
    } else {
        opts.cell_probes.clamp(1, n_cells)
    };

    // Per passage: its section (url, page title, heading), its place and its keyword length.
    let mut sections: Vec<(&str, &str, &str)> = Vec::with_capacity(n);
    let mut pages: HashMap<&str, (u32, HashMap<&str, u32>)> = HashMap::new();
    let mut places: Vec<FragPlace> = Vec::with_capacity(n);
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
        let url = p.url.as_str();
        sections.push((url, page_title, heading));
        places.push(if url.is_empty() {
            (0, 0)
        } else {
            let next = pages.len() as u32 + 1;
            let (page, anchors) = pages
                .entry(url.split('#').next().unwrap_or(url))
                .or_insert_with(|| (next, HashMap::new()));
            let a = anchors.len() as u32;
            (*page, *anchors.entry(url).or_insert(a))
        });
        lens.push(kw.terms_of(slot).iter().map(|&(_, tf)| tf).sum::<u32>());
    }
    if pages.len() >= 1 << 31 {
        return Err(IndexError::InvalidArgument {
            what: "pages",
            detail: format!("{} pages: at most 2³¹ − 1", pages.len()),
        });
    }
    let total_len: u64 = lens.iter().map(|&l| l as u64).sum();

    // Binary codes of the centred vectors.
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
    if k == 1 {
        grouping.means = mean.clone();
    }
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
    let alpha_codes: Vec<u8> = alphas
        .iter()
        .map(|&a| {
            if alpha_max > 0.0 {
                (a / alpha_max * 255.0).round().clamp(0.0, 255.0) as u8
            } else {
                0
            }
        })
        .collect();

    // Postings per term over passages.
    let mut postings: Vec<Vec<(u32, u32)>> = vec![Vec::new(); kw.vocab.len()];
    for (i, &slot) in live.iter().enumerate() {
        for &(t, tf) in kw.terms_of(slot) {
            postings[t as usize].push((i as u32, tf));
        }
    }
    // Impact tiers: a term in more than `tier_postings` passages keeps its `tier_postings`
    // postings of highest BM25 impact (ties: the lower passage) in its term shard and the rest
    // in a tail shard, each tier in passage order. The idf is the term's, so the impact order is
    // that of `term_score(1, tf, |d|, avgdl)`.
    let avg = avgdl(total_len, n);
    // A common word (in more than n / COMMON_DF_DIVISOR and COMMON_TIER_MULTIPLE × tier
    // passages) keeps fewer.
    let tier_of = |df: usize| {
        if df > opts.tier_postings.saturating_mul(COMMON_TIER_MULTIPLE)
            && df > n / COMMON_DF_DIVISOR
        {
            opts.common_tier_postings.min(opts.tier_postings)
        } else {
            opts.tier_postings
        }
    };
    let mut tails: Vec<Vec<(u32, u32)>> = vec![Vec::new(); kw.vocab.len()];
    for (list, tail) in postings.iter_mut().zip(tails.iter_mut()) {
        let tier = tier_of(list.len());
        if list.len() <= tier {
            continue;
        }
        let impact = |&(p, tf): &(u32, u32)| term_score(1.0, tf, lens[p as usize], avg);
        list.sort_by(|a, b| impact(b).total_cmp(&impact(a)).then(a.0.cmp(&b.0)));
        *tail = list.split_off(tier);
        list.sort_unstable();
        tail.sort_unstable();
    }
    let list_bytes = |lists: &[Vec<(u32, u32)>]| -> usize {
        kw.vocab
            .iter()
            .zip(lists)
            .filter(|(_, p)| !p.is_empty())
            .map(|(t, p)| t.len() + 6 + 6 * p.len())
            .sum()
    };
    let n_shards = list_bytes(&postings)
        .div_ceil(opts.shard_bytes)
        .clamp(1, 1 << 16);
    let mut by_shard: Vec<Vec<u32>> = vec![Vec::new(); n_shards];
    for (t, term) in kw.vocab.iter().enumerate() {
        if !postings[t].is_empty() {
            by_shard[(term_hash(term) % n_shards as u32) as usize].push(t as u32);
        }
    }
    // Tail shards are never part of a first query: a few times a term shard's bytes each.
    let n_tails = list_bytes(&tails)
        .div_ceil(opts.shard_bytes * 8)
        .min(1 << 16);
    let mut by_tail: Vec<Vec<u32>> = vec![Vec::new(); n_tails];
    for (t, term) in kw.vocab.iter().enumerate() {
        if !tails[t].is_empty() {
            by_tail[(term_hash(term) % n_tails as u32) as usize].push(t as u32);
        }
    }
    let df_of = |t: usize| (postings[t].len() + tails[t].len()) as u32;

    // Typo lists: each listed term under its two keys, the keys hashed into typo shards.
    let mut typo_lists: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for (t, term) in kw.vocab.iter().enumerate() {
        if crate::typos::listed(term, df_of(t)) {
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

    // Text chunks: a fixed number of consecutive passages, as many as hold chunk_bytes of text
    // on average.
    let text_bytes: usize = live
        .iter()
        .map(|&s| src.docs[s as usize].payload.snippet.len() + 4)
        .sum();
    let per_chunk = if n == 0 {
        1
    } else {
        ((opts.chunk_bytes as f64 * n as f64 / text_bytes.max(1) as f64).round() as usize)
            .clamp(1, n)
    };
    let n_chunks = n.div_ceil(per_chunk);

    // Core.
    let mut w = Writer { buf: Vec::new() };
    w.buf.extend_from_slice(&CORE_MAGIC);
    w.u16(FRAGMENTS_VERSION);
    w.u16(u16::from(kw.stem));
    write_manifest(&mut w, src.manifest, n as u64);
    w.varint(n_shards as u32);
    w.u64(total_len);
    w.varint(n_typos as u32);
    w.varint(n_tails as u32);
    w.varint(per_chunk as u32);
    for &m in mean.iter().chain(&sigma) {
        w.f32(m);
    }
    w.f32(alpha_max);
    w.varint(k as u32);
    w.varint(probes as u32);
    w.varint(n_cells as u32);
    w.varint(cell_probes as u32);
    let means = &grouping.means;
    if n_cells == 0 {
        for (c, m) in means.chunks_exact(dims.max(1)).enumerate() {
            write_centroid(&mut w, sizes[c], m);
        }
    } else {
        for cell in &grouping.cells {
            w.varint(cell.parts.len() as u32);
            write_centroid(
                &mut w,
                cell.parts.clone().map(|v| sizes[v]).sum(),
                &cell.mean,
            );
        }
    }
    let mut core = w;

    // Shards, partitions and chunks are written with a zeroed build id, hashed into the core,
    // then given the core's build id and sealed.
    let header = |magic: &[u8; 4], number: usize| {
        let mut w = Writer { buf: Vec::new() };
        w.buf.extend_from_slice(magic);
        w.u16(FRAGMENTS_VERSION);
        w.buf.extend_from_slice(&[0; 16]);
        w.varint(number as u32);
        w
    };
    // `varint m`, then m postings column by column (gzip finds more in a column of like values).
    let write_postings = |w: &mut Writer, list: &[(u32, u32)]| {
        w.varint(list.len() as u32);
        let mut prev = 0;
        for (k, &(p, _)) in list.iter().enumerate() {
            w.varint(if k == 0 { p } else { p - prev });
            prev = p;
        }
        for &(_, tf) in list {
            w.varint(tf);
        }
        for &(p, _) in list {
            w.varint(lens[p as usize]);
        }
        write_places(w, list.iter().map(|&(p, _)| places[p as usize]));
    };
    let shards: Vec<Writer> = by_shard
        .iter_mut()
        .enumerate()
        .map(|(s, terms)| {
            terms.sort_by(|&a, &b| kw.vocab[a as usize].cmp(&kw.vocab[b as usize]));
            let mut w = header(&SHARD_MAGIC, s);
            w.varint(terms.len() as u32);
            for &t in terms.iter() {
                varstr(&mut w, &kw.vocab[t as usize]);
                w.varint(df_of(t as usize));
                write_postings(&mut w, &postings[t as usize]);
            }
            w
        })
        .collect();
    let tail_shards: Vec<Writer> = by_tail
        .iter_mut()
        .enumerate()
        .map(|(s, terms)| {
            terms.sort_by(|&a, &b| kw.vocab[a as usize].cmp(&kw.vocab[b as usize]));
            let mut w = header(&TAIL_MAGIC, s);
            w.varint(terms.len() as u32);
            for &t in terms.iter() {
                varstr(&mut w, &kw.vocab[t as usize]);
                write_postings(&mut w, &tails[t as usize]);
            }
            w
        })
        .collect();
    let cells: Vec<Writer> = grouping
        .cells
        .iter()
        .enumerate()
        .map(|(g, cell)| {
            let mut w = header(&CELL_MAGIC, g);
            w.varint(cell.parts.len() as u32);
            for v in cell.parts.clone() {
                write_centroid(&mut w, sizes[v], &means[v * dims..(v + 1) * dims]);
            }
            w
        })
        .collect();
    let mut start = 0;
    let parts: Vec<Writer> = sizes
        .iter()
        .enumerate()
        .map(|(v, &m)| {
            let range = start..start + m;
            start += m;
            let mut w = header(&PART_MAGIC, v);
            w.varint(m as u32);
            write_places(&mut w, places[range.clone()].iter().copied());
            w.buf.extend_from_slice(&alpha_codes[range.clone()]);
            w.buf
                .extend_from_slice(&codes[range.start * nbytes..range.end * nbytes]);
            w
        })
        .collect();
    let chunks: Vec<Writer> = (0..n_chunks)
        .map(|c| {
            let from = c * per_chunk;
            let to = (from + per_chunk).min(n);
            let mut w = header(&CHUNK_MAGIC, c);
            w.varint((to - from) as u32);
            let mut local: HashMap<(&str, &str, &str), u32> = HashMap::new();
            let mut order = Vec::new();
            let section_of: Vec<u32> = (from..to)
                .map(|i| {
                    *local.entry(sections[i]).or_insert_with(|| {
                        order.push(sections[i]);
                        order.len() as u32 - 1
                    })
                })
                .collect();
            w.varint(order.len() as u32);
            for (url, page_title, heading) in &order {
                varstr(&mut w, url);
                varstr(&mut w, page_title);
                varstr(&mut w, heading);
            }
            for (i, &s) in (from..to).zip(&section_of) {
                w.varint(s);
                varstr(&mut w, &src.docs[live[i] as usize].payload.snippet);
            }
            w
        })
        .collect();
    let typos: Vec<Writer> = by_typo
        .iter()
        .enumerate()
        .map(|(y, keys)| {
            let mut w = header(&TYPO_MAGIC, y);
            w.varint(keys.len() as u32);
            for (key, terms) in keys {
                varstr(&mut w, key);
                w.varint(terms.len() as u32);
                for &t in terms.iter() {
                    varstr(&mut w, &kw.vocab[t as usize]);
                    w.varint(df_of(t as usize));
                }
            }
            w
        })
        .collect();
    let mut content = Sha256::new();
    for w in shards
        .iter()
        .chain(&parts)
        .chain(&chunks)
        .chain(&typos)
        .chain(&tail_shards)
        .chain(&cells)
    {
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
        slots: live.clone(),
        core: core.buf,
        shards: shards.into_iter().map(seal).collect(),
        partitions: parts.into_iter().map(seal).collect(),
        chunks: chunks.into_iter().map(seal).collect(),
        typos: typos.into_iter().map(seal).collect(),
        tails: tail_shards.into_iter().map(seal).collect(),
        cells: cells.into_iter().map(seal).collect(),
    })
}

/// `varint entries, f32 scale, dims × i8`: a mean vector `m` as int8 with one scale (the largest
/// |component| / 127).
fn write_centroid(w: &mut Writer, entries: usize, m: &[f32]) {
    w.varint(entries as u32);
    let top = m.iter().fold(0.0f32, |a, &x| a.max(x.abs()));
    let scale = top / 127.0;
    w.f32(scale);
    for &x in m {
        let q = if scale > 0.0 {
            (x / scale).round().clamp(-127.0, 127.0) as i8
        } else {
            0
        };
        w.u8(q as u8);
    }
}

/// How [`write`] groups the passages: each partition's mean vector (`K × dims`), each row's
/// partition, and (two levels) the cells: partitions numbered cell by cell.
struct Grouping {
    means: Vec<f32>,
    assign: Vec<u32>,
    cells: Vec<Cell>,
}

/// A coarse cell as written: its partitions (a range of partition numbers) and its mean vector.
struct Cell {
    parts: std::ops::Range<usize>,
    mean: Vec<f32>,
}

/// Two-level k-means: `rows` into `n_cells` coarse cells, then each cell's rows into its own
/// partitions, `k · (cell rows / n)` of them (at least one), numbered cell by cell. A cell's
/// k-means costs its rows × its partitions, so the whole is far cheaper than one k-means into
/// `k`.
fn two_level(rows: &[f32], dims: usize, k: usize, n_cells: usize) -> Grouping {
    let n = rows.len() / dims.max(1);
    let coarse = crate::kmeans::spherical_kmeans(rows, dims, n_cells, crate::kmeans::SEED);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); coarse.k(dims)];
    for (i, &c) in coarse.assign.iter().enumerate() {
        members[c as usize].push(i);
    }
    let mut means = Vec::new();
    let mut assign = vec![0u32; n];
    let mut cells = Vec::with_capacity(members.len());
    for (c, rows_of) in members.iter().enumerate() {
        let local: Vec<f32> = rows_of
            .iter()
            .flat_map(|&i| rows[i * dims..(i + 1) * dims].iter().copied())
            .collect();
        let want =
            ((k as f64 * rows_of.len() as f64 / n as f64).round() as usize).clamp(1, rows_of.len());
        let fine = crate::kmeans::spherical_kmeans(
            &local,
            dims,
            want,
            crate::kmeans::SEED.wrapping_add(1 + c as u64),
        );
        let first = means.len() / dims.max(1);
        for (&i, &v) in rows_of.iter().zip(&fine.assign) {
            assign[i] = (first + v as usize) as u32;
        }
        means.extend_from_slice(&fine.means);
        cells.push(Cell {
            parts: first..means.len() / dims.max(1),
            mean: coarse.means[c * dims..(c + 1) * dims].to_vec(),
        });
    }
    Grouping {
        means,
        assign,
        cells,
    }
}

/// Reads `varint m` and m postings as [`split`] writes them (passages increasing, below `n`; tf
/// ≥ 1; a length ≥ tf; places).
fn read_postings(r: &mut Reader<'_>, n: u64) -> Result<Vec<Posting>, IndexError> {
    let df = r.varint("postings")? as u64;
    if df > n {
        return Err(malformed("postings", format!("{df} for {n} passages")));
    }
    r.need(5 * df, "postings")?;
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
        list.push(Posting {
            passage: p as u32,
            tf: 0,
            len: 0,
            place: (0, 0),
        });
        prev = p;
    }
    for x in list.iter_mut() {
        x.tf = r.varint("term frequency")?;
    }
    for x in list.iter_mut() {
        x.len = r.varint("passage length")?;
        if x.tf == 0 || x.tf > x.len {
            return Err(malformed(
                "term frequency",
                format!("{} in passage {} of length {}", x.tf, x.passage, x.len),
            ));
        }
    }
    for (x, place) in list.iter_mut().zip(read_places(r, df as usize)?) {
        x.place = place;
    }
    Ok(list)
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
    /// holds its text, URL and titles.
    pub passage: u32,
    /// Higher is better: the estimated cosine (vector mode), BM25 (keyword mode) or the fused
    /// score (hybrid), as in [`Index::query`].
    pub score: f32,
    /// The passage's page: its place's page number (module docs, *Places*: pages numbered from 1
    /// in the order the build first saw their URLs; 0 = no URL). Known before its chunk is added,
    /// so a front end can tell which hits share a page — and which it will show — before it
    /// fetches their text.
    pub page: u32,
    /// The passage's section title as shown: [`lightembed_title::section_title`] of `page_title`
    /// and `heading` (the title ingestion gave the passage). Empty until its chunk is added.
    pub title: String,
    /// The title of the passage's page (group results by page with it). Empty until its chunk
    /// is added.
    pub page_title: String,
    /// The passage's section heading (empty before the page's first heading, and until its
    /// chunk is added).
    pub heading: String,
    /// The passage's section URL. Empty until its chunk is added.
    pub url: String,
}

/// A posting as read: passage, tf, the passage's keyword length, its place.
#[derive(Debug, Clone, Copy)]
struct Posting {
    passage: u32,
    tf: u32,
    len: u32,
    place: FragPlace,
}

/// A vector partition as read: passages `start .. start + places.len()`.
#[derive(Debug, Clone)]
struct Partition {
    start: u32,
    places: Vec<FragPlace>,
    alphas: Vec<u8>,
    /// `passages.len() × ⌈dims/8⌉` sign bytes.
    signs: Vec<u8>,
}

/// The partition centroids of one coarse cell, as read: partitions `first ..
/// first + sizes.len()`.
#[derive(Debug, Clone)]
struct CellCentroids {
    first: u32,
    /// `k × dims`: each partition's centroid direction (unit, or 0 for a zero mean).
    centroids: Vec<f32>,
    /// `k × dims`: each partition's mean vector (as stored: the expected cosine of a member).
    means: Vec<f32>,
    /// Entries of each partition.
    sizes: Vec<u32>,
    /// First passage of each partition (passages are numbered partition by partition).
    starts: Vec<u32>,
}

/// Reads `count` centroids as [`write_centroid`] writes them (entries ≥ 1, a finite scale ≥ 0);
/// returns `(unit directions, mean vectors, entries)`. The caller checked the bytes can hold
/// them.
#[allow(clippy::type_complexity)]
fn read_centroids(
    r: &mut Reader<'_>,
    count: usize,
    dims: usize,
    what: &'static str,
) -> Result<(Vec<f32>, Vec<f32>, Vec<u32>), IndexError> {
    let mut centroids = Vec::with_capacity(count * dims);
    let mut means = Vec::with_capacity(count * dims);
    let mut sizes = Vec::with_capacity(count);
    for _ in 0..count {
        let m = r.varint(what)?;
        if m == 0 {
            return Err(malformed(what, "no entries".into()));
        }
        sizes.push(m);
        let scale = r.f32("centroid scale")?;
        if !(scale.is_finite() && scale >= 0.0) {
            return Err(malformed(
                "centroid scale",
                format!("{scale} is not finite ≥ 0"),
            ));
        }
        let raw = r.take(dims as u64, "centroid")?;
        let c: Vec<f32> = raw.iter().map(|&b| b as i8 as f32 * scale).collect();
        let norm = dot(&c, &c).sqrt();
        centroids.extend(c.iter().map(|&x| if norm > 0.0 { x / norm } else { 0.0 }));
        means.extend(c);
    }
    Ok((centroids, means, sizes))
}

/// A text chunk as read.
#[derive(Debug, Clone)]
struct Chunk {
    /// `(url, page title, heading)`.
    sections: Vec<(String, String, String)>,
    section_of: Vec<u32>,
    texts: Vec<String>,
}

/// A fragmented index being read: the core, plus whatever term shards, vector partitions and
/// text chunks have been added. Queries need the shards of their terms
/// ([`FragmentedIndex::missing_shards`]) and the partitions nearest their vector
/// ([`FragmentedIndex::partitions_for`]); titles and excerpts need the chunks of their passages.
/// Nothing is allocated by the passage count: only by the bytes of what is added.
#[derive(Debug, Clone)]
pub struct FragmentedIndex {
    manifest: Manifest,
    stem: bool,
    build_id: [u8; 16],
    n: u32,
    total_len: u64,
    mean: Vec<f32>,
    sigma: Vec<f32>,
    alpha_max: f32,
    /// Partitions in all.
    n_parts: u32,
    /// Whether the partition centroids live in centroid cell files (two levels) or in the core
    /// (one level: then cell 0, loaded from the core, holds every partition).
    two_level: bool,
    /// `C × dims`: each coarse cell's centroid direction (two levels; empty otherwise).
    cell_centroids: Vec<f32>,
    /// `C × dims`: each coarse cell's mean vector (two levels; empty otherwise).
    cell_means: Vec<f32>,
    /// `C + 1` (one level: 2): the first partition of each cell, then `K`.
    cell_first_part: Vec<u32>,
    /// `C + 1` (one level: 2): the first passage of each cell, then `n`.
    cell_first_passage: Vec<u32>,
    /// Cells a query fetches the partition centroids of, at least (0 in one level).
    cell_probes: u32,
    /// The partition centroids of the cells added (one level: cell 0, from the core).
    cells: HashMap<u32, CellCentroids>,
    probes: u32,
    n_shards: u32,
    shard_loaded: Vec<bool>,
    /// Term → (df, its first tier of postings, in passage order).
    postings: HashMap<String, (u32, Vec<Posting>)>,
    n_tails: u32,
    tail_loaded: Vec<bool>,
    /// Term → the postings past its first tier, in passage order.
    tails: HashMap<String, Vec<Posting>>,
    /// Rankings read every tier ([`FragmentedIndex::set_all_tiers`]).
    all_tiers: bool,
    n_typos: u32,
    typo_loaded: Vec<bool>,
    /// Typo key → the listed terms under it, with their df.
    typo_lists: HashMap<String, Vec<(String, u32)>>,
    parts: HashMap<u32, Partition>,
    chunk_passages: u32,
    chunks: HashMap<u32, Chunk>,
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
    /// field (lengths against the bytes left before anything is allocated, finite floats,
    /// partition counts summing to the passages); never panics.
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
        if manifest.count >= u32::MAX as u64 {
            return Err(malformed(
                "passages",
                format!("{} is not below 2³² − 1", manifest.count),
            ));
        }
        let n = manifest.count as u32;
        let n_shards = r.varint("term shards")?;
        if n_shards == 0 || n_shards > 1 << 16 {
            return Err(malformed(
                "term shards",
                format!("{n_shards} is not in 1..=65536"),
            ));
        }
        let total_len = r.u64("total length")?;
        let n_typos = r.varint("typo shards")?;
        if n_typos == 0 || n_typos > 1 << 16 {
            return Err(malformed(
                "typo shards",
                format!("{n_typos} is not in 1..=65536"),
            ));
        }
        let n_tails = r.varint("tail shards")?;
        if n_tails > 1 << 16 {
            return Err(malformed(
                "tail shards",
                format!("{n_tails} is not in 0..=65536"),
            ));
        }
        let chunk_passages = r.varint("chunk passages")?;
        if chunk_passages == 0 {
            return Err(malformed("chunk passages", "0".into()));
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
        let k = r.varint("partitions")? as usize;
        if k > MAX_PARTITIONS || (k == 0) != (n == 0) {
            return Err(malformed(
                "partitions",
                format!("{k} for {n} passages (at most 65536; none only without passages)"),
            ));
        }
        let probes = r.varint("probes")?;
        if probes as usize > k || (probes == 0 && k > 0) {
            return Err(malformed("probes", format!("{probes} of {k} partitions")));
        }
        let n_cells = r.varint("cells")? as usize;
        if n_cells > k {
            return Err(malformed("cells", format!("{n_cells} for {k} partitions")));
        }
        let cell_probes = r.varint("cell probes")?;
        if cell_probes as usize > n_cells || (cell_probes == 0) != (n_cells == 0) {
            return Err(malformed(
                "cell probes",
                format!("{cell_probes} of {n_cells} cells"),
            ));
        }
        let two_level = n_cells > 0;
        let listed = if two_level { n_cells } else { k };
        r.need(listed as u64 * (5 + dims as u64), "centroids")?;
        let mut cell_parts = Vec::new();
        let (centroids, means, sizes) = if two_level {
            let mut c = Vec::with_capacity(n_cells * dims);
            let mut m = Vec::with_capacity(n_cells * dims);
            let mut s = Vec::with_capacity(n_cells);
            for _ in 0..n_cells {
                let parts = r.varint("cell partitions")?;
                if parts == 0 {
                    return Err(malformed("cell partitions", "a cell of none".into()));
                }
                cell_parts.push(parts);
                let (c1, m1, s1) = read_centroids(&mut r, 1, dims, "cell entries")?;
                if s1[0] < parts {
                    return Err(malformed(
                        "cell entries",
                        format!("{} passages in {parts} partitions", s1[0]),
                    ));
                }
                c.extend(c1);
                m.extend(m1);
                s.extend(s1);
            }
            (c, m, s)
        } else {
            read_centroids(&mut r, k, dims, "partition entries")?
        };
        if cell_parts.iter().map(|&p| p as u64).sum::<u64>() != k as u64 && two_level {
            return Err(malformed(
                "cell partitions",
                format!("the cells hold other than the {k} partitions"),
            ));
        }
        let total: u64 = sizes.iter().map(|&m| m as u64).sum();
        if total != n as u64 {
            return Err(malformed(
                "partition entries",
                format!("{total} entries for {n} passages"),
            ));
        }
        let starts = |sizes: &[u32]| -> Vec<u32> {
            let mut at = 0u32;
            let mut out: Vec<u32> = sizes
                .iter()
                .map(|&m| {
                    let s = at;
                    at += m;
                    s
                })
                .collect();
            out.push(at);
            out
        };
        let mut cells = HashMap::new();
        let (cell_centroids, cell_means, cell_first_part, cell_first_passage) = if two_level {
            (centroids, means, starts(&cell_parts), starts(&sizes))
        } else {
            if k > 0 {
                let mut part_starts = starts(&sizes);
                part_starts.pop();
                cells.insert(
                    0,
                    CellCentroids {
                        first: 0,
                        centroids,
                        means,
                        sizes,
                        starts: part_starts,
                    },
                );
            }
            (Vec::new(), Vec::new(), vec![0, k as u32], vec![0, n])
        };
        r.take(32, "content digest")?;
        done(&r)?;
        let mut build_id = [0u8; 16];
        build_id.copy_from_slice(&bytes[bytes.len() - TRAILER..bytes.len() - TRAILER + 16]);
        Ok(FragmentedIndex {
            manifest,
            stem: flags & 1 != 0,
            build_id,
            n,
            total_len,
            mean,
            sigma,
            alpha_max,
            n_parts: k as u32,
            two_level,
            cell_centroids,
            cell_means,
            cell_first_part,
            cell_first_passage,
            cell_probes,
            cells,
            probes,
            n_shards,
            shard_loaded: vec![false; n_shards as usize],
            postings: HashMap::new(),
            n_tails,
            tail_loaded: vec![false; n_tails as usize],
            tails: HashMap::new(),
            all_tiers: false,
            n_typos,
            typo_loaded: vec![false; n_typos as usize],
            typo_lists: HashMap::new(),
            parts: HashMap::new(),
            chunk_passages,
            chunks: HashMap::new(),
        })
    }

    /// The manifest (spec §8): check it against the model with [`Manifest::check_compatible`].
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The first 16 bytes of the core's SHA-256, as 32 hex digits: names this build's
    /// fragments (every shard, partition and chunk carries it; any change of the index changes
    /// it).
    pub fn build_id(&self) -> String {
        hex(&self.build_id)
    }

    /// Number of passages.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// `true` without passages.
    pub fn is_empty(&self) -> bool {
        self.n == 0
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
        self.n.div_ceil(self.chunk_passages)
    }

    /// Passages per text chunk (the last may hold fewer).
    pub fn chunk_passages(&self) -> u32 {
        self.chunk_passages
    }

    /// Number of vector partitions.
    pub fn partition_count(&self) -> u32 {
        self.n_parts
    }

    /// Partitions a query probes unless [`SearchOptions::ef_search`] says otherwise.
    pub fn probes(&self) -> u32 {
        self.probes
    }

    /// Number of centroid cells (files `g<c>.bin` of a bundle): 0 for a one-level bundle, whose
    /// core holds every partition's centroid.
    pub fn cell_count(&self) -> u32 {
        if self.two_level {
            self.cell_first_part.len() as u32 - 1
        } else {
            0
        }
    }

    /// Cells a query fetches the partition centroids of, at least (0 for a one-level bundle).
    pub fn cell_probes(&self) -> u32 {
        self.cell_probes
    }

    /// The cell (its index in the core; 0 for a one-level bundle) of partition `v`.
    fn cell_of_partition(&self, v: u32) -> u32 {
        self.cell_first_part.partition_point(|&s| s <= v) as u32 - 1
    }

    /// The cell (its index in the core; 0 for a one-level bundle) of `passage` (< n).
    fn cell_of_passage(&self, passage: u32) -> u32 {
        self.cell_first_passage.partition_point(|&s| s <= passage) as u32 - 1
    }

    /// Entries of partition `v` (`None` out of range, or while its centroid cell is not added:
    /// [`FragmentedIndex::add_cell`]).
    pub fn partition_len(&self, v: u32) -> Option<u32> {
        if v >= self.n_parts {
            return None;
        }
        let cell = self.cells.get(&self.cell_of_partition(v))?;
        cell.sizes.get((v - cell.first) as usize).copied()
    }

    /// The vector partition holding `passage`'s code (`None` out of range, or while its
    /// centroid cell is not added): passages are numbered partition by partition.
    pub fn partition_of(&self, passage: u32) -> Option<u32> {
        if passage >= self.n {
            return None;
        }
        let cell = self.cells.get(&self.cell_of_passage(passage))?;
        Some(cell.first + cell.starts.partition_point(|&s| s <= passage) as u32 - 1)
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
        let (mut r, y) = self.open_numbered(
            bytes,
            TYPO_MAGIC,
            "typo shard",
            "typo shard number",
            self.n_typos,
            "",
        )?;
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

    /// The cells a search for the normalised query `q` with `probes` probes reads the partition
    /// centroids of, best first: the nearest cells by their centroids (ties: the lower number),
    /// at least the core's cell probes and as many more as it takes to hold `probes`
    /// partitions. `[0]` for a one-level bundle (the core's centroids).
    fn probe_cells(&self, q: &[f32], probes: usize) -> Vec<u32> {
        if !self.two_level {
            return if self.n_parts > 0 {
                vec![0]
            } else {
                Vec::new()
            };
        }
        let dims = self.dims().max(1);
        let mut scored: Vec<Scored> = self
            .cell_centroids
            .chunks_exact(dims)
            .enumerate()
            .map(|(c, x)| Scored {
                score: dot(q, x),
                id: c as u32,
            })
            .collect();
        sort_best_first(&mut scored);
        let mut out = Vec::new();
        let mut held = 0usize;
        for s in scored {
            if out.len() >= self.cell_probes as usize && held >= probes {
                break;
            }
            let c = s.id as usize;
            held += (self.cell_first_part[c + 1] - self.cell_first_part[c]) as usize;
            out.push(s.id);
        }
        out
    }

    /// The partitions probed for the normalised query `q`: the `probes` whose centroid
    /// directions are nearest among those of the probed cells, best first (ties: the lower
    /// number), and those cells. Errors when a probed cell is not added.
    fn probe_set(&self, q: &[f32], probes: usize) -> Result<(Vec<u32>, Vec<u32>), IndexError> {
        let dims = self.dims().max(1);
        let cells = self.probe_cells(q, probes);
        let mut scored: Vec<Scored> = Vec::new();
        for c in &cells {
            let Some(cell) = self.cells.get(c) else {
                return Err(IndexError::InvalidArgument {
                    what: "query",
                    detail: format!(
                        "centroid cell {c} is not loaded (add it with add_cell: cells_for says \
                         which a query needs)"
                    ),
                });
            };
            scored.extend(
                cell.centroids
                    .chunks_exact(dims)
                    .enumerate()
                    .map(|(v, x)| Scored {
                        score: dot(q, x),
                        id: cell.first + v as u32,
                    }),
            );
        }
        top_n(&mut scored, probes.max(1));
        Ok((scored.into_iter().map(|s| s.id).collect(), cells))
    }

    /// The probes of a search: `ef_search` when given (at least 1), else the core's.
    fn probes_of(&self, ef_search: Option<usize>) -> usize {
        ef_search.map_or(self.probes as usize, |p| p.max(1))
    }

    /// The centroid cells a search for `vector` (the query's embedding at
    /// [`FragmentedIndex::dims`]) reads that are not added yet, ascending: fetch and add them
    /// ([`FragmentedIndex::add_cell`]), then ask [`FragmentedIndex::partitions_for`]. Always
    /// empty for a one-level bundle. `probes`: as [`SearchOptions::ef_search`] (`None`: the
    /// core's default).
    ///
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`].
    pub fn cells_for(&self, vector: &[f32], probes: Option<usize>) -> Result<Vec<u32>, IndexError> {
        let q = crate::util::checked_query(vector, self.dims())?;
        let mut out: Vec<u32> = self
            .probe_cells(&q, self.probes_of(probes))
            .into_iter()
            .filter(|c| !self.cells.contains_key(c))
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The vector partitions a search for `vector` (the query's embedding at
    /// [`FragmentedIndex::dims`]) probes that are not added yet, ascending: fetch and add them
    /// ([`FragmentedIndex::add_partition`]) before searching in hybrid or vector mode. `probes`:
    /// as [`SearchOptions::ef_search`] (`None`: the core's default). In a two-level bundle the
    /// query's centroid cells must be added first ([`FragmentedIndex::cells_for`]).
    ///
    /// Errors: [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`];
    /// [`IndexError::InvalidArgument`] when a centroid cell it needs is not added.
    pub fn partitions_for(
        &self,
        vector: &[f32],
        probes: Option<usize>,
    ) -> Result<Vec<u32>, IndexError> {
        let q = crate::util::checked_query(vector, self.dims())?;
        let mut out: Vec<u32> = self
            .probe_set(&q, self.probes_of(probes))?
            .0
            .into_iter()
            .filter(|v| !self.parts.contains_key(v))
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// Adds a centroid cell written by [`split`] for this core (a two-level bundle's `g<c>.bin`);
    /// returns its number. Adding one again is a no-op.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`] (another build's cell, a cell number out of
    /// range), plus a partition count or entry counts that are not the core's, a scale that is
    /// not finite ≥ 0.
    pub fn add_cell(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let (mut r, c) = self.open_numbered(
            bytes,
            CELL_MAGIC,
            "centroid cell",
            "cell number",
            self.cell_count(),
            " cells",
        )?;
        if self.cells.contains_key(&c) {
            return Ok(c);
        }
        let first = self.cell_first_part[c as usize];
        let want = self.cell_first_part[c as usize + 1] - first;
        let k = r.varint("cell partitions")?;
        if k != want {
            return Err(malformed(
                "cell partitions",
                format!("{k}, the core says {want}"),
            ));
        }
        let dims = self.dims();
        r.need(k as u64 * (5 + dims as u64), "centroids")?;
        let (centroids, means, sizes) =
            read_centroids(&mut r, k as usize, dims, "partition entries")?;
        let from = self.cell_first_passage[c as usize];
        let held = self.cell_first_passage[c as usize + 1] - from;
        if sizes.iter().map(|&m| m as u64).sum::<u64>() != held as u64 {
            return Err(malformed(
                "partition entries",
                format!("the cell's partitions hold other than its {held} passages"),
            ));
        }
        done(&r)?;
        let mut at = from;
        let starts = sizes
            .iter()
            .map(|&m| {
                let s = at;
                at += m;
                s
            })
            .collect();
        self.cells.insert(
            c,
            CellCentroids {
                first,
                centroids,
                means,
                sizes,
                starts,
            },
        );
        Ok(c)
    }

    /// Adds a term shard written by [`split`] for this core; returns its number. Adding a shard
    /// again is a no-op.
    ///
    /// Errors: [`IndexError::Truncated`], [`IndexError::ChecksumMismatch`],
    /// [`IndexError::TrailingBytes`], [`IndexError::Malformed`] (another build's shard, a term
    /// in the wrong shard or listed twice, a passage out of range or out of order, tf 0, a
    /// length below tf, a bad place).
    pub fn add_shard(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let (mut r, s) = self.open_numbered(
            bytes,
            SHARD_MAGIC,
            "term shard",
            "shard number",
            self.n_shards,
            "",
        )?;
        if self.shard_loaded[s as usize] {
            return Ok(s);
        }
        let n = self.n as u64;
        let n_terms = r.varint("shard terms")?;
        r.need(3 * n_terms as u64, "shard terms")?;
        let mut terms: Vec<(String, (u32, Vec<Posting>))> = Vec::with_capacity(n_terms as usize);
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
            let df = r.varint("document frequency")?;
            if df == 0 || df as u64 > n {
                return Err(malformed(
                    "document frequency",
                    format!("{df} for {n} passages"),
                ));
            }
            let list = read_postings(&mut r, n)?;
            if list.is_empty() || list.len() as u64 > df as u64 {
                return Err(malformed(
                    "first tier",
                    format!("{} postings for a df of {df}", list.len()),
                ));
            }
            let list = (df, list);
            terms.push((term, list));
        }
        done(&r)?;
        self.postings.extend(terms);
        self.shard_loaded[s as usize] = true;
        Ok(s)
    }

    /// Number of tail shards (files `u<s>.bin` of a bundle): the postings past each common
    /// term's first tier. 0 when every term's postings fit its first tier.
    pub fn tail_shard_count(&self) -> u32 {
        self.n_tails
    }

    /// Whether rankings read every tier of a term's postings (`true`: exactly
    /// [`Index::query`]'s BM25, the tail shards of the query's common terms needed,
    /// [`FragmentedIndex::missing_tail_shards`]) or only the first tier, the default: a passage
    /// past a term's first tier then scores 0 for that term, where its true BM25 term score is at
    /// most the lowest score of the term's first tier (the first tier holds the term's highest
    /// impacts). Every front end reads the first tier by default, so they rank alike whatever
    /// tail shards happen to be added.
    pub fn set_all_tiers(&mut self, all: bool) {
        self.all_tiers = all;
    }

    /// The tail shards `query`'s terms (and their typo corrections) need that are not added yet,
    /// ascending: empty unless [`FragmentedIndex::set_all_tiers`] is on. Known once the terms'
    /// own shards are in ([`FragmentedIndex::missing_shards`] empty): a term's first tier says
    /// whether it has a tail.
    pub fn missing_tail_shards(&self, query: &str) -> Vec<u32> {
        if !self.all_tiers || self.n_tails == 0 {
            return Vec::new();
        }
        let mut terms = self.query_terms(query);
        let fixes: Vec<String> = self
            .corrections_of(&terms, query)
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        terms.extend(fixes);
        self.missing_tails_for(&terms)
    }

    fn missing_tails_for(&self, terms: &[String]) -> Vec<u32> {
        if !self.all_tiers || self.n_tails == 0 {
            return Vec::new();
        }
        let mut out: Vec<u32> = terms
            .iter()
            .filter(|t| {
                self.postings
                    .get(t.as_str())
                    .is_some_and(|(df, l)| l.len() < *df as usize)
            })
            .map(|t| term_hash(t) % self.n_tails)
            .filter(|&s| !self.tail_loaded[s as usize])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Adds a tail shard written by [`split`] for this core; returns its number. Adding one again
    /// is a no-op. Rankings read it only with [`FragmentedIndex::set_all_tiers`] on.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`].
    pub fn add_tail_shard(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let (mut r, s) = self.open_numbered(
            bytes,
            TAIL_MAGIC,
            "tail shard",
            "tail shard number",
            self.n_tails,
            "",
        )?;
        if self.tail_loaded[s as usize] {
            return Ok(s);
        }
        let n = self.n as u64;
        let n_terms = r.varint("tail shard terms")?;
        r.need(3 * n_terms as u64, "tail shard terms")?;
        let mut terms: Vec<(String, Vec<Posting>)> = Vec::with_capacity(n_terms as usize);
        let mut seen = HashSet::new();
        for _ in 0..n_terms {
            let term = read_varstr(&mut r, "tail shard term")?;
            if term.is_empty() || term_hash(&term) % self.n_tails != s || !seen.insert(term.clone())
            {
                return Err(malformed(
                    "tail shard term",
                    format!("{term:?} is empty, listed twice or not in tail shard {s}"),
                ));
            }
            let list = read_postings(&mut r, n)?;
            if list.is_empty() {
                return Err(malformed(
                    "tail shard term",
                    format!("{term:?}: no postings"),
                ));
            }
            terms.push((term, list));
        }
        done(&r)?;
        self.tails.extend(terms);
        self.tail_loaded[s as usize] = true;
        Ok(s)
    }

    /// Adds a vector partition written by [`split`] for this core; returns its number. Adding
    /// one again is a no-op.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`], plus an entry count that is not the core's,
    /// passages out of order or range, sign bits set past dims.
    pub fn add_partition(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let (mut r, v) = self.open_numbered(
            bytes,
            PART_MAGIC,
            "vector partition",
            "partition number",
            self.n_parts,
            "",
        )?;
        let Some(cell) = self.cells.get(&self.cell_of_partition(v)) else {
            return Err(IndexError::InvalidArgument {
                what: "vector partition",
                detail: format!(
                    "partition {v} is in centroid cell {}, not loaded yet (add it with add_cell \
                     first)",
                    self.cell_of_partition(v)
                ),
            });
        };
        let i = (v - cell.first) as usize;
        let (size, start) = (cell.sizes[i], cell.starts[i]);
        if self.parts.contains_key(&v) {
            return Ok(v);
        }
        let m = r.varint("partition entries")?;
        if m != size {
            return Err(malformed(
                "partition entries",
                format!("{m}, the core says {size}"),
            ));
        }
        let nbytes = self.dims().div_ceil(8);
        let m = m as usize;
        r.need(m as u64 * (3 + nbytes as u64), "partition entries")?;
        let places = read_places(&mut r, m)?;
        let alphas = r.take(m as u64, "alpha codes")?.to_vec();
        let signs = r.take((m * nbytes) as u64, "sign codes")?.to_vec();
        let dims = self.dims();
        if dims % 8 != 0 {
            let pad = !((1u8 << (dims % 8)) - 1);
            if signs.chunks(nbytes).any(|c| c[nbytes - 1] & pad != 0) {
                return Err(malformed("sign codes", "bits set past dims".into()));
            }
        }
        done(&r)?;
        self.parts.insert(
            v,
            Partition {
                start,
                places,
                alphas,
                signs,
            },
        );
        Ok(v)
    }

    /// The text chunk that holds `passage`'s text, URL and titles (`None` for a passage out of
    /// range).
    pub fn chunk_of(&self, passage: u32) -> Option<u32> {
        (passage < self.n).then(|| passage / self.chunk_passages)
    }

    /// Adds a text chunk written by [`split`] for this core; returns its number. Adding one
    /// again is a no-op.
    ///
    /// Errors: as [`FragmentedIndex::add_shard`], plus a passage count that is not the core's,
    /// a section number out of range.
    pub fn add_chunk(&mut self, bytes: &[u8]) -> Result<u32, IndexError> {
        let (mut r, c) = self.open_numbered(
            bytes,
            CHUNK_MAGIC,
            "text chunk",
            "chunk number",
            self.chunk_count(),
            "",
        )?;
        if self.chunks.contains_key(&c) {
            return Ok(c);
        }
        let from = c as u64 * self.chunk_passages as u64;
        let expect = (self.n as u64 - from).min(self.chunk_passages as u64);
        let count = r.varint("chunk passages")? as u64;
        if count != expect {
            return Err(malformed(
                "chunk passages",
                format!("{count}, the core says {expect}"),
            ));
        }
        let n_sections = r.varint("chunk sections")? as u64;
        if n_sections > count || (n_sections == 0 && count > 0) {
            return Err(malformed(
                "chunk sections",
                format!("{n_sections} for {count} passages"),
            ));
        }
        r.need(3 * n_sections + 2 * count, "chunk sections")?;
        let mut sections = Vec::with_capacity(n_sections as usize);
        for _ in 0..n_sections {
            let url = read_varstr(&mut r, "section url")?;
            let page_title = read_varstr(&mut r, "section page title")?;
            let heading = read_varstr(&mut r, "section heading")?;
            sections.push((url, page_title, heading));
        }
        let mut section_of = Vec::with_capacity(count as usize);
        let mut texts = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let s = r.varint("passage section")?;
            if s as u64 >= n_sections {
                return Err(malformed(
                    "passage section",
                    format!("section {s} of {n_sections}"),
                ));
            }
            section_of.push(s);
            texts.push(read_varstr(&mut r, "passage text")?);
        }
        done(&r)?;
        self.chunks.insert(
            c,
            Chunk {
                sections,
                section_of,
                texts,
            },
        );
        Ok(c)
    }

    /// The loaded chunk of `passage` and its index in it.
    fn in_chunk(&self, passage: u32) -> Option<(&Chunk, usize)> {
        let c = self.chunk_of(passage)?;
        let chunk = self.chunks.get(&c)?;
        Some((chunk, (passage % self.chunk_passages) as usize))
    }

    /// The section `(url, page title, heading)` of `passage` once its chunk is added (`None`
    /// before, or out of range; the heading is empty for a passage before the page's first
    /// heading).
    pub fn section(&self, passage: u32) -> Option<(&str, &str, &str)> {
        let (chunk, i) = self.in_chunk(passage)?;
        let (url, page_title, heading) = &chunk.sections[chunk.section_of[i] as usize];
        Some((url, page_title, heading))
    }

    /// The text of `passage` once its chunk is added.
    pub fn text(&self, passage: u32) -> Option<&str> {
        let (chunk, i) = self.in_chunk(passage)?;
        Some(&chunk.texts[i])
    }

    /// A fragment of kind `what` opened ([`open`]: magic, version, trailer), checked to be of
    /// this build ([`FragmentedIndex::check_build`]), and its number (the varint `number`) read
    /// and checked to be below `count` (the error says "N of COUNT" and `unit`).
    fn open_numbered<'a>(
        &self,
        bytes: &'a [u8],
        magic: [u8; 4],
        what: &'static str,
        number: &'static str,
        count: u32,
        unit: &str,
    ) -> Result<(Reader<'a>, u32), IndexError> {
        let mut r = open(bytes, magic, what)?;
        self.check_build(&mut r, what)?;
        let n = r.varint(number)?;
        if n >= count {
            return Err(malformed(number, format!("{n} of {count}{unit}")));
        }
        Ok((r, n))
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

    /// The estimated cosine (see the module docs) of every passage of the `probe` partitions to
    /// the normalised query `q`, with its place: `(passage, score, place)`, in probe order.
    fn vector_scores(&self, q: &[f32], probe: &[u32]) -> Vec<(u32, f32, FragPlace)> {
        let dims = self.dims();
        let nbytes = dims.div_ceil(8);
        // table[p][byte] = Σ_k q[8p+k] σ[8p+k] · (±1 by bit k)
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
        let mut out = Vec::new();
        for v in probe {
            let Some(part) = self.parts.get(v) else {
                continue;
            };
            for i in 0..part.places.len() {
                let p = part.start + i as u32;
                let s: f32 = part.signs[i * nbytes..(i + 1) * nbytes]
                    .iter()
                    .enumerate()
                    .map(|(b, &x)| table[b * 256 + x as usize])
                    .sum();
                let a = part.alphas[i] as f32 / 255.0 * self.alpha_max;
                out.push((p, base + a * s, part.places[i]));
            }
        }
        out
    }

    /// The `k` best passages for a query, as [`Index::query`] ranks them: `vector` is the
    /// query's embedding at [`FragmentedIndex::dims`] (required unless `opts.mode` is
    /// [`Mode::Keyword`]), `text` the query text for BM25. `opts.ef_search`, if given, is the
    /// number of vector partitions probed (default: the core's; all of them: an exact scan of
    /// the codes). Keyword scores equal [`Index::query`]'s on the index this was split from when
    /// every tier is read ([`FragmentedIndex::set_all_tiers`]); from the first tiers alone, never
    /// above them (module docs, *impact tiers*). A
    /// hit's URL and titles are filled in when its chunk is added, empty otherwise.
    ///
    /// Errors: [`IndexError::InvalidArgument`] when the vector is missing, a fusion parameter is
    /// out of range, or a term shard or vector partition the query needs is not added yet
    /// ([`FragmentedIndex::missing_shards`], [`FragmentedIndex::partitions_for`]);
    /// [`IndexError::VectorDims`], [`IndexError::NonFiniteVector`].
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
            if let Some(s) = self.missing_tails_for(&all).first() {
                return Err(IndexError::InvalidArgument {
                    what: "query",
                    detail: format!(
                        "tail shard {s} is not loaded (add it with add_tail_shard, or rank \
                         the first tiers alone: set_all_tiers(false))"
                    ),
                });
            }
            terms
        };
        let probe = match (&q, opts.mode) {
            (Some(q), Mode::Hybrid | Mode::Vector) if !self.is_empty() => {
                let (probe, cells) = self.probe_set(q, self.probes_of(opts.ef_search))?;
                if let Some(v) = probe.iter().find(|v| !self.parts.contains_key(v)) {
                    return Err(IndexError::InvalidArgument {
                        what: "query",
                        detail: format!(
                            "vector partition {v} is not loaded (add it with add_partition)"
                        ),
                    });
                }
                (probe, cells)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let (probe, probed_cells) = probe;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let c = opts.candidates.max(k).max(1);
        let n = self.len();
        // Each term's postings: its first tier, or (all tiers) both tiers merged in passage order.
        let (lists, weights): (Vec<std::borrow::Cow<'_, [Posting]>>, Vec<f32>) = terms
            .iter()
            .filter_map(|(t, w)| {
                let (df, first) = self.postings.get(t)?;
                let list = match self.tails.get(t) {
                    Some(tail) if self.all_tiers => {
                        let mut all = first.clone();
                        all.extend_from_slice(tail);
                        all.sort_unstable_by_key(|x| x.passage);
                        std::borrow::Cow::Owned(all)
                    }
                    _ => std::borrow::Cow::Borrowed(first.as_slice()),
                };
                Some((list, idf(n, *df) * w))
            })
            .unzip();
        let avg = avgdl(self.total_len, n);
        let find = |list: &[Posting], p: u32| {
            list.binary_search_by_key(&p, |x| x.passage)
                .ok()
                .map(|i| list[i])
        };
        let bm25_of = |p: u32| -> f32 {
            let mut score = 0.0f32;
            for (list, &w) in lists.iter().zip(&weights) {
                if let Some(x) = find(list, p) {
                    let s = term_score(w, x.tf, x.len, avg);
                    if s > 0.0 {
                        score += s;
                    }
                }
            }
            score
        };
        let bm25_top = || -> Vec<Scored> {
            let mut acc: HashMap<u32, f32> = HashMap::new();
            let mut order: Vec<u32> = Vec::new();
            for (list, &w) in lists.iter().zip(&weights) {
                for x in list.iter() {
                    let s = term_score(w, x.tf, x.len, avg);
                    if s <= 0.0 {
                        continue;
                    }
                    let e = acc.entry(x.passage).or_insert_with(|| {
                        order.push(x.passage);
                        0.0
                    });
                    *e += s;
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
        // The probed codes' scores and places, by passage.
        let scored: HashMap<u32, (f32, FragPlace)> = match &q {
            Some(q) if !probe.is_empty() => self
                .vector_scores(q, &probe)
                .into_iter()
                .map(|(p, s, place)| (p, (s, place)))
                .collect(),
            _ => HashMap::new(),
        };
        let place_of = |p: u32| -> Place<u64> {
            if let Some(&(_, place)) = scored.get(&p) {
                return place_key(place);
            }
            lists
                .iter()
                .find_map(|l| find(l, p))
                .and_then(|x| place_key(x.place))
        };
        let vector_top = || -> Vec<Scored> {
            let mut found: Vec<Scored> = scored
                .iter()
                .map(|(&p, &(score, _))| Scored { score, id: p })
                .collect();
            top_n(&mut found, c);
            found
        };
        let ranked: Vec<Scored> = match opts.mode {
            Mode::Keyword => bm25_top(),
            Mode::Vector => vector_top(),
            Mode::Hybrid => {
                // A keyword candidate outside the probed partitions: the query's inner product
                // with its partition's mean vector, the expected cosine of a member, when its
                // cell is probed; with its cell's mean otherwise (module docs). Which one is
                // decided by the query alone, not by the cells that happen to be added.
                let q = q.as_deref().expect("checked above");
                let dims = self.dims();
                let estimate = |p: u32| {
                    let c = self.cell_of_passage(p);
                    match self.cells.get(&c) {
                        Some(cell) if probed_cells.contains(&c) => {
                            let i = cell.starts.partition_point(|&s| s <= p) - 1;
                            dot(q, &cell.means[i * dims..(i + 1) * dims])
                        }
                        _ if self.two_level => {
                            let c = c as usize;
                            dot(q, &self.cell_means[c * dims..(c + 1) * dims])
                        }
                        _ => 0.0,
                    }
                };
                fuse_candidates(
                    vector_top().iter().map(|s| s.id),
                    bm25_top().into_iter().map(|s| s.id),
                    |p| scored.get(&p).map_or_else(|| estimate(p), |&(s, _)| s),
                    bm25_of,
                    place_of,
                    opts,
                )
            }
        };
        let out = collapse_sections(ranked, k, opts.collapse_sections, place_of)
            .into_iter()
            .map(|s| {
                let section = self.section(s.id);
                let (url, page_title, heading) = section.unwrap_or(("", "", ""));
                FragmentHit {
                    passage: s.id,
                    score: s.score,
                    page: place_of(s.id).map_or(0, |(page, _)| page as u32),
                    title: section.map_or(String::new(), |_| {
                        lightembed_title::section_title(page_title, heading)
                    }),
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
