//! Requests that only read the state: search and the playground (cosine, tokens, projection).

use super::dispatch::post;
use super::WorkerApp;
use crate::shared::protocol::{Event, SearchMode};
use crate::shared::web::now_ms;

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
