//! `lightembed` — the command-line tool: inspect, verify, tokenize and embed with `.bin` v1 models.
//!
//! Exit codes: 0 success; 1 a model, input or I/O error (one line on stderr); 2 bad usage.

mod fingerprint;
mod inspect;
mod jsonl;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lightembed",
    version,
    about = "Inspect, verify and run lightembed .bin v1 sentence-embedding models",
    after_help = "Examples:\n  lightembed inspect public/models/lightembed-en-2l.bin\n  lightembed verify model.bin\n  echo '{\"id\":1,\"text\":\"hello world\"}' | lightembed embed --model model.bin --dims 128 --jsonl -"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the header, the section table (offsets and sizes) and the metadata of a model.
    Inspect {
        /// The `.bin` model file.
        model: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check a model against every load rule (SHA-256 trailer, header, sections). Exit 0 if it
    /// loads; otherwise exit 1 with a one-line reason on stderr.
    Verify {
        /// The `.bin` model file.
        model: PathBuf,
    },
    /// Tokenize texts: one `{"ids": [...]}` line per input (an input "id" is echoed).
    Tokenize {
        /// The `.bin` model file whose vocabulary and tokenizer flags to use.
        #[arg(long)]
        model: PathBuf,
        /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
        #[arg(long)]
        jsonl: bool,
        /// Input file, or `-` for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Embed texts: one `{"embedding": [...]}` line per input, in input order (an input "id" is
    /// echoed). Vectors are L2-normalised; runs on all cores.
    Embed {
        /// The `.bin` model file.
        #[arg(long)]
        model: PathBuf,
        /// Matryoshka dims of the output (default: the model's output_dim).
        #[arg(long)]
        dims: Option<usize>,
        /// Input lines are JSON objects with a "text" field (otherwise each line is a text).
        #[arg(long)]
        jsonl: bool,
        /// Input file, or `-` for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Customer fingerprints (spec §7): detect which license a suspect model was issued to.
    #[command(subcommand)]
    Fingerprint(fingerprint::FingerprintCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // One line: the outermost context and its causes, joined.
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(1)
        }
    }
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Inspect { model, json } => {
            let (bytes, m) = load(&model)?;
            let out = if json { inspect::json(&model, &bytes, &m) } else { inspect::text(&model, &bytes, &m) };
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { model } => {
            let (_, m) = load(&model)?;
            println!("ok: {} ({})", model.display(), inspect::one_line(&m));
            Ok(ExitCode::SUCCESS)
        }
        Command::Tokenize { model, jsonl, input } => {
            let (_, m) = load(&model)?;
            jsonl::run(&input, jsonl, |text| {
                let ids = m.tokenize(text);
                Ok(format!("\"ids\":{}", serde_json::to_string(&ids)?))
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Embed { model, dims, jsonl, input } => {
            let (_, m) = load(&model)?;
            let dims = dims.unwrap_or(m.header().output_dim as usize);
            // Validate dims once up front so the error names the valid set before any input is read.
            m.embed("", dims).map_err(|e| anyhow::anyhow!("{e}"))?;
            jsonl::run(&input, jsonl, |text| {
                let v = m.embed(text, dims).map_err(|e| anyhow::anyhow!("{e}"))?;
                // serde_json writes f32 in its shortest round-trip form.
                Ok(format!("\"embedding\":{}", serde_json::to_string(&v)?))
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fingerprint(command) => fingerprint::run(command),
    }
}

/// Reads and fully validates a model file; errors name the file.
fn load(path: &Path) -> Result<(Vec<u8>, lightembed::Model)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let model = lightembed::Model::from_bytes(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((bytes, model))
}
