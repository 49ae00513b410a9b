//! `lightembed index` + `lightembed search` on the fixture site (`tests/fixtures/site`: HTML,
//! Markdown in a subfolder, JSONL) with the shipped static model: passages and anchors, the
//! files written, ranked results, and the §8 refusals with their exact messages.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{model, root, run, s, scratch, stderr};

fn build(out: &Path, extra: &[&str]) -> Output {
    let site = root().join("tests/fixtures/site");
    let mut args = vec![
        "index",
        "--model",
        s(&model()).to_owned().leak(),
        "--out",
        s(out).to_owned().leak(),
    ];
    args.extend_from_slice(extra);
    args.push(s(&site).to_owned().leak());
    run(&args)
}

fn search_json(index: &Path, extra: &[&str], query: &str) -> Value {
    let mut args = vec!["search", "--index", s(index), "--json"];
    args.extend_from_slice(extra);
    args.push(query);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn index_writes_manifest_and_search_ranks_the_right_passage() {
    let out = scratch("site-index");
    let o = build(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = String::from_utf8(o.stdout).unwrap();
    assert!(
        // 2 pages with text + 2 JSONL records.
        summary.starts_with("indexed 4 documents → 8 passages in "),
        "{summary}"
    );

    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["model_id"], shipped_id());
    let (major, minor, patch) = shipped_version();
    assert_eq!(side["model_version"], format!("{major}.{minor}.{patch}"));
    assert_eq!(side["dims"], 384);
    assert_eq!(side["count"], 8);
    assert_eq!(side["metric"], "cosine");
    let bin = std::fs::read(out.join("index.bin")).unwrap();
    assert_eq!(side["bytes"], bin.len());
    let model_bytes = std::fs::read(model()).unwrap();
    let trailer: String = model_bytes[model_bytes.len() - 32..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(side["model_sha256"], trailer.as_str());

    // Sections become passages with their anchors; nav, script and footer text is not indexed.
    let all = search_json(&out, &["-k", "20"], "garden");
    let mut got = ids(&all);
    got.sort();
    assert_eq!(
        got,
        [
            "guide/soil.md#compost:1",
            "guide/soil.md#soil:1",
            "guide/soil.md#testing-the-ph:1",
            "index.html#garden-handbook:1",
            "index.html#pests:1",
            "index.html#watering:1",
            "tools/shears",
            "tools/spade",
        ]
    );
    let text: String = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["snippet"].as_str().unwrap())
        .collect();
    assert!(!text.contains("Copyright") && !text.contains("not content") && !text.contains("Home"));

    for (query, expected) in [
        (
            "how often should I water tomato plants",
            "index.html#watering:1",
        ),
        (
            "making compost from kitchen waste",
            "guide/soil.md#compost:1",
        ),
        ("sharpen pruning shears", "tools/shears"),
    ] {
        let v = search_json(&out, &["-k", "3"], query);
        assert_eq!(ids(&v)[0], expected, "{query}: {v}");
        let top = &v["results"][0];
        assert_eq!(top["rank"], 1);
        let score = top["score"].as_f64().unwrap();
        // Convex fusion is in [0, 1]; page evidence adds at most PAGE_WEIGHT × another score.
        let max = 1.0 + f64::from(lightembed_index::PAGE_WEIGHT);
        assert!(score > 0.3 && score <= max, "{score}");
    }
    let v = search_json(&out, &["-k", "1"], "how often should I water tomato plants");
    assert_eq!(v["results"][0]["url"], "index.html#watering");
    assert_eq!(v["results"][0]["title"], "Watering — Garden Handbook");
    assert_eq!(v["dims"], 384);

    // Plain-text output: a header line, then rank, score, title.
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "-k",
        "1",
        "--page-weight",
        "0",
        "compost heap",
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("1 result for “compost heap” (hybrid mode, 8 passages, 384 dims, "),
        "{text}"
    );
    // Best on both sides: the fused (min–max normalised) score is 1.
    assert!(text.contains(" 1. 1.000  Compost — Soil\n"), "{text}");
    // With page evidence (the default) another section of soil.md adds to it.
    let o = run(&["search", "--index", s(&out), "-k", "1", "compost heap"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("  Compost — Soil\n") && !text.contains(" 1. 1.000 "),
        "{text}"
    );
}

/// Hybrid results that hold no word of the query say they are ranked by meaning alone (their
/// fused scores still start at 1); results that match do not.
#[test]
fn hybrid_results_without_a_query_word_say_so() {
    let out = scratch("site-index-meaning-alone");
    assert!(build(&out, &["--quiet"]).status.success());
    const NOTE: &str =
        "No passage contains the words of the query: these are the closest by meaning alone.";
    let o = run(&["search", "--index", s(&out), "xyzzy plugh"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().nth(1), Some(NOTE), "{text}");
    for args in [
        &["search", "--index", s(&out), "compost"][..],
        &[
            "search",
            "--index",
            s(&out),
            "--mode",
            "vector",
            "xyzzy plugh",
        ][..],
    ] {
        let text = String::from_utf8(run(args).stdout).unwrap();
        assert!(!text.contains(NOTE), "{args:?}: {text}");
    }
}

#[test]
fn matryoshka_dims_index_and_search() {
    let out = scratch("site-index-128");
    let o = build(&out, &["--dims", "128", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let v = search_json(&out, &[], "making compost from kitchen waste");
    assert_eq!(v["dims"], 128);
    assert_eq!(ids(&v)[0], "guide/soil.md#compost:1");

    let bad = build(&scratch("site-index-bad"), &["--dims", "100"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        stderr(&bad),
        "error: --dims: invalid dims: 100 is not one of the model's dims {32, 64, 128, 256, 384}\n"
    );
}

/// The static model with its header `version_major` set to `major` and the SHA-256 trailer redone.
/// `model_id` of the shipped static model (header offset 48, NUL-padded).
fn shipped_id() -> String {
    let b = std::fs::read(model()).unwrap();
    String::from_utf8(b[48..64].to_vec())
        .unwrap()
        .trim_end_matches('\0')
        .to_string()
}

/// `(major, minor, patch)` of the shipped static model (header offsets 44, 45, 46..48).
fn shipped_version() -> (u8, u8, u16) {
    let b = std::fs::read(model()).unwrap();
    (b[44], b[45], u16::from_le_bytes([b[46], b[47]]))
}

fn model_with_major(dir: &Path, major: u8) -> PathBuf {
    let mut b = std::fs::read(model()).unwrap();
    let (_, minor, patch) = shipped_version();
    lightembed::writer::set_model_version(
        &mut b,
        lightembed::ModelVersion::new(major, minor, patch),
    );
    let p = dir.join(format!("v{major}.bin"));
    std::fs::write(&p, b).unwrap();
    p
}

#[test]
fn search_refuses_a_model_the_index_was_not_built_for() {
    let out = scratch("site-index-compat");
    assert!(build(&out, &["--quiet"]).status.success());

    // Major version bump: the spec's message, exit 1, nothing on stdout.
    let (major, minor, patch) = shipped_version();
    let next = model_with_major(&out, major + 1);
    let o = run(&["search", "--index", s(&out), "--model", s(&next), "compost"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        stderr(&o),
        format!(
            "error: Index was built with {} v{major}.{minor} but the loaded model is v{}.{minor}. Re-run `lightembed index`.\n",
            shipped_id(),
            major + 1
        )
    );

    // Another model id.
    let other = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "--model",
        s(&other),
        "compost",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: Index was built with {} v{major}.{minor} but the loaded model is tern-2l v1.0. Re-run `lightembed index`.\n",
            shipped_id()
        )
    );

    // The other shipped model: refused by model_id, whatever the versions (issue 14).
    let two = root().join("public/models/lightembed-en-2l.bin");
    let o = run(&["search", "--index", s(&out), "--model", s(&two), "compost"]);
    assert_eq!(o.status.code(), Some(1));
    let b2 = std::fs::read(&two).unwrap();
    assert_eq!(
        stderr(&o),
        format!(
            "error: Index was built with {} v{major}.{minor} but the loaded model is lightembed-en-2l v{}.{}. Re-run `lightembed index`.\n",
            shipped_id(),
            b2[44],
            b2[45]
        )
    );
    assert_ne!(shipped_id(), "lightembed-en-2l");

    // An index built under the old shared id `lightembed-en` (before issue 14) is refused too.
    let old_dir = scratch("site-index-old-id");
    let mut old = std::fs::read(model()).unwrap();
    old[48..64].copy_from_slice(b"lightembed-en\0\0\0");
    old[44] = 2;
    let n = old.len() - 32;
    let h = Sha256::digest(&old[..n]);
    old[n..].copy_from_slice(&h);
    let old_model = old_dir.join("old.bin");
    std::fs::write(&old_model, &old).unwrap();
    let fixture_site = root().join("tests/fixtures/site");
    let o = run(&[
        "index",
        "--quiet",
        "--model",
        s(&old_model),
        "--out",
        s(&old_dir.join("ix")),
        s(&fixture_site),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "search",
        "--index",
        s(&old_dir.join("ix")),
        "--model",
        s(&model()),
        "compost",
    ]);
    assert_eq!(
        stderr(&o),
        format!(
            "error: Index was built with lightembed-en v2.{minor} but the loaded model is {} v{major}.{minor}. Re-run `lightembed index`.\n",
            shipped_id()
        )
    );

    // Same id and major, different file: searches, with a warning on stderr.
    let v1 = model_with_major(&out, major);
    let mut b = std::fs::read(&v1).unwrap();
    b[45] = minor + 3;
    let n = b.len() - 32;
    let h = Sha256::digest(&b[..n]);
    b[n..].copy_from_slice(&h);
    std::fs::write(&v1, &b).unwrap();
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "--model",
        s(&v1),
        "--json",
        "compost",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "note: index was built with model v{major}.{minor}.{patch}, the loaded model is v{major}.{}.{patch}",
            minor + 3
        )),
        "{err}"
    );
    assert!(
        err.contains("warning: index was built from a model file with SHA-256 "),
        "{err}"
    );
}

#[test]
fn bad_inputs_and_damaged_indexes_fail_with_one_line() {
    let dir = scratch("site-index-bad-inputs");
    let jsonl = dir.join("bad.jsonl");
    std::fs::write(&jsonl, "{\"id\":\"a\",\"text\":\"one\"}\n{\"id\":\"b\"}\n").unwrap();
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&dir.join("o")),
        s(&jsonl),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: line 2: missing \"text\" field\n",
            jsonl.display()
        )
    );
    assert!(
        !dir.join("o/index.bin").exists(),
        "nothing is written on error"
    );

    std::fs::write(
        &jsonl,
        "{\"id\":\"a\",\"text\":\"one\"}\n{\"id\":\"a\",\"text\":\"two\"}\n",
    )
    .unwrap();
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&dir.join("o")),
        s(&jsonl),
    ]);
    assert_eq!(
        stderr(&o),
        format!("error: {}: line 2: duplicate id \"a\"\n", jsonl.display())
    );
    // Collisions with the FILE:LINE ids made for records without one say so, either way round.
    let dup = dir.join("d.jsonl");
    for (lines, want) in [
        (
            "{\"text\":\"alpha\"}\n{\"id\":\"d.jsonl:1\",\"text\":\"beta\"}\n",
            "line 2: duplicate id \"d.jsonl:1\" (an earlier record without an id was given it: ids FILE:LINE are made for those)",
        ),
        (
            "{\"id\":\"d.jsonl:2\",\"text\":\"alpha\"}\n{\"text\":\"beta\"}\n",
            "line 2: duplicate id \"d.jsonl:2\" (the id this record gets because it has none is taken: give it an \"id\")",
        ),
    ] {
        std::fs::write(&dup, lines).unwrap();
        let o = run(&["index", "--model", s(&model()), "--out", s(&dir.join("o")), s(&dup)]);
        assert_eq!(stderr(&o), format!("error: {}: {want}\n", dup.display()));
    }

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&dir.join("o")),
        s(&empty),
    ]);
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: no .html, .htm, .md, .markdown, .txt, .jsonl, .pdf, .docx, .odt or .epub files in this folder\n",
            empty.display()
        )
    );

    // A truncated index.bin is rejected before any model is loaded.
    let out = scratch("site-index-truncated");
    assert!(build(&out, &["--quiet"]).status.success());
    let bin = out.join("index.bin");
    let bytes = std::fs::read(&bin).unwrap();
    std::fs::write(&bin, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["search", "--index", s(&out), "compost"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {}: ", bin.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);

    // No index.json and no --model.
    std::fs::write(&bin, &bytes).unwrap();
    std::fs::remove_file(out.join("index.json")).unwrap();
    let o = run(&["search", "--index", s(&out), "compost"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no --model given and "),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "--model",
        s(&model()),
        "compost",
    ]);
    assert!(o.status.success());
}

#[test]
fn awkward_pages_are_cut_cleanly() {
    let dir = scratch("site-awkward");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join(".git")).unwrap();
    // <br> separates words; headings without ids get slugs, repeated ones a suffix.
    let mut html = String::from("<html><body><p>Before<br>after</p>");
    for n in ["one", "two", "three"] {
        html.push_str(&format!("<h2>Same heading</h2><p>Text {n} under it.</p>"));
    }
    // Deep nesting does not recurse or go quadratic.
    html.push_str(&"<div>".repeat(20_000));
    html.push_str("<p>deep paragraph</p>");
    html.push_str(&"</div>".repeat(20_000));
    html.push_str("</body></html>");
    std::fs::write(src.join("a b#c.html"), html).unwrap();
    // CRLF paragraphs and a 1,000-word paragraph without sentence ends.
    let para = "word ".repeat(120);
    std::fs::write(
        src.join("crlf.txt"),
        format!("{para}\r\n\r\n{para}\r\n\r\n{para}"),
    )
    .unwrap();
    let long: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
    std::fs::write(src.join("long.txt"), long.join(" ")).unwrap();
    // Hidden folders are not indexed; binary files are skipped with a warning.
    std::fs::write(src.join(".git/notes.md"), "# Secret\n\nhidden text").unwrap();
    std::fs::write(src.join("blob.txt"), b"abc\0def").unwrap();

    let out = dir.join("idx");
    let o = run(&[
        "index",
        "-q",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        s(&src),
    ]);
    // Skipped and counted: exit 4, like an unreadable file (a page is never dropped silently).
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    // The 20,000 nested divs are read flat past the depth limit, and the page is named.
    assert_eq!(
        stderr(&o),
        format!(
            "warning: {}: HTML nested more than 512 elements deep; the tags below that depth \
             were ignored (their text is read)\n\
             warning: skipping {}: binary file (a NUL byte in its first 8 KiB)\n\
             warning: 1 input skipped (named above); exit code 4\n",
            src.join("a b#c.html").display(),
            src.join("blob.txt").display()
        )
    );
    // Every passage: vector mode ranks all of them, --all-passages keeps several per section.
    let all = search_json(
        &out,
        &["-k", "100", "--mode", "vector", "--all-passages"],
        "text",
    );
    let mut got: Vec<(String, String)> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["snippet"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let ids: Vec<&str> = got.iter().map(|(i, _)| i.as_str()).collect();
    // Passages are sized in the model's word pieces (window 128 = 126 + [CLS]/[SEP]): each CRLF
    // paragraph (120 pieces) is one passage, and the three are the same text, so only the first
    // is kept; the 1,000 words w0…w999 (2–3 pieces each) become 25 passages.
    // Headings without an id link to the page itself (no invented slugs), numbered per page.
    let mut want = vec![
        "a%20b%23c.html:1".to_string(),
        "a%20b%23c.html:2".to_string(),
        "a%20b%23c.html:3".to_string(),
        "a%20b%23c.html:4".to_string(),
        "crlf.txt:1".to_string(),
    ];
    let mut long_ids: Vec<String> = (1..=25).map(|n| format!("long.txt:{n}")).collect();
    long_ids.sort();
    want.extend(long_ids);
    assert_eq!(ids, want);
    // The first section: "Before after", and the deep paragraph after the third heading.
    assert!(got[0].1.starts_with("Before after"), "{:?}", got[0]);
    assert_eq!(got[3].1, "Text three under it. deep paragraph");
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["count"], 30);
    assert_eq!(side["documents"], 3);
}

