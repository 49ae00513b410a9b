//! `POST /search`'s body, read as hostile input: parsed strictly (unknown fields, wrong types and
//! trailing bytes refused), then checked field by field, each failure a 4xx with a message that
//! names the field. Nothing here touches the database: a request that fails here never reaches SQL.

use lightembed::ModelVersion;
use serde::Deserialize;

use crate::error::ApiError;

/// Limits a request is checked against ([`crate::Config`] sets them).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest `k` accepted.
    pub max_k: usize,
    /// Longest `query`, in bytes of UTF-8.
    pub max_query_bytes: usize,
}

/// The largest `excerpt_chars` a request may ask for.
pub const MAX_EXCERPT_CHARS: u64 = 1_000;

/// The body as sent. Every field is required but `k`, `excerpt_chars` and `query` (a vector-only
/// search may send `""`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    #[serde(default)]
    query: String,
    vector: Vec<f64>,
    model: ModelBody,
    #[serde(default = "default_k")]
    k: u64,
    #[serde(default)]
    excerpt_chars: u64,
}

fn default_k() -> u64 {
    10
}

/// `model`: the identity of the model that embedded `vector` (what a site bundle's
/// `manifest.json` and `lightembed inspect` give).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelBody {
    id: String,
    version: String,
    dims: u64,
    sha256: String,
}

/// A request that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The query text (the keyword side; may be empty).
    pub query: String,
    /// The query's embedding, `model.dims` finite values, not all zero.
    pub vector: Vec<f32>,
    /// Which model made `vector`.
    pub model: RequestModel,
    /// How many hits, `1..=max_k`.
    pub k: usize,
    /// `0` (the default): each hit's snippet is the passage's stored snippet (its first
    /// `snippet_chars`, as `lightembed search --json` shows it); `1..=`[`MAX_EXCERPT_CHARS`]:
    /// the window of that many characters of the passage's text holding the most query words,
    /// as the site widget shows an excerpt (`SiteIndex.excerpt`).
    pub excerpt_chars: usize,
}

/// `model` of a request, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestModel {
    /// `model_id`.
    pub id: String,
    /// `major.minor.patch`.
    pub version: ModelVersion,
    /// The vector's length.
    pub dims: usize,
    /// The model file's SHA-256.
    pub sha256: [u8; 32],
}

/// Parses and checks a request body. Errors are 400s (413 is the body limit's, earlier).
pub fn parse(body: &[u8], limits: &Limits) -> Result<SearchRequest, ApiError> {
    let b: Body = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a search request: {e}")))?;
    if b.query.len() > limits.max_query_bytes {
        return Err(ApiError::bad_request(format!(
            "query: {} bytes, more than the {} this server accepts",
            b.query.len(),
            limits.max_query_bytes
        )));
    }
    if b.k == 0 || b.k > limits.max_k as u64 {
        return Err(ApiError::bad_request(format!(
            "k: {} is outside 1..={}",
            b.k, limits.max_k
        )));
    }
    if b.excerpt_chars > MAX_EXCERPT_CHARS {
        return Err(ApiError::bad_request(format!(
            "excerpt_chars: {} is outside 0..={MAX_EXCERPT_CHARS}",
            b.excerpt_chars
        )));
    }
    let m = &b.model;
    if m.id.is_empty() || m.id.len() > 16 || m.id.contains('\0') {
        return Err(ApiError::bad_request(format!(
            "model.id: {:?} is not a model id (1 to 16 bytes)",
            m.id
        )));
    }
    let version = parse_version(&m.version).ok_or_else(|| {
        ApiError::bad_request(format!(
            "model.version: {:?} is not major.minor.patch",
            m.version
        ))
    })?;
    let sha256 = parse_sha256(&m.sha256)
        .ok_or_else(|| ApiError::bad_request("model.sha256: expected 64 hex digits".to_string()))?;
    if m.dims == 0 || m.dims > 65_535 {
        return Err(ApiError::bad_request(format!(
            "model.dims: {} is outside 1..=65535",
            m.dims
        )));
    }
    let dims = m.dims as usize;
    if b.vector.len() != dims {
        return Err(ApiError::bad_request(format!(
            "vector: {} values, but model.dims is {dims}",
            b.vector.len()
        )));
    }
    let mut vector = Vec::with_capacity(dims);
    for (i, &x) in b.vector.iter().enumerate() {
        let f = x as f32;
        if !f.is_finite() {
            return Err(ApiError::bad_request(format!(
                "vector[{i}]: {x:e} is not a finite float32"
            )));
        }
        vector.push(f);
    }
    if vector.iter().all(|&x| x == 0.0) {
        return Err(ApiError::bad_request(
            "vector: all zeros (a query embedding is a unit vector)".to_string(),
        ));
    }
    Ok(SearchRequest {
        query: b.query,
        vector,
        model: RequestModel {
            id: b.model.id,
            version,
            dims,
            sha256,
        },
        k: b.k as usize,
        excerpt_chars: b.excerpt_chars as usize,
    })
}

