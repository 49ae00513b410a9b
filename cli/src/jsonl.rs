//! Line-oriented input/output shared by `tokenize` and `embed`: reads texts (plain lines or JSONL
//! objects with a "text" field), computes one JSON object per input on all cores, and writes them
//! in input order, echoing an input "id" as the first field.

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde_json::Value;
use std::io::{BufRead, BufWriter, Write};

/// Lines processed per parallel batch: big enough to keep every core busy, small enough to stream.
const BATCH: usize = 1024;

struct Item {
    id: Option<Value>,
    text: String,
}

/// Reads `input` (`-` = stdin), applies `f` to each text in parallel, writes JSONL to stdout.
/// `f` returns the object's fields as JSON text without braces, e.g. `"ids":[101,102]`.
pub fn run<F>(input: &str, jsonl: bool, f: F) -> Result<()>
where
    F: Fn(&str) -> Result<String> + Sync,
{
    let reader: Box<dyn BufRead> = if input == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(input).with_context(|| format!("cannot read {input}"))?;
        Box::new(std::io::BufReader::new(file))
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut batch: Vec<Item> = Vec::with_capacity(BATCH);
    let mut line_no = 0usize;
    for line in reader.lines() {
        line_no += 1;
        let line = line.with_context(|| format!("{input}: line {line_no}: cannot read"))?;
        if jsonl {
            if line.trim().is_empty() {
                continue;
            }
            batch.push(parse(&line).map_err(|e| anyhow!("{input}: line {line_no}: {e}"))?);
        } else {
            batch.push(Item {
                id: None,
                text: line,
            });
        }
        if batch.len() == BATCH {
            flush(&mut out, &mut batch, &f)?;
        }
    }
    flush(&mut out, &mut batch, &f)?;
    out.flush().context("cannot write to stdout")?;
    Ok(())
}

fn parse(line: &str) -> Result<Item> {
    let value: Value = serde_json::from_str(line).map_err(|e| anyhow!("invalid JSON: {e}"))?;
    let Value::Object(mut obj) = value else {
        bail!("expected a JSON object with a \"text\" field")
    };
    let text = match obj.remove("text") {
        Some(Value::String(s)) => s,
        Some(_) => bail!("\"text\" must be a string"),
        None => bail!("missing \"text\" field"),
    };
    Ok(Item {
        id: obj.remove("id"),
        text,
    })
}

fn flush<F, W>(out: &mut W, batch: &mut Vec<Item>, f: &F) -> Result<()>
where
    F: Fn(&str) -> Result<String> + Sync,
    W: Write,
{
    let results: Vec<Result<String>> = batch.par_iter().map(|item| f(&item.text)).collect();
    for (item, fields) in batch.drain(..).zip(results) {
        let fields = fields?;
        let line = match item.id {
            Some(id) => format!("{{\"id\":{id},{fields}}}\n"),
            None => format!("{{{fields}}}\n"),
        };
        out.write_all(line.as_bytes())
            .context("cannot write to stdout")?;
    }
    Ok(())
}