#[test]
fn usage_errors_exit_2_and_bad_queries_exit_1() {
    let out = scratch("site-index-usage");
    assert!(build(&out, &["--quiet"]).status.success());
    for args in [
        vec!["search", "--index", s(&out), "-k", "0", "x"],
        vec!["search", "--index", s(&out), "--ef-search", "0", "x"],
        vec!["index", "--model", "m.bin", "--out", "o", "--m", "1", "in"],
        vec![
            "search",
            "--index",
            s(&out),
            "--fusion",
            "rrf",
            "--rrf-k",
            "NaN",
            "x",
        ],
        vec!["search", "--index", s(&out), "--page-weight", "-1", "x"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let o = run(&["search", "--index", s(&out), "  "]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "error: the query is empty\n");
}

#[test]
fn a_failed_write_leaves_the_previous_index_untouched() {
    let out = scratch("site-index-failed-write");
    // index.json is a directory: the pair cannot be written.
    std::fs::create_dir_all(out.join("index.json")).unwrap();
    let o = build(&out, &["--quiet"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: --out {}: index.json is a directory; cannot replace it\n",
            out.display()
        )
    );
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["index.json"], "no index.bin and no temporary files");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let out = scratch("site-index-devfull");
    assert!(build(&out, &["--quiet"]).status.success());
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["search", "--index", s(&out), "compost"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: cannot write to stdout: No space left on device (os error 28)\n"
    );
}

/// Issue 11, item 5: a bad `--out` is reported before any input is read or embedded (no
/// "files → documents" progress line), and a folder the run created is not left behind.
#[test]
fn a_bad_out_is_reported_before_the_work() {
    let dir = scratch("site-index-bad-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = build(&file, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: --out {}: exists and is not a directory\n",
            file.display()
        )
    );
    // A folder that cannot be created (a path through a file).
    let below = file.join("sub");
    let o = build(&below, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "error: --out {}: cannot create the folder: ",
            below.display()
        )) && err.lines().count() == 1,
        "{err}"
    );
    // A run that fails after creating --out (no text in the inputs) removes the empty folder.
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    let out = dir.join("new-out");
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&empty)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.exists(), "the created --out folder is removed again");
    // …and so are the folders created above it, but not one that existed.
    let out = dir.join("new-a/b/c");
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&empty)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!dir.join("new-a").exists(), "new-a/b/c removed up to new-a");
    assert!(dir.exists());
}

