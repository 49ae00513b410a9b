//! Property tests of insert / delete / search invariants against a plain model (native only).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use common::{doc, fields};
use lightembed_index::{Index, Params};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(usize, Vec<f32>),
    Delete(usize),
    Compact,
    Reload,
}

const DIMS: usize = 6;

fn vector() -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(-1.0f32..1.0, DIMS)
        .prop_filter("non-zero", |v| v.iter().map(|x| x * x).sum::<f32>() > 1e-3)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..40, vector()).prop_map(|(i, v)| Op::Insert(i, v)),
        3 => (0usize..40).prop_map(Op::Delete),
        1 => Just(Op::Compact),
        1 => Just(Op::Reload),
    ]
}

fn params() -> impl Strategy<Value = Params> {
    (
        2usize..8,
        1usize..48,
        1usize..16,
        any::<u64>(),
        prop_oneof![Just(0.3f32), Just(1.0f32)],
    )
        .prop_map(
            |(m, ef_construction, ef_search, seed, compaction_threshold)| Params {
                m,
                ef_construction,
                ef_search,
                seed,
                compaction_threshold,
            },
        )
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// After any sequence of operations the index holds exactly the live documents of a model
    /// map, never returns deleted ones, returns sorted unique hits whose scores are the true
    /// cosines, exact search agrees with brute force over the model, and bytes round-trip.
    #[test]
    fn operations_keep_invariants(params in params(), ops in prop::collection::vec(op(), 1..80), query in vector()) {
        let mut index = Index::new(fields(DIMS), params).unwrap();
        let mut model: BTreeMap<String, Vec<f32>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(i, v) => {
                    let d = doc(i);
                    let r = index.insert(d.clone(), &v);
                    match model.entry(d.id) {
                        Entry::Occupied(_) => prop_assert!(r.is_err()),
                        Entry::Vacant(e) => {
                            prop_assert!(r.is_ok());
                            e.insert(unit(&v));
                        }
                    }
                }
                Op::Delete(i) => {
                    let id = doc(i).id;
                    prop_assert_eq!(index.delete(&id), model.remove(&id).is_some());
                }
                Op::Compact => index.compact(),
                Op::Reload => {
                    let bytes = index.to_bytes();
                    index = Index::from_bytes(&bytes).unwrap();
                    prop_assert_eq!(index.to_bytes(), bytes);
                }
            }
            prop_assert_eq!(index.len(), model.len());
            prop_assert_eq!(index.manifest().count as usize, model.len());
        }
        for (id, v) in &model {
            prop_assert!(index.contains(id));
            let stored = index.vector(id).unwrap();
            prop_assert!(stored.iter().zip(v).all(|(a, b)| (a - b).abs() < 1e-5));
        }
        let q = unit(&query);
        let k = 5;
        let hits = index.search(&q, k).unwrap();
        prop_assert!(hits.len() <= k.min(model.len()));
        prop_assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        let mut seen = std::collections::BTreeSet::new();
        for h in &hits {
            prop_assert!(seen.insert(h.id.clone()), "duplicate hit {}", h.id);
            let v = model.get(&h.id);
            prop_assert!(v.is_some(), "hit {} is not live", h.id);
            let cos: f32 = v.unwrap().iter().zip(&q).map(|(a, b)| a * b).sum();
            prop_assert!((cos - h.score).abs() < 1e-4);
        }
        // exact search = brute force over the model
        let exact = index.exact_search(&q, k).unwrap();
        let mut truth: Vec<f32> = model.values().map(|v| v.iter().zip(&q).map(|(a, b)| a * b).sum()).collect();
        truth.sort_by(|a, b| b.total_cmp(a));
        truth.truncate(k);
        prop_assert_eq!(exact.len(), truth.len());
        for (h, t) in exact.iter().zip(&truth) {
            prop_assert!((h.score - t).abs() < 1e-4);
        }
        // with a beam over every slot, the graph search is exact as well
        let wide = index.search_with_ef(&q, k, 100_000).unwrap();
        prop_assert_eq!(wide, exact);
    }

    /// Every live document is reachable: searching with its own vector and a wide beam finds it.
    #[test]
    fn every_live_document_is_reachable(m in 4usize..10, efc in 0usize..32, seed in any::<u64>(), vs in prop::collection::vec(vector(), 1..120), dels in prop::collection::vec(0usize..120, 0..40)) {
        let params = Params { m, ef_construction: 2 * m + efc, seed, compaction_threshold: 1.0, ..Params::default() };
        let mut index = Index::new(fields(DIMS), params).unwrap();
        for (i, v) in vs.iter().enumerate() {
            index.insert(doc(i), v).unwrap();
        }
        for d in dels {
            index.delete(&doc(d).id);
        }
        for (i, v) in vs.iter().enumerate() {
            let id = doc(i).id;
            if !index.contains(&id) {
                continue;
            }
            let hits = index.search_with_ef(v, index.len(), index.len()).unwrap();
            prop_assert!(hits.iter().any(|h| h.id == id), "{} not reachable", id);
        }
    }
}
