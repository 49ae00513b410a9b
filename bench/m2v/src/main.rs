//! lightembed's static path against model2vec-rs 0.4.0 on provably the same vectors (issue 35).
//!
//! ```text
//! lightembed-bench-m2v export  MODEL.bin DIR            # the equivalent model2vec folder
//! lightembed-bench-m2v compare MODEL.bin DIR SENTENCES [REPS]
//! lightembed-bench-m2v rss ours|m2v MODEL.bin|DIR SENTENCES
//! ```
//!
//! `export` writes `T[t] = W·LN(e_t) + b` for every token (`vocab × output_dim` fp32, computed by
//! our engine: `project_ids(&[t])`, the mean of one row) as `model.safetensors`, our WordPiece
//! settings as a `tokenizer.json` (BertNormalizer + BertPreTokenizer + WordPiece, the special
//! tokens as added tokens) and `config.json` (`normalize: true`). The mean of `T` over a
//! sentence's ids is then our projected mean, so both engines embed to the same vector up to
//! float rounding. Two differences remain and are handled in the open: model2vec adds no
//! `[CLS]`/`[SEP]`, so it is given `"[CLS]" + text + "[SEP]"` (its tokenizer matches added tokens
//! in the raw text: the same ids as ours), and it drops `[UNK]` tokens, so sentences with `[UNK]`
//! are left out of the agreement figure (still timed).
//!
//! `compare` runs both engines in this process (run it under `taskset -c 0` with
//! `TOKENIZERS_PARALLELISM=false`: one core each), repetitions interleaved, and prints the median
//! sentences/s of each for single-sentence calls and for one batch call over all sentences, the
//! ratio (model2vec-rs time / ours: ≤ 1.0 means ours is at least as fast… printed both ways), and
//! the mean cosine between the two engines' vectors. `rss` loads one engine only, embeds every
//! sentence, and prints the peak resident set (`VmHWM`), then (ours) after a full-vocabulary fill.

use std::time::Instant;

use lightembed::Model;
use model2vec_rs::model::StaticModel;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["export", model, dir] => export(&load(model), dir),
        ["compare", model, dir, sentences, rest @ ..] => {
            let reps = rest.first().map_or(7, |r| r.parse().expect("REPS is a number"));
            compare(model, dir, sentences, reps)
        }
        ["rss", which, path, sentences] => rss(which, path, sentences),
        _ => {
            eprintln!("usage: lightembed-bench-m2v export MODEL.bin DIR | compare MODEL.bin DIR SENTENCES [REPS] | rss ours|m2v MODEL.bin|DIR SENTENCES");
            std::process::exit(2);
        }
    }
}

