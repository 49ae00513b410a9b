//! `lightembed site`: the bundle (files with content hashes in their names, a manifest that
//! matches them, the widget's files), a re-run replacing the bundle as a whole, and clear errors.
//! Needs the widget's wasm (`js/build.sh` before building lightembed); scripts/test.sh builds it
//! first and sets LIGHTEMBED_REQUIRE_WIDGET=1 so that a build without it fails here instead of
//! taking the "not built" branch.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

mod common;
use common::{root, run, stderr};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A bundle's binary file, which `lightembed site` stores gzip-compressed by default: checked to
/// be gzip, decompressed.
fn read_gz(p: &Path) -> Vec<u8> {
    let bytes = std::fs::read(p).unwrap();
    assert!(
        lightembed_index::gzip::is_gzip(&bytes),
        "{} is not gzip-compressed",
        p.display()
    );
    lightembed_index::gzip::decompress_if_gzip(&bytes)
        .unwrap()
        .into_owned()
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn site_writes_a_hashed_bundle_and_replaces_it_whole() {
    let site = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-bundle");
    let _ = std::fs::remove_dir_all(&site);
    copy_dir(&root().join("tests/fixtures/site"), &site);
    let o = run(&["site", "--site", site.to_str().unwrap(), "--quiet"]);
    if !o.status.success() && std::env::var_os("LIGHTEMBED_REQUIRE_WIDGET").is_none() {
        // Built without js/pkg/widget: the one error that explains what to do.
        assert_eq!(
            stderr(&o),
            "error: this lightembed was built without the search widget's WebAssembly (js/pkg/widget): run js/build.sh, then rebuild lightembed\n"
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("<script type=\"module\" src=\"/lightembed/lightembed-ui.js\"></script>"),
        "{stdout}"
    );
    let bundle = site.join("lightembed");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    // Each hashed file exists and its name carries the first 16 hex digits of its SHA-256.
    for key in ["core", "model", "wasm"] {
        let name = manifest["files"][key].as_str().unwrap();
        let bytes = std::fs::read(bundle.join(name)).unwrap();
        let sha = sha_hex(&bytes);
        assert!(name.contains(&sha[..16]), "{name} vs {sha}");
        if key == "core" {
            assert_eq!(manifest["index"]["sha256"], sha.as_str());
            assert_eq!(manifest["index"]["bytes"], bytes.len());
        }
        if key == "model" {
            assert_eq!(manifest[key]["bytes"], bytes.len());
        }
    }
    // The index is a real one, in fragments: the core, every term shard and text chunk the
    // manifest counts (in the folder named by the core's build id), only the HTML pages.
    let core = read_gz(&bundle.join(manifest["files"]["core"].as_str().unwrap()));
    let mut index = lightembed_index::fragments::FragmentedIndex::from_core(&core).unwrap();
    let frags = manifest["files"]["fragments"].as_str().unwrap();
    assert_eq!(frags, format!("f/{}/", &index.build_id()[..16]));
    assert_eq!(manifest["index"]["shards"], index.shard_count());
    assert_eq!(manifest["index"]["chunks"], index.chunk_count());
    for n in 0..index.shard_count() {
        index
            .add_shard(&read_gz(&bundle.join(format!("{frags}t{n}.bin"))))
            .unwrap();
    }
    // Tail shards (postings past a term's first tier): none on a site this small.
    assert_eq!(manifest["index"]["tails"], index.tail_shard_count());
    assert_eq!(index.tail_shard_count(), 0);
    // Centroid cells (two levels of centroids): none on a site this small.
    assert_eq!(manifest["index"]["cells"], index.cell_count());
    assert_eq!(index.cell_count(), 0);
    assert_eq!(manifest["index"]["partitions"], index.partition_count());
    for n in 0..index.partition_count() {
        index
            .add_partition(&read_gz(&bundle.join(format!("{frags}v{n}.bin"))))
            .unwrap();
    }
    for n in 0..index.chunk_count() {
        index
            .add_chunk(&read_gz(&bundle.join(format!("{frags}c{n}.bin"))))
            .unwrap();
    }
    assert_eq!(manifest["index"]["passages"], index.len());
    // The defaults: the 128-d Matryoshka prefix of the shipped model.
    assert_eq!(
        (index.dims(), &manifest["index"]["dims"]),
        (128, &Value::from(128))
    );
    let urls: Vec<&str> = (0..index.len() as u32)
        .map(|p| index.section(p).unwrap().0)
        .collect();
    assert!(urls.iter().all(|u| !u.starts_with("lightembed/")));
    assert!(urls.iter().any(|u| u.starts_with("index.html#")));
    assert!(
        urls.iter()
            .all(|u| !u.ends_with(".md") && !u.contains(".md#")),
        "Markdown sources beside the pages are not indexed"
    );
    // `lightembed search` reads the bundle folder as it is (its site model by default).
    let o = run(&[
        "search",
        "--index",
        bundle.to_str().unwrap(),
        "--json",
        "-k",
        "3",
        "--mode",
        "keyword",
        "what the fixture pages say",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let found: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(found["dims"], 128);
    for f in [
        "lightembed-ui.js",
        "lightembed-ui.css",
        "lightembed-worker.js",
        "lightembed_wasm.js",
    ] {
        assert!(bundle.join(f).is_file(), "{f}");
    }
    // The widget's Unicode data (its wasm has none): the subset covers every character of the
    // site's text, the complete tables are complete.
    let tables = |key: &str| {
        let bytes = read_gz(&bundle.join(manifest["files"][key].as_str().unwrap()));
        lightembed::unicode::Tables::parse(&bytes).unwrap()
    };
    let (subset, all) = (tables("unicode"), tables("unicode_all"));
    assert!(!subset.is_complete() && all.is_complete());
    assert!(
        all.len() > 5000 && subset.len() < 200,
        "{} / {}",
        subset.len(),
        all.len()
    );
    for p in 0..index.len() as u32 {
        assert!(subset.covers(index.text(p).unwrap()));
    }
    // The default model is a site model pruned from the shipped static one: much smaller, 128
    // outputs, and the site's passages embed exactly as with the full model. Its SHA-256 in the
    // manifest is the model's own (the trailer, what `lightembed inspect` shows), which the widget
    // compares with `Model.sha256`.
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let shipped = std::fs::read(root().join("public/models/lightembed-en-static.bin")).unwrap();
    let full = lightembed::Model::from_bytes(&shipped).unwrap();
    let model_file = read_gz(&bundle.join(manifest["files"]["model"].as_str().unwrap()));
    assert!(
        model_file.len() * 2 < shipped.len(),
        "{} bytes",
        model_file.len()
    );
    let site_model = lightembed::Model::from_bytes(&model_file).unwrap();
    assert_eq!(site_model.header().output_dim, 128);
    assert_eq!(
        manifest["model"]["sha256"],
        hex(&model_file[model_file.len() - 32..]).as_str()
    );
    // Text of the site (each passage's own text) embeds exactly as with the full model.
    for p in 0..index.len() as u32 {
        let text = index.text(p).unwrap();
        let (a, b) = (
            full.embed(text, 128).unwrap(),
            site_model.embed(text, 128).unwrap(),
        );
        let diff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-6, "{text}: max |Δ| {diff}");
    }
    // --full-model ships the shipped file as it is.
    let o = run(&[
        "site",
        "--site",
        site.to_str().unwrap(),
        "--quiet",
        "--full-model",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let full_manifest: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    let shipped_copy = read_gz(&bundle.join(full_manifest["files"]["model"].as_str().unwrap()));
    assert!(
        shipped_copy == shipped,
        "--full-model ships the shipped model"
    );
    assert_eq!(
        full_manifest["model"]["sha256"],
        hex(&shipped[shipped.len() - 32..]).as_str()
    );

    // A re-run after a page changed: a new core name, the old files gone, no temporaries left.
    let old_index = manifest["files"]["core"].as_str().unwrap().to_string();
    let old_frags = manifest["files"]["fragments"].as_str().unwrap().to_string();
    std::fs::write(site.join("extra.html"), "<html><body><h1 id=\"new\">New page</h1><p>Brand new text about beekeeping.</p></body></html>").unwrap();
    let o = run(&["site", "--site", site.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    let new_index = manifest["files"]["core"].as_str().unwrap();
    assert_ne!(new_index, old_index);
    assert_ne!(manifest["files"]["fragments"].as_str().unwrap(), old_frags);
    assert!(!bundle.join(&old_index).exists());
    assert!(!bundle.join(&old_frags).exists());
    let leftovers: Vec<_> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".lightembed"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn site_errors_are_one_clear_line() {
    let built = std::env::var_os("LIGHTEMBED_REQUIRE_WIDGET").is_some();
    let check = |args: &[&str], want: &str| {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(
            e == want || (!built && e.starts_with("error: this lightembed was built without")),
            "{e}"
        );
    };
    check(
        &["site", "--site", "/nonexistent/site"],
        "error: --site /nonexistent/site: not a folder\n",
    );
    let md_only = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-md-only");
    let _ = std::fs::remove_dir_all(&md_only);
    std::fs::create_dir_all(&md_only).unwrap();
    std::fs::write(md_only.join("a.md"), "# A\n\nText.\n").unwrap();
    check(
        &["site", "--site", md_only.to_str().unwrap()],
        &format!(
            "error: --site {}: no .html or .htm pages in this folder (lightembed site indexes a built site's HTML pages)\n",
            md_only.display()
        ),
    );
}

/// `site` replaces `SITE/lightembed/` whole, so a folder of the site's own under that name is
/// refused, never deleted; temporaries an interrupted run left are removed by the next run; a page
/// whose name holds `:` gets a URL that stays a relative path (`javascript:x.html` would otherwise
/// be a `javascript:` link in the widget).
#[cfg(unix)]
#[test]
fn site_keeps_a_foreign_bundle_folder_and_clears_interrupted_runs() {
    let site = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-foreign");
    let _ = std::fs::remove_dir_all(&site);
    std::fs::create_dir_all(site.join("lightembed")).unwrap();
    let own = site.join("lightembed/index.html");
    std::fs::write(
        &own,
        "<html><body><h1>About</h1><p>My own page.</p></body></html>",
    )
    .unwrap();
    std::fs::write(
        site.join("javascript:alert(1).html"),
        "<html><head><title>Spades</title></head><body><h1>Spades</h1><p>Gardening spade text.</p></body></html>",
    )
    .unwrap();
    let o = run(&["site", "--site", site.to_str().unwrap(), "--quiet"]);
    let err = stderr(&o);
    if err.starts_with("error: this lightembed was built without")
        && std::env::var_os("LIGHTEMBED_REQUIRE_WIDGET").is_none()
    {
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        format!(
            "error: {} exists and is not a lightembed bundle (no manifest.json written by `lightembed site`); \
             lightembed site replaces that folder whole, so move it away or rename it first\n",
            site.join("lightembed").display()
        )
    );
    assert!(own.exists(), "the site's own page is kept");

    std::fs::remove_dir_all(site.join("lightembed")).unwrap();
    // Left by a run that was killed (no process has that pid).
    let stale = site.join(".lightembed-new-4294967294");
    std::fs::create_dir_all(stale.join("f")).unwrap();
    std::fs::write(stale.join("f/c0.bin"), b"partial").unwrap();
    let o = run(&["site", "--site", site.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "removed {}, left by an interrupted run",
            stale.display()
        )),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "search",
        "--index",
        site.join("lightembed").to_str().unwrap(),
        "--json",
        "-k",
        "1",
        "spade",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["results"][0]["url"].as_str().unwrap(),
        "javascript%3Aalert(1).html"
    );
}

/// `lightembed search --json` hits without the timing (`ms`).
fn hits(bundle: &Path, query: &str) -> Value {
    let o = run(&[
        "search",
        "--index",
        bundle.to_str().unwrap(),
        "--json",
        "-k",
        "5",
        query,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let found: Value = serde_json::from_slice(&o.stdout).unwrap();
    found["results"].clone()
}

/// The bundle's binary files are stored gzip-compressed by default (bundle version 3) and
/// `lightembed search` reads them, as it reads a `--no-gzip` bundle (raw files) and a version-2
/// bundle; a damaged gzip file and a bundle of an unknown version are refused, naming the file.
#[test]
fn search_reads_gzip_and_raw_bundles_and_names_a_damaged_file() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-gzip");
    let _ = std::fs::remove_dir_all(&dir);
    let (zsite, rsite) = (dir.join("gz"), dir.join("raw"));
    copy_dir(&root().join("tests/fixtures/site"), &zsite);
    copy_dir(&root().join("tests/fixtures/site"), &rsite);
    let o = run(&["site", "--site", zsite.to_str().unwrap(), "--quiet"]);
    if !o.status.success() && std::env::var_os("LIGHTEMBED_REQUIRE_WIDGET").is_none() {
        return; // built without js/pkg/widget (see the test above)
    }
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("; gzip-compressed)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&[
        "site",
        "--site",
        rsite.to_str().unwrap(),
        "--quiet",
        "--no-gzip",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (zb, rb) = (zsite.join("lightembed"), rsite.join("lightembed"));
    let manifest = |b: &Path| -> Value {
        serde_json::from_slice(&std::fs::read(b.join("manifest.json")).unwrap()).unwrap()
    };
    let (zm, rm) = (manifest(&zb), manifest(&rb));
    assert_eq!(
        (&zm["bundle_version"], &zm["compression"]),
        (&Value::from(3), &Value::from("gzip"))
    );
    assert_eq!(rm["compression"], "none");
    // Every .bin and the .wasm: gzip in one, raw in the other, the same bytes once decompressed.
    let mut binary = Vec::new();
    for e in walkdir::WalkDir::new(&zb) {
        let p = e.unwrap().into_path();
        let rel = p.strip_prefix(&zb).unwrap().to_string_lossy().into_owned();
        if rel.ends_with(".bin") || rel.ends_with(".wasm") {
            binary.push(rel);
        }
    }
    // Model, core, wasm, the two Unicode tables, the term shards, text chunks, typo shards and
    // vector partitions, and a static model's query head and row shards.
    let query_files = zm["query"]["shards"].as_u64().map_or(0, |n| 1 + n as usize);
    assert_eq!(
        binary.len(),
        2 + 1
            + 2
            + zm["index"]["shards"].as_u64().unwrap() as usize
            + zm["index"]["chunks"].as_u64().unwrap() as usize
            + zm["index"]["typos"].as_u64().unwrap_or(0) as usize
            + zm["index"]["partitions"].as_u64().unwrap_or(0) as usize
            + query_files
    );
    let raw_core = std::fs::read(rb.join(rm["files"]["core"].as_str().unwrap())).unwrap();
    assert!(!lightembed_index::gzip::is_gzip(&raw_core));
    assert_eq!(
        read_gz(&zb.join(zm["files"]["core"].as_str().unwrap())),
        raw_core
    );
    // The ratio leaves out a static model's row shards (quantised rows: they barely compress,
    // and would outweigh the rest of this tiny site).
    let compressible = || binary.iter().filter(|rel| !rel.starts_with("q/"));
    let raw_bytes: usize = compressible()
        .map(|rel| {
            let z = read_gz(&zb.join(rel));
            // The fragments' folder is named by the build id, the same in both bundles.
            if rel.starts_with("f/") {
                assert_eq!(z, std::fs::read(rb.join(rel)).unwrap(), "{rel}");
            }
            z.len()
        })
        .sum();
    let stored: u64 = compressible()
        .map(|rel| std::fs::metadata(zb.join(rel)).unwrap().len())
        .sum();
    assert!(
        (stored as usize) < raw_bytes * 3 / 4,
        "{stored} bytes stored for {raw_bytes}"
    );

    // The same results from both; the raw bundle also as version 2 (what earlier releases wrote).
    let q = "what the fixture pages say";
    let want = hits(&zb, q);
    assert!(want.as_array().is_some_and(|a| !a.is_empty()), "{want}");
    assert_eq!(hits(&rb, q), want);
    let mut v2 = rm.clone();
    v2["bundle_version"] = 2.into();
    v2.as_object_mut().unwrap().remove("compression");
    std::fs::write(rb.join("manifest.json"), v2.to_string()).unwrap();
    assert_eq!(hits(&rb, q), want);

    // A version this lightembed does not know: one line saying what to do.
    let mut v9 = zm.clone();
    v9["bundle_version"] = 9.into();
    std::fs::write(rb.join("manifest.json"), v9.to_string()).unwrap();
    let o = run(&["search", "--index", rb.to_str().unwrap(), q]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: bundle version 9 is newer than this lightembed reads (versions 2 to 3): update lightembed\n",
            rb.join("manifest.json").display()
        )
    );

    // A damaged (truncated) gzip term shard: named, with what to do.
    let shard = zb.join(format!(
        "{}t0.bin",
        zm["files"]["fragments"].as_str().unwrap()
    ));
    let bytes = std::fs::read(&shard).unwrap();
    std::fs::write(&shard, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["search", "--index", zb.to_str().unwrap(), q]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: damaged gzip: the data ends early (truncated); re-run `lightembed site`\n",
            shard.display()
        )
    );
    // A flipped byte in the model's compressed data: named too, never a panic.
    std::fs::write(&shard, &bytes).unwrap();
    let model = zb.join(zm["files"]["model"].as_str().unwrap());
    let mut m = std::fs::read(&model).unwrap();
    let n = m.len();
    m[n - 6] ^= 0x55;
    std::fs::write(&model, &m).unwrap();
    let o = run(&["search", "--index", zb.to_str().unwrap(), q]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {}: damaged gzip: ", model.display()))
            && err.ends_with("; re-run `lightembed site`\n"),
        "{err}"
    );
}

/// The bundle's wasm is the widget's own build: search only (`SiteIndex`, `QueryEncoder`; no
/// `Model`, no `SearchIndex`) for a static model, whose queries the widget embeds from the
/// bundle's query rows; with `Model` for a transformer, whose widget loads the model.
#[test]
fn site_ships_the_search_only_wasm_unless_the_model_is_a_transformer() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-widget-wasm");
    let _ = std::fs::remove_dir_all(&dir);
    let classes = |model: Option<&str>, name: &str| -> Option<Vec<String>> {
        let site = dir.join(name);
        copy_dir(&root().join("tests/fixtures/site"), &site);
        let mut args = vec!["site", "--site", site.to_str().unwrap(), "--quiet"];
        let model = model.map(|m| root().join(m));
        if let Some(m) = &model {
            args.extend(["--model", m.to_str().unwrap()]);
        }
        let o = run(&args);
        if !o.status.success() && std::env::var_os("LIGHTEMBED_REQUIRE_WIDGET").is_none() {
            return None; // built without js/pkg/widget (see the first test)
        }
        assert!(o.status.success(), "{}", stderr(&o));
        let glue = std::fs::read_to_string(site.join("lightembed/lightembed_wasm.js")).unwrap();
        Some(
            glue.split("export class ")
                .skip(1)
                .map(|s| {
                    s.split(|c: char| !c.is_alphanumeric())
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect(),
        )
    };
    let Some(static_model) = classes(None, "static") else {
        return;
    };
    assert_eq!(static_model, ["QueryEncoder", "SiteIndex"]);
    let transformer = classes(Some("tests/fixtures/models/tern_2l_cased.bin"), "2l").unwrap();
    assert_eq!(transformer, ["Model", "QueryEncoder", "SiteIndex"]);
}
