//! `Model::query_row_files` / `QueryEncoder` (clarification F.10): a query embedded from the head
//! and its row shards has the same bits as `Model::embed` on the model they were cut from, at
//! every dims the head offers; bad files are refused with a reason.

use lightembed::query_rows::{QueryEncoder, QueryRowsError, DEFAULT_ROWS_PER_SHARD};
use lightembed::{Model, ModelBuilder};

fn load(rel: &str) -> Model {
    let path = format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"));
    Model::from_bytes(&std::fs::read(&path).unwrap()).unwrap()
}

const QUERIES: &[&str] = &[
    "how do I read a file line by line",
    "Ownership and borrowing",
    "Rc<T> reference counting",
    "json.dumps indent",
    "",
    "naïve café résumé — ÜBER straße",
    "a very long query that repeats itself a very long query that repeats itself a very long query that repeats itself a very long query that repeats itself a very long query",
    "漢字 and emoji 🦀 and tabs\tand\nnewlines",
    "zzzzqqqxj unknownish wordpieces",
];

/// Every query through the encoder, adding exactly the shards it asks for, equals the model.
fn assert_same_bits(model: &Model, dims: usize, rows_per_shard: usize) {
    let files = model.query_row_files(dims, rows_per_shard).unwrap();
    let mut q = QueryEncoder::from_head(&files.head).unwrap();
    assert_eq!(q.dims(), dims);
    assert_eq!(q.shard_count(), files.shards.len());
    assert_eq!(q.model_id(), model.model_id());
    assert_eq!(q.sha256(), model.sha256());
    assert_eq!(q.head_id(), files.head_id());
    for text in QUERIES {
        assert_eq!(q.tokenize(text), model.tokenize(text), "{text:?}");
        let missing = q.missing_shards(text);
        if !missing.is_empty() {
            assert_eq!(
                q.embed(text, dims),
                Err(QueryRowsError::MissingRows {
                    shards: missing.clone()
                })
            );
        }
        for &s in &missing {
            assert_eq!(q.add_shard(&files.shards[s as usize]).unwrap(), s);
        }
        assert!(q.missing_shards(text).is_empty());
        for &d in q.valid_dims() {
            let got = q.embed(text, d).unwrap();
            let want = model.embed(text, d).unwrap();
            let same = got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same && got.len() == d, "{text:?} at {d} dims differs");
        }
    }
}

#[test]
fn fixture_models_embed_the_same_bits() {
    for rel in [
        "tests/fixtures/models/static_fp32_uncased.bin",
        "tests/fixtures/models/static_int4_cased.bin",
        "tests/fixtures/models/static_int8_maxlen5_maxchars7.bin",
        "tests/fixtures/models/static_ternary_cased_strip_accents.bin",
        "tests/fixtures/models/static_int8_uncased_keep_accents.bin",
    ] {
        let m = load(rel);
        let dims = *m.valid_dims().last().unwrap();
        assert_same_bits(&m, dims, 1);
        assert_same_bits(&m, dims, 7);
    }
}

#[test]
fn shipped_static_model_and_its_site_model_embed_the_same_bits() {
    let m = load("public/models/lightembed-en-static.bin");
    assert_same_bits(&m, 128, DEFAULT_ROWS_PER_SHARD);
    // A site model (as `lightembed site` prunes it: projection rows of 128 dims only).
    let mut b = ModelBuilder::from_model(&m);
    b.prune(|id, _| id < 8000, Some(128)).unwrap();
    let site = Model::from_bytes(&b.build().unwrap()).unwrap();
    assert_same_bits(&site, 128, DEFAULT_ROWS_PER_SHARD);
    let files = site.query_row_files(128, 4).unwrap();
    assert_eq!(files.shards.len(), 2000);
    // 4 rows of 128 f32 + magic, version, head id, shard number and trailer.
    assert_eq!(files.shards[0].len(), 4 + 2 + 16 + 1 + 4 * 128 * 4 + 32);
}

