//! Remote mode: the app searching a `lightembed serve` (PostgreSQL + pgvector, `docs/scale-out.md`)
//! instead of its own index. The worker embeds the query with the loaded model, as the server's
//! passages were embedded, and POSTs the text, the vector and the model's identity to
//! `<serve>/search`; the page asks `<serve>/health` once for the collection's model and dims.
//!
//! Everything here is pure (unit-tested natively): the server URL as the user gives it, the
//! request body, and the answer read as untrusted data — a hit list in the shape of local results
//! ([`ShownHit`]) or a failure in words ([`RemoteError`]). The fetches themselves are
//! [`crate::shared::web::request_text`]'s.

use serde::{Deserialize, Serialize};

use crate::shared::protocol::ShownHit;

/// `localStorage` key of the server the page searches (the setting on the first screen).
pub const SERVE_KEY: &str = "lightembed.serve";

/// A search request that has not been answered after this long is given up (a server that
/// accepts the connection and never answers); `lightembed serve` itself answers within its
/// `--statement-timeout-ms` (2 s by default).
pub const REQUEST_TIMEOUT_MS: i32 = 15_000;

/// `serve` as the user typed it (`?serve=` or the setting), checked and made a base URL: an
/// absolute `http:` or `https:` URL with a host, its query and fragment dropped, ending in `/`
/// (`http://127.0.0.1:8787` → `http://127.0.0.1:8787/`; `https://h/api` → `https://h/api/`).
///
/// # Errors
/// A sentence naming what is wrong (empty, not http(s), no host, spaces inside).
pub fn normalize(serve: &str) -> Result<String, String> {
    let s = serve.trim();
    if s.is_empty() {
        return Err("The search server's address is empty.".into());
    }
    let rest = strip_scheme(s).ok_or_else(|| {
        format!("{s:?} is not a search server address: it must start with http:// or https://.")
    })?;
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{s:?} is not a search server address: it contains spaces."
        ));
    }
    let cut = s.find(['?', '#']).unwrap_or(s.len());
    let base = &s[..cut];
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || host.starts_with(':') || host.contains('@') {
        return Err(format!(
            "{s:?} is not a search server address: it names no host (http://host:port)."
        ));
    }
    Ok(if base.ends_with('/') {
        base.to_string()
    } else {
        format!("{base}/")
    })
}

/// `s` after `http://` or `https://` (any case), or None.
fn strip_scheme(s: &str) -> Option<&str> {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    if lower.starts_with("https://") {
        Some(&s[8..])
    } else if lower.starts_with("http://") {
        Some(&s[7..])
    } else {
        None
    }
}

/// The server's origin (`scheme://host[:port]`) of a [`normalize`]d base, for messages.
pub fn origin(base: &str) -> &str {
    let after = strip_scheme(base).map_or(0, |r| base.len() - r.len());
    match base[after..].find('/') {
        Some(i) => &base[..after + i],
        None => base,
    }
}

/// `POST` here: `<base>search`.
pub fn search_url(base: &str) -> String {
    format!("{base}search")
}

/// `GET` here: `<base>health` (the loaded model, its dims and the passage count).
pub fn health_url(base: &str) -> String {
    format!("{base}health")
}

/// What `GET /health` says about the collection the server searches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteInfo {
    /// `model_id` of the model the passages were embedded with.
    pub model_id: String,
    /// Its version, `major.minor.patch`.
    pub model_version: String,
    /// The vectors' length: the query is embedded at these dims.
    pub dims: usize,
    /// Passages loaded.
    pub count: u64,
}

/// Reads `GET /health`'s answer (`status`, body text).
///
/// # Errors
/// The failure in words, as [`RemoteError`] says it.
pub fn parse_health(base: &str, status: u16, body: &str) -> Result<RemoteInfo, RemoteError> {
    if let Some(e) = refusal(status, body) {
        return Err(e);
    }
    serde_json::from_str(body).map_err(|_| RemoteError::NotAnAnswer {
        origin: origin(base).to_string(),
    })
}

/// The model identity a request names (spec §8: what the server checks the vector against).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestModel {
    /// `model_id`.
    pub id: String,
    /// `major.minor.patch`.
    pub version: String,
    /// The vector's length.
    pub dims: usize,
    /// The model file's SHA-256 (hex).
    pub sha256: String,
}

