//! Hybrid ranking: BM25 keyword scores and vector similarity fused into one result list, with
//! one result per section.
//!
//! [`Index::query`] gathers candidates from both sides — the `candidates` best by cosine
//! (HNSW, beam `max(ef_search, candidates)`) and the `candidates` best by BM25 — then scores
//! *every* candidate on *both* sides exactly (its stored vector, its stored term list), so a
//! passage found by only one side is not penalised for being missed by the other. The fused
//! score is chosen by [`Fusion`]; the default ([`Fusion::DEFAULT`]) was chosen on a dev set of
//! our own (`bench/search/`, figures and the command in `bench/RESULTS.md`).

use std::collections::HashSet;

use crate::error::IndexError;
use crate::index::{Hit, Index};
use crate::util::{sort_best_first, Scored};

/// Which side(s) of the index rank the results. With the `serde` feature it (de)serialises as
/// `"hybrid"`, `"vector"`, `"keyword"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Mode {
    /// BM25 and vector scores fused ([`Fusion`]). The default.
    #[default]
    Hybrid,
    /// Cosine similarity of the embeddings only.
    Vector,
    /// BM25 over the indexed text only (no embedding needed).
    Keyword,
}

impl Mode {
    /// `"hybrid"`, `"vector"` or `"keyword"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Vector => "vector",
            Mode::Keyword => "keyword",
        }
    }
}

impl core::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "vector" => Ok(Mode::Vector),
            "keyword" => Ok(Mode::Keyword),
            other => Err(format!(
                "unknown search mode {other:?}; expected hybrid, vector or keyword"
            )),
        }
    }
}

/// How [`Mode::Hybrid`] combines the two scores of a candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Convex combination of min–max normalised scores over the candidate set:
    /// `w · cos′ + (1 − w) · bm25′`, where `x′ = (x − min) / (max − min)` (0 when all equal).
    /// `vector_weight` `w` in `[0, 1]`.
    Convex {
        /// Weight of the vector side, `[0, 1]`.
        vector_weight: f32,
    },
    /// Reciprocal rank fusion: `1/(k + rank_vector) + 1/(k + rank_bm25)`, ranks from 1 over the
    /// candidate set (a candidate with BM25 0 gets no keyword term).
    Rrf {
        /// The rank constant `k` (60 in the RRF paper).
        k: f32,
    },
}

impl Fusion {
    /// The fusion [`SearchOptions::default`] uses, chosen on the dev set.
    pub const DEFAULT: Fusion = Fusion::Convex { vector_weight: 0.4 };
}

/// Options of [`Index::query`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Which side(s) rank. Default [`Mode::Hybrid`].
    pub mode: Mode,
    /// How hybrid scores are fused. Default [`Fusion::DEFAULT`].
    pub fusion: Fusion,
    /// Candidates taken from each side before fusing: `max(candidates, k)`. Default 50. The pool
    /// does not grow with `k` below `candidates`, so a result's rank does not depend on how many
    /// results are asked for (the CLI's `-k 10` and the widget's 20 rank alike).
    pub candidates: usize,
    /// HNSW beam for the vector side (`None`: the index's `ef_search`; the effective beam is
    /// at least the number of candidates). For a [`crate::fragments::FragmentedIndex`]: the
    /// number of vector partitions probed (`None`: the bundle's default; the partition count or
    /// more: every code scored).
    pub ef_search: Option<usize>,
    /// Keep only the best hit per URL (a section cut into several passages shares its URL and
    /// anchor). Hits with an empty URL are never collapsed. Default `true`.
    pub collapse_sections: bool,
    /// Page evidence in [`Mode::Hybrid`]: each candidate's fused score gains `page_weight ×` the
    /// best fused score of a candidate from *another section of the same page* (URL before `#`;
    /// candidates without a URL gain nothing), so a page that answers in several sections ranks
    /// above one matching section of an unrelated page. `0` turns it off. Default
    /// [`PAGE_WEIGHT`], chosen on the Git manual dev set (`bench/RESULTS.md`).
    pub page_weight: f32,
}

/// Default [`SearchOptions::page_weight`]: 0.4 (Git manual pages, MRR@10 0.702 → 0.739; flat from
/// 0.4 to 0.8).
pub const PAGE_WEIGHT: f32 = 0.4;

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            mode: Mode::Hybrid,
            fusion: Fusion::DEFAULT,
            candidates: 50,
            ef_search: None,
            collapse_sections: true,
            page_weight: PAGE_WEIGHT,
        }
    }
}