/// `"1.2.3"` → the version (each part a `u16`, the header's widest field is checked by §8 later).
pub fn parse_version(s: &str) -> Option<ModelVersion> {
    let mut it = s.split('.');
    let mut part = || -> Option<u32> {
        let p = it.next()?;
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let (major, minor, patch) = (part()?, part()?, part()?);
    if it.next().is_some() {
        return None;
    }
    Some(ModelVersion {
        major: u8::try_from(major).ok()?,
        minor: u8::try_from(minor).ok()?,
        patch: u16::try_from(patch).ok()?,
    })
}

/// 64 hex digits (either case) → 32 bytes.
pub fn parse_sha256(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_k: 100,
        max_query_bytes: 1000,
    };
    const SHA: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn body(query: &str, vector: &str, dims: &str, k: &str) -> String {
        format!(
            r#"{{"query":{query},"vector":{vector},"model":{{"id":"lightembed-en-0l","version":"4.0.0","dims":{dims},"sha256":"{SHA}"}},"k":{k}}}"#
        )
    }

    fn err(b: &str) -> String {
        let e = parse(b.as_bytes(), &LIMITS).unwrap_err();
        assert_eq!(e.status.as_u16(), 400, "{}", e.message);
        e.message
    }

    #[test]
    fn a_good_request_parses() {
        let r = parse(body(r#""hi""#, "[0.6,0.8]", "2", "5").as_bytes(), &LIMITS).unwrap();
        assert_eq!(r.vector, [0.6, 0.8]);
        assert_eq!(r.k, 5);
        assert_eq!(
            r.model.version,
            ModelVersion {
                major: 4,
                minor: 0,
                patch: 0
            }
        );
        assert_eq!(r.model.sha256[1], 0x11);
        assert_eq!(r.excerpt_chars, 0);
    }

    #[test]
    fn excerpt_chars_is_bounded() {
        let b = body(r#""hi""#, "[1]", "1", "5");
        let with = |n: &str| b.replacen('{', &format!("{{\"excerpt_chars\":{n},"), 1);
        let r = parse(with("180").as_bytes(), &LIMITS).unwrap();
        assert_eq!(r.excerpt_chars, 180);
        assert_eq!(
            err(&with("1001")),
            "excerpt_chars: 1001 is outside 0..=1000"
        );
        assert!(err(&with("-1")).contains("invalid value"));
        assert!(err(&with("\"180\"")).contains("invalid type: string"));
    }

    #[test]
    fn malformed_json_is_refused_with_its_position() {
        assert!(err("{\"query\":").contains("EOF while parsing"));
        assert!(err("[1,2]").starts_with("the body is not a search request"));
        assert!(err("").contains("EOF"));
        assert!(err(&(body(r#""a""#, "[1]", "1", "1") + " x")).contains("trailing characters"));
    }

    #[test]
    fn unknown_and_missing_fields_are_named() {
        let b = body(r#""a""#, "[1]", "1", "1").replace("\"k\"", "\"limit\"");
        assert!(err(&b).contains("unknown field `limit`"), "{}", err(&b));
        assert!(err(r#"{"query":"a"}"#).contains("missing field `vector`"));
    }

    #[test]
    fn vectors_of_the_wrong_length_or_not_finite_are_refused() {
        assert_eq!(
            err(&body(r#""a""#, "[1,0,0]", "2", "1")),
            "vector: 3 values, but model.dims is 2"
        );
        assert_eq!(
            err(&body(r#""a""#, "[1e300,0]", "2", "1")),
            "vector[0]: 1e300 is not a finite float32"
        );
        assert!(err(&body(r#""a""#, "[NaN,0]", "2", "1")).contains("expected value"));
        assert!(err(&body(r#""a""#, r#"["1",0]"#, "2", "1")).contains("invalid type: string"));
        assert_eq!(
            err(&body(r#""a""#, "[0,0]", "2", "1")),
            "vector: all zeros (a query embedding is a unit vector)"
        );
    }

    #[test]
    fn k_out_of_range_is_refused() {
        assert_eq!(
            err(&body(r#""a""#, "[1]", "1", "0")),
            "k: 0 is outside 1..=100"
        );
        assert_eq!(
            err(&body(r#""a""#, "[1]", "1", "101")),
            "k: 101 is outside 1..=100"
        );
        assert!(err(&body(r#""a""#, "[1]", "1", "1e30")).contains("invalid type"));
        assert!(err(&body(r#""a""#, "[1]", "1", "-1")).contains("invalid value"));
        assert!(err(&body(r#""a""#, "[1]", "1", "99999999999999999999999"))
            .starts_with("the body is not a search request"));
    }

    #[test]
    fn model_fields_are_checked() {
        let b = body(r#""a""#, "[1]", "1", "1");
        assert!(err(&b.replace("4.0.0", "4.0")).starts_with("model.version"));
        assert!(err(&b.replace("4.0.0", "4.0.x")).starts_with("model.version"));
        assert!(err(&b.replace("4.0.0", "256.0.0")).starts_with("model.version"));
        assert!(err(&b.replace(SHA, "zz")).starts_with("model.sha256"));
        assert!(err(&b.replace(SHA, &"é".repeat(32))).starts_with("model.sha256"));
        assert!(err(&b.replace("lightembed-en-0l", "")).starts_with("model.id"));
        assert!(err(&b.replace("\"dims\":1", "\"dims\":0")).starts_with("model.dims"));
    }

    #[test]
    fn long_queries_are_refused() {
        let q = format!("\"{}\"", "a".repeat(1001));
        assert_eq!(
            err(&body(&q, "[1]", "1", "1")),
            "query: 1001 bytes, more than the 1000 this server accepts"
        );
    }

    #[test]
    fn sql_metacharacters_are_plain_text() {
        let q = r#""'; DROP TABLE lightembed_passages; -- \\ \" ' | & ! :*""#;
        let r = parse(body(q, "[1]", "1", "1").as_bytes(), &LIMITS).unwrap();
        assert!(r.query.starts_with("'; DROP TABLE"));
    }
}
