//! Recall regression on a fixed seeded set, and exact search as ground truth.

mod common;

use common::{build, clustered, recall_at};
use lightembed_index::Params;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

/// 5,000 clustered 32-d vectors, default M: recall@10 ≥ 0.95 at the default ef_search.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn recall_at_10_on_5k_clustered_vectors() {
    let data = clustered(42, 5_000, 32, 50, 0.8);
    let queries = clustered(4242, 200, 32, 50, 0.8);
    let params = Params {
        ef_construction: 100,
        ..Params::default()
    };
    let index = build(&data, params);
    let r = recall_at(&index, &queries, 10, params.ef_search);
    eprintln!("recall@10 = {r:.4}");
    assert!(r >= 0.95, "recall@10 = {r:.4} < 0.95");
}

/// The index's own vectors are found first (self-recall@1).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_vector_finds_itself() {
    let data = clustered(1, 1_000, 16, 10, 1.0);
    let index = build(&data, Params::default());
    let mut found = 0;
    for (i, v) in data.iter().enumerate() {
        let hits = index.search(v, 1).unwrap();
        if hits[0].id == format!("doc-{i}") || (hits[0].score - 1.0).abs() < 1e-6 {
            found += 1;
        }
    }
    assert!(found >= 995, "self-recall@1 {found}/1000");
}

/// exact_search is a true top-k: sorted, and nothing outside it scores higher.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn exact_search_is_exact_top_k() {
    let data = clustered(3, 300, 12, 5, 1.0);
    let index = build(&data, Params::default());
    let q = &clustered(33, 1, 12, 5, 1.0)[0];
    let hits = index.exact_search(q, 10).unwrap();
    assert_eq!(hits.len(), 10);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let kth = hits[9].score;
    let mut all: Vec<f32> = data
        .iter()
        .map(|v| v.iter().zip(q).map(|(a, b)| a * b).sum())
        .collect();
    all.sort_by(|a, b| b.total_cmp(a));
    assert!(
        (all[9] - kth).abs() < 1e-5,
        "10th best {} vs exact_search {}",
        all[9],
        kth
    );
    // with a beam covering every slot, search is exact too
    let approx = index.search_with_ef(q, 10, 300).unwrap();
    assert_eq!(approx, hits);
}

/// Recall holds with many tombstones (no compaction): deleted documents are never returned.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn recall_with_tombstones() {
    let data = clustered(5, 2_000, 24, 20, 0.8);
    let queries = clustered(55, 100, 24, 20, 0.8);
    let params = Params {
        ef_construction: 100,
        compaction_threshold: 1.0,
        ..Params::default()
    };
    let mut index = build(&data, params);
    for i in (0..2_000).step_by(3) {
        assert!(index.delete(&format!("doc-{i}")));
    }
    for q in &queries {
        for h in index.search(q, 10).unwrap() {
            let i: usize = h.id[4..].parse().unwrap();
            assert_ne!(i % 3, 0, "deleted {} returned", h.id);
        }
    }
    let r = recall_at(&index, &queries, 10, params.ef_search);
    eprintln!("recall@10 with tombstones = {r:.4}");
    assert!(r >= 0.95, "recall@10 with tombstones = {r:.4}");
}
