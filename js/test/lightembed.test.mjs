// The npm package `lightembed` (js/pkg/node, built by js/build.sh) against the `lightembed` CLI on
// the same files: one index of the fixture site (tests/fixtures/site) and one of non-ASCII
// passages, both built by `lightembed index` with the shipped static model. Results must agree:
// ids in the same order, scores within 1e-4, the same excerpts and the same highlighted words
// (the package's UTF-16 offsets vs the CLI's byte ranges), embeddings within 1e-4, identical
// token ids; and the errors carry the engine's and the index's messages. A `lightembed site`
// bundle of the same fixture site, read in fragments by `SiteIndex`, ranks as `lightembed search`
// ranks the bundle folder.
//
//   bash js/build.sh && cargo build -p lightembed-cli && node --test js/test/
//
// The CLI is target/debug/lightembed (LIGHTEMBED_CLI overrides it).

import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

// Through js/package.json's "exports" (the package refers to itself by name).
import { Model, SearchIndex, SiteIndex } from "lightembed";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const cliPath = process.env.LIGHTEMBED_CLI ?? join(root, "target/debug/lightembed");
const modelPath = join(root, "public/models/lightembed-en-static.bin");
const site = join(root, "tests/fixtures/site");
const MODES = ["hybrid", "vector", "keyword"];
const EPS = 1e-4;

