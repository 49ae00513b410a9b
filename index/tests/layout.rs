//! The byte layout: round trips, and every truncation / corruption rejected cleanly.

mod common;

use common::{clustered, fields, small_index, Rng};
use lightembed_index::{layout::MAGIC, Index, IndexError, Params};
use sha2::{Digest, Sha256};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

/// Replaces the trailer with the SHA-256 of `body` (so the parser, not the checksum, is tested).
fn rehash(mut body: Vec<u8>) -> Vec<u8> {
    let d = Sha256::digest(&body);
    body.extend_from_slice(&d);
    body
}

/// Searches a loaded index a little: anything that loads must search without panicking.
fn exercise(index: &Index) {
    let q = vec![0.5; index.dims()];
    let _ = index.search(&q, 5).unwrap();
    let _ = index.search_with_ef(&q, 3, 1).unwrap();
    let _ = index.exact_search(&q, 5).unwrap();
    let _ = index.keyword_search("t1 s2 uni doc", 5);
    let _ = index.to_bytes();
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn pieces_concatenate_to_the_bytes_and_the_bound_holds() {
    let mut int8 = Index::new(fields(16), Params::default()).unwrap();
    int8.set_int8_vectors(true).unwrap();
    for (i, v) in clustered(3, 200, 16, 4, 0.2).iter().enumerate() {
        let d = lightembed_index::Document::new(format!("d{i}"), "t", format!("/p{i}"), "snippet");
        int8.insert_with_text(d, v, &format!("word{} shared words", i % 17))
            .unwrap();
    }
    for index in [small_index(), int8] {
        let bytes = index.to_bytes();
        assert!(
            bytes.len() <= index.serialized_len_bound(),
            "{} > bound {}",
            bytes.len(),
            index.serialized_len_bound()
        );
        // The bound is tight enough to size a buffer by (within a few keyword varints).
        assert!(index.serialized_len_bound() < 2 * bytes.len() + 1024);
        for chunk in [1, 7, 100, 4096, 1 << 20] {
            let mut pieces: Vec<Vec<u8>> = Vec::new();
            index.write_chunks(chunk, &mut |p| pieces.push(p.to_vec()));
            assert_eq!(pieces.concat(), bytes, "chunk {chunk}");
            assert_eq!(
                pieces.last().unwrap().len(),
                32,
                "the trailer comes last, alone"
            );
            if chunk >= 4096 {
                // No piece but the trailer and the last one is far below the chunk size.
                assert!(
                    pieces.len() <= bytes.len() / chunk + 2,
                    "chunk {chunk}: {} pieces",
                    pieces.len()
                );
            }
        }
        Index::from_bytes(&bytes).unwrap();
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn round_trip_is_byte_identical() {
    let index = small_index();
    let bytes = index.to_bytes();
    assert_eq!(&bytes[..4], &MAGIC);
    let loaded = Index::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    assert_eq!(loaded.len(), index.len());
    assert_eq!(loaded.deleted_count(), 3);
    assert_eq!(loaded.manifest(), index.manifest());
    assert_eq!(loaded.params(), index.params());
    let q = &clustered(99, 1, 4, 4, 0.5)[0];
    assert_eq!(loaded.search(q, 5).unwrap(), index.search(q, 5).unwrap());
    assert_eq!(loaded.get("doc-5"), index.get("doc-5"));
    assert_eq!(loaded.vector("doc-5"), index.vector("doc-5"));
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn empty_index_round_trips() {
    let index = Index::new(fields(4), Params::default()).unwrap();
    let bytes = index.to_bytes();
    let loaded = Index::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    assert!(loaded.is_empty());
    assert_eq!(loaded.search(&[1.0, 0.0, 0.0, 0.0], 3).unwrap(), vec![]);
}

/// Inserting after a load gives exactly what inserting without the save/load would have (the
/// PRNG state travels with the bytes).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn insert_after_load_continues_identically() {
    let extra = clustered(11, 30, 4, 4, 0.5);
    let mut a = small_index();
    let mut b = Index::from_bytes(&a.to_bytes()).unwrap();
    for (i, v) in extra.iter().enumerate() {
        a.insert(common::doc(1000 + i), v).unwrap();
        b.insert(common::doc(1000 + i), v).unwrap();
    }
    assert_eq!(a.to_bytes(), b.to_bytes());
}

/// Every prefix of a valid index is rejected with an error (never a panic).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_truncation_is_rejected() {
    let bytes = small_index().to_bytes();
    for len in 0..bytes.len() {
        let err = Index::from_bytes(&bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                IndexError::Truncated { .. } | IndexError::ChecksumMismatch
            ),
            "len {len}: {err}"
        );
    }
}

/// Every truncation of the body with a *valid* checksum is rejected by the parser's length checks.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_truncation_with_valid_checksum_is_rejected() {
    let bytes = small_index().to_bytes();
    let body = &bytes[..bytes.len() - 32];
    for len in 8..body.len() {
        let err = Index::from_bytes(&rehash(body[..len].to_vec())).unwrap_err();
        assert!(
            matches!(
                err,
                IndexError::Truncated { .. } | IndexError::Malformed { .. }
            ),
            "len {len}: {err}"
        );
        assert!(!err.to_string().is_empty());
    }
}

