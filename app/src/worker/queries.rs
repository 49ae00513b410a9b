//! Requests that only read the state: search (local, or remote: the query embedded here and sent
//! to a `lightembed serve`) and the playground (cosine, tokens, projection).

use super::dispatch::post;
use super::WorkerApp;
use crate::shared::protocol::{Event, SearchMode};
use crate::shared::remote::{self, RemoteError, RequestModel, SearchBody, REQUEST_TIMEOUT_MS};
use crate::shared::web::{location_origin, now_ms, request_text, NoAnswer};
use crate::worker::state::EXCERPT_CHARS;

impl WorkerApp {
    /// Posts the `k` best passages for `query` in `mode` (the query embedded first, except in
    /// keyword mode), with the time each part took.
    pub(super) fn search(&self, id: u64, query: &str, k: usize, mode: SearchMode) {
        let state = self.state.borrow();
        let t0 = now_ms();
        // Keyword mode ranks by BM25 alone: nothing to embed.
        let v = if mode == SearchMode::Keyword {
            None
        } else {
            match state.embed_query(query) {
                Ok(v) => Some(v),
                Err(message) => {
                    post(&Event::Error {
                        message: message.to_string(),
                    });
                    return;
                }
            }
        };
        let t1 = now_ms();
        match state.search(v.as_deref(), query, k, mode) {
            Ok(hits) => post(&Event::Results {
                id,
                hits,
                keyword_match: state.keyword_matches(query),
                embed_ms: t1 - t0,
                search_ms: now_ms() - t1,
            }),
            Err(message) => post(&Event::Error {
                message: message.to_string(),
            }),
        }
    }

    /// Remote mode: embeds `query` with the loaded model (at the server's `dims` when the model
    /// has them), POSTs it to the server at `serve` and posts its hits
    /// ([`Event::RemoteResults`]) or the failure in words ([`Event::RemoteFailed`]).
    pub(super) async fn remote_search(
        &self,
        id: u64,
        query: String,
        k: usize,
        serve: String,
        dims: Option<usize>,
    ) {
        let t0 = now_ms();
        // Embedded and the body written before the first await: the state is not held across it.
        let body = {
            let state = self.state.borrow();
            match (state.model(), state.info()) {
                (Some(model), Some(info)) => {
                    let dims = remote::query_dims(dims, &info.valid_dims, info.output_dim);
                    model
                        .embed(&query, dims)
                        .map_err(|e| e.to_string())
                        .map(|v| {
                            let body = SearchBody {
                                query: &query,
                                vector: &v,
                                model: RequestModel {
                                    id: info.model_id.clone(),
                                    version: info.version.clone(),
                                    dims,
                                    sha256: info.sha256.clone(),
                                },
                                k,
                                excerpt_chars: EXCERPT_CHARS,
                            };
                            serde_json::to_string(&body).expect("a search body always serialises")
                        })
                }
                _ => Err("no model is loaded".to_string()),
            }
        };
        let body = match body {
            Ok(b) => b,
            Err(e) => {
                let message = RemoteError::Embed(e).to_string();
                return post(&Event::RemoteFailed { id, message });
            }
        };
        let t1 = now_ms();
        let origin = remote::origin(&serve).to_string();
        let answer = match request_text(
            "POST",
            &remote::search_url(&serve),
            Some(&body),
            REQUEST_TIMEOUT_MS,
        )
        .await
        {
            Ok((status, text)) => remote::parse_answer(&serve, status, &text),
            Err(NoAnswer::TimedOut) => Err(RemoteError::TimedOut {
                origin,
                seconds: REQUEST_TIMEOUT_MS / 1000,
            }),
            Err(NoAnswer::Unreachable(_)) => Err(RemoteError::Unreachable {
                origin,
                page_origin: location_origin(),
            }),
        };
        match answer {
            Ok(mut a) => {
                for h in &mut a.hits {
                    h.url = resolve(&h.url, &serve);
                }
                post(&Event::RemoteResults {
                    id,
                    hits: a.hits,
                    warnings: a.warnings,
                    embed_ms: t1 - t0,
                    request_ms: now_ms() - t1,
                })
            }
            Err(e) => post(&Event::RemoteFailed {
                id,
                message: e.to_string(),
            }),
        }
    }

    /// Posts the cosine similarity of texts `a` and `b` at `dims`.
    pub(super) fn cosine(&self, a: &str, b: &str, dims: Option<usize>) {
        match self.state.borrow().cosine(a, b, dims) {
            Ok((value, dims)) => post(&Event::Cosine { value, dims }),
            Err(message) => post(&Event::Error {
                message: message.to_string(),
            }),
        }
    }

    /// Posts the tokens of `text`.
    pub(super) fn tokenize(&self, text: &str) {
        match self.state.borrow().tokenize(text) {
            Ok(tokens) => post(&Event::Tokens { tokens }),
            Err(message) => post(&Event::Error {
                message: message.to_string(),
            }),
        }
    }

    /// Posts the 2-D projection of up to `max_points` passages, with `query` among them.
    pub(super) fn project(&self, query: Option<&str>, max_points: usize) {
        match self.state.borrow().project(query, max_points) {
            Ok((points, query, explained)) => post(&Event::Projection {
                points,
                query,
                explained,
            }),
            Err(message) => post(&Event::Error {
                message: message.to_string(),
            }),
        }
    }
}

/// A hit's URL from a search server: a relative one resolved against the server's address (the
/// app has no site of its own to resolve it against); one with a scheme is left as it is (the
/// page links only `http:` and `https:`, [`crate::shared::protocol::safe_href`]).
fn resolve(url: &str, serve: &str) -> String {
    let has_scheme = matches!(url.find([':', '/', '?', '#']), Some(i) if url.as_bytes()[i] == b':');
    if url.trim().is_empty() || has_scheme {
        return url.to_string();
    }
    web_sys::Url::new_with_base(url, serve)
        .map(|u| u.href())
        .unwrap_or_else(|_| url.to_string())
}
