//! Inputs of `lightembed index` / `lightembed passages` → passages: JSONL records taken as they
//! are; Markdown, plain-text and HTML files read from disk, decoded and cut by the shared ingestion
//! pipeline ([`lightembed_ingest`]: sections at headings, passages sized in the model's word
//! pieces, anchors that exist in the page) — the same code the browser app runs on dropped files.
//!
//! This module keeps what is CLI-only: folders walked recursively with `walkdir`, in sorted order
//! (so the same inputs always give the same passages), excludes, unreadable and binary files,
//! charset warnings, JSONL records, ids unique across files.

use anyhow::{anyhow, bail, Context, Result};
use lightembed_build::inputs::PageReader;
use lightembed_ingest::{collapse_ws, url_path_encode};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One passage to embed and index (the shared pipeline's type; JSONL records have no heading).
pub use lightembed_ingest::Passage;

/// File kinds by extension and the exclude rules ([`lightembed_build::inputs`], shared with
/// `lightembed site` and the npm package).
pub use lightembed_build::inputs::{Excludes, Kind};

/// The kind of the file at `path`, by its name's extension.
fn kind_of(path: &Path) -> Option<Kind> {
    Kind::of(&path.file_name()?.to_string_lossy())
}

/// `path` as a `/`-separated string (what exclude globs match).
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// True when `excludes` leaves out the file at `path` (`rel` relative to its input root).
fn is_excluded(excludes: &Excludes, path: &Path, rel: &Path) -> bool {
    excludes.excludes(&slash_path(rel), || {
        ["html", "htm"]
            .iter()
            .any(|e| path.with_extension(e).is_file())
    })
}

/// A file to read, with the URL base it gets in the index.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Path on disk.
    pub path: PathBuf,
    /// URL of the page: the path relative to the folder given on the command line (or the file
    /// name for a file given directly), `/`-separated.
    pub url: String,
    /// How it is read.
    pub kind: Kind,
}

/// Expands the command-line inputs: files as given (format by extension, plain text when
/// unknown), folders walked recursively for `.html`, `.htm`, `.md`, `.markdown`, `.txt`,
/// `.jsonl`, `.pdf`, `.docx`, `.odt` and `.epub` files, sorted by path, skipping hidden entries (`.git/`, `.cache`, …). A file reached
/// twice is read once. Unreadable entries inside a folder (a dangling symlink, a loop) are
/// skipped with a warning on stderr and counted in `skipped`; files left out by `excludes` are
/// counted in `excluded`. Errors on a missing input or a folder with nothing to read.
///
/// URLs are relative to the folder given when there is one input; with several inputs, a
/// folder's URLs start with the folder's own name (`docs/index.html`, `blog/index.html`), so two
/// folders' pages never share a URL. Two files that would still get one URL (two inputs named
/// alike) are an error naming both.
pub fn collect_inputs(
    inputs: &[PathBuf],
    excludes: &Excludes,
    skipped: &mut usize,
    excluded: &mut usize,
) -> Result<Vec<InputFile>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut urls: std::collections::HashMap<String, PathBuf> = Default::default();
    let mut push = |file: InputFile, out: &mut Vec<InputFile>| -> Result<()> {
        let key = crate::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
        if !seen.insert(key) {
            return Ok(());
        }
        if file.kind != Kind::Jsonl {
            if let Some(first) = urls.get(&file.url) {
                bail!(
                    "{} and {} would both be indexed at the URL {}; give their common parent \
                     folder instead, or index them one at a time",
                    first.display(),
                    file.path.display(),
                    file.url
                );
            }
            urls.insert(file.url.clone(), file.path.clone());
        }
        out.push(file);
        Ok(())
    };
    for input in inputs {
        // With several inputs, a folder's URLs start with its name (see above).
        let prefix = match input.file_name() {
            Some(name) if inputs.len() > 1 => {
                format!("{}/", url_path_encode(&name.to_string_lossy()))
            }
            _ => String::new(),
        };
        let meta =
            std::fs::metadata(input).with_context(|| format!("cannot read {}", input.display()))?;
        if meta.is_dir() {
            let before = out.len();
            let walk = walkdir::WalkDir::new(input)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.')
                });
            for entry in walk {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        // A dangling link to something never read (a site's `fonts` folder or
                        // `highlight.js`, linked to a system package) is not a skipped input.
                        if e.path().is_some_and(|p| {
                            kind_of(p).is_none()
                                && p.symlink_metadata().is_ok_and(|m| m.is_symlink())
                        }) {
                            continue;
                        }
                        let path = e
                            .path()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default();
                        let why = e
                            .io_error()
                            .map(|io| io.to_string())
                            .unwrap_or_else(|| e.to_string());
                        crate::warn(&format!("warning: skipping {path}: {why}"));
                        *skipped += 1;
                        continue;
                    }
                };
                if !entry.file_type().is_file() {
                    continue;
                }
                let Some(kind) = kind_of(entry.path()) else {
                    continue;
                };
                let rel = entry.path().strip_prefix(input).unwrap_or(entry.path());
                if is_excluded(excludes, entry.path(), rel) {
                    *excluded += 1;
                    continue;
                }
                let url = prefix.clone()
                    + &rel
                        .components()
                        .map(|c| url_path_encode(&c.as_os_str().to_string_lossy()))
                        .collect::<Vec<_>>()
                        .join("/");
                push(
                    InputFile {
                        path: entry.path().to_path_buf(),
                        url,
                        kind,
                    },
                    &mut out,
                )?;
            }
            if out.len() == before && walk_was_empty(input) {
                bail!(
                    "{}: no .html, .htm, .md, .markdown, .txt, .jsonl, .pdf, .docx, .odt or .epub \
                     files in this folder",
                    input.display()
                );
            }
        } else {
            if is_excluded(excludes, input, input) {
                *excluded += 1;
                continue;
            }
            let url = input
                .file_name()
                .map(|n| url_path_encode(&n.to_string_lossy()))
                .unwrap_or_default();
            push(
                InputFile {
                    path: input.clone(),
                    url,
                    kind: kind_of(input).unwrap_or(Kind::Text),
                },
                &mut out,
            )?;
        }
    }
    Ok(out)
}

