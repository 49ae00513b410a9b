//! Fragmented indexes (`lightembed_index::fragments`): the keyword side ranks exactly like the
//! index it was split from, the binary vector codes estimate cosines, fragments round-trip their
//! text, and malformed, corrupted or foreign fragments are refused without panics.

use lightembed_index::fragments::{split, term_hash, FragmentedIndex, SplitOptions};
use lightembed_index::{
    Document, Fusion, Index, IndexError, ManifestFields, Mode, Params, SearchOptions,
};

const DIMS: usize = 20; // not a multiple of 8: the last code byte is padded

mod common;

fn fields() -> ManifestFields {
    common::fields(DIMS)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
}

const WORDS: &[&str] = &[
    "borrow",
    "ownership",
    "vector",
    "string",
    "thread",
    "channel",
    "closure",
    "iterator",
    "trait",
    "lifetime",
    "reference",
    "module",
    "crate",
    "error",
    "panic",
    "result",
    "option",
    "match",
    "pattern",
    "macro",
    "running",
    "runs",
    "indexes",
    "café",
    "read_to_string",
];

/// `n` passages in sections of three (shared URL and title), clustered vectors, a few deleted.
fn build(n: usize) -> Index {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let centres: Vec<Vec<f32>> = (0..6)
        .map(|_| (0..DIMS).map(|_| rng.f()).collect())
        .collect();
    let mut ix = Index::new(fields(), Params::default()).unwrap();
    for i in 0..n {
        let v: Vec<f32> = centres[i % 6].iter().map(|c| c + 0.4 * rng.f()).collect();
        let len = 3 + (rng.next() % 12) as usize;
        let text: Vec<&str> = (0..len)
            .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
            .collect();
        let text = text.join(" ");
        let section = i / 3;
        ix.insert_with_text(
            Document::new(
                format!("p{i}"),
                format!("Section {section} — Page {}", section / 4),
                format!("page{}.html#s{section}", section / 4),
                text.clone(),
            ),
            &v,
            &text,
        )
        .unwrap();
    }
    for i in [4, 17] {
        if i < n {
            assert!(ix.delete(&format!("p{i}")));
        }
    }
    ix
}

fn small() -> SplitOptions {
    SplitOptions {
        shard_bytes: 64,
        chunk_bytes: 200,
    }
}

/// The core with every shard and chunk added.
fn load_all(ix: &Index) -> FragmentedIndex {
    let f = split(ix, &small()).unwrap();
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    for s in &f.shards {
        fx.add_shard(s).unwrap();
    }
    for c in &f.chunks {
        fx.add_chunk(c).unwrap();
    }
    for y in &f.typos {
        fx.add_typo_shard(y).unwrap();
    }
    fx
}

/// Passage number → the id of the live document it came from (live slots in order).
fn live_ids(ix: &Index) -> Vec<String> {
    ix.documents().map(|d| d.id.clone()).collect()
}

#[test]
fn keyword_ranking_equals_the_index() {
    let ix = build(120);
    let fx = load_all(&ix);
    let ids = live_ids(&ix);
    assert_eq!(fx.len(), 118);
    assert_eq!(fx.dims(), DIMS);
    assert!(fx.keyword_stemming());
    let opts = SearchOptions {
        mode: Mode::Keyword,
        ..SearchOptions::default()
    };
    for q in [
        "borrow",
        "ownership of a vector",
        "run index",
        "cafe READ_TO_STRING",
        "nothing here",
        "closure closure trait",
    ] {
        let want = ix.query(None, q, 10, &opts).unwrap();
        let got = fx.query(None, q, 10, &opts).unwrap();
        assert_eq!(got.len(), want.len(), "{q}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(ids[g.passage as usize], w.id, "{q}");
            assert_eq!(g.score, w.score, "{q}: BM25 is the same f32");
            assert_eq!(g.url, w.payload.url);
            assert_eq!(g.title, w.payload.title);
        }
    }
}

