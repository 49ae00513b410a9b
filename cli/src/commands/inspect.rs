//! `lightembed inspect`: the header, section table and metadata of a model, as text or JSON.

use crate::args::InspectCommand;
use anyhow::Result;

/// Prints the model's description ([`crate::inspect::text`] or [`crate::inspect::json`]).
pub fn run(c: InspectCommand) -> Result<u8> {
    let (bytes, m) = crate::load(&c.model)?;
    let out = if c.json {
        crate::inspect::json(&c.model, &bytes, &m)
    } else {
        crate::inspect::text(&c.model, &bytes, &m)
    };
    out!("{out}")?;
    Ok(0)
}
