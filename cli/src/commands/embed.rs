//! `lightembed embed`: `{"embedding": […]}` per input line, in input order, streamed.

use crate::args::EmbedCommand;
use anyhow::Result;

/// Embeds each input line at `--dims` (default: the model's output_dim); bad dims are refused
/// before any input is read.
pub fn run(c: EmbedCommand) -> Result<u8> {
    let (_, m) = crate::load(&c.model)?;
    let dims = c.dims.unwrap_or(m.header().output_dim as usize);
    // Validate dims once up front so the error names the valid set before any input is read.
    m.embed("", dims).map_err(|e| anyhow::anyhow!("{e}"))?;
    let summary = crate::jsonl::run(&c.input, c.jsonl, c.skip_bad, |text| {
        let v = m.embed(text, dims).map_err(|e| anyhow::anyhow!("{e}"))?;
        // serde_json writes f32 in its shortest round-trip form, straight after the key (one
        // buffer per line, no copies).
        let mut line = Vec::with_capacity(16 + 12 * v.len());
        line.extend_from_slice(b"\"embedding\":");
        serde_json::to_writer(&mut line, &v)?;
        Ok(String::from_utf8(line)?)
    })?;
    Ok(crate::skipped_code(summary.skipped, "lines"))
}
