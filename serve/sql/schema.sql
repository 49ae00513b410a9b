-- The tables `lightembed serve` searches, written by the loader (`lightembed.pg.load`, Python).
-- Placeholders filled by the loader: {prefix} (table-name prefix, default `lightembed`), {dims}
-- (the vectors' length) and {vector_type} (`vector` = float32, or `halfvec` = float16: half the
-- space, for indexes past a few million passages; docs/scale-out.md).
--
-- {prefix}_model holds one row: the spec's §8 manifest of the loaded vectors, which `serve`
-- checks every request's model against, and the BM25 corpus figures (N = count, avgdl).
-- {prefix}_passages holds the passage fields of `lightembed passages`, the vector, and the
-- keyword side as a tsvector made by lightembed's own tokeniser
-- (`lightembed_index::keywords::tsvector_literal`: one lexeme per term, its positions giving
-- its frequency), never by PostgreSQL's parsers, with kw_len = |d| (the number of terms).
-- {prefix}_postings holds, per term, its passages in impact order (BM25's per-term weight w,
-- best first; ties by pid) in blocks of 1,024, so a query reads a bounded number of postings per
-- term however common the term is; {prefix}_terms holds each term's document frequency (df).
-- {k1} and {b} are BM25's constants (lightembed_index::keywords::{K1, B}).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE {prefix}_model (
    one              boolean PRIMARY KEY DEFAULT true CHECK (one),
    schema_version   integer NOT NULL,          -- this file's layout: 1
    model_id         text    NOT NULL,
    model_version    text    NOT NULL,          -- major.minor.patch
    dims             integer NOT NULL,
    metric           text    NOT NULL DEFAULT 'cosine',
    model_sha256     text    NOT NULL,          -- 64 hex digits, the model file's trailer
    keyword_stemming boolean NOT NULL,          -- English stemming of the keyword side
    vector_type      text    NOT NULL,          -- 'vector' or 'halfvec'
    count            bigint  NOT NULL,          -- passages (BM25's N)
    avgdl            float8  NOT NULL,          -- mean kw_len (BM25's avgdl)
    loaded_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE {prefix}_passages (
    id         text PRIMARY KEY,
    pid        integer NOT NULL UNIQUE,     -- 0, 1, … in load order: the index's slot (ties)
    page       text NOT NULL,
    title      text NOT NULL,
    page_title text NOT NULL,
    heading    text NOT NULL,
    url        text NOT NULL,
    page_number integer,                    -- a PDF passage's page (`lightembed passages`)
    text       text NOT NULL,
    embedding  {vector_type}({dims}) NOT NULL,
    keywords   tsvector NOT NULL,
    kw_len     integer NOT NULL
);

CREATE TABLE {prefix}_postings (
    term  text    NOT NULL,
    block integer NOT NULL,                 -- 0 = the term's 1,024 best passages, 1 = the next …
    pids  integer[] NOT NULL,
    ws    real[]    NOT NULL,               -- tf·(k1+1) / (tf + k1·(1 − b + b·kw_len/avgdl))
    PRIMARY KEY (term, block)
);

CREATE TABLE {prefix}_terms (
    term text PRIMARY KEY,
    df   integer NOT NULL
);

-- Built after the rows are in (faster than growing them row by row).
-- @@INDEXES@@
INSERT INTO {prefix}_postings (term, block, pids, ws)
SELECT term, (rn - 1) / 1024, array_agg(pid ORDER BY rn), array_agg(w ORDER BY rn)
FROM (
    SELECT u.lexeme AS term, p.pid, x.w,
           row_number() OVER (PARTITION BY u.lexeme ORDER BY x.w DESC, p.pid) AS rn
    FROM {prefix}_passages p
    CROSS JOIN LATERAL unnest(p.keywords) AS u
    CROSS JOIN {prefix}_model m
    CROSS JOIN LATERAL (SELECT (cardinality(u.positions) * ({k1} + 1)
        / (cardinality(u.positions) + {k1} * (1 - {b} + {b} * p.kw_len / greatest(m.avgdl, 1e-9))))::real AS w) AS x
) s
GROUP BY term, (rn - 1) / 1024;
INSERT INTO {prefix}_terms (term, df)
    SELECT term, sum(cardinality(pids)) FROM {prefix}_postings GROUP BY term;
CREATE INDEX {prefix}_passages_embedding ON {prefix}_passages
    USING hnsw (embedding {vector_type}_cosine_ops) WITH (m = 16, ef_construction = 200);
