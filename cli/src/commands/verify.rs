//! `lightembed verify`: every load rule; `ok: …` or one line on stderr and exit 1.

use crate::args::VerifyCommand;
use anyhow::Result;

/// Loads the model with every check and prints its one-line summary.
pub fn run(c: VerifyCommand) -> Result<u8> {
    let (_, m) = crate::load(&c.model)?;
    outln!(
        "ok: {} ({})",
        c.model.display(),
        crate::inspect::one_line(&m)
    )?;
    Ok(0)
}
