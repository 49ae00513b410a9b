//! The worker's state and everything computed on it: the verified model, the index, the §8
//! compatibility check, embedding, search, deletion and the playground. Pure Rust (no JS), so it
//! is unit-tested natively; the worker shell ([`crate::worker`]) adds fetch, storage and timing.

use std::collections::BTreeMap;

use lightembed::Model;
use lightembed_index::{Document, Index, IndexError, ModelIdentity, Params, SearchOptions};

use crate::shared::pca::Pca;
use crate::shared::protocol::{
    doc_id_of, DocSummary, IndexState, ModelInfo, Passage, Point, SearchMode, ShownHit, TokenOut,
};

/// Characters of a passage kept as the search-result snippet (stored in the index payload):
/// enough for a whole passage of the model's window, so the excerpt can show any part of it.
pub const SNIPPET_CHARS: usize = 1200;

/// Characters of the snippet shown under a result: the excerpt around the query's words.
pub const EXCERPT_CHARS: usize = 240;

/// Shown (with a re-index offered) for an index saved by the app before storage version 2: its
/// results were titled `Page › Heading` and it kept no page titles apart, so it is rebuilt from
/// the stored passages (which convert without loss) rather than read.
pub const OLD_APP_INDEX: &str = "This index was saved by an earlier version of this app, which \
titled results differently; re-index to rebuild it from the stored passages.";

/// The index as the worker saves it (IndexedDB, or memory when storage is unavailable): the index
/// bytes (layout v2, what `lightembed index` writes) and, apart, each passage's page title and
/// heading ([`WorkerState::saved`]), which the index keeps only joined into a display title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedIndex {
    /// `Index::to_bytes()`.
    pub bytes: Vec<u8>,
    /// JSON object: passage id → `[page title, heading]`. `None`: an index saved by the app
    /// before storage version 2, which kept none ([`OLD_APP_INDEX`]).
    pub sections: Option<String>,
}

/// Why a stored index could not be attached to the loaded model.
#[derive(Debug, Clone, PartialEq)]
pub enum AttachError {
    /// The index is valid but was built with an incompatible model (spec §8): the message to show.
    Mismatch(String),
    /// The index bytes are damaged (they are discarded).
    Corrupt(String),
}

