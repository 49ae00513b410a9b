//! The `lightembed` CLI contract (other tools script against it): exit codes, one-line errors,
//! JSONL in/out, and agreement with the reference fixtures.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixtures in {dir}");
    v
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn verify_accepts_every_valid_fixture() {
    for f in fixtures("models") {
        let o = run(&["verify", f.to_str().unwrap()], "");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("ok: "));
    }
}

#[test]
fn verify_rejects_every_malformed_fixture_with_one_line() {
    for f in fixtures("malformed") {
        let o = run(&["verify", f.to_str().unwrap()], "");
        assert_eq!(o.status.code(), Some(1), "{} was accepted", f.display());
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(
            err.lines().count(),
            1,
            "{}: not one line: {err:?}",
            f.display()
        );
        assert!(
            err.starts_with(&format!("error: {}: ", f.display())),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn verify_missing_file_is_exit_1() {
    let o = run(&["verify", "/nonexistent/model.bin"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("error: cannot read /nonexistent/model.bin")
    );
}

#[test]
fn usage_error_is_exit_2() {
    let o = run(&["embed"], "");
    assert_eq!(o.status.code(), Some(2));
}

/// Every golden case: `tokenize --jsonl` gives the reference ids and `embed --jsonl --dims D` the
/// reference vectors (max |diff| ≤ 1e-4), in input order, with the input id echoed.
#[test]
fn tokenize_and_embed_match_reference_fixtures() {
    for json in std::fs::read_dir(root().join("tests/fixtures/models")).unwrap() {
        let json = json.unwrap().path();
        if json.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let fx: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let model = json.with_file_name(fx["file"].as_str().unwrap());
        let model = model.to_str().unwrap();
        let cases = fx["cases"].as_array().unwrap();
        let input: String = cases
            .iter()
            .enumerate()
            .map(|(i, c)| serde_json::json!({"id": i, "text": c["text"]}).to_string() + "\n")
            .collect();

        let o = run(&["tokenize", "--model", model, "--jsonl", "-"], &input);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let lines = stdout_lines(&o);
        assert_eq!(lines.len(), cases.len());
        for (i, (line, case)) in lines.iter().zip(cases).enumerate() {
            assert_eq!(line["id"], i);
            assert_eq!(line["ids"], case["ids"], "{model} case {i}");
        }

        for dims in fx["valid_dims"].as_array().unwrap() {
            let d = dims.to_string();
            let o = run(
                &["embed", "--model", model, "--dims", &d, "--jsonl"],
                &input,
            );
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            for (i, (line, case)) in stdout_lines(&o).iter().zip(cases).enumerate() {
                assert_eq!(line["id"], i);
                let got = line["embedding"].as_array().unwrap();
                let want = case["embeddings"][&d].as_array().unwrap();
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(want) {
                    let diff = (g.as_f64().unwrap() - w.as_f64().unwrap()).abs();
                    assert!(diff <= 1e-4, "{model} dims {d} case {i}: |diff| {diff}");
                }
            }
        }
    }
}

#[test]
fn plain_lines_without_jsonl() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let o = run(
        &["embed", "--model", model.to_str().unwrap()],
        "one\ntwo\n\n",
    );
    assert_eq!(o.status.code(), Some(0));
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), 3, "an empty line is an (empty) text too");
    assert!(lines
        .iter()
        .all(|l| l.get("id").is_none() && l["embedding"].as_array().unwrap().len() == 12));
}

#[test]
fn bad_jsonl_names_the_line() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    let cases = [
        ("{\"text\":\"ok\"}\nnot json\n", "-: line 2: invalid JSON"),
        ("{\"id\":1}\n", "-: line 1: missing \"text\" field"),
        ("{\"text\":5}\n", "-: line 1: \"text\" must be a string"),
        (
            "[1,2]\n",
            "-: line 1: expected a JSON object with a \"text\" field",
        ),
    ];
    for (input, want) in cases {
        let o = run(&["embed", "--model", model, "--jsonl"], input);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.starts_with(&format!("error: {want}")), "{err}");
        assert_eq!(err.lines().count(), 1);
    }
}

