//! `lightembed serve`: a small stateless HTTP search service over PostgreSQL + pgvector.
//!
//! The browser (the site widget, the app) embeds the query itself and sends its text and vector;
//! this service checks the request ([`request`]), checks the vector's model against the loaded
//! passages' model (spec §8, [`lightembed_index::Manifest::check_compatible`], its message), and
//! ranks in one SQL statement ([`sql`]: the hybrid ranking of `lightembed-index`, one hit per
//! section). It keeps no state of its own: the database holds the passages and their model, so
//! any number of copies can run behind a load balancer.
//!
//! ```text
//! POST /search  {"query": "read a file", "vector": [… dims floats …],
//!                "model": {"id": "lightembed-en-0l", "version": "4.0.0", "dims": 128,
//!                          "sha256": "<64 hex>"}, "k": 10, "excerpt_chars": 180 (optional)}
//! 200 {"hits": [{"rank", "score", "id", "title", "url", "page_title", "heading", "snippet",
//!                "highlights": [[start, end] byte offsets into snippet]…], "warnings": […]}
//! 4xx/5xx {"error": "…"}
//! GET /health   200 {"status": "ok", "model_id", "model_version", "dims", "count"}
//! ```
//!
//! Tables: `serve/sql/schema.sql`, written by the Python loader (`lightembed.pg.load`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use lightembed_index::keywords::{terms_with, B, K1};
use lightembed_index::snippet::{excerpt, head};
use lightembed_index::{Fusion, Manifest, Metric, ModelIdentity, PAGE_WEIGHT};
use serde_json::json;
use tower_http::cors::{AllowOrigin, CorsLayer};

pub mod error;
pub mod request;
pub mod sql;

pub use error::ApiError;
use request::{Limits, SearchRequest};

/// How the service runs. [`Config::default`] is the CLI's defaults.
#[derive(Debug, Clone)]
pub struct Config {
    /// `postgresql://…` or `host=… user=…` (libpq's forms).
    pub database_url: String,
    /// Address to listen on; default `127.0.0.1:8787` (loopback: put a reverse proxy in front to
    /// serve others).
    pub listen: SocketAddr,
    /// Origins allowed by CORS (`https://docs.example.org`); empty: no CORS headers, so only
    /// same-origin pages (or non-browser clients) can call it.
    pub cors_origins: Vec<String>,
    /// Table-name prefix: `{prefix}_passages`, `{prefix}_model`.
    pub table_prefix: String,
    /// PostgreSQL `statement_timeout` of every connection, milliseconds.
    pub statement_timeout_ms: u64,
    /// Connections in the pool.
    pub pool_size: usize,
    /// How long a request waits for a free connection before 503, milliseconds.
    pub pool_wait_ms: u64,
    /// Largest request body, bytes (413 above).
    pub max_body_bytes: usize,
    /// Largest `k`.
    pub max_k: usize,
    /// Longest query text, bytes.
    pub max_query_bytes: usize,
    /// Candidates per side before fusing ([`lightembed_index::SearchOptions::candidates`]).
    pub candidates: usize,
    /// HNSW beam (`hnsw.ef_search`, at least the candidates).
    pub ef_search: usize,
    /// Postings blocks (1,024 each) read per query term: the keyword side is exact while no
    /// query term is in more than `1024 × keyword_blocks` passages (default 8: 8,192), else it
    /// takes the term's best-weighted passages (docs/scale-out.md).
    pub keyword_blocks: usize,
    /// Snippet length in characters: the first this many of the passage's text, cut at a word,
    /// as `lightembed index --snippet-chars` stores it (default 400).
    pub snippet_chars: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: String::new(),
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            cors_origins: Vec::new(),
            table_prefix: "lightembed".into(),
            statement_timeout_ms: 2_000,
            pool_size: 16,
            pool_wait_ms: 2_000,
            max_body_bytes: 64 * 1024,
            max_k: 100,
            max_query_bytes: 1_000,
            candidates: 50,
            ef_search: 96,
            keyword_blocks: 8,
            snippet_chars: 400,
        }
    }
}

/// What a handler needs: the pool and the settings.
struct AppState {
    pool: Pool,
    config: Config,
    search_sql: [String; 2],
    model_sql: String,
}

/// The model table's row.
struct Loaded {
    manifest: Manifest,
    keyword_stemming: bool,
    vector_type: &'static str,
}