/// Why a request on the worker's state failed. The page shows the `Display` text; the variants
/// keep the engine's and the index's own errors (not strings) until then.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A request that needs a model came before one was loaded.
    #[error("no model is loaded")]
    NoModel,
    /// A request that needs an index came before one exists (`what` says which request).
    #[error("{0}")]
    NoIndex(&'static str),
    /// The model file broke a load rule (spec §3–§5): nothing was loaded.
    #[error(transparent)]
    Load(#[from] lightembed::LoadError),
    /// The engine refused to embed (invalid dims).
    #[error(transparent)]
    Embed(#[from] lightembed::EmbedError),
    /// The index refused (dims, manifest fields, a document).
    #[error(transparent)]
    Index(#[from] lightembed_index::IndexError),
    /// The PCA plot needs vectors it does not have.
    #[error("{0}")]
    Plot(&'static str),
    /// A helper worker returned something other than one vector per passage.
    #[error("an indexing helper returned {0}")]
    Helper(String),
}

/// Texts embedded per forward pass while indexing (by the indexing worker and its helpers).
pub const FORWARD_BATCH: usize = 4;

/// Embeds `texts` at `dims`, [`FORWARD_BATCH`] per forward pass; one vector per text, in order.
///
/// # Errors
/// The engine's [`lightembed::EmbedError`] (dims not valid for the model).
pub fn embed_texts(
    model: &Model,
    texts: &[&str],
    dims: usize,
) -> Result<Vec<Vec<f32>>, lightembed::EmbedError> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(FORWARD_BATCH) {
        out.extend(model.embed_batch(chunk, dims)?);
    }
    Ok(out)
}

/// The model identity the index checks against (spec §8).
pub fn identity(model: &Model) -> ModelIdentity {
    ModelIdentity::from(model)
}

/// Verifies and loads `bytes` with every load rule ([`Model::from_bytes`]) and describes it.
/// `digest`: the SHA-256 of `bytes` without its 32-byte trailer when the caller already has it
/// (the worker asks WebCrypto, [`Model::from_bytes_with_digest`]); `None` hashes here.
///
/// # Errors
/// The engine's message for the first violated rule; nothing is loaded.
pub fn load_model(
    bytes: &[u8],
    url: &str,
    digest: Option<[u8; 32]>,
) -> Result<(Model, ModelInfo), WorkerError> {
    let model = match digest {
        Some(d) => Model::from_bytes_with_digest(bytes, d),
        None => Model::from_bytes(bytes),
    }?;
    let h = model.header();
    let info = ModelInfo {
        url: url.to_string(),
        model_id: model.model_id().to_string(),
        version: h.model_version().to_string(),
        format_version: h.format_version,
        embedding_quant: h.embedding_quant.name().to_string(),
        weight_quant: if h.is_static() {
            "—".to_string()
        } else {
            h.weight_quant.to_string()
        },
        n_layers: h.n_layers,
        d_model: h.d_model,
        vocab_size: h.vocab_size,
        output_dim: model.output_dim(),
        valid_dims: model.valid_dims().to_vec(),
        max_seq_len: h.max_seq_len,
        lower_case: h.flags.do_lower_case(),
        has_fingerprint: h.flags.has_fingerprint(),
        license_id: h.license_id,
        size_bytes: model.file_size(),
        sha256: model.sha256_hex(),
        metadata: model.metadata().map(str::to_string),
        from_cache: false,
        verify_ms: 0.0,
        kernel: lightembed::kernels::Backend::detect().name().to_string(),
    };
    Ok((model, info))
}

/// Model + index. At most one of each; replacing the model drops the index (it must be
/// re-attached and re-checked against the new model).
#[derive(Default)]
pub struct WorkerState {
    model: Option<Model>,
    info: Option<ModelInfo>,
    index: Option<Index>,
    /// Per indexed passage id, its page title and heading (kept with the index, saved with it).
    sections: BTreeMap<String, (String, String)>,
}

impl WorkerState {
    /// An empty core: no model, no index.
    pub fn new() -> WorkerState {
        WorkerState::default()
    }

    /// Installs a verified model (from [`load_model`]) and drops the current index.
    pub fn set_model(&mut self, model: Model, info: ModelInfo) {
        self.model = Some(model);
        self.info = Some(info);
        self.drop_index();
    }

    /// The loaded model's info.
    pub fn info(&self) -> Option<&ModelInfo> {
        self.info.as_ref()
    }

    /// The loaded model.
    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// The index, if one is attached.
    pub fn index(&self) -> Option<&Index> {
        self.index.as_ref()
    }

    fn model_or_err(&self) -> Result<&Model, WorkerError> {
        self.model.as_ref().ok_or(WorkerError::NoModel)
    }

    /// Restores a saved index after checking its manifest against the loaded model (spec §8).
    /// Returns the compatibility notes (minor version or file differs).
    ///
    /// # Errors
    /// [`AttachError::Mismatch`] with the spec's message, or [`OLD_APP_INDEX`] for an index the
    /// app saved before storage version 2 (no page titles kept apart); [`AttachError::Corrupt`]
    /// for damaged bytes or page titles that are not those of the index's passages.
    pub fn attach_index(&mut self, saved: &SavedIndex) -> Result<Vec<String>, AttachError> {
        let model = self
            .model
            .as_ref()
            .ok_or_else(|| AttachError::Corrupt("no model is loaded".into()))?;
        let id = identity(model);
        // Check the manifest first: a mismatching index is not worth validating in full.
        // An index of another layout version is a mismatch (rebuild from the stored passages),
        // not damage.
        let bytes = &saved.bytes;
        let manifest = lightembed_index::read_manifest_prefix(bytes).map_err(compat_error)?;
        manifest.check_compatible(&id).map_err(compat_error)?;
        let Some(sections) = &saved.sections else {
            return Err(AttachError::Mismatch(OLD_APP_INDEX.to_string()));
        };
        let mut sections: BTreeMap<String, (String, String)> = serde_json::from_str(sections)
            .map_err(|e| AttachError::Corrupt(format!("page titles: {e}")))?;
        let index = Index::from_bytes(bytes).map_err(|e| AttachError::Corrupt(e.to_string()))?;
        if let Some(d) = index.documents().find(|d| !sections.contains_key(&d.id)) {
            return Err(AttachError::Corrupt(format!(
                "passage {} has no page title",
                d.id
            )));
        }
        sections.retain(|id, _| index.contains(id));
        let notes = index
            .check_compatible(&id)
            .map_err(compat_error)?
            .iter()
            .map(|w| w.to_string())
            .collect();
        self.index = Some(index);
        self.sections = sections;
        Ok(notes)
    }

    /// Creates an empty index at `dims` (`None`: `output_dim`) for the loaded model, replacing
    /// any index. Its keyword side stems words with the English stemmer unless the model's id
    /// names another language than English (`lightembed-tr-0l`: English suffix rules would cut
    /// its words wrongly; they match as written, lower-cased and accents folded) — the rule of
    /// `lightembed index --keyword-stemming auto`
    /// ([`lightembed_index::keywords::default_stemming`]), set before anything is inserted.
    ///
    /// # Errors
    /// No model, or `dims` not valid for it.
    pub fn new_index(&mut self, dims: Option<usize>) -> Result<(), WorkerError> {
        let model = self.model_or_err()?;
        let dims = dims.unwrap_or(model.output_dim());
        let fields = identity(model).manifest_fields(dims)?;
        let mut index = Index::new(fields, Params::default())?;
        index.set_keyword_stemming(lightembed_index::keywords::default_stemming(
            model.model_id(),
        ))?;
        self.index = Some(index);
        self.sections.clear();
        Ok(())
    }

    /// Creates an index at `dims` unless one exists.
    ///
    /// # Errors
    /// As [`WorkerState::new_index`].
    pub fn ensure_index(&mut self, dims: Option<usize>) -> Result<(), WorkerError> {
        if self.index.is_none() {
            self.new_index(dims)?;
        }
        Ok(())
    }

    /// Drops the index (e.g. after a mismatch, until re-indexing).
    pub fn drop_index(&mut self) {
        self.index = None;
        self.sections.clear();
    }

    /// The index dims, else the model's `output_dim`.
    pub fn dims(&self) -> Option<usize> {
        self.index
            .as_ref()
            .map(|i| i.dims())
            .or_else(|| self.model.as_ref().map(|m| m.output_dim()))
    }

    /// Embeds passages at the index dims ([`embed_texts`]: [`FORWARD_BATCH`] per forward pass, as
    /// the helper workers do). What is embedded is [`Passage::embed_text`] (heading + text), as
    /// `lightembed index` does.
    ///
    /// # Errors
    /// No model or no index.
    pub fn embed_passages(&self, passages: &[Passage]) -> Result<Vec<Vec<f32>>, WorkerError> {
        let model = self.model_or_err()?;
        let dims = self
            .index
            .as_ref()
            .ok_or(WorkerError::NoIndex("no index"))?
            .dims();
        let texts: Vec<&str> = passages.iter().map(Passage::embed_text).collect();
        Ok(embed_texts(model, &texts, dims)?)
    }

    /// Inserts (or replaces) a passage with its vector. The index payload is titled with the
    /// passage's display title (ingestion's rule, `lightembed_ingest::section_title`: what
    /// `lightembed index` stores for it); its page title and heading are kept apart beside the
    /// index.
    ///
    /// # Errors
    /// No index, or the index refused the vector.
    pub fn insert(&mut self, p: &Passage, vector: &[f32]) -> Result<(), WorkerError> {
        let index = self
            .index
            .as_mut()
            .ok_or(WorkerError::NoIndex("no index"))?;
        let ip = &p.passage;
        if index.contains(&ip.id) {
            index.delete(&ip.id);
        }
        let snippet = lightembed_index::snippet::head(&ip.text, SNIPPET_CHARS);
        // BM25 indexes the page title and what is embedded (heading + whole passage), not the
        // cut snippet.
        index.insert_with_text(
            Document::new(ip.id.clone(), ip.title.clone(), ip.url.clone(), snippet),
            vector,
            &p.keyword_text(),
        )?;
        self.sections
            .insert(ip.id.clone(), (ip.page_title.clone(), ip.heading.clone()));
        Ok(())
    }

    /// The ids of document `doc_id`'s indexed passages, in the order they were inserted (a
    /// document's passages are inserted in reading order).
    pub fn passage_ids_of(&self, doc_id: &str) -> Vec<String> {
        self.index.as_ref().map_or_else(Vec::new, |index| {
            index
                .documents()
                .filter(|d| doc_id_of(&d.id) == doc_id)
                .map(|d| d.id.clone())
                .collect()
        })
    }

    /// The page title and heading of the indexed passage `id`.
    pub fn section(&self, id: &str) -> Option<(&str, &str)> {
        self.sections
            .get(id)
            .map(|(page, heading)| (page.as_str(), heading.as_str()))
    }

    /// Embeds `query` at the index dims.
    ///
    /// # Errors
    /// No model or no index.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, WorkerError> {
        let model = self.model_or_err()?;
        let dims = self
            .index
            .as_ref()
            .ok_or(WorkerError::NoIndex("no index: index some documents first"))?
            .dims();
        Ok(model.embed(query, dims)?)
    }

    /// The `k` best passages for `query` in `mode` (one per section), with excerpts that mark
    /// the query's words. `vector` is the embedded query ([`WorkerState::embed_query`]); keyword mode
    /// needs none.
    ///
    /// # Errors
    /// No index, or a vector is missing for hybrid / vector mode.
    pub fn search(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        mode: SearchMode,
    ) -> Result<Vec<ShownHit>, WorkerError> {
        let index = self
            .index
            .as_ref()
            .ok_or(WorkerError::NoIndex("no index"))?;
        let opts = SearchOptions {
            mode,
            ..SearchOptions::default()
        };
        let hits = index.query(vector, query, k, &opts)?;
        let stem = index.keyword_stemming();
        Ok(hits
            .into_iter()
            .map(|h| ShownHit::new(h, query, stem, EXCERPT_CHARS))
            .collect())
    }

    /// True when some passage holds a word of `query` (the keyword side matches; `true` without
    /// an index, so no note is shown).
    pub fn keyword_matches(&self, query: &str) -> bool {
        use lightembed_index::Searcher;
        self.index
            .as_ref()
            .is_none_or(|ix| ix.keyword_matches(query).unwrap_or(true))
    }

    /// Deletes every passage of `doc_id`; returns how many were deleted.
    pub fn delete_doc(&mut self, doc_id: &str) -> Vec<String> {
        let Some(index) = self.index.as_mut() else {
            return Vec::new();
        };
        let ids = ids_of_doc(&self.sections, doc_id);
        for id in &ids {
            index.delete(id);
            self.sections.remove(id);
        }
        ids
    }

    /// Deletes the passages of `doc_id` whose ids are not in `keep` — before a new version of a
    /// document is indexed, so an edited, shorter document loses its old higher-numbered
    /// passages. Returns the deleted ids (to delete from storage too).
    pub fn delete_stale(&mut self, doc_id: &str, keep: &[Passage]) -> Vec<String> {
        let Some(index) = self.index.as_mut() else {
            return Vec::new();
        };
        let keep: std::collections::HashSet<&str> = keep.iter().map(Passage::id).collect();
        let mut ids = ids_of_doc(&self.sections, doc_id);
        ids.retain(|id| !keep.contains(id.as_str()));
        for id in &ids {
            index.delete(id);
            self.sections.remove(id);
        }
        ids
    }

    /// The index as the UI sees it.
    pub fn state(&self) -> IndexState {
        let Some(index) = self.index.as_ref() else {
            return IndexState::default();
        };
        let m = index.manifest();
        let mut docs: Vec<DocSummary> = Vec::new();
        let mut pos: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for d in index.documents() {
            let doc_id = doc_id_of(&d.id);
            match pos.get(doc_id) {
                Some(&i) => docs[i].passages += 1,
                None => {
                    pos.insert(doc_id.to_string(), docs.len());
                    // The page title, kept apart (a display title is never split back).
                    let title = self.section(&d.id).map_or("", |(page, _)| page).to_string();
                    docs.push(DocSummary {
                        doc_id: doc_id.to_string(),
                        title,
                        passages: 1,
                    });
                }
            }
        }
        IndexState {
            count: index.len(),
            dims: index.dims(),
            built_with: format!("{} v{}", m.model_id, m.model_version),
            docs,
            notes: Vec::new(),
            restored: false,
            restore_ms: 0.0,
        }
    }

    /// The index bytes to persist.
    pub fn index_bytes(&self) -> Option<Vec<u8>> {
        self.index.as_ref().map(|i| i.to_bytes())
    }

    /// The index as it is saved: its bytes and its passages' page titles and headings.
    pub fn saved(&self) -> Option<SavedIndex> {
        let bytes = self.index_bytes()?;
        Some(SavedIndex {
            bytes,
            sections: Some(self.sections_json()),
        })
    }

    /// The index's bytes ([`SavedIndex::bytes`]) handed to `sink` in pieces of about
    /// `chunk_bytes` ([`Index::write_chunks`]), so that a save never holds a second whole copy
    /// of the index in the worker's heap. False (and nothing written) when there is no index.
    pub fn write_index(&self, chunk_bytes: usize, sink: &mut dyn FnMut(&[u8])) -> bool {
        match &self.index {
            Some(index) => {
                index.write_chunks(chunk_bytes, sink);
                true
            }
            None => false,
        }
    }

    /// [`SavedIndex::sections`] of the index as it is now.
    pub fn sections_json(&self) -> String {
        serde_json::to_string(&self.sections).expect("strings serialise")
    }

    /// Cosine similarity of two texts at `dims` (default: the index dims, else `output_dim`).
    ///
    /// # Errors
    /// No model or invalid dims.
    pub fn cosine(
        &self,
        a: &str,
        b: &str,
        dims: Option<usize>,
    ) -> Result<(f32, usize), WorkerError> {
        let model = self.model_or_err()?;
        let dims = dims.or(self.dims()).unwrap_or(model.output_dim());
        let v = model.embed_batch(&[a, b], dims)?;
        let c: f32 = v[0].iter().zip(&v[1]).map(|(x, y)| x * y).sum();
        Ok((c, dims))
    }

    /// Tokens and ids of `text` as the model sees them.
    ///
    /// # Errors
    /// No model.
    pub fn tokenize(&self, text: &str) -> Result<Vec<TokenOut>, WorkerError> {
        let model = self.model_or_err()?;
        Ok(model
            .tokenizer()
            .encode_with_tokens(text)
            .into_iter()
            .map(|(t, id)| TokenOut {
                token: t.to_string(),
                id,
            })
            .collect())
    }

    /// 2-D PCA of up to `max_points` indexed passages (evenly sampled) and of `query`.
    ///
    /// # Errors
    /// No index, or fewer than two passages.
    pub fn project(
        &self,
        query: Option<&str>,
        max_points: usize,
    ) -> Result<(Vec<Point>, Option<Point>, f32), WorkerError> {
        let index = self
            .index
            .as_ref()
            .ok_or(WorkerError::NoIndex("no index"))?;
        let d = index.dims();
        let docs: Vec<&Document> = index.documents().collect();
        let step = docs.len().div_ceil(max_points.max(1)).max(1);
        let sample: Vec<&Document> = docs.iter().step_by(step).copied().collect();
        let mut data = Vec::with_capacity(sample.len() * d);
        for doc in &sample {
            data.extend_from_slice(
                index
                    .vector(&doc.id)
                    .ok_or(WorkerError::Plot("vector missing"))?,
            );
        }
        let pca = Pca::fit(&data, d).ok_or(WorkerError::Plot(
            "index at least two passages to plot them",
        ))?;
        let points = sample
            .iter()
            .zip(data.chunks_exact(d))
            .map(|(doc, row)| {
                let (x, y) = pca.project(row);
                Point {
                    x,
                    y,
                    label: doc.payload.title.clone(),
                }
            })
            .collect();
        let q = match query.filter(|q| !q.trim().is_empty()) {
            Some(q) => {
                let v = self.embed_query(q)?;
                let (x, y) = pca.project(&v);
                Some(Point {
                    x,
                    y,
                    label: q.to_string(),
                })
            }
            None => None,
        };
        Ok((points, q, pca.explained()))
    }
}

fn compat_error(e: IndexError) -> AttachError {
    match e {
        IndexError::UnsupportedIndexVersion { .. }
        | IndexError::ModelIdMismatch { .. }
        | IndexError::ModelMajorMismatch { .. }
        | IndexError::DimsMismatch { .. } => AttachError::Mismatch(e.to_string()),
        other => AttachError::Corrupt(other.to_string()),
    }
}

/// The ids of `doc_id`'s passages (those whose [`doc_id_of`] is `doc_id`), from the ordered
/// map of sections, whose keys are exactly the index's passage ids: a range lookup, so that
/// deleting or replacing one document costs its own passages, not a scan of the whole index (a
/// folder of 6,000 files sent every document through [`WorkerState::delete_stale`]: O(n) each,
/// most of the indexing time past 50k passages — `bench/RESULTS.md`, "The app at 100k passages").
/// Sorted by id, not in insertion order.
fn ids_of_doc(sections: &BTreeMap<String, (String, String)>, doc_id: &str) -> Vec<String> {
    // Every id whose document is `doc_id` is `doc_id` itself or starts with `doc_id#`; both sort
    // in [doc_id, doc_id + "$") ('$' follows '#'), beside a few others (`doc_id!x`) filtered out.
    let end = format!("{doc_id}$");
    sections
        .range::<str, _>((
            std::ops::Bound::Included(doc_id),
            std::ops::Bound::Excluded(end.as_str()),
        ))
        .map(|(id, _)| id)
        .filter(|id| doc_id_of(id) == doc_id)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> Vec<u8> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/models")
            .join(name);
        std::fs::read(p).expect("fixture model")
    }

    /// The same model file with header byte 44 (`version_major`) changed and the trailing
    /// SHA-256 recomputed — a valid model of another major version.
    pub(crate) fn with_major(bytes: &[u8], major: u8) -> Vec<u8> {
        let mut b = bytes.to_vec();
        let v = lightembed::Model::from_bytes(bytes)
            .unwrap()
            .header()
            .model_version();
        lightembed::writer::set_model_version(&mut b, lightembed::ModelVersion { major, ..v });
        b
    }

    /// The same model file with header `model_id` (bytes 48..64, NUL-padded) set to `id` and the
    /// trailing SHA-256 recomputed: a model that names another language.
    pub(crate) fn with_model_id(bytes: &[u8], id: &str) -> Vec<u8> {
        let mut b = bytes.to_vec();
        lightembed::writer::set_model_id(&mut b, id).unwrap();
        b
    }

    /// Passage `id` of document `doc` (page `page`, under `heading`, at `url`), as ingestion
    /// makes one.
    fn passage(doc: &str, id: &str, page: &str, heading: &str, url: &str, text: &str) -> Passage {
        Passage::new(
            doc,
            lightembed_ingest::Passage::new(id, page, heading, url, text),
        )
    }

    fn passages(n: usize) -> Vec<Passage> {
        (0..n)
            .map(|i| {
                passage(
                    &format!("doc{}", i % 3),
                    &format!("doc{}#{}", i % 3, i),
                    &format!("Doc {}", i % 3),
                    &format!("H{i}"),
                    "",
                    &format!(
                        "passage number {i} about hello world {}",
                        "word ".repeat(i % 5)
                    ),
                )
            })
            .collect()
    }

    /// `p` with another text (and `url`), its embedded text following.
    fn with_text(p: &Passage, text: &str, url: &str) -> Passage {
        let i = &p.passage;
        passage(&p.doc_id, &i.id, &i.page_title, &i.heading, url, text)
    }

    fn loaded(name: &str) -> WorkerState {
        let bytes = fixture(name);
        let (m, info) = load_model(&bytes, name, None).unwrap();
        let mut c = WorkerState::new();
        c.set_model(m, info);
        c
    }

    #[test]
    fn index_search_delete_and_restore() {
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let ps = passages(12);
        let vs = c.embed_passages(&ps).unwrap();
        for (p, v) in ps.iter().zip(&vs) {
            c.insert(p, v).unwrap();
        }
        let st = c.state();
        assert_eq!(st.count, 12);
        assert_eq!(st.docs.len(), 3);
        assert_eq!(st.docs[0].passages, 4);
        // The exact embedded text of a passage (heading + text) finds it first.
        let q = c.embed_query(ps[5].embed_text()).unwrap();
        let hits = c.search(Some(&q), "", 3, SearchMode::Vector).unwrap();
        assert_eq!(hits[0].id, ps[5].id());
        assert!((hits[0].score - 1.0).abs() < 1e-4);
        // Restore from bytes into a fresh core with the same model: no embedding needed.
        let saved = c.saved().unwrap();
        let mut c2 = loaded("static_fp32_uncased.bin");
        assert!(c2.attach_index(&saved).unwrap().is_empty());
        assert_eq!(c2.state().count, 12);
        assert_eq!(
            c2.search(Some(&q), "", 1, SearchMode::Vector).unwrap()[0].id,
            ps[5].id()
        );
        // Delete a document.
        assert_eq!(c2.delete_doc("doc1").len(), 4);
        assert_eq!(c2.state().count, 8);
    }

    /// One title rule (ingestion's): a result is titled `Heading — Page`, as `lightembed index`
    /// titles the same passage, and the document list shows the page title kept apart — also
    /// when the page title holds the separators of either rule (a Sphinx title `Page — Project`,
    /// a `›`), and also after the index is saved and restored. An index saved by the app before
    /// storage version 2 (no page titles apart) is a mismatch to rebuild from the stored
    /// passages; page titles that miss a passage of the index are damage.
    #[test]
    fn results_are_titled_by_ingestions_rule_and_documents_by_their_page_title() {
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let page = "Install — Garden › 1.0 documentation";
        let ps = [
            passage("g", "g#1", page, "", "", "Garden intro."),
            passage("g", "g#win:1", page, "Windows", "", "Run setup on windows."),
            passage("g", "g#i:1", page, "Install", "", "Install again."),
            passage("n", "n#1", "notes.txt", "", "", "Plain notes."),
        ];
        let vs = c.embed_passages(&ps).unwrap();
        for (p, v) in ps.iter().zip(&vs) {
            c.insert(p, v).unwrap();
        }
        let check = |c: &WorkerState| {
            let docs: Vec<(String, String, usize)> = c
                .state()
                .docs
                .into_iter()
                .map(|d| (d.doc_id, d.title, d.passages))
                .collect();
            assert_eq!(
                docs,
                [
                    ("g".to_string(), page.to_string(), 3),
                    ("n".to_string(), "notes.txt".to_string(), 1)
                ]
            );
            let hits = c.search(None, "windows", 5, SearchMode::Keyword).unwrap();
            assert_eq!(hits[0].id, "g#win:1");
            assert_eq!(
                hits[0].title,
                "Windows — Install — Garden › 1.0 documentation"
            );
            assert_eq!(c.section("g#win:1"), Some((page, "Windows")));
            let titles: Vec<String> = c
                .index()
                .unwrap()
                .documents()
                .map(|d| d.payload.title.clone())
                .collect();
            let want: Vec<String> = ps.iter().map(|p| p.passage.title.clone()).collect();
            assert_eq!(titles, want, "the payload title is ingestion's");
            assert_eq!(want[1], lightembed_ingest::section_title(page, "Windows"));
        };
        check(&c);
        let saved = c.saved().unwrap();
        let mut c2 = loaded("static_fp32_uncased.bin");
        c2.attach_index(&saved).unwrap();
        check(&c2);
        // Deleting a document forgets its page titles; the rest are kept.
        c2.delete_doc("g");
        assert_eq!(c2.section("g#win:1"), None);
        assert_eq!(c2.section("n#1"), Some(("notes.txt", "")));

        let old = SavedIndex {
            bytes: saved.bytes.clone(),
            sections: None,
        };
        let mut c3 = loaded("static_fp32_uncased.bin");
        match c3.attach_index(&old) {
            Err(AttachError::Mismatch(m)) => assert_eq!(m, OLD_APP_INDEX),
            other => panic!("expected the old-app mismatch, got {other:?}"),
        }
        assert!(c3.index().is_none());
        let partial = SavedIndex {
            bytes: saved.bytes.clone(),
            sections: Some(r#"{"g#1":["Garden",""]}"#.into()),
        };
        match c3.attach_index(&partial) {
            Err(AttachError::Corrupt(m)) => assert!(m.contains("has no page title"), "{m}"),
            other => panic!("expected damage, got {other:?}"),
        }
        let garbage = SavedIndex {
            bytes: saved.bytes,
            sections: Some("[1,2]".into()),
        };
        assert!(matches!(
            c3.attach_index(&garbage),
            Err(AttachError::Corrupt(_))
        ));
        assert!(c3.index().is_none());
    }

    #[test]
    fn major_bump_is_a_mismatch_with_the_spec_message() {
        let bytes = fixture("static_fp32_uncased.bin");
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let ps = passages(2);
        let vs = c.embed_passages(&ps).unwrap();
        c.insert(&ps[0], &vs[0]).unwrap();
        let stored = c.saved().unwrap();

        let v = c.info().unwrap().version.clone();
        let major: u8 = v.split('.').next().unwrap().parse().unwrap();
        let bumped = with_major(&bytes, major + 1);
        let (m, info) = load_model(&bumped, "bumped", None).unwrap();
        let mut c2 = WorkerState::new();
        c2.set_model(m, info);
        match c2.attach_index(&stored) {
            Err(AttachError::Mismatch(msg)) => {
                assert!(msg.starts_with("Index was built with "), "{msg}");
                assert!(msg.ends_with("Re-run `lightembed index`."), "{msg}");
                assert!(
                    msg.contains(&format!("the loaded model is v{}.", major + 1)),
                    "{msg}"
                );
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
        assert!(c2.index().is_none());
        // A corrupted index is reported as such.
        let mut bad = stored.clone();
        let n = bad.bytes.len();
        bad.bytes[n - 1] ^= 0xff;
        let mut c3 = loaded("static_fp32_uncased.bin");
        assert!(matches!(
            c3.attach_index(&bad),
            Err(AttachError::Corrupt(_))
        ));
    }

    /// Issue 12: the app ranks like the CLI (hybrid by default, keyword mode without an
    /// embedding), one hit per section, and marks the query's words in the excerpt; an index of
    /// the old layout (v1) is a mismatch to rebuild from, not "damaged".
    #[test]
    fn hybrid_and_keyword_search_with_marked_excerpts() {
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let mut ps = passages(6);
        ps[4] = with_text(
            &ps[4],
            "Borrowing rules: a mutable reference excludes every other reference.",
            "book.html#refs",
        );
        ps[5] = with_text(
            &ps[5],
            "More about references and borrowing in loops.",
            "book.html#refs",
        );
        let vs = c.embed_passages(&ps).unwrap();
        for (p, v) in ps.iter().zip(&vs) {
            c.insert(p, v).unwrap();
        }
        let kw = c
            .search(None, "mutable references", 10, SearchMode::Keyword)
            .unwrap();
        // Both passages of the section match; one hit per section is shown.
        assert_eq!(kw.len(), 1);
        assert_eq!(kw[0].id, ps[4].id());
        let marks: Vec<&str> = kw[0]
            .highlights
            .iter()
            .map(|&(a, b)| &kw[0].snippet[a..b])
            .collect();
        assert_eq!(marks, ["mutable", "reference", "reference"]);
        let q = c.embed_query("mutable references").unwrap();
        let hy = c
            .search(Some(&q), "mutable references", 3, SearchMode::Hybrid)
            .unwrap();
        assert_eq!(hy[0].id, ps[4].id());
        assert!(c.search(None, "x", 3, SearchMode::Hybrid).is_err());

        let mut v1 = c.saved().unwrap();
        v1.bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
        let mut c2 = loaded("static_fp32_uncased.bin");
        match c2.attach_index(&v1) {
            Err(AttachError::Mismatch(msg)) => assert_eq!(
                msg,
                "Index was built with index format v1 but this lightembed reads index format v2. Re-run `lightembed index`."
            ),
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }

    /// Issue 16: an index made for a model of another language than English (by its id,
    /// `lightembed-tr-0l`) does not apply the English stemmer to its keyword side — set before
    /// the first insert and kept in the index bytes, so a restored index tokenises queries alike;
    /// English models and ids outside the scheme keep stemming.
    #[test]
    fn keyword_stemming_is_off_for_a_model_of_another_language() {
        let plain = fixture("static_fp32_uncased.bin");
        let p = with_text(
            &passages(1)[0],
            "Every reference is checked by the borrow checker.",
            "",
        );
        let turkish = passage(
            "doc9",
            "doc9#1",
            "Belgeler",
            "",
            "",
            "Sayfa numaraları ekleme",
        );
        for (id, stem) in [
            ("lightembed-en-0l", true),
            ("lightembed-tr-0l", false),
            ("static-fp32", true),
        ] {
            let bytes = with_model_id(&plain, id);
            let (m, info) = load_model(&bytes, id, None).unwrap();
            assert_eq!(info.model_id, id);
            let mut c = WorkerState::new();
            c.set_model(m, info);
            c.ensure_index(None).unwrap();
            assert_eq!(c.index().unwrap().keyword_stemming(), stem, "{id}");
            let ps = [p.clone(), turkish.clone()];
            let vs = c.embed_passages(&ps).unwrap();
            for (p, v) in ps.iter().zip(&vs) {
                c.insert(p, v).unwrap();
            }
            // "references" meets "reference" only through the English stemmer.
            let hits = c
                .search(None, "references", 5, SearchMode::Keyword)
                .unwrap();
            assert_eq!(hits.len(), usize::from(stem), "{id}: {hits:?}");
            // Words as written are found either way (lower-cased): "numaraları" as itself.
            let hits = c
                .search(None, "Numaraları", 5, SearchMode::Keyword)
                .unwrap();
            assert_eq!(hits.len(), 1, "{id}");
            assert_eq!(hits[0].id, "doc9#1");
            let marks: Vec<&str> = hits[0]
                .highlights
                .iter()
                .map(|&(a, b)| &hits[0].snippet[a..b])
                .collect();
            assert_eq!(marks, ["numaraları"], "{id}");
            // Restored from its bytes, the index keeps its setting.
            let mut c2 = WorkerState::new();
            let (m, info) = load_model(&bytes, id, None).unwrap();
            c2.set_model(m, info);
            c2.attach_index(&c.saved().unwrap()).unwrap();
            assert_eq!(c2.index().unwrap().keyword_stemming(), stem, "{id}");
            // A re-index (a new index for the same model) makes the same choice.
            c2.new_index(Some(8)).unwrap();
            assert_eq!(c2.index().unwrap().keyword_stemming(), stem, "{id}");
        }
    }

    #[test]
    fn corrupted_model_is_rejected_with_a_reason() {
        let mut bytes = fixture("static_int8_uncased_keep_accents.bin");
        let n = bytes.len();
        bytes[n / 2] ^= 0x55;
        // A digest from the platform (WebCrypto in the worker) that is not this file's: refused.
        let wrong = load_model(&bytes, "x", Some([0; 32])).err().unwrap();
        assert!(
            matches!(
                wrong,
                WorkerError::Load(lightembed::LoadError::HashMismatch { .. })
            ),
            "{wrong}"
        );
        assert!(wrong.to_string().starts_with("SHA-256 mismatch"), "{wrong}");
        let err = load_model(&bytes, "x", None).err().unwrap();
        assert!(
            matches!(
                err,
                WorkerError::Load(lightembed::LoadError::HashMismatch { .. })
            ),
            "{err}"
        );
        let truncated = &fixture("static_int8_uncased_keep_accents.bin")[..1000];
        assert!(load_model(truncated, "x", None).is_err());
    }

    #[test]
    fn playground_functions() {
        let mut c = loaded("tern_2l_cased.bin");
        let (cos, dims) = c.cosine("hello world", "hello world", None).unwrap();
        assert!((cos - 1.0).abs() < 1e-4);
        assert_eq!(dims, c.info().unwrap().output_dim);
        let toks = c.tokenize("hello").unwrap();
        assert!(toks.len() >= 2);
        c.ensure_index(Some(*c.info().unwrap().valid_dims.first().unwrap()))
            .unwrap();
        let ps = passages(10);
        let vs = c.embed_passages(&ps).unwrap();
        for (p, v) in ps.iter().zip(&vs) {
            c.insert(p, v).unwrap();
        }
        let (points, q, explained) = c.project(Some("hello"), 5).unwrap();
        assert_eq!(points.len(), 5);
        assert!(q.is_some());
        assert!((0.0..=1.0).contains(&explained));
    }

    /// What is embedded is heading + "\n" + text, as in the CLI: the query equal to that text
    /// scores 1, the text alone less.
    #[test]
    fn passages_are_embedded_with_their_heading() {
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let ps = passages(3);
        let vs = c.embed_passages(&ps).unwrap();
        assert_eq!(ps[1].embed_text(), format!("H1\n{}", ps[1].passage.text));
        let model = c.model().unwrap();
        let want = model.embed(ps[1].embed_text(), c.dims().unwrap()).unwrap();
        assert_eq!(vs[1], want);
        let text_only = model.embed(&ps[1].passage.text, c.dims().unwrap()).unwrap();
        assert_ne!(vs[1], text_only);
    }

    /// Deleting one document finds its passages by an id range (not a scan of the index): ids of
    /// other documents that sort beside it — a longer name, characters before '#', a document
    /// whose id has no '#' — stay, and after a save and restore the same ids are found.
    #[test]
    fn deleting_a_document_keeps_documents_whose_ids_sort_beside_it() {
        let mut c = loaded("static_fp32_uncased.bin");
        c.ensure_index(None).unwrap();
        let ids = [
            ("user/a.md", "user/a.md#1"),
            ("user/a.md", "user/a.md#intro"),
            ("user/a.md", "user/a.md"),
            ("user/a.md!", "user/a.md!#1"),
            ("user/a.md.bak", "user/a.md.bak#1"),
            ("user/a.m", "user/a.m#1"),
            ("user/a.md\"", "user/a.md\"#2"),
        ];
        let ps: Vec<Passage> = ids
            .iter()
            .enumerate()
            .map(|(i, (doc, id))| passage(doc, id, "P", "H", "", &format!("text {i} of {doc}")))
            .collect();
        let vs = c.embed_passages(&ps).unwrap();
        for (p, v) in ps.iter().zip(&vs) {
            c.insert(p, v).unwrap();
        }
        let restored = |c: &WorkerState| {
            let mut r = loaded("static_fp32_uncased.bin");
            r.attach_index(&c.saved().unwrap()).unwrap();
            r
        };
        let mut r = restored(&c);
        let mut stale = r.delete_stale("user/a.md", &ps[..1]);
        stale.sort();
        assert_eq!(stale, ["user/a.md", "user/a.md#intro"]);
        let mut gone = c.delete_doc("user/a.md");
        gone.sort();
        assert_eq!(gone, ["user/a.md", "user/a.md#1", "user/a.md#intro"]);
        let mut left: Vec<&str> = c
            .index()
            .unwrap()
            .documents()
            .map(|d| d.id.as_str())
            .collect();
        left.sort_unstable();
        assert_eq!(
            left,
            [
                "user/a.m#1",
                "user/a.md!#1",
                "user/a.md\"#2",
                "user/a.md.bak#1"
            ]
        );
        assert!(c.delete_doc("user/a.md").is_empty());
        assert_eq!(restored(&c).state().count, 4);
    }

    /// The stale-passages bug: dropping an edited, shorter version of a document removes its old
    /// higher-numbered passages from the index — also from the index bytes that are stored and
    /// restored on reload — and leaves other documents alone.
    #[test]
    fn a_shorter_new_version_of_a_document_drops_its_old_passages() {
        use crate::worker::chunk::{document_passages, Format};
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/models/lightembed-en-static.bin"
        ))
        .unwrap();
        let (m, info) = load_model(&bytes, "static", None).unwrap();
        let mut c = WorkerState::new();
        c.set_model(m, info);
        c.ensure_index(None).unwrap();
        let index_doc = |c: &mut WorkerState, content: &str| -> Vec<String> {
            let ps = document_passages("notes.md", content, Format::Markdown, c.model().unwrap());
            let stale = c.delete_stale("user/notes.md", &ps);
            let vs = c.embed_passages(&ps).unwrap();
            for (p, v) in ps.iter().zip(&vs) {
                c.insert(p, v).unwrap();
            }
            stale
        };
        let other = document_passages(
            "other.txt",
            "Another document.",
            Format::Text,
            c.model().unwrap(),
        );
        let v = c.embed_passages(&other).unwrap();
        c.insert(&other[0], &v[0]).unwrap();

        let sentence = "The garden needs water every morning in the summer months. ";
        let body: String = (0..30)
            .map(|i| format!("Bed number {i} needs water every morning in summer. "))
            .collect();
        let long = format!("# Notes\n\n{body}\n\n## Pests\n\nSlugs eat lettuce.\n");
        assert!(index_doc(&mut c, &long).is_empty());
        let before: Vec<String> = c
            .index()
            .unwrap()
            .documents()
            .filter(|d| d.id.starts_with("user/notes.md#"))
            .map(|d| d.id.clone())
            .collect();
        assert!(before.len() >= 4, "{before:?}");
        assert!(
            before.contains(&"user/notes.md#notes:3".to_string()),
            "{before:?}"
        );

        // The edited file: one short section left.
        let short = format!("# Notes\n\n{sentence}\n");
        let mut stale = index_doc(&mut c, &short);
        stale.sort();
        let mut want: Vec<String> = before
            .iter()
            .filter(|id| id.as_str() != "user/notes.md#notes:1")
            .cloned()
            .collect();
        want.sort();
        assert_eq!(
            stale, want,
            "every old passage but the one still there is deleted"
        );
        let st = c.state();
        assert_eq!(st.count, 2);
        let notes = st
            .docs
            .iter()
            .find(|d| d.doc_id == "user/notes.md")
            .unwrap();
        assert_eq!((notes.title.as_str(), notes.passages), ("Notes", 1));
        assert!(st.docs.iter().any(|d| d.doc_id == "user/other.txt"));
        // "Reload": the stored bytes restore the index without the stale passages.
        let mut c2 = WorkerState::new();
        let (m, info) = load_model(&bytes, "static", None).unwrap();
        c2.set_model(m, info);
        c2.attach_index(&c.saved().unwrap()).unwrap();
        let ids: Vec<String> = c2
            .index()
            .unwrap()
            .documents()
            .map(|d| d.id.clone())
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(
            ids.contains(&"user/notes.md#notes:1".to_string()),
            "{ids:?}"
        );
        // A search for the deleted section's text finds nothing of it.
        let q = c2.embed_query("Pests\nSlugs eat lettuce.").unwrap();
        assert!(c2
            .search(Some(&q), "", 5, SearchMode::Vector)
            .unwrap()
            .iter()
            .all(|h| !h.id.contains("pests")));
    }
}