/// Every single-bit flip is caught: by the magic, the version, or the checksum.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn every_bit_flip_is_rejected() {
    let bytes = small_index().to_bytes();
    let mut copy = bytes.clone();
    for byte in 0..bytes.len() {
        for bit in 0..8 {
            copy[byte] ^= 1 << bit;
            let err = Index::from_bytes(&copy).unwrap_err();
            assert!(
                matches!(
                    err,
                    IndexError::BadMagic { .. }
                        | IndexError::UnsupportedIndexVersion { .. }
                        | IndexError::ChecksumMismatch
                        | IndexError::Malformed {
                            what: "header flags",
                            ..
                        }
                ),
                "byte {byte} bit {bit}: {err}"
            );
            copy[byte] ^= 1 << bit;
        }
    }
}

/// Bit flips behind a recomputed checksum reach the parser: each either fails cleanly or loads
/// an index that searches and re-serialises without panicking.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn bit_flips_with_valid_checksum_never_panic() {
    let bytes = small_index().to_bytes();
    let body = bytes[..bytes.len() - 32].to_vec();
    let mut loaded = 0;
    for byte in 8..body.len() {
        for bit in 0..8 {
            let mut b = body.clone();
            b[byte] ^= 1 << bit;
            match Index::from_bytes(&rehash(b)) {
                Ok(index) => {
                    exercise(&index);
                    loaded += 1;
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
    // flips in vector components, payload text, seed/PRNG state are legitimately loadable
    assert!(loaded > 0);
}

/// Random multi-byte garbage behind a valid checksum.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn random_corruption_never_panics() {
    let bytes = small_index().to_bytes();
    let body = bytes[..bytes.len() - 32].to_vec();
    let mut rng = Rng::new(2024);
    for _ in 0..2_000 {
        let mut b = body.clone();
        for _ in 0..1 + rng.below(8) {
            let i = 8 + rng.below(b.len() - 8);
            b[i] = rng.next_u64() as u8;
        }
        if let Ok(index) = Index::from_bytes(&rehash(b)) {
            exercise(&index);
        }
    }
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn wrong_magic_and_garbage_are_rejected() {
    let mut bytes = small_index().to_bytes();
    bytes[..4].copy_from_slice(b"LEMB");
    assert_eq!(
        Index::from_bytes(&bytes).unwrap_err(),
        IndexError::BadMagic {
            found: b"LEMB".to_vec()
        }
    );
    assert_eq!(
        Index::from_bytes(&bytes).unwrap_err().to_string(),
        "not a lightembed index: expected magic \"LEIX\", found [4c, 45, 4d, 42] (this is a lightembed model: pass it as --model)"
    );
    bytes[..4].copy_from_slice(b"{\n  ");
    assert_eq!(
        Index::from_bytes(&bytes).unwrap_err().to_string(),
        "not a lightembed index: expected magic \"LEIX\", found [7b, 0a, 20, 20] (this looks like JSON: pass the index folder or its index.bin)"
    );
    bytes[..4].copy_from_slice(b"LEIY");
    assert_eq!(
        Index::from_bytes(&bytes).unwrap_err().to_string(),
        "not a lightembed index: expected magic \"LEIX\", found [4c, 45, 49, 59]"
    );
    assert!(matches!(
        Index::from_bytes(b"").unwrap_err(),
        IndexError::Truncated { .. }
    ));
    assert!(matches!(
        Index::from_bytes(b"LE").unwrap_err(),
        IndexError::Truncated { .. }
    ));
    assert!(matches!(
        Index::from_bytes(b"<html>").unwrap_err(),
        IndexError::BadMagic { .. }
    ));
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn checksum_mismatch_message() {
    let mut bytes = small_index().to_bytes();
    let n = bytes.len();
    bytes[n - 1] ^= 0xFF;
    let err = Index::from_bytes(&bytes).unwrap_err();
    assert_eq!(err, IndexError::ChecksumMismatch);
    assert_eq!(
        err.to_string(),
        "index bytes are corrupted: the trailing SHA-256 does not match the contents"
    );
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn trailing_bytes_are_rejected() {
    let bytes = small_index().to_bytes();
    let mut body = bytes[..bytes.len() - 32].to_vec();
    body.extend_from_slice(&[0, 0, 0]);
    assert_eq!(
        Index::from_bytes(&rehash(body)).unwrap_err(),
        IndexError::TrailingBytes { count: 3 }
    );
}

/// Huge length fields are refused before any allocation (here: 2³²−2 slots of 65,535 dims).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn absurd_lengths_are_refused_before_allocating() {
    let index = Index::new(fields(4), Params::default()).unwrap();
    let bytes = index.to_bytes();
    let body = &bytes[..bytes.len() - 32];
    // header 8 + id len 1 + "lightembed-en" 13 + version 4 → dims at 26
    let dims_at = 8 + 1 + 13 + 4;
    // params after dims(4) count(8) metric(1) sha(32) = +45; params are 2+4+4+8+4+8 = 30; slots follow
    let slots_at = dims_at + 45 + 30;
    let mut b = body.to_vec();
    b[dims_at..dims_at + 4].copy_from_slice(&65_535u32.to_le_bytes());
    b[slots_at..slots_at + 4].copy_from_slice(&(u32::MAX - 1).to_le_bytes());
    let err = Index::from_bytes(&rehash(b)).unwrap_err();
    assert!(
        matches!(
            err,
            IndexError::Truncated {
                what: "vectors",
                ..
            }
        ),
        "{err}"
    );
    // a long string length (the last snippet, just before the keywords section)
    let mut b = small_index().to_bytes();
    b.truncate(b.len() - 32);
    let snippet = "ünï ✓".as_bytes();
    let payload_len_at = b
        .windows(snippet.len())
        .rposition(|w| w == snippet)
        .unwrap()
        - 4;
    b[payload_len_at..payload_len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Index::from_bytes(&rehash(b)).unwrap_err();
    assert!(
        matches!(
            err,
            IndexError::Truncated {
                what: "document snippet",
                ..
            }
        ),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("index bytes are truncated: document snippet at byte"));
}

/// Same seed, same inserts → identical bytes; another seed → a different graph.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn builds_are_deterministic() {
    assert_eq!(small_index().to_bytes(), small_index().to_bytes());
    let data = clustered(8, 200, 8, 4, 0.5);
    let a = common::build(&data, Params::default()).to_bytes();
    let b = common::build(&data, Params::default()).to_bytes();
    let c = common::build(
        &data,
        Params {
            seed: 1,
            ..Params::default()
        },
    )
    .to_bytes();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// The layout fixture is small (fast exhaustive tests) yet has tombstones and upper layers.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn fixture_has_tombstones_and_several_layers() {
    let index = small_index();
    let bytes = index.to_bytes();
    // header 8 + manifest (1 + 13 + 4 + 4 + 8 + 1 + 32) + params 30 + slots 4 + vectors 24·4·4
    // + tombstones 3 + entry point 4 → max level
    let max_level_at = 8 + 63 + 30 + 4 + 24 * 4 * 4 + 3 + 4;
    assert!(
        bytes[max_level_at] >= 2,
        "max level {}",
        bytes[max_level_at]
    );
    assert_eq!(index.deleted_count(), 3);
    assert_eq!(index.len(), 21);
    assert!(bytes.len() < 2_200, "fixture grew to {} bytes", bytes.len());
}

/// The same inserts with the same seed give the same bytes on every target (native and wasm32
/// run this test against one digest): level draws use integer arithmetic only and the inner
/// product sums in a fixed order.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn bytes_are_identical_across_targets() {
    let data = clustered(77, 300, 24, 6, 0.7);
    let params = Params {
        m: 6,
        ef_construction: 40,
        ef_search: 16,
        seed: 99,
        compaction_threshold: 0.3,
    };
    let mut index = common::build(&data, params);
    for i in (0..300).step_by(3) {
        index.delete(&format!("doc-{i}"));
    }
    let hex: String = Sha256::digest(index.to_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(index.deleted_count() < 100, "compaction ran");
    assert_eq!(
        hex,
        // index_version 2 (keywords section). Without that section and with version 1 in the
        // header these bytes hash to 22d8775a…737f86, the index_version 1 digest; with keyword
        // flags 1 instead of 3 (before bit 1, `ı` folded to `i`) to a08dc2ed…2f3db3.
        "7a6cd5e37ef9b3a6fb451409771b523968a50fc634ff91c3b3992c11f2c6e223"
    );
}