impl Index {
    /// The `k` best live documents for a query, ranked by `opts.mode`, best first, at most one
    /// per URL when `opts.collapse_sections`. `vector` is the query's embedding (any finite
    /// vector of the index dims, normalised here); it is required for [`Mode::Hybrid`] and
    /// [`Mode::Vector`] and ignored by [`Mode::Keyword`]. `text` is the query text for the BM25
    /// side (ignored by [`Mode::Vector`]).
    ///
    /// [`Hit::score`] is the cosine in vector mode, the BM25 score in keyword mode and the fused
    /// score in hybrid mode (convex fusion: `[0, 1]`; RRF: `(0, 2/(k+1)]`; page evidence adds up
    /// to `page_weight ×` that maximum, [`SearchOptions::page_weight`]).
    ///
    /// Cost: one HNSW search with beam `max(ef_search, c)` plus BM25 over the query terms'
    /// postings, then `2c` exact scores (`c = max(candidates, k)`).
    ///
    /// Errors: [`IndexError::InvalidArgument`] when `vector` is missing for a mode that needs it
    /// or a fusion parameter is out of range; [`IndexError::VectorDims`],
    /// [`IndexError::NonFiniteVector`].
    pub fn query(
        &self,
        vector: Option<&[f32]>,
        text: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>, IndexError> {
        let q = checked_options(opts, vector, self.dims())?;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let c = opts.candidates.max(k).max(1);
        let terms = if opts.mode == Mode::Vector {
            Vec::new()
        } else {
            self.query_terms(text)
        };
        let ranked: Vec<Scored> = match (opts.mode, &q) {
            (Mode::Vector, Some(q)) => self.vector_top(q, c, opts.ef_search),
            (Mode::Keyword, _) => self
                .bm25_top(&terms, c)
                .into_iter()
                .map(|(id, score)| Scored { score, id })
                .collect(),
            (_, Some(q)) => self.fuse(q, &terms, c, opts),
            (_, None) => unreachable!("checked above"),
        };
        Ok(self.collect_hits(ranked, k, opts.collapse_sections))
    }

    /// Hybrid candidates, scored on both sides and fused, best first.
    fn fuse(&self, q: &[f32], terms: &[u32], c: usize, opts: &SearchOptions) -> Vec<Scored> {
        fuse_candidates(
            self.vector_top(q, c, opts.ef_search)
                .into_iter()
                .map(|s| s.id),
            self.bm25_top(terms, c).into_iter().map(|(slot, _)| slot),
            |s| self.cosine(q, s),
            |s| self.bm25_score(terms, s),
            |s| url_place(self.docs[s as usize].payload.url.as_str()),
            opts,
        )
    }

    /// The `n` best live slots by cosine to the normalised query `q`, best first: an exact scan
    /// when the index holds no more slots than the beam `max(ef, n)` (`ef` default: the index's
    /// `ef_search`), else an HNSW search. Used by every vector search.
    pub(crate) fn vector_top(&self, q: &[f32], n: usize, ef: Option<usize>) -> Vec<Scored> {
        let ef = ef.unwrap_or(self.params.ef_search).max(n);
        if self.docs.len() <= ef {
            return self.exact(q, n);
        }
        let mut visited = self.take_visited();
        let skip = (self.n_deleted > 0).then_some(self.deleted.as_slice());
        let mut found = self.graph.search(self.vecs(), q, ef, &mut visited, skip);
        self.put_visited(visited);
        found.truncate(n);
        found
    }

    /// Ranked slots → the first `k` hits, at most one per non-empty URL when `collapse`.
    fn collect_hits(&self, ranked: Vec<Scored>, k: usize, collapse: bool) -> Vec<Hit> {
        collapse_sections(ranked, k, collapse, |s| {
            url_place(self.docs[s as usize].payload.url.as_str())
        })
        .into_iter()
        .map(|s| self.hit(s.id, s.score))
        .collect()
    }
}

/// Where a passage lies, for collapsing and page evidence: `None` when it has no URL (never
/// collapsed, no page evidence), else `(page, section)` — two passages share a section when their
/// URLs are equal and a page when their URLs agree before `#`. An [`Index`] keys both by the URL
/// text ([`url_place`]); a [`crate::fragments::FragmentedIndex`] by numbers its fragments carry.
pub(crate) type Place<K> = Option<(K, K)>;

/// The [`Place`] of a passage with URL `url`, keyed by the URL text.
pub(crate) fn url_place(url: &str) -> Place<&str> {
    (!url.is_empty()).then(|| (url.split('#').next().unwrap_or(url), url))
}

/// The hybrid ranking of a candidate set, shared by [`Index::query`] and
/// [`crate::fragments::FragmentedIndex::query`]: the `vector` candidates, then the `keyword` ones
/// not already there, each scored on both sides (`cos_of`, `bm25_of`), fused ([`fused_scores`]),
/// given page evidence ([`add_page_evidence`], pages from `place_of`), best first.
pub(crate) fn fuse_candidates<K: Copy + Eq + std::hash::Hash>(
    vector: impl IntoIterator<Item = u32>,
    keyword: impl IntoIterator<Item = u32>,
    cos_of: impl Fn(u32) -> f32,
    bm25_of: impl Fn(u32) -> f32,
    place_of: impl Fn(u32) -> Place<K>,
    opts: &SearchOptions,
) -> Vec<Scored> {
    let mut ids: Vec<u32> = vector.into_iter().collect();
    let mut seen: HashSet<u32> = ids.iter().copied().collect();
    for id in keyword {
        if seen.insert(id) {
            ids.push(id);
        }
    }
    let cos: Vec<f32> = ids.iter().map(|&id| cos_of(id)).collect();
    let bm: Vec<f32> = ids.iter().map(|&id| bm25_of(id)).collect();
    let mut fused = fused_scores(&cos, &bm, opts.fusion);
    add_page_evidence(&mut fused, &|i| place_of(ids[i]), opts.page_weight);
    let mut out: Vec<Scored> = ids
        .into_iter()
        .zip(fused)
        .map(|(id, score)| Scored { score, id })
        .collect();
    sort_best_first(&mut out);
    out
}

/// The first `k` of `ranked`, at most one per section (`place_of`; passages without a URL are
/// never collapsed) when `collapse`.
pub(crate) fn collapse_sections<K: Copy + Eq + std::hash::Hash>(
    ranked: Vec<Scored>,
    k: usize,
    collapse: bool,
    place_of: impl Fn(u32) -> Place<K>,
) -> Vec<Scored> {
    let mut sections: HashSet<K> = HashSet::new();
    let mut out = Vec::with_capacity(k);
    for s in ranked {
        if let (true, Some((_, section))) = (collapse, place_of(s.id)) {
            if !sections.insert(section) {
                continue;
            }
        }
        out.push(s);
        if out.len() == k {
            break;
        }
    }
    out
}

/// The fused score of each candidate from its vector score `cos[i]` and BM25 score `bm[i]`
/// ([`Fusion`]); shared by [`Index::query`] and [`crate::fragments::FragmentedIndex::query`].
pub(crate) fn fused_scores(cos: &[f32], bm: &[f32], fusion: Fusion) -> Vec<f32> {
    match fusion {
        Fusion::Convex { vector_weight: w } => {
            let (cn, bn) = (min_max(cos), min_max(bm));
            cn.iter()
                .zip(&bn)
                .map(|(c, b)| w * c + (1.0 - w) * b)
                .collect()
        }
        Fusion::Rrf { k } => {
            let (rc, rb) = (ranks(cos), ranks(bm));
            (0..cos.len())
                .map(|i| {
                    let kw = if bm[i] > 0.0 {
                        1.0 / (k + rb[i] as f32)
                    } else {
                        0.0
                    };
                    1.0 / (k + rc[i] as f32) + kw
                })
                .collect()
        }
    }
}

/// [`SearchOptions::page_weight`]: adds to `fused[i]` `weight ×` the best fused score among the
/// candidates of the same page but another section (`place_of`); candidates without a place (no
/// URL) are left as they are. Linear in the number of candidates.
pub(crate) fn add_page_evidence<K: Copy + Eq + std::hash::Hash>(
    fused: &mut [f32],
    place_of: &dyn Fn(usize) -> Place<K>,
    weight: f32,
) {
    if weight == 0.0 {
        return;
    }
    use std::collections::HashMap;
    // per page: the best (score, section) and the best score of any other section
    let mut pages: HashMap<K, ((f32, Option<K>), f32)> = HashMap::new();
    for (i, &f) in fused.iter().enumerate() {
        let Some((page, section)) = place_of(i) else {
            continue;
        };
        let e = pages
            .entry(page)
            .or_insert(((f32::NEG_INFINITY, None), f32::NEG_INFINITY));
        if f > e.0 .0 {
            if e.0 .1 != Some(section) {
                e.1 = e.1.max(e.0 .0);
            }
            e.0 = (f, Some(section));
        } else if Some(section) != e.0 .1 {
            e.1 = e.1.max(f);
        }
    }
    let base: Vec<f32> = fused.to_vec();
    for (i, f) in fused.iter_mut().enumerate() {
        let Some((page, section)) = place_of(i) else {
            continue;
        };
        let ((best, best_section), other) = pages[&page];
        let evidence = if best_section != Some(section) {
            best
        } else {
            other
        };
        if evidence.is_finite() {
            *f = base[i] + weight * evidence;
        }
    }
}

/// The query vector `opts.mode` needs, checked and normalised ([`crate::util::checked_query`];
/// `None` in keyword mode), after checking the options: the argument errors [`Index::query`] and
/// [`crate::fragments::FragmentedIndex::query`] document.
pub(crate) fn checked_options(
    opts: &SearchOptions,
    vector: Option<&[f32]>,
    dims: usize,
) -> Result<Option<Vec<f32>>, IndexError> {
    let q = match (opts.mode, vector) {
        (Mode::Keyword, _) => None,
        (mode, None) => {
            return Err(IndexError::InvalidArgument {
                what: "vector",
                detail: format!("{} search needs the query's embedding", mode.as_str()),
            })
        }
        (_, Some(v)) => Some(crate::util::checked_query(v, dims)?),
    };
    check_fusion(opts.fusion)?;
    check_page_weight(opts.page_weight)?;
    Ok(q)
}

/// Checks `page_weight` (finite, ≥ 0).
fn check_page_weight(w: f32) -> Result<(), IndexError> {
    if w.is_finite() && w >= 0.0 {
        Ok(())
    } else {
        Err(IndexError::InvalidArgument {
            what: "page_weight",
            detail: format!("{w} is not a finite number ≥ 0"),
        })
    }
}

/// Checks the fusion parameters (the errors [`Index::query`] documents).
fn check_fusion(fusion: Fusion) -> Result<(), IndexError> {
    match fusion {
        Fusion::Convex { vector_weight } if !(0.0..=1.0).contains(&vector_weight) => {
            Err(IndexError::InvalidArgument {
                what: "vector_weight",
                detail: format!("{vector_weight} is outside [0, 1]"),
            })
        }
        Fusion::Rrf { k } if !(k.is_finite() && k >= 0.0) => Err(IndexError::InvalidArgument {
            what: "rrf k",
            detail: format!("{k} is not a finite number ≥ 0"),
        }),
        _ => Ok(()),
    }
}

/// `(x − min) / (max − min)`; all zeros when every value is equal.
fn min_max(xs: &[f32]) -> Vec<f32> {
    let lo = xs.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if hi > lo {
        xs.iter().map(|x| (x - lo) / (hi - lo)).collect()
    } else {
        vec![0.0; xs.len()]
    }
}

/// 1-based rank of each value, best (largest) first; ties share the order of appearance.
fn ranks(xs: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[b].total_cmp(&xs[a]).then(a.cmp(&b)));
    let mut r = vec![0; xs.len()];
    for (rank, i) in order.into_iter().enumerate() {
        r[i] = rank + 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Document, ManifestFields, Metric, ModelVersion, Params};