/// `DIR/site/` holding one page, `good.md` ("# Compost" and one sentence).
fn compost_site(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("good.md"),
        "# Compost\n\nGarden compost needs air and water.\n",
    )
    .unwrap();
    site
}

/// Issue 11, item 6: an unreadable file is skipped like an unreadable folder entry: warned
/// about by name, the rest is indexed, and the exit code (4) says inputs were skipped.
#[cfg(target_os = "linux")]
#[test]
fn unreadable_files_are_skipped_with_a_warning_and_exit_4() {
    let dir = scratch("site-index-unreadable");
    let site = compost_site(&dir);
    // Reading /proc/self/mem at offset 0 fails with EIO, for root too (chmod 000 would not).
    std::os::unix::fs::symlink("/proc/self/mem", site.join("bad.txt")).unwrap();
    std::os::unix::fs::symlink(dir.join("missing"), site.join("dangling.md")).unwrap();
    let out = dir.join("out");
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&site)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!(
            "warning: skipping {}: cannot read: ",
            site.join("bad.txt").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "warning: skipping {}",
            site.join("dangling.md").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("warning: 2 inputs skipped (named above); exit code 4"),
        "{err}"
    );
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["skipped"], 2);
    assert_eq!(
        ids(&search_json(&out, &[], "compost")),
        ["good.md#compost:1"]
    );
    // The same file named on the command line: skipped too (was: the whole run aborted).
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        s(&site.join("good.md")),
        "/proc/self/mem",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
}

