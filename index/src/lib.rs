//! `lightembed-index`: the search side of lightembed — an HNSW graph over L2-normalised `f32`
//! vectors and BM25 postings over the same documents, with per-document payloads, one versioned
//! byte layout, the manifest check against the loaded model (spec §8), hybrid ranking
//! ([`Index::query`], [`SearchOptions`]) and the excerpts every front end shows ([`snippet`]:
//! the query's words marked). The whole pipeline is described in `docs/search.md`.
//!
//! Pure computation: no I/O, no threads, no platform entropy, no web dependencies. Builds for
//! `wasm32-unknown-unknown` and natively, and the same inserts with the same [`Params::seed`]
//! produce byte-identical indexes on both.
//!
//! ```
//! use lightembed_index::{Document, Index, ManifestFields, Metric, ModelIdentity, ModelVersion, Params};
//!
//! let fields = ManifestFields {
//!     model_id: "lightembed-en".into(),
//!     model_version: ModelVersion::new(1, 2, 0),
//!     dims: 3,
//!     metric: Metric::Cosine,
//!     model_sha256: [0; 32],
//! };
//! let mut index = Index::new(fields, Params::default())?;
//! index.insert(Document::new("a", "Apples", "/a", "Red fruit."), &[1.0, 0.0, 0.0])?;
//! index.insert(Document::new("b", "Bananas", "/b", "Yellow fruit."), &[0.0, 1.0, 0.0])?;
//! let hits = index.search(&[0.9, 0.1, 0.0], 1)?;
//! assert_eq!(hits[0].id, "a");
//!
//! // persist, reload, check against the model before searching (spec §8)
//! let loaded = Index::from_bytes(&index.to_bytes())?;
//! let model = ModelIdentity {
//!     model_id: "lightembed-en".into(),
//!     version: ModelVersion::new(2, 0, 0),
//!     valid_dims: vec![3],
//!     sha256: [0; 32],
//! };
//! let err = loaded.check_compatible(&model).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "Index was built with lightembed-en v1.2 but the loaded model is v2.0. Re-run `lightembed index`."
//! );
//! # Ok::<(), lightembed_index::IndexError>(())
//! ```
//!
//! Keyword (BM25) search over the same documents: [`Index::keyword_search`], with the tokeniser
//! and scoring documented in [`keywords`]; both sides fused: [`Index::query`].
//!
//! Modules: [`layout`] documents the byte layout, [`keywords`] the keyword side (with what BM25
//! indexes for a passage, [`keywords::keyword_text`]), [`fragments`] the static-site layout,
//! [`snippet`] the excerpts; the rest is re-exported here. Pages become passages in the crate
//! `lightembed-ingest`: this crate knows no HTML.

#![warn(missing_docs)]

mod error;
pub mod fragments;
mod graph;
pub mod gzip;
mod hybrid;
mod index;
pub mod keywords;
mod kmeans;
pub mod layout;
mod manifest;
mod searcher;
pub mod snippet;
pub mod typos;
mod util;

pub use error::IndexError;
pub use hybrid::{Fusion, Mode, SearchOptions, PAGE_WEIGHT};
pub use index::{Document, Hit, Index, Params, Payload, MAX_EF};
pub use keywords::{highlight_spans, terms, terms_with};
pub use layout::read_manifest_prefix;
pub use manifest::{
    CompatWarning, Manifest, ManifestFields, Metric, ModelIdentity, ModelVersion, MAX_DIMS,
    MAX_MODEL_ID_LEN,
};
pub use searcher::{Found, InBundle, Searcher};

/// The index layout version this crate reads and writes (spec §8 `index_version`). Bumped on any
/// change to [`layout`]; an index with another version is rejected with
/// [`IndexError::UnsupportedIndexVersion`].
///
/// History: 1 — vectors, graph, payloads; 2 — adds the keyword (BM25) section.
pub const INDEX_VERSION: u16 = 2;
