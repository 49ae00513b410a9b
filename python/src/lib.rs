//! `lightembed._lightembed`: the native module of the Python package `lightembed` (PyO3, abi3 for
//! CPython ≥ 3.9). Thin bindings over the workspace's crates — nothing is re-implemented here:
//!
//! - [`Model`]: the engine (`lightembed::Model`): load a `.bin` (or the bundled
//!   `lightembed-en-static`), embed on all cores with the GIL released, tokenize;
//! - [`PyIndex`] (`lightembed.Index`): the CLI's index pipeline (`lightembed_cli::index_build`:
//!   records or files → passages → vectors → HNSW + BM25), its index folder format
//!   (`index.bin` + `index.json`) and the index crate's ranking (`lightembed_index::Index::query`,
//!   as `lightembed search` calls it);
//! - `_build_site` and `_run_cli`: the CLI's `site` command and the whole CLI, in-process (the
//!   `lightembed` console script).
//!
//! Errors carry the CLI's text: what `lightembed` prints after `error: ` is the exception's
//! message (`lightembed.LightembedError`, a `ValueError`; `LightembedFileNotFoundError`, also a
//! `FileNotFoundError`, when a file is missing). The exception classes live in Python
//! (`lightembed/_errors.py`) so one class can derive from both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser;
use lightembed_cli::index_build::{self, IndexArgs, Inputs};
use lightembed_cli::index_dir::{
    self, SidecarDoc, SidecarParams, SidecarSeconds, INDEX_FILE, SIDECAR_FILE,
};
use lightembed_index::snippet::excerpt;
use lightembed_index::{ModelIdentity, SearchOptions, Searcher, MAX_EF};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;

mod errors {
    pyo3::import_exception!(lightembed._errors, LightembedError);
    pyo3::import_exception!(lightembed._errors, LightembedFileNotFoundError);
}
use errors::{LightembedError, LightembedFileNotFoundError};

/// The default English static model (`public/models/lightembed-en-static.bin`), in the wheel: the
/// CLI's built-in model (`lightembed site` without --model), read at run time through
/// [`lightembed_cli::default_model`], so the wheel's module holds the 4.7 MB once.
fn bundled_model() -> &'static [u8] {
    lightembed_cli::default_model().unwrap_or(&[])
}

/// The name [`Model::load`] knows [`bundled_model`] by (its file name without `.bin`).
const BUNDLED_NAME: &str = "lightembed-en-static";

/// An error of the CLI's code as a Python exception with the CLI's text (`{e:#}`, on one line as
/// `lightembed` prints it): `LightembedFileNotFoundError` when a file was missing, else
/// `LightembedError`.
fn cli_error(e: anyhow::Error) -> PyErr {
    let msg = format!("{e:#}").replace('\n', " ");
    let missing = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
    });
    if missing {
        LightembedFileNotFoundError::new_err(msg)
    } else {
        LightembedError::new_err(msg)
    }
}

/// `warnings.warn(message, stacklevel=2)`.
fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("stacklevel", 2)?;
    py.import("warnings")?
        .getattr("warn")?
        .call((message,), Some(&kwargs))?;
    Ok(())
}

/// The Python type name of `obj` (`int`, `bytes`, …) for error messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A progress bar on stderr: tqdm's when tqdm is installed, else one line of text rewritten in
/// place (`Encoding: 512/1000`), written through `sys.stderr`.
enum Progress<'py> {
    Off,
    Tqdm(Bound<'py, PyAny>),
    Text {
        stderr: Bound<'py, PyAny>,
        desc: &'static str,
        total: usize,
        done: usize,
    },
}

impl<'py> Progress<'py> {
    fn new(py: Python<'py>, show: bool, total: usize, desc: &'static str) -> PyResult<Self> {
        if !show {
            return Ok(Progress::Off);
        }
        if let Ok(tqdm) = py.import("tqdm.auto").and_then(|m| m.getattr("tqdm")) {
            let kwargs = PyDict::new(py);
            kwargs.set_item("total", total)?;
            kwargs.set_item("desc", desc)?;
            return Ok(Progress::Tqdm(tqdm.call((), Some(&kwargs))?));
        }
        let p = Progress::Text {
            stderr: py.import("sys")?.getattr("stderr")?,
            desc,
            total,
            done: 0,
        };
        p.draw()?;
        Ok(p)
    }

    fn draw(&self) -> PyResult<()> {
        if let Progress::Text {
            stderr,
            desc,
            total,
            done,
        } = self
        {
            let pct = if *total == 0 { 100 } else { done * 100 / total };
            stderr.call_method1("write", (format!("\r{desc}: {done}/{total} ({pct}%)"),))?;
            stderr.call_method0("flush")?;
        }
        Ok(())
    }

    fn update(&mut self, n: usize) -> PyResult<()> {
        match self {
            Progress::Off => Ok(()),
            Progress::Tqdm(bar) => bar.call_method1("update", (n,)).map(drop),
            Progress::Text { done, .. } => {
                *done += n;
                self.draw()
            }
        }
    }

    fn close(&self) -> PyResult<()> {
        match self {
            Progress::Off => Ok(()),
            Progress::Tqdm(bar) => bar.call_method0("close").map(drop),
            Progress::Text { stderr, .. } => stderr.call_method1("write", ("\n",)).map(drop),
        }
    }
}

/// A lightembed model (`.bin` v1, verified on load): embeds texts into L2-normalised float32
/// vectors and tokenizes them, exactly as the `lightembed` CLI does.
///
/// `Model.load()` (or `Model()`) gives the bundled English model `lightembed-en-static`;
/// `Model.load("path/to/model.bin")` reads a file. Immutable and safe to share between threads.
#[pyclass(frozen, module = "lightembed", name = "Model")]
pub struct Model {
    inner: Arc<lightembed::Model>,
    /// The file it was read from (canonical), `None` for the bundled model or `from_bytes`.
    path: Option<PathBuf>,
    /// Where it came from, for `repr`: the path as given, or the bundled name.
    source: String,
    /// File size in bytes.
    file_size: usize,
}

