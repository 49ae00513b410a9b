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
    assert_eq!(hits[..3], index.exact_search(&q, 3).unwrap());
    // hits 4 and 5 are copies: any two of them are right (they tie)
    assert!(hits[3..].iter().all(|h| h.id.starts_with("dup-")));
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
    let mut rng = Rng::new(0xB011_E2B1_A7E0);
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

/// Copies that differ only by float noise (a few `f32` steps per component, as two code paths
/// summing in another order would give) behave like exact copies and must not trap the search
/// either: 400 of them, then a tight group of three distinct vectors next to them.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn near_identical_copies_do_not_hide_later_documents() {
    const DIMS: usize = 8;
    let mut rng = Rng::new(7);
    let mut base: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
    normalize(&mut base);
    let mut index = Index::new(fields(DIMS), Params::default()).unwrap();
    for i in 0..400 {
        let mut v: Vec<f32> = base.iter().map(|x| x + 1e-7 * rng.normal()).collect();
        normalize(&mut v);
        index.insert(doc(&format!("near-{i}")), &v).unwrap();
    }
    // later documents: a tight group just off the copies
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

/// Copies mixed into 300 seeded random vectors (100 copies first, then one after every third
/// random vector): random queries get the exact top 10, and the build stays deterministic and
/// round-trips.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn duplicates_among_random_vectors_keep_recall_and_determinism() {
    const DIMS: usize = 8;
    let build = || {
        let mut rng = Rng::new(42);
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
    // Copies tie, so compare scores, not ids: the k-th hit must score as the k-th true neighbour.
    let mut rng = Rng::new(4242);
    let mut exact = 0;
    for _ in 0..50 {
        let q: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
        let truth = index.exact_search(&q, 10).unwrap();
        let got = index.search(&q, 10).unwrap();
        assert_eq!(got, loaded.search(&q, 10).unwrap());
        if got.len() == 10 && got.iter().zip(&truth).all(|(g, t)| g.score == t.score) {
            exact += 1;
        }
    }
    assert_eq!(exact, 50, "{exact}/50 queries got the exact top 10");
}

/// Deleting most copies leaves tombstones that are walked through: the live copies behind them
/// are still found (no compaction here, so the graph keeps every tombstone).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn live_copies_behind_tombstoned_copies_are_found() {
    const DIMS: usize = 16;
    let mut rng = Rng::new(0x70BB);
    let mut boilerplate: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
    normalize(&mut boilerplate);
    let params = Params {
        compaction_threshold: 1.0,
        ..Params::default()
    };
    let mut index = Index::new(fields(DIMS), params).unwrap();
    for i in 0..310 {
        index.insert(doc(&format!("bp-{i}")), &boilerplate).unwrap();
        if i % 2 == 0 {
            let v: Vec<f32> = (0..DIMS).map(|_| rng.normal()).collect();
            index.insert(doc(&format!("rnd-{i}")), &v).unwrap();
        }
    }
    for i in 0..300 {
        assert!(index.delete(&format!("bp-{i}")));
    }
    assert_graph_search(&index);
    let hits = index.search(&boilerplate, 10).unwrap();
    let live: BTreeSet<String> = (300..310).map(|i| format!("bp-{i}")).collect();
    assert_eq!(ids(&hits), live);
}
