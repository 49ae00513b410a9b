//! Single-thread embedding throughput on 10–40-token English sentences (`bench/sentences.txt`,
//! 1,000 sentences from the Python docs) for models of the spec's §9 shape: vocab 30,522
//! (bert-base-uncased WordPiece), d_model 256, output 384, Matryoshka [32, 64, 128, 256]:
//!
//! * `static-*`: n_layers 0, one per embedding quantisation;
//! * `2l-ternary-*`: 2 ternary BitLinear layers, 4 heads, ffn 1024;
//! * the shipped models in `public/models/*.bin`, when present.
//!
//! The synthetic models have seeded random weights (speed does not depend on their values beyond
//! the ternary sparsity, which AbsMedian fixes at ≈ 50 % zeros). Run:
//! `cargo bench -p lightembed --bench embed` (throughput is reported as elements = sentences).
//!
//! Time is the benchmark thread's **CPU time** (`CLOCK_THREAD_CPUTIME_ID`), not wall time: the
//! figures are single-thread sentences per CPU-second, unaffected by other processes competing
//! for the cores (our build machines are shared). Set `LIGHTEMBED_BENCH_WALL=1` for wall time.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use lightembed::writer::{blank_header, EmbeddingData, LayerData, LinearData, ModelBuilder};
use lightembed::{EmbeddingQuant, Flags, Model, WeightQuant};
use std::hint::black_box;
use std::path::Path;

const VOCAB: &str = include_str!("../../tests/fixtures/tokenizer/vocab.txt");
const SENTENCES: &str = include_str!("../../bench/sentences.txt");

/// xorshift64* → uniform in [-1, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.next() * scale).collect()
    }
}

/// A §9-shaped model with `n_layers` ternary layers and the given embedding quantisation. With
/// `LIGHTEMBED_BENCH_WRITE_MODELS=DIR` the file is also written to `DIR/NAME.bin` so the wasm
/// benchmark (`bench/engine.sh`) runs the very same model.
fn synthetic(name: &str, n_layers: usize, eq: EmbeddingQuant) -> Model {
    let (d, ffn, out) = (256usize, 1024usize, 384usize);
    let vocab: Vec<String> = VOCAB.lines().map(str::to_owned).collect();
    let id = |t: &str| vocab.iter().position(|v| v == t).unwrap() as u32;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut h = blank_header();
    h.embedding_quant = eq;
    h.weight_quant = WeightQuant::Ternary;
    h.vocab_size = vocab.len() as u32;
    h.d_model = d as u16;
    h.n_layers = n_layers as u8;
    h.n_heads = if n_layers > 0 { 4 } else { 0 };
    h.ffn_dim = if n_layers > 0 { ffn as u16 } else { 0 };
    h.output_dim = out as u16;
    h.max_seq_len = 128;
    h.n_matryoshka = 4;
    h.matryoshka_dims = [32, 64, 128, 256, 0, 0, 0, 0];
    h.flags = Flags(0b110);
    h.version_major = 1;
    h.model_id_bytes = *b"bench-synthetic\0";
    let table = rng.vec(vocab.len() * d, 0.1);
    let lin = |rng: &mut Rng, o: usize, i: usize, bias: bool| {
        LinearData::from_f32(&rng.vec(o * i, 0.05), true, bias.then(|| rng.vec(o, 0.01)))
    };
    let layers = (0..n_layers)
        .map(|_| LayerData {
            ln1_weight: vec![1.0; d],
            ln1_bias: vec![0.0; d],
            q: lin(&mut rng, d, d, false),
            k: lin(&mut rng, d, d, false),
            v: lin(&mut rng, d, d, false),
            out: lin(&mut rng, d, d, true),
            ln2_weight: vec![1.0; d],
            ln2_bias: vec![0.0; d],
            up: lin(&mut rng, ffn, d, true),
            down: lin(&mut rng, d, ffn, true),
        })
        .collect();
    let builder = ModelBuilder {
        header: h,
        special_ids: [
            id("[UNK]"),
            id("[CLS]"),
            id("[SEP]"),
            id("[PAD]"),
            id("[MASK]"),
        ],
        vocab,
        max_input_chars_per_word: 100,
        continuing_subword_prefix: "##".to_owned(),
        embeddings: EmbeddingData::quantize(&table, d, eq),
        layers,
        final_ln_weight: vec![1.0; d],
        final_ln_bias: vec![0.0; d],
        projection_weight: rng.vec(out * d, 0.06),
        projection_bias: rng.vec(out, 0.01),
        metadata: None,
        extra_sections: Vec::new(),
        section_order: None,
    };
    let bytes = builder.build().expect("valid synthetic model");
    if let Ok(dir) = std::env::var("LIGHTEMBED_BENCH_WRITE_MODELS") {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("synthetic-{name}.bin")), &bytes).unwrap();
    }
    Model::from_bytes(&bytes).expect("loads")
}