#[test]
fn transformer_models_and_bad_arguments_are_refused() {
    let t = load("tests/fixtures/models/tern_2l_cased.bin");
    assert_eq!(
        t.query_row_files(*t.valid_dims().last().unwrap(), 4)
            .unwrap_err(),
        QueryRowsError::NotStatic
    );
    let m = load("tests/fixtures/models/static_fp32_uncased.bin");
    let dims = *m.valid_dims().last().unwrap();
    assert_eq!(
        m.query_row_files(dims, 0).unwrap_err(),
        QueryRowsError::ZeroRowsPerShard
    );
    assert!(matches!(
        m.query_row_files(dims + 1, 4).unwrap_err(),
        QueryRowsError::InvalidDims { .. }
    ));
    let q = QueryEncoder::from_head(&m.query_row_files(dims, 4).unwrap().head).unwrap();
    let e = q.embed("x", dims + 1).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("invalid dims {}", dims + 1)),
        "{e}"
    );
}

#[test]
fn damaged_foreign_and_truncated_files_are_refused() {
    let m = load("tests/fixtures/models/static_fp32_uncased.bin");
    let dims = *m.valid_dims().last().unwrap();
    let files = m.query_row_files(dims, 4).unwrap();
    let msg = |r: Result<QueryEncoder, QueryRowsError>| r.unwrap_err().to_string();

    let mut flipped = files.head.clone();
    flipped[20] ^= 1;
    assert_eq!(
        msg(QueryEncoder::from_head(&flipped)),
        "head: damaged: its SHA-256 does not match its trailer"
    );
    assert_eq!(
        msg(QueryEncoder::from_head(&files.head[..20])),
        "head: 20 bytes is too short"
    );
    assert_eq!(
        msg(QueryEncoder::from_head(&files.shards[0])),
        "head: not a lightembed head (magic \"LEQR\", expected \"LEQH\")"
    );
    let mut v2 = files.head.clone();
    v2[4] = 2;
    assert_eq!(
        msg(QueryEncoder::from_head(&v2)),
        "head: version 2, this reader reads 1: re-run `lightembed site`"
    );

    let mut q = QueryEncoder::from_head(&files.head).unwrap();
    let mut bad = files.shards[1].clone();
    let n = bad.len();
    bad[n - 40] ^= 0x40;
    assert_eq!(
        q.add_shard(&bad).unwrap_err().to_string(),
        "row shard: damaged: its SHA-256 does not match its trailer"
    );
    // A shard cut from another model's head (same shape, other rows).
    let other = load("tests/fixtures/models/static_int4_cased.bin");
    let other_files = other
        .query_row_files(*other.valid_dims().last().unwrap(), 4)
        .unwrap();
    let e = q.add_shard(&other_files.shards[1]).unwrap_err();
    assert!(
        matches!(e, QueryRowsError::ForeignShard { shard: 1 })
            || e.to_string().contains("bytes of rows"),
        "{e}"
    );
    // A shard of the same model cut at another rows-per-shard: other head id.
    let regrouped = m.query_row_files(dims, 5).unwrap();
    assert_eq!(
        q.add_shard(&regrouped.shards[0]).unwrap_err(),
        QueryRowsError::ForeignShard { shard: 0 }
    );
    // Nothing was added by the failures.
    assert_eq!(q.add_shard(&files.shards[1]).unwrap(), 1);
}

#[test]
fn a_query_needs_only_its_own_shards() {
    let m = load("public/models/lightembed-en-static.bin");
    let files = m.query_row_files(128, 4).unwrap();
    let q = QueryEncoder::from_head(&files.head).unwrap();
    let ids = q.tokenize("how do I read a file line by line");
    // [CLS] and [SEP] come with the head; "line" twice; the rest one shard each at most.
    let distinct: std::collections::BTreeSet<u32> =
        ids[1..ids.len() - 1].iter().map(|&id| id / 4).collect();
    assert_eq!(
        q.missing_shards("how do I read a file line by line"),
        distinct.into_iter().collect::<Vec<_>>()
    );
    assert!(q.missing_shards("").is_empty());
}
