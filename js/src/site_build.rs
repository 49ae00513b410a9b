//! The site build (`lightembed_build::site`) for the npm package's `lightembed site` command and
//! its Node API (feature `build`, compiled into the Node build only: the browser widget's wasm
//! stays without it). Node walks the folder, reads the pages and writes the files; this is the
//! same library call the native CLI makes, so the bundle is the same.

use js_sys::{Array, Object, Reflect, Uint8Array};
use lightembed_build::inputs::Excludes;
use lightembed_build::site::{Prepared, SiteBuilder, SiteOptions};
use wasm_bindgen::prelude::*;

use crate::js_error;

/// Sets `key` on `obj` (a fresh object: cannot fail).
fn set(obj: &Object, key: &str, value: JsValue) {
    let _ = Reflect::set(obj, &key.into(), &value);
}

/// Which files of a site are its pages (the `--exclude` globs and default rules of
/// `lightembed site`).
#[wasm_bindgen(js_name = SitePages)]
pub struct JsSitePages {
    inner: Excludes,
}

#[wasm_bindgen(js_class = SitePages)]
impl JsSitePages {
    /// The rules for `exclude` globs (relative to the site root; `*` does not cross `/`, `**`
    /// does) and, when `defaultExcludes` (default true), the default rules (`_sources/`).
    ///
    /// @throws {Error} `--exclude "GLOB": not a valid glob: reason`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        exclude: Vec<String>,
        default_excludes: Option<bool>,
    ) -> Result<JsSitePages, JsValue> {
        Excludes::site(&exclude, default_excludes.unwrap_or(true))
            .map(|inner| JsSitePages { inner })
            .map_err(js_error)
    }

    /// True when the file at `rel` (relative to the site root, `/`-separated) is a page the
    /// site build reads (`.html`/`.htm`, not excluded).
    #[wasm_bindgen(js_name = isPage)]
    pub fn is_page(&self, rel: &str) -> bool {
        self.inner.is_site_page(rel)
    }

    /// True when `rel` is excluded by the rules (counted as "excluded" in the summary).
    #[wasm_bindgen(js_name = isExcluded)]
    pub fn is_excluded(&self, rel: &str) -> bool {
        self.inner.excludes(rel, || false)
    }
}

/// Reads a site's pages into passages (`lightembed_build::site::SiteBuilder`).
#[wasm_bindgen(js_name = SiteBuilder)]
pub struct JsSiteBuilder {
    inner: Option<SiteBuilder>,
}