/// Issue 11, item 4: a closed stderr (`… 2>&1 | grep -q warning`) does not crash the indexer:
/// the index is written and the exit code is the normal one.
#[cfg(unix)]
#[test]
fn a_closed_stderr_is_not_a_crash() {
    use std::process::Stdio;
    let dir = scratch("site-index-closed-stderr");
    let site = compost_site(&dir);
    std::fs::write(site.join("blob.txt"), b"\0\0binary").unwrap(); // → a warning
    let out = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["index", "--model", s(&model()), "--out", s(&out), s(&site)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take()); // the reader is gone before anything is written
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4)); // the binary file was skipped
    assert!(out.join("index.bin").exists() && out.join("index.json").exists());
    // The error path too: a failing search with a closed stderr exits 1, not 101.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["search", "--index", s(&dir.join("nope")), "x"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

/// Issue 11, item 7: the model is recorded relative to the index folder, so moving the project
/// (index and model together) keeps `search` working without `--model`.
#[test]
fn a_moved_index_finds_its_model() {
    let dir = scratch("site-index-moved");
    let a = dir.join("a");
    std::fs::create_dir_all(a.join("models")).unwrap();
    std::fs::copy(model(), a.join("models/m.bin")).unwrap();
    let out = a.join("site/index");
    let site = root().join("tests/fixtures/site");
    let o = run(&[
        "index",
        "--model",
        s(&a.join("models/m.bin")),
        "--out",
        s(&out),
        "--quiet",
        s(&site),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["model"], "../../models/m.bin");
    let b = dir.join("b");
    std::fs::rename(&a, &b).unwrap();
    let moved = b.join("site/index");
    let got = search_json(&moved, &["-k", "1"], "compost");
    assert_eq!(got["results"].as_array().unwrap().len(), 1);
}

/// Issue 11, item 8: `index.bin` and `index.json` are one unit. A run killed between the two
/// renames (the debug-build kill point) leaves the new index.json, the old index.bin and the
/// new index.bin.tmp; `search` completes the write and answers from the new index.
#[test]
fn a_kill_between_the_two_renames_is_completed_by_search() {
    let out = scratch("site-index-kill");
    assert!(build(&out, &["--quiet"]).status.success());
    let old_bin = std::fs::read(out.join("index.bin")).unwrap();
    assert_eq!(search_json(&out, &[], "compost")["dims"], 384);
    // Rebuild at 128 dims and die between the renames.
    let site = root().join("tests/fixtures/site");
    let o = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args([
            "index",
            "--model",
            s(&model()),
            "--out",
            s(&out),
            "--dims",
            "128",
            "--quiet",
            s(&site),
        ])
        .env("LIGHTEMBED_TEST_KILL_BETWEEN_RENAMES", "1")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run was killed");
    assert_eq!(
        std::fs::read(out.join("index.bin")).unwrap(),
        old_bin,
        "old index.bin still there"
    );
    assert!(out.join("index.bin.tmp").exists());
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["dims"], 128, "the new index.json is in place");
    // search: rolls forward, with a warning, and answers at 128 dims.
    let o = run(&["search", "--index", s(&out), "--json", "compost"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("completed an interrupted index write"),
        "{}",
        stderr(&o)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dims"], 128);
    assert!(!out.join("index.bin.tmp").exists());
    let new_bin = std::fs::read(out.join("index.bin")).unwrap();
    let hex: String = Sha256::digest(&new_bin)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(side["index_sha256"], hex.as_str());
    // A mixed pair with no index.bin.tmp to finish: index.bin is trusted alone, with a warning,
    // and its model is still found (by the SHA-256 in index.bin's manifest).
    std::fs::write(out.join("index.bin"), &old_bin).unwrap();
    let o = run(&["search", "--index", s(&out), "--json", "compost"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not describe"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dims"], 384);
}

/// Issue 12: `--exclude GLOB` (repeatable) and the default rules — a `_sources/` folder and a
/// `NAME.txt` beside `NAME.html` (raw sources of a page) are not indexed unless
/// `--no-default-excludes`.
#[test]
fn excludes_and_default_source_rules() {
    let dir = scratch("site-index-excludes");
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("_sources")).unwrap();
    std::fs::create_dir_all(site.join("deep/er")).unwrap();
    std::fs::write(
        site.join("page.html"),
        "<h1 id=\"p\">Page</h1><p>Compost needs air.</p>",
    )
    .unwrap();
    std::fs::write(site.join("page.txt"), "Page\n====\n\nCompost needs air.").unwrap();
    std::fs::write(
        site.join("_sources/page.rst.txt"),
        "Page\n====\n\nCompost needs air, raw.",
    )
    .unwrap();
    std::fs::write(site.join("notes.txt"), "Loose notes about mulch.").unwrap();
    std::fs::write(
        site.join("print.html"),
        "<p>Everything again, about mulch and compost.</p>",
    )
    .unwrap();
    std::fs::write(site.join("deep/er/print.html"), "<p>Deep print page.</p>").unwrap();
    let out = dir.join("out");
    let m = model();
    let files = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["index", "--model", s(&m), "--out", s(&out), "-q"];
        args.extend_from_slice(extra);
        args.push(s(&site));
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut urls: Vec<String> = search_json(&out, &["-k", "50"], "compost mulch")["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["url"]
                    .as_str()
                    .unwrap()
                    .split('#')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        urls.sort();
        urls.dedup();
        urls
    };
    assert_eq!(
        files(&["--exclude", "print.html"]),
        ["deep/er/print.html", "notes.txt", "page.html"],
        "`*`-free glob matches the top-level file only"
    );
    assert_eq!(
        files(&["--exclude", "**/print.html", "--exclude", "notes.*"]),
        ["page.html"]
    );
    assert_eq!(
        files(&["--no-default-excludes", "--exclude", "**/print.html"]),
        [
            "_sources/page.rst.txt",
            "notes.txt",
            "page.html",
            "page.txt"
        ]
    );
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["excluded"], 2);
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        "--exclude",
        "[",
        s(&site),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: --exclude \"[\": not a valid glob"),
        "{}",
        stderr(&o)
    );
}

