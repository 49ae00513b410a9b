//! Every statement `lightembed serve` sends, in one place. Request values reach them only as
//! bound parameters (`$1`, …); the only text put into a statement is the table prefix (checked
//! by [`check_prefix`] when the server starts) and the vector type (`vector` or `halfvec`, read
//! from the model table and checked by [`check_vector_type`]).
//!
//! # The hybrid ranking, in SQL
//!
//! It is [`lightembed_index::Index::query`]'s (`index/src/hybrid.rs`), step by step:
//!
//! 1. candidates: the `c = max(candidates, k)` nearest passages by cosine (the HNSW index,
//!    `hnsw.ef_search = max(ef_search, c)`), and the `c` best by BM25, summed over the query
//!    terms' postings (`{prefix}_postings`: each term's passages in impact order, best first,
//!    in blocks of 1,024; at most `keyword_blocks` blocks are read per term — exact while no
//!    query term is in more passages than that, else the term's best-weighted passages);
//! 2. every candidate scored on both sides exactly: cosine `1 − (embedding <=> q)` and BM25;
//! 3. each side min–max normalised over the candidates (0 when all equal) and fused convexly,
//!    `w · cos′ + (1 − w) · kw′`, `w` = [`lightembed_index::Fusion::DEFAULT`]'s 0.4;
//! 4. page evidence: `+ page_weight ×` the best fused score of another section of the same page
//!    (URL before `#`; [`lightembed_index::PAGE_WEIGHT`]);
//! 5. one hit per section (URL; empty URLs never collapse), best first, the first `k`. Ties go
//!    to the lower `pid` (load order), as the index breaks them by slot.
//!
//! BM25 is `lightembed_index::keywords`' own (k1 = 1.2, b = 0.75,
//! `idf = ln(1 + (N − df + 0.5)/(df + 0.5))`), computed from what the loader stored: each
//! passage's terms as a `tsvector` (lexeme = term, its positions = its frequency;
//! [`lightembed_index::keywords::tsvector_literal`]), `kw_len` = |d|, `{prefix}_terms` = df,
//! and N and avgdl in the model table. The query's terms are made by the same tokeniser
//! ([`lightembed_index::keywords::terms_with`], the loaded stemming). PostgreSQL's own text
//! search (`to_tsvector`, `ts_rank`) is never used: ts_rank has no idf, and its parsers split
//! words differently. Scores are float8 here, f32 in the index: the same ranking, scores within
//! ~1e-6.

/// The layout of the tables this crate reads (`schema_version` in the model table).
pub const SCHEMA_VERSION: i32 = 1;

/// `Ok` when `prefix` is a safe table-name prefix: 1–40 of `a-z`, `0-9`, `_`, starting with a
/// letter or `_` (so `{prefix}_passages` needs no quoting).
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    let ok = !prefix.is_empty()
        && prefix.len() <= 40
        && prefix
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        && !prefix.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--table-prefix {prefix:?}: expected 1 to 40 of a-z, 0-9 and _, not starting with a digit"
        ))
    }
}

/// `Ok` for the two vector column types the loader writes.
pub fn check_vector_type(t: &str) -> Result<&'static str, String> {
    match t {
        "vector" => Ok("vector"),
        "halfvec" => Ok("halfvec"),
        other => Err(format!(
            "the model table's vector_type {other:?} is not vector or halfvec"
        )),
    }
}

/// The model table's one row.
pub fn model_row(prefix: &str) -> String {
    format!(
        "SELECT schema_version, model_id, model_version, dims, model_sha256, keyword_stemming, \
         vector_type, count FROM {prefix}_model"
    )
}

