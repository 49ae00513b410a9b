//! One search interface over both index kinds: an [`Index`] (`lightembed index`, the app) and a
//! [`FragmentedIndex`] (a `lightembed site` bundle), with one hit shape, so front ends (the CLI's
//! `search`, the npm package) rank and show results from either the same way.

use crate::fragments::FragmentedIndex;
use crate::{Index, IndexError, Mode, SearchOptions};

/// One result of [`Searcher::find`], whichever index it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The passage id: the id given at indexing for an [`Index`]; `URL:N` (the section URL and
    /// the passage number) for a [`FragmentedIndex`], which keeps no ids.
    pub id: String,
    /// The section title.
    pub title: String,
    /// The section URL (`page#anchor`).
    pub url: String,
    /// Higher is better: cosine (vector), BM25 (keyword) or the fused score (hybrid).
    pub score: f32,
    /// The passage text stored for excerpts (empty for a fragment whose text chunk is not
    /// loaded).
    pub text: String,
}

/// What a front end needs of an index to search it.
pub trait Searcher {
    /// Vector dims (what the query must be embedded at).
    fn dims(&self) -> usize;
    /// Passages.
    fn len(&self) -> usize;
    /// True when it holds no passage.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether the keyword side stems English (for excerpts' highlights).
    fn keyword_stemming(&self) -> bool;
    /// The best `k` hits of `query` ([`Index::query`]; `vector` is its embedding at
    /// [`Searcher::dims`], needed unless keyword mode).
    ///
    /// Errors: as [`Index::query`] (and a fragment's missing term shard).
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>, IndexError>;
    /// True when some passage holds a word of `query` (the keyword side matches): when it does
    /// not, hybrid results are the closest by meaning alone, and front ends say so.
    ///
    /// Errors: a fragment's missing term shard.
    fn keyword_matches(&self, query: &str) -> Result<bool, IndexError> {
        let opts = SearchOptions {
            mode: Mode::Keyword,
            ..SearchOptions::default()
        };
        Ok(!self.find(None, query, 1, &opts)?.is_empty())
    }
}

impl Searcher for Index {
    fn dims(&self) -> usize {
        Index::dims(self)
    }
    fn len(&self) -> usize {
        Index::len(self)
    }
    fn keyword_stemming(&self) -> bool {
        Index::keyword_stemming(self)
    }
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>, IndexError> {
        Ok(self
            .query(vector, query, k, opts)?
            .into_iter()
            .map(|h| Found {
                id: h.id,
                title: h.payload.title,
                url: h.payload.url,
                score: h.score,
                text: h.payload.snippet,
            })
            .collect())
    }
}

impl Searcher for FragmentedIndex {
    fn dims(&self) -> usize {
        FragmentedIndex::dims(self)
    }
    fn len(&self) -> usize {
        FragmentedIndex::len(self)
    }
    fn keyword_stemming(&self) -> bool {
        FragmentedIndex::keyword_stemming(self)
    }
    fn find(
        &self,
        vector: Option<&[f32]>,
        query: &str,
        k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<Found>, IndexError> {
        Ok(self
            .query(vector, query, k, opts)?
            .into_iter()
            .map(|h| Found {
                id: format!("{}:{}", h.url, h.passage),
                text: self.text(h.passage).unwrap_or_default().to_string(),
                title: h.title,
                url: h.url,
                score: h.score,
            })
            .collect())
    }
}
