//! Fuzz the fragmented-index readers (`index/src/fragments.rs`): `FragmentedIndex::from_core`,
//! `add_shard`, `add_cell`, `add_partition`, `add_chunk`, `add_typo_shard` and `add_tail_shard` over arbitrary bytes return
//! `Ok` or `Err`, never panic, never hang,
//! never allocate from a length the bytes cannot back. The input is split in three (core, shard,
//! chunk); each part is tried as is and with its trailing SHA-256 recomputed (otherwise nearly
//! every mutation stops at the checksum; the shard part is tried as a partition too), and a
//! shard/chunk part is also tried against a real core with its build id patched in, so the
//! postings, code, text and typo parsers behind the build-id check are reached. Whatever loads
//! must answer `missing_shards`, `missing_typo_shards`, `cells_for`, `partitions_for`, `query` (three modes)
//! and `text`
//! safely: at most `k` hits, passages in range.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lightembed_index::fragments::{split, FragmentedIndex, SplitOptions, FRAGMENTS_VERSION};
use lightembed_index::{Document, Index, ManifestFields, Metric, Mode, ModelVersion, Params, SearchOptions};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

fn resealed(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    if v.len() >= 32 {
        let n = v.len() - 32;
        let d = Sha256::digest(&v[..n]);
        v[n..].copy_from_slice(&d);
    }
    v
}

/// A small real core, and its build id.
/// A real two-level core (2 cells of 4 partitions), its build id and its centroid cells.
fn real() -> &'static (Vec<u8>, [u8; 16], Vec<Vec<u8>>) {
    static R: OnceLock<(Vec<u8>, [u8; 16], Vec<Vec<u8>>)> = OnceLock::new();
    R.get_or_init(|| {
        let mut ix = Index::new(
            ManifestFields {
                model_id: "fuzz".into(),
                model_version: ModelVersion::new(1, 0, 0),
                dims: 12,
                metric: Metric::Cosine,
                model_sha256: [1; 32],
            },
            Params::default(),
        )
        .unwrap();
        for i in 0..9 {
            let v: Vec<f32> = (0..12).map(|j| ((i * 7 + j * 3) % 11) as f32 - 5.0).collect();
            let text = format!("borrow vector {i} café read_to_string");
            ix.insert_with_text(Document::new(format!("d{i}"), "T", format!("p{}.html", i / 3), text.clone()), &v, &text)
                .unwrap();
        }
        let f = split(
            &ix,
            &SplitOptions {
                shard_bytes: 32,
                chunk_bytes: 40,
                partitions: Some(4),
                probes: 1,
                cells: Some(2),
                cell_probes: 1,
                tier_postings: 2,
                common_tier_postings: 1,
            },
        )
        .unwrap();
        let n = f.core.len() - 32;
        let mut id = [0u8; 16];
        id.copy_from_slice(&f.core[n..n + 16]);
        (f.core, id, f.cells)
    })
}

fn exercise(fx: &FragmentedIndex, query: &str) {
    let _ = fx.missing_shards(query);
    let _ = fx.missing_typo_shards(query);
    let _ = fx.corrections(query);
    let v = vec![0.25f32; fx.dims()];
    let _ = fx.cells_for(&v, None);
    let _ = fx.partitions_for(&v, None);
    // Every tier: the tail shards a query needs, and a query refused or answered without panic.
    let mut all = fx.clone();
    all.set_all_tiers(true);
    let _ = all.missing_tail_shards(query);
    let _ = all.query(Some(&v), query, 5, &SearchOptions::default());
    for mode in [Mode::Hybrid, Mode::Vector, Mode::Keyword] {
        let opts = SearchOptions { mode, ..SearchOptions::default() };
        if let Ok(hits) = fx.query(Some(&v), query, 5, &opts) {
            assert!(hits.len() <= 5);
            for h in &hits {
                assert!((h.passage as usize) < fx.len());
                let _ = fx.text(h.passage);
                assert!(fx.chunk_of(h.passage).is_some() || fx.chunk_count() == 0);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let a = data.len() / 3;
    let (core, rest) = data.split_at(a);
    let (shard, chunk) = rest.split_at(rest.len() / 2);
    for c in [core.to_vec(), resealed(core)] {
        if let Ok(mut fx) = FragmentedIndex::from_core(&c) {
            for s in [shard.to_vec(), resealed(shard)] {
                let _ = fx.add_shard(&s);
                let _ = fx.add_cell(&s);
                let _ = fx.add_partition(&s);
                let _ = fx.add_tail_shard(&s);
            }
            for t in [chunk.to_vec(), resealed(chunk)] {
                let _ = fx.add_chunk(&t);
                let _ = fx.add_typo_shard(&t);
            }
            exercise(&fx, "borrow café");
        }
    }
    // Shard, partition and chunk parsers behind a real core's build id.
    let (real_core, id, cells) = real();
    let mut fx = FragmentedIndex::from_core(real_core).unwrap();
    for g in cells {
        fx.add_cell(g).unwrap();
    }
    for part in [shard, chunk] {
        if part.len() >= 6 + 16 + 32 {
            for magic in [b"LEFT", b"LEFG", b"LEFV", b"LEFC", b"LEFY", b"LEFU"] {
                let mut p = part.to_vec();
                p[..4].copy_from_slice(magic);
                p[4..6].copy_from_slice(&FRAGMENTS_VERSION.to_le_bytes());
                p[6..22].copy_from_slice(id);
                let p = resealed(&p);
                let _ = fx.add_shard(&p);
                let _ = fx.add_cell(&p);
                let _ = fx.add_partition(&p);
                let _ = fx.add_chunk(&p);
                let _ = fx.add_typo_shard(&p);
                let _ = fx.add_tail_shard(&p);
            }
        }
    }
    exercise(&fx, "borrow vector read_to_string borow vectro");
});
