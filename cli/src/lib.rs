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
//! prints and reports; the work lives in the other modules ([`fingerprint`], [`index_build`], [`index_dir`], `search`,
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
pub mod index_build;
pub mod index_dir;
mod inspect;
mod jsonl;
mod passages;
mod search;
mod site;
pub use site::DEFAULT_MODEL;

/// The built-in model's bytes ([`DEFAULT_MODEL`]), read at run time: a crate that takes them
/// through this function (the Python package) shares the one copy in the binary, where a
/// `const`/`static` initialised from them would be compiled into it again.
pub fn default_model() -> Option<&'static [u8]> {
    DEFAULT_MODEL
}
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
    let line = os_error_text(line);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// `std::fs::canonicalize`, or under WASI (where std has none) the absolute path with `.` and
/// `..` resolved by name (links are not resolved there).
pub(crate) fn canonicalize(path: &Path) -> std::io::Result<std::path::PathBuf> {
    #[cfg(target_os = "wasi")]
    {
        use std::path::Component;
        let abs = std::env::current_dir()?.join(path);
        let mut out = std::path::PathBuf::new();
        for c in abs.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
        std::fs::metadata(&out)?;
        Ok(out)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        std::fs::canonicalize(path)
    }
}

/// This process's id. Under WASI (the npm package runs this CLI compiled to `wasm32-wasip1`),
/// which has no process ids, the host's: the launcher passes Node's `process.pid` in
/// `LIGHTEMBED_PID` (temporary folder names, and the check that their owner still runs, need it).
pub(crate) fn process_id() -> u32 {
    #[cfg(target_os = "wasi")]
    {
        std::env::var("LIGHTEMBED_PID")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(1)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        std::process::id()
    }
}

/// `line` with every `(os error N)` in Linux's numbering. Under WASI, `std::io::Error` shows
/// WASI's errno (`No such file or directory (os error 44)`); the messages of the npm package's
/// `lightembed` are the native CLI's, so the numbers are mapped back (errnos without a Linux twin
/// here stay as they are). Elsewhere `line` is returned as is.
pub(crate) fn os_error_text(line: &str) -> std::borrow::Cow<'_, str> {
    #[cfg(target_os = "wasi")]
    {
        // (WASI errno, Linux errno) of the errors file work meets.
        const MAP: &[(i32, i32)] = &[
            (2, 13),  // EACCES
            (20, 17), // EEXIST
            (28, 22), // EINVAL
            (29, 5),  // EIO
            (31, 21), // EISDIR
            (32, 40), // ELOOP
            (33, 24), // EMFILE
            (37, 36), // ENAMETOOLONG
            (44, 2),  // ENOENT
            (51, 28), // ENOSPC
            (54, 20), // ENOTDIR
            (55, 39), // ENOTEMPTY
            (63, 1),  // EPERM
            (69, 30), // EROFS
        ];
        if !line.contains("(os error ") {
            return std::borrow::Cow::Borrowed(line);
        }
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(i) = rest.find("(os error ") {
            let after = &rest[i + 10..];
            let end = after.find(')').unwrap_or(after.len());
            out.push_str(&rest[..i + 10]);
            match after[..end].parse::<i32>() {
                Ok(n) => {
                    let linux = MAP.iter().find(|m| m.0 == n).map_or(n, |m| m.1);
                    out.push_str(&linux.to_string());
                }
                Err(_) => out.push_str(&after[..end]),
            }
            rest = &after[end..];
        }
        out.push_str(rest);
        std::borrow::Cow::Owned(out)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        std::borrow::Cow::Borrowed(line)
    }
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
pub(crate) fn skipped_code(skipped: usize, what: &str) -> u8 {
    if skipped == 0 {
        0
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
        EXIT_SKIPPED
    }
}

/// Reads and fully validates a model file; errors name the file.
pub fn load(path: &Path) -> Result<(Vec<u8>, lightembed::Model)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let model = lightembed::Model::from_bytes(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((bytes, model))
}
/// Runs a parsed command line: the exit code, with any error written as one line on stderr
/// (exit 1); a closed stdout (`| head`) is success.
pub fn main(cli: args::Cli) -> ExitCode {
    ExitCode::from(run(cli))
}

/// [`main`] as a number: the exit code (0, 1, 3 or [`EXIT_SKIPPED`]), for front ends that
/// run the CLI inside another process (the Python package's `lightembed` console script).
pub fn run(cli: args::Cli) -> u8 {
    match commands::run(cli.command) {
        Ok(code) => code,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            // The reader went away (`| head`): not an error.
            0
        }
        Err(e) => {
            // One line: the outermost context and its causes, joined.
            warn(&format!("error: {}", format!("{e:#}").replace('\n', " ")));
            1
        }
    }
}