/** Runs the CLI; returns stdout. Throws with its stderr when it fails. */
function cli(args, input) {
  const r = spawnSync(cliPath, args, { input, encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`lightembed ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

const jsonl = (texts) => texts.map((text) => JSON.stringify({ text })).join("\n") + "\n";

/** The model file with header byte `offset` set to `value` and the SHA-256 trailer redone. */
function patchedModel(offset, value) {
  const b = Buffer.from(readFileSync(modelPath));
  b[offset] = value;
  const n = b.length - 32;
  createHash("sha256").update(b.subarray(0, n)).digest().copy(b, n);
  return b;
}

/** A CLI hit's byte-range highlights as [UTF-16 start, end] pairs into the same snippet. */
function cliHighlightsUtf16(snippet, highlights) {
  const bytes = Buffer.from(snippet, "utf8");
  const units = (b) => bytes.subarray(0, b).toString("utf8").length;
  return highlights.map(([a, b]) => [units(a), units(b)]);
}

const marked = (hit) => hit.highlights.map(([a, b]) => hit.snippet.slice(a, b));

let tmp, siteIndex, uniIndex, model, modelBytes;

// Non-ASCII passages: accents (folded by the keyword side), CJK (a token per ideograph), emoji
// (two UTF-16 units, four UTF-8 bytes) before marked words, and one passage longer than the
// default excerpt.
const UNICODE_RECORDS = [
  {
    id: "u/creme",
    title: "Crème brûlée",
    url: "/desserts#creme",
    text: "Crème brûlée is a baked custard 🍮 with a layer of hard caramelised sugar on top. Café owners in Zürich serve it with espresso.",
  },
  {
    id: "u/niwa",
    title: "日本の庭",
    url: "/japan#garden",
    text: "日本の庭 — a Japanese garden 🪨 with moss, raked gravel and stone lanterns. The gravel of the 庭 is raked every morning.",
  },
  {
    id: "u/long",
    title: "Naïve notes on compost",
    url: "/notes#compost",
    text:
      "Kitchen scraps, coffee grounds and egg shells go into the bin first. ".repeat(4) +
      "Turn the heap every fortnight so that air reaches the middle 🌱 and the compost does not smell. " +
      "Leaves from the autumn make the best brown layer for a cold heap. ".repeat(3),
  },
];

before(() => {
  assert.ok(existsSync(cliPath), `${cliPath} is missing: run cargo build -p lightembed-cli`);
  tmp = mkdtempSync(join(tmpdir(), "lightembed-js-"));
  cli(["index", "--quiet", "--model", modelPath, "--out", join(tmp, "site"), site]);
  const records = join(tmp, "unicode.jsonl");
  writeFileSync(records, UNICODE_RECORDS.map((r) => JSON.stringify(r)).join("\n") + "\n");
  cli(["index", "--quiet", "--model", modelPath, "--out", join(tmp, "unicode"), records]);
  modelBytes = readFileSync(modelPath);
  model = Model.fromBytes(modelBytes);
  siteIndex = SearchIndex.fromBytes(readFileSync(join(tmp, "site/index.bin")));
  uniIndex = SearchIndex.fromBytes(readFileSync(join(tmp, "unicode/index.bin")));
});

after(() => {
  model?.free();
  siteIndex?.free();
  uniIndex?.free();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Package results equal `lightembed search --json` (whole stored snippets on both sides). */
function assertSameAsCli(indexDir, index, query, mode, k = 5) {
  const want = JSON.parse(cli(["search", "--index", indexDir, "--json", "--mode", mode, "-k", String(k), query]));
  const got = index.search(query, { k, mode, model, excerptChars: 0 });
  const where = `${mode} ${JSON.stringify(query)}`;
  assert.deepEqual(got.map((h) => h.id), want.results.map((r) => r.id), `ids, ${where}`);
  for (const [i, w] of want.results.entries()) {
    const g = got[i];
    assert.ok(Math.abs(g.score - w.score) <= EPS, `score of ${w.id}, ${where}: ${g.score} vs ${w.score}`);
    assert.equal(g.title, w.title);
    assert.equal(g.url, w.url);
    assert.equal(g.snippet, w.snippet, `snippet of ${w.id}, ${where}`);
    assert.deepEqual(g.highlights, cliHighlightsUtf16(w.snippet, w.highlights), `highlights of ${w.id}, ${where}`);
    const bytes = Buffer.from(w.snippet, "utf8");
    assert.deepEqual(
      marked(g),
      w.highlights.map(([a, b]) => bytes.subarray(a, b).toString("utf8")),
      `marked words of ${w.id}, ${where}`,
    );
  }
  return got;
}

describe("model", () => {
  test("metadata equals lightembed inspect --json", () => {
    const info = JSON.parse(cli(["inspect", modelPath, "--json"]));
    const h = info.header;
    assert.equal(model.modelId, h.model_id);
    assert.equal(model.version, h.model_version);
    assert.equal(model.outputDim, h.output_dim);
    assert.equal(model.maxSeqLen, h.max_seq_len);
    assert.deepEqual(model.validDims, [...new Set([...h.matryoshka_dims, h.output_dim])]);
    assert.equal(model.sha256, info.sha256);
  });

  test("tokenize equals lightembed tokenize", () => {
    const texts = [
      "Hello, world!",
      "Crème brûlée in Zürich — naïve café",
      "日本の庭 and 🪨 stones",
      "unaffable tokenization of read_to_string",
      "word ".repeat(model.maxSeqLen + 50), // cut to max_seq_len
      "",
    ];
    const want = cli(["tokenize", "--model", modelPath, "--jsonl"], jsonl(texts))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).ids);
    const got = texts.map((t) => Array.from(model.tokenize(t)));
    assert.deepEqual(got, want);
    assert.ok(got[4].length === model.maxSeqLen && got[4].at(-1) === 102, "long text cut, [SEP] last");
    assert.ok(model.tokenize("x") instanceof Uint32Array);
  });

  test("embed equals lightembed embed --jsonl within 1e-4 (full and Matryoshka dims)", () => {
    const texts = ["how often should I water tomato plants", "Crème brûlée 🍮", "compost heap"];
    for (const dims of [undefined, 64]) {
      const args = ["embed", "--model", modelPath, "--jsonl"];
      if (dims) args.push("--dims", String(dims));
      const want = cli(args, jsonl(texts))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).embedding);
      for (const [i, text] of texts.entries()) {
        const got = model.embed(text, dims);
        assert.ok(got instanceof Float32Array);
        assert.equal(got.length, dims ?? model.outputDim);
        assert.equal(got.length, want[i].length);
        const worst = Math.max(...Array.from(got, (x, j) => Math.abs(x - want[i][j])));
        assert.ok(worst <= EPS, `${JSON.stringify(text)} dims ${dims}: max |Δ| ${worst}`);
      }
      // embedBatch is embed for many texts, exactly.
      assert.deepEqual(model.embedBatch(texts, dims), texts.map((t) => model.embed(t, dims)));
    }
  });

  test("a corrupted model throws the SHA-256 mismatch", () => {
    const b = Buffer.from(modelBytes);
    b[b.length >> 1] ^= 0x01;
    assert.throws(
      () => Model.fromBytes(b),
      (e) =>
        e instanceof Error &&
        e.message.startsWith("SHA-256 mismatch: the file's trailing hash is ") &&
        e.rule === "hash_mismatch",
    );
  });

  test("every malformed fixture is refused with its rule and lightembed verify's message", () => {
    const dir = join(root, "tests/fixtures/malformed");
    const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));
    assert.ok(cases.length >= 40);
    for (const c of cases) {
      const path = join(dir, c.file);
      const r = spawnSync(cliPath, ["verify", path], { encoding: "utf8" });
      assert.equal(r.status, 1, c.file);
      assert.throws(
        () => Model.fromBytes(readFileSync(path)),
        (e) => {
          assert.ok(e instanceof Error, c.file);
          assert.equal(e.rule, c.rule, c.file);
          assert.equal(`error: ${path}: ${e.message}`, r.stderr.trimEnd(), c.file);
          return true;
        },
      );
    }
  });

  test("embed with dims the model lacks throws, naming the valid dims", () => {
    assert.throws(() => model.embed("soil", 100), (e) => e instanceof Error && e.message.includes("384"));
  });
});

describe("search index", () => {
  test("manifest getters describe the index lightembed built", () => {
    assert.equal(siteIndex.dims, model.outputDim);
    assert.equal(siteIndex.modelId, model.modelId);
    assert.equal(siteIndex.modelVersion, model.version);
    assert.equal(siteIndex.modelSha256, model.sha256);
    const all = JSON.parse(cli(["search", "--index", join(tmp, "site"), "--json", "--all-passages", "-k", "100", "garden"]));
    assert.equal(siteIndex.length, all.results.length);
    assert.equal(uniIndex.length, UNICODE_RECORDS.length);
    assert.deepEqual(siteIndex.checkCompatible(model), []);
  });

  const queries = [
    "how often should I water tomato plants",
    "making compost from kitchen waste",
    "slugs eating lettuce",
    "sharpen pruning shears",
    "soil pH acidity",
    "xylophone",
  ];
  for (const mode of MODES) {
    test(`${mode} search of the fixture site equals lightembed search --json`, () => {
      const hits = queries.flatMap((q) => assertSameAsCli(join(tmp, "site"), siteIndex, q, mode));
      assert.ok(hits.length >= queries.length, `${hits.length} hits`);
      if (mode !== "vector") assert.ok(hits.some((h) => h.highlights.length > 0));
    });
  }

  for (const mode of MODES) {
    test(`${mode} search of non-ASCII passages: UTF-16 highlights equal the CLI's byte ranges`, () => {
      const hits = ["creme brulee cafe zurich", "sugar", "日本の庭 gravel", "compost smell naive"].flatMap((q) =>
        assertSameAsCli(join(tmp, "unicode"), uniIndex, q, mode, 3),
      );
      assert.ok(hits.length >= 4, `${hits.length} hits`);
      if (mode !== "vector") {
        const [hit] = uniIndex.search("cafe sugar", { mode, model, k: 1, excerptChars: 0 });
        assert.deepEqual(marked(hit), ["sugar", "Café"], "accent-folded words marked after an emoji");
      }
    });
  }

  test("the query vector option gives what the model option gives", () => {
    for (const mode of ["hybrid", "vector"]) {
      const q = "watering tomatoes in summer";
      const byModel = siteIndex.search(q, { mode, model });
      const byVector = siteIndex.search(q, { mode, vector: model.embed(q, siteIndex.dims) });
      const byArray = siteIndex.search(q, { mode, vector: Array.from(model.embed(q, siteIndex.dims)) });
      assert.deepEqual(byVector, byModel);
      assert.deepEqual(byArray, byModel);
    }
  });

  test("default excerpts are at most 240 characters around the query's words", () => {
    const q = "compost smell";
    const [whole] = uniIndex.search(q, { mode: "keyword", k: 1, excerptChars: 0 });
    const [hit] = uniIndex.search(q, { mode: "keyword", k: 1 });
    assert.equal(hit.id, "u/long");
    assert.ok(whole.snippet.length > 300);
    assert.ok(hit.snippet.startsWith("… ") && hit.snippet.endsWith("…"), hit.snippet);
    assert.ok([...hit.snippet].length <= 240 + 4, `${[...hit.snippet].length} characters`);
    assert.ok(whole.snippet.includes(hit.snippet.slice(2, -2)));
    assert.deepEqual(new Set(marked(hit)), new Set(["compost", "smell"]));
    const [short] = uniIndex.search(q, { mode: "keyword", k: 1, excerptChars: 60 });
    assert.ok([...short.snippet].length <= 60 + 4, short.snippet);
    assert.ok(marked(short).length >= 1);
  });

  test("keyword search needs no model; the other modes need a model or a vector", () => {
    assert.deepEqual(
      siteIndex.search("compost", { mode: "keyword" }).map((h) => h.id),
      siteIndex.search("compost", { mode: "keyword", model }).map((h) => h.id),
    );
    for (const mode of ["hybrid", "vector"]) {
      assert.throws(
        () => siteIndex.search("compost", { mode }),
        { message: `${mode} search needs the query's embedding: pass options.model or options.vector` },
      );
    }
    assert.throws(() => siteIndex.search("compost"), /hybrid search needs the query's embedding/);
    assert.deepEqual(siteIndex.search("   ", { model }), []);
  });

  test("bad search options throw, naming the option", () => {
    assert.throws(() => siteIndex.search("soil", { model, limit: 3 }), {
      message: 'search: unknown option "limit"; expected one of k, mode, vector, model, excerptChars',
    });
    assert.throws(() => siteIndex.search("soil", { model, mode: "fuzzy" }), {
      message: 'search: options.mode must be "hybrid", "vector" or "keyword", not "fuzzy"',
    });
    assert.throws(() => siteIndex.search("soil", { model, k: 0 }), { message: "search: options.k must be an integer from 1 to 100000, not 0" });
    assert.throws(() => siteIndex.search("soil", { model, k: 2.5 }), /options\.k must be an integer from 1 to 100000, not 2\.5/);
    assert.throws(() => siteIndex.search("soil", { model, excerptChars: -1 }), { message: "search: options.excerptChars must be an integer ≥ 0, not -1" });
    assert.throws(() => siteIndex.search("soil", { vector: new Float32Array(3) }), {
      message: `search: options.vector must have index.dims = ${siteIndex.dims} numbers, not 3`,
    });
    assert.throws(() => siteIndex.search("soil", { vector: "x" }), /options\.vector must be a Float32Array or an array of numbers, not string/);
    assert.throws(() => siteIndex.search("soil", { model: {} }), /options\.model must be a Model/);
    assert.throws(() => siteIndex.search("soil", 5), { message: "search: options must be an object, not number" });
  });
});

