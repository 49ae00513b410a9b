//! `bench-hybrid`: query latency of `Index::query` per mode (keyword / vector / hybrid) on an
//! index built by `lightembed index`, single thread, natively.
//!
//! Reported per mode: p50 / p90 / p99 of the search alone (the query already embedded) and of
//! embed + search (what a user waits for). The queries are the `"query"` fields of a JSONL file
//! (e.g. the held-out set of `bench/search/make_set.py`).
//!
//! ```text
//! cargo run --release -p lightembed-bench-index --bin bench-hybrid -- \
//!     --index bench/search/data/idx-lightembed-en-static --model public/models/lightembed-en-static.bin \
//!     --queries bench/search/data/test.jsonl [--k 10] [--repeat 3]
//! ```

use std::time::{Duration, Instant};

use lightembed_index::{Index, Mode, SearchOptions};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: bench-hybrid --index DIR --model MODEL.bin --queries FILE.jsonl [--k 10] [--repeat 3]";
    let (Some(dir), Some(model_path), Some(queries)) = (
        arg(&args, "--index"),
        arg(&args, "--model"),
        arg(&args, "--queries"),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let k: usize = arg(&args, "--k").map_or(10, |s| s.parse().expect("--k"));
    let repeat: usize = arg(&args, "--repeat").map_or(3, |s| s.parse().expect("--repeat"));
    let bytes = std::fs::read(format!("{dir}/index.bin")).expect("read index.bin");
    let index = Index::from_bytes(&bytes).expect("load index");
    let model = lightembed::Model::from_bytes(&std::fs::read(&model_path).expect("read model"))
        .expect("load model");
    let texts: Vec<String> = std::fs::read_to_string(&queries)
        .expect("read queries")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            v["query"].as_str().expect("\"query\"").to_string()
        })
        .collect();
    println!(
        "{} live passages, {} dims, {} queries × {repeat}, k = {k}, single thread",
        index.len(),
        index.dims(),
        texts.len()
    );
    let mut embed = Vec::new();
    let vectors: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| {
            let start = Instant::now();
            let v = model.embed(t, index.dims()).expect("embed");
            embed.push(start.elapsed());
            v
        })
        .collect();
    let mut embed_sorted = embed.clone();
    embed_sorted.sort();
    println!("| mode | search p50 ms | p90 | p99 | embed + search p50 ms |\n|---|---|---|---|---|");
    for mode in [Mode::Keyword, Mode::Vector, Mode::Hybrid] {
        let opts = SearchOptions {
            mode,
            ..SearchOptions::default()
        };
        let mut times = Vec::new();
        let mut total = Vec::new();
        for _ in 0..repeat {
            for (i, (t, v)) in texts.iter().zip(&vectors).enumerate() {
                let start = Instant::now();
                let hits = index.query(Some(v), t, k, &opts).expect("query");
                std::hint::black_box(hits);
                let d = start.elapsed();
                times.push(d);
                // Keyword mode needs no embedding.
                let e = if mode == Mode::Keyword {
                    Duration::ZERO
                } else {
                    embed[i]
                };
                total.push(d + e);
            }
        }
        times.sort();
        total.sort();
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            mode.as_str(),
            pct(&times, 0.5),
            pct(&times, 0.9),
            pct(&times, 0.99),
            pct(&total, 0.5)
        );
    }
    println!(
        "embed alone: p50 {:.3} ms, p90 {:.3} ms",
        pct(&embed_sorted, 0.5),
        pct(&embed_sorted, 0.9)
    );
}
