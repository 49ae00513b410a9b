//! `lightembed passages`: the JSONL it writes is exactly what the shared ingestion pipeline
//! (`lightembed_ingest::page_passages`, which the browser app's worker calls on dropped
//! files) gives for the same pages — so the CLI, the bundled corpus and the app cut pages the
//! same way — and the ids are those of `lightembed index`.

use lightembed_ingest::{document_passages, embed_text, page_passages, Format, Sizer};
use serde_json::Value;
use std::collections::HashSet;
use std::process::Output;

mod common;
use common::{run, scratch};

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const HTML: &str = r##"<!DOCTYPE html><html><head><title>Pots &amp; Pans - Kitchen</title>
<script>for (i = 0; i < n; i++) {}</script></head><body>
<nav class="sidebar"><p>Chapter list</p></nav>
<p>Loose text before any heading.</p>
<h1 id="pots"><a href="#pots">Pots &amp; Pans</a></h1>
<p>Cast iron keeps heat; stainless steel does not react with acids. Don&rsquo;t put a hot pan in cold water.</p>
<table><tr><th>Name</th><th>Price</th></tr><tr><td>Skillet</td><td>24.50</td></tr></table>
<h2>Caf&eacute; equipment</h2><p>Espresso machines need descaling. Q&A über Größe.</p>
<h2 id="long">A long section</h2><p>REPEAT</p>
<footer><p>Copyright</p></footer></body></html>"##;

const MARKDOWN: &str = "# Field notes\n\nZebras migrate across the Serengeti.\n\n```sh\n# not a heading\nls\n```\n\n## Salt & pepper 🌶\n\n- Tom & ジェリー\n- item two\n\n| A | B |\n|---|---|\n| 1 | 2 |\n";