    fn fields() -> ManifestFields {
        ManifestFields {
            model_id: "test".into(),
            model_version: ModelVersion::new(1, 0, 0),
            dims: 2,
            metric: Metric::Cosine,
            model_sha256: [0; 32],
        }
    }

    /// Three documents: `a` is the query's nearest vector but lacks its words, `b` has the
    /// words but a far vector, `c` is in between on both sides.
    fn index() -> Index {
        let mut ix = Index::new(fields(), Params::default()).unwrap();
        let docs = [
            ("a", "/a", "ownership and borrowing", [1.0, 0.0]),
            ("b", "/b", "read a file line by line", [0.0, 1.0]),
            ("c", "/c", "read the manual", [0.8, 0.6]),
        ];
        for (id, url, text, v) in docs {
            ix.insert_with_text(Document::new(id, id, url, text), &v, text)
                .unwrap();
        }
        ix
    }

    fn ids(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.id.as_str()).collect()
    }

    #[test]
    fn modes_rank_by_their_own_side() {
        let ix = index();
        let q = [1.0f32, 0.0];
        let opts = |mode| SearchOptions {
            mode,
            ..SearchOptions::default()
        };
        let v = ix
            .query(Some(&q), "read file line", 3, &opts(Mode::Vector))
            .unwrap();
        assert_eq!(ids(&v), ["a", "c", "b"]);
        assert!((v[1].score - 0.8).abs() < 1e-6);
        let k = ix
            .query(None, "read file line", 3, &opts(Mode::Keyword))
            .unwrap();
        assert_eq!(ids(&k), ["b", "c"]);
        // Convex 0.5: cos′ = (1, 0.8, 0); bm25′ = (0, 0 < c′ < 1, 1).
        let half = SearchOptions {
            fusion: Fusion::Convex { vector_weight: 0.5 },
            ..opts(Mode::Hybrid)
        };
        let h = ix.query(Some(&q), "read file line", 3, &half).unwrap();
        let bm = ix
            .query(None, "read file line", 3, &opts(Mode::Keyword))
            .unwrap();
        let c_norm = bm[1].score / bm[0].score;
        let expect_c = 0.5 * 0.8 + 0.5 * c_norm;
        assert_eq!(h.len(), 3);
        let c = h.iter().find(|x| x.id == "c").unwrap();
        assert!(
            (c.score - expect_c).abs() < 1e-6,
            "{} vs {expect_c}",
            c.score
        );
        assert!(ids(&h)[0] == "c", "c is good on both sides: {:?}", ids(&h));
        // a and b tie at 0.5; ties go by insertion order.
        assert_eq!(ids(&h)[1..], ["a", "b"]);
        // The default leans to the keyword side (0.4 · cos′ + 0.6 · bm25′): b 0.6 beats a 0.4.
        let d = ix
            .query(Some(&q), "read file line", 3, &opts(Mode::Hybrid))
            .unwrap();
        let mut want = [("c", 0.4 * 0.8 + 0.6 * c_norm), ("b", 0.6), ("a", 0.4)];
        want.sort_by(|x, y| y.1.total_cmp(&x.1));
        assert_eq!(ids(&d), want.map(|w| w.0));
        for (hit, (_, score)) in d.iter().zip(want) {
            assert!(
                (hit.score - score).abs() < 1e-6,
                "{} {} vs {score}",
                hit.id,
                hit.score
            );
        }
    }

    #[test]
    fn rrf_sums_reciprocal_ranks() {
        let ix = index();
        let opts = SearchOptions {
            fusion: Fusion::Rrf { k: 60.0 },
            ..SearchOptions::default()
        };
        let h = ix
            .query(Some(&[1.0, 0.0]), "read file line", 3, &opts)
            .unwrap();
        // vector ranks a1 c2 b3; BM25 ranks b1 c2 (a has no term → no keyword part).
        // b: 1/63 + 1/61 = 0.0322664 just beats c: 2/62 = 0.0322581.
        let want = [
            ("b", 1.0 / 63.0 + 1.0 / 61.0),
            ("c", 2.0 / 62.0),
            ("a", 1.0 / 61.0),
        ];
        for (hit, (id, score)) in h.iter().zip(want) {
            assert_eq!(hit.id, id);
            assert!((hit.score - score as f32).abs() < 1e-6);
        }
    }

    #[test]
    fn one_hit_per_section() {
        let mut ix = Index::new(fields(), Params::default()).unwrap();
        for (id, url, v) in [
            ("s1:1", "/p#s1", [1.0, 0.0]),
            ("s1:2", "/p#s1", [0.99, 0.1]),
            ("s2:1", "/p#s2", [0.9, 0.3]),
            ("x", "", [0.95, 0.2]),
            ("y", "", [0.95, 0.2]),
        ] {
            ix.insert_with_text(Document::new(id, "t", url, "text"), &v, "text")
                .unwrap();
        }
        let q = [1.0f32, 0.0];
        let on = SearchOptions {
            mode: Mode::Vector,
            ..SearchOptions::default()
        };
        let hits = ix.query(Some(&q), "", 10, &on).unwrap();
        assert_eq!(ids(&hits), ["s1:1", "x", "y", "s2:1"]);
        let off = SearchOptions {
            collapse_sections: false,
            ..on
        };
        assert_eq!(ix.query(Some(&q), "", 10, &off).unwrap().len(), 5);
        assert_eq!(ix.query(Some(&q), "", 2, &on).unwrap().len(), 2);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let ix = index();
        let err = ix
            .query(None, "read", 3, &SearchOptions::default())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            IndexError::InvalidArgument {
                what: "vector",
                detail: "hybrid search needs the query's embedding".into()
            }
            .to_string()
        );
        let bad = SearchOptions {
            fusion: Fusion::Convex { vector_weight: 1.5 },
            ..SearchOptions::default()
        };
        assert!(ix.query(Some(&[1.0, 0.0]), "read", 3, &bad).is_err());
        assert_eq!("keyword".parse::<Mode>(), Ok(Mode::Keyword));
        assert!("both"
            .parse::<Mode>()
            .unwrap_err()
            .contains("expected hybrid"));
        // A query without known words: hybrid falls back to the vector order.
        let h = ix
            .query(Some(&[1.0, 0.0]), "zzz", 3, &SearchOptions::default())
            .unwrap();
        assert_eq!(ids(&h), ["a", "c", "b"]);
    }
}
