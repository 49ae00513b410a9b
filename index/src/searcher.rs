//! One search interface over both index kinds: an [`Index`] (`lightembed index`, the app) and a
//! [`FragmentedIndex`] (a `lightembed site` bundle), with one hit shape, [`Found`], so front ends
//! (the CLI's `search`, the npm package's `SearchIndex` and `SiteIndex`, the Python package) rank
//! and show results from either the same way.

use crate::fragments::{FragmentHit, FragmentedIndex};
use crate::{Hit, Index, IndexError, Mode, SearchOptions};

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
    /// Where a [`FragmentedIndex`] hit lies in its bundle; `None` for an [`Index`] hit.
    pub fragment: Option<InBundle>,
}

/// What a [`FragmentedIndex`] hit adds to a [`Found`]: where its text is (a front end fetches
/// that chunk for the excerpt) and its title's two parts (to group results by page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InBundle {
    /// The passage number, `0..len()`.
    pub passage: u32,
    /// The text chunk holding the passage's text ([`FragmentedIndex::chunk_of`]).
    pub chunk: u32,
    /// The passage's page number ([`FragmentHit::page`]: from 1, 0 = no URL), known before its
    /// chunk is loaded.
    pub page: u32,
    /// The title of the passage's page.
    pub page_title: String,
    /// The passage's section heading (empty before the page's first heading).
    pub heading: String,
}

impl From<Hit> for Found {
    fn from(h: Hit) -> Found {
        Found {
            id: h.id,
            title: h.payload.title,
            url: h.payload.url,
            score: h.score,
            text: h.payload.snippet,
            fragment: None,
        }
    }
}

impl FragmentedIndex {
    /// `h` as a [`Found`]: its id made from its URL and passage number, its text if loaded.
    fn found(&self, h: FragmentHit) -> Found {
        Found {
            id: format!("{}:{}", h.url, h.passage),
            text: self.text(h.passage).unwrap_or_default().to_string(),
            title: h.title,
            url: h.url,
            score: h.score,
            fragment: Some(InBundle {
                // A hit's passage is in range, so it has a chunk.
                chunk: self.chunk_of(h.passage).unwrap_or(0),
                passage: h.passage,
                page: h.page,
                page_title: h.page_title,
                heading: h.heading,
            }),
        }
    }
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
    /// The indexed terms the keyword side puts in place of `query`'s typos (a fragmented index's
    /// [`FragmentedIndex::corrections`], second parts; none for an [`Index`]): excerpts mark
    /// their words too ([`crate::snippet::excerpt_with`]).
    fn corrections(&self, query: &str) -> Vec<String>;
}

/// [`Searcher`] for an index kind whose inherent `dims`, `len`, `keyword_stemming` and `query`
/// it is; `$found(&index, hit)` makes each of the kind's own hits a [`Found`] (the only part
/// that differs between the kinds).
macro_rules! searcher {
    ($kind:ty, $found:expr, $corrections:expr) => {
        impl Searcher for $kind {
            fn dims(&self) -> usize {
                <$kind>::dims(self)
            }
            fn len(&self) -> usize {
                <$kind>::len(self)
            }
            fn keyword_stemming(&self) -> bool {
                <$kind>::keyword_stemming(self)
            }
            fn find(
                &self,
                vector: Option<&[f32]>,
                query: &str,
                k: usize,
                opts: &SearchOptions,
            ) -> Result<Vec<Found>, IndexError> {
                let hits = self.query(vector, query, k, opts)?;
                Ok(hits.into_iter().map(|h| $found(self, h)).collect())
            }
            fn corrections(&self, query: &str) -> Vec<String> {
                $corrections(self, query)
            }
        }
    };
}

searcher!(
    Index,
    |_: &Index, h: Hit| Found::from(h),
    |_: &Index, _: &str| Vec::new()
);
searcher!(
    FragmentedIndex,
    FragmentedIndex::found,
    |f: &FragmentedIndex, q: &str| f.corrections(q).into_iter().map(|(_, c)| c).collect()
);
