//! Partitioned vector search on a `lightembed site` bundle against the exact scan of every code
//! (bench/RESULTS.md, "Partitioned vectors, flat core"): for each question of a set, the
//! partitions its query probes and their bytes as stored (what a cold visitor downloads for the
//! vector side), recall@10 of the vector ranking against the exact scan, and page-level
//! success@1/@10 and MRR@10 of the hybrid ranking, partitioned and exact; and the keyword side's
//! impact tiers (bench/RESULTS.md, "Flat keyword side: impact tiers"): the first tiers' ranking
//! (what every front end reads) against every tier's (exactly `Index::query`'s BM25), keyword
//! top-10 overlap and hybrid success/MRR@10; and, for a two-level bundle (bench/RESULTS.md,
//! "Two-level centroids"), the centroid cells each query fetches before its partitions.
//!
//! ```sh
//! cargo run --release -p lightembed-cli --example partitions -- SITE/lightembed QUESTIONS.jsonl [PROBES...]
//! ```
//!
//! QUESTIONS.jsonl: `{"query", "relevant": [page paths]}` lines (bench/search/questions/), judged
//! at page level as bench/search/pagefind_vs.mjs judges them.

use std::collections::HashSet;
use std::path::Path;

use lightembed_index::fragments::FragmentedIndex;
use lightembed_index::{Mode, SearchOptions};

fn read(p: &Path) -> Vec<u8> {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    lightembed_index::gzip::decompress_if_gzip(&b)
        .unwrap()
        .into_owned()
}