impl Model {
    fn bundled() -> PyResult<Model> {
        let inner = lightembed::Model::from_bytes(bundled_model())
            .map_err(|e| LightembedError::new_err(format!("the bundled model: {e}")))?;
        Ok(Model {
            inner: Arc::new(inner),
            path: None,
            source: BUNDLED_NAME.into(),
            file_size: bundled_model().len(),
        })
    }

    fn from_path(path: &Path) -> PyResult<Model> {
        let (bytes, inner) = lightembed_cli::load(path).map_err(cli_error)?;
        Ok(Model {
            inner: Arc::new(inner),
            path: Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())),
            source: path.display().to_string(),
            file_size: bytes.len(),
        })
    }

    /// `dims`, or the model's output_dim; a dims the model does not have is a `ValueError` with
    /// the engine's message.
    fn dims(&self, dims: Option<usize>) -> PyResult<usize> {
        let dims = dims.unwrap_or(self.inner.output_dim());
        self.inner
            .check_dims(dims)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// The texts of `texts`: a `str` (`single`), or an iterable of `str` (a `TypeError` names the
/// first item that is not one).
fn texts_of(texts: &Bound<'_, PyAny>) -> PyResult<(Vec<String>, bool)> {
    if let Ok(s) = texts.cast::<PyString>() {
        return Ok((vec![s.extract()?], true));
    }
    let not_texts = || {
        PyTypeError::new_err(format!(
            "texts: expected a str or a sequence of str, got {}",
            type_name(texts)
        ))
    };
    if texts.cast::<PyBytes>().is_ok() {
        return Err(not_texts());
    }
    let iter = texts.try_iter().map_err(|_| not_texts())?;
    let mut out = Vec::with_capacity(texts.len().unwrap_or(0));
    for (i, item) in iter.enumerate() {
        let item = item?;
        match item.cast::<PyString>() {
            Ok(s) => out.push(s.extract()?),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "texts[{i}]: expected str, got {}",
                    type_name(&item)
                )))
            }
        }
    }
    Ok((out, false))
}

/// Embeds `texts` at `dims` on all cores (rayon; no Python object touched, so the caller can
/// release the GIL): `texts.len() × dims` floats, row-major. Element `i` is exactly
/// `model.embed(texts[i], dims)` (`embed_batch` shares matmuls, same results). An error names the
/// text: `texts[{offset + i}]: {error}`.
fn embed_all(
    model: &lightembed::Model,
    texts: &[String],
    dims: usize,
    offset: usize,
) -> Result<Vec<f32>, String> {
    let threads = rayon::current_num_threads().max(1);
    let per_task = texts.len().div_ceil(threads * 4).max(1);
    let parts: Vec<Result<Vec<Vec<f32>>, String>> = texts
        .par_chunks(per_task)
        .enumerate()
        .map(|(c, chunk)| {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            model.embed_batch(&refs, dims).map_err(|_| {
                // Name the text: the first one that fails alone.
                for (j, t) in chunk.iter().enumerate() {
                    if let Err(e) = model.embed(t, dims) {
                        return format!("texts[{}]: {e}", offset + c * per_task + j);
                    }
                }
                "embedding failed".to_string()
            })
        })
        .collect();
    let mut out = Vec::with_capacity(texts.len() * dims);
    for part in parts {
        for v in part? {
            out.extend_from_slice(&v);
        }
    }
    Ok(out)
}

#[pymethods]
impl Model {
    /// Same as `Model.load(path_or_name)`.
    #[new]
    #[pyo3(signature = (path_or_name=None))]
    fn py_new(path_or_name: Option<&Bound<'_, PyAny>>) -> PyResult<Model> {
        Model::load(path_or_name)
    }

