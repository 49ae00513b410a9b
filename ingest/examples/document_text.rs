//! The text `lightembed-ingest` reads from documents, for the extraction benchmark
//! (`bench/pdf/quality.py`): for each FILE, OUT/NAME.txt holds its sections' blocks (a form feed
//! between pages of a PDF), and one line `NAME<TAB>seconds<TAB>sections<TAB>error` goes to stdout.
//!
//! `cargo run --release -p lightembed-ingest --example document_text -- OUT FILE...`

use lightembed_ingest::{document_sections, Format};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, files) = args
        .split_first()
        .expect("usage: document_text OUT FILE...");
    std::fs::create_dir_all(out).expect("OUT is a folder");
    for path in files {
        let name = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let bytes = std::fs::read(path).expect("readable file");
        let t = std::time::Instant::now();
        let got = document_sections(&bytes, Format::from_name(&name));
        let secs = t.elapsed().as_secs_f64();
        let (text, n, err) = match got {
            Ok((_, sections, _)) => {
                let mut text = String::new();
                let mut page = None;
                for s in &sections {
                    if page.is_some() && s.page != page {
                        text.push('\x0c');
                    }
                    page = s.page;
                    for b in &s.blocks {
                        text.push_str(b);
                        text.push('\n');
                    }
                }
                (text, sections.len(), String::new())
            }
            Err(e) => (String::new(), 0, e.to_string()),
        };
        std::fs::write(format!("{out}/{name}.txt"), text).expect("written");
        println!("{name}\t{secs:.3}\t{n}\t{err}");
    }
}
