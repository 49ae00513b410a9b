//! `bench-index`: lightembed-index vs hnsw_rs (single thread) on real-text embeddings.
//!
//! For every `dims` (prefix of the 384-d vectors, re-normalised — Matryoshka style) and every
//! collection size `N`, both libraries build an HNSW index over the first `N` vectors with the
//! same `M` / `ef_construction`, then answer the same held-out queries (the `Q` vectors after the
//! largest `N`). Reported per library: build time and throughput, bytes per vector, query latency
//! p50/p99 and recall@10 against brute force, for each `ef_search`.
//!
//! Data sources (`--source`):
//! * `teacher` — all-MiniLM-L6-v2 sentence embeddings of the training corpus, cached by
//!   `train/embed_teacher.py` as `train/data/teacher/shard_NNNN.npy` (fp16, L2-normalised).
//! * `npy:PATH` — any `[n, 384]` fp16/fp32 .npy, e.g. the teacher-like proxy vectors of the same
//!   corpus sentences written by `bench/index/make_proxy.py` while the teacher cache is incomplete.
//!
//! Usage (see bench/RESULTS.md for the exact command of each run):
//!
//! ```text
//! cargo run --release -p lightembed-bench-index -- [--source teacher|npy:PATH] [--sizes 10000,100000]
//!     [--dims 384,128] [--queries 1000] [--k 10] [--m 16] [--ef-construction 200]
//!     [--ef-search 96,64,128] [--no-hnsw-rs] [--data train/data]
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hnsw_rs::prelude::{AnnT, DistDot, Hnsw};
use lightembed_index::{Document, Index, ManifestFields, Metric, ModelVersion, Params};

struct Args {
    source: String,
    data: PathBuf,
    sizes: Vec<usize>,
    dims: Vec<usize>,
    queries: usize,
    k: usize,
    m: usize,
    ef_construction: usize,
    ef_search: Vec<usize>,
    hnsw_rs: bool,
}

fn list(s: &str) -> Vec<usize> {
    s.split(',')
        .map(|x| x.trim().parse().expect("comma-separated integers"))
        .collect()
}