/// CPU time consumed by the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Criterion measurement: thread CPU time (ns), or wall time with `LIGHTEMBED_BENCH_WALL=1`.
struct CpuTime {
    wall: bool,
}

impl CpuTime {
    fn now(&self) -> u64 {
        if self.wall {
            use std::time::{SystemTime, UNIX_EPOCH};
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        } else {
            thread_cpu_ns()
        }
    }
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        self.now()
    }
    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

/// Formats nanoseconds and elements/s like criterion's wall-time formatter.
struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let n = match *throughput {
            Throughput::Elements(n)
            | Throughput::Bytes(n)
            | Throughput::BytesDecimal(n)
            | Throughput::Bits(n) => n as f64,
        };
        values.iter_mut().for_each(|v| *v = n * 1e9 / *v);
        "elem/s"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn bench_model(c: &mut Criterion<CpuTime>, name: &str, model: &Model) {
    let sentences: Vec<&str> = SENTENCES.lines().collect();
    let dims = model.output_dim();
    let mut g = c.benchmark_group("embed");
    g.throughput(Throughput::Elements(sentences.len() as u64));
    g.sample_size(10);
    g.bench_function(name, |b| {
        b.iter(|| {
            for s in &sentences {
                black_box(model.embed(black_box(s), dims).unwrap());
            }
        })
    });
    g.finish();
    let mut t: BenchmarkGroup<'_, CpuTime> = c.benchmark_group("tokenize");
    t.throughput(Throughput::Elements(sentences.len() as u64));
    t.sample_size(10);
    if name.starts_with("static-int8") {
        t.bench_function("bert-base-uncased", |b| {
            b.iter(|| {
                for s in &sentences {
                    black_box(model.tokenize(black_box(s)));
                }
            })
        });
    }
    t.finish();
}

fn benches(c: &mut Criterion<CpuTime>) {
    for (name, eq) in [
        ("static-fp32", EmbeddingQuant::Fp32),
        ("static-int8", EmbeddingQuant::Int8),
        ("static-int4", EmbeddingQuant::Int4),
        ("static-ternary", EmbeddingQuant::Ternary),
    ] {
        bench_model(c, name, &synthetic(name, 0, eq));
    }
    for (name, eq) in [
        ("2l-ternary-int4emb", EmbeddingQuant::Int4),
        ("2l-ternary-ternemb", EmbeddingQuant::Ternary),
    ] {
        bench_model(c, name, &synthetic(name, 2, eq));
    }
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../public/models");
    if let Ok(dir) = std::fs::read_dir(&models) {
        let mut files: Vec<_> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            if let Ok(m) = Model::from_bytes(&bytes) {
                bench_model(c, f.file_stem().unwrap().to_str().unwrap(), &m);
            }
        }
    }
}

fn config() -> Criterion<CpuTime> {
    let wall = std::env::var("LIGHTEMBED_BENCH_WALL").is_ok_and(|v| v == "1");
    Criterion::default().with_measurement(CpuTime { wall })
}

criterion_group! {
    name = embed;
    config = config();
    targets = benches
}
criterion_main!(embed);
