//! The app's passages of a picked folder, cut natively as the page and the worker cut them, for
//! comparison with `lightembed passages` on the same folder (issue 33 item 7).
//!
//! Ignored: it reads a folder named by `LIBRARY` (every file, as a picked folder gives them,
//! format by [`folder_format`]; text decoded as the page decodes it, `ingest::decode`; PDF, Word,
//! OpenDocument, EPUB through [`document_file_passages`], the reader worker's path) and writes
//! one JSON object per passage to the file named by `OUT`:
//! `{"file": PATH, "id": ID, "text": TEXT}` (`PATH` relative to `LIBRARY`).
//!
//! ```text
//! LIBRARY=/path/to/folder OUT=/tmp/app.jsonl cargo test --release -p lightembed-app \
//!   --test library_parity -- --ignored --nocapture
//! ```

use lightembed::Model;
use lightembed_app::shared::library::folder_format;
use lightembed_app::worker::chunk::{document_file_passages, document_passages};
use std::io::Write;

#[test]
#[ignore = "reads the folder named by LIBRARY; writes OUT"]
fn app_passages_of_a_folder() {
    let (Ok(root), Ok(out)) = (std::env::var("LIBRARY"), std::env::var("OUT")) else {
        panic!("set LIBRARY (a folder) and OUT (the JSON lines file to write)");
    };
    let root = std::path::PathBuf::from(root);
    let top = root.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../public/models/lightembed-en-static.bin"
    ))
    .unwrap();
    let model = Model::from_bytes(&bytes).unwrap();
    let mut w = std::io::BufWriter::new(std::fs::File::create(&out).unwrap());
    let mut files: Vec<_> = walk(&root);
    files.sort();
    let (mut docs, mut passages) = (0usize, 0usize);
    for rel in files {
        // The page's path of a picked folder's file: `webkitRelativePath`, the folder's name first.
        let name = format!("{top}/{rel}");
        let Ok(format) = folder_format(&name) else {
            continue;
        };
        let raw = std::fs::read(root.join(&rel)).unwrap();
        let ps = if format.is_binary() {
            match document_file_passages(&name, &raw, format, &model) {
                Ok(ps) => ps,
                Err(e) => {
                    eprintln!("skipped {rel}: {e}");
                    continue;
                }
            }
        } else {
            if lightembed_ingest::looks_binary(&raw) {
                eprintln!("skipped {rel}: binary");
                continue;
            }
            let (text, _) = lightembed_ingest::decode(&raw, format);
            document_passages(&name, &text, format, &model)
        };
        if ps.is_empty() {
            eprintln!("skipped {rel}: no text found");
            continue;
        }
        docs += 1;
        passages += ps.len();
        for p in &ps {
            let line = serde_json::json!({"file": rel, "id": p.id(), "text": p.passage.text});
            writeln!(w, "{line}").unwrap();
        }
    }
    eprintln!("{docs} documents, {passages} passages");
}

/// Every file under `root`, relative and `/`-separated (hidden ones too: a picked folder gives
/// them all; [`folder_format`] decides).
fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                let rel = p.strip_prefix(root).unwrap();
                let parts: Vec<_> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out
}
