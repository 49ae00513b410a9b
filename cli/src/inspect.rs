//! `lightembed inspect` / `verify` output: the header (spec §3), the section table with sizes (§4)
//! and the metadata (§5.8), as text or as one JSON object.

use lightembed::Model;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

/// `lightembed-en-2l v4.0.0, 2 layers, ternary/ternary, dims 32,64,128,256,384, sha256 1a2b…`.
pub fn one_line(m: &Model) -> String {
    let h = m.header();
    format!(
        "{} v{}, {}, embeddings {}, dims {}, sha256 {}",
        m.model_id(),
        h.model_version(),
        shape_word(m),
        h.embedding_quant.name(),
        dims_list(m),
        &m.sha256_hex()[..16],
    )
}

fn shape_word(m: &Model) -> String {
    let h = m.header();
    match h.n_layers {
        0 => "static".to_owned(),
        1 => format!("1 layer, {} weights", h.weight_quant),
        n => format!("{n} layers, {} weights", h.weight_quant),
    }
}

fn dims_list(m: &Model) -> String {
    lightembed::format::dims_list(m.valid_dims(), ",")
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Human-readable report.
pub fn text(path: &Path, bytes: &[u8], m: &Model) -> String {
    let h = m.header();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "file          {} ({} bytes)",
        path.display(),
        bytes.len()
    );
    let _ = writeln!(s, "sha256        {}", m.sha256_hex());
    let _ = writeln!(s, "format        v{}", h.format_version);
    let _ = writeln!(s, "model         {} v{}", m.model_id(), h.model_version());
    let _ = writeln!(
        s,
        "license       id {} · fingerprint {}",
        h.license_id,
        yes(h.flags.has_fingerprint())
    );
    if h.n_layers == 0 {
        let _ = writeln!(
            s,
            "shape         static · vocab {} · d_model {} · output {} · max_seq_len {}",
            h.vocab_size, h.d_model, h.output_dim, h.max_seq_len
        );
    } else {
        let _ = writeln!(
            s,
            "shape         {} layers · heads {} · ffn {} · vocab {} · d_model {} · output {} · max_seq_len {}",
            h.n_layers, h.n_heads, h.ffn_dim, h.vocab_size, h.d_model, h.output_dim, h.max_seq_len
        );
    }
    let weights = if h.n_layers == 0 {
        "n/a (static)".to_owned()
    } else {
        h.weight_quant.to_string()
    };
    let _ = writeln!(
        s,
        "quantisation  embeddings {} · weights {}",
        h.embedding_quant.name(),
        weights
    );
    let _ = writeln!(
        s,
        "dims          {}  (Matryoshka prefixes + output_dim)",
        dims_list(m).replace(',', " ")
    );
    let _ = writeln!(
        s,
        "tokenizer     WordPiece · lowercase {} · strip accents {}",
        yes(h.flags.do_lower_case()),
        yes(h.flags.strip_accents())
    );
    let _ = writeln!(s, "sections");
    let _ = writeln!(
        s,
        "  {:>5}  {:<18} {:>10} {:>12}  {:>6}",
        "type", "name", "offset", "length", "share"
    );
    for e in &m.sections().entries {
        let share = 100.0 * e.length as f64 / bytes.len() as f64;
        let _ = writeln!(
            s,
            "  {:>5}  {:<18} {:>10} {:>12}  {:>5.1}%",
            e.section_type.to_u16(),
            e.section_type.name(),
            e.offset,
            e.length,
            share
        );
    }
    match m.metadata() {
        None => {
            let _ = writeln!(s, "metadata      (none)");
        }
        Some(md) => {
            let _ = writeln!(s, "metadata");
            let pretty = serde_json::from_str::<Value>(md)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| md.to_owned());
            for line in pretty.lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    s
}

/// One JSON object (pretty-printed) with the same content as [`text`].
pub fn json(path: &Path, bytes: &[u8], m: &Model) -> String {
    let h = m.header();
    let sections: Vec<Value> = m
        .sections()
        .entries
        .iter()
        .map(|e| {
            json!({
                "type": e.section_type.to_u16(),
                "name": e.section_type.name(),
                "offset": e.offset,
                "length": e.length,
            })
        })
        .collect();
    let metadata = m.metadata().map(|md| {
        serde_json::from_str::<Value>(md).unwrap_or_else(|_| Value::String(md.to_owned()))
    });
    let v = json!({
        "file": path.display().to_string(),
        "size": bytes.len(),
        "sha256": m.sha256_hex(),
        "header": {
            "format_version": h.format_version,
            "embedding_quant": h.embedding_quant.name(),
            "weight_quant": h.weight_quant.to_string(),
            "vocab_size": h.vocab_size,
            "d_model": h.d_model,
            "n_layers": h.n_layers,
            "n_heads": h.n_heads,
            "ffn_dim": h.ffn_dim,
            "output_dim": h.output_dim,
            "max_seq_len": h.max_seq_len,
            "n_matryoshka": h.n_matryoshka,
            "matryoshka_dims": h.matryoshka(),
            "flags": {
                "raw": h.flags.0,
                "has_fingerprint": h.flags.has_fingerprint(),
                "do_lower_case": h.flags.do_lower_case(),
                "strip_accents": h.flags.strip_accents(),
            },
            "license_id": h.license_id,
            "model_version": h.model_version().to_string(),
            "model_id": m.model_id(),
        },
        "valid_dims": m.valid_dims(),
        "sections": sections,
        "metadata": metadata,
    });
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
    out.push('\n');
    out
}
