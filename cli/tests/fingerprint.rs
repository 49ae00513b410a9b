//! `lightembed fingerprint` (spec §7, decision 9) against `tests/fixtures/fingerprint/`:
//! detection verdicts and exit codes, agreement with the Python reference's `expected.json`, the
//! `--suspect-vectors` path (full vectors and a truncated prefix), usage errors, and the engine
//! staying license-agnostic (a fingerprinted model loads and embeds through the same API, with
//! every cosine and ranking unchanged at every valid dims).
//!
//! Speed: a fingerprinted model has exactly the same sections and sizes as the plain one (checked
//! below), so the forward pass does the same work; see docs/fingerprinting.md for the bench note.
//! No timed assertions here.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fingerprint")
}

fn path(name: &str) -> String {
    dir().join(name).to_str().unwrap().to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn detect_json(extra: &[&str]) -> (Option<i32>, Value) {
    let reference = path("plain.bin");
    let registry = path("registry.json");
    let mut args = vec![
        "fingerprint",
        "detect",
        "--reference",
        &reference,
        "--registry",
        &registry,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    let v = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{e}: stdout {text:?}, stderr {}", stderr(&o)));
    (o.status.code(), v)
}

fn model(name: &str) -> lightembed::Model {
    lightembed::Model::from_bytes(&std::fs::read(dir().join(name)).unwrap()).unwrap()
}

fn probes() -> Vec<String> {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/probes.txt"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The best, runner-up and identity distances of a `detect --json` result are within 1e-4 of
/// the reference's values in an `expected.json` case.
fn assert_distances_match(case: &Value, got: &Value, label: &str) {
    for (k, g) in [
        ("best_distance", &got["best"]["distance"]),
        ("runner_up_distance", &got["runner_up"]["distance"]),
        ("identity_distance", &got["identity_distance"]),
    ] {
        let (w, g) = (case[k].as_f64().unwrap(), g.as_f64().unwrap());
        assert!((w - g).abs() <= 1e-4, "{label} {k}: rust {g} vs python {w}");
    }
}

#[test]
fn detect_matches_the_python_reference_at_every_dims() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    let cases = expected["suspects"].as_array().unwrap();
    assert_eq!(cases.len(), 12);
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let dims = case["dims"].as_u64().unwrap().to_string();
        let suspect = path(file);
        let (code, got) = detect_json(&["--suspect", &suspect, "--dims", &dims]);
        let verdict = case["verdict"].as_str().unwrap();
        assert_eq!(got["verdict"], verdict, "{file}@{dims}: {got}");
        assert_eq!(
            code,
            Some(if verdict == "match" { 0 } else { 3 }),
            "{file}@{dims}"
        );
        assert_eq!(got["license_id"], case["license_id"], "{file}@{dims}");
        assert_eq!(
            got["best"]["license_id"], case["best_license_id"],
            "{file}@{dims}"
        );
        assert_distances_match(case, &got, &format!("{file}@{dims}"));
        assert_eq!(got["n_probes"], 334);
    }
}

/// One, two and three probes (`--probes FILE`): `Yᵀ·X` has rank ≤ n, where nalgebra's SVD gave
/// wrong singular values (identity distance 0.349 for the plain model against itself with one
/// probe). Verdicts exactly, distances within 1e-4 of the Python reference (LAPACK SVD).
#[test]
fn detect_with_one_two_three_probes_matches_the_python_reference() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    let cases = expected["few_probes"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    let tmp = std::env::temp_dir().join(format!("le-few-probes-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for case in cases {
        let n = case["n_probes"].as_u64().unwrap() as usize;
        let file = case["file"].as_str().unwrap();
        let probe_file = tmp.join(format!("probes{n}.txt"));
        std::fs::write(&probe_file, probes()[..n].join("\n") + "\n").unwrap();
        let suspect = path(file);
        let (_, got) = detect_json(&[
            "--suspect",
            &suspect,
            "--probes",
            probe_file.to_str().unwrap(),
        ]);
        assert_eq!(got["n_probes"], n as u64, "{file} n={n}");
        assert_eq!(got["verdict"], case["verdict"], "{file} n={n}: {got}");
        assert_eq!(
            got["best"]["license_id"], case["best_license_id"],
            "{file} n={n}"
        );
        assert_distances_match(case, &got, &format!("{file} n={n}"));
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn detect_reports_the_license_and_exit_codes() {
    let licensed = path("licensed_17.bin");
    let (code, v) = detect_json(&["--suspect", &licensed]);
    assert_eq!(code, Some(0));
    assert_eq!(v["license_id"], 17);
    assert!(v["best"]["distance"].as_f64().unwrap() < 1e-3, "{v}");
    assert!(v["margin"].as_f64().unwrap() > 1.0, "{v}");
    assert_eq!(
        v["blocks"],
        serde_json::json!([[0, 8], [8, 16], [16, 32], [32, 48]])
    );
    assert_eq!(v["suspect_header"]["license_id"], 17);
    assert_eq!(v["suspect_header"]["has_fingerprint"], true);

    let impostor = path("impostor.bin");
    let (code, v) = detect_json(&["--suspect", &impostor]);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(3), Some("no_match")),
        "{v}"
    );
    assert_eq!(v["license_id"], Value::Null);

    let plain = path("plain.bin");
    let (code, v) = detect_json(&["--suspect", &plain]);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(3), Some("unfingerprinted")),
        "{v}"
    );

    // Text output names the license.
    let reference = path("plain.bin");
    let registry = path("registry.json");
    let o = run(&[
        "fingerprint",
        "detect",
        "--suspect",
        &licensed,
        "--reference",
        &reference,
        "--registry",
        &registry,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("match: best license_id 17 at distance"));
}

fn write_vectors(name: &str, model: &lightembed::Model, dims: usize, noise: f32) -> PathBuf {
    let mut out = String::new();
    for (i, t) in probes().iter().enumerate() {
        let mut v = model.embed(t, dims).unwrap();
        // Deterministic small perturbation (a suspect seen through a lossy API).
        for (j, x) in v.iter_mut().enumerate() {
            *x += noise * (((i * 31 + j * 17) % 13) as f32 / 6.0 - 1.0);
        }
        out.push_str(&serde_json::json!({ "embedding": v }).to_string());
        out.push('\n');
    }
    let p = std::env::temp_dir().join(format!("lightembed-fp-{}-{name}.jsonl", std::process::id()));
    std::fs::write(&p, out).unwrap();
    p
}

#[test]
fn detect_from_suspect_vectors_full_and_prefix() {
    let licensed = model("licensed_17.bin");
    for (dims, noise, blocks) in [
        (48usize, 0.0f32, 4usize),
        (16, 0.0, 2),
        (48, 0.01, 4),
        (8, 0.0, 1),
    ] {
        let p = write_vectors(&format!("{dims}-{noise}"), &licensed, dims, noise);
        let file = p.to_str().unwrap().to_string();
        let (code, v) = detect_json(&["--suspect-vectors", &file]);
        std::fs::remove_file(&p).ok();
        assert_eq!(code, Some(0), "dims {dims} noise {noise}: {v}");
        assert_eq!(v["license_id"], 17);
        assert_eq!(v["blocks"].as_array().unwrap().len(), blocks);
        assert_eq!(v["suspect_header"], Value::Null);
    }
}

#[test]
fn detect_usage_and_input_errors() {
    let reference = path("plain.bin");
    let registry = path("registry.json");
    let licensed = path("licensed_17.bin");
    let base = [
        "fingerprint",
        "detect",
        "--reference",
        &reference,
        "--registry",
        &registry,
    ];
    // Neither or both suspect sources: usage (2).
    let o = run(&base);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let mut both = base.to_vec();
    both.extend(["--suspect", &licensed, "--suspect-vectors", &licensed]);
    assert_eq!(run(&both).status.code(), Some(2));

    // Too few vectors: error (1), one line naming the count.
    let short =
        std::env::temp_dir().join(format!("lightembed-fp-{}-short.jsonl", std::process::id()));
    std::fs::write(&short, "{\"embedding\":[1,0,0,0,0,0,0,0]}\n").unwrap();
    let mut args = base.to_vec();
    let s = short.to_str().unwrap().to_string();
    args.extend(["--suspect-vectors", &s]);
    let o = run(&args);
    std::fs::remove_file(&short).ok();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("1 vectors for 334 probes"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);

    // Invalid --dims, a registry that is not one, a model of another shape: errors (1).
    let mut args = base.to_vec();
    args.extend(["--suspect", &licensed, "--dims", "12"]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--dims"), "{}", stderr(&o));
    let other = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/models/static_fp32_uncased.bin");
    let other = other.to_str().unwrap();
    let mut args = base.to_vec();
    args.extend(["--suspect", other]);
    assert_eq!(run(&args).status.code(), Some(1));
    let o = run(&[
        "fingerprint",
        "detect",
        "--reference",
        &reference,
        "--registry",
        &reference,
        "--suspect",
        &licensed,
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn probes_and_rotation_subcommands() {
    let o = run(&["fingerprint", "probes"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/probes.txt"))
            .unwrap()
    );

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("rotations.json")).unwrap())
            .unwrap();
    for case in doc["cases"].as_array().unwrap() {
        let dims: Vec<String> = case["matryoshka_dims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.to_string())
            .collect();
        let (seed, n) = (
            case["seed"].as_str().unwrap(),
            case["output_dim"].to_string(),
        );
        let mut args = vec![
            "fingerprint",
            "rotation",
            "--seed",
            seed,
            "--output-dim",
            &n,
        ];
        let joined = dims.join(",");
        if !dims.is_empty() {
            args.extend(["--matryoshka-dims", &joined]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let got: Vec<Vec<f64>> = serde_json::from_slice(&o.stdout).unwrap();
        let want = case["rotation"].as_array().unwrap();
        for (gr, wr) in got.iter().zip(want) {
            for (g, w) in gr.iter().zip(wr.as_array().unwrap()) {
                assert!((g - w.as_f64().unwrap()).abs() <= 1e-12);
            }
        }
    }
}

fn cos(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

#[test]
fn engine_is_license_agnostic_and_similarity_is_preserved() {
    let plain = model("plain.bin");
    let fp = model("licensed_17.bin");
    // Same API, same shapes; only the header's provenance fields differ.
    assert!(!plain.header().flags.has_fingerprint() && fp.header().flags.has_fingerprint());
    assert_eq!((plain.header().license_id, fp.header().license_id), (0, 17));
    assert_eq!(plain.valid_dims(), fp.valid_dims());
    assert_eq!(plain.file_size(), fp.file_size());
    let sizes = |m: &lightembed::Model| {
        m.sections()
            .entries
            .iter()
            .map(|e| (e.section_type, e.length))
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&plain), sizes(&fp));

    let texts = probes();
    let texts: Vec<&str> = texts.iter().map(String::as_str).take(120).collect();
    for &dims in plain.valid_dims() {
        let a: Vec<Vec<f32>> = texts
            .iter()
            .map(|t| plain.embed(t, dims).unwrap())
            .collect();
        let b: Vec<Vec<f32>> = texts.iter().map(|t| fp.embed(t, dims).unwrap()).collect();
        // The raw coordinates differ (the rotation is really there)…
        assert!(a
            .iter()
            .zip(&b)
            .any(|(x, y)| x.iter().zip(y).any(|(p, q)| (p - q).abs() > 1e-2)));
        let mut worst = 0f64;
        for i in 0..texts.len() {
            assert!((cos(&b[i], &b[i]) - 1.0).abs() < 1e-5);
            let mut rank_a: Vec<(usize, f64)> = Vec::new();
            let mut rank_b: Vec<(usize, f64)> = Vec::new();
            for j in 0..texts.len() {
                let (ca, cb) = (cos(&a[i], &a[j]), cos(&b[i], &b[j]));
                worst = worst.max((ca - cb).abs());
                rank_a.push((j, ca));
                rank_b.push((j, cb));
            }
            // …but every cosine is the same within 1e-5, and so is the ranking (ties closer than
            // the tolerance may swap, so compare order only where scores are distinct).
            rank_a.sort_by(|x, y| y.1.total_cmp(&x.1));
            rank_b.sort_by(|x, y| y.1.total_cmp(&x.1));
            for (k, (ra, rb)) in rank_a.iter().zip(&rank_b).enumerate() {
                if ra.0 != rb.0 {
                    let gap = (rank_a[k].1 - rank_a.get(k + 1).map_or(f64::NEG_INFINITY, |r| r.1))
                        .abs()
                        .min(
                            (rank_a[k].1
                                - rank_a.get(k.wrapping_sub(1)).map_or(f64::INFINITY, |r| r.1))
                            .abs(),
                        );
                    assert!(
                        gap < 1e-5,
                        "dims {dims}, query {i}: rank {k} differs ({} vs {})",
                        ra.0,
                        rb.0
                    );
                }
            }
        }
        assert!(worst <= 1e-5, "dims {dims}: max |Δcos| {worst:e}");
    }
}
