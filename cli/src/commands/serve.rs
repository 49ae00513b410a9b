//! `lightembed serve`: runs [`lightembed_serve::run`] on a tokio runtime until Ctrl-C / SIGTERM.
//! The command exists in every build, so `--help` is the same everywhere (the npm package's
//! WASI build is tested against the native one); builds without the `serve` feature, and the
//! WASI build, refuse to run it.

use crate::args::ServeCommand;
use anyhow::Result;

/// Serves until stopped; exit 0 after a clean shutdown.
#[cfg(all(feature = "serve", not(target_family = "wasm")))]
pub fn run(c: ServeCommand) -> Result<u8> {
    use anyhow::{anyhow, bail};
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

/// This build has no server: an error saying which builds have one.
#[cfg(not(all(feature = "serve", not(target_family = "wasm"))))]
pub fn run(_: ServeCommand) -> Result<u8> {
    anyhow::bail!(
        "`lightembed serve` is not in this build (it needs a network server): use the native CLI \
         (cargo build --release -p lightembed-cli) or the Python package's console script"
    )
}