/// An input "id" comes back as written, also numbers serde_json would round (beyond 64 bits,
/// or written with an exponent), and non-numbers as compact JSON.
#[test]
fn jsonl_ids_are_echoed_as_written() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    let input = concat!(
        "{\"id\":18446744073709551616,\"text\":\"a\"}\n",
        "{\"text\":\"b\",\"id\":1.50}\n",
        "{\"id\":-1e3,\"text\":\"c\"}\n",
        "{\"id\":\"x\\\"y\",\"text\":\"d\"}\n",
        "{\"id\":[1, {\"k\": null}],\"text\":\"e\"}\n",
    );
    for cmd in ["embed", "tokenize"] {
        let o = run(&[cmd, "--model", model, "--jsonl"], input);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ids: Vec<String> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| l[..l.find(",\"").unwrap()].to_string())
            .collect();
        assert_eq!(
            ids,
            [
                "{\"id\":18446744073709551616",
                "{\"id\":1.50",
                "{\"id\":-1e3",
                "{\"id\":\"x\\\"y\"",
                "{\"id\":[1,{\"k\":null}]",
            ]
        );
    }
}

#[test]
fn invalid_dims_names_the_valid_set() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let o = run(
        &["embed", "--model", model.to_str().unwrap(), "--dims", "5"],
        "x\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: invalid dims 5: this model's valid dims are 4, 8, 12\n"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn inspect_json_reports_header_sections_and_metadata() {
    let model = root().join("tests/fixtures/models/static_fp32_shuffled_sections.bin");
    let o = run(&["inspect", model.to_str().unwrap(), "--json"], "");
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["size"], 42376);
    assert_eq!(v["header"]["model_id"], "lightembed-fixtr");
    assert_eq!(v["header"]["model_version"], "2.5.300");
    assert_eq!(v["header"]["license_id"], 42);
    assert_eq!(v["header"]["flags"]["has_fingerprint"], true);
    assert_eq!(v["valid_dims"], serde_json::json!([4, 8]));
    let names: Vec<&str> = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "METADATA",
            "PROJECTION",
            "UNKNOWN",
            "FINAL_LN",
            "EMBEDDING_WEIGHTS",
            "UNKNOWN",
            "TOKENIZER_CONFIG",
            "TOKENIZER_VOCAB"
        ]
    );
    assert_eq!(v["metadata"]["teacher"], "none (random fixture)");
    let text = run(&["inspect", model.to_str().unwrap()], "");
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("model         lightembed-fixtr v2.5.300"),
        "{text}"
    );
    assert!(text.contains("EMBEDDING_WEIGHTS"));
}

fn jsonl_lines(n: usize, bad: &[usize]) -> String {
    (1..=n)
        .map(|i| {
            if bad.contains(&i) {
                format!("{{\"id\":{i},\"text\":\"broken\"\n")
            } else {
                format!("{{\"id\":{i},\"text\":\"line {i}\"}}\n")
            }
        })
        .collect()
}

fn out_ids(o: &Output) -> Vec<u64> {
    stdout_lines(o)
        .iter()
        .map(|l| l["id"].as_u64().unwrap())
        .collect()
}

/// Issue 11, item 2: every line before a bad one is written, in order, before the error that
/// names it — at line 5 (was: no output at all) and at line 1,500 (was: lines 1,025–1,499 lost).
#[test]
fn lines_before_a_bad_line_are_written() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    for (n, bad) in [(10usize, 5usize), (1600, 1500)] {
        for cmd in ["embed", "tokenize"] {
            let o = run(&[cmd, "--model", model, "--jsonl"], &jsonl_lines(n, &[bad]));
            assert_eq!(o.status.code(), Some(1), "{cmd}");
            assert_eq!(
                out_ids(&o),
                (1..bad as u64).collect::<Vec<_>>(),
                "{cmd} bad={bad}"
            );
            let err = String::from_utf8(o.stderr).unwrap();
            assert!(
                err.starts_with(&format!("error: -: line {bad}: invalid JSON")),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1);
        }
    }
}

