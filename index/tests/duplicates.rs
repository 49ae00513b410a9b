//! Exact (and float-noise-identical) duplicate vectors must not trap the HNSW search: a crowd
//! of copies all at distance 0 from each other used to fill every neighbour list, so the links to
//! documents inserted afterwards were pruned away and those documents became unreachable.
//!
//! Every index here holds more slots than the search beam, so `search` really walks the graph
//! (with no more slots than the beam it is an exact scan and hides the bug).

mod common;

use std::collections::BTreeSet;

use common::{fields, normalize, Rng};
use lightembed_index::{Document, Index, Params};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

fn doc(id: &str) -> Document {
    Document::new(id, format!("T {id}"), format!("/{id}"), "")
}

fn ids(hits: &[lightembed_index::Hit]) -> BTreeSet<String> {
    hits.iter().map(|h| h.id.clone()).collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// Asserts that `index` holds more slots than the search beam (so `search` is not an exact scan).
fn assert_graph_search(index: &Index) {
    assert!(
        index.len() > index.params().ef_search,
        "{} slots ≤ ef_search {}: search would be exhaustive",
        index.len(),
        index.params().ef_search
    );
}

/// The tracker's reproduction: `2·M + 8` copies of one vector (ids `dup-0 …`), padded with more
/// copies until the index exceeds the exhaustive-search threshold, then three distinct vectors
/// near each other. A query next to them must return all three first.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn distinct_vectors_inserted_after_many_duplicates_are_found() {
    let params = Params::default();
    let n_dup = (2 * params.m + 8).max(params.ef_search + 24);
    let mut index = Index::new(fields(4), params).unwrap();
    for i in 0..n_dup {
        index
            .insert(doc(&format!("dup-{i}")), &[1.0, 1.0, 1.0, 1.0])
            .unwrap();
    }
    index.insert(doc("a"), &[2.0, 1.0, 1.0, 1.0]).unwrap();
    index.insert(doc("b"), &[2.1, 1.0, 1.0, 1.0]).unwrap();
    index.insert(doc("c"), &[1.9, 1.0, 1.0, 1.0]).unwrap();
    assert_graph_search(&index);

    let q = [2.05, 1.0, 1.0, 1.0];
    let hits = index.search(&q, 5).unwrap();
    assert_eq!(ids(&hits[..3]), set(&["a", "b", "c"]), "hits {hits:?}");
    assert_eq!(hits, index.exact_search(&q, 5).unwrap());
    // each distinct document is its own nearest neighbour
    for id in ["a", "b", "c"] {
        let v = index.vector(id).unwrap().to_vec();
        assert_eq!(index.search(&v, 1).unwrap()[0].id, id);
    }
    // the duplicates are still found too: every one of the top 10 is a copy (score 1)
    let hits = index.search(&[1.0, 1.0, 1.0, 1.0], 10).unwrap();
    assert_eq!(hits.len(), 10);
    assert!(
        hits.iter()
            .all(|h| h.id.starts_with("dup-") && (h.score - 1.0).abs() < 1e-6),
        "{hits:?}"
    );
}

/// 310 identical "boilerplate" vectors (e.g. a cookie banner embedded on every page) and 4 real
/// passages: a query near the real passages must return them first, and a query at one real
/// passage must return that passage first, whatever the insertion order.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn real_passages_beat_310_identical_boilerplate_vectors() {
    const DIMS: usize = 16;
    let mut rng = Rng(0xB011_E2B1_A7E0);
    let mut boilerplate: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
    normalize(&mut boilerplate);
    let mut centre: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
    normalize(&mut centre);
    let real: Vec<Vec<f32>> = (0..4)
        .map(|_| {
            let mut v: Vec<f32> = centre.iter().map(|x| x + 0.1 * rng.normal()).collect();
            normalize(&mut v);
            v
        })
        .collect();
    let names = ["real-0", "real-1", "real-2", "real-3"];
    // insertion position of each real passage among the 314 slots
    let orders: [[usize; 4]; 3] = [[310, 311, 312, 313], [0, 100, 200, 313], [0, 1, 2, 3]];
    for order in orders {
        let mut index = Index::new(fields(DIMS), Params::default()).unwrap();
        let mut next_dup = 0;
        for slot in 0..314 {
            if let Some(r) = order.iter().position(|&p| p == slot) {
                index.insert(doc(names[r]), &real[r]).unwrap();
            } else {
                index
                    .insert(doc(&format!("boilerplate-{next_dup}")), &boilerplate)
                    .unwrap();
                next_dup += 1;
            }
        }
        assert_eq!(next_dup, 310);
        assert_graph_search(&index);

        let hits = index.search(&centre, 4).unwrap();
        assert_eq!(ids(&hits), set(&names), "order {order:?}: {hits:?}");
        assert_eq!(hits, index.exact_search(&centre, 4).unwrap());
        for (r, v) in real.iter().enumerate() {
            let hits = index.search(v, 1).unwrap();
            assert_eq!(hits[0].id, names[r], "order {order:?}");
        }
        let hits = index.search(&boilerplate, 5).unwrap();
        assert!(hits.iter().all(|h| h.id.starts_with("boilerplate-")));
    }
}

