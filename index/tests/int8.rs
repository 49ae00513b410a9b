//! int8 vector storage (`Index::set_int8_vectors`, header flag bit 0): a quarter of the vector
//! bytes, the same search before and after a round trip, exact re-serialisation, malformed codes
//! and scales refused.

use lightembed_index::{Document, Index, IndexError, ManifestFields, Metric, ModelVersion, Params};

const DIMS: usize = 16;

fn fields() -> ManifestFields {
    ManifestFields {
        model_id: "test".into(),
        model_version: ModelVersion::new(1, 0, 0),
        dims: DIMS,
        metric: Metric::Cosine,
        model_sha256: [7; 32],
    }
}

/// Deterministic pseudo-random vectors (xorshift), clustered around 8 centres.
fn vectors(n: usize) -> Vec<Vec<f32>> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let centres: Vec<Vec<f32>> = (0..8)
        .map(|_| (0..DIMS).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|i| centres[i % 8].iter().map(|c| c + 0.3 * next()).collect())
        .collect()
}

fn build(int8: bool, n: usize) -> Index {
    let mut ix = Index::new(fields(), Params::default()).unwrap();
    ix.set_int8_vectors(int8).unwrap();
    for (i, v) in vectors(n).iter().enumerate() {
        let id = format!("d{i}");
        ix.insert_with_text(
            Document::new(&id, "t", format!("/p{i}"), "text"),
            v,
            "some words",
        )
        .unwrap();
    }
    ix
}

#[test]
fn int8_index_is_smaller_and_searches_like_f32() {
    let (f, q) = (build(false, 300), build(true, 300));
    let (fb, qb) = (f.to_bytes(), q.to_bytes());
    // Vectors: 300 × 16 × 4 = 19,200 bytes as f32, 300 × (4 + 16) = 6,000 as int8; the graphs
    // (built on the f32 and on the dequantised vectors) differ by a few links.
    let saved = fb.len() as i64 - qb.len() as i64;
    assert!((saved - 13_200).abs() < 400, "saved {saved} bytes");
    assert_eq!(qb[6..8], [1, 0], "header flag bit 0");
    let loaded = Index::from_bytes(&qb).unwrap();
    assert!(loaded.int8_vectors());
    assert_eq!(loaded.to_bytes(), qb, "exact re-serialisation");
    let mut agree = 0;
    for (i, query) in vectors(340).iter().enumerate().skip(300) {
        let a: Vec<String> = f
            .exact_search(query, 10)
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        let b = q.search(query, 10).unwrap();
        let c = loaded.search(query, 10).unwrap();
        assert_eq!(
            b.iter().map(|h| &h.id).collect::<Vec<_>>(),
            c.iter().map(|h| &h.id).collect::<Vec<_>>(),
            "query {i}: same results before and after the round trip"
        );
        agree += b.iter().filter(|h| a.contains(&h.id)).count();
        // Cosines move by about 1e-3.
        let exact = f.exact_search(query, 1).unwrap()[0].clone();
        let approx = q.vector(&exact.id).unwrap();
        let norm: f32 = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cos: f32 = query.iter().zip(approx).map(|(x, y)| x / norm * y).sum();
        assert!((cos - exact.score).abs() < 5e-3, "{cos} vs {}", exact.score);
    }
    assert!(
        agree as f32 / 400.0 >= 0.95,
        "recall@10 vs f32 exact: {}",
        agree as f32 / 400.0
    );
}

#[test]
fn int8_survives_delete_and_compaction() {
    let mut q = build(true, 120);
    for i in 0..60 {
        assert!(q.delete(&format!("d{i}")));
    }
    assert_eq!(q.len(), 60);
    let bytes = q.to_bytes();
    let loaded = Index::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    let query = &vectors(121)[120];
    assert_eq!(
        q.search(query, 5)
            .unwrap()
            .iter()
            .map(|h| h.id.clone())
            .collect::<Vec<_>>(),
        loaded
            .search(query, 5)
            .unwrap()
            .iter()
            .map(|h| h.id.clone())
            .collect::<Vec<_>>()
    );
}

#[test]
fn int8_is_chosen_before_the_first_insert() {
    let mut q = build(false, 1);
    assert!(matches!(
        q.set_int8_vectors(true),
        Err(IndexError::InvalidArgument {
            what: "int8 vectors",
            ..
        })
    ));
    assert!(q.set_int8_vectors(false).is_ok());
}

/// Re-signs a body whose fields were edited (the trailer is the SHA-256 of what precedes it).
fn resign(mut b: Vec<u8>) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let n = b.len() - 32;
    let h = Sha256::digest(&b[..n]);
    b[n..].copy_from_slice(&h);
    b
}

#[test]
fn malformed_int8_sections_are_refused() {
    let q = build(true, 3);
    let bytes = q.to_bytes();
    // The vectors section starts after the header, the manifest (1 + 4 + 1+1+2 + 4 + 8 + 1 + 32),
    // the parameters (2 + 4 + 4 + 8 + 4 + 8) and the slot count (4).
    let start = 8 + (1 + 4 + 1 + 1 + 2 + 4 + 8 + 1 + 32) + (2 + 4 + 4 + 8 + 4 + 8) + 4;
    let scale = f32::from_le_bytes(bytes[start..start + 4].try_into().unwrap());
    assert!(scale > 0.0 && scale < 0.1, "found the first scale: {scale}");
    let mut bad = bytes.clone();
    bad[start..start + 4].copy_from_slice(&(-1.0f32).to_le_bytes());
    assert_eq!(
        Index::from_bytes(&resign(bad)).unwrap_err().to_string(),
        IndexError::Malformed {
            what: "int8 vectors",
            detail: "slot 0: scale -1 is not a finite number > 0".into()
        }
        .to_string()
    );
    let mut bad = bytes.clone();
    bad[start + 4] = 0x80;
    assert!(Index::from_bytes(&resign(bad))
        .unwrap_err()
        .to_string()
        .contains("slot 0: code -128"));
    let mut bad = bytes;
    bad[6] = 3;
    assert!(Index::from_bytes(&resign(bad))
        .unwrap_err()
        .to_string()
        .contains("reserved bits set (0x0003)"));
}