    /// Loads and fully verifies a model: `path_or_name` is a path to a `.bin` file (`str` or
    /// `os.PathLike`) or the name of a bundled model (`"lightembed-en-static"`, the default
    /// English model, also what `None` gives).
    ///
    /// Raises `LightembedFileNotFoundError` (a `LightembedError` and a `FileNotFoundError`) when
    /// the file is missing, `LightembedError` when it is not a valid model; the message is the
    /// CLI's (`cannot read PATH: …`, `PATH: <load rule>`).
    #[staticmethod]
    #[pyo3(signature = (path_or_name=None))]
    fn load(path_or_name: Option<&Bound<'_, PyAny>>) -> PyResult<Model> {
        let Some(arg) = path_or_name else {
            return Model::bundled();
        };
        if let Ok(name) = arg.extract::<String>() {
            if name == BUNDLED_NAME {
                return Model::bundled();
            }
        }
        let path: PathBuf = arg.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "path_or_name: expected a str or os.PathLike, got {}",
                type_name(arg)
            ))
        })?;
        Model::from_path(&path)
    }

    /// A model from the bytes of a `.bin` file (`bytes` or `bytearray`). Raises
    /// `LightembedError` with the load rule's message when they are not a valid model.
    #[staticmethod]
    fn from_bytes(data: PyBackedBytes) -> PyResult<Model> {
        let inner = lightembed::Model::from_bytes(&data)
            .map_err(|e| LightembedError::new_err(e.to_string()))?;
        Ok(Model {
            inner: Arc::new(inner),
            path: None,
            source: "<bytes>".into(),
            file_size: data.len(),
        })
    }

    /// The header's `model_id`, e.g. `"lightembed-en-0l"` (`str`).
    #[getter]
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    /// The model version, `"major.minor.patch"` (`str`).
    #[getter]
    fn version(&self) -> String {
        self.inner.header().model_version().to_string()
    }

    /// Length of the full embedding (`int`), the default `dims` of `encode`.
    #[getter]
    fn output_dim(&self) -> usize {
        self.inner.output_dim()
    }

    /// The `dims` `encode` accepts: the Matryoshka prefixes and `output_dim`, ascending
    /// (`list[int]`).
    #[getter]
    fn valid_dims(&self) -> Vec<usize> {
        self.inner.valid_dims().to_vec()
    }

    /// Tokens the model reads per text, `[CLS]` and `[SEP]` included (`int`); longer texts are
    /// truncated.
    #[getter]
    fn max_seq_len(&self) -> usize {
        self.inner.header().max_seq_len as usize
    }

    /// The file's SHA-256 (its verified trailer) as 64 lower-case hex digits (`str`), as
    /// `lightembed inspect` shows it.
    #[getter]
    fn sha256(&self) -> String {
        self.inner.sha256_hex()
    }

    /// The model file's size in bytes (`int`).
    #[getter]
    fn file_size(&self) -> usize {
        self.file_size
    }

    /// The absolute path of the file it was loaded from (`str`), `None` for a bundled model or
    /// one made by `from_bytes`.
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    /// Embeds texts: L2-normalised `float32` vectors of length `dims` (default `output_dim`; a
    /// Matryoshka prefix from `valid_dims`), the same values as `lightembed embed --dims DIMS`.
    ///
    /// `texts` is a `str` — the result is then one vector, shape `(dims,)` — or a sequence
    /// (any iterable) of `str`: shape `(len(texts), dims)`, `(0, dims)` when empty. Texts are
    /// embedded `batch_size` at a time on all cores with the GIL released (Ctrl-C is honoured
    /// between batches); `show_progress_bar` draws progress on stderr (tqdm when installed).
    /// Rows are unit vectors, so `a @ b.T` is the cosine similarity.
    ///
    /// Raises `ValueError` for a `dims` the model does not have (the engine's message: `invalid
    /// dims 100: this model's valid dims are 32, 64, 128, 256, 384`) or `batch_size < 1`, and
    /// `TypeError` naming the first item that is not a `str` (`texts[3]: expected str, got int`).
    #[pyo3(signature = (texts, dims=None, batch_size=256, show_progress_bar=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        dims: Option<usize>,
        batch_size: usize,
        show_progress_bar: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let dims = self.dims(dims)?;
        if batch_size == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        let (texts, single) = texts_of(texts)?;
        let mut progress = Progress::new(py, show_progress_bar, texts.len(), "Encoding")?;
        let mut flat: Vec<f32> = Vec::with_capacity(texts.len() * dims);
        for (b, batch) in texts.chunks(batch_size).enumerate() {
            let model = &*self.inner;
            let part = py
                .detach(|| embed_all(model, batch, dims, b * batch_size))
                .map_err(LightembedError::new_err)?;
            flat.extend_from_slice(&part);
            progress.update(batch.len())?;
            py.check_signals()?;
        }
        progress.close()?;
        let n = texts.len();
        let array = PyArray1::from_vec(py, flat);
        if single {
            Ok(array.into_any())
        } else {
            Ok(array.reshape([n, dims])?.into_any())
        }
    }

    /// The token ids of `text` as the model reads them (`list[int]`): `[CLS]`, the word pieces
    /// (truncated to `max_seq_len − 2`), `[SEP]` — what `lightembed tokenize` writes.
    fn tokenize(&self, text: &str) -> Vec<u32> {
        self.inner.tokenize(text)
    }

    /// The tokens of `text` as strings (`list[str]`): `tokenize(text)` mapped through the
    /// vocabulary (`["[CLS]", "hello", "world", "[SEP]"]`).
    fn tokens(&self, text: &str) -> Vec<String> {
        let tok = self.inner.tokenizer();
        self.inner
            .tokenize(text)
            .into_iter()
            .map(|id| tok.id_to_token(id).unwrap_or("[UNK]").to_string())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(model_id='{}', version='{}', output_dim={}, source='{}')",
            self.inner.model_id(),
            self.version(),
            self.inner.output_dim(),
            self.source
        )
    }
}

/// `keyword_stemming` → the CLI's `--keyword-stemming` (`None`: by the model's language).
fn stemming(s: &str) -> PyResult<Option<bool>> {
    match s {
        "auto" => Ok(None),
        "english" => Ok(Some(true)),
        "none" => Ok(Some(false)),
        other => Err(PyValueError::new_err(format!(
            "keyword_stemming: {other:?} is not one of \"auto\", \"english\", \"none\""
        ))),
    }
}

/// The build options `Index.build` and `Index.from_files` share, as the CLI's [`IndexArgs`].
#[allow(clippy::too_many_arguments)]
fn index_args(
    model: &Model,
    inputs: Vec<PathBuf>,
    dims: Option<usize>,
    m: usize,
    ef_construction: usize,
    ef_search: usize,
    snippet_chars: usize,
    keyword_stemming: &str,
    int8_vectors: bool,
    show_progress_bar: bool,
) -> PyResult<IndexArgs> {
    if !(2..=128).contains(&m) {
        return Err(PyValueError::new_err(format!("m: {m} is not in 2..=128")));
    }
    for (name, v) in [
        ("ef_construction", ef_construction),
        ("ef_search", ef_search),
    ] {
        if !(1..=MAX_EF).contains(&v) {
            return Err(PyValueError::new_err(format!(
                "{name}: {v} is not in 1..={MAX_EF}"
            )));
        }
    }
    Ok(IndexArgs {
        model: model.path.clone().unwrap_or_default(),
        out: PathBuf::new(),
        dims,
        inputs,
        m,
        ef_construction,
        ef_search,
        snippet_chars,
        quiet: !show_progress_bar,
        exclude: Vec::new(),
        default_excludes: true,
        keyword_stemming: stemming(keyword_stemming)?,
        int8_vectors,
        root_selector: None,
        passage_tokens: lightembed_ingest::PASSAGE_TOKENS,
    })
}