/// Issue 12, item 5: batch search — one `{"id", "hits"}` line per `{"id", "query"}` line, in
/// input order, the same hits as a single search; a bad line is named after the good ones.
#[test]
fn batch_search_answers_each_line_in_order() {
    use std::io::Write;
    use std::process::Stdio;
    let out = scratch("site-index-batch");
    assert!(build(&out, &["--quiet"]).status.success());
    let single = search_json(&out, &["-k", "3"], "compost");
    let input = "\u{feff}{\"id\":\"q1\",\"query\":\"compost\"}\n\n{\"id\":18446744073709551616,\"query\":\"garden tools\"}\n{\"id\":3}\n{\"id\":4,\"query\":\"x\"}\n";
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["search", "--index", s(&out), "-k", "3", "--jsonl", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    // A bad line is reported and the batch goes on (issue 29 #18): every good line is answered.
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(
        stderr(&o),
        "warning: skipping -: line 4: expected a JSON object with a string \"query\" field\n\
         warning: 1 line skipped (named above); exit code 4\n"
    );
    let stdout = String::from_utf8(o.stdout).unwrap();
    // The id is the first field, as `embed` and `tokenize` write it.
    assert!(stdout.starts_with("{\"id\":\"q1\",\"hits\":["), "{stdout}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["id"], "q1");
    assert_eq!(lines[2]["id"], 4);
    // A number id comes back as written (serde_json alone would round this one to a float).
    assert!(
        stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("{\"id\":18446744073709551616,\"hits\":["),
        "{stdout}"
    );
    let hit_ids: Vec<&str> = lines[0]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(hit_ids, ids(&single));
    let h = &lines[0]["hits"][0];
    assert!(h["url"].is_string() && h["title"].is_string() && h["score"].is_number());
    // QUERY and --jsonl are exclusive; one of them is required.
    assert_eq!(run(&["search", "--index", s(&out)]).status.code(), Some(2));
}

/// Issue 12: `--mode hybrid|vector|keyword`, hybrid the default; the keyword side ranks by BM25
/// (stemmed: "pruning" finds "prune"); JSON results carry highlight ranges into the snippet
/// text; bad fusion flags are usage errors with a clear message.
#[test]
fn search_modes_fusion_flags_and_highlights() {
    let out = scratch("site-index-modes");
    assert!(build(&out, &["--quiet"]).status.success());
    let v = search_json(&out, &["-k", "3"], "sharpen pruning shears");
    assert_eq!(v["mode"], "hybrid");
    assert_eq!(ids(&v)[0], "tools/shears");
    let kw = search_json(
        &out,
        &["-k", "3", "--mode", "keyword"],
        "sharpen pruning shears",
    );
    assert_eq!(kw["mode"], "keyword");
    assert_eq!(ids(&kw)[0], "tools/shears");
    // Every keyword hit contains a query term; highlights are those words in the snippet.
    for r in kw["results"].as_array().unwrap() {
        let snippet = r["snippet"].as_str().unwrap();
        let marks: Vec<&str> = r["highlights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| &snippet[h[0].as_u64().unwrap() as usize..h[1].as_u64().unwrap() as usize])
            .collect();
        assert!(!marks.is_empty(), "{r}");
        for m in marks {
            let m = m.to_lowercase();
            assert!(
                m.starts_with("sharpen") || m.starts_with("prun") || m.starts_with("shear"),
                "{m}"
            );
        }
    }
    // A word in no passage: keyword mode finds nothing, hybrid still answers by meaning.
    let none = search_json(&out, &["--mode", "keyword"], "xylophone");
    assert_eq!(none["results"].as_array().unwrap().len(), 0);
    let hy = search_json(&out, &["-k", "1"], "xylophone tomato watering");
    assert_eq!(ids(&hy)[0], "index.html#watering:1");
    // RRF scores: at most 2/(k+1) without page evidence, (1 + page weight) times that with it.
    let rrf = search_json(
        &out,
        &["-k", "1", "--fusion", "rrf", "--page-weight", "0"],
        "compost heap",
    );
    assert!(rrf["results"][0]["score"].as_f64().unwrap() <= 2.0 / 61.0 + 1e-6);
    let rrf = search_json(&out, &["-k", "1", "--fusion", "rrf"], "compost heap");
    assert!(rrf["results"][0]["score"].as_f64().unwrap() <= 1.4 * 2.0 / 61.0 + 1e-6);
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "--mode",
        "keyword",
        "--vector-weight",
        "0.3",
        "compost",
    ]);
    assert!(o.status.success());
    assert_eq!(
        stderr(&o),
        "warning: --fusion and --vector-weight only apply to --mode hybrid; ignored in keyword mode\n"
    );
    let o = run(&[
        "search",
        "--index",
        s(&out),
        "--fusion",
        "rrf",
        "--vector-weight",
        "0.3",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: --vector-weight applies to --fusion convex, not rrf\n"
    );
    for bad in [
        vec!["--mode", "both"],
        vec!["--vector-weight", "1.5"],
        vec!["--vector-weight", "-0.5"],
    ] {
        let mut a = vec!["search", "--index", s(&out)];
        a.extend(bad.iter().copied());
        a.push("x");
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    let o = run(&["search", "--index", s(&out), "--vector-weight", "1.5", "x"]);
    assert!(stderr(&o).contains("1.5 is outside 0–1"), "{}", stderr(&o));
}

/// Issue 12 known failure: 310 identical boilerplate JSONL records plus 4 real ones — a query for
/// the real ones returned only boilerplate (the HNSW graph was trapped among the copies). The
/// index is larger than the search beam, so this goes through the graph, not an exact scan.
#[test]
fn real_records_are_found_among_310_identical_boilerplate_records() {
    let dir = scratch("boilerplate-jsonl");
    let mut lines = String::new();
    for i in 0..310 {
        lines.push_str(&format!(
            "{{\"id\":\"b{i}\",\"text\":\"Accept cookies to continue using this site.\"}}\n"
        ));
    }
    for (id, text) in [
        (
            "tomato",
            "Water tomato plants deeply twice a week in dry summers.",
        ),
        (
            "compost",
            "Turn the compost heap every few weeks so it breaks down.",
        ),
        (
            "shears",
            "Sharpen pruning shears with a fine file before spring.",
        ),
        ("soil", "Test the soil pH before planting blueberries."),
    ] {
        lines.push_str(&format!("{{\"id\":\"{id}\",\"text\":\"{text}\"}}\n"));
    }
    let src = dir.join("site.jsonl");
    std::fs::write(&src, lines).unwrap();
    let out = dir.join("index");
    let o = run(&[
        "index",
        "--quiet",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        s(&src),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for mode in ["vector", "hybrid"] {
        let v = search_json(
            &out,
            &["-k", "1", "--mode", mode],
            "watering tomatoes in summer",
        );
        assert_eq!(ids(&v), ["tomato"], "{mode}: {v}");
        let v = search_json(
            &out,
            &["-k", "4", "--mode", mode],
            "gardening tasks in the garden",
        );
        let mut got = ids(&v);
        got.sort();
        assert_eq!(got, ["compost", "shears", "soil", "tomato"], "{mode}: {v}");
    }
}

/// `--root-selector`: a bad selector is one clear error before any work; a selector that matches
/// nothing reads pages whole; one that matches a paragraph reads only what it matches.
#[test]
fn root_selector_errors_and_fallback() {
    let out = scratch("site-index-root");
    let o = build(&out, &["--quiet", "--root-selector", "main["]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: --root-selector: invalid CSS selector \"main[\": "),
        "{}",
        stderr(&o)
    );
    assert!(
        build(&out, &["--quiet", "--root-selector", "#nothing-here"])
            .status
            .success()
    );
    let all = search_json(
        &out,
        &["-k", "50", "--mode", "keyword", "--all-passages"],
        "tomatoes",
    );
    assert!(
        ids(&all)
            .iter()
            .any(|i| i.starts_with("index.html#watering")),
        "{all}"
    );
    // Only the first paragraph of an HTML page (no headings: the page URL itself); Markdown and
    // JSONL inputs are read as before.
    assert!(build(
        &out,
        &["--quiet", "--root-selector", "body > p:first-of-type"]
    )
    .status
    .success());
    let v = search_json(
        &out,
        &["-k", "50", "--mode", "keyword", "--all-passages"],
        "garden vegetable tomatoes",
    );
    let got = ids(&v);
    assert!(got.contains(&"index.html:1".to_string()), "{v}");
    assert!(!got.iter().any(|i| i.starts_with("index.html#")), "{v}");
}

/// Issue 16: a Turkish folder with the cased Turkish model. `--keyword-stemming auto` (the
/// default) leaves the English stemmer off for `lightembed-tr-0l` and on for the English model
/// (recorded in index.json); questions in Turkish find their page by meaning, and keyword search
/// folds `İ` like any capital.
#[test]
fn turkish_folder_with_the_turkish_model() {
    let tr_model = root().join("public/models/lightembed-tr-static.bin");
    let site = root().join("tests/fixtures/site-tr");
    let out = scratch("site-tr-index");
    let o = run(&[
        "index",
        "--quiet",
        "--model",
        s(&tr_model),
        "--out",
        s(&out),
        s(&site),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(sidecar["model_id"], "lightembed-tr-0l");
    assert_eq!(sidecar["keyword_stemming"], "none");
    assert_eq!(sidecar["count"], 3);
    let first = |mode: &str, q: &str| {
        let v = search_json(&out, &["-k", "3", "--mode", mode], q);
        ids(&v).first().cloned().unwrap_or_default()
    };
    assert!(first("vector", "gölgeler neden oluşur").starts_with("isik.md#"));
    assert!(first("vector", "yazıcıdan çıktı almak").starts_with("yazdirmak.md#"));
    assert!(first("vector", "belgemi kaydetmek istiyorum").starts_with("kaydetmek.md#"));
    assert!(first("keyword", "İSTANBUL").starts_with("isik.md#"));

    let en = scratch("site-tr-index-en");
    assert!(build(&en, &["--quiet"]).status.success());
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(en.join("index.json")).unwrap()).unwrap();
    assert_eq!(sidecar["keyword_stemming"], "english");
}

/// Issue 34, spec §8: indexes built with older majors of a static model (committed fixtures,
/// `scripts/make_index_old.sh LANG VERSION COMMIT`: each file from git history over a fixture
/// site) are refused by the shipped model of that language, whose major version moved past them
/// (new vectors), with the spec's message naming both versions; nothing is printed on stdout.
/// English: v4.0.0 over `tests/fixtures/site`; Turkish: v1.0.0, v2.0.0 and v3.0.0 over `site-tr`.
#[test]
fn indexes_built_with_older_majors_are_refused_by_the_shipped_model() {
    for (lang, olds, query) in [
        ("en", &[4u8][..], "how do I install the tool"),
        ("tr", &[1u8, 2, 3][..], "yazıcıdan çıktı almak"),
    ] {
        let model = root().join(format!("public/models/lightembed-{lang}-static.bin"));
        let b = std::fs::read(&model).unwrap();
        let (major, minor) = (b[44], b[45]);
        for &old in olds {
            let fixture = format!("index-{lang}-v{old}");
            let index = root().join("tests/fixtures").join(&fixture);
            let sidecar: Value =
                serde_json::from_slice(&std::fs::read(index.join("index.json")).unwrap()).unwrap();
            assert_eq!(sidecar["model_id"], format!("lightembed-{lang}-0l"));
            assert_eq!(sidecar["model_version"], format!("{old}.0.0"));
            assert!(
                major > old,
                "the shipped {lang} model is v{major}.{minor}, not a newer major than {fixture}'s"
            );
            let o = run(&["search", "--index", s(&index), "--model", s(&model), query]);
            assert_eq!(o.status.code(), Some(1), "{fixture}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{fixture}");
            assert_eq!(
                stderr(&o),
                format!(
                    "error: Index was built with lightembed-{lang}-0l v{old}.0 but the loaded model is v{major}.{minor}. Re-run `lightembed index`.\n"
                ),
                "{fixture}"
            );
        }
    }
}

/// Text inputs as adversarial files bring them: one bad byte in a JSON Lines file is that line's
/// error (the file was decoded as windows-1252 whole, garbling every good line); a BOM and CRLF
/// are fine; a page with a NUL byte is skipped *and counted* (exit 4, `skipped` in index.json); a
/// title's terminal escape sequence is printed escaped, not sent to the terminal.
#[test]
fn bad_bytes_in_inputs_are_named_counted_and_never_garble_good_text() {
    let dir = scratch("site-index-bad-bytes");
    let jsonl = dir.join("moj.jsonl");
    std::fs::write(
        &jsonl,
        b"{\"id\":\"a\",\"title\":\"Caf\xc3\xa9\",\"text\":\"Cr\xc3\xa8me br\xc3\xbbl\xc3\xa9e\"}\n{\"id\":\"b\",\"text\":\"stray \xff byte\"}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&jsonl)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: line 2: not UTF-8 (byte 25 of the line); JSON Lines must be UTF-8\n",
            jsonl.display()
        )
    );
    assert!(!out.join("index.bin").exists());

    // A BOM and CRLF line ends: read as the UTF-8 they are.
    std::fs::write(
        &jsonl,
        "\u{feff}{\"id\":\"a\",\"title\":\"Café\",\"text\":\"Crème brûlée\"}\r\n{\"id\":\"e\",\"title\":\"Evil \\u001b]0;pwned\\u0007\\u001b[31mRED\",\"text\":\"crème caramel\"}\r\n",
    )
    .unwrap();
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&jsonl)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("windows-1252"), "{}", stderr(&o));
    let v = search_json(&out, &["-k", "2"], "crème brûlée");
    let titles: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Café"), "{titles:?}");
    let o = run(&["search", "--index", s(&out), "-k", "2", "crème"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = String::from_utf8(o.stdout).unwrap();
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(
        shown.contains("Evil \\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED"),
        "{shown}"
    );

    // A page with one NUL byte: skipped with its reason, counted, exit 4; the other page indexed.
    let site = compost_site(&dir);
    std::fs::write(
        site.join("nul.html"),
        b"<html><body><h1>Spades</h1><p>Useful text.\x00</p></body></html>",
    )
    .unwrap();
    let o = run(&["index", "--model", s(&model()), "--out", s(&out), s(&site)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!(
            "warning: skipping {}: binary file (a NUL byte in its first 8 KiB)",
            site.join("nul.html").display()
        )),
        "{err}"
    );
    let side: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(side["skipped"], 1);
    assert_eq!(
        ids(&search_json(&out, &[], "compost")),
        ["good.md#compost:1"]
    );
}

/// The hybrid note "No passage contains the words of the query" is decided by the keyword side:
/// a word only in the page title or a heading is a match (issue 29 #9), and so is a word past
/// the stored snippet (`--snippet-chars`); a query matching nothing still gets the note.
#[test]
fn the_meaning_alone_note_follows_the_keyword_side() {
    let dir = scratch("meaning-alone-keywords");
    let src = dir.join("site");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("z.html"),
        "<title>Zanzibar travel</title><h2 id=\"spice\">Spice tours</h2>\
         <p>Cloves and nutmeg grow on the island farms near the old town, where guides show how they are dried.</p>",
    )
    .unwrap();
    let out = dir.join("ix");
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        "-q",
        "--snippet-chars",
        "20",
        s(&src),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    const NOTE: &str = "No passage contains the words of the query";
    for q in ["zanzibar", "spice", "guides dried"] {
        let o = run(&["search", "--index", s(&out), q]);
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(!text.contains(NOTE), "{q}: {text}");
    }
    let o = run(&["search", "--index", s(&out), "xyzzy"]);
    assert!(String::from_utf8(o.stdout).unwrap().contains(NOTE));
}

/// The query in the header line is printed as text: a combining accent or a Thai tone mark is
/// not escaped (issue 29 #14); control characters still are.
#[test]
fn the_query_is_printed_as_text() {
    let out = scratch("site-index-query-text");
    assert!(build(&out, &["--quiet"]).status.success());
    for q in ["e\u{301}clair", "\u{0e01}\u{0e48}\u{0e32}"] {
        let o = run(&["search", "--index", s(&out), q]);
        let first = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string();
        assert!(first.contains(&format!("\u{201c}{q}\u{201d}")), "{first}");
        assert!(!first.contains("\\u{"), "{first}");
    }
    let o = run(&["search", "--index", s(&out), "a\u{1b}[31mb"]);
    let first = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(first.contains("a\\u{1b}[31mb"), "{first}");
}

/// An index.bin replaced by another model's index (its old index.json beside it): `search`
/// says the recorded model is not the index's, not that it "is not found" (issue 29 #11).
#[test]
fn a_replaced_index_bin_names_the_model_mismatch() {
    let dir = scratch("replaced-index-bin");
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert!(build(&a, &["--quiet"]).status.success());
    let two = root().join("public/models/lightembed-en-2l.bin");
    let site = root().join("tests/fixtures/site");
    let o = run(&["index", "--model", s(&two), "--out", s(&b), "-q", s(&site)]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(b.join("index.bin"), a.join("index.bin")).unwrap();
    let o = run(&["search", "--index", s(&a), "compost"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("is not the model") && err.contains("index.json describes another index.bin"),
        "{err}"
    );
    assert!(!err.contains("is not found"), "{err}");
}

/// Two folders given together keep their pages apart (issue 29 #7): each folder's URLs start
/// with its name, so both `index.html` pages are indexed and found; two inputs named alike would
/// still collide, and that is an error naming both files.
#[test]
fn several_folders_keep_their_urls_apart() {
    let dir = scratch("two-folders");
    for (name, word) in [("docs", "compass"), ("blog", "lantern")] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("index.html"),
            format!(
                "<title>{name}</title><p>The {word} is described on this page in some detail.</p>"
            ),
        )
        .unwrap();
    }
    let out = dir.join("ix");
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&out),
        "-q",
        s(&dir.join("docs")),
        s(&dir.join("blog")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (q, url) in [
        ("compass", "docs/index.html"),
        ("lantern", "blog/index.html"),
    ] {
        let v = search_json(&out, &["-k", "1", "--mode", "keyword"], q);
        assert_eq!(v["results"][0]["url"], url, "{v}");
    }
    // Two inputs with the same name: one URL for two files is refused.
    std::fs::create_dir_all(dir.join("other/docs")).unwrap();
    std::fs::write(
        dir.join("other/docs/index.html"),
        "<title>x</title><p>Other.</p>",
    )
    .unwrap();
    let o = run(&[
        "index",
        "--model",
        s(&model()),
        "--out",
        s(&dir.join("ix2")),
        s(&dir.join("docs")),
        s(&dir.join("other/docs")),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {} and {} would both be indexed at the URL docs/index.html; give their common \
             parent folder instead, or index them one at a time\n",
            dir.join("docs/index.html").display(),
            dir.join("other/docs/index.html").display()
        )
    );
}
