//! `lightembed tokenize`: `{"ids": […]}` per input line, streamed ([`crate::jsonl`]).

use crate::args::TokenizeCommand;
use anyhow::Result;

/// Tokenizes each input line with the model's tokenizer ([CLS] … [SEP], truncated to its window).
pub fn run(c: TokenizeCommand) -> Result<u8> {
    let (_, m) = crate::load(&c.model)?;
    let summary = crate::jsonl::run(&c.input, c.jsonl, c.skip_bad, |text| {
        let ids = m.tokenize(text);
        Ok(format!("\"ids\":{}", serde_json::to_string(&ids)?))
    })?;
    Ok(crate::skipped_code(summary.skipped, "lines"))
}