/// True when `dir` holds no readable file of a kind `index` reads (hidden entries excluded).
fn walk_was_empty(dir: &Path) -> bool {
    !walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| e.ok())
        .any(|e| e.file_type().is_file() && kind_of(e.path()).is_some())
}

/// What reading one file added.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Documents: a page with text, or a JSONL record.
    pub documents: usize,
    /// Passages added (after dropping repeats of already-indexed text).
    pub passages: usize,
    /// Files skipped because they could not be read (each named in a warning on stderr).
    pub skipped: usize,
}

/// What [`read_inputs`] read, with what it found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Files read (after excludes).
    pub files: usize,
    /// Inputs skipped (unreadable, binary), each named in a warning.
    pub skipped: usize,
    /// Files left out by `--exclude` and the default rules.
    pub excluded: usize,
    /// Documents: pages with text, JSONL records.
    pub documents: usize,
    /// Passages.
    pub passages: usize,
}

/// The one reader of `lightembed index` and `lightembed passages` (and, through the same
/// [`PageReader`], of `site`): expands `inputs` ([`collect_inputs`]), reads every file
/// ([`read_file`]) and hands each file's passages to `each` in input order.
///
/// Errors: an input that is missing, a bad line of a JSONL file, an error of `each`, no text.
pub fn read_inputs(
    inputs: &[PathBuf],
    excludes: &Excludes,
    reader: &mut PageReader,
    model: &lightembed::Model,
    mut each: impl FnMut(&InputFile, &[Passage]) -> Result<()>,
) -> Result<Totals> {
    let mut t = Totals::default();
    let files = collect_inputs(inputs, excludes, &mut t.skipped, &mut t.excluded)?;
    t.files = files.len();
    let mut buf = Vec::new();
    for f in &files {
        buf.clear();
        let added = read_file(f, reader, model, &mut buf)?;
        t.documents += added.documents;
        t.skipped += added.skipped;
        t.passages += buf.len();
        each(f, &buf)?;
    }
    if t.passages == 0 {
        return Err(lightembed_build::inputs::no_text(t.files, t.excluded).into());
    }
    Ok(t)
}

