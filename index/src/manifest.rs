//! The index manifest and the compatibility check against a loaded model (spec §8).

use core::fmt;

use crate::error::IndexError;
use crate::INDEX_VERSION;

/// Largest `dims` an index accepts: a model's `output_dim` is a `u16` (spec §3).
pub const MAX_DIMS: usize = u16::MAX as usize;

/// Longest `model_id` in bytes: the model header stores it NUL-padded in 16 bytes (spec §3).
pub const MAX_MODEL_ID_LEN: usize = 16;

pub use lightembed::format::ModelVersion;

/// How vectors are compared. Byte code in the layout: `1` = cosine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Metric {
    /// Cosine similarity, computed as the inner product of L2-normalised vectors (the index
    /// normalises every vector it is given). Scores lie in `[-1, 1]`; higher is more similar.
    #[default]
    Cosine,
}

impl Metric {
    /// The byte stored in the layout.
    pub const fn code(self) -> u8 {
        match self {
            Metric::Cosine => 1,
        }
    }

    /// The metric for a layout byte, `None` when unknown.
    pub const fn from_code(code: u8) -> Option<Metric> {
        match code {
            1 => Some(Metric::Cosine),
            _ => None,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Cosine => f.write_str("cosine"),
        }
    }
}

/// The caller-supplied part of a manifest: which model and which `dims` the vectors come from.
/// Passed to [`crate::Index::new`]; the index adds `index_version` and `count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFields {
    /// The model's `model_id` (spec §3, ≤ 16 bytes UTF-8, non-empty, no NUL), e.g. `lightembed-en`.
    pub model_id: String,
    /// The model's `major.minor.patch`.
    pub model_version: ModelVersion,
    /// Vector length: one of the model's Matryoshka dims or its `output_dim` (1 ..= 65535).
    pub dims: usize,
    /// Similarity metric.
    pub metric: Metric,
    /// The model's SHA-256: the `.bin` file's trailing 32 bytes (SHA-256 of everything before them, §3).
    pub model_sha256: [u8; 32],
}

impl ManifestFields {
    pub(crate) fn validate(&self) -> Result<(), IndexError> {
        let bad = |what, detail: String| Err(IndexError::InvalidArgument { what, detail });
        if self.model_id.is_empty() || self.model_id.len() > MAX_MODEL_ID_LEN {
            return bad(
                "model_id",
                format!("{:?} must be 1..={MAX_MODEL_ID_LEN} bytes", self.model_id),
            );
        }
        if self.model_id.contains('\0') {
            return bad(
                "model_id",
                format!("{:?} contains a NUL byte", self.model_id),
            );
        }
        if self.dims == 0 || self.dims > MAX_DIMS {
            return bad("dims", format!("{} is outside 1..={MAX_DIMS}", self.dims));
        }
        Ok(())
    }
}

/// Everything an index records about how it was built (spec §8), stored at the start of the
/// index bytes and checked against the loaded model before searching. With the `serde` feature
/// it (de)serialises as `{"index_version", "model_id", "model_version": "1.2.3", "dims",
/// "count", "metric": "cosine", "model_sha256": "<64 hex digits>"}` (`lightembed index`'s
/// `index.json` holds these fields).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Manifest {
    /// Layout version of the index bytes; this crate reads and writes [`INDEX_VERSION`].
    pub index_version: u16,
    /// `model_id` of the model the vectors came from.
    pub model_id: String,
    /// `model_version` of that model.
    #[cfg_attr(feature = "serde", serde(with = "wire::version"))]
    pub model_version: ModelVersion,
    /// Vector length.
    pub dims: usize,
    /// Number of live (not deleted) documents.
    pub count: u64,
    /// Similarity metric.
    #[cfg_attr(feature = "serde", serde(with = "wire::metric"))]
    pub metric: Metric,
    /// SHA-256 of the model the vectors came from (the model file's trailer, §3).
    #[cfg_attr(feature = "serde", serde(with = "wire::sha256"))]
    pub model_sha256: [u8; 32],
}