fn load(path: &str) -> Model {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn sentences(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn export(model: &Model, dir: &str) {
    assert_eq!(model.header().n_layers, 0, "export needs a static model");
    std::fs::create_dir_all(dir).unwrap();
    let tok = model.tokenizer();
    let cfg = tok.config();
    let vocab: Vec<&str> = (0..tok.vocab_size() as u32)
        .map(|id| tok.id_to_token(id).unwrap())
        .collect();
    let od = model.output_dim();

    // Table: row t = W·LN(e_t) + b, our engine's projection of the one-token sequence [t].
    let mut table: Vec<u8> = Vec::with_capacity(vocab.len() * od * 4);
    for t in 0..vocab.len() as u32 {
        for x in model.project_ids(&[t]).unwrap() {
            table.extend_from_slice(&x.to_le_bytes());
        }
    }
    let view = safetensors::tensor::TensorView::new(
        safetensors::Dtype::F32,
        vec![vocab.len(), od],
        &table,
    )
    .unwrap();
    safetensors::serialize_to_file(
        [("embeddings", view)],
        &None,
        std::path::Path::new(&format!("{dir}/model.safetensors")),
    )
    .unwrap();

    let specials = [
        cfg.pad_token_id,
        cfg.unk_token_id,
        cfg.cls_token_id,
        cfg.sep_token_id,
        cfg.mask_token_id,
    ];
    let added: Vec<serde_json::Value> = specials
        .iter()
        .map(|&id| {
            serde_json::json!({"id": id, "content": vocab[id as usize], "single_word": false,
                "lstrip": false, "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let vocab_map: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), serde_json::json!(i)))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": cfg.strip_accents, "lowercase": cfg.do_lower_case},
        "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordPiece", "unk_token": vocab[cfg.unk_token_id as usize],
            "continuing_subword_prefix": cfg.continuing_subword_prefix,
            "max_input_chars_per_word": cfg.max_input_chars_per_word, "vocab": vocab_map},
    });
    std::fs::write(format!("{dir}/tokenizer.json"), tokenizer.to_string()).unwrap();
    std::fs::write(
        format!("{dir}/config.json"),
        serde_json::json!({"model_type": "model2vec", "normalize": true, "hidden_dim": od})
            .to_string(),
    )
    .unwrap();
    eprintln!(
        "{dir}: {} × {od} fp32 table ({:.1} MB), tokenizer.json, config.json",
        vocab.len(),
        table.len() as f64 / 1e6
    );
}

/// model2vec's input for `text`: the specials as raw text, matched as added tokens.
fn wrapped(model: &Model, text: &str) -> String {
    let (tok, cfg) = (model.tokenizer(), model.tokenizer().config());
    format!(
        "{}{text}{}",
        tok.id_to_token(cfg.cls_token_id).unwrap(),
        tok.id_to_token(cfg.sep_token_id).unwrap()
    )
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn compare(model_path: &str, dir: &str, sentences_path: &str, reps: usize) {
    let ours = load(model_path);
    let theirs = StaticModel::from_pretrained(dir, None, None, None).expect("model2vec folder");
    let texts = sentences(sentences_path);
    let inputs: Vec<String> = texts.iter().map(|t| wrapped(&ours, t)).collect();
    let od = ours.output_dim();
    assert_eq!(theirs.dim(), od);
    let n = texts.len() as f64;

    // Agreement first (this also fills our cache: the cold pass is timed separately below).
    let cold = Instant::now();
    let ours_vecs: Vec<Vec<f32>> = texts.iter().map(|t| ours.embed(t, od).unwrap()).collect();
    let cold_s = cold.elapsed().as_secs_f64();
    let unk = ours.tokenizer().config().unk_token_id;
    let (mut sum, mut worst, mut kept, mut ids_differ) = (0f64, 1f64, 0usize, 0usize);
    for ((t, input), a) in texts.iter().zip(&inputs).zip(&ours_vecs) {
        if ours.tokenize(t).contains(&unk) {
            continue;
        }
        let b = theirs.encode_single(input);
        let cos: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum::<f64>()
            / (b.iter().map(|&y| (y as f64).powi(2)).sum::<f64>().sqrt());
        if cos < 0.9999 {
            ids_differ += 1;
        }
        sum += cos;
        worst = worst.min(cos);
        kept += 1;
    }

    let (mut o1, mut m1, mut ob, mut mb, mut tk) = (vec![], vec![], vec![], vec![], vec![]);
    let mut pooled = vec![];
    let all_ids: Vec<Vec<u32>> = texts.iter().map(|t| ours.tokenize(t)).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut sink = 0f32;
    for _ in 0..reps {
        let t = Instant::now();
        for s in &texts {
            sink += ours.embed(s, od).unwrap()[0];
        }
        o1.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for s in &inputs {
            sink += theirs.encode_single(s)[0];
        }
        m1.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut ids = Vec::new();
        for s in &texts {
            ours.tokenizer().encode_into(s, &mut ids);
            sink += ids[0] as f32;
        }
        tk.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for ids in &all_ids {
            sink += ours.embed_ids(ids, od).unwrap()[0];
        }
        pooled.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        sink += ours.embed_batch(&refs, od).unwrap()[0][0];
        ob.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        sink += theirs.encode(&inputs)[0][0];
        mb.push(t.elapsed().as_secs_f64());
    }
    let (o1, m1, ob, mb) = (median(&mut o1), median(&mut m1), median(&mut ob), median(&mut mb));
    let tk = median(&mut tk);
    let pooled = median(&mut pooled);
    println!(
        "{} sentences, {reps} interleaved repetitions, dims {od}, one process (pin it: taskset -c 0)",
        texts.len()
    );
    println!("| call | lightembed sentences/s | model2vec-rs sentences/s | time ratio lightembed / model2vec-rs |");
    println!("|---|---:|---:|---:|");
    println!(
        "| single sentence (`embed` / `encode_single`) | {:.0} | {:.0} | {:.3} |",
        n / o1,
        n / m1,
        o1 / m1
    );
    println!(
        "| one batch (`embed_batch` / `encode`) | {:.0} | {:.0} | {:.3} |",
        n / ob,
        n / mb,
        ob / mb
    );
    println!(
        "lightembed tokenisation alone: {:.2} µs per sentence ({:.0} % of a single call)",
        tk / n * 1e6,
        100.0 * tk / o1
    );
    println!(
        "lightembed rows summed and normalised alone (`embed_ids` on tokenised text): {:.2} µs per sentence",
        pooled / n * 1e6
    );
    println!(
        "lightembed cold pass (empty row cache, single calls): {:.0} sentences/s; rows cached after it: {}",
        n / cold_s,
        ours.static_rows_cached()
    );
    println!(
        "agreement on {kept} sentences without [UNK] ({} left out): mean cosine {:.9}, min {:.9}, {ids_differ} below 0.9999",
        texts.len() - kept,
        sum / kept as f64,
        worst
    );
    if sink.is_nan() {
        println!("(sink {sink})");
    }
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn rss(which: &str, path: &str, sentences_path: &str) {
    let texts = sentences(sentences_path);
    let mib = |k: u64| k as f64 / 1024.0;
    match which {
        "ours" => {
            let model = load(path);
            let od = model.output_dim();
            let mut sink = 0f32;
            for t in &texts {
                sink += model.embed(t, od).unwrap()[0];
            }
            let cached_before = model.static_rows_cached();
            println!(
                "lightembed: peak RSS {:.1} MiB after {} sentences ({} rows cached, {:.1} MB)",
                mib(vm_hwm_kib()),
                texts.len(),
                model.static_rows_cached(),
                (model.static_rows_cached() * od * 4) as f64 / 1e6
            );
            let t = Instant::now();
            model.prepare_static_rows();
            let fill = t.elapsed().as_secs_f64();
            println!(
                "lightembed: peak RSS {:.1} MiB after a full-vocabulary fill ({} rows, {:.2} s, {:.1} µs per new row){}",
                mib(vm_hwm_kib()),
                model.static_rows_cached(),
                fill,
                fill * 1e6 / (model.static_rows_cached() - cached_before) as f64,
                if sink.is_nan() { " nan" } else { "" }
            );
        }
        "m2v" => {
            let model = StaticModel::from_pretrained(path, None, None, None).unwrap();
            let mut sink = 0f32;
            for t in &texts {
                sink += model.encode_single(t)[0];
            }
            println!(
                "model2vec-rs: peak RSS {:.1} MiB after {} sentences{}",
                mib(vm_hwm_kib()),
                texts.len(),
                if sink.is_nan() { " nan" } else { "" }
            );
        }
        _ => panic!("rss ours|m2v"),
    }
}