fn parse_args() -> Args {
    let defaults = Params::default();
    let mut a = Args {
        source: "teacher".into(),
        data: PathBuf::from("train/data"),
        sizes: vec![10_000, 100_000],
        dims: vec![384, 128],
        queries: 1000,
        k: 10,
        m: defaults.m,
        ef_construction: defaults.ef_construction,
        ef_search: vec![defaults.ef_search],
        hnsw_rs: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--source" => a.source = val(),
            "--data" => a.data = PathBuf::from(val()),
            "--sizes" => a.sizes = list(&val()),
            "--dims" => a.dims = list(&val()),
            "--queries" => a.queries = val().parse().unwrap(),
            "--k" => a.k = val().parse().unwrap(),
            "--m" => a.m = val().parse().unwrap(),
            "--ef-construction" => a.ef_construction = val().parse().unwrap(),
            "--ef-search" => a.ef_search = list(&val()),
            "--no-hnsw-rs" => a.hnsw_rs = false,
            "-h" | "--help" => {
                println!("see the module docs in bench/index/src/main.rs");
                std::process::exit(0);
            }
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

// ---- .npy -------------------------------------------------------------------------------------

/// Reads a C-order 2-D `<f2` or `<f4` .npy into (rows, cols, f32 data).
fn read_npy(path: &Path) -> (usize, usize, Vec<f32>) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{}: not .npy", path.display());
    let (hlen, hstart) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[hstart..hstart + hlen]).unwrap();
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape = &header[header.find("'shape': (").unwrap() + 10..];
    let shape: Vec<usize> = shape[..shape.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let (rows, cols) = (shape[0], shape[1]);
    let body = &bytes[hstart + hlen..];
    let data: Vec<f32> = if header.contains("'<f2'") {
        body.chunks_exact(2)
            .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
            .collect()
    } else if header.contains("'<f4'") {
        body.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    } else {
        panic!("{}: unsupported dtype in {header}", path.display())
    };
    assert_eq!(data.len(), rows * cols);
    (rows, cols, data)
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // subnormal: normalise
            let mut e = 127 - 15 + 1;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

// ---- data -------------------------------------------------------------------------------------

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
}

/// `need` × 384 teacher sentence vectors from the cached shards, in corpus order.
fn load_teacher(dir: &Path, need: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(need * 384);
    for s in 0.. {
        if out.len() >= need * 384 {
            break;
        }
        let p = dir.join(format!("shard_{s:04}.npy"));
        if !p.exists() {
            panic!(
                "only {} teacher vectors cached under {} (need {need}); use --source npy:PATH (bench/index/make_proxy.py) or wait",
                out.len() / 384,
                dir.display()
            );
        }
        let (_, cols, data) = read_npy(&p);
        assert_eq!(cols, 384);
        out.extend_from_slice(&data);
    }
    out.truncate(need * 384);
    for row in out.chunks_exact_mut(384) {
        normalize(row);
    }
    out
}

/// `need` × 384 vectors from the first rows of one 2-D .npy (e.g. `make_proxy.py`'s output).
fn load_npy(path: &Path, need: usize) -> Vec<f32> {
    let (rows, cols, mut data) = read_npy(path);
    assert_eq!(cols, 384, "{}: expected 384 columns", path.display());
    assert!(rows >= need, "{}: {rows} rows, need {need}", path.display());
    data.truncate(need * 384);
    for row in data.chunks_exact_mut(384) {
        normalize(row);
    }
    data
}

/// Rows of `src` (384-d) cut to their first `dims` components and re-normalised.
fn prefix(src: &[f32], dims: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(src.len() / 384 * dims);
    for row in src.chunks_exact(384) {
        let start = out.len();
        out.extend_from_slice(&row[..dims]);
        normalize(&mut out[start..]);
    }
    out
}

// ---- measurement ------------------------------------------------------------------------------

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`, ns resolution). The
/// machine this runs on is shared, so wall-clock times mostly measure the scheduler; thread CPU
/// time measures the code. Both are reported.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall and thread-CPU time of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (w, c) = (Instant::now(), thread_cpu());
    let out = f();
    (out, w.elapsed(), thread_cpu() - c)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a
        .chunks_exact(16)
        .remainder()
        .iter()
        .zip(b.chunks_exact(16).remainder())
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// Exact answers of one query: the top-k indices, and the k-th best score.
struct Truth {
    ids: Vec<usize>,
    kth: f32,
}

/// Exact top-k of every query by brute force.
fn ground_truth(base: &[f32], queries: &[f32], dims: usize, k: usize) -> Vec<Truth> {
    queries
        .chunks_exact(dims)
        .map(|q| {
            let mut s: Vec<(f32, usize)> = base
                .chunks_exact(dims)
                .map(|v| dot(q, v))
                .zip(0..)
                .collect();
            s.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
            s.truncate(k);
            s.sort_by(|a, b| b.0.total_cmp(&a.0));
            Truth {
                kth: s[k - 1].0,
                ids: s.into_iter().map(|(_, i)| i).collect(),
            }
        })
        .collect()
}

/// Tolerance for ties at the k-th place (ann-benchmarks style): a returned vector whose true
/// similarity is within this of the k-th best counts as a correct answer, so exact duplicates in
/// the corpus do not count as misses.
const TIE_EPS: f32 = 1e-6;

struct Row {
    lib: &'static str,
    build_wall: Duration,
    build_cpu: Duration,
    bytes: usize,
    ef: usize,
    lat: Latency,
    recall: f64,
}

/// Per-query latency percentiles, thread CPU time and wall clock.
struct Latency {
    cpu_p50: Duration,
    cpu_p99: Duration,
    wall_p50: Duration,
    wall_p99: Duration,
}

fn pct(lat: &mut [Duration], p: f64) -> Duration {
    lat.sort();
    lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)]
}

/// Runs `search` over every query: latency percentiles and recall@k.
fn measure(
    base: &[f32],
    queries: &[f32],
    dims: usize,
    k: usize,
    truth: &[Truth],
    mut search: impl FnMut(&[f32]) -> Vec<usize>,
) -> (Latency, f64) {
    // warm-up
    for q in queries.chunks_exact(dims).take(50) {
        std::hint::black_box(search(q));
    }
    let mut wall = Vec::with_capacity(truth.len());
    let mut cpu = Vec::with_capacity(truth.len());
    let mut hits = 0usize;
    for (q, t) in queries.chunks_exact(dims).zip(truth) {
        let (got, w, c) = timed(|| std::hint::black_box(search(q)));
        wall.push(w);
        cpu.push(c);
        let mut seen = std::collections::HashSet::new();
        hits += got
            .iter()
            .take(k)
            .filter(|&&i| {
                seen.insert(i)
                    && (t.ids.contains(&i)
                        || dot(q, &base[i * dims..(i + 1) * dims]) >= t.kth - TIE_EPS)
            })
            .count();
    }
    let recall = hits as f64 / (truth.len() * k) as f64;
    let lat = Latency {
        cpu_p50: pct(&mut cpu, 0.50),
        cpu_p99: pct(&mut cpu, 0.99),
        wall_p50: pct(&mut wall, 0.50),
        wall_p99: pct(&mut wall, 0.99),
    };
    (lat, recall)
}

fn dir_size_with_prefix(dir: &Path, prefix: &str) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.metadata().unwrap().len() as usize)
        .sum()
}

fn run_ours(a: &Args, base: &[f32], queries: &[f32], dims: usize, truth: &[Truth]) -> Vec<Row> {
    let fields = ManifestFields {
        model_id: "all-MiniLM-L6-v2".into(),
        model_version: ModelVersion::new(1, 0, 0),
        dims,
        metric: Metric::Cosine,
        model_sha256: [0; 32],
    };
    let params = Params {
        m: a.m,
        ef_construction: a.ef_construction,
        ..Params::default()
    };
    let (index, build_wall, build_cpu) = timed(|| {
        let mut index = Index::new(fields, params).unwrap();
        for (i, v) in base.chunks_exact(dims).enumerate() {
            let doc = Document {
                id: i.to_string(),
                ..Document::default()
            };
            index.insert(doc, v).unwrap();
        }
        index
    });
    let bytes = index.to_bytes().len();
    a.ef_search
        .iter()
        .map(|&ef| {
            let (lat, recall) = measure(base, queries, dims, a.k, truth, |q| {
                index
                    .search_with_ef(q, a.k, ef)
                    .unwrap()
                    .into_iter()
                    .map(|h| h.id.parse().unwrap())
                    .collect()
            });
            Row {
                lib: "lightembed-index",
                build_wall,
                build_cpu,
                bytes,
                ef,
                lat,
                recall,
            }
        })
        .collect()
}

fn run_hnsw_rs(a: &Args, base: &[f32], queries: &[f32], dims: usize, truth: &[Truth]) -> Vec<Row> {
    let n = base.len() / dims;
    let (hnsw, build_wall, build_cpu) = timed(|| {
        let hnsw: Hnsw<f32, DistDot> = Hnsw::new(a.m, n, 16, a.ef_construction, DistDot {});
        for (i, v) in base.chunks_exact(dims).enumerate() {
            hnsw.insert_slice((v, i));
        }
        hnsw
    });
    let dir = std::env::temp_dir().join(format!("bench-index-hnswrs-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let name = format!("n{n}d{dims}");
    let bytes = match hnsw.file_dump(&dir, &name) {
        Ok(_) => dir_size_with_prefix(&dir, &name),
        Err(e) => {
            eprintln!("hnsw_rs file_dump failed: {e}");
            0
        }
    };
    let _ = fs::remove_dir_all(&dir);
    a.ef_search
        .iter()
        .map(|&ef| {
            let (lat, recall) = measure(base, queries, dims, a.k, truth, |q| {
                hnsw.search(q, a.k, ef.max(a.k))
                    .into_iter()
                    .map(|nb| nb.d_id)
                    .collect()
            });
            Row {
                lib: "hnsw_rs",
                build_wall,
                build_cpu,
                bytes,
                ef,
                lat,
                recall,
            }
        })
        .collect()
}

fn main() {
    let a = parse_args();
    let max_n = *a.sizes.iter().max().unwrap();
    let need = max_n + a.queries;
    let t0 = Instant::now();
    let all = match a.source.as_str() {
        "teacher" => load_teacher(&a.data.join("teacher"), need),
        s => match s.strip_prefix("npy:") {
            Some(path) => load_npy(Path::new(path), need),
            None => panic!("unknown --source {s} (teacher | npy:PATH)"),
        },
    };
    eprintln!(
        "loaded {need} × 384 vectors ({}) in {:.1?}",
        a.source,
        t0.elapsed()
    );
    println!(
        "source={} queries={} k={} M={} ef_construction={} threads=1",
        a.source, a.queries, a.k, a.m, a.ef_construction
    );
    println!();
    println!(
        "| N | dims | library | build CPU s | build wall s | build vec/CPU-s | bytes/vector | ef_search \
         | p50 CPU µs | p99 CPU µs | p50 wall µs | p99 wall µs | recall@{} |",
        a.k
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &dims in &a.dims {
        let vecs = prefix(&all, dims);
        let queries = &vecs[max_n * dims..need * dims];
        for &n in &a.sizes {
            let base = &vecs[..n * dims];
            let t = Instant::now();
            let truth = ground_truth(base, queries, dims, a.k);
            eprintln!("N={n} dims={dims}: ground truth in {:.1?}", t.elapsed());
            let mut rows = run_ours(&a, base, queries, dims, &truth);
            if a.hnsw_rs {
                rows.extend(run_hnsw_rs(&a, base, queries, dims, &truth));
            }
            for r in rows {
                let us = |d: Duration| d.as_secs_f64() * 1e6;
                println!(
                    "| {n} | {dims} | {} | {:.1} | {:.1} | {:.0} | {:.0} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.4} |",
                    r.lib,
                    r.build_cpu.as_secs_f64(),
                    r.build_wall.as_secs_f64(),
                    n as f64 / r.build_cpu.as_secs_f64(),
                    r.bytes as f64 / n as f64,
                    r.ef,
                    us(r.lat.cpu_p50),
                    us(r.lat.cpu_p99),
                    us(r.lat.wall_p50),
                    us(r.lat.wall_p99),
                    r.recall
                );
            }
        }
    }
}
