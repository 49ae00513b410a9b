//! A thin wasm-bindgen surface over the engine so Node can load a model and embed sentences;
//! `bench/engine_node.mjs` times it. Built with `wasm-bindgen --target nodejs`.

use wasm_bindgen::prelude::*;

/// A loaded model (spec `.bin` v1) living in wasm memory.
#[wasm_bindgen]
pub struct WasmModel {
    model: lightembed::Model,
}

#[wasm_bindgen]
impl WasmModel {
    /// Loads and fully validates a `.bin` file; the error is the engine's `LoadError` message.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Result<WasmModel, JsError> {
        let model =
            lightembed::Model::from_bytes(bytes).map_err(|e| JsError::new(&e.to_string()))?;
        Ok(WasmModel { model })
    }

    /// Embeds one text at `dims` (a valid Matryoshka dims or `output_dim`): an L2-normalised vector.
    pub fn embed(&self, text: &str, dims: usize) -> Result<Vec<f32>, JsError> {
        self.model
            .embed(text, dims)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Embeds every line of `texts` (newline-separated) at `dims`, discarding the vectors;
    /// returns the number of lines embedded. This is the timed loop of `bench/engine_node.mjs`.
    pub fn embed_lines(&self, texts: &str, dims: usize) -> Result<usize, JsError> {
        let mut n = 0;
        for line in texts.lines() {
            let v = self
                .model
                .embed(line, dims)
                .map_err(|e| JsError::new(&e.to_string()))?;
            std::hint::black_box(v);
            n += 1;
        }
        Ok(n)
    }

    /// Total token count (with `[CLS]`/`[SEP]`) of the lines of `texts`, for MAC accounting.
    pub fn count_tokens(&self, texts: &str) -> usize {
        texts.lines().map(|l| self.model.tokenize(l).len()).sum()
    }
}
