//! Line-oriented input/output shared by `tokenize` and `embed`: reads texts (plain lines or JSONL
//! objects with a "text" field), computes one JSON object per input on all cores, and writes them
//! in input order, echoing an input "id" as the first field.
//!
//! Nothing good is lost over one bad line: every line before a bad one is written (in order)
//! before the error that names it, or, with `skip_bad`, the bad line is reported on stderr and
//! the run goes on. Output is streamed: a batch is processed as soon as it is full *or* the input
//! has nothing more buffered (a pipe that waits), so an interactive producer gets each answer
//! without waiting for 1,024 lines or EOF. A UTF-8 byte-order mark at the start is ignored.

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};

/// Lines processed per parallel batch: big enough to keep every core busy, small enough to stream.
const BATCH: usize = 1024;

/// Read buffer: a batch is also cut when this buffer runs dry (the producer is slower than us).
const READ_BUFFER: usize = 256 * 1024;

/// The longest input line that is read (16 MiB): a model reads at most `max_seq_len` tokens of a
/// text, so a longer line is that line's error (skipped with `--skip-bad`), never held in memory
/// whole (a 300 MB line used to be read into one buffer).
const MAX_LINE: u64 = 16 * 1024 * 1024;

struct Item {
    line_no: usize,
    /// The input's "id" as JSON text.
    id: Option<String>,
    text: String,
}

/// The "id" of a line exactly as written.
#[derive(serde::Deserialize)]
struct RawId<'a> {
    #[serde(borrow)]
    id: &'a serde_json::value::RawValue,
}

/// What a run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Lines written to stdout.
    pub written: usize,
    /// Bad lines skipped (only with `skip_bad`; each was reported on stderr).
    pub skipped: usize,
}

/// Reads `input` (`-` = stdin), applies `f` to each text in parallel, writes JSONL to stdout.
/// `f` returns the object's fields as JSON text without braces, e.g. `"ids":[101,102]`.
///
/// Errors: an unreadable input, or — without `skip_bad` — the first line that is not valid
/// (`{input}: line {n}: {why}`), after every line before it has been written.
pub fn run<F>(input: &str, jsonl: bool, skip_bad: bool, f: F) -> Result<Summary>
where
    F: Fn(&str) -> Result<String> + Sync,
{
    let source: Box<dyn Read> = if input == "-" {
        Box::new(std::io::stdin())
    } else {
        let file = std::fs::File::open(input).with_context(|| format!("cannot read {input}"))?;
        Box::new(file)
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, source);
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut batch: Vec<Item> = Vec::with_capacity(BATCH);
    let mut summary = Summary::default();
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("{input}: line {}: cannot read", line_no + 1))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let too_long = n as u64 > MAX_LINE && buf.last() != Some(&b'\n');
        if too_long {
            // The rest of the line is passed over, not stored.
            reader
                .skip_until(b'\n')
                .with_context(|| format!("{input}: line {line_no}: cannot read"))?;
        }
        let parsed = if too_long {
            Err(anyhow!("longer than {} MiB; not read", MAX_LINE >> 20))
        } else {
            line_text(&buf, line_no)
        }
        .and_then(|line| {
            if jsonl {
                if line.trim().is_empty() {
                    return Ok(None);
                }
                parse(line, line_no).map(Some)
            } else {
                Ok(Some(Item {
                    line_no,
                    id: None,
                    text: line.to_string(),
                }))
            }
        });
        match parsed {
            Ok(Some(item)) => batch.push(item),
            Ok(None) => {}
            Err(e) => {
                // Everything before the bad line goes out first.
                flush(&mut out, &mut batch, &f, input, skip_bad, &mut summary)?;
                bad_line(&mut out, input, line_no, &e, skip_bad, &mut summary)?;
            }
        }
        // Full batch, or the producer has nothing more for us right now: process what we have.
        if batch.len() == BATCH || (!batch.is_empty() && reader.buffer().is_empty()) {
            flush(&mut out, &mut batch, &f, input, skip_bad, &mut summary)?;
        }
    }
    flush(&mut out, &mut batch, &f, input, skip_bad, &mut summary)?;
    out.flush().context("cannot write to stdout")?;
    Ok(summary)
}

