//! The public API: insert, delete, compaction, search arguments and errors.

mod common;

use common::{build, clustered, doc, fields};
use lightembed_index::{Document, Index, IndexError, Params, Payload};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn hits_carry_id_score_and_payload() {
    let mut index = Index::new(fields(3), Params::default()).unwrap();
    index
        .insert(
            Document::new("a", "Apples", "/a", "Red fruit."),
            &[2.0, 0.0, 0.0],
        )
        .unwrap();
    index
        .insert(
            Document::new("b", "Bananas", "/b", "Yellow fruit."),
            &[0.0, 3.0, 0.0],
        )
        .unwrap();
    let hits = index.search(&[1.0, 1.0, 0.0], 2).unwrap();
    assert_eq!(hits.len(), 2);
    // equal scores: insertion order breaks the tie
    assert_eq!(hits[0].id, "a");
    assert!((hits[0].score - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    assert_eq!(
        hits[1].payload,
        Payload {
            title: "Bananas".into(),
            url: "/b".into(),
            snippet: "Yellow fruit.".into()
        }
    );
    // stored vectors are unit length
    assert_eq!(index.vector("a").unwrap(), &[1.0, 0.0, 0.0]);
    assert_eq!(index.manifest().count, 2);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn argument_errors() {
    let mut index = Index::new(fields(3), Params::default()).unwrap();
    index.insert(doc(0), &[1.0, 0.0, 0.0]).unwrap();
    let e = index.insert(doc(1), &[1.0, 0.0]).unwrap_err();
    assert_eq!(
        e,
        IndexError::VectorDims {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "vector has 2 dimensions but the index holds 3-dimensional vectors"
    );
    assert_eq!(
        index.insert(doc(1), &[f32::NAN, 0.0, 0.0]).unwrap_err(),
        IndexError::NonFiniteVector
    );
    let e = index.insert(doc(0), &[0.0, 1.0, 0.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "a document with id \"doc-0\" is already in the index"
    );
    assert!(matches!(
        index.search(&[1.0; 4], 1),
        Err(IndexError::VectorDims { .. })
    ));
    assert!(matches!(
        index.exact_search(&[f32::INFINITY, 0.0, 0.0], 1),
        Err(IndexError::NonFiniteVector)
    ));
    assert_eq!(index.search(&[1.0, 0.0, 0.0], 0).unwrap(), vec![]);
    // failed inserts changed nothing
    assert_eq!(index.len(), 1);
    let bad = |p: Params| Index::new(fields(3), p).unwrap_err().to_string();
    assert_eq!(
        bad(Params {
            m: 1,
            ..Params::default()
        }),
        "invalid M: 1 is outside 2..=128"
    );
    assert_eq!(
        bad(Params {
            ef_search: 0,
            ..Params::default()
        }),
        "invalid ef_search: 0 is outside 1..=100000"
    );
    assert_eq!(
        bad(Params {
            compaction_threshold: 0.0,
            ..Params::default()
        }),
        "invalid compaction_threshold: 0 is outside (0, 1]"
    );
    assert!(index.set_ef_search(0).is_err());
    index.set_ef_search(128).unwrap();
    assert_eq!(index.params().ef_search, 128);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn zero_vector_is_accepted() {
    // spec: empty text embeds to a valid vector; a zero vector scores 0 against everything
    let mut index = Index::new(fields(2), Params::default()).unwrap();
    index.insert(doc(0), &[0.0, 0.0]).unwrap();
    index.insert(doc(1), &[1.0, 0.0]).unwrap();
    let hits = index.search(&[1.0, 0.0], 2).unwrap();
    assert_eq!(hits[0].id, "doc-1");
    assert_eq!(hits[1].score, 0.0);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn delete_and_reinsert() {
    let data = clustered(2, 200, 8, 4, 0.5);
    let mut index = build(
        &data,
        Params {
            compaction_threshold: 1.0,
            ..Params::default()
        },
    );
    assert!(index.delete("doc-7"));
    assert!(!index.delete("doc-7"));
    assert!(!index.delete("nope"));
    assert!(!index.contains("doc-7"));
    assert_eq!(index.get("doc-7"), None);
    assert_eq!(
        (index.len(), index.deleted_count(), index.manifest().count),
        (199, 1, 199)
    );
    let hits = index.search(&data[7], 10).unwrap();
    assert!(hits.iter().all(|h| h.id != "doc-7"));
    // the id is free again; the new vector is found
    index.insert(doc(7), &data[8]).unwrap();
    let hits = index.search(&data[8], 2).unwrap();
    assert!(hits.iter().any(|h| h.id == "doc-7"));
    assert_eq!(index.documents().count(), 200);
    assert_eq!(index.documents().last().unwrap().id, "doc-7");
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn compaction_drops_tombstones_past_the_threshold() {
    let data = clustered(4, 100, 8, 4, 0.5);
    let mut index = build(
        &data,
        Params {
            compaction_threshold: 0.2,
            ..Params::default()
        },
    );
    for i in 0..20 {
        assert!(index.delete(&format!("doc-{i}")));
    }
    // 20 of 100 slots is not above 0.2
    assert_eq!(index.deleted_count(), 20);
    assert!(index.delete("doc-20"));
    assert_eq!(index.deleted_count(), 0);
    assert_eq!(index.len(), 79);
    for (i, v) in data.iter().enumerate().skip(21) {
        assert_eq!(index.exact_search(v, 1).unwrap()[0].id, format!("doc-{i}"));
        assert_eq!(index.search(v, 1).unwrap()[0].id, format!("doc-{i}"));
    }
    // compaction is deterministic and survives a round trip
    let bytes = index.to_bytes();
    assert_eq!(Index::from_bytes(&bytes).unwrap().to_bytes(), bytes);
    // explicit compaction of a clean index is a no-op
    index.compact();
    assert_eq!(index.to_bytes(), bytes);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn deleting_everything_leaves_an_empty_index() {
    let data = clustered(6, 50, 4, 2, 0.5);
    for threshold in [0.5, 1.0] {
        let mut index = build(
            &data,
            Params {
                compaction_threshold: threshold,
                ..Params::default()
            },
        );
        for i in 0..50 {
            assert!(index.delete(&format!("doc-{i}")));
        }
        assert!(index.is_empty());
        assert_eq!(index.search(&data[0], 5).unwrap(), vec![]);
        assert_eq!(index.exact_search(&data[0], 5).unwrap(), vec![]);
        let loaded = Index::from_bytes(&index.to_bytes()).unwrap();
        assert!(loaded.is_empty());
        let mut index = loaded;
        index.insert(doc(0), &data[0]).unwrap();
        assert_eq!(index.search(&data[0], 1).unwrap()[0].id, "doc-0");
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn small_collections_search_exactly() {
    // with no more slots than the beam, search is a brute-force scan
    let data = clustered(9, 60, 8, 3, 1.0);
    let index = build(&data, Params::default());
    for q in clustered(10, 20, 8, 3, 1.0) {
        assert_eq!(
            index.search(&q, 10).unwrap(),
            index.exact_search(&q, 10).unwrap()
        );
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn index_is_send_sync_clone() {
    fn assert_traits<T: Send + Sync + Clone>() {}
    assert_traits::<Index>();
    let index = build(&clustered(1, 10, 4, 2, 0.5), Params::default());
    assert_eq!(index.clone().to_bytes(), index.to_bytes());
}