/// What `index.json` records besides the manifest: inputs and build figures.
#[derive(Default, Clone)]
struct Figures {
    inputs: Vec<String>,
    files: usize,
    skipped: usize,
    excluded: usize,
    documents: usize,
    seconds: (f64, f64, f64),
}

/// A search index: an HNSW graph over the passages' vectors plus BM25 postings of their text,
/// ranked like `lightembed search` (hybrid by default). Built from records (`Index.build`) or
/// files (`Index.from_files`, as `lightembed index`), saved as the CLI's index folder
/// (`index.bin` + `index.json`, readable by `lightembed search --index FOLDER`) and loaded back
/// (`Index.load`).
#[pyclass(frozen, module = "lightembed", name = "Index")]
pub struct PyIndex {
    inner: lightembed_index::Index,
    /// The model it was built with in this process.
    model: Option<Py<Model>>,
    /// The model file recorded for it (absolute): the build model's path, or, for a loaded
    /// index, the one its `index.json` names (when found).
    model_path: Option<PathBuf>,
    /// Size of that model file (`index.json`'s `model_bytes`).
    model_bytes: usize,
    /// The model loaded on the first search without `model=`.
    default_model: PyOnceLock<Py<Model>>,
    figures: Figures,
}

impl PyIndex {
    /// Runs the CLI's build ([`index_build::new_index`] + [`index_build::build_from`]) on
    /// `inputs` with the GIL released.
    fn build_with(
        py: Python<'_>,
        model: Bound<'_, Model>,
        args: IndexArgs,
        inputs: impl FnOnce(&IndexArgs, &lightembed::Model) -> anyhow::Result<Inputs> + Send,
    ) -> PyResult<PyIndex> {
        let engine = Arc::clone(&model.get().inner);
        let (built, paths) = py
            .detach(|| {
                let index = index_build::new_index(&args, &engine)?;
                let inputs = inputs(&args, &engine)?;
                let paths = args
                    .inputs
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect::<Vec<_>>();
                Ok((
                    index_build::build_from(&args, &engine, index, inputs)?,
                    paths,
                ))
            })
            .map_err(cli_error)?;
        if built.skipped > 0 {
            warn(
                py,
                &format!(
                    "{} input{} skipped (named on stderr)",
                    built.skipped,
                    if built.skipped == 1 { "" } else { "s" }
                ),
            )?;
        }
        let m = model.get();
        Ok(PyIndex {
            model_path: m.path.clone(),
            model_bytes: m.file_size,
            inner: built.index,
            model: Some(model.unbind()),
            default_model: PyOnceLock::new(),
            figures: Figures {
                inputs: paths,
                files: built.files,
                skipped: built.skipped,
                excluded: built.excluded,
                documents: built.documents,
                seconds: built.seconds,
            },
        })
    }

    /// The model for a search without `model=`: the build model, else the model file recorded in
    /// `index.json`, else the bundled model when the index was built with it (its SHA-256).
    fn default_model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, Model>> {
        if let Some(m) = &self.model {
            return Ok(m.bind(py).clone());
        }
        let m = self
            .default_model
            .get_or_try_init(py, || -> PyResult<Py<Model>> {
                let model = if let Some(p) = &self.model_path {
                    Model::from_path(p)?
                } else {
                    let bundled = Model::bundled()?;
                    if bundled.inner.sha256() != self.inner.manifest().model_sha256 {
                        return Err(LightembedError::new_err(
                            "no model given and this index records none that is found \
                         (index.json's \"model\"); pass model=Model.load(PATH)",
                        ));
                    }
                    bundled
                };
                Py::new(py, model)
            })?;
        Ok(m.bind(py).clone())
    }
}

