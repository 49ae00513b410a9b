//! `lightembed passages`: the passages `index` would embed, as JSON lines, without embedding.

use crate::args::PassagesCommand;
use crate::passages::PassagesArgs;
use anyhow::Result;

/// Writes the passages of `c.inputs` ([`crate::passages::run`]).
pub fn run(c: PassagesCommand) -> Result<u8> {
    crate::passages::run(PassagesArgs {
        model: c.model,
        inputs: c.inputs,
        exclude: c.exclude,
        default_excludes: !c.no_default_excludes,
        url_prefix: c.url_prefix,
        embed_text: c.embed_text,
        quiet: c.quiet,
        root_selector: c.root_selector,
        passage_tokens: c.passage_tokens as usize,
    })
}