/// One input line as text, without its line ending and (on line 1) a UTF-8 byte-order mark.
pub(crate) fn line_text(buf: &[u8], line_no: usize) -> Result<&str> {
    let mut s = std::str::from_utf8(buf)
        .map_err(|e| anyhow!("not UTF-8 (byte {} of the line)", e.valid_up_to() + 1))?;
    s = s.strip_suffix('\n').unwrap_or(s);
    s = s.strip_suffix('\r').unwrap_or(s);
    if line_no == 1 {
        s = s.strip_prefix('\u{feff}').unwrap_or(s);
    }
    Ok(s)
}

fn parse(line: &str, line_no: usize) -> Result<Item> {
    let value: Value = serde_json::from_str(line).map_err(|e| anyhow!("invalid JSON: {e}"))?;
    let Value::Object(mut obj) = value else {
        bail!("expected a JSON object with a \"text\" field")
    };
    let text = match obj.remove("text") {
        Some(Value::String(s)) => s,
        Some(_) => bail!("\"text\" must be a string"),
        None => bail!("missing \"text\" field"),
    };
    let id = obj.remove("id").map(|v| id_text(line, &v)).transpose()?;
    Ok(Item { line_no, id, text })
}

/// The JSON text that echoes `id`, the "id" of the JSON object `line` (also used by `search
/// --jsonl`): a number exactly as written — serde_json reads an integer beyond 64 bits as a
/// float, which would print rounded (18446744073709551616 as 1.8446744073709552e19) — anything
/// else as compact JSON.
///
/// Errors: "invalid JSON: …" if `line` is not an object with one "id" (only for a numeric id).
pub(crate) fn id_text(line: &str, id: &Value) -> Result<String> {
    match id {
        Value::Number(_) => Ok(serde_json::from_str::<RawId>(line)
            .map_err(|e| anyhow!("invalid JSON: {e}"))?
            .id
            .get()
            .to_string()),
        v => Ok(v.to_string()),
    }
}

/// A bad line: with `skip_bad`, a warning on stderr and the run goes on; otherwise the error
/// (stdout is flushed first, so the lines before it are not held in a buffer).
fn bad_line<W: Write>(
    out: &mut W,
    input: &str,
    line_no: usize,
    why: &anyhow::Error,
    skip_bad: bool,
    summary: &mut Summary,
) -> Result<()> {
    if skip_bad {
        summary.skipped += 1;
        crate::warn(&format!(
            "warning: skipping {input}: line {line_no}: {why:#}"
        ));
        Ok(())
    } else {
        out.flush().context("cannot write to stdout")?;
        Err(anyhow!("{input}: line {line_no}: {why:#}"))
    }
}

fn flush<F, W>(
    out: &mut W,
    batch: &mut Vec<Item>,
    f: &F,
    input: &str,
    skip_bad: bool,
    summary: &mut Summary,
) -> Result<()>
where
    F: Fn(&str) -> Result<String> + Sync,
    W: Write,
{
    if batch.is_empty() {
        return Ok(());
    }
    let results: Vec<Result<String>> = batch.par_iter().map(|item| f(&item.text)).collect();
    for (item, fields) in batch.drain(..).zip(results) {
        let fields = match fields {
            Ok(fields) => fields,
            Err(e) => {
                bad_line(out, input, item.line_no, &e, skip_bad, summary)?;
                continue;
            }
        };
        let written = match &item.id {
            Some(id) => out
                .write_all(b"{\"id\":")
                .and_then(|_| out.write_all(id.as_bytes()))
                .and_then(|_| out.write_all(b",")),
            None => out.write_all(b"{"),
        }
        .and_then(|_| out.write_all(fields.as_bytes()))
        .and_then(|_| out.write_all(b"}\n"));
        written.context("cannot write to stdout")?;
        summary.written += 1;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(())
}