#[pymethods]
impl PyIndex {
    /// Builds an index of `records` with `model` (default: the bundled English model), as
    /// `lightembed index` builds one from a JSON Lines file of the same records.
    ///
    /// Each record is a `str` (the text) or a `dict` with `"text"` (required, non-empty) and
    /// optional `"id"` (`str` or `int`; default: the record's position, `"0"`, `"1"`, …),
    /// `"title"` (embedded with the text, shown in results) and `"url"`. Texts are embedded at
    /// `dims` (default `model.output_dim`) on all cores with the GIL released; `m`,
    /// `ef_construction`, `ef_search` are the HNSW parameters, `snippet_chars` the stored text
    /// per passage, `keyword_stemming` `"auto"` | `"english"` | `"none"`, `int8_vectors` stores
    /// quarter-size vectors (as the CLI's options of the same names).
    ///
    /// Raises `TypeError`/`ValueError` naming the bad record (`records[2]: "text" is empty`),
    /// `LightembedError` for a duplicate id or a bad `dims` (the CLI's `--dims: …` message).
    #[staticmethod]
    #[pyo3(signature = (records, model=None, dims=None, *, m=16, ef_construction=200, ef_search=96,
                        snippet_chars=400, keyword_stemming="auto", int8_vectors=false,
                        show_progress_bar=false))]
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        records: &Bound<'_, PyAny>,
        model: Option<Bound<'_, Model>>,
        dims: Option<usize>,
        m: usize,
        ef_construction: usize,
        ef_search: usize,
        snippet_chars: usize,
        keyword_stemming: &str,
        int8_vectors: bool,
        show_progress_bar: bool,
    ) -> PyResult<PyIndex> {
        let model = match model {
            Some(m) => m,
            None => Bound::new(py, Model::bundled()?)?,
        };
        let args = index_args(
            model.get(),
            Vec::new(),
            dims,
            m,
            ef_construction,
            ef_search,
            snippet_chars,
            keyword_stemming,
            int8_vectors,
            show_progress_bar,
        )?;
        let passages = passages_of(records)?;
        PyIndex::build_with(py, model, args, move |_, _| {
            Ok(Inputs {
                files: 0,
                skipped: 0,
                excluded: 0,
                documents: passages.len(),
                seconds: 0.0,
                passages,
            })
        })
    }

    /// Builds an index of files and folders exactly as `lightembed index PATHS…` does: HTML,
    /// Markdown, plain text and JSON Lines, folders walked recursively; pages cut at headings
    /// into passages of at most `passage_tokens` word pieces. `exclude` are the CLI's
    /// `--exclude` globs (relative to a folder given), `default_excludes=False` is
    /// `--no-default-excludes`, `root_selector` is `--root-selector`. Other options as in
    /// `Index.build`.
    ///
    /// Raises `LightembedError` with the CLI's message (`no text found in the inputs …`, a bad
    /// glob or selector); an unreadable file is skipped with a warning.
    #[staticmethod]
    #[pyo3(signature = (paths, model=None, dims=None, *, exclude=Vec::new(), default_excludes=true,
                        root_selector=None, passage_tokens=128, m=16, ef_construction=200,
                        ef_search=96, snippet_chars=400, keyword_stemming="auto",
                        int8_vectors=false, show_progress_bar=false))]
    #[allow(clippy::too_many_arguments)]
    fn from_files(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        model: Option<Bound<'_, Model>>,
        dims: Option<usize>,
        exclude: Vec<String>,
        default_excludes: bool,
        root_selector: Option<String>,
        passage_tokens: usize,
        m: usize,
        ef_construction: usize,
        ef_search: usize,
        snippet_chars: usize,
        keyword_stemming: &str,
        int8_vectors: bool,
        show_progress_bar: bool,
    ) -> PyResult<PyIndex> {
        if paths.is_empty() {
            return Err(PyValueError::new_err(
                "paths: give at least one file or folder",
            ));
        }
        if !(8..=65535).contains(&passage_tokens) {
            return Err(PyValueError::new_err(format!(
                "passage_tokens: {passage_tokens} is not in 8..=65535"
            )));
        }
        let model = match model {
            Some(m) => m,
            None => Bound::new(py, Model::bundled()?)?,
        };
        let mut args = index_args(
            model.get(),
            paths,
            dims,
            m,
            ef_construction,
            ef_search,
            snippet_chars,
            keyword_stemming,
            int8_vectors,
            show_progress_bar,
        )?;
        args.exclude = exclude;
        args.default_excludes = default_excludes;
        args.root_selector = root_selector;
        args.passage_tokens = passage_tokens;
        PyIndex::build_with(py, model, args, index_build::read_inputs)
    }

    /// Loads an index folder written by `Index.save` or `lightembed index` (or its `index.bin`),
    /// checking the bytes (and completing a write that was interrupted, as `lightembed search`
    /// does). The model its `index.json` records is used by `search` when no model is given.
    ///
    /// Raises `LightembedFileNotFoundError` when there is no `index.bin`, `LightembedError` when
    /// it is not a valid index (the CLI's message).
    #[staticmethod]
    fn load(py: Python<'_>, folder: PathBuf) -> PyResult<PyIndex> {
        let (bin, bytes, sidecar) = index_dir::open_index(&folder).map_err(cli_error)?;
        let inner = lightembed_index::Index::from_bytes(&bytes)
            .map_err(|e| LightembedError::new_err(format!("{}: {e}", bin.display())))?;
        let mut figures = Figures::default();
        let (mut model_path, mut model_bytes) = (None, 0);
        if let Some(s) = sidecar {
            if s.stale {
                warn(
                    py,
                    &format!(
                        "{} does not describe {} (an interrupted or mixed write?); using {INDEX_FILE} alone",
                        bin.with_file_name(SIDECAR_FILE).display(),
                        bin.display()
                    ),
                )?;
            }
            model_path = s
                .model(&bin, &inner.manifest().model_sha256)
                .ok()
                .map(|p| std::fs::canonicalize(&p).unwrap_or(p));
            model_bytes = s.v.model_bytes;
            figures = Figures {
                inputs: s.v.inputs.clone(),
                files: s.v.files,
                skipped: s.v.skipped,
                excluded: s.v.excluded,
                documents: s.v.documents,
                seconds: (s.v.seconds.read, s.v.seconds.embed, s.v.seconds.graph),
            };
        }
        Ok(PyIndex {
            inner,
            model: None,
            model_path,
            model_bytes,
            default_model: PyOnceLock::new(),
            figures,
        })
    }

    /// Writes the index into `folder` (created if missing) as `lightembed index` does:
    /// `index.bin` and `index.json` (manifest, the model's path relative to the folder and
    /// absolute, parameters, figures), replaced as one unit. `lightembed search --index FOLDER`
    /// reads it; for an index built with the bundled model it needs `--model` (no file to
    /// record). Returns the folder (`pathlib.Path`).
    ///
    /// Raises `LightembedError` when the folder cannot be created or written.
    fn save<'py>(&self, py: Python<'py>, folder: PathBuf) -> PyResult<Bound<'py, PyAny>> {
        py.detach(|| self.write(&folder)).map_err(cli_error)?;
        py.import("pathlib")?.getattr("Path")?.call1((folder,))
    }

    /// The `k` best passages for `query`, best first, ranked as `lightembed search` ranks them:
    /// `mode` `"hybrid"` (BM25 and vector scores fused; the default), `"vector"` (cosine only)
    /// or `"keyword"` (BM25 only); one passage per section unless `all_passages`. `model`
    /// embeds the query (default: the build model, the one `index.json` records, or the bundled
    /// model when the index was built with it); it must match the index (spec §8).
    ///
    /// Returns `list[dict]`, the fields of `lightembed search --json`'s results: `rank` (1, 2,
    /// …), `score` (`float`), `id`, `title`, `url`, `snippet` (the stored text) and `highlights`
    /// (`(start, end)` `str` indices of the query's words in `snippet`).
    ///
    /// Raises `ValueError` for an empty query, an unknown mode, `k < 1`; `LightembedError` when
    /// the model does not match the index (the spec's message).
    #[pyo3(signature = (query, model=None, k=10, mode="hybrid", *, ef_search=None, all_passages=false))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        model: Option<Bound<'py, Model>>,
        k: usize,
        mode: &str,
        ef_search: Option<usize>,
        all_passages: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mode: lightembed_index::Mode = mode.parse().map_err(PyValueError::new_err)?;
        if query.trim().is_empty() {
            return Err(PyValueError::new_err("the query is empty"));
        }
        if k == 0 {
            return Err(PyValueError::new_err("k must be at least 1"));
        }
        if let Some(ef) = ef_search {
            if !(1..=MAX_EF).contains(&ef) {
                return Err(PyValueError::new_err(format!(
                    "ef_search: {ef} is not in 1..={MAX_EF}"
                )));
            }
        }
        let model = match model {
            Some(m) => m,
            None => self.default_model(py)?,
        };
        let engine = Arc::clone(&model.get().inner);
        // Spec §8: refuse a model this index was not built for, with the spec's message.
        let warnings = self
            .inner
            .check_compatible(&ModelIdentity::from(&*engine))
            .map_err(|e| LightembedError::new_err(e.to_string()))?;
        for w in warnings {
            warn(py, &w.to_string())?;
        }
        let opts = SearchOptions {
            mode,
            ef_search,
            collapse_sections: !all_passages,
            ..SearchOptions::default()
        };
        let index = &self.inner;
        let hits = py
            .detach(|| -> Result<_, String> {
                let vector = match mode {
                    lightembed_index::Mode::Keyword => None,
                    _ => Some(
                        engine
                            .embed(query, index.dims())
                            .map_err(|e| format!("query: {e}"))?,
                    ),
                };
                Searcher::find(index, vector.as_deref(), query, k, &opts).map_err(|e| e.to_string())
            })
            .map_err(LightembedError::new_err)?;
        let stem = self.inner.keyword_stemming();
        let out = PyList::empty(py);
        for (i, h) in hits.into_iter().enumerate() {
            let e = excerpt(&h.text, query, stem, 0);
            let char_at = |byte: usize| e.text[..byte].chars().count();
            let highlights: Vec<(usize, usize)> = e
                .highlights
                .iter()
                .map(|&(a, b)| (char_at(a), char_at(b)))
                .collect();
            let d = PyDict::new(py);
            d.set_item("rank", i + 1)?;
            d.set_item("score", h.score as f64)?;
            d.set_item("id", h.id)?;
            d.set_item("title", h.title)?;
            d.set_item("url", h.url)?;
            d.set_item("snippet", e.text)?;
            d.set_item("highlights", highlights)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Number of passages (`int`).
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Vector length (`int`): the dims the index was built at.
    #[getter]
    fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// `model_id` of the model the index was built with (`str`).
    #[getter]
    fn model_id(&self) -> &str {
        &self.inner.manifest().model_id
    }

    /// Version of the model the index was built with (`"major.minor.patch"`).
    #[getter]
    fn model_version(&self) -> String {
        self.inner.manifest().model_version.to_string()
    }

    /// SHA-256 of the model the index was built with (hex `str`, as `Model.sha256`).
    #[getter]
    fn model_sha256(&self) -> String {
        self.inner
            .manifest()
            .model_sha256
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The model file recorded for this index (absolute path `str`), `None` when there is none
    /// (built with the bundled model, or `index.json`'s model was not found).
    #[getter]
    fn model_path(&self) -> Option<String> {
        self.model_path.as_ref().map(|p| p.display().to_string())
    }

    /// Whether the keyword side stems English words (`bool`).
    #[getter]
    fn keyword_stemming(&self) -> bool {
        self.inner.keyword_stemming()
    }

    /// The ids of the passages, in insertion order (`list[str]`).
    fn ids(&self) -> Vec<String> {
        self.inner.documents().map(|d| d.id.clone()).collect()
    }

    /// The index bytes (`bytes`): what `index.bin` holds.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    fn __repr__(&self) -> String {
        let m = self.inner.manifest();
        format!(
            "Index({} passages, {} dims, model {} v{})",
            self.inner.len(),
            m.dims,
            m.model_id,
            m.model_version
        )
    }
}

