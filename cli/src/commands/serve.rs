//! `lightembed serve`: runs [`lightembed_serve::run`] on a tokio runtime until Ctrl-C / SIGTERM.

use crate::args::ServeCommand;
use anyhow::{anyhow, bail, Result};

/// Serves until stopped; exit 0 after a clean shutdown.
pub fn run(c: ServeCommand) -> Result<u8> {
    let database_url = match c
        .database_url
        .or_else(|| std::env::var("DATABASE_URL").ok())
    {
        Some(url) if !url.is_empty() => url,
        _ => bail!("no database: give --database-url or set DATABASE_URL"),
    };
    let config = lightembed_serve::Config {
        database_url,
        listen: c.listen,
        cors_origins: c.cors_origins,
        table_prefix: c.table_prefix,
        statement_timeout_ms: c.statement_timeout_ms,
        pool_size: c.pool_size as usize,
        max_body_bytes: c.max_body_bytes as usize,
        max_k: c.max_k as usize,
        ef_search: c.ef_search as usize,
        candidates: c.candidates as usize,
        keyword_blocks: c.keyword_blocks as usize,
        ..lightembed_serve::Config::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("tokio runtime: {e}"))?;
    rt.block_on(lightembed_serve::run(config))
        .map_err(|e| anyhow!(e))?;
    Ok(0)
}