test("the bundler build (ES module importing the .wasm) gives the Node build's results", () => {
  // Node runs ES-module wasm imports behind a flag; bundlers do the same import.
  const bundler = join(root, "js/pkg/bundler/lightembed_wasm.js");
  const script = `
    import { Model, SearchIndex } from ${JSON.stringify(bundler)};
    import { readFileSync } from "node:fs";
    const model = Model.fromBytes(readFileSync(${JSON.stringify(modelPath)}));
    const index = SearchIndex.fromBytes(readFileSync(${JSON.stringify(join(tmp, "site/index.bin"))}));
    const out = { ids: Array.from(model.tokenize("compost heap")), hits: index.search("compost heap", { model, k: 3 }) };
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["--experimental-wasm-modules", "--no-warnings", "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.deepEqual(got.ids, Array.from(model.tokenize("compost heap")));
  assert.deepEqual(got.hits, siteIndex.search("compost heap", { model, k: 3 }));
});

describe("site index (lightembed site bundle, in fragments)", () => {
  let bundle, manifest, siteModel, six;
  const read = (name) => readFileSync(join(bundle, name));
  before(() => {
    const copy = join(tmp, "site-copy");
    cli(["index", "--help"]); // the CLI is there
    execFileSync("cp", ["-r", site, copy]);
    const r = spawnSync(cliPath, ["site", "--site", copy, "--quiet"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    bundle = join(copy, "lightembed");
    manifest = JSON.parse(read("manifest.json"));
    siteModel = Model.fromBytes(read(manifest.files.model));
    six = SiteIndex.fromCore(read(manifest.files.core));
    six.checkCompatible(siteModel);
  });
  after(() => { siteModel?.free(); six?.free(); });

  test("a query needs only its terms' shards; then it ranks as lightembed search on the bundle", () => {
    assert.equal(six.length, manifest.index.passages);
    assert.equal(six.dims, 128);
    assert.equal(six.shardCount, manifest.index.shards);
    for (const mode of MODES) {
      for (const query of ["what the fixture pages say", "installing the tool", "zzzz"]) {
        const missing = Array.from(six.missingShards(query));
        if (mode !== "vector") {
          assert.ok(missing.length <= 4, `${query}: ${missing}`);
          if (missing.length) assert.throws(() => six.search(query, { mode, model: siteModel }), /is not loaded/);
        }
        for (const n of missing) assert.equal(six.addShard(read(`${manifest.files.fragments}t${n}.bin`)), n);
        assert.equal(six.missingShards(query).length, 0);
        if (mode !== "keyword") {
          // The vector side needs the partitions nearest the query's embedding.
          const vector = siteModel.embed(query, six.dims);
          for (const n of six.partitionsFor(vector)) assert.equal(six.addPartition(read(`${manifest.files.fragments}v${n}.bin`)), n);
          assert.equal(six.partitionsFor(vector).length, 0);
        }
        let got = six.search(query, { k: 5, mode, model: siteModel });
        // A hit's URL, titles and text come with its chunk: untitled before, the same rank after.
        const before = got.map((h) => [h.passage, h.score]);
        for (const h of got) {
          if (six.hasText(h.passage)) continue;
          assert.deepEqual([h.url, h.title, h.pageTitle, h.heading], ["", "", "", ""]);
          assert.ok(Number.isInteger(h.page) && h.page >= 1, `page ${h.page}: known before the chunk`);
          assert.throws(() => six.excerpt(h.passage, query, 0), /not loaded/);
          six.addChunk(read(`${manifest.files.fragments}c${h.chunk}.bin`));
        }
        got = six.search(query, { k: 5, mode, model: siteModel });
        assert.deepEqual(got.map((h) => [h.passage, h.score]), before);
        // Equal page numbers, equal pages (the URL before `#`), and the other way round.
        for (const a of got) {
          for (const b of got) assert.equal(a.page === b.page, a.url.split("#")[0] === b.url.split("#")[0], `${a.url} / ${b.url}`);
        }
        const want = JSON.parse(cli(["search", "--index", bundle, "--json", "--mode", mode, "-k", "5", query]));
        const where = `${mode} ${JSON.stringify(query)}`;
        assert.deepEqual(got.map((h) => `${h.url}:${h.passage}`), want.results.map((r) => r.id), `ids, ${where}`);
        for (const [i, w] of want.results.entries()) {
          assert.ok(Math.abs(got[i].score - w.score) <= EPS, `score, ${where}`);
          assert.equal(got[i].title, w.title);
          // The text comes from its chunk; the excerpt (whole passage) equals the CLI's.
          const e = six.excerpt(got[i].passage, query, 0);
          assert.equal(e.snippet, w.snippet);
          assert.deepEqual(e.highlights, cliHighlightsUtf16(w.snippet, w.highlights));
        }
      }
    }
  });

  test("a two-level bundle (centroid cells): cellsFor, then partitionsFor; it ranks as lightembed search", () => {
    // The fixture's 3 passages in 3 partitions grouped in 2 coarse cells, 1 partition and at
    // least 1 cell probed: the core lists cells only, their files the partitions' centroids.
    const copy = join(tmp, "site-two-level");
    execFileSync("cp", ["-r", site, copy]);
    const r = spawnSync(cliPath, ["site", "--site", copy, "--quiet", "--partitions", "3", "--cells", "2", "--probes", "1", "--cell-probes", "1"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const dir = join(copy, "lightembed");
    const m = JSON.parse(readFileSync(join(dir, "manifest.json")));
    assert.equal(m.index.fragments_version, 7);
    assert.equal(m.index.cells, 2);
    const get = (name) => readFileSync(join(dir, name));
    for (const mode of ["hybrid", "vector"]) {
      const two = SiteIndex.fromCore(get(m.files.core));
      assert.equal(two.cellCount, 2);
      const query = "what the fixture pages say";
      for (const n of two.missingShards(query)) two.addShard(get(`${m.files.fragments}t${n}.bin`));
      const vector = siteModel.embed(query, two.dims);
      const cells = Array.from(two.cellsFor(vector));
      assert.ok(cells.length >= 1 && cells.length <= 2, `${cells}`);
      assert.throws(() => two.partitionsFor(vector), /centroid cell \d+ is not loaded/);
      for (const n of cells) assert.equal(two.addCell(get(`${m.files.fragments}g${n}.bin`)), n);
      assert.equal(two.cellsFor(vector).length, 0);
      const parts = Array.from(two.partitionsFor(vector));
      assert.equal(parts.length, 1);
      for (const n of parts) assert.equal(two.addPartition(get(`${m.files.fragments}v${n}.bin`)), n);
      for (let n = 0; n < two.chunkCount; n++) two.addChunk(get(`${m.files.fragments}c${n}.bin`));
      const got = two.search(query, { k: 5, mode, vector });
      const want = JSON.parse(cli(["search", "--index", dir, "--json", "--mode", mode, "-k", "5", query]));
      assert.deepEqual(got.map((h) => `${h.url}:${h.passage}`), want.results.map((w) => w.id), mode);
      for (const [i, w] of want.results.entries()) assert.ok(Math.abs(got[i].score - w.score) <= EPS, `score ${i}, ${mode}`);
      // Another build's cell, a partition file as a cell: refused with a clear message.
      assert.throws(() => two.addCell(read(`${manifest.files.fragments}v0.bin`)), /centroid cell/);
      two.free();
    }
  });

  test("both index kinds' hits of a passage: each kind's documented keys, the same title, URL, score and text", () => {
    // The bundle's one page (the site's only HTML page) indexed alone by `lightembed index`:
    // both indexes then hold the same three passages, and keyword scores are the same BM25.
    const page = join(tmp, "page-only");
    mkdirSync(page);
    copyFileSync(join(site, "index.html"), join(page, "index.html"));
    cli(["index", "--quiet", "--model", modelPath, "--out", join(tmp, "page-index"), page]);
    const ix = SearchIndex.fromBytes(readFileSync(join(tmp, "page-index/index.bin")));
    const q = "water the garden";
    for (const n of six.missingShards(q)) six.addShard(read(`${manifest.files.fragments}t${n}.bin`));
    const stored = ix.search(q, { mode: "keyword", k: 5, excerptChars: 0 });
    for (const h of six.search(q, { mode: "keyword", k: 5 })) six.addChunk(read(`${manifest.files.fragments}c${h.chunk}.bin`));
    const fragment = six.search(q, { mode: "keyword", k: 5 });
    assert.equal(stored.length, 3);
    assert.equal(fragment.length, 3);
    for (const [i, h] of stored.entries()) {
      const f = fragment[i];
      assert.deepEqual(Object.keys(h), ["id", "title", "url", "score", "snippet", "highlights"]);
      assert.deepEqual(Object.keys(f), ["passage", "chunk", "page", "title", "pageTitle", "heading", "url", "score"]);
      assert.deepEqual([f.title, f.url, f.score], [h.title, h.url, h.score], `hit ${i}`);
      assert.equal(f.pageTitle, "Garden Handbook");
      // The display title's rule (`fragments::section_title`): the page title alone when the
      // heading is empty or starts it.
      const alone = !f.heading || f.pageTitle.startsWith(f.heading);
      assert.equal(f.title, alone ? f.pageTitle : `${f.heading} — ${f.pageTitle}`);
      six.addChunk(read(`${manifest.files.fragments}c${f.chunk}.bin`));
      assert.deepEqual(six.excerpt(f.passage, q, 0), { snippet: h.snippet, highlights: h.highlights });
    }
    assert.deepEqual(
      fragment.map((f) => [f.url, f.heading]),
      [["index.html#watering", "Watering"], ["index.html#pests", "Pests"], ["index.html#garden-handbook", "Garden Handbook"]],
    );
    // Three sections of one page: one page number (from 1), the same before their chunks came.
    assert.deepEqual(fragment.map((f) => f.page), [1, 1, 1]);
    ix.free();
  });

  test("the bundle's files are stored gzip-compressed and read as they are, or raw", () => {
    assert.equal(manifest.bundle_version, 3);
    assert.equal(manifest.compression, "gzip");
    const isGzip = (b) => b[0] === 0x1f && b[1] === 0x8b;
    const gzCore = read(manifest.files.core);
    const gzShard = read(`${manifest.files.fragments}t0.bin`);
    const gzChunk = read(`${manifest.files.fragments}c0.bin`);
    const gzModel = read(manifest.files.model);
    for (const b of [gzCore, gzShard, gzChunk, gzModel]) assert.ok(isGzip(b), "stored gzip-compressed");
    assert.equal(gzCore.length, manifest.index.bytes);
    assert.equal(gzModel.length, manifest.model.bytes);
    // The same index and model from the decompressed bytes.
    const raw = SiteIndex.fromCore(gunzipSync(gzCore));
    const fromGz = SiteIndex.fromCore(gzCore);
    const rawModel = Model.fromBytes(gunzipSync(gzModel));
    assert.equal(rawModel.sha256, manifest.model.sha256);
    assert.equal(siteModel.sha256, manifest.model.sha256);
    for (const [ix, shard, chunk] of [[raw, gunzipSync(gzShard), gunzipSync(gzChunk)], [fromGz, gzShard, gzChunk]]) {
      assert.equal(ix.addShard(shard), 0);
      assert.equal(ix.addChunk(chunk), 0);
      for (let n = 1; n < ix.shardCount; n++) ix.addShard(read(`${manifest.files.fragments}t${n}.bin`));
      for (let n = 0; n < ix.partitionCount; n++) ix.addPartition(read(`${manifest.files.fragments}v${n}.bin`));
    }
    const q = "what the fixture pages say";
    assert.deepEqual(fromGz.search(q, { k: 5, model: siteModel }), raw.search(q, { k: 5, model: rawModel }));
    assert.ok(raw.search(q, { k: 5, model: rawModel }).length > 0);
    raw.free(); fromGz.free(); rawModel.free();
    // Damaged gzip: one clear line naming the method.
    const cut = (b) => b.subarray(0, b.length >> 1);
    assert.throws(() => SiteIndex.fromCore(cut(gzCore)), { message: "SiteIndex.fromCore: damaged gzip: the data ends early (truncated)" });
    assert.throws(() => six.addShard(cut(gzShard)), { message: "addShard: damaged gzip: the data ends early (truncated)" });
    assert.throws(() => six.addChunk(cut(gzChunk)), { message: "addChunk: damaged gzip: the data ends early (truncated)" });
    const gzPart = read(`${manifest.files.fragments}v0.bin`);
    assert.throws(() => six.addPartition(cut(gzPart)), { message: "addPartition: damaged gzip: the data ends early (truncated)" });
    assert.throws(() => Model.fromBytes(cut(gzModel)), { message: "Model.fromBytes: damaged gzip: the data ends early (truncated)" });
  });

  test("the widget's wasm (js/pkg/widget) asks for the files decompressed, saying so, and has no SearchIndex", async () => {
    const widget = join(root, "js/pkg/widget/lightembed_wasm.js");
    const w = await import(pathToFileURL(widget).href);
    await w.default({ module_or_path: readFileSync(join(root, "js/pkg/widget/lightembed_wasm_bg.wasm")) });
    // What a site's visitors download carries no whole-index class (js/Cargo.toml, feature widget);
    // npm's browser build (pkg/web) keeps every class.
    assert.equal(w.SearchIndex, undefined);
    const web = await import(pathToFileURL(join(root, "js/pkg/web/lightembed_wasm.js")).href);
    assert.equal(typeof web.SearchIndex, "function");
    const gzCore = read(manifest.files.core);
    assert.throws(() => w.SiteIndex.fromCore(gzCore), {
      message: "SiteIndex.fromCore: these bytes are gzip-compressed (a `lightembed site` bundle file): decompress them first (in a browser: DecompressionStream('gzip')); the package's Node build reads them as they are",
    });
    const ix = w.SiteIndex.fromCore(gunzipSync(gzCore));
    assert.equal(ix.length, manifest.index.passages);
    ix.free();
  });

  test("damaged and foreign fragments are refused", () => {
    const core = Buffer.from(gunzipSync(read(manifest.files.core)));
    core[40] ^= 1;
    assert.throws(() => SiteIndex.fromCore(core), /corrupted/);
    assert.throws(() => six.addShard(read(`${manifest.files.fragments}c0.bin`)), /expected magic "LEFT"/);
    assert.throws(() => SiteIndex.fromCore(read(manifest.files.model)), /expected magic "LEFI"/);
  });
});