impl PyIndex {
    /// `index.bin` + `index.json` into `folder`, as `lightembed index` writes them.
    fn write(&self, folder: &Path) -> anyhow::Result<()> {
        if folder.exists() && !folder.is_dir() {
            anyhow::bail!("{}: exists and is not a directory", folder.display());
        }
        std::fs::create_dir_all(folder).map_err(|e| {
            anyhow::Error::new(e).context(format!("{}: cannot create the folder", folder.display()))
        })?;
        let bytes = self.inner.to_bytes();
        let model_rel = match (&self.model_path, std::fs::canonicalize(folder)) {
            (Some(abs), Ok(dir)) => index_dir::relative_path(&dir, abs),
            _ => None,
        };
        let params = self.inner.params();
        let f = &self.figures;
        let sidecar = SidecarDoc {
            index_file: INDEX_FILE.to_string(),
            index_sha256: index_dir::sha256_hex(&bytes),
            manifest: self.inner.manifest().clone(),
            model: model_rel
                .as_ref()
                .or(self.model_path.as_ref())
                .map(|p| p.to_string_lossy().into_owned()),
            model_absolute: self
                .model_path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
            model_bytes: self.model_bytes,
            keyword_stemming: (if self.inner.keyword_stemming() {
                "english"
            } else {
                "none"
            })
            .into(),
            params: SidecarParams {
                m: params.m,
                ef_construction: params.ef_construction,
                ef_search: params.ef_search,
            },
            inputs: f.inputs.clone(),
            files: f.files,
            skipped: f.skipped,
            excluded: f.excluded,
            documents: f.documents,
            bytes: bytes.len(),
            seconds: SidecarSeconds {
                read: index_dir::round3(f.seconds.0),
                embed: index_dir::round3(f.seconds.1),
                graph: index_dir::round3(f.seconds.2),
            },
        };
        let text = serde_json::to_string_pretty(&sidecar)? + "\n";
        index_dir::write_index_pair(folder, &bytes, text.as_bytes())
    }
}

