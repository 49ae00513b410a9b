//! Shared helpers for the index tests: seeded data generators and fixtures.
#![allow(dead_code)]

use lightembed::rng::SplitMix64;
use lightembed_index::{
    Document, Index, ManifestFields, Metric, ModelIdentity, ModelVersion, Params,
};

/// Reproducible test data on every target: the engine's SplitMix64 ([`lightembed::rng`]).
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f32 {
        self.0.uniform_f32()
    }
    /// Roughly standard normal (Irwin–Hall, 12 uniforms).
    pub fn normal(&mut self) -> f32 {
        (0..12).map(|_| self.uniform()).sum::<f32>() - 6.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }
}

pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
}

/// `n` unit vectors in `dims` dimensions around `clusters` random centres (noise `spread`).
pub fn clustered(seed: u64, n: usize, dims: usize, clusters: usize, spread: f32) -> Vec<Vec<f32>> {
    let mut rng = Rng::new(seed);
    let centres: Vec<Vec<f32>> = (0..clusters)
        .map(|_| {
            let mut c: Vec<f32> = (0..dims).map(|_| rng.normal()).collect();
            normalize(&mut c);
            c
        })
        .collect();
    (0..n)
        .map(|_| {
            let c = &centres[rng.below(clusters)];
            let mut v: Vec<f32> = c
                .iter()
                .map(|x| x + spread * rng.normal() / (dims as f32).sqrt())
                .collect();
            normalize(&mut v);
            v
        })
        .collect()
}

pub fn fields(dims: usize) -> ManifestFields {
    ManifestFields {
        model_id: "lightembed-en".into(),
        model_version: ModelVersion::new(1, 2, 3),
        dims,
        metric: Metric::Cosine,
        model_sha256: [0xAB; 32],
    }
}

pub fn model(version: (u8, u8, u16), valid_dims: &[usize]) -> ModelIdentity {
    ModelIdentity {
        model_id: "lightembed-en".into(),
        version: version.into(),
        valid_dims: valid_dims.to_vec(),
        sha256: [0xAB; 32],
    }
}

pub fn doc(i: usize) -> Document {
    Document::new(
        format!("doc-{i}"),
        format!("Title {i}"),
        format!("/docs/{i}.html"),
        format!("Snippet number {i} — ünïcödé ✓"),
    )
}

/// An index of `vectors` with ids `doc-0 …`.
pub fn build(vectors: &[Vec<f32>], params: Params) -> Index {
    let mut index = Index::new(fields(vectors[0].len()), params).unwrap();
    for (i, v) in vectors.iter().enumerate() {
        index.insert(doc(i), v).unwrap();
    }
    index
}

/// A small index with some tombstones and several graph layers: the fixture for layout tests.
pub fn small_index() -> Index {
    let vectors = clustered(7, 24, 4, 4, 0.5);
    let params = Params {
        m: 3,
        ef_construction: 16,
        ef_search: 8,
        compaction_threshold: 1.0,
        ..Params::default()
    };
    let mut index = Index::new(fields(4), params).unwrap();
    for (i, v) in vectors.iter().enumerate() {
        let snippet = if i == 23 {
            "ünï ✓".to_string()
        } else {
            format!("s{i}")
        };
        index
            .insert(
                Document::new(
                    format!("doc-{i}"),
                    format!("T{i}"),
                    format!("/{i}"),
                    snippet,
                ),
                v,
            )
            .unwrap();
    }
    for i in [3, 17, 20] {
        assert!(index.delete(&format!("doc-{i}")));
    }
    index
}

/// Mean recall@k of `index.search` against `index.exact_search` over `queries`.
pub fn recall_at(index: &Index, queries: &[Vec<f32>], k: usize, ef: usize) -> f64 {
    let mut hit = 0usize;
    for q in queries {
        let truth: Vec<String> = index
            .exact_search(q, k)
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        let got = index.search_with_ef(q, k, ef).unwrap();
        hit += got.iter().filter(|h| truth.contains(&h.id)).count();
    }
    hit as f64 / (queries.len() * k) as f64
}
