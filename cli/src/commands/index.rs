//! `lightembed index`: pages → passages → vectors → `OUT/index.bin` + `OUT/index.json`
//! ([`crate::index_build::index`]).

use crate::args::IndexCommand;
use crate::index_build::IndexArgs;
use anyhow::Result;

/// Builds the index described by `c`.
pub fn run(c: IndexCommand) -> Result<u8> {
    crate::index_build::index(IndexArgs {
        passage_tokens: c.passage_tokens as usize,
        keyword_stemming: match c.keyword_stemming.as_str() {
            "auto" => None,
            other => Some(other == "english"),
        },
        int8_vectors: c.int8_vectors,
        root_selector: c.root_selector,
        model: c.model,
        out: c.out,
        dims: c.dims,
        inputs: c.inputs,
        m: c.m as usize,
        ef_construction: c.ef_construction as usize,
        ef_search: c.ef_search as usize,
        snippet_chars: c.snippet_chars,
        quiet: c.quiet,
        exclude: c.exclude,
        default_excludes: !c.no_default_excludes,
    })
}