/// Records → passages, as the CLI reads a JSON Lines record (`{"id","title","url","text"}`: text
/// whitespace-collapsed and required, title embedded before it); ids unique.
fn passages_of(records: &Bound<'_, PyAny>) -> PyResult<Vec<lightembed_ingest::Passage>> {
    let not_records = || {
        PyTypeError::new_err(format!(
            "records: expected a sequence of str or dict, got {}",
            type_name(records)
        ))
    };
    if records.cast::<PyString>().is_ok() || records.cast::<PyBytes>().is_ok() {
        return Err(not_records());
    }
    let iter = records.try_iter().map_err(|_| not_records())?;
    let mut ids = lightembed_ingest::Uniquer::new('~', 2);
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        let p = if let Ok(s) = item.cast::<PyString>() {
            record(i, None, None, None, s.extract()?)?
        } else if let Ok(d) = item.cast::<PyDict>() {
            let field = |name: &str| -> PyResult<Option<String>> {
                match d.get_item(name)? {
                    None => Ok(None),
                    Some(v) if v.is_none() => Ok(None),
                    Some(v) => {
                        if let Ok(s) = v.cast::<PyString>() {
                            return Ok(Some(s.extract()?));
                        }
                        // An integer id is kept as written (not bool, as JSON's `true` is not one).
                        if name == "id"
                            && v.is_instance_of::<pyo3::types::PyInt>()
                            && !v.is_instance_of::<pyo3::types::PyBool>()
                        {
                            return Ok(Some(v.str()?.extract()?));
                        }
                        Err(PyTypeError::new_err(format!(
                            "records[{i}]: \"{name}\" must be a {}, got {}",
                            if name == "id" { "str or an int" } else { "str" },
                            type_name(&v)
                        )))
                    }
                }
            };
            let text = field("text")?
                .ok_or_else(|| PyValueError::new_err(format!("records[{i}]: missing \"text\"")))?;
            record(i, field("id")?, field("title")?, field("url")?, text)?
        } else {
            return Err(PyTypeError::new_err(format!(
                "records[{i}]: expected a str or a dict with a \"text\", got {}",
                type_name(&item)
            )));
        };
        if !ids.claim(&p.id) {
            return Err(LightembedError::new_err(format!(
                "records[{i}]: duplicate id {:?}",
                p.id
            )));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(PyValueError::new_err("records: no records to index"));
    }
    Ok(out)
}

/// One record as the CLI's JSON Lines reader makes it (`sources::jsonl_record`).
fn record(
    i: usize,
    id: Option<String>,
    title: Option<String>,
    url: Option<String>,
    text: String,
) -> PyResult<lightembed_ingest::Passage> {
    let text = lightembed_ingest::collapse_ws(&text);
    if text.is_empty() {
        return Err(PyValueError::new_err(format!(
            "records[{i}]: \"text\" is empty"
        )));
    }
    let title = title.unwrap_or_default();
    let embed_text = if title.is_empty() {
        text.clone()
    } else {
        format!("{title}\n{text}")
    };
    Ok(lightembed_ingest::Passage {
        id: id.unwrap_or_else(|| i.to_string()),
        page_title: title.clone(),
        title,
        heading: String::new(),
        url: url.unwrap_or_default(),
        text,
        embed_text,
        page: None,
    })
}

/// `lightembed site ARGS…` in-process (`argv` without the program and command names): the exit
/// code (0, or 4 when inputs were skipped), or `LightembedError` with the CLI's message.
#[pyfunction]
fn _build_site(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    let full = ["lightembed".to_string(), "site".to_string()]
        .into_iter()
        .chain(argv);
    let cli = lightembed_cli::args::Cli::try_parse_from(full)
        .map_err(|e| PyValueError::new_err(e.render().to_string()))?;
    let lightembed_cli::args::Command::Site(c) = cli.command else {
        unreachable!("parsed as `site`")
    };
    py.detach(|| lightembed_cli::commands::site::run(c))
        .map_err(cli_error)
}

/// Runs the `lightembed` CLI in-process with `argv` (`argv[0]` is the program name) and returns
/// its exit code, as the native binary would exit: usage errors print clap's message and give 2,
/// `--help`/`--version` print and give 0; output goes to the process's stdout/stderr (file
/// descriptors 1 and 2). The GIL is released while it runs.
#[pyfunction]
fn _run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    match lightembed_cli::args::Cli::try_parse_from(argv) {
        Ok(cli) => py.detach(|| lightembed_cli::run(cli)),
        Err(e) => {
            let _ = e.print();
            u8::try_from(e.exit_code()).unwrap_or(2)
        }
    }
}

