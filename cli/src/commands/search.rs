//! `lightembed search`: one query, or a JSON-lines batch, against an index or a site bundle.

use crate::args::SearchCommand;
use crate::search::SearchArgs;
use crate::warn;
use anyhow::Result;
use lightembed_index::{Fusion, SearchOptions};

/// Searches with the ranking flags of `c` ([`crate::search::search`]).
pub fn run(c: SearchCommand) -> Result<u8> {
    crate::search::search(SearchArgs {
        options: SearchOptions {
            page_weight: c.page_weight,
            ..search_options(
                &c.mode,
                c.fusion.as_deref(),
                c.vector_weight,
                c.rrf_k,
                c.candidates,
                c.all_passages,
            )?
        },
        index: c.index,
        model: c.model,
        k: c.k as usize,
        ef_search: c.ef_search.map(|e| e as usize),
        json: c.json,
        jsonl: c.jsonl,
        query: c.query.unwrap_or_default(),
    })
}

/// `lightembed search`'s ranking flags → [`SearchOptions`]. `--vector-weight` needs convex
/// fusion; a weight outside 0–1 is refused.
fn search_options(
    mode: &str,
    fusion: Option<&str>,
    vector_weight: Option<f32>,
    rrf_k: f32,
    candidates: usize,
    all_passages: bool,
) -> Result<SearchOptions> {
    let fusion_given = fusion.is_some();
    let fusion = match (fusion, vector_weight) {
        (Some("rrf"), Some(_)) => {
            anyhow::bail!("--vector-weight applies to --fusion convex, not rrf")
        }
        (Some("rrf"), None) => Fusion::Rrf { k: rrf_k },
        (_, Some(w)) => Fusion::Convex { vector_weight: w },
        (Some(_), None) => match Fusion::DEFAULT {
            f @ Fusion::Convex { .. } => f,
            Fusion::Rrf { .. } => Fusion::Convex { vector_weight: 0.5 },
        },
        (None, None) => Fusion::DEFAULT,
    };
    if mode != "hybrid" && (fusion_given || vector_weight.is_some()) {
        warn(&format!(
            "warning: --fusion and --vector-weight only apply to --mode hybrid; ignored in {mode} mode"
        ));
    }
    Ok(SearchOptions {
        mode: mode.parse().map_err(anyhow::Error::msg)?,
        fusion,
        candidates,
        ef_search: None,
        collapse_sections: !all_passages,
        ..SearchOptions::default()
    })
}
