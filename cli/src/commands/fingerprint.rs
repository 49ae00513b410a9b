//! `lightembed fingerprint`: detect which license a suspect model (or its vectors) was issued to,
//! print the probe set or a rotation. File I/O, embedding and printing here; the rotation, the
//! registry and the detection are [`crate::fingerprint`].

use crate::fingerprint::{
    detect, parse_registry, parse_seed, probe_lines, rotation, Candidate, Metric, Rule,
    EXIT_NO_MATCH, MAX_DISTANCE, MIN_MARGIN, PROBES,
};
use anyhow::{anyhow, bail, Context, Result};
use clap::{ArgGroup, Args, Subcommand};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `lightembed fingerprint …`
#[derive(Subcommand)]
pub enum FingerprintCommand {
    /// Identify which license a suspect model (or its output vectors) was issued to. Exit 0 on a
    /// match, 3 when no registry entry matches (or the suspect is the unfingerprinted model),
    /// 1 on errors, 2 on bad usage.
    Detect(DetectArgs),
    /// Print the built-in probe set, one text per line (embed these with a model seen only
    /// through its outputs, then pass the vectors to `detect --suspect-vectors`).
    Probes,
    /// Print the rotation R(seed, output_dim, matryoshka_dims) as JSON rows (for checking other
    /// implementations against docs/fingerprinting.md).
    Rotation(RotationArgs),
}