/// Pages → passages through the CLI's reader (`lightembed passages`): `paths[i]` is the page's
/// path relative to its folder (`/`-separated; its extension picks HTML, Markdown, PDF, Word,
/// OpenDocument, EPUB or text, as the CLI's folder walk does; any other extension reads as text) and `contents[i]` its bytes or
/// text. Returns `(rows, warnings)`: per passage `(page_index, id, page, title, page_title,
/// heading, url, text, embed_text, page_number)` (`page_number`: a PDF passage's page), `url` with `url_prefix` in front, as `lightembed passages
/// --url-prefix` writes it; a warning per page skipped (binary) or read with a note (a guessed
/// charset), `"PATH: why"`. Ids are unique and repeated passage text is dropped *within this
/// call*, as within one CLI run.
#[pyfunction]
#[pyo3(signature = (model, paths, contents, url_prefix="", root_selector=None, passage_tokens=None))]
#[allow(clippy::type_complexity)]
fn _page_passages(
    py: Python<'_>,
    model: &Model,
    paths: Vec<String>,
    contents: Vec<Option<Bound<'_, PyAny>>>,
    url_prefix: &str,
    root_selector: Option<&str>,
    passage_tokens: Option<usize>,
) -> PyResult<(
    Vec<(
        usize,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        Option<u32>,
    )>,
    Vec<String>,
)> {
    use lightembed_build::inputs::{url_of, Kind, PageReader};
    if paths.len() != contents.len() {
        return Err(PyValueError::new_err(format!(
            "paths and contents differ in length ({} and {})",
            paths.len(),
            contents.len()
        )));
    }
    let tokens = passage_tokens.unwrap_or(lightembed_ingest::PASSAGE_TOKENS);
    if !(8..=65535).contains(&tokens) {
        return Err(PyValueError::new_err(format!(
            "passage_tokens: {tokens} is not in 8..=65535"
        )));
    }
    let mut docs: Vec<(String, Kind, Vec<u8>)> = Vec::with_capacity(paths.len());
    for (i, (path, content)) in paths.into_iter().zip(contents).enumerate() {
        let bytes = match &content {
            None => Vec::new(),
            Some(c) => {
                if let Ok(s) = c.cast::<PyString>() {
                    s.extract::<String>()?.into_bytes()
                } else if let Ok(b) = c.extract::<PyBackedBytes>() {
                    b.to_vec()
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "contents[{i}]: expected bytes or str, got {}",
                        type_name(c)
                    )));
                }
            }
        };
        let kind = Kind::of(&path).unwrap_or(Kind::Text);
        if kind == Kind::Jsonl {
            return Err(PyValueError::new_err(format!(
                "paths[{i}]: {path}: JSON Lines records are passages already; embed them with \
                 lightembed.arrow.embed_batch"
            )));
        }
        docs.push((path, kind, bytes));
    }
    let inner = model.inner.clone();
    let root = root_selector.map(str::to_owned);
    let prefix = url_prefix.to_owned();
    py.detach(move || {
        let mut reader = PageReader::new(root.as_deref(), tokens)
            .map_err(|e| LightembedError::new_err(e.to_string()))?;
        let mut rows = Vec::new();
        let mut warnings = Vec::new();
        let mut buf = Vec::new();
        for (i, (path, kind, bytes)) in docs.iter().enumerate() {
            let page = url_of(path);
            buf.clear();
            let out = reader.read(&inner, &page, *kind, bytes, &mut buf);
            if let Some(why) = out.skipped {
                warnings.push(format!("skipping {path}: {why}"));
            }
            if let Some(w) = out.warning {
                warnings.push(format!("{path}: {w}"));
            }
            for p in buf.drain(..) {
                rows.push((
                    i,
                    p.id,
                    page.clone(),
                    p.title,
                    p.page_title,
                    p.heading,
                    format!("{prefix}{}", p.url),
                    p.text,
                    p.embed_text,
                    p.page,
                ));
            }
        }
        Ok((rows, warnings))
    })
}

/// The keyword side of a passage as PostgreSQL reads it: `(tsvector input text, |d|)` — the
/// terms of `keyword_text(page_title, heading, text)` (what `lightembed index` gives BM25),
/// tokenised with or without English stemming (`stem`), with positions
/// (`lightembed_index::keywords::tsvector_literal`), and their number (BM25's document length).
#[pyfunction]
fn _keyword_tsvector(page_title: &str, heading: &str, text: &str, stem: bool) -> (String, usize) {
    use lightembed_index::keywords;
    let kw = keywords::keyword_text(page_title, heading, text);
    let terms = keywords::terms_with(&kw, stem);
    (keywords::tsvector_literal(&terms), terms.len())
}

/// Whether an index for `model_id` stems its keyword side by default (the CLI's
/// `--keyword-stemming auto`).
#[pyfunction]
fn _default_stemming(model_id: &str) -> bool {
    lightembed_index::keywords::default_stemming(model_id)
}

/// The table schema `lightembed serve` reads (serve/sql/schema.sql), `{dims}`, `{vector_type}` and
/// `{prefix}` to fill in.
const PG_SCHEMA_SQL: &str = include_str!("../../serve/sql/schema.sql");

/// The native module `lightembed._lightembed` (re-exported by the package `lightembed`).
#[pymodule]
fn _lightembed(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BUNDLED_MODELS", PyTuple::new(m.py(), [BUNDLED_NAME])?)?;
    m.add_class::<Model>()?;
    m.add_class::<PyIndex>()?;
    m.add_function(wrap_pyfunction!(_build_site, m)?)?;
    m.add_function(wrap_pyfunction!(_run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(_page_passages, m)?)?;
    m.add_function(wrap_pyfunction!(_keyword_tsvector, m)?)?;
    m.add_function(wrap_pyfunction!(_default_stemming, m)?)?;
    m.add("_PG_SCHEMA_SQL", PG_SCHEMA_SQL)?;
    m.add("_BM25_K1", lightembed_index::keywords::K1)?;
    m.add("_BM25_B", lightembed_index::keywords::B)?;
    Ok(())
}
