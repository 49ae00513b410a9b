//! `lightembed` — the command-line tool as a library (the binary, `main.rs`, only parses and
//! calls [`main`]): inspect, verify, tokenize and embed with `.bin` v1 models;
//! build and query semantic-search indexes (`index`, `search`), list the passages of pages
//! (`passages`); fingerprint tools.
//!
//! Exit codes: 0 success; 1 a model, input or I/O error (one line on stderr); 2 bad usage;
//! 3 `fingerprint detect` found no match; 4 done, but some inputs were skipped (`index`: an
//! unreadable file or folder; `embed`/`tokenize --skip-bad`: a bad line), each named on stderr.
//!
//! Nothing on stderr is worth a crash: warnings and progress go through [`warn`], which ignores
//! a closed or full stderr (`lightembed index … 2>&1 | grep -q warning`).

//!
//! Layout (Pagefind's thin `main.rs`, ruff's `args.rs` + `commands/`): [`args`] is the command
//! line as data, [`commands`] has one file per command that only turns arguments into calls,
//! prints and reports; the work lives in the other modules ([`fingerprint`], `search_index`,
//! `site`, `passages`, `sources`, `inspect`, `jsonl`) and in the engine and index crates.

/// `println!` for results: returns an error instead of panicking when stdout cannot be written
/// (e.g. a full disk); a closed pipe (`lightembed … | head`) ends the program quietly, exit 0.
macro_rules! outln {
    ($($t:tt)*) => { $crate::write_stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` counterpart of [`outln!`].
macro_rules! out {
    ($($t:tt)*) => { $crate::write_stdout(&format!($($t)*)) };
}

pub mod args;
pub mod commands;
pub mod fingerprint;
mod inspect;
mod jsonl;
mod passages;
mod search_index;
mod site;
mod sources;

use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;

/// Exit code: the work is done, but some inputs were skipped (each was named on stderr).
pub const EXIT_SKIPPED: u8 = 4;

/// Writes one line to stderr (a warning, a progress summary, the final error). A stderr that
/// cannot be written (closed pipe, full disk) is ignored: losing a message must never lose work.
pub(crate) fn warn(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// Writes `s` to stdout and flushes; see [`outln!`].
pub(crate) fn write_stdout(s: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
    }
}

/// Exit code 0, or [`EXIT_SKIPPED`] with a summary warning when `skipped` inputs were skipped
/// (`what`: the plural, e.g. `"lines"`).
pub(crate) fn skipped_code(skipped: usize, what: &str) -> ExitCode {
    if skipped == 0 {
        ExitCode::SUCCESS
    } else {
        // "1 line", "2 lines" (`what` is the plural).
        let what = if skipped == 1 {
            what.strip_suffix('s').unwrap_or(what)
        } else {
            what
        };
        warn(&format!(
            "warning: {skipped} {what} skipped (named above); exit code {EXIT_SKIPPED}"
        ));
        ExitCode::from(EXIT_SKIPPED)
    }
}

/// Reads and fully validates a model file; errors name the file.
pub(crate) fn load(path: &Path) -> Result<(Vec<u8>, lightembed::Model)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let model = lightembed::Model::from_bytes(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((bytes, model))
}
/// Runs a parsed command line: the exit code, with any error written as one line on stderr
/// (exit 1); a closed stdout (`| head`) is success.
pub fn main(cli: args::Cli) -> ExitCode {
    match commands::run(cli.command) {
        Ok(code) => code,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            // The reader went away (`| head`): not an error.
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One line: the outermost context and its causes, joined.
            warn(&format!("error: {}", format!("{e:#}").replace('\n', " ")));
            ExitCode::from(1)
        }
    }
}