/// `POST /search`'s body: exactly the fields `lightembed serve` accepts (it refuses others).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchBody<'a> {
    /// The query text (the keyword side and the excerpts).
    pub query: &'a str,
    /// The query embedded by the loaded model at `model.dims`.
    pub vector: &'a [f32],
    /// Which model made `vector`.
    pub model: RequestModel,
    /// Hits wanted.
    pub k: usize,
    /// Each hit's excerpt: the window of this many characters holding the most query words (the
    /// app's local excerpt length, [`crate::worker::state::EXCERPT_CHARS`]).
    pub excerpt_chars: usize,
}

/// A search server's answer: its hits, best first, and its §8 warnings (a minor version or a
/// model file that differs but is still compatible).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// Best first, as the local index's results.
    pub hits: Vec<ShownHit>,
    /// The server's warnings, in words.
    pub warnings: Vec<String>,
}

/// How a remote search failed. `Display` says it in words for the results area.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// 409: the server's passages were embedded by another model (spec §8); the server's own
    /// message.
    #[error("The search server cannot answer queries embedded by the loaded model: {0}")]
    Model(String),
    /// Another 4xx: the request was refused (too long a query, a bad field); the server's message.
    #[error("The search server refused the query: {0}")]
    Request(String),
    /// 5xx: the server or its database failed or is busy.
    #[error("The search server failed (HTTP {status}): {message}. Try again later.")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The server's message, else `HTTP <status>`.
        message: String,
    },
    /// No answer at all: not running, a network error, or CORS refused this page's origin.
    #[error("Search is unavailable: the search server {origin} could not be reached: it is not running, or its --cors-origin does not list {page_origin}.")]
    Unreachable {
        /// The server's origin.
        origin: String,
        /// This page's origin (what `--cors-origin` must name).
        page_origin: String,
    },
    /// No answer within [`REQUEST_TIMEOUT_MS`].
    #[error(
        "Search is unavailable: the search server {origin} did not answer within {seconds} s."
    )]
    TimedOut {
        /// The server's origin.
        origin: String,
        /// The time waited.
        seconds: i32,
    },
    /// A 2xx whose body is not a search answer (another service at that address).
    #[error(
        "Search is unavailable: {origin} sent something that is not a lightembed serve answer."
    )]
    NotAnAnswer {
        /// The server's origin.
        origin: String,
    },
    /// The query could not be embedded here (no model loaded).
    #[error("The query could not be embedded: {0}")]
    Embed(String),
}

/// The failure a non-2xx `status` stands for, with the server's `{"error": "…"}` message (else
/// `HTTP <status>`); None for a 2xx.
fn refusal(status: u16, body: &str) -> Option<RemoteError> {
    if (200..300).contains(&status) {
        return None;
    }
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("HTTP {status}"));
    Some(match status {
        409 => RemoteError::Model(message),
        400..=499 => RemoteError::Request(message),
        _ => RemoteError::Server { status, message },
    })
}

/// Reads `POST /search`'s answer (`status`, body text) from the server at `base`. Relative hit
/// URLs are resolved by the caller; every string stays data (the page shows it as text).
///
/// # Errors
/// A refusal (4xx, 5xx) with the server's message, or a body that is not an answer.
pub fn parse_answer(base: &str, status: u16, body: &str) -> Result<Answer, RemoteError> {
    if let Some(e) = refusal(status, body) {
        return Err(e);
    }
    #[derive(Deserialize)]
    struct Wire {
        hits: Vec<ShownHit>,
        #[serde(default)]
        warnings: Vec<String>,
    }
    let w: Wire = serde_json::from_str(body).map_err(|_| RemoteError::NotAnAnswer {
        origin: origin(base).to_string(),
    })?;
    Ok(Answer {
        hits: w.hits,
        warnings: w.warnings,
    })
}

