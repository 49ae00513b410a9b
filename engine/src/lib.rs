//! `lightembed` — the engine: `.bin` v1 loader and validator, BERT WordPiece tokenizer, forward
//! pass (static and ternary/fp32 transformer), quantised kernels, and a writer for valid files.
//!
//! Pure computation over `&[u8]` and `&str`: no I/O, no threads, no web dependencies. Builds
//! natively and for `wasm32-unknown-unknown` with `+simd128`.
//!
//! Spec: `.bin` wire format v1 (see `docs/format-v1-clarifications.md` for the decisions where the
//! spec is silent). Normative reference: `reference/forward.py`.
//!
//! ```no_run
//! # fn demo(bytes: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! let model = lightembed::Model::from_bytes(bytes)?;      // every load rule checked
//! let dims = *model.valid_dims().last().unwrap();          // output_dim
//! let v: Vec<f32> = model.embed("Merhaba dünya", dims)?;  // L2-normalised, `dims` floats
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

// `not(doctest)`: rustdoc collects doctests without the target's rustflags.
#[cfg(all(target_arch = "wasm32", not(target_feature = "simd128"), not(doctest)))]
compile_error!(
    "lightembed must be built for wasm32 with SIMD128: use .cargo/config.toml's rustflags and do not set RUSTFLAGS"
);

pub mod format;
mod forward;
pub mod kernels;
mod model;
pub mod ops;
pub mod quant;
pub mod query_rows;
pub mod rng;
mod static_rows;
pub mod tokenizer;
pub mod unicode;
pub mod writer;

pub use format::{
    EmbeddingQuant, Flags, Header, LoadError, ModelVersion, SectionEntry, SectionTable,
    SectionType, WeightQuant,
};
pub use forward::{normalize, NORMALIZE_EPS};
pub use model::{EmbedError, Model};
pub use query_rows::{QueryEncoder, QueryRowFiles, QueryRowsError};
pub use writer::{BuildError, EmbeddingData, LayerData, LinearData, MatrixData, ModelBuilder};