/// `--skip-bad`: bad lines are reported on stderr by number and skipped; every good line is
/// written in order; exit code 4 says lines were skipped.
#[test]
fn skip_bad_reports_and_goes_on() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    let mut input = jsonl_lines(1100, &[5, 1030]);
    input.push_str("\u{ff}not utf-8\n"); // line 1101 (written as UTF-8 here; raw bytes below)
    let mut bytes = input.into_bytes();
    let at = bytes.len() - "not utf-8\n".len() - 2;
    bytes.splice(at..at + 2, [0xff]);
    bytes.extend_from_slice(b"{\"id\":1102,\"text\":\"last\"}\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["embed", "--model", model, "--jsonl", "--skip-bad", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes).unwrap());
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(o.status.code(), Some(4));
    let want: Vec<u64> = (1..=1102)
        .filter(|i| ![5, 1030, 1101].contains(i))
        .collect();
    assert_eq!(out_ids(&o), want);
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(
        lines[0].starts_with("warning: skipping -: line 5: invalid JSON"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("warning: skipping -: line 1030: invalid JSON"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("warning: skipping -: line 1101: not UTF-8"),
        "{err}"
    );
    assert_eq!(
        lines[3],
        "warning: 3 lines skipped (named above); exit code 4"
    );
}

/// Issue 11, item 3: a UTF-8 byte-order mark at the start of the input is not part of line 1.
#[test]
fn a_byte_order_mark_is_accepted() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    let input = "\u{feff}{\"id\":1,\"text\":\"one\"}\n{\"id\":2,\"text\":\"two\"}\n";
    for cmd in ["embed", "tokenize"] {
        let o = run(&[cmd, "--model", model, "--jsonl"], input);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(out_ids(&o), [1, 2]);
    }
    // Plain lines: the mark is not part of the first text.
    let o = run(&["tokenize", "--model", model], "\u{feff}one\n");
    let plain = run(&["tokenize", "--model", model], "one\n");
    assert_eq!(stdout_lines(&o), stdout_lines(&plain));
}

/// Output is streamed: with the input pipe still open, the answer to the first line arrives
/// without waiting for 1,024 lines or EOF. (The 60 s bound only guards against a hang; it is
/// not a speed check.)
#[test]
fn output_is_streamed_from_a_pipe() {
    use std::io::BufRead;
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args(["embed", "--model", model.to_str().unwrap(), "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let _ = tx.send(line);
    });
    stdin.write_all(b"{\"id\":7,\"text\":\"hello\"}\n").unwrap();
    stdin.flush().unwrap();
    let line = rx.recv_timeout(std::time::Duration::from_secs(60));
    drop(stdin); // EOF: let the process end either way
    let _ = child.wait();
    let line = line.expect("no output while the input pipe was open");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], 7);
}

/// A closed stderr is not a crash: `embed --skip-bad` with its warnings going nowhere still
/// writes every good line and exits 4.
#[cfg(unix)]
#[test]
fn embed_with_a_closed_stderr_does_not_panic() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lightembed"))
        .args([
            "embed",
            "--model",
            model.to_str().unwrap(),
            "--jsonl",
            "--skip-bad",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(jsonl_lines(20, &[3]).as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(out_ids(&o).len(), 19);
}

/// A line longer than 16 MiB is that line's error, never read into memory whole: skipped with
/// `--skip-bad` (the lines around it embedded, exit 4); without it, the lines before it are
/// written and the error names it.
#[test]
fn an_overlong_line_is_named_and_skipped() {
    let model = root().join("tests/fixtures/models/tern_2l_cased.bin");
    let model = model.to_str().unwrap();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("overlong.txt");
    let mut bytes = b"first line\n".to_vec();
    bytes.resize(bytes.len() + (17 << 20), b'a');
    bytes.extend_from_slice(b"\nthird line\n");
    std::fs::write(&path, &bytes).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["embed", "--model", model];
        args.extend_from_slice(extra);
        args.push(path.to_str().unwrap());
        Command::new(env!("CARGO_BIN_EXE_lightembed"))
            .args(&args)
            .output()
            .unwrap()
    };
    let o = run(&["--skip-bad"]);
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "warning: skipping {}: line 2: longer than 16 MiB; not read\n\
             warning: 1 line skipped (named above); exit code 4\n",
            path.display()
        )
    );
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {}: line 2: longer than 16 MiB; not read\n",
            path.display()
        )
    );
}