#[test]
fn binary_codes_estimate_the_cosine() {
    let ix = build(120);
    let fx = load_all(&ix);
    let ids = live_ids(&ix);
    let opts = SearchOptions {
        mode: Mode::Vector,
        collapse_sections: false,
        ..SearchOptions::default()
    };
    let mut err = 0.0f32;
    let mut top1 = 0;
    for (p, id) in ids.iter().enumerate() {
        let v = ix.vector(id).unwrap().to_vec();
        let hits = fx.query(Some(&v), "", 118, &opts).unwrap();
        assert_eq!(hits.len(), 118);
        if hits[..5].iter().any(|h| h.passage as usize == p) {
            top1 += 1;
        }
        for h in &hits {
            let w = ix.vector(&ids[h.passage as usize]).unwrap();
            let cos: f32 = v.iter().zip(w).map(|(a, b)| a * b).sum();
            err += (h.score - cos).abs();
        }
        // best first
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
    let mean_err = err / (118.0 * 118.0);
    // 20 sign bits per vector: a coarse estimate; among the 19 close mates of its cluster a
    // passage is still found in its own top 5 for most queries.
    assert!(mean_err < 0.12, "mean |estimate − cosine| = {mean_err}");
    eprintln!("mean error {mean_err}, self in top 5: {top1} of 118");
    // Measured 92 (a random order would give ~5).
    assert!(top1 >= 85, "a passage is in its own top 5 in {top1} of 118");
}

#[test]
fn hybrid_fuses_both_sides() {
    let ix = build(120);
    let fx = load_all(&ix);
    let ids = live_ids(&ix);
    let v = ix.vector("p30").unwrap().to_vec();
    // Weight 0: the keyword order (every BM25 candidate is in the fused set).
    let kw = fx
        .query(
            None,
            "borrow channel",
            5,
            &SearchOptions {
                mode: Mode::Keyword,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    let h0 = fx
        .query(
            Some(&v),
            "borrow channel",
            5,
            &SearchOptions {
                fusion: Fusion::Convex { vector_weight: 0.0 },
                page_weight: 0.0,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    assert_eq!(
        h0.iter().map(|h| h.passage).collect::<Vec<_>>(),
        kw.iter().map(|h| h.passage).collect::<Vec<_>>()
    );
    // Weight 1: the vector order.
    let vec = fx
        .query(
            Some(&v),
            "",
            5,
            &SearchOptions {
                mode: Mode::Vector,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    let h1 = fx
        .query(
            Some(&v),
            "borrow channel",
            5,
            &SearchOptions {
                fusion: Fusion::Convex { vector_weight: 1.0 },
                page_weight: 0.0,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    assert_eq!(
        h1.iter().map(|h| h.passage).collect::<Vec<_>>(),
        vec.iter().map(|h| h.passage).collect::<Vec<_>>()
    );
    // One hit per section URL by default.
    let d = fx
        .query(Some(&v), "borrow channel", 20, &SearchOptions::default())
        .unwrap();
    let mut urls: Vec<&str> = d.iter().map(|h| h.url.as_str()).collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), d.len());
    // Fused scores are in [0, 1]; page evidence adds at most 0.4 × another section's.
    assert!(d.iter().all(|h| (0.0..=1.4).contains(&h.score)));
    assert!(ids.len() == 118);
}

#[test]
fn texts_come_from_their_chunks() {
    let ix = build(120);
    let f = split(&ix, &small()).unwrap();
    assert!(f.chunks.len() > 5, "{} chunks", f.chunks.len());
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    assert_eq!(fx.chunk_count() as usize, f.chunks.len());
    let docs: Vec<Document> = ix.documents().cloned().collect();
    assert_eq!(fx.text(50), None);
    let c = fx.chunk_of(50).unwrap();
    assert_eq!(fx.add_chunk(&f.chunks[c as usize]).unwrap(), c);
    assert_eq!(fx.text(50), Some(docs[50].payload.snippet.as_str()));
    assert_eq!(fx.chunk_of(118), None);
    for c in &f.chunks {
        fx.add_chunk(c).unwrap();
    }
    for (p, d) in docs.iter().enumerate() {
        assert_eq!(fx.text(p as u32), Some(d.payload.snippet.as_str()));
    }
}

#[test]
fn queries_need_their_shards() {
    let ix = build(120);
    let f = split(&ix, &small()).unwrap();
    assert!(f.shards.len() > 4, "{} shards", f.shards.len());
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    assert_eq!(fx.shard_count() as usize, f.shards.len());
    let q = "Borrowing closures";
    let need = fx.missing_shards(q);
    let n = fx.shard_count();
    let mut want = vec![term_hash("borrow") % n, term_hash("closur") % n];
    want.sort();
    want.dedup();
    assert_eq!(need, want);
    let err = fx
        .query(
            None,
            q,
            5,
            &SearchOptions {
                mode: Mode::Keyword,
                ..SearchOptions::default()
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("is not loaded"), "{err}");
    // Vector mode needs no shard.
    assert!(fx
        .query(
            Some(&[0.1; DIMS]),
            q,
            5,
            &SearchOptions {
                mode: Mode::Vector,
                ..SearchOptions::default()
            }
        )
        .is_ok());
    for s in need {
        assert_eq!(fx.add_shard(&f.shards[s as usize]).unwrap(), s);
    }
    assert!(fx.missing_shards(q).is_empty());
    assert!(!fx
        .query(
            None,
            q,
            5,
            &SearchOptions {
                mode: Mode::Keyword,
                ..SearchOptions::default()
            }
        )
        .unwrap()
        .is_empty());
}

#[test]
fn bad_arguments_are_errors() {
    let fx = load_all(&build(30));
    assert!(matches!(
        fx.query(None, "borrow", 3, &SearchOptions::default()),
        Err(IndexError::InvalidArgument { what: "vector", .. })
    ));
    assert!(matches!(
        fx.query(Some(&[0.1; 3]), "borrow", 3, &SearchOptions::default()),
        Err(IndexError::VectorDims {
            expected: DIMS,
            found: 3
        })
    ));
    let mut nan = [0.1f32; DIMS];
    nan[2] = f32::NAN;
    assert!(matches!(
        fx.query(Some(&nan), "borrow", 3, &SearchOptions::default()),
        Err(IndexError::NonFiniteVector)
    ));
    assert!(split(
        &build(3),
        &SplitOptions {
            shard_bytes: 0,
            chunk_bytes: 1
        }
    )
    .is_err());
}

#[test]
fn an_empty_index_splits_and_loads() {
    let ix = Index::new(fields(), Params::default()).unwrap();
    let f = split(&ix, &SplitOptions::default()).unwrap();
    assert!(f.chunks.is_empty());
    assert_eq!(f.shards.len(), 1);
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    fx.add_shard(&f.shards[0]).unwrap();
    assert!(fx.is_empty());
    assert!(fx
        .query(Some(&[0.5; DIMS]), "borrow", 3, &SearchOptions::default())
        .unwrap()
        .is_empty());
}

/// Replaces the SHA-256 trailer so a mutated body reaches the field checks.
fn reseal(bytes: &mut [u8]) {
    use sha2::{Digest, Sha256};
    let body = bytes.len() - 32;
    let d = Sha256::digest(&bytes[..body]);
    bytes[body..].copy_from_slice(&d);
}

#[test]
fn corrupted_fragments_are_refused() {
    let ix = build(40);
    let f = split(&ix, &small()).unwrap();
    // A flipped byte breaks the checksum.
    let mut core = f.core.clone();
    core[20] ^= 1;
    assert_eq!(
        FragmentedIndex::from_core(&core).unwrap_err(),
        IndexError::ChecksumMismatch
    );
    // Truncations never load.
    for cut in [0, 5, 37, f.core.len() - 1] {
        assert!(
            FragmentedIndex::from_core(&f.core[..cut]).is_err(),
            "cut {cut}"
        );
    }
    // Wrong kinds of fragment.
    let e = FragmentedIndex::from_core(&f.shards[0]).unwrap_err();
    assert!(e.to_string().contains("expected magic \"LEFI\""), "{e}");
    let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
    assert!(fx.add_shard(&f.chunks[0]).is_err());
    assert!(fx.add_chunk(&f.shards[0]).is_err());
    // A shard of another build.
    let other = split(&build(41), &small()).unwrap();
    let e = fx.add_shard(&other.shards[0]).unwrap_err();
    assert!(e.to_string().contains("another build"), "{e}");
    let e = fx.add_chunk(&other.chunks[0]).unwrap_err();
    assert!(e.to_string().contains("another build"), "{e}");
    // Another layout version: the next one, v3 (no typo shards), v2 (one display title per section) and v1 (term
    // shards keyed before `ı` folded to `i`).
    for version in [5u8, 3, 2, 1] {
        let mut other = f.core.clone();
        other[4] = version;
        reseal(&mut other);
        let e = FragmentedIndex::from_core(&other).unwrap_err();
        assert!(e.to_string().contains("re-run `lightembed site`"), "{e}");
        assert!(e.to_string().contains(&format!("layout v{version}")), "{e}");
    }
}

#[test]
fn every_resealed_byte_flip_loads_or_errs_without_panicking() {
    let ix = build(24);
    let f = split(&ix, &small()).unwrap();
    for pos in 0..f.core.len() - 32 {
        for bit in [0x01u8, 0x80] {
            let mut b = f.core.clone();
            b[pos] ^= bit;
            reseal(&mut b);
            if let Ok(fx) = FragmentedIndex::from_core(&b) {
                let _ = fx.query(
                    Some(&[0.3; DIMS]),
                    "",
                    5,
                    &SearchOptions {
                        mode: Mode::Vector,
                        ..SearchOptions::default()
                    },
                );
            }
        }
    }
    for frag in f.shards.iter().chain(&f.chunks) {
        for pos in 0..frag.len() - 32 {
            let mut b = frag.clone();
            b[pos] ^= 0x41;
            reseal(&mut b);
            let mut fx = FragmentedIndex::from_core(&f.core).unwrap();
            let _ = fx.add_shard(&b);
            let _ = fx.add_chunk(&b);
            if fx.missing_shards("borrow vector").is_empty() {
                let _ = fx.query(
                    None,
                    "borrow vector",
                    5,
                    &SearchOptions {
                        mode: Mode::Keyword,
                        ..SearchOptions::default()
                    },
                );
            }
        }
    }
}

#[test]
fn any_text_change_changes_the_build_id() {
    let one = |snippet: &str| {
        let mut ix = Index::new(fields(), Params::default()).unwrap();
        ix.insert_with_text(
            Document::new("a", "A", "a.html", snippet),
            &[0.2; DIMS],
            "alpha beta",
        )
        .unwrap();
        let f = split(&ix, &SplitOptions::default()).unwrap();
        let id = FragmentedIndex::from_core(&f.core).unwrap().build_id();
        assert_eq!(f.build_id(), id, "read off the core = the loaded core's");
        id
    };
    // Same vectors, same keyword statistics: only the shown text differs.
    let (x, y) = (one("alpha beta"), one("alpha beta!"));
    assert_eq!(x.len(), 32);
    assert_ne!(x, y);
    assert_eq!(x, one("alpha beta"), "deterministic");
}

#[test]
fn page_evidence_lifts_sections_of_a_page_that_answers_twice() {
    // Three sections on two pages; the query's best single section is on page b, but page a
    // answers in two sections.
    let mut ix = Index::new(fields(), Params::default()).unwrap();
    let v = |x: f32| {
        let mut v = vec![0.0f32; DIMS];
        v[0] = x;
        v[1] = (1.0 - x * x).sqrt();
        v
    };
    for (id, url, text, x) in [
        ("a1", "a.html#one", "borrow checker rules", 0.80),
        ("a2", "a.html#two", "borrow checker errors", 0.79),
        ("b1", "b.html#one", "borrow checker rules", 0.82),
        ("c1", "c.html", "unrelated text here", 0.10),
    ] {
        ix.insert_with_text(Document::new(id, id, url, text), &v(x), text)
            .unwrap();
    }
    let q = v(1.0);
    for (page_weight, first) in [(0.0, "b.html#one"), (0.4, "a.html#one")] {
        let opts = SearchOptions {
            page_weight,
            ..SearchOptions::default()
        };
        let want = ix.query(Some(&q), "borrow checker", 3, &opts).unwrap();
        assert_eq!(
            want[0].payload.url, first,
            "Index, page_weight {page_weight}"
        );
        let fx = load_all(&ix);
        let got = fx.query(Some(&q), "borrow checker", 3, &opts).unwrap();
        assert_eq!(
            got[0].url, first,
            "FragmentedIndex, page_weight {page_weight}"
        );
    }
    // A negative or non-finite weight is refused.
    let bad = SearchOptions {
        page_weight: -1.0,
        ..SearchOptions::default()
    };
    assert!(matches!(
        ix.query(Some(&q), "borrow", 3, &bad),
        Err(IndexError::InvalidArgument {
            what: "page_weight",
            ..
        })
    ));
}

/// The graph-free `fragments::Builder` (what `lightembed site` uses) writes exactly the bytes
/// `split` writes for an index built by the same inserts, and checks its input the same way.
#[test]
fn builder_writes_what_split_writes() {
    use lightembed_index::fragments::Builder;
    let mut rng = Rng(7);
    let mut ix = Index::new(fields(), Params::default()).unwrap();
    let mut b = Builder::new(fields(), true).unwrap();
    for i in 0..300 {
        let v: Vec<f32> = (0..DIMS).map(|_| rng.f()).collect();
        let text: Vec<&str> = (0..6)
            .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
            .collect();
        let text = text.join(" ");
        let doc = Document::new(
            format!("p{i}"),
            format!("Section {}", i / 5),
            format!("page{}.html", i / 20),
            text.clone(),
        );
        ix.insert_with_text(doc.clone(), &v, &text).unwrap();
        b.push(doc, &v, &text).unwrap();
    }
    assert_eq!(b.len(), 300);
    let (a, c) = (split(&ix, &small()).unwrap(), b.finish(&small()).unwrap());
    assert_eq!(a.core, c.core);
    assert_eq!(a.shards, c.shards);
    assert_eq!(a.chunks, c.chunks);
    // Same refusals as `Index::insert_with_text`, and nothing is added by them.
    let doc = |id: &str| Document::new(id, "t", "u", "x");
    assert!(matches!(
        b.push(doc("p3"), &[0.5; DIMS], "x"),
        Err(IndexError::DuplicateId(id)) if id == "p3"
    ));
    assert!(matches!(
        b.push(doc("q"), &[0.5; DIMS - 1], "x"),
        Err(IndexError::VectorDims { .. })
    ));
    let mut nan = [0.5; DIMS];
    nan[3] = f32::NAN;
    assert!(matches!(
        b.push(doc("q"), &nan, "x"),
        Err(IndexError::NonFiniteVector)
    ));
    assert_eq!(b.len(), 300);
    assert_eq!(b.finish(&small()).unwrap().core, a.core);
}

/// A result's rank does not depend on how many results are asked for: the best 10 are the first
/// 10 of the best 20 and 40, in every mode, for both index kinds (through the one `Searcher`
/// interface). The candidate pool used to be `max(50, 4k)`, so `-k 10` (CLI) and 20 (widget)
/// fused different pools and ordered the top pages differently.
#[test]
fn ranks_do_not_depend_on_k() {
    use lightembed_index::Searcher;
    let ix = build(600);
    let fx = load_all(&ix);
    let mut rng = Rng(99);
    let kinds: [&dyn Searcher; 2] = [&ix, &fx];
    for kind in kinds {
        for q in 0..20 {
            let v: Vec<f32> = (0..DIMS).map(|_| rng.f()).collect();
            let text = format!(
                "{} {}",
                WORDS[q % WORDS.len()],
                WORDS[(q * 7 + 3) % WORDS.len()]
            );
            for mode in [Mode::Hybrid, Mode::Vector, Mode::Keyword] {
                let opts = SearchOptions {
                    mode,
                    ..SearchOptions::default()
                };
                let ids = |k| -> Vec<String> {
                    kind.find(Some(&v), &text, k, &opts)
                        .unwrap()
                        .into_iter()
                        .map(|h| h.id)
                        .collect()
                };
                let (a, b, c) = (ids(10), ids(20), ids(40));
                assert_eq!(a[..], b[..a.len()], "{mode:?} {text:?}: k 10 vs 20");
                assert_eq!(b[..], c[..b.len()], "{mode:?} {text:?}: k 20 vs 40");
            }
        }
    }
}

/// Both index kinds give one hit shape (`Found`) for the same passage: the same title, URL,
/// keyword score and text; an `Index` hit keeps its id and has no bundle place, a fragment's id
/// is `URL:N` and its place names the passage, its text chunk and the title's two parts.
#[test]
fn both_kinds_find_a_passage_in_one_shape() {
    use lightembed_index::{InBundle, Searcher};
    use lightembed_title::section_title;
    let ix = build(120);
    let fx = load_all(&ix);
    let ids = live_ids(&ix);
    let opts = SearchOptions {
        mode: Mode::Keyword,
        ..SearchOptions::default()
    };
    let mut compared = 0;
    for q in ["borrow", "ownership of a vector", "cafe READ_TO_STRING"] {
        let want = Searcher::find(&ix, None, q, 10, &opts).unwrap();
        let got = Searcher::find(&fx, None, q, 10, &opts).unwrap();
        assert_eq!(got.len(), want.len(), "{q}");
        assert!(!got.is_empty(), "{q}");
        for (g, w) in got.iter().zip(&want) {
            let place = g.fragment.as_ref().expect("a fragment hit has its place");
            let p = place.passage;
            assert_eq!(ids[p as usize], w.id, "{q}");
            assert_eq!(g.id, format!("{}:{p}", w.url));
            assert_eq!((&g.title, &g.url, g.score), (&w.title, &w.url, w.score));
            assert_eq!(g.text, w.text);
            assert!(!g.text.is_empty());
            // `split` keeps an index's title as the page title, with no heading.
            let (page_title, heading) = (w.title.clone(), String::new());
            assert_eq!(section_title(&page_title, &heading), g.title);
            let chunk = fx.chunk_of(p).unwrap();
            let expected = InBundle {
                passage: p,
                chunk,
                page_title,
                heading,
            };
            assert_eq!(place, &expected);
            assert_eq!(w.fragment, None);
            compared += 1;
        }
    }
    assert!(compared >= 10, "{compared} hits compared");
    // A fragment whose chunk is not loaded is found with an empty text, the rest as before.
    let f = split(&ix, &small()).unwrap();
    let mut bare = FragmentedIndex::from_core(&f.core).unwrap();
    for s in &f.shards {
        bare.add_shard(s).unwrap();
    }
    let loaded = Searcher::find(&fx, None, "borrow", 5, &opts).unwrap();
    let unloaded = Searcher::find(&bare, None, "borrow", 5, &opts).unwrap();
    for (u, l) in unloaded.iter().zip(&loaded) {
        assert_eq!(u.text, "");
        assert_eq!((&u.id, &u.fragment), (&l.id, &l.fragment));
    }
}

/// A bundle's hits carry the page title and heading the builder was given, apart, and the
/// display title made of them by the one rule (`lightembed_title::section_title`, ingestion's):
/// `Heading — Page`, the page alone without a heading or when the page title starts with it —
/// dashes inside a Sphinx page title are kept, never split.
#[test]
fn hits_are_titled_from_their_page_title_and_heading() {
    use lightembed_index::fragments::Builder;
    let page = "Install — Garden 1.0 documentation";
    let sections = [
        ("a.html", page, "", "compost intro"),
        ("a.html#win", page, "Windows", "compost windows setup"),
        ("a.html#i", page, "Install", "compost install again"),
    ];
    let mut b = Builder::new(fields(), true).unwrap();
    for (i, (url, page_title, heading, text)) in sections.iter().enumerate() {
        let mut v = [0.1f32; DIMS];
        v[i] = 1.0;
        let doc = Document::new(format!("p{i}"), "unused title", *url, *text);
        b.push_section(doc, &v, text, page_title, heading).unwrap();
    }
    let f = b.finish(&small()).unwrap();
    let mut ix = FragmentedIndex::from_core(&f.core).unwrap();
    for s in &f.shards {
        ix.add_shard(s).unwrap();
    }
    let opts = SearchOptions {
        mode: Mode::Keyword,
        ..SearchOptions::default()
    };
    let mut hits = ix.query(None, "compost", 10, &opts).unwrap();
    hits.sort_by_key(|h| h.passage);
    let got: Vec<(&str, &str, &str, &str)> = hits
        .iter()
        .map(|h| {
            (
                h.url.as_str(),
                h.title.as_str(),
                h.page_title.as_str(),
                h.heading.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a.html", page, page, ""),
            (
                "a.html#win",
                "Windows — Install — Garden 1.0 documentation",
                page,
                "Windows"
            ),
            ("a.html#i", page, page, "Install"),
        ]
    );
}