/// The same pages through the CLI (`passages --embed-text`, one folder) and through
/// `page_passages` directly, sharing one `seen` set in the CLI's (sorted) file order: identical
/// passages, field by field; and `index` gives the same ids.
#[test]
fn cli_passages_are_exactly_the_shared_pipeline_output() {
    let dir = scratch("passages-same");
    let src = dir.join("site");
    std::fs::create_dir_all(src.join("notes")).unwrap();
    let sentence = "Each sentence adds one more detail about cleaning the long section's pans. ";
    let html = HTML.replace("REPEAT", &sentence.repeat(40));
    std::fs::write(src.join("kitchen.html"), &html).unwrap();
    std::fs::write(src.join("notes/field notes.md"), MARKDOWN).unwrap();
    // A file inside a hidden folder is not read (the app's `folder_format` skips it too: the
    // bench library's `boost/examples/libs/math/example/.temps/test.txt`).
    std::fs::create_dir_all(src.join("notes/.temps")).unwrap();
    std::fs::write(
        src.join("notes/.temps/test.txt"),
        "Scratch output of a test run.\n",
    )
    .unwrap();

    let prefix = "https://example.invalid/docs/";
    let o = run(&[
        "passages",
        "--model",
        common::model().to_str().unwrap(),
        "--url-prefix",
        prefix,
        "--embed-text",
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("2 files (0 excluded) → 2 documents, "),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = lines(&o);

    let bytes = std::fs::read(common::model()).unwrap();
    let model = lightembed::Model::from_bytes(&bytes).unwrap();
    let sizer = Sizer::new(&model);
    let mut seen = HashSet::new();
    let mut want = Vec::new();
    for (page, content, format) in [
        ("kitchen.html", html.as_str(), Format::Html),
        ("notes/field%20notes.md", MARKDOWN, Format::Markdown),
    ] {
        for p in page_passages(content, format, page, &sizer, &mut seen) {
            want.push(serde_json::json!({
                "id": p.id,
                "page": page,
                "title": p.title,
                "page_title": p.page_title,
                "heading": p.heading,
                "url": format!("{prefix}{}", p.url),
                "text": p.text,
                "embed_text": p.embed_text,
            }));
        }
    }
    assert_eq!(got, want);
    assert!(got.len() >= 7, "{}", got.len());

    // Spot checks of what both produce.
    let by_id = |id: &str| got.iter().find(|v| v["id"] == id).unwrap();
    let first = by_id("kitchen.html:1");
    assert_eq!(first["text"], "Loose text before any heading.");
    assert_eq!(first["title"], "Pots & Pans - Kitchen");
    let pots = by_id("kitchen.html#pots:1");
    assert_eq!(
        pots["url"],
        "https://example.invalid/docs/kitchen.html#pots"
    );
    assert_eq!(pots["heading"], "Pots & Pans");
    assert!(pots["text"]
        .as_str()
        .unwrap()
        .ends_with("Don’t put a hot pan in cold water. Name Price Skillet 24.50"));
    let cafe = by_id("kitchen.html:2");
    assert_eq!(cafe["title"], "Café equipment — Pots & Pans - Kitchen");
    assert_eq!(
        cafe["embed_text"],
        "Café equipment\nEspresso machines need descaling. Q&A über Größe."
    );
    assert!(by_id("kitchen.html#long:2")["text"]
        .as_str()
        .unwrap()
        .starts_with("Each sentence"));
    let md = by_id("notes/field%20notes.md#field-notes:1");
    assert_eq!(md["page_title"], "Field notes");
    assert_eq!(
        md["text"],
        "Zebras migrate across the Serengeti. # not a heading ls"
    );
    let salt = by_id("notes/field%20notes.md#salt--pepper-:1");
    assert_eq!(salt["text"], "Tom & ジェリー item two A B 1 2");
    for v in &got {
        assert_eq!(
            v["embed_text"],
            embed_text(v["heading"].as_str().unwrap(), v["text"].as_str().unwrap())
        );
        assert!(!v["text"].as_str().unwrap().contains("Chapter list"));
        assert!(!v["text"].as_str().unwrap().contains("Copyright"));
    }

    // `index` embeds the same passages under the same ids.
    let out = dir.join("idx");
    let o = run(&[
        "index",
        "-q",
        "--model",
        common::model().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "search",
        "--index",
        out.to_str().unwrap(),
        "--json",
        "-k",
        "100",
        "--mode",
        "vector",
        "--all-passages",
        "pans",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut index_ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let mut cli_ids: Vec<&str> = got.iter().map(|v| v["id"].as_str().unwrap()).collect();
    index_ids.sort();
    cli_ids.sort();
    assert_eq!(index_ids, cli_ids);
}

/// Charsets: a Latin-1 text file is decoded as windows-1252 with a warning that names it; an
/// HTML page declaring windows-1252 is decoded by its declaration, silently. No U+FFFD.
#[test]
fn non_utf8_files_are_decoded_and_the_guess_is_named() {
    let dir = scratch("passages-charset");
    std::fs::write(dir.join("latin1.txt"), b"caf\xe9 cr\xe8me br\xfbl\xe9e").unwrap();
    std::fs::write(
        dir.join("quoted.html"),
        b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\"><title>Q</title></head><body><p>\x93quoted\x94 text</p></body></html>",
    )
    .unwrap();
    let o = run(&[
        "passages",
        "-q",
        "--model",
        common::model().to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8(o.stderr.clone()).unwrap(),
        format!(
            "warning: {}: not UTF-8; decoded as windows-1252\n",
            dir.join("latin1.txt").display()
        )
    );
    let got = lines(&o);
    let texts: Vec<&str> = got.iter().map(|v| v["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["café crème brûlée", "“quoted” text"]);
    assert_eq!(got[0]["url"], "latin1.txt");
    assert_eq!(got[0]["id"], "latin1.txt:1");
}

/// One reader for `index`, `passages` and `site`: `passages` takes `--root-selector` and
/// `--passage-tokens` as `index` does, and cuts exactly the passages `index` indexes with them.
#[test]
fn passages_takes_the_reading_flags_of_index() {
    let dir = scratch("passages-flags");
    let src = dir.join("site");
    std::fs::create_dir_all(&src).unwrap();
    let long: String = (1..=12)
        .map(|i| format!("Pan number {i} keeps heat and does not react with acids. "))
        .collect();
    std::fs::write(
        src.join("page.html"),
        format!(
            "<title>Pans</title><div class=\"ad\"><p>Buy now, limited offer.</p></div>\
             <main><h2 id=\"care\">Care</h2><p>{long}</p></main>"
        ),
    )
    .unwrap();
    let model = common::model();
    let args = |extra: &[&str]| {
        let mut a = vec!["passages", "--model", model.to_str().unwrap()];
        a.extend_from_slice(extra);
        a.push(src.to_str().unwrap());
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let texts = |o: &Output| -> Vec<String> {
        lines(o)
            .iter()
            .map(|v| v["text"].as_str().unwrap().to_string())
            .collect()
    };
    let whole = run(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(whole.status.success());
    assert!(texts(&whole).iter().any(|t| t.contains("Buy now")));
    let main = run(&args(&["--root-selector", "main"])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(
        main.status.success(),
        "{}",
        String::from_utf8_lossy(&main.stderr)
    );
    assert!(!texts(&main).iter().any(|t| t.contains("Buy now")));
    let small = run(
        &args(&["--root-selector", "main", "--passage-tokens", "32"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(small.status.success());
    assert!(texts(&small).len() > texts(&main).len());
    // `index` with the same flags indexes the same ids.
    let out = dir.join("ix");
    let o = run(&[
        "index",
        "--model",
        model.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--root-selector",
        "main",
        "--passage-tokens",
        "32",
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "search",
        "--index",
        out.to_str().unwrap(),
        "--json",
        "-k",
        "100",
        "--all-passages",
        "pan keeps heat",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut indexed: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect();
    let mut cut: Vec<String> = lines(&small)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    indexed.sort();
    cut.sort();
    assert_eq!(indexed, cut);
}

/// An `--exclude` that leaves nothing says so, and counts are singular for one.
#[test]
fn excluding_everything_names_the_excludes() {
    let dir = scratch("passages-exclude-all");
    let src = dir.join("site");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.html"), "<title>A</title><p>Alpha.</p>").unwrap();
    std::fs::write(src.join("b.md"), "# B\n\nBeta.\n").unwrap();
    let model = common::model();
    let o = run(&[
        "passages",
        "--model",
        model.to_str().unwrap(),
        "--exclude",
        "*",
        src.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: no text found in the inputs (0 files read; 2 files were left out by --exclude and the default rules)\n"
    );
    let o = run(&[
        "passages",
        "--model",
        model.to_str().unwrap(),
        "--exclude",
        "*.md",
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr)
        .starts_with("1 file (1 excluded) → 1 document, 1 passage; "));
}

/// Documents (issue 33) through the CLI and through `document_passages` (what the app's worker
/// calls on a dropped file's bytes), in the CLI's sorted file order with one `seen` set:
/// identical passages, a PDF's with their page numbers; the files that cannot be read are named
/// with their reason, skipped (exit code 4), and the others are read.
#[test]
fn cli_passages_of_documents_are_exactly_the_shared_pipeline_output() {
    let dir = scratch("passages-documents");
    let src = dir.join("docs");
    std::fs::create_dir_all(&src).unwrap();
    let fixtures = common::root().join("tests/fixtures/documents");
    // Sorted, as the CLI walks them: real files from Debian packages and the handmade ones.
    let names = [
        "carroll-lookingglass.docx",
        "cxxtest-guide.epub",
        "encrypted.pdf",
        "guide.docx",
        "guide.epub",
        "guide.odt",
        "lbxalg.pdf",
        "scanned.pdf",
        "sonic.odt",
    ];
    for name in names {
        std::fs::copy(fixtures.join(name), src.join(name)).unwrap();
    }
    let o = run(&[
        "passages",
        "--model",
        common::model().to_str().unwrap(),
        "--embed-text",
        src.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let skipped = |name: &str| format!("warning: skipping {}: ", src.join(name).display());
    assert!(
        stderr.contains(&format!(
        "{}the PDF is encrypted with a password; save a copy without the password and add that\n",
        skipped("encrypted.pdf")
    )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
        "{}the PDF has no text layer (its 1 page(s) are images, e.g. a scan); run OCR on it first \
         (e.g. ocrmypdf) and add the result\n",
        skipped("scanned.pdf")
    )),
        "{stderr}"
    );
    assert!(
        stderr.contains("9 files (0 excluded) → 7 documents, "),
        "{stderr}"
    );
    let got = lines(&o);

    let bytes = std::fs::read(common::model()).unwrap();
    let model = lightembed::Model::from_bytes(&bytes).unwrap();
    let sizer = Sizer::new(&model);
    let mut seen = HashSet::new();
    let mut want = Vec::new();
    for name in names {
        let bytes = std::fs::read(fixtures.join(name)).unwrap();
        let format = Format::from_name(name);
        let Ok((ps, _)) = document_passages(&bytes, format, name, &sizer, &mut seen, None) else {
            continue;
        };
        for p in ps {
            let mut v = serde_json::json!({
                "id": p.id,
                "page": name,
                "title": p.title,
                "page_title": p.page_title,
                "heading": p.heading,
                "url": p.url,
                "text": p.text,
                "embed_text": p.embed_text,
            });
            if let Some(n) = p.page {
                v["page_number"] = n.into();
            }
            want.push(v);
        }
    }
    assert_eq!(got, want);
    let p = got
        .iter()
        .find(|v| v["text"].as_str().unwrap().contains("CCITT Group 4 2D"))
        .unwrap();
    assert_eq!(
        (&p["page_number"], &p["url"], &p["heading"]),
        (
            &serde_json::json!(3),
            &serde_json::json!("lbxalg.pdf#page=3"),
            &serde_json::json!("Bitmap Compression")
        )
    );
    for name in ["guide.docx", "guide.epub", "guide.odt"] {
        assert!(got.iter().any(|v| v["page"] == name), "{name}");
    }
    // A known passage of each real Word, OpenDocument and EPUB file, in its section.
    for (text, url, heading) in [
        ("hungry hyaena", "carroll-lookingglass.docx", ""),
        (
            "Average Magnitude Difference Function",
            "sonic.odt",
            "Algorithm",
        ),
        (
            "designed to be as portable as possible",
            "cxxtest-guide.epub#ar01s01.html#_overview",
            "1. Overview",
        ),
    ] {
        let p = got
            .iter()
            .find(|v| v["text"].as_str().unwrap().contains(text))
            .unwrap_or_else(|| panic!("no passage has {text:?}"));
        assert_eq!(
            (p["url"].as_str(), p["heading"].as_str()),
            (Some(url), Some(heading))
        );
    }
}