/// Adds a file's passages to `out` through `reader` ([`PageReader::read`]: decoded, cut, a
/// passage whose text was already read — e.g. a book's all-in-one `print.html` — skipped; a
/// guessed charset is named in a warning on stderr), except JSON Lines, which must be UTF-8 (a
/// line that is not is an error naming it) and are taken record by record. A binary page (a NUL
/// byte in its first 8 KiB) is skipped with a warning, and so is a file that cannot be read (both
/// counted in [`Added::skipped`]: the run goes on, like for an unreadable folder, and ends with
/// exit code 4). Ids are unique across files.
pub fn read_file(
    file: &InputFile,
    reader: &mut PageReader,
    model: &lightembed::Model,
    out: &mut Vec<Passage>,
) -> Result<Added> {
    let bytes = match std::fs::read(&file.path) {
        Ok(bytes) => bytes,
        Err(e) => return Ok(skip(file, &format!("cannot read: {e}"))),
    };
    let mut added = Added::default();
    if file.kind == Kind::Jsonl {
        // JSON Lines are UTF-8 (RFC 8259): a line that is not is that line's error, never a
        // reason to decode the whole file in another charset (`line_text`, as `embed` reads).
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let line = crate::jsonl::line_text(raw, i + 1).map_err(|e| {
                anyhow!(
                    "{}: line {}: {e}; JSON Lines must be UTF-8",
                    file.path.display(),
                    i + 1
                )
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let p = jsonl_record(line, &file.url, i + 1)
                .map_err(|e| anyhow!("{}: line {}: {e}", file.path.display(), i + 1))?;
            if !reader.ids().claim(&p.id) {
                // Records without an id get `FILE:LINE`; say so when that is what collided.
                let why = if p.id == generated_id(&file.url, i + 1) {
                    " (the id this record gets because it has none is taken: give it an \"id\")"
                } else if p.id.starts_with(&format!("{}:", file.url)) {
                    " (an earlier record without an id was given it: ids FILE:LINE are made for those)"
                } else {
                    ""
                };
                bail!(
                    "{}: line {}: duplicate id {:?}{why}",
                    file.path.display(),
                    i + 1,
                    p.id
                );
            }
            out.push(p);
            added.documents += 1;
            added.passages += 1;
        }
        return Ok(added);
    }
    let page = reader.read(model, &file.url, file.kind, &bytes, out);
    if let Some(why) = page.skipped {
        return Ok(skip(file, &why));
    }
    if let Some(w) = page.warning {
        crate::warn(&format!("warning: {}: {w}", file.path.display()));
    }
    added.passages = page.passages;
    if added.passages > 0 {
        added.documents = 1;
    }
    Ok(added)
}

/// A file that is skipped: named in a warning with `why`, counted in [`Added::skipped`].
fn skip(file: &InputFile, why: &str) -> Added {
    crate::warn(&format!("warning: skipping {}: {why}", file.path.display()));
    Added {
        skipped: 1,
        ..Added::default()
    }
}

/// The id of a JSONL record that has none: `FILE:LINE`.
fn generated_id(file_url: &str, line_no: usize) -> String {
    format!("{file_url}:{line_no}")
}

fn jsonl_record(line: &str, file_url: &str, line_no: usize) -> Result<Passage> {
    let value: Value = serde_json::from_str(line).map_err(|e| anyhow!("invalid JSON: {e}"))?;
    let Value::Object(obj) = value else {
        bail!("expected a JSON object with a \"text\" field")
    };
    let text = match obj.get("text") {
        Some(Value::String(s)) => collapse_ws(s),
        Some(_) => bail!("\"text\" must be a string"),
        None => bail!("missing \"text\" field"),
    };
    if text.is_empty() {
        bail!("\"text\" is empty");
    }
    let field = |name: &str| -> Result<Option<String>> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            // An integer id is kept as written; a fraction or an integer beyond 64 bits would
            // come back as a rounded float, so it must be quoted.
            Some(Value::Number(n)) if name == "id" && (n.is_i64() || n.is_u64()) => {
                Ok(Some(n.to_string()))
            }
            Some(Value::Number(n)) if name == "id" => bail!(
                "\"id\" must be a string or an integer that fits 64 bits (this number reads as \
                 {n}); write it as a string"
            ),
            Some(_) => bail!("\"{name}\" must be a string"),
        }
    };
    let id = field("id")?.unwrap_or_else(|| generated_id(file_url, line_no));
    let title = field("title")?.unwrap_or_default();
    let url = field("url")?.unwrap_or_default();
    let embed_text = if title.is_empty() {
        text.clone()
    } else {
        format!("{title}\n{text}")
    };
    Ok(Passage {
        id,
        page_title: title.clone(),
        title,
        heading: String::new(),
        url,
        text,
        embed_text,
        page: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_records_are_validated() {
        let p = jsonl_record(
            r#"{"id":7,"title":"T","url":"/u","text":" a  b "}"#,
            "f.jsonl",
            1,
        )
        .unwrap();
        assert_eq!(
            (
                p.id.as_str(),
                p.title.as_str(),
                p.url.as_str(),
                p.text.as_str()
            ),
            ("7", "T", "/u", "a b")
        );
        assert_eq!(p.embed_text, "T\na b");
        let p = jsonl_record(r#"{"text":"x"}"#, "f.jsonl", 3).unwrap();
        assert_eq!(p.id, "f.jsonl:3");
        let err = |line| jsonl_record(line, "f", 1).unwrap_err().to_string();
        assert_eq!(err(r#"{"id":1}"#), "missing \"text\" field");
        assert_eq!(err(r#"{"text":""}"#), "\"text\" is empty");
        assert_eq!(
            err(r#"{"text":"a","title":3}"#),
            "\"title\" must be a string"
        );
        assert_eq!(err("[1]"), "expected a JSON object with a \"text\" field");
        assert!(err("{").starts_with("invalid JSON: "));
        // Integer ids up to 64 bits are kept exactly; beyond, or fractions, must be quoted.
        let id = |line| jsonl_record(line, "f", 1).unwrap().id;
        assert_eq!(
            id(r#"{"id":18446744073709551615,"text":"a"}"#),
            "18446744073709551615"
        );
        assert_eq!(
            id(r#"{"id":-9223372036854775808,"text":"a"}"#),
            "-9223372036854775808"
        );
        assert_eq!(
            err(r#"{"id":18446744073709551616,"text":"a"}"#),
            "\"id\" must be a string or an integer that fits 64 bits (this number reads as \
             1.8446744073709552e+19); write it as a string"
        );
        assert!(err(r#"{"id":1.5,"text":"a"}"#)
            .ends_with("(this number reads as 1.5); write it as a string"));
    }
}