#[wasm_bindgen(js_class = SiteBuilder)]
impl JsSiteBuilder {
    /// A builder embedding with the model in `modelBytes` (`modelName` names it in errors).
    /// `dims` (default: 128 when the model has that prefix, else all), `fullModel` (ship the
    /// whole model instead of a site model), `rootSelector` (CSS selector of the content), `gzip`
    /// (default true: the core, shards, chunks, model and wasm stored gzip-compressed; false
    /// writes them raw, `--no-gzip`).
    ///
    /// @throws {Error} the CLI's messages: `NAME: <load error>`, `--dims: …`, `--root-selector: …`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        model_bytes: Vec<u8>,
        model_name: &str,
        dims: Option<u32>,
        full_model: Option<bool>,
        root_selector: Option<String>,
        gzip: Option<bool>,
    ) -> Result<JsSiteBuilder, JsValue> {
        let opts = SiteOptions {
            dims: dims.map(|d| d as usize),
            full_model: full_model.unwrap_or(false),
            root_selector,
            gzip: gzip.unwrap_or(true),
            ..SiteOptions::default()
        };
        SiteBuilder::new(model_bytes, model_name, &opts)
            .map(|b| JsSiteBuilder { inner: Some(b) })
            .map_err(js_error)
    }

    fn builder(&mut self) -> Result<&mut SiteBuilder, JsValue> {
        self.inner
            .as_mut()
            .ok_or_else(|| js_error("this SiteBuilder was already prepared"))
    }

    /// Adds the page at `rel` (relative to the site root; URL from the path) from its bytes.
    /// Returns `{ passages, skipped?, warning? }`: `skipped` is why the page was left out
    /// (binary), `warning` a note on how it was read (a guessed charset).
    #[wasm_bindgen(js_name = addPage)]
    pub fn add_page(&mut self, rel: &str, bytes: &[u8]) -> Result<Object, JsValue> {
        let o = self.builder()?.add_page(rel, bytes);
        Ok(outcome(o))
    }

    /// Adds an HTML page served at `url` (as given) from its bytes; as `addPage`.
    #[wasm_bindgen(js_name = addHtml)]
    pub fn add_html(&mut self, url: &str, bytes: &[u8]) -> Result<Object, JsValue> {
        let o = self.builder()?.add_html(url, bytes);
        Ok(outcome(o))
    }

    /// Adds a record that is not a page: its `text` at `url`, titled `title`. Returns the
    /// passages added.
    #[wasm_bindgen(js_name = addRecord)]
    pub fn add_record(&mut self, url: &str, title: &str, text: &str) -> Result<u32, JsValue> {
        self.builder()?
            .add_record(url, title, text)
            .map(|n| n as u32)
            .map_err(js_error)
    }

    /// Passages so far.
    #[wasm_bindgen(getter)]
    pub fn passages(&self) -> u32 {
        self.inner.as_ref().map_or(0, |b| b.passages().len() as u32)
    }

    /// Pages with passages so far.
    #[wasm_bindgen(getter)]
    pub fn documents(&self) -> u32 {
        self.inner.as_ref().map_or(0, |b| b.documents() as u32)
    }

    /// Ends the reading: chooses the model the bundle ships (a site model unless `fullModel`).
    /// `filesRead` and `excluded` (files the excludes left out) are quoted in the error when no
    /// page had text. The builder is used up.
    ///
    /// @throws {Error} `no text found in the inputs (N files read)`.
    pub fn prepare(
        &mut self,
        files_read: u32,
        excluded: Option<u32>,
    ) -> Result<JsPreparedSite, JsValue> {
        let b = self
            .inner
            .take()
            .ok_or_else(|| js_error("this SiteBuilder was already prepared"))?;
        b.prepare(files_read as usize, excluded.unwrap_or(0) as usize)
            .map(|inner| JsPreparedSite { inner: Some(inner) })
            .map_err(js_error)
    }
}

fn outcome(o: lightembed_build::site::PageOutcome) -> Object {
    let obj = Object::new();
    set(&obj, "passages", (o.passages as u32).into());
    if let Some(s) = o.skipped {
        set(&obj, "skipped", s.into());
    }
    if let Some(w) = o.warning {
        set(&obj, "warning", w.into());
    }
    obj
}

/// A site read, its model chosen: embed, then `assemble` the bundle.
#[wasm_bindgen(js_name = PreparedSite)]
pub struct JsPreparedSite {
    inner: Option<Prepared>,
}

#[wasm_bindgen(js_class = PreparedSite)]
impl JsPreparedSite {
    fn prepared(&self) -> Result<&Prepared, JsValue> {
        self.inner
            .as_ref()
            .ok_or_else(|| js_error("this PreparedSite was already assembled"))
    }

    /// The model the bundle ships and the passages are embedded with (`.bin` bytes).
    #[wasm_bindgen(js_name = modelBytes)]
    pub fn model_bytes(&self) -> Result<Vec<u8>, JsValue> {
        Ok(self.prepared()?.model_bytes().to_vec())
    }

