//! Writes the seed corpus of the `index_bytes` fuzz target (`fuzz/seeds/index_bytes/`): small
//! valid v2 indexes (dims 2–8, 0–40 documents, M 2–16 so that upper layers exist, tombstones,
//! keyword stemming on and off, empty and Unicode strings) that libFuzzer can mutate cheaply.
//! Ignored by default; regenerate with
//!
//! ```sh
//! cargo test -p lightembed-index --test fuzz_seeds -- --ignored
//! ```
//!
//! Deterministic: the same bytes every run. (`site-d*.bin` next to them are real indexes written by
//! `lightembed index --model public/models/lightembed-en-static.bin --out DIR --dims N
//! tests/fixtures/site` with N = 32 and 384.)

mod common;

use lightembed_index::{Document, Index, Params};

const WORDS: [&str; 16] = [
    "apple", "running", "runs", "ran", "fruit", "the", "garden", "soil", "water", "Größe", "café",
    "漢字", "index", "search", "keyword", "vector",
];

fn build(dims: usize, n: usize, m: usize, stem: bool, deletes: &[usize], seed: u64) -> Index {
    build_as(dims, n, m, stem, deletes, seed, false)
}

fn build_as(
    dims: usize,
    n: usize,
    m: usize,
    stem: bool,
    deletes: &[usize],
    seed: u64,
    int8: bool,
) -> Index {
    let params = Params {
        m,
        ef_construction: 8,
        ef_search: 4,
        seed,
        compaction_threshold: 0.9,
    };
    let mut index = Index::new(common::fields(dims), params).unwrap();
    index.set_keyword_stemming(stem).unwrap();
    index.set_int8_vectors(int8).unwrap();
    let vectors = common::clustered(seed, n, dims, 3, 0.3);
    let mut rng = common::Rng::new(seed ^ 0x5eed);
    for (i, v) in vectors.iter().enumerate() {
        let text: Vec<&str> = (0..1 + rng.below(6))
            .map(|_| WORDS[rng.below(WORDS.len())])
            .collect();
        let text = text.join(" ");
        let snippet: String = text.chars().take(12).collect();
        let (title, url) = if i % 5 == 4 {
            (String::new(), String::new())
        } else {
            (format!("T{i}"), format!("/p{}#s{i}", i % 3))
        };
        index
            .insert_with_text(
                Document::new(format!("d{i}"), title, url, snippet),
                v,
                &text,
            )
            .unwrap();
    }
    for &d in deletes {
        assert!(index.delete(&format!("d{d}")));
    }
    index
}

#[test]
#[ignore = "writes fuzz/seeds/index_bytes; run by hand"]
fn write_index_bytes_seeds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/index_bytes");
    std::fs::create_dir_all(dir).unwrap();
    let seeds: [(&str, Index); 10] = [
        ("twelve-d4-int8", build_as(4, 12, 2, true, &[], 9, true)),
        (
            "forty-d6-int8-deleted",
            build_as(6, 40, 3, true, &[2, 5, 9], 10, true),
        ),
        ("empty-d2", build(2, 0, 16, true, &[], 1)),
        ("one-d3", build(3, 1, 16, true, &[], 2)),
        ("three-d4-nostem", build(4, 3, 4, false, &[], 3)),
        ("twelve-d2-m2", build(2, 12, 2, true, &[], 4)),
        (
            "twelve-d5-m2-deleted",
            build(5, 12, 2, true, &[0, 7, 11], 5),
        ),
        ("forty-d8-m3", build(8, 40, 3, true, &[3], 6)),
        ("forty-d6-m2-nostem", build(6, 40, 2, false, &[1, 2, 30], 7)),
        ("mostly-deleted-d2", build(2, 3, 2, true, &[0, 1], 8)),
    ];
    for (name, index) in seeds {
        let bytes = index.to_bytes();
        // every seed loads and re-serialises to itself, as the target asserts
        assert_eq!(
            Index::from_bytes(&bytes).unwrap().to_bytes(),
            bytes,
            "{name}"
        );
        std::fs::write(format!("{dir}/{name}.bin"), bytes).unwrap();
    }
}