/// Builds the pool (no connection is opened until the first request) and the router. Errors:
/// a malformed `database_url`, a bad table prefix, a bad CORS origin.
pub fn app(config: Config) -> Result<Router, String> {
    sql::check_prefix(&config.table_prefix)?;
    let mut pg: tokio_postgres::Config = config
        .database_url
        .parse()
        .map_err(|e| format!("--database-url: {e}"))?;
    // Every session: the statement timeout, read-only, and the HNSW beam most requests need
    // (a request whose k needs a wider beam sets it for its own transaction, `run_search`).
    pg.options(format!(
        "-c statement_timeout={} -c default_transaction_read_only=on -c hnsw.ef_search={}",
        config.statement_timeout_ms,
        session_ef(&config)
    ));
    pg.application_name("lightembed-serve");
    pg.connect_timeout(Duration::from_millis(config.pool_wait_ms.max(1)));
    let manager = Manager::from_config(
        pg,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(config.pool_size.max(1))
        .wait_timeout(Some(Duration::from_millis(config.pool_wait_ms)))
        .create_timeout(Some(Duration::from_millis(config.pool_wait_ms.max(1))))
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(|e| format!("connection pool: {e}"))?;
    let cors = cors_layer(&config.cors_origins)?;
    let p = &config.table_prefix;
    let state = Arc::new(AppState {
        search_sql: [
            sql::hybrid_search(p, "vector"),
            sql::hybrid_search(p, "halfvec"),
        ],
        model_sql: sql::model_row(p),
        pool,
        config: config.clone(),
    });
    let mut router = Router::new()
        .route("/search", post(search))
        .route("/health", get(health))
        .fallback(|| async {
            ApiError {
                status: StatusCode::NOT_FOUND,
                message: "not found: the service answers POST /search and GET /health".into(),
            }
        })
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .with_state(state);
    if let Some(cors) = cors {
        router = router.layer(cors);
    }
    Ok(router)
}

/// The HNSW beam every session starts with: `max(ef_search, candidates)`, pgvector's 1..=1000.
fn session_ef(config: &Config) -> usize {
    config.ef_search.max(config.candidates).clamp(1, 1000)
}

/// The CORS layer for `origins` (`None` when empty: no CORS headers at all).
fn cors_layer(origins: &[String]) -> Result<Option<CorsLayer>, String> {
    if origins.is_empty() {
        return Ok(None);
    }
    let mut list = Vec::new();
    for o in origins {
        if o == "*" {
            return Err("--cors-origin '*': name each origin (https://docs.example.org)".into());
        }
        let ok = (o.starts_with("https://") || o.starts_with("http://")) && !o.ends_with('/');
        let v = HeaderValue::from_str(o)
            .ok()
            .filter(|_| ok)
            .ok_or_else(|| {
                format!("--cors-origin {o:?}: expected scheme://host[:port], no path")
            })?;
        list.push(v);
    }
    Ok(Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(list))
            .allow_methods([Method::POST, Method::GET])
            .allow_headers([header::CONTENT_TYPE])
            .max_age(Duration::from_secs(600)),
    ))
}

/// Serves `config` until Ctrl-C / SIGTERM. Prints the address it listens on to stderr.
pub async fn run(config: Config) -> Result<(), String> {
    let listen = config.listen;
    let router = app(config)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "lightembed serve: listening on {addr}, not loopback: anyone who reaches it can search"
        );
    }
    eprintln!("lightembed serve: listening on http://{addr}/ (POST /search, GET /health)");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown())
        .await
        .map_err(|e| format!("server: {e}"))
}

async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// A pooled connection, or 503.
async fn connection(state: &AppState) -> Result<deadpool_postgres::Object, ApiError> {
    state.pool.get().await.map_err(|e| {
        ApiError::unavailable(
            StatusCode::SERVICE_UNAVAILABLE,
            "no database connection is free or the database is unreachable; retry later",
            &e,
        )
    })
}

/// The model row, parsed. A table written by another loader version is a 500 with a message.
async fn loaded(state: &AppState, client: &tokio_postgres::Client) -> Result<Loaded, ApiError> {
    let rows = client
        .query(state.model_sql.as_str(), &[])
        .await
        .map_err(|e| ApiError::from_db(&e))?;
    let row = rows.first().ok_or_else(|| {
        ApiError::unavailable(
            StatusCode::SERVICE_UNAVAILABLE,
            "no passages are loaded (run the loader: lightembed.pg.load)",
            &"the model table is empty",
        )
    })?;
    let bad = |what: &str| {
        ApiError::internal(
            "the model table is not one this server reads",
            &what.to_string(),
        )
    };
    let schema: i32 = row.try_get(0).map_err(|e| bad(&e.to_string()))?;
    if schema != sql::SCHEMA_VERSION {
        return Err(bad(&format!(
            "schema_version {schema}, this server reads {}",
            sql::SCHEMA_VERSION
        )));
    }
    let model_id: String = row.try_get(1).map_err(|e| bad(&e.to_string()))?;
    let version: String = row.try_get(2).map_err(|e| bad(&e.to_string()))?;
    let dims: i32 = row.try_get(3).map_err(|e| bad(&e.to_string()))?;
    let sha: String = row.try_get(4).map_err(|e| bad(&e.to_string()))?;
    let keyword_stemming: bool = row.try_get(5).map_err(|e| bad(&e.to_string()))?;
    let vector_type: String = row.try_get(6).map_err(|e| bad(&e.to_string()))?;
    let count: i64 = row.try_get(7).map_err(|e| bad(&e.to_string()))?;
    let manifest = Manifest {
        index_version: lightembed_index::INDEX_VERSION,
        model_id,
        model_version: request::parse_version(&version).ok_or_else(|| bad("model_version"))?,
        dims: usize::try_from(dims).map_err(|_| bad("dims"))?,
        count: u64::try_from(count).unwrap_or(0),
        metric: Metric::Cosine,
        model_sha256: request::parse_sha256(&sha).ok_or_else(|| bad("model_sha256"))?,
    };
    Ok(Loaded {
        manifest,
        keyword_stemming,
        vector_type: sql::check_vector_type(&vector_type).map_err(|e| bad(&e))?,
    })
}