/// Arguments of `fingerprint detect`.
#[derive(Args)]
#[command(group(ArgGroup::new("source").required(true).args(["suspect", "suspect_vectors"])))]
pub struct DetectArgs {
    /// The suspect `.bin` model.
    #[arg(long)]
    pub suspect: Option<PathBuf>,
    /// The suspect's vectors instead of its model: JSONL, one `{"embedding": [...]}` per probe in
    /// probe order, all of one valid dims (a prefix such as 64 works: only its blocks are used).
    #[arg(long)]
    pub suspect_vectors: Option<PathBuf>,
    /// The plain (unfingerprinted) reference model of the same release.
    #[arg(long)]
    pub reference: PathBuf,
    /// The license registry (JSON, docs/fingerprinting.md).
    #[arg(long)]
    pub registry: PathBuf,
    /// Probe texts, one per line (default: the built-in set, `fingerprint probes`).
    #[arg(long)]
    pub probes: Option<PathBuf>,
    /// Compare only this prefix of the suspect model's vectors (a valid dims; default: all).
    #[arg(long)]
    pub dims: Option<usize>,
    /// Largest distance that still counts as a match.
    #[arg(long, default_value_t = MAX_DISTANCE)]
    pub max_distance: f64,
    /// Smallest gap between the best and the runner-up for a match.
    #[arg(long, default_value_t = MIN_MARGIN)]
    pub min_margin: f64,
    /// How candidates are scored against the recovered rotation.
    #[arg(long, value_enum, default_value_t = Metric::Weighted)]
    pub metric: Metric,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fingerprint rotation`.
#[derive(Args)]
pub struct RotationArgs {
    /// u64 seed, decimal or 0x-hex.
    #[arg(long)]
    pub seed: String,
    /// The model's output_dim.
    #[arg(long)]
    pub output_dim: usize,
    /// Used matryoshka_dims, comma-separated (e.g. 32,64,128,256).
    #[arg(long, value_delimiter = ',')]
    pub matryoshka_dims: Vec<usize>,
}

/// Runs a `fingerprint` subcommand; `Ok(code)` is the process exit code.
///
/// # Errors
/// Unreadable or invalid models, registry, probes or vectors (the caller exits 1).
pub fn run(command: FingerprintCommand) -> Result<u8> {
    match command {
        FingerprintCommand::Probes => {
            for line in probe_lines(PROBES) {
                outln!("{line}")?;
            }
            Ok(0)
        }
        FingerprintCommand::Rotation(a) => {
            let r = rotation(parse_seed(&a.seed)?, a.output_dim, &a.matryoshka_dims)?;
            let rows: Vec<Vec<f64>> = r
                .row_iter()
                .map(|row| row.iter().copied().collect())
                .collect();
            outln!("{}", serde_json::to_string(&rows)?)?;
            Ok(0)
        }
        FingerprintCommand::Detect(a) => run_detect(a),
    }
}

fn embed_all(model: &lightembed::Model, probes: &[&str], dims: usize) -> Result<Vec<Vec<f64>>> {
    probes
        .par_iter()
        .map(|t| {
            let v = model.embed(t, dims).map_err(|e| anyhow!("{e}"))?;
            Ok(v.into_iter().map(f64::from).collect())
        })
        .collect()
}

fn run_detect(a: DetectArgs) -> Result<u8> {
    let reference = crate::load(&a.reference)?.1;
    let h = reference.header();
    let output_dim = h.output_dim as usize;
    let mdims: Vec<usize> = h.matryoshka().iter().map(|&d| d as usize).collect();
    let registry_text = std::fs::read_to_string(&a.registry)
        .with_context(|| format!("cannot read {}", a.registry.display()))?;
    let registry =
        parse_registry(&registry_text).with_context(|| a.registry.display().to_string())?;
    let probe_text = match &a.probes {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => PROBES.to_string(),
    };
    let probes = probe_lines(&probe_text);
    if probes.is_empty() {
        bail!("the probe set is empty");
    }

    let mut suspect_header = Value::Null;
    let suspect: Vec<Vec<f64>> = if let Some(path) = &a.suspect_vectors {
        let v = read_vectors_jsonl(path)?;
        if v.len() != probes.len() {
            bail!(
                "{}: {} vectors for {} probes (one per probe, in order)",
                path.display(),
                v.len(),
                probes.len()
            );
        }
        v
    } else {
        let path = a
            .suspect
            .as_ref()
            .expect("clap requires --suspect or --suspect-vectors");
        let (_, model) = crate::load(path)?;
        if model.output_dim() != output_dim || model.valid_dims() != reference.valid_dims() {
            bail!(
                "{} (dims {:?}) and the reference (dims {:?}) are not the same release",
                path.display(),
                model.valid_dims(),
                reference.valid_dims()
            );
        }
        let sh = model.header();
        suspect_header =
            json!({"license_id": sh.license_id, "has_fingerprint": sh.flags.has_fingerprint()});
        let dims = a.dims.unwrap_or(output_dim);
        reference
            .check_dims(dims)
            .map_err(|e| anyhow!("--dims: {e}"))?;
        embed_all(&model, &probes, dims)?
    };
    let dims = suspect.first().map_or(0, Vec::len);
    reference
        .check_dims(dims)
        .map_err(|e| anyhow!("suspect vectors: {e}"))?;
    let ref_vecs = embed_all(&reference, &probes, dims)?;
    let rule = Rule {
        metric: a.metric,
        max_distance: a.max_distance,
        min_margin: a.min_margin,
    };
    let d = detect(&ref_vecs, &suspect, output_dim, &mdims, &registry, rule)?;

    if a.json {
        let mut doc = d.to_json();
        doc["suspect_header"] = suspect_header;
        outln!("{doc}")?;
    } else {
        let who = |c: &Candidate| {
            if c.license_id == 0 {
                "the unfingerprinted reference".to_string()
            } else {
                format!("license_id {}", c.license_id)
            }
        };
        outln!(
            "{}: best {} at distance {:.4}{}",
            d.verdict,
            who(&d.best),
            d.best.distance,
            d.runner_up
                .as_ref()
                .map(|r| format!(
                    ", runner-up {} at {:.4} (margin {:.4})",
                    who(r),
                    r.distance,
                    r.distance - d.best.distance
                ))
                .unwrap_or_default()
        )?;
        outln!(
            "  {} probes, {} blocks over {} dims, {} registry entries; match needs distance ≤ {} and margin ≥ {}",
            d.n_probes,
            d.blocks.len(),
            dims,
            registry.len(),
            d.max_distance,
            d.min_margin
        )?;
        if let Value::Object(h) = &suspect_header {
            outln!(
                "  suspect header (not trusted): license_id {}, has_fingerprint {}",
                h["license_id"],
                h["has_fingerprint"]
            )?;
        }
    }
    Ok(if d.verdict == "match" {
        0
    } else {
        EXIT_NO_MATCH
    })
}

/// Reads `{"embedding": [...]}` JSONL (blank lines skipped).
///
/// # Errors
/// I/O, a line that is not such an object.
pub fn read_vectors_jsonl(path: &Path) -> Result<Vec<Vec<f64>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not JSON", path.display(), n + 1))?;
        let row = v
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
            .ok_or_else(|| {
                anyhow!(
                    "{}:{}: expected {{\"embedding\": [numbers…]}}",
                    path.display(),
                    n + 1
                )
            })?;
        out.push(row);
    }
    Ok(out)
}