/// Text forms of the manifest's fields on the wire (`serde` feature).
#[cfg(feature = "serde")]
mod wire {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub mod version {
        use super::*;
        use crate::ModelVersion;

        pub fn serialize<S: Serializer>(v: &ModelVersion, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(v)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ModelVersion, D::Error> {
            let t = String::deserialize(d)?;
            let p: Vec<&str> = t.split('.').collect();
            let bad = || D::Error::custom(format!("model_version {t:?} is not major.minor.patch"));
            if p.len() != 3 {
                return Err(bad());
            }
            Ok(ModelVersion::new(
                p[0].parse().map_err(|_| bad())?,
                p[1].parse().map_err(|_| bad())?,
                p[2].parse().map_err(|_| bad())?,
            ))
        }
    }

    pub mod metric {
        use super::*;
        use crate::Metric;

        pub fn serialize<S: Serializer>(m: &Metric, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(m)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
            match String::deserialize(d)?.as_str() {
                "cosine" => Ok(Metric::Cosine),
                other => Err(D::Error::custom(format!("unknown metric {other:?}"))),
            }
        }
    }

    pub mod sha256 {
        use super::*;

        pub fn serialize<S: Serializer>(h: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&lightembed::format::to_hex(h))
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
            let t = String::deserialize(d)?;
            let bad = || D::Error::custom(format!("{t:?} is not 64 hex digits"));
            if t.len() != 64 || !t.is_ascii() {
                return Err(bad());
            }
            let mut out = [0u8; 32];
            for (i, b) in out.iter_mut().enumerate() {
                *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
            }
            Ok(out)
        }
    }
}

impl Manifest {
    pub(crate) fn from_fields(fields: ManifestFields) -> Manifest {
        Manifest {
            index_version: INDEX_VERSION,
            model_id: fields.model_id,
            model_version: fields.model_version,
            dims: fields.dims,
            count: 0,
            metric: fields.metric,
            model_sha256: fields.model_sha256,
        }
    }

    /// Checks that an index with this manifest may be searched with vectors from `model`
    /// (spec §8). In order:
    ///
    /// 1. `index_version` known → else [`IndexError::UnsupportedIndexVersion`];
    /// 2. same `model_id` → else [`IndexError::ModelIdMismatch`];
    /// 3. same **major** model version → else [`IndexError::ModelMajorMismatch`];
    /// 4. `dims` ∈ `model.valid_dims` → else [`IndexError::DimsMismatch`].
    ///
    /// On success returns the differences that do not invalidate the index (minor/patch
    /// version, model file SHA-256) as [`CompatWarning`]s — empty when the model is identical.
    pub fn check_compatible(
        &self,
        model: &ModelIdentity,
    ) -> Result<Vec<CompatWarning>, IndexError> {
        if self.index_version != INDEX_VERSION {
            return Err(IndexError::UnsupportedIndexVersion {
                found: self.index_version,
                supported: INDEX_VERSION,
            });
        }
        let model_version = model.version;
        if self.model_id != model.model_id {
            return Err(IndexError::ModelIdMismatch {
                index_model_id: self.model_id.clone(),
                index_version: self.model_version,
                model_id: model.model_id.clone(),
                model_version,
            });
        }
        if self.model_version.major != model_version.major {
            return Err(IndexError::ModelMajorMismatch {
                model_id: self.model_id.clone(),
                index_version: self.model_version,
                model_version,
            });
        }
        if !model.valid_dims.contains(&self.dims) {
            return Err(IndexError::DimsMismatch {
                model_id: self.model_id.clone(),
                index_version: self.model_version,
                dims: self.dims,
                valid_dims: model.valid_dims.clone(),
            });
        }
        let mut warnings = Vec::new();
        if self.model_version != model_version {
            warnings.push(CompatWarning::ModelVersionDiffers {
                index: self.model_version,
                model: model_version,
            });
        }
        if self.model_sha256 != model.sha256 {
            warnings.push(CompatWarning::ModelSha256Differs {
                index: self.model_sha256,
                model: model.sha256,
            });
        }
        Ok(warnings)
    }
}