describe("compatibility and damaged files", () => {
  test("a model of another major version: checkCompatible throws the spec's message, as the CLI does", () => {
    const other = patchedModel(44, Number(model.version.split(".")[0]) + 1);
    const path = join(tmp, "other-major.bin");
    writeFileSync(path, other);
    const next = Model.fromBytes(other);
    const [major, minor] = model.version.split(".");
    const message = `Index was built with ${model.modelId} v${major}.${minor} but the loaded model is v${Number(major) + 1}.${minor}. Re-run \`lightembed index\`.`;
    assert.throws(() => siteIndex.checkCompatible(next), { message });
    const r = spawnSync(cliPath, ["search", "--index", join(tmp, "site"), "--model", path, "compost"], { encoding: "utf8" });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, `error: ${message}\n`);
    next.free();
  });

  test("a model of another minor version is compatible, with the CLI's warnings", () => {
    const other = patchedModel(45, Number(model.version.split(".")[1]) + 1);
    const path = join(tmp, "other-minor.bin");
    writeFileSync(path, other);
    const next = Model.fromBytes(other);
    const warnings = siteIndex.checkCompatible(next);
    assert.ok(warnings.length >= 1 && warnings[0].startsWith("note: index was built with model v"), warnings.join("\n"));
    const r = spawnSync(cliPath, ["search", "--index", join(tmp, "site"), "--model", path, "compost"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    for (const w of warnings) assert.ok(r.stderr.includes(w), `CLI stderr lacks ${JSON.stringify(w)}:\n${r.stderr}`);
    next.free();
  });

  test("a truncated index throws", () => {
    const bytes = readFileSync(join(tmp, "site/index.bin"));
    for (const n of [0, 7, 100, bytes.length >> 1, bytes.length - 1]) {
      assert.throws(
        () => SearchIndex.fromBytes(bytes.subarray(0, n)),
        (e) =>
          e instanceof Error &&
          /^index bytes are (truncated: .* needs \d+ bytes but only \d+ are left|corrupted: the trailing SHA-256 does not match the contents)$/.test(
            e.message,
          ),
        `${n} bytes`,
      );
    }
  });

  test("an index of layout v1 is refused with its message", () => {
    const b = Buffer.from(readFileSync(join(tmp, "site/index.bin")));
    b.writeUInt16LE(1, 4);
    assert.throws(() => SearchIndex.fromBytes(b), {
      message: "Index was built with index format v1 but this lightembed reads index format v2. Re-run `lightembed index`.",
    });
  });
});