    /// True for a static model (no transformer layers): its bundle carries the query side, and
    /// the widget's search-only wasm (`pkg/widget`) goes with it; a transformer's bundle takes
    /// `pkg/widget-model` (with `Model`).
    #[wasm_bindgen(getter, js_name = staticModel)]
    pub fn static_model(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|p| p.model().header().is_static())
    }

    /// `site model: K of N tokens, D dims: A → B bytes`, or `undefined` with the full model.
    #[wasm_bindgen(getter, js_name = siteModelNote)]
    pub fn site_model_note(&self) -> Option<String> {
        self.inner.as_ref()?.site_model_note().map(str::to_owned)
    }

    /// The model's id and version (`"lightembed-en-0l"`, `"4.0.0"`).
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner
            .as_ref()
            .map_or_else(String::new, |p| p.model().model_id().to_string())
    }

    /// The model's version (`MAJOR.MINOR.PATCH`).
    #[wasm_bindgen(getter, js_name = modelVersion)]
    pub fn model_version(&self) -> String {
        self.inner.as_ref().map_or_else(String::new, |p| {
            p.model().header().model_version().to_string()
        })
    }

    /// Index dims.
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> u32 {
        self.inner.as_ref().map_or(0, |p| p.dims() as u32)
    }

    /// Passages to embed.
    #[wasm_bindgen(getter)]
    pub fn passages(&self) -> u32 {
        self.inner.as_ref().map_or(0, |p| p.passages().len() as u32)
    }

    /// Pages with passages.
    #[wasm_bindgen(getter)]
    pub fn documents(&self) -> u32 {
        self.inner.as_ref().map_or(0, |p| p.documents() as u32)
    }

    /// The texts to embed, passages `start .. end` (for embedding in worker threads:
    /// `Model.fromBytes(modelBytes()).embed(text, dims)` gives the same vectors).
    pub fn texts(&self, start: u32, end: u32) -> Result<Vec<String>, JsValue> {
        let p = self.prepared()?;
        let n = p.passages().len();
        let (s, e) = (start as usize, (end as usize).min(n));
        if s > e {
            return Err(js_error(format!("texts({start}, {end}): start after end")));
        }
        Ok(p.texts().skip(s).take(e - s).map(str::to_owned).collect())
    }

    /// Embeds passages `start .. end` in this thread: `(end − start) × dims` floats.
    ///
    /// @throws {Error} `passage ID: reason` for a passage the model refuses.
    #[wasm_bindgen(js_name = embedRange)]
    pub fn embed_range(&self, start: u32, end: u32) -> Result<Vec<f32>, JsValue> {
        let p = self.prepared()?;
        let n = p.passages().len();
        let (s, e) = (start as usize, (end as usize).min(n));
        if s > e {
            return Err(js_error(format!(
                "embedRange({start}, {end}): start after end"
            )));
        }
        p.embed_range(s..e).map_err(js_error)
    }

    /// The bundle from the passages' `vectors` (`passages × dims` floats in passage order) and
    /// the widget's web build (`wasm` and its glue `wasmJs`). Used up by this call.
    ///
    /// @throws {Error} vectors of the wrong length, a non-finite vector.
    pub fn assemble(
        &mut self,
        vectors: &[f32],
        wasm: &[u8],
        wasm_js: &str,
    ) -> Result<JsSiteBundle, JsValue> {
        let p = self
            .inner
            .take()
            .ok_or_else(|| js_error("this PreparedSite was already assembled"))?;
        p.assemble(vectors, wasm, wasm_js)
            .map(|inner| JsSiteBundle { inner })
            .map_err(js_error)
    }
}

/// A site's search bundle: its files, to write into `SITE/lightembed/`, and figures.
#[wasm_bindgen(js_name = SiteBundle)]
pub struct JsSiteBundle {
    inner: lightembed_build::site::Bundle,
}

#[wasm_bindgen(js_class = SiteBundle)]
impl JsSiteBundle {
    /// `[path, bytes]` pairs, paths relative to the bundle folder (`/`-separated),
    /// `manifest.json` last.
    pub fn files(&self) -> Array {
        let files = Array::new();
        for (name, bytes) in &self.inner.files {
            let pair = Array::new();
            pair.push(&name.into());
            pair.push(&Uint8Array::from(&bytes[..]).into());
            files.push(&pair);
        }
        files
    }

    /// The report `lightembed site` prints once the bundle is in place at `dir`, `seconds` after
    /// the start.
    pub fn summary(&self, dir: &str, seconds: f64) -> String {
        self.inner.summary(dir, seconds)
    }

    /// Pages with passages.
    #[wasm_bindgen(getter)]
    pub fn pages(&self) -> u32 {
        self.inner.pages as u32
    }

    /// Passages indexed.
    #[wasm_bindgen(getter)]
    pub fn passages(&self) -> u32 {
        self.inner.passages as u32
    }

    /// Bytes of the model shipped.
    #[wasm_bindgen(getter, js_name = modelBytes)]
    pub fn model_bytes(&self) -> u32 {
        self.inner.model_bytes as u32
    }

    /// Bytes of the index core.
    #[wasm_bindgen(getter, js_name = coreBytes)]
    pub fn core_bytes(&self) -> u32 {
        self.inner.core_bytes as u32
    }
}
