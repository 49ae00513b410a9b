//! [`IndexError`]: every way building, searching, loading or checking an index can fail.

use core::fmt;

use crate::manifest::ModelVersion;

/// Every error `lightembed-index` returns. No operation of this crate panics on bad input —
/// malformed bytes, mismatched models and invalid arguments all come back as one of these.
///
/// The four compatibility variants ([`IndexError::ModelIdMismatch`],
/// [`IndexError::ModelMajorMismatch`], [`IndexError::DimsMismatch`],
/// [`IndexError::UnsupportedIndexVersion`]) display the message shape of spec §8:
///
/// ```text
/// Index was built with lightembed-en v1.2 but the loaded model is v2.0. Re-run `lightembed index`.
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexError {
    // ---- byte layout -------------------------------------------------------------------------
    /// The bytes end before a field does: `what` needed `needed` bytes at byte `offset`, but only
    /// `available` were left (before the 32-byte checksum trailer).
    Truncated {
        /// The field or section being read.
        what: &'static str,
        /// Byte offset of the field from the start of the index bytes.
        offset: usize,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes that were left.
        available: usize,
    },
    /// The first four bytes are not `"LEIX"`: these are not lightembed index bytes.
    BadMagic {
        /// The first (up to) four bytes found.
        found: Vec<u8>,
    },
    /// The trailing SHA-256 does not match the SHA-256 of the preceding bytes (corruption).
    ChecksumMismatch,
    /// A field holds a value the layout does not allow (reserved bits set, an out-of-range id, a
    /// neighbour list longer than `2·M`, invalid UTF-8, a non-finite vector component, …).
    ///
    /// In the keywords section `what` is one of `"keyword flags"` (reserved bits set),
    /// `"keyword term"` (empty, not UTF-8, or listed twice), `"keyword term count"` (more terms
    /// than the vocabulary holds), `"keyword term id"` (not strictly increasing, or ≥ the
    /// vocabulary size), `"keyword term frequency"` (0, or a slot longer than `u32::MAX`
    /// tokens), or the field whose varint is not in its shortest form or exceeds `u32::MAX`.
    Malformed {
        /// The field or section.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// Bytes are left over between the end of the keywords section (the last section) and the
    /// checksum trailer.
    TrailingBytes {
        /// How many bytes are left over.
        count: usize,
    },

    // ---- compatibility (spec §8) ---------------------------------------------------------------
    /// The index bytes (or manifest) use an `index_version` this crate cannot read — e.g. 1, an
    /// index written before keyword search: rebuild it with `lightembed index`. Checked right
    /// after the magic, so such bytes are never parsed as the current layout.
    UnsupportedIndexVersion {
        /// `index_version` found in the index.
        found: u16,
        /// The `index_version` this crate reads and writes ([`crate::INDEX_VERSION`]).
        supported: u16,
    },
    /// The index was built with a different model (`model_id` differs).
    ModelIdMismatch {
        /// `model_id` recorded in the index manifest.
        index_model_id: String,
        /// `model_version` recorded in the index manifest.
        index_version: ModelVersion,
        /// `model_id` of the loaded model.
        model_id: String,
        /// Version of the loaded model.
        model_version: ModelVersion,
    },
    /// Same model, different **major** version: the embedding space has moved.
    ModelMajorMismatch {
        /// `model_id` (the same on both sides).
        model_id: String,
        /// `model_version` recorded in the index manifest.
        index_version: ModelVersion,
        /// Version of the loaded model.
        model_version: ModelVersion,
    },
    /// The index's `dims` is not one of the dimensions the loaded model can produce.
    DimsMismatch {
        /// `model_id` recorded in the index manifest.
        model_id: String,
        /// `model_version` recorded in the index manifest.
        index_version: ModelVersion,
        /// `dims` recorded in the index manifest.
        dims: usize,
        /// The dimensions the loaded model can produce (Matryoshka dims ∪ `output_dim`).
        valid_dims: Vec<usize>,
    },

    // ---- arguments ----------------------------------------------------------------------------
    /// A vector (to insert or to query with) has the wrong number of components.
    VectorDims {
        /// The index's `dims`.
        expected: usize,
        /// Length of the vector passed.
        found: usize,
    },
    /// A vector has a NaN or infinite component.
    NonFiniteVector,
    /// A live document with this id is already in the index (delete it first).
    DuplicateId(String),
    /// [`crate::Params`] or [`crate::ManifestFields`] hold a value out of range.
    InvalidArgument {
        /// The parameter.
        what: &'static str,
        /// Why it is rejected, with the accepted range.
        detail: String,
    },
    /// The index is full: slot ids are `u32` and every one is used.
    Full,
}

const RERUN: &str = "Re-run `lightembed index`.";

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Truncated {
                what,
                offset,
                needed,
                available,
            } => write!(
                f,
                "index bytes are truncated: {what} at byte {offset} needs {needed} bytes but only \
                 {available} are left"
            ),
            IndexError::BadMagic { found } => write!(
                f,
                "not a lightembed index: expected magic \"LEIX\", found {found:02x?}{}",
                match found.as_slice() {
                    [b'L', b'E', b'M', b'B', ..] =>
                        " (this is a lightembed model: pass it as --model)",
                    [b'{', ..] => " (this looks like JSON: pass the index folder or its index.bin)",
                    _ => "",
                }
            ),
            IndexError::ChecksumMismatch => f.write_str(
                "index bytes are corrupted: the trailing SHA-256 does not match the contents",
            ),
            IndexError::Malformed { what, detail } => {
                write!(f, "index bytes are malformed: {what}: {detail}")
            }
            IndexError::TrailingBytes { count } => write!(
                f,
                "index bytes are malformed: {count} unexpected bytes after the keywords section"
            ),
            IndexError::UnsupportedIndexVersion { found, supported } => write!(
                f,
                "Index was built with index format v{found} but this lightembed reads index \
                 format v{supported}. {RERUN}"
            ),
            IndexError::ModelIdMismatch {
                index_model_id,
                index_version,
                model_id,
                model_version,
            } => {
                write!(
                    f,
                    "Index was built with {index_model_id} v{} but the loaded model is {model_id} \
                     v{}. {RERUN}",
                    index_version.short(),
                    model_version.short()
                )
            }
            IndexError::ModelMajorMismatch {
                model_id,
                index_version,
                model_version,
            } => write!(
                f,
                "Index was built with {model_id} v{} but the loaded model is v{}. {RERUN}",
                index_version.short(),
                model_version.short()
            ),
            IndexError::DimsMismatch {
                model_id,
                index_version,
                dims,
                valid_dims,
            } => {
                let list = lightembed::format::dims_list(valid_dims, ", ");
                write!(
                    f,
                    "Index was built with {model_id} v{} at {dims} dims but the loaded model \
                     produces {list} dims. {RERUN}",
                    index_version.short()
                )
            }
            IndexError::VectorDims { expected, found } => write!(
                f,
                "vector has {found} dimensions but the index holds {expected}-dimensional vectors"
            ),
            IndexError::NonFiniteVector => f.write_str("vector has a NaN or infinite component"),
            IndexError::DuplicateId(id) => {
                write!(f, "a document with id {id:?} is already in the index")
            }
            IndexError::InvalidArgument { what, detail } => write!(f, "invalid {what}: {detail}"),
            IndexError::Full => f.write_str("index is full (2^32 - 1 slots)"),
        }
    }
}

impl std::error::Error for IndexError {}