/// Copies that differ only by float noise (cosine distance ≈ 1e-8, below `f32` resolution near
/// 1) behave like exact copies and must not trap the search either; a few hundred seeded random
/// vectors around them make the graph a realistic one.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn near_identical_copies_do_not_hide_later_documents() {
    const DIMS: usize = 8;
    let mut rng = Rng(7);
    let mut base: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
    normalize(&mut base);
    let mut index = Index::new(fields(DIMS), Params::default()).unwrap();
    for i in 0..150 {
        let mut v: Vec<f32> = base.iter().map(|x| x + 3e-5 * rng.normal()).collect();
        normalize(&mut v);
        index.insert(doc(&format!("near-{i}")), &v).unwrap();
    }
    // later documents: a tight group just off the copies, then random background
    let mut group_centre: Vec<f32> = base.clone();
    group_centre[0] += 0.3;
    normalize(&mut group_centre);
    let group: Vec<Vec<f32>> = (0..3)
        .map(|_| {
            let mut v: Vec<f32> = group_centre
                .iter()
                .map(|x| x + 0.02 * rng.normal())
                .collect();
            normalize(&mut v);
            v
        })
        .collect();
    for (i, v) in group.iter().enumerate() {
        index.insert(doc(&format!("group-{i}")), v).unwrap();
    }
    assert_graph_search(&index);
    let hits = index.search(&group_centre, 3).unwrap();
    assert_eq!(
        ids(&hits),
        set(&["group-0", "group-1", "group-2"]),
        "{hits:?}"
    );
    assert_eq!(hits, index.exact_search(&group_centre, 3).unwrap());
}

/// Duplicates mixed into a few hundred seeded random vectors: recall stays exact on queries near
/// later distinct documents, and the build stays deterministic and round-trips.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn duplicates_among_random_vectors_keep_recall_and_determinism() {
    const DIMS: usize = 8;
    let build = || {
        let mut rng = Rng(42);
        let mut index = Index::new(fields(DIMS), Params::default()).unwrap();
        let dup = [1.0f32; DIMS];
        for i in 0..100 {
            index.insert(doc(&format!("dup-{i}")), &dup).unwrap();
        }
        for i in 0..300 {
            let v: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
            index.insert(doc(&format!("rnd-{i}")), &v).unwrap();
            if i % 3 == 0 {
                index.insert(doc(&format!("dup-x{i}")), &dup).unwrap();
            }
        }
        index
    };
    let index = build();
    assert_graph_search(&index);
    let bytes = index.to_bytes();
    assert_eq!(build().to_bytes(), bytes);
    let loaded = Index::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    let mut rng = Rng(4242);
    let mut found = 0;
    for _ in 0..50 {
        let q: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
        let truth = ids(&index.exact_search(&q, 10).unwrap());
        let got = ids(&index.search(&q, 10).unwrap());
        let f = got.intersection(&truth).count();
        if f < 10 {
            let t: Vec<(String, f32)> = index
                .exact_search(&q, 12)
                .unwrap()
                .into_iter()
                .map(|h| (h.id, h.score))
                .collect();
            let g: Vec<(String, f32)> = index
                .search(&q, 10)
                .unwrap()
                .into_iter()
                .map(|h| (h.id, h.score))
                .collect();
            let g2 = ids(&index.search_with_ef(&q, 10, 200).unwrap())
                .intersection(&truth)
                .count();
            let g3 = ids(&index.search_with_ef(&q, 10, 400).unwrap())
                .intersection(&truth)
                .count();
            eprintln!("miss {f} (ef200 {g2}, ef400 {g3}): truth {t:?}\n got {g:?}");
        }
        found += f;
        assert_eq!(
            index.search(&q, 10).unwrap(),
            loaded.search(&q, 10).unwrap()
        );
    }
    assert!(found >= 490, "recall@10 {found}/500");
}