/// The identity of a loaded model, as far as index compatibility is concerned (spec §3, §8).
///
/// A plain struct, so tests and tools can state an identity without a model file; a loaded
/// engine model converts into it with `ModelIdentity::from(&model)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelIdentity {
    /// Header `model_id`, NUL padding removed (e.g. `"lightembed-en"`).
    pub model_id: String,
    /// Header `version_major.version_minor.version_patch`.
    pub version: ModelVersion,
    /// Dimensions `embed` accepts: `matryoshka_dims[..n_matryoshka]` ∪ `{output_dim}`.
    pub valid_dims: Vec<usize>,
    /// The model's SHA-256: its trailing 32 bytes, the SHA-256 of every byte before them (§3).
    pub sha256: [u8; 32],
}

impl From<&lightembed::Model> for ModelIdentity {
    /// The identity of a loaded model: header `model_id` and version, the dims `embed` accepts,
    /// and the file's SHA-256 trailer (spec §3).
    fn from(model: &lightembed::Model) -> Self {
        let h = model.header();
        ModelIdentity {
            model_id: model.model_id().to_string(),
            version: h.model_version(),
            valid_dims: model.valid_dims().to_vec(),
            sha256: model.sha256(),
        }
    }
}

impl From<&lightembed::QueryEncoder> for ModelIdentity {
    /// The identity of the model a query head was cut from (clarification F.10): its
    /// `model_id`, version and SHA-256, and the dims the head embeds at.
    fn from(q: &lightembed::QueryEncoder) -> Self {
        ModelIdentity {
            model_id: q.model_id().to_string(),
            version: q.version(),
            valid_dims: q.valid_dims().to_vec(),
            sha256: q.sha256(),
        }
    }
}

impl ModelIdentity {
    /// The [`ManifestFields`] for a new index of this model's vectors at `dims` (cosine metric).
    /// Errors with [`IndexError::DimsMismatch`]-style [`IndexError::InvalidArgument`] when `dims`
    /// is not one of `valid_dims`.
    pub fn manifest_fields(&self, dims: usize) -> Result<ManifestFields, IndexError> {
        if !self.valid_dims.contains(&dims) {
            return Err(IndexError::InvalidArgument {
                what: "dims",
                detail: format!(
                    "{dims} is not one of the model's dims {{{}}}",
                    lightembed::format::dims_list(&self.valid_dims, ", ")
                ),
            });
        }
        Ok(ManifestFields {
            model_id: self.model_id.clone(),
            model_version: self.version,
            dims,
            metric: Metric::Cosine,
            model_sha256: self.sha256,
        })
    }
}

/// A difference between index and model that does **not** invalidate the index (spec §8:
/// "Minor and patch model bumps keep existing indexes valid"). Worth showing to a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompatWarning {
    /// Same major version, different minor or patch.
    ModelVersionDiffers {
        /// Version recorded in the index.
        index: ModelVersion,
        /// Version of the loaded model.
        model: ModelVersion,
    },
    /// The model file differs from the one the index was built with (e.g. a re-packed or
    /// re-fingerprinted file) although `model_id` and major version match.
    ModelSha256Differs {
        /// SHA-256 recorded in the index.
        index: [u8; 32],
        /// SHA-256 of the loaded model.
        model: [u8; 32],
    },
}

fn hex8(h: &[u8; 32]) -> String {
    lightembed::format::to_hex(&h[..8])
}

impl fmt::Display for CompatWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompatWarning::ModelVersionDiffers { index, model } => write!(
                f,
                "note: index was built with model v{index}, the loaded model is v{model} \
                 (same major version, the index stays valid)"
            ),
            CompatWarning::ModelSha256Differs { index, model } => write!(
                f,
                "warning: index was built from a model file with SHA-256 {}…, the loaded file is \
                 {}… (same model id and major version, the index stays valid)",
                hex8(index),
                hex8(model)
            ),
        }
    }
}