/// The page of a URL as the question sets name pages (bench/search/pagefind_vs.mjs's pageKey:
/// a folder is its index.html; the Rust book's earlier-edition copies of a chapter are that
/// chapter).
fn page_key(url: &str) -> String {
    let mut p = url
        .split('#')
        .next()
        .unwrap_or(url)
        .trim_start_matches('/')
        .to_string();
    if p.is_empty() || p.ends_with('/') {
        p.push_str("index.html");
    }
    for old in ["2018-edition/", "second-edition/"] {
        if let Some(rest) = p.strip_prefix(old) {
            return rest.to_string();
        }
    }
    p
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(&args[1]);
    let questions = std::fs::read_to_string(&args[2]).unwrap();
    let probe_list: Vec<usize> = args[3..].iter().map(|a| a.parse().unwrap()).collect();
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let file = |k: &str| dir.join(m["files"][k].as_str().unwrap());
    let core_gz = std::fs::metadata(file("core")).unwrap().len();
    // The query side every first query pays besides the index (a static model's bundle): the
    // query head and the row shards of the question's tokens, as stored; and the widget's wasm.
    if let (Some(head), Some(rows)) = (m["files"]["query"].as_str(), m["files"]["rows"].as_str()) {
        let head_bytes = std::fs::metadata(dir.join(head)).unwrap().len();
        let enc = lightembed::QueryEncoder::from_head(&read(&dir.join(head))).unwrap();
        let lines: Vec<String> = questions
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["query"].as_str().unwrap().to_string()
            })
            .collect();
        let row_bytes: u64 = lines
            .iter()
            .flat_map(|q| enc.missing_shards(q))
            .map(|r| {
                std::fs::metadata(dir.join(rows).join(format!("r{r}.bin")))
                    .unwrap()
                    .len()
            })
            .sum();
        let wasm = std::fs::metadata(file("wasm")).unwrap().len();
        println!(
            "query side: head {head_bytes}, row shards {:.0} per question (mean); wasm {wasm}",
            row_bytes as f64 / lines.len().max(1) as f64
        );
    }
    let mut ix = FragmentedIndex::from_core(&read(&file("core"))).unwrap();
    // The core alone: which partitions a query probes (none of them added).
    let bare = ix.clone();
    let frags = file("fragments");
    let size = |name: String| std::fs::metadata(frags.join(name)).unwrap().len();
    let part_bytes: Vec<u64> = (0..ix.partition_count())
        .map(|v| size(format!("v{v}.bin")))
        .collect();
    let cell_bytes: Vec<u64> = (0..ix.cell_count())
        .map(|g| size(format!("g{g}.bin")))
        .collect();
    for g in 0..ix.cell_count() {
        ix.add_cell(&read(&frags.join(format!("g{g}.bin"))))
            .unwrap();
    }
    // The cells a query needs, and the core with them: which partitions it probes.
    let cells_of = |v: &[f32], probes: Option<usize>| -> (FragmentedIndex, u64) {
        let mut with = bare.clone();
        let cells = bare.cells_for(v, probes).unwrap();
        for &g in &cells {
            with.add_cell(&read(&frags.join(format!("g{g}.bin"))))
                .unwrap();
        }
        let b = cells.iter().map(|&g| cell_bytes[g as usize]).sum();
        (with, b)
    };
    for s in 0..ix.shard_count() {
        ix.add_shard(&read(&frags.join(format!("t{s}.bin"))))
            .unwrap();
    }
    for v in 0..ix.partition_count() {
        ix.add_partition(&read(&frags.join(format!("v{v}.bin"))))
            .unwrap();
    }
    let mut ix_all = ix.clone();
    ix_all.set_all_tiers(true);
    let mut tail_bytes = 0u64;
    for u in 0..ix.tail_shard_count() {
        tail_bytes += size(format!("u{u}.bin"));
        ix_all
            .add_tail_shard(&read(&frags.join(format!("u{u}.bin"))))
            .unwrap();
    }
    for c in 0..ix.chunk_count() {
        ix_all
            .add_chunk(&read(&frags.join(format!("c{c}.bin"))))
            .unwrap();
        ix.add_chunk(&read(&frags.join(format!("c{c}.bin"))))
            .unwrap();
    }
    let model = lightembed::Model::from_bytes(&read(&file("model"))).unwrap();
    let qs: Vec<(String, Vec<String>)> = questions
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let rel = v["relevant"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect();
            (v["query"].as_str().unwrap().to_string(), rel)
        })
        .collect();
    let k_all = ix.partition_count() as usize;
    println!(
        "{}: {} passages, {} partitions (default probes {}), {} centroid cells (cell probes {}, {} bytes stored in all), core {} bytes stored, partitions {} bytes stored in all (mean {:.0}); {} questions",
        dir.display(),
        ix.len(),
        k_all,
        ix.probes(),
        ix.cell_count(),
        ix.cell_probes(),
        cell_bytes.iter().sum::<u64>(),
        core_gz,
        part_bytes.iter().sum::<u64>(),
        part_bytes.iter().sum::<u64>() as f64 / k_all.max(1) as f64,
        qs.len()
    );
    let vectors: Vec<Vec<f32>> = qs
        .iter()
        .map(|(q, _)| model.embed(q, ix.dims()).unwrap())
        .collect();
    let shard_bytes: u64 = (0..ix.shard_count())
        .map(|s| size(format!("t{s}.bin")))
        .sum();
    println!(
        "term shards {} ({shard_bytes} bytes stored), tail shards {} ({tail_bytes} bytes stored)",
        ix.shard_count(),
        ix.tail_shard_count()
    );
    let hybrid_of = |ix: &FragmentedIndex, probes: usize| -> (f64, f64, f64) {
        let opts = SearchOptions {
            ef_search: Some(probes),
            ..SearchOptions::default()
        };
        let (mut s1, mut s10, mut mrr) = (0.0, 0.0, 0.0);
        for ((q, rel), v) in qs.iter().zip(&vectors) {
            let hits = ix.query(Some(v), q, 30, &opts).unwrap();
            let mut pages: Vec<String> = Vec::new();
            for h in &hits {
                let p = page_key(&h.url);
                if !pages.contains(&p) {
                    pages.push(p);
                }
            }
            if let Some(r) = pages.iter().take(10).position(|p| rel.contains(p)) {
                s10 += 1.0;
                mrr += 1.0 / (r + 1) as f64;
                if r == 0 {
                    s1 += 1.0;
                }
            }
        }
        let n = qs.len() as f64;
        (s1 / n, s10 / n, mrr / n)
    };
    let vector_top = |v: &[f32], probes: usize| -> Vec<u32> {
        let opts = SearchOptions {
            mode: Mode::Vector,
            ef_search: Some(probes),
            ..SearchOptions::default()
        };
        ix.query(Some(v), "", 10, &opts)
            .unwrap()
            .iter()
            .map(|h| h.passage)
            .collect()
    };
    // The index bytes (as stored) of each question's first query at the default probes: the
    // core, its term shards, its partitions, the chunks of its top-20 hybrid hits (the widget's k).
    let mut qs_first: Vec<String> = vec!["how do I read a file line by line".into()];
    qs_first.extend(qs.iter().map(|(q, _)| q.clone()));
    let (mut t_all, mut v_all, mut c_all, mut g_all) = (0u64, 0u64, 0u64, 0u64);
    for (i, q) in qs_first.iter().enumerate() {
        let t: u64 = bare
            .missing_shards(q)
            .iter()
            .map(|&s| size(format!("t{s}.bin")))
            .sum();
        let v = model.embed(q, ix.dims()).unwrap();
        let (with, g) = cells_of(&v, None);
        let pv: u64 = with
            .partitions_for(&v, None)
            .unwrap()
            .iter()
            .map(|&p| part_bytes[p as usize])
            .sum();
        let hits = ix
            .query(Some(&v), q, 20, &SearchOptions::default())
            .unwrap();
        let chunks: std::collections::BTreeSet<u32> = hits
            .iter()
            .map(|h| ix.chunk_of(h.passage).unwrap())
            .collect();
        let c: u64 = chunks.iter().map(|&c| size(format!("c{c}.bin"))).sum();
        if i == 0 {
            println!(
                "first query {q:?}: core {core_gz}, terms {t}, cells {g}, vectors {pv}, chunks {c} ({} chunks); index total {}",
                chunks.len(),
                core_gz + t + g + pv + c
            );
            continue;
        }
        g_all += g;
        t_all += t;
        v_all += pv;
        c_all += c;
    }
    let nq = qs.len() as f64;
    println!(
        "mean over {} questions: core {core_gz}, terms {:.0}, cells {:.0}, vectors {:.0}, chunks {:.0}; index total {:.0}",
        qs.len(),
        t_all as f64 / nq,
        g_all as f64 / nq,
        v_all as f64 / nq,
        c_all as f64 / nq,
        core_gz as f64 + (t_all + g_all + v_all + c_all) as f64 / nq
    );
    let (e1, e10, emrr) = hybrid_of(&ix, k_all);
    // The keyword side: first tiers against every tier.
    let kw_top = |ix: &FragmentedIndex, q: &str| -> Vec<u32> {
        let opts = SearchOptions {
            mode: Mode::Keyword,
            ..SearchOptions::default()
        };
        ix.query(None, q, 10, &opts)
            .unwrap()
            .iter()
            .map(|h| h.passage)
            .collect()
    };
    let (mut found, mut wanted) = (0usize, 0usize);
    for (q, _) in &qs {
        let exact: HashSet<u32> = kw_top(&ix_all, q).into_iter().collect();
        found += kw_top(&ix, q).iter().filter(|p| exact.contains(p)).count();
        wanted += exact.len();
    }
    println!(
        "keyword top-10 overlap, first tiers against every tier: {:.3} ({found} of {wanted})",
        found as f64 / wanted.max(1) as f64
    );
    for (what, probes) in [
        ("default probes", ix.probes() as usize),
        ("exact scan", k_all),
    ] {
        let (a1, a10, amrr) = hybrid_of(&ix_all, probes);
        let (f1, f10, fmrr) = hybrid_of(&ix, probes);
        println!(
            "hybrid, {what}: first tiers success@1 {f1:.3} success@10 {f10:.3} MRR@10 {fmrr:.3}; \
             every tier {a1:.3} {a10:.3} {amrr:.3}"
        );
    }
    println!(
        "| probes | cell bytes / query (mean) | vector bytes / query (mean, max) | of all codes | recall@10 (vector) | hybrid success@1 | success@10 | MRR@10 |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut list = probe_list;
    if list.is_empty() {
        list = vec![ix.probes() as usize];
    }
    for probes in list {
        let (mut bytes, mut max, mut found, mut wanted) = (0u64, 0u64, 0usize, 0usize);
        let mut cells = 0u64;
        for v in &vectors {
            let (with, g) = cells_of(v, Some(probes));
            cells += g;
            let probed = with.partitions_for(v, Some(probes)).unwrap();
            let b: u64 = probed.iter().map(|&p| part_bytes[p as usize]).sum();
            bytes += b;
            max = max.max(b);
            let exact: HashSet<u32> = vector_top(v, k_all).into_iter().collect();
            found += vector_top(v, probes)
                .iter()
                .filter(|p| exact.contains(p))
                .count();
            wanted += exact.len();
        }
        let (s1, s10, mrr) = hybrid_of(&ix, probes);
        println!(
            "| {probes} | {:.0} | {:.0}, {max} | {:.3} | {:.3} | {s1:.3} | {s10:.3} | {mrr:.3} |",
            cells as f64 / qs.len() as f64,
            bytes as f64 / qs.len() as f64,
            bytes as f64 / qs.len() as f64 / part_bytes.iter().sum::<u64>().max(1) as f64,
            found as f64 / wanted.max(1) as f64,
        );
    }
    println!("| all ({k_all}, exact) | | | 1 | 1 | {e1:.3} | {e10:.3} | {emrr:.3} |");
}