/// The hybrid search. Parameters: `$1` the query vector (`vector`), `$2` the query's distinct
/// terms (`text[]`), `$3` candidates per side, `$4` vector weight, `$5` page weight, `$6` k,
/// `$7` BM25's k1, `$8` BM25's b, `$9` postings blocks read per term (1,024 postings each).
/// Columns: id, title, url, text, score (float8), page_title, heading.
pub fn hybrid_search(prefix: &str, vector_type: &str) -> String {
    let p = prefix;
    let q = format!("$1::vector::{vector_type}");
    format!(
        "WITH st AS (
    SELECT count::float8 AS n, greatest(avgdl, 1e-9) AS avgdl FROM {p}_model
), qt AS MATERIALIZED (
    SELECT t.term, ln(1 + (st.n - t.df + 0.5) / (t.df + 0.5)) AS idf
    FROM {p}_terms t, st WHERE t.term = ANY($2::text[])
), po AS MATERIALIZED (
    SELECT term, pids, ws FROM {p}_postings WHERE term = ANY($2::text[]) AND block < $9::int
), kw AS (
    SELECT x.pid FROM po JOIN qt USING (term)
    CROSS JOIN LATERAL unnest(po.pids, po.ws) AS x(pid, w)
    GROUP BY x.pid ORDER BY sum(qt.idf * x.w) DESC, x.pid LIMIT $3
), vec AS (
    SELECT pid FROM {p}_passages ORDER BY embedding <=> {q} LIMIT $3
), cand AS (
    SELECT pid FROM vec UNION SELECT pid FROM kw
), scored AS MATERIALIZED (
    SELECT p.pid, p.id, p.title, p.url, p.text, p.page_title, p.heading,
           (1 - (p.embedding <=> {q}))::float8 AS cos,
           (SELECT COALESCE(sum(qt.idf * u.tf * ($7::float8 + 1)
                    / (u.tf + $7::float8 * (1 - $8::float8 + $8::float8 * p.kw_len / st.avgdl))), 0)
            FROM (SELECT lexeme, cardinality(positions)::float8 AS tf FROM unnest(p.keywords)) u
            JOIN qt ON qt.term = u.lexeme, st) AS kw
    FROM cand JOIN {p}_passages p USING (pid)
), norm AS (
    SELECT *,
        CASE WHEN max(cos) OVER () > min(cos) OVER ()
             THEN (cos - min(cos) OVER ()) / (max(cos) OVER () - min(cos) OVER ()) ELSE 0 END AS cn,
        CASE WHEN max(kw) OVER () > min(kw) OVER ()
             THEN (kw - min(kw) OVER ()) / (max(kw) OVER () - min(kw) OVER ()) ELSE 0 END AS kn
    FROM scored
), fused AS (
    SELECT *, $4::float8 * cn + (1 - $4::float8) * kn AS f, split_part(url, '#', 1) AS page
    FROM norm
), evidence AS (
    SELECT a.*, a.f + CASE WHEN a.url = '' THEN 0 ELSE $5::float8 * COALESCE(
        (SELECT max(b.f) FROM fused b WHERE b.url <> '' AND b.page = a.page AND b.url <> a.url),
        0) END AS score
    FROM fused a
), collapsed AS (
    SELECT *, row_number() OVER (
        PARTITION BY CASE WHEN url = '' THEN 'pid:' || pid ELSE 'url:' || url END
        ORDER BY score DESC, pid) AS nth
    FROM evidence
)
SELECT id, title, url, text, score, page_title, heading FROM collapsed WHERE nth = 1 ORDER BY score DESC, pid LIMIT $6"
    )
}

/// Sets the HNSW beam for the current transaction (`$1`: the beam as text).
pub const SET_EF_SEARCH: &str = "SELECT set_config('hnsw.ef_search', $1, true)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_identifiers() {
        assert!(check_prefix("lightembed").is_ok());
        assert!(check_prefix("_docs_2").is_ok());
        for bad in ["", "2x", "a-b", "A", "a;drop", "a b", "ä", &"a".repeat(41)] {
            assert!(check_prefix(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn vector_types_are_two() {
        assert_eq!(check_vector_type("halfvec"), Ok("halfvec"));
        assert!(check_vector_type("vector(3); drop").is_err());
    }

    #[test]
    fn only_numbered_parameters_carry_values() {
        let s = hybrid_search("lightembed", "halfvec");
        assert!(s.contains("$1::vector::halfvec"));
        // Every `$` is a parameter marker `$1`..`$9`.
        for (i, _) in s.match_indices('$') {
            let d = s.as_bytes()[i + 1];
            assert!((b'1'..=b'9').contains(&d), "{}", &s[i..i + 5]);
        }
        assert!(!s.contains('\''.to_string().repeat(3).as_str()));
    }
}