/// `GET /health`: 200 with the loaded model when the database answers, else 503.
async fn health(State(state): State<Arc<AppState>>) -> Response {
    let result = async {
        let client = connection(&state).await?;
        loaded(&state, &client).await
    }
    .await;
    match result {
        Ok(l) => Json(json!({
            "status": "ok",
            "model_id": l.manifest.model_id,
            "model_version": l.manifest.model_version.to_string(),
            "dims": l.manifest.dims,
            "count": l.manifest.count,
        }))
        .into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /search`.
async fn search(
    State(state): State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    match search_inner(&state, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn search_inner(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|e| ApiError {
        status: e.status(),
        message: if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "the body is larger than the {} bytes this server accepts",
                state.config.max_body_bytes
            )
        } else {
            format!("cannot read the body: {e}")
        },
    })?;
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
        .unwrap_or(false);
    if !json_type {
        return Err(ApiError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message: "Content-Type must be application/json".into(),
        });
    }
    let limits = Limits {
        max_k: state.config.max_k,
        max_query_bytes: state.config.max_query_bytes,
    };
    let req = request::parse(&body, &limits)?;
    let mut client = connection(state).await?;
    let loaded = loaded(state, &client).await?;
    let warnings = check_model(&loaded.manifest, &req)?;
    let hits = run_search(state, &mut client, &loaded, &req).await?;
    Ok(Json(json!({ "hits": hits, "warnings": warnings })).into_response())
}

/// Spec §8: the request's model against the loaded vectors' model. Refusals are 409 with the
/// index's message; a different minor/patch version or model file is a warning in the answer.
pub fn check_model(manifest: &Manifest, req: &SearchRequest) -> Result<Vec<String>, ApiError> {
    let identity = ModelIdentity {
        model_id: req.model.id.clone(),
        version: req.model.version,
        valid_dims: vec![req.model.dims],
        sha256: req.model.sha256,
    };
    manifest
        .check_compatible(&identity)
        .map(|w| w.iter().map(|w| w.to_string()).collect())
        .map_err(|e| ApiError::incompatible(e.to_string()))
}

/// The ranked hits of a checked request, in the JSON shape of `lightembed search --json`, plus
/// each hit's `page_title` and `heading` (the site widget groups hits by page under them).
async fn run_search(
    state: &AppState,
    client: &mut deadpool_postgres::Object,
    loaded: &Loaded,
    req: &SearchRequest,
) -> Result<Vec<serde_json::Value>, ApiError> {
    let mut terms = terms_with(&req.query, loaded.keyword_stemming);
    terms.sort_unstable();
    terms.dedup();
    let c = state.config.candidates.max(req.k).max(1);
    let ef = state.config.ef_search.max(c).min(1000);
    let Fusion::Convex { vector_weight } = Fusion::DEFAULT else {
        unreachable!("the default fusion is convex")
    };
    let vector = pgvector::Vector::from(req.vector.clone());
    let db = |e: tokio_postgres::Error| ApiError::from_db(&e);
    let stmt = if loaded.vector_type == "halfvec" {
        &state.search_sql[1]
    } else {
        &state.search_sql[0]
    };
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &vector,
        &terms,
        &(c as i64),
        &(vector_weight as f64),
        &(PAGE_WEIGHT as f64),
        &(req.k as i64),
        &(K1 as f64),
        &(B as f64),
        &(state.config.keyword_blocks as i32),
    ];
    // One round trip when the session's beam is wide enough (k ≤ candidates); else the wider
    // beam for this transaction only.
    let rows = if ef <= session_ef(&state.config) {
        client.query(stmt.as_str(), &params).await.map_err(db)?
    } else {
        let tx = client.transaction().await.map_err(db)?;
        tx.query(sql::SET_EF_SEARCH, &[&ef.to_string()])
            .await
            .map_err(db)?;
        let rows = tx.query(stmt.as_str(), &params).await.map_err(db)?;
        tx.commit().await.map_err(db)?;
        rows
    };
    let mut hits = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let get = |n: usize| -> Result<String, ApiError> {
            row.try_get(n).map_err(|e| {
                ApiError::internal("the passages table is not one this server reads", &e)
            })
        };
        let text = get(3)?;
        let score: f64 = row
            .try_get(4)
            .map_err(|e| ApiError::internal("bad score column", &e))?;
        // By default as `lightembed index` stores a snippet (its first `snippet_chars`, cut at a
        // word) and `lightembed search --json` marks the query's words in it; with
        // `excerpt_chars`, the window of the text holding the most query words, as the site
        // widget shows it.
        let e = if req.excerpt_chars == 0 {
            let snippet = head(&text, state.config.snippet_chars);
            excerpt(&snippet, &req.query, loaded.keyword_stemming, 0)
        } else {
            excerpt(
                &text,
                &req.query,
                loaded.keyword_stemming,
                req.excerpt_chars,
            )
        };
        hits.push(json!({
            "rank": i + 1,
            "score": score,
            "id": get(0)?,
            "title": get(1)?,
            "url": get(2)?,
            "page_title": get(5)?,
            "heading": get(6)?,
            "snippet": e.text,
            "highlights": e.highlights,
        }));
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightembed_index::ModelVersion;
    use request::RequestModel;

    fn config() -> Config {
        Config {
            database_url: "postgresql://lightembed@127.0.0.1:5432/docs".into(),
            ..Config::default()
        }
    }

    #[test]
    fn defaults_are_loopback_and_bounded() {
        let c = Config::default();
        assert!(c.listen.ip().is_loopback());
        assert!(c.cors_origins.is_empty());
        assert_eq!(
            (c.max_k, c.max_body_bytes, c.statement_timeout_ms),
            (100, 65_536, 2_000)
        );
        assert_eq!(session_ef(&c), 96);
    }

    #[test]
    fn cors_takes_named_origins_only() {
        assert!(cors_layer(&[]).unwrap().is_none());
        assert!(cors_layer(&["https://docs.example.org".into()])
            .unwrap()
            .is_some());
        for bad in [
            "*",
            "https://docs.example.org/",
            "docs.example.org",
            "https://a\nb",
        ] {
            assert!(cors_layer(&[bad.to_string()]).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn bad_configs_are_refused_before_serving() {
        assert!(app(config()).is_ok());
        let e = app(Config {
            table_prefix: "docs; drop".into(),
            ..config()
        })
        .unwrap_err();
        assert!(e.starts_with("--table-prefix"), "{e}");
        let e = app(Config {
            database_url: "postgresql://[::1".into(),
            ..config()
        })
        .unwrap_err();
        assert!(e.starts_with("--database-url"), "{e}");
    }

    fn manifest() -> Manifest {
        Manifest {
            index_version: lightembed_index::INDEX_VERSION,
            model_id: "lightembed-en-0l".into(),
            model_version: ModelVersion {
                major: 4,
                minor: 0,
                patch: 0,
            },
            dims: 128,
            count: 10,
            metric: Metric::Cosine,
            model_sha256: [7; 32],
        }
    }

    fn request(id: &str, major: u8, dims: usize, sha: u8) -> SearchRequest {
        SearchRequest {
            query: "q".into(),
            vector: vec![1.0; dims],
            model: RequestModel {
                id: id.into(),
                version: ModelVersion {
                    major,
                    minor: 1,
                    patch: 0,
                },
                dims,
                sha256: [sha; 32],
            },
            k: 10,
            excerpt_chars: 0,
        }
    }

    #[test]
    fn the_model_check_is_spec_8() {
        let m = manifest();
        let w = check_model(&m, &request("lightembed-en-0l", 4, 128, 7)).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("note: index was built with model v4.0.0"),
            "{w:?}"
        );
        let w = check_model(&m, &request("lightembed-en-0l", 4, 128, 8)).unwrap();
        assert!(w.iter().any(|w| w.contains("SHA-256")), "{w:?}");
        for (r, needle) in [
            (request("lightembed-tr-0l", 4, 128, 7), "lightembed-tr-0l"),
            (request("lightembed-en-0l", 5, 128, 7), "v5.1"),
            (request("lightembed-en-0l", 4, 64, 7), "64"),
        ] {
            let e = check_model(&m, &r).unwrap_err();
            assert_eq!(e.status, StatusCode::CONFLICT);
            assert!(
                e.message
                    .starts_with("Index was built with lightembed-en-0l v4.0"),
                "{}",
                e.message
            );
            assert!(
                e.message.contains(needle) && e.message.contains("Re-run"),
                "{}",
                e.message
            );
        }
    }
}
