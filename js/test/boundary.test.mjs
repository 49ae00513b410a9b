// The JS boundary of the npm package's engine and index classes (Model, SearchIndex, SiteIndex):
// every argument is checked before the Rust code sees it, so a wrong type or an out-of-range
// number is a clear `Error` naming the method and the argument (never `memory access out of
// bounds`, `RuntimeError: unreachable` or a Rust value such as `Some(0)`), and the object stays
// usable afterwards (a panic in wasm would leave it borrowed for good: "recursive use of an
// object", "attempted to take ownership of Rust value while it was borrowed").
//
//   bash js/build.sh && cargo build -p lightembed-cli && node --test js/test/boundary.test.mjs

import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Model, SearchIndex, SiteIndex } from "lightembed";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const cliPath = process.env.LIGHTEMBED_CLI ?? join(root, "target/debug/lightembed");
const modelPath = join(root, "public/models/lightembed-en-static.bin");

function cli(args) {
  const r = spawnSync(cliPath, args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`lightembed ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** `f()` throws an `Error` (not a wasm `RuntimeError`) with exactly `message`. */
function throwsMessage(f, message) {
  assert.throws(f, (e) => {
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `a wasm trap: ${e}`);
    assert.ok(e instanceof Error, `not an Error: ${e}`);
    assert.equal(e.message, message);
    return true;
  });
}

let tmp, model, index, indexDir, bundle, manifest, siteModel;
const read = (name) => readFileSync(join(bundle, name));
const core = () => read(manifest.files.core);
const shard = (n) => read(`${manifest.files.fragments}t${n}.bin`);
const chunk = (n) => read(`${manifest.files.fragments}c${n}.bin`);
const part = (n) => read(`${manifest.files.fragments}v${n}.bin`);

before(() => {
  assert.ok(existsSync(cliPath), `${cliPath} is missing: run cargo build -p lightembed-cli`);
  tmp = mkdtempSync(join(tmpdir(), "lightembed-boundary-"));
  indexDir = join(tmp, "site");
  cli(["index", "--quiet", "--model", modelPath, "--out", indexDir, join(root, "tests/fixtures/site")]);
  const copy = join(tmp, "site-copy");
  execFileSync("cp", ["-r", join(root, "tests/fixtures/site"), copy]);
  cli(["site", "--site", copy, "--quiet"]);
  bundle = join(copy, "lightembed");
  manifest = JSON.parse(read("manifest.json"));
  model = Model.fromBytes(readFileSync(modelPath));
  siteModel = Model.fromBytes(read(manifest.files.model));
  index = SearchIndex.fromBytes(readFileSync(join(indexDir, "index.bin")));
});

after(() => {
  model?.free();
  siteModel?.free();
  index?.free();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("k and the other numeric options", () => {
  test("a huge k is refused with a clear error and the SearchIndex stays usable (free included)", () => {
    const ix = SearchIndex.fromBytes(readFileSync(join(indexDir, "index.bin")));
    for (const [k, shown] of [[1e8, "100000000"], [2 ** 32 - 1, "4294967295"], [2 ** 53, "9007199254740992"], [100001, "100001"]]) {
      throwsMessage(() => ix.search("soil", { model, k }), `search: options.k must be an integer from 1 to 100000, not ${shown}`);
    }
    for (const [k, shown] of [[0, "0"], [-1, "-1"], [2.5, "2.5"], [NaN, "NaN"], [Infinity, "Infinity"], ["5", '"5"'], [true, "boolean"], [5n, "bigint"]]) {
      throwsMessage(() => ix.search("soil", { model, k }), `search: options.k must be an integer from 1 to 100000, not ${shown}`);
    }
    assert.equal(ix.search("soil", { model, k: 3 }).length, 3);
    ix.free(); // a panic inside search would leave the object borrowed: free() would throw
  });

  test("the largest valid k returns every result, as lightembed search -k 100000", () => {
    for (const mode of ["hybrid", "vector", "keyword"]) {
      const q = "soil for tomatoes";
      const want = JSON.parse(cli(["search", "--index", indexDir, "--json", "--mode", mode, "-k", "100000", q]));
      const got = index.search(q, { model, mode, k: 100000, excerptChars: 0 });
      assert.deepEqual(got.map((h) => h.id), want.results.map((r) => r.id), mode);
      assert.deepEqual(index.search(q, { model, mode, k: index.length, excerptChars: 0 }), got);
    }
  });

  test("a huge k on a SiteIndex is refused and addShard, addChunk and free still work", () => {
    const six = SiteIndex.fromCore(core());
    throwsMessage(
      () => six.search("fixture", { model: siteModel, mode: "vector", k: 2 ** 32 - 1 }),
      "search: options.k must be an integer from 1 to 100000, not 4294967295",
    );
    for (const n of six.missingShards("fixture pages")) assert.equal(six.addShard(shard(n)), n);
    for (const n of six.partitionsFor(siteModel.embed("fixture pages", six.dims))) assert.equal(six.addPartition(part(n)), n);
    const hits = six.search("fixture pages", { model: siteModel, k: 100000 });
    assert.ok(hits.length >= 1 && hits.length <= six.length);
    assert.deepEqual(six.search("fixture pages", { model: siteModel, k: six.length }), hits);
    assert.equal(six.addChunk(chunk(hits[0].chunk)), hits[0].chunk);
    six.free();
  });

  test("excerptChars and chars: any non-negative safe integer; huge ones mean the whole text", () => {
    const whole = index.search("compost", { mode: "keyword", excerptChars: 0 });
    assert.deepEqual(index.search("compost", { mode: "keyword", excerptChars: 2 ** 32 + 5 }), whole);
    assert.deepEqual(index.search("compost", { mode: "keyword", excerptChars: Number.MAX_SAFE_INTEGER }), whole);
    for (const [x, shown] of [[-1, "-1"], [1.5, "1.5"], [2 ** 53, "9007199254740992"], ["240", '"240"']]) {
      throwsMessage(() => index.search("compost", { mode: "keyword", excerptChars: x }), `search: options.excerptChars must be an integer ≥ 0, not ${shown}`);
    }
    const six = SiteIndex.fromCore(core());
    six.addChunk(chunk(0));
    assert.deepEqual(six.excerpt(0, "fixture", 2 ** 40), six.excerpt(0, "fixture", 0));
    throwsMessage(() => six.excerpt(0, "fixture", -3), "excerpt: chars must be an integer ≥ 0, not -3");
    six.free();
  });
});

describe("argument types", () => {
  test("Model: text, texts, dims and bytes are checked", () => {
    const dims = model.validDims.join(", ");
    throwsMessage(() => model.embed(123), "embed: text must be a string, not number");
    throwsMessage(() => model.embed(undefined), "embed: text must be a string, not undefined");
    throwsMessage(() => model.embed(["a"]), "embed: text must be a string, not array");
    throwsMessage(() => model.embed("soil", 2 ** 32 + 128), `embed: dims must be one of ${dims}, not 4294967424`);
    throwsMessage(() => model.embed("soil", 100), `embed: dims must be one of ${dims}, not 100`);
    throwsMessage(() => model.embed("soil", "64"), `embed: dims must be one of ${dims}, not "64"`);
    throwsMessage(() => model.embed("soil", -64), `embed: dims must be one of ${dims}, not -64`);
    throwsMessage(() => model.embedBatch("abc"), "embedBatch: texts must be an array of strings, not string");
    throwsMessage(() => model.embedBatch(["a", 1]), "embedBatch: texts[1] must be a string, not number");
    throwsMessage(() => model.embedBatch(["a"], 2 ** 32 + 128), `embedBatch: dims must be one of ${dims}, not 4294967424`);
    throwsMessage(() => model.tokenize(null), "tokenize: text must be a string, not null");
    throwsMessage(() => Model.fromBytes("x"), "Model.fromBytes: bytes must be a Uint8Array, not string");
    throwsMessage(() => Model.fromBytes(new ArrayBuffer(8)), "Model.fromBytes: bytes must be a Uint8Array, not ArrayBuffer");
    throwsMessage(() => Model.fromBytes(), "Model.fromBytes: bytes must be a Uint8Array, not undefined");
    // Defaults and the happy path are as before.
    assert.equal(model.embed("soil", null).length, model.outputDim);
    assert.equal(model.embed("soil", 64).length, 64);
    assert.deepEqual(model.embedBatch([]), []);
    assert.deepEqual(model.embedBatch(["a", "b"], 64), [model.embed("a", 64), model.embed("b", 64)]);
  });

  test("SearchIndex: bytes, query, options and the model are checked", () => {
    const ix = SearchIndex.fromBytes(readFileSync(join(indexDir, "index.bin")));
    throwsMessage(() => SearchIndex.fromBytes(null), "SearchIndex.fromBytes: bytes must be a Uint8Array, not null");
    throwsMessage(() => SearchIndex.fromBytes([1, 2, 3]), "SearchIndex.fromBytes: bytes must be a Uint8Array, not array");
    throwsMessage(() => ix.search(5, { model }), "search: query must be a string, not number");
    throwsMessage(() => ix.search(null), "search: query must be a string, not null");
    throwsMessage(() => ix.search("soil", 5), "search: options must be an object, not number");
    throwsMessage(() => ix.search("soil", [1]), "search: options must be an object, not array");
    throwsMessage(() => ix.search("soil", { model, limit: 3 }), 'search: unknown option "limit"; expected one of k, mode, vector, model, excerptChars');
    throwsMessage(() => ix.search("soil", { model, mode: "fuzzy" }), 'search: options.mode must be "hybrid", "vector" or "keyword", not "fuzzy"');
    throwsMessage(() => ix.search("soil", { model, mode: 1 }), 'search: options.mode must be "hybrid", "vector" or "keyword", not 1');
    throwsMessage(() => ix.search("soil", { vector: "x" }), "search: options.vector must be a Float32Array or an array of numbers, not string");
    throwsMessage(() => ix.search("soil", { vector: new Float64Array(ix.dims) }), "search: options.vector must be a Float32Array or an array of numbers, not Float64Array");
    throwsMessage(() => ix.search("soil", { vector: ["1", ...Array(ix.dims - 1).fill(0)] }), "search: options.vector[0] must be a number, not string");
    throwsMessage(() => ix.search("soil", { vector: new Float32Array(3) }), `search: options.vector must have index.dims = ${ix.dims} numbers, not 3`);
    throwsMessage(() => ix.search("soil", { vector: new Array(1e8) }), `search: options.vector must have index.dims = ${ix.dims} numbers, not 100000000`);
    throwsMessage(() => ix.search("soil", { model: {} }), "search: options.model must be a Model (an object with embed(text, dims)), not object");
    throwsMessage(() => ix.search("soil", { model: ix }), "search: options.model must be a Model (an object with embed(text, dims)), not SearchIndex");
    throwsMessage(
      () => ix.search("soil", { model: { embed: () => [1, 2, 3] } }),
      `search: options.model.embed(query, ${ix.dims}) must return ${ix.dims} numbers, not 3`,
    );
    throwsMessage(
      () => ix.search("soil", { model: { embed: () => "x" } }),
      `search: options.model.embed(query, ${ix.dims}) must return a Float32Array or an array of numbers, not string`,
    );
    // An error thrown by the model's embed comes through as it is.
    throwsMessage(() => ix.search("soil", { model: { embed: () => { throw new Error("boom"); } } }), "boom");
    throwsMessage(() => ix.checkCompatible({}), "checkCompatible: model must be a Model, not object");
    throwsMessage(() => ix.checkCompatible(undefined), "checkCompatible: model must be a Model, not undefined");
    const freed = Model.fromBytes(readFileSync(modelPath));
    freed.free();
    throwsMessage(() => ix.checkCompatible(freed), "checkCompatible: model must be a Model, not a freed Model");
    throwsMessage(() => ix.search("soil", { model: freed }), "search: options.model must be a Model, not a freed Model");
    // Still usable, free included.
    assert.deepEqual(ix.checkCompatible(model), []);
    assert.deepEqual(ix.search("soil", { model, k: 2 }), index.search("soil", { model, k: 2 }));
    assert.deepEqual(ix.search("soil", { model, k: undefined, mode: null }), index.search("soil", { model }));
    ix.free();
  });

  test("SiteIndex: bytes, query, passage numbers; no Rust values in messages", () => {
    throwsMessage(() => SiteIndex.fromCore(null), "SiteIndex.fromCore: bytes must be a Uint8Array, not null");
    throwsMessage(() => SiteIndex.fromCore({}), "SiteIndex.fromCore: bytes must be a Uint8Array, not object");
    const six = SiteIndex.fromCore(core());
    const last = six.length - 1;
    throwsMessage(() => six.missingShards(5), "missingShards: query must be a string, not number");
    throwsMessage(() => six.addShard("x"), "addShard: bytes must be a Uint8Array, not string");
    throwsMessage(() => six.addChunk(new Float32Array(2)), "addChunk: bytes must be a Uint8Array, not Float32Array");
    throwsMessage(() => six.addPartition([1, 2]), "addPartition: bytes must be a Uint8Array, not array");
    assert.throws(() => six.partitionsFor([1, 2]), /partitionsFor: vector must have index.dims = 128 numbers/);
    assert.throws(() => six.search("fixture", { model: siteModel, mode: "vector" }), /vector partition 0 is not loaded/);
    throwsMessage(() => six.hasText(-1), `hasText: passage must be an integer from 0 to ${last}, not -1`);
    throwsMessage(() => six.hasText("x"), `hasText: passage must be an integer from 0 to ${last}, not "x"`);
    throwsMessage(() => six.hasText(six.length), `hasText: passage must be an integer from 0 to ${last}, not ${six.length}`);
    throwsMessage(() => six.excerpt(2 ** 32, "x"), `excerpt: passage must be an integer from 0 to ${last}, not 4294967296`);
    throwsMessage(() => six.excerpt(0, 5), "excerpt: query must be a string, not number");
    throwsMessage(() => six.excerpt(0, "x"), "the text of passage 0 is not loaded: add chunk 0 first");
    throwsMessage(() => six.search(5, { model: siteModel }), "search: query must be a string, not number");
    throwsMessage(() => six.checkCompatible(null), "checkCompatible: model must be a Model, not null");
    // Still usable: shards, chunks, search, excerpts, free.
    assert.equal(six.hasText(0), false);
    for (const n of six.missingShards("fixture")) six.addShard(shard(n));
    for (let n = 0; n < six.partitionCount; n++) assert.equal(six.addPartition(part(n)), n);
    assert.equal(six.addChunk(chunk(0)), 0);
    assert.equal(six.hasText(0), true);
    assert.ok(six.search("fixture", { model: siteModel }).length >= 1);
    assert.equal(typeof six.excerpt(0, "fixture").snippet, "string");
    six.free();
  });

  test("the TypeScript types say what the methods accept", () => {
    const dts = readFileSync(join(root, "js/pkg/node/lightembed_wasm.d.ts"), "utf8");
    for (const line of [
      "static fromBytes(bytes: Uint8Array): Model;",
      "embed(text: string, dims?: number | null): Float32Array;",
      "embedBatch(texts: string[], dims?: number | null): Float32Array[];",
      "tokenize(text: string): Uint32Array;",
      "static fromBytes(bytes: Uint8Array): SearchIndex;",
      "checkCompatible(model: Model): string[];",
      "search(query: string, options?: SearchOptions | null): SearchHit[];",
      "static fromCore(bytes: Uint8Array): SiteIndex;",
      "missingShards(query: string): Uint32Array;",
      "addShard(bytes: Uint8Array): number;",
      "addChunk(bytes: Uint8Array): number;",
      "cellsFor(vector: Float32Array | number[]): Uint32Array;",
      "addCell(bytes: Uint8Array): number;",
      "partitionsFor(vector: Float32Array | number[]): Uint32Array;",
      "addPartition(bytes: Uint8Array): number;",
      "hasText(passage: number): boolean;",
      "search(query: string, options?: SearchOptions | null): SiteHit[];",
      "excerpt(passage: number, query: string, chars?: number | null): Excerpt;",
    ]) {
      assert.ok(dts.includes(line), `lightembed_wasm.d.ts lacks ${line}`);
    }
  });
});

test("keywordMatches: the keyword side decides whether a word of the query is in some passage", async () => {
  const { readFileSync, mkdtempSync, cpSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { spawnSync } = await import("node:child_process");
  const le = await import("lightembed");
  const root = new URL("../..", import.meta.url).pathname;
  const cli = process.env.LIGHTEMBED_CLI ?? join(root, "target/debug/lightembed");
  const tmp = mkdtempSync(join(tmpdir(), "lightembed-kw-"));
  try {
    const site = join(tmp, "site");
    cpSync(join(root, "tests/fixtures/site"), site, { recursive: true });
    const r = spawnSync(cli, ["site", "--site", site, "-q"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const manifest = JSON.parse(readFileSync(join(site, "lightembed/manifest.json"), "utf8"));
    const ix = le.SiteIndex.fromCore(readFileSync(join(site, "lightembed", manifest.files.core)));
    for (let s = 0; s < ix.shardCount; s++) ix.addShard(readFileSync(join(site, "lightembed", manifest.files.fragments, `t${s}.bin`)));
    assert.equal(ix.keywordMatches("xyzzy plugh"), false);
    assert.equal(ix.keywordMatches("garden"), true);
    assert.throws(() => ix.keywordMatches(5), { message: "keywordMatches: query must be a string, not number" });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("SiteIndex hits carry the page title and the heading apart (a Sphinx title keeps its dash)", async () => {
  const { readFileSync, mkdtempSync, writeFileSync, mkdirSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const le = await import("lightembed");
  const tmp = mkdtempSync(join(tmpdir(), "lightembed-titles-"));
  try {
    const index = await le.default.createIndex({ dims: 128 });
    await index.addHTMLFile({
      url: "install.html",
      content: "<title>Install — Garden 1.0 documentation</title><p>Read this first.</p>" +
        "<h2 id='win'>Windows</h2><p>Run the setup program and restart the machine.</p>",
    });
    const { files } = await index.getFiles();
    const get = (p) => files.find((f) => f.path === p).content;
    const manifest = JSON.parse(Buffer.from(get("manifest.json")).toString("utf8"));
    const ix = le.SiteIndex.fromCore(get(manifest.files.core));
    for (let s = 0; s < ix.shardCount; s++) ix.addShard(get(`${manifest.files.fragments}t${s}.bin`));
    // URLs and titles travel with the text chunks.
    for (let c = 0; c < ix.chunkCount; c++) ix.addChunk(get(`${manifest.files.fragments}c${c}.bin`));
    const hits = ix.search("setup program restart", { mode: "keyword", k: 5 });
    const win = hits.find((h) => h.url === "install.html#win");
    assert.equal(win.pageTitle, "Install — Garden 1.0 documentation");
    assert.equal(win.heading, "Windows");
    assert.equal(win.title, "Windows — Install — Garden 1.0 documentation");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
