//! `lightembed passages`: the passages `lightembed index` would embed, as JSON lines on stdout,
//! without embedding anything. The browser app's bundled corpus (`public/corpus/rust-book.jsonl`,
//! `scripts/make_corpus.sh`) is written with it, so the app indexes exactly the passages the CLI
//! indexes (the app cuts dropped files with the same [`lightembed_ingest`] code).
//!
//! One object per passage, in input order, keys in this order:
//!
//! ```text
//! {"id": "ch04-01-what-is-ownership.html#the-stack-and-the-heap:1",   same id as `index` gives
//!  "page": "ch04-01-what-is-ownership.html",                          the page's URL (relative)
//!  "title": "The Stack and the Heap — What Is Ownership? - The Rust Programming Language",
//!  "page_title": "What Is Ownership? - The Rust Programming Language",
//!  "heading": "The Stack and the Heap",
//!  "url": "https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html#the-stack-and-the-heap",
//!  "text": "…"}
//! ```
//!
//! A passage of a PDF also has `"page_number": N` (after `url`, which ends in `#page=N`): the
//! page it is on.
//!
//! `url` is `--url-prefix` + the page URL (+ `#anchor`) for pages cut from files; JSONL records
//! keep their own `url` (and have `page` = the JSONL file, `heading` empty, `page_title` =
//! `title`). The embedded text is `heading` + `"\n"` + `text` (`text` alone without a heading,
//! [`lightembed_ingest::embed_text`]); `--embed-text` also writes it as `"embed_text"`.

use anyhow::Result;
use lightembed_build::count;
use lightembed_build::inputs::PageReader;
use std::path::PathBuf;

use crate::sources::{read_inputs, Excludes, Kind};

/// Options of `lightembed passages`.
pub struct PassagesArgs {
    pub model: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub exclude: Vec<String>,
    pub default_excludes: bool,
    pub url_prefix: String,
    pub embed_text: bool,
    pub quiet: bool,
    /// CSS selector of an HTML page's content (`--root-selector`), as `index` and `site` take it.
    pub root_selector: Option<String>,
    /// Passage size in word pieces (`--passage-tokens`), as `index` takes it.
    pub passage_tokens: usize,
}

/// Runs `lightembed passages`: see the command's `--help`.
pub fn run(a: PassagesArgs) -> Result<u8> {
    let (_, model) = crate::load(&a.model)?;
    let mut reader = PageReader::new(a.root_selector.as_deref(), a.passage_tokens)?;
    let excludes = Excludes::new(&a.exclude, a.default_excludes)?;
    let t = read_inputs(&a.inputs, &excludes, &mut reader, &model, |f, ps| {
        let mut out = String::new();
        for p in ps {
            let url = if f.kind == Kind::Jsonl {
                p.url.clone()
            } else {
                format!("{}{}", a.url_prefix, p.url)
            };
            let json = |v: &str| serde_json::to_string(v);
            let mut fields = vec![
                ("id", json(&p.id)?),
                ("page", json(&f.url)?),
                ("title", json(&p.title)?),
                ("page_title", json(&p.page_title)?),
                ("heading", json(&p.heading)?),
                ("url", json(&url)?),
            ];
            if let Some(n) = p.page {
                fields.push(("page_number", n.to_string()));
            }
            fields.push(("text", json(&p.text)?));
            if a.embed_text {
                fields.push(("embed_text", json(&p.embed_text)?));
            }
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("\"{k}\":{v}"));
            }
            out.push_str("}\n");
        }
        out!("{out}")
    })?;
    if !a.quiet {
        crate::warn(&format!(
            "{} ({} excluded) → {}, {}; model {} (max_seq_len {})",
            count(t.files, "file"),
            t.excluded,
            count(t.documents, "document"),
            count(t.passages, "passage"),
            model.model_id(),
            model.header().max_seq_len,
        ));
    }
    Ok(crate::skipped_code(t.skipped, "inputs"))
}