/// The dims to embed the query at: the server's when the loaded model has them (`valid`), else
/// the model's full length `output_dim` — the server then refuses with the §8 message, which
/// names both models' dims.
pub fn query_dims(server_dims: Option<usize>, valid: &[usize], output_dim: usize) -> usize {
    server_dims
        .filter(|d| valid.contains(d))
        .unwrap_or(output_dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_are_checked_and_made_bases() {
        assert_eq!(
            normalize(" http://127.0.0.1:8787 ").unwrap(),
            "http://127.0.0.1:8787/"
        );
        assert_eq!(
            normalize("HTTPS://search.example.org/api?x=1#y").unwrap(),
            "HTTPS://search.example.org/api/"
        );
        assert_eq!(
            normalize("https://search.example.org/").unwrap(),
            "https://search.example.org/"
        );
        let base = normalize("https://search.example.org:8443/api").unwrap();
        assert_eq!(
            search_url(&base),
            "https://search.example.org:8443/api/search"
        );
        assert_eq!(
            health_url(&base),
            "https://search.example.org:8443/api/health"
        );
        assert_eq!(origin(&base), "https://search.example.org:8443");
        assert_eq!(origin("http://h:1/"), "http://h:1");
        for (bad, says) in [
            ("", "empty"),
            ("   ", "empty"),
            ("search.example.org", "http:// or https://"),
            ("javascript:alert(1)", "http:// or https://"),
            ("ftp://h/", "http:// or https://"),
            ("http://", "no host"),
            ("http:///search", "no host"),
            ("http://:8787/", "no host"),
            ("http://user@evil/", "no host"),
            ("http://a b/", "spaces"),
        ] {
            let e = normalize(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn answers_become_hits_and_refusals_words() {
        let base = "http://127.0.0.1:8787/";
        // The server's hit carries more fields (rank, page_title, heading) than a local one.
        let body = r#"{"hits":[{"rank":1,"score":0.75,"id":"b#x","title":"Book › X","url":"https://d/x.html#x",
            "page_title":"Book","heading":"X","snippet":"a <b>café</b> here","highlights":[[5,10]]}],
            "warnings":["model file differs"]}"#;
        let a = parse_answer(base, 200, body).unwrap();
        assert_eq!(a.hits.len(), 1);
        let h = &a.hits[0];
        assert_eq!(
            (h.id.as_str(), h.title.as_str(), h.url.as_str()),
            ("b#x", "Book › X", "https://d/x.html#x")
        );
        assert_eq!(&h.snippet[5..10], "café");
        assert!((h.score - 0.75).abs() < 1e-6);
        assert_eq!(a.warnings, ["model file differs"]);
        assert_eq!(
            parse_answer(base, 200, r#"{"hits":[]}"#).unwrap(),
            Answer::default()
        );

        let said = "Index was built with lightembed-en-2l v1.0 but the loaded model is lightembed-en-0l v1.0. Re-run `lightembed index`.";
        let e = parse_answer(base, 409, &format!(r#"{{"error":"{said}"}}"#)).unwrap_err();
        assert_eq!(e, RemoteError::Model(said.into()));
        assert_eq!(
            e.to_string(),
            format!("The search server cannot answer queries embedded by the loaded model: {said}")
        );
        let e = parse_answer(
            base,
            400,
            r#"{"error":"query: 1001 bytes, more than the 1000 this server accepts"}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "The search server refused the query: query: 1001 bytes, more than the 1000 this server accepts"
        );
        let e = parse_answer(base, 503, "<html>busy</html>").unwrap_err();
        assert_eq!(
            e.to_string(),
            "The search server failed (HTTP 503): HTTP 503. Try again later."
        );
        for junk in [
            "",
            "<html></html>",
            r#"{"hits":"no"}"#,
            r#"{"hits":[{"id":1}]}"#,
        ] {
            assert_eq!(
                parse_answer(base, 200, junk).unwrap_err(),
                RemoteError::NotAnAnswer {
                    origin: "http://127.0.0.1:8787".into()
                },
                "{junk:?}"
            );
        }
    }

    #[test]
    fn health_and_body_are_serve_s_shapes() {
        let base = "http://h:1/";
        let i = parse_health(
            base,
            200,
            r#"{"status":"ok","model_id":"lightembed-en-0l","model_version":"1.0.0","dims":128,"count":702}"#,
        )
        .unwrap();
        assert_eq!(
            (i.dims, i.count, i.model_id.as_str()),
            (128, 702, "lightembed-en-0l")
        );
        assert!(matches!(
            parse_health(base, 503, r#"{"error":"the database is not answering"}"#),
            Err(RemoteError::Server { status: 503, .. })
        ));
        let v = [0.5f32, -0.25];
        let body = SearchBody {
            query: "q",
            vector: &v,
            model: RequestModel {
                id: "m".into(),
                version: "1.2.3".into(),
                dims: 2,
                sha256: "ab".into(),
            },
            k: 10,
            excerpt_chars: 240,
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"query":"q","vector":[0.5,-0.25],"model":{"id":"m","version":"1.2.3","dims":2,"sha256":"ab"},"k":10,"excerpt_chars":240}"#
        );
    }

    #[test]
    fn the_query_is_embedded_at_the_server_s_dims_when_the_model_has_them() {
        assert_eq!(query_dims(Some(128), &[64, 128, 256], 256), 128);
        assert_eq!(query_dims(Some(96), &[64, 128, 256], 256), 256);
        assert_eq!(query_dims(None, &[64, 128, 256], 256), 256);
    }
}
