// The npm package's Node API in Pagefind's shape (`createIndex` → `addDirectory` /
// `addHTMLFile` / `addCustomRecord` → `getFiles` / `writeFiles`), `buildSite` and `loadModel`:
// the bundle of `addDirectory` equals `lightembed site`'s on the same folder; pages and records
// added by hand are searchable in the bundle (through `SiteIndex`, as the widget reads it);
// bad arguments reject with clear messages and leave nothing written.
//
// LIGHTEMBED_PACKAGE: a folder where `npm install` put the packed package (js/test-packed.sh);
// default: this checkout's js/.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(join(process.env.LIGHTEMBED_PACKAGE ?? join(root, "js/test"), "x.js"));
const le = require("lightembed");
const native = process.env.LIGHTEMBED_CLI ?? join(root, "target/debug/lightembed");
const fixtureSite = join(root, "tests/fixtures/site");
const tmp = mkdtempSync(join(tmpdir(), "lightembed-api-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));

function tree(dir) {
  const out = {};
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}
let n = 0;
const copy = (src) => {
  const d = join(tmp, `s${n++}`);
  cpSync(src, d, { recursive: true });
  return d;
};

/** Searches a bundle's files (from getFiles) as the widget does: core, shards and partitions,
 * then the hits' chunks (their URLs and titles), then the same search again. */
async function searchBundle(files, query) {
  const byPath = new Map(files.map((f) => [f.path, f.content]));
  const manifest = JSON.parse(Buffer.from(byPath.get("manifest.json")).toString("utf8"));
  const model = le.Model.fromBytes(byPath.get(manifest.files.model));
  const site = le.SiteIndex.fromCore(byPath.get(manifest.files.core));
  for (const s of site.missingShards(query)) site.addShard(byPath.get(`${manifest.files.fragments}t${s}.bin`));
  const vector = model.embed(query, site.dims);
  for (const v of site.partitionsFor(vector)) site.addPartition(byPath.get(`${manifest.files.fragments}v${v}.bin`));
  for (const h of site.search(query, { vector, k: 5 })) site.addChunk(byPath.get(`${manifest.files.fragments}c${h.chunk}.bin`));
  return site.search(query, { vector, k: 5 });
}

test("addDirectory + writeFiles writes the bundle `lightembed site` writes", async () => {
  const [a, b] = [copy(fixtureSite), copy(fixtureSite)];
  const r = spawnSync(native, ["site", "--site", a, "-q"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const index = await le.createIndex();
  const added = await index.addDirectory({ path: b });
  assert.deepEqual(added, { pages: 1, passages: 3, skipped: 0 });
  const w = await index.writeFiles();
  assert.equal(w.outputPath, join(b, "lightembed"));
  assert.equal(w.passages, 3);
  assert.deepEqual(tree(join(b, "lightembed")), tree(join(a, "lightembed")));
  // Used up: adding more is refused, with the reason.
  await assert.rejects(index.addHTMLFile({ url: "/x", content: "<p>x</p>" }), /already written/);
});

test("buildSite is `lightembed site`", async () => {
  const [a, b] = [copy(fixtureSite), copy(fixtureSite)];
  spawnSync(native, ["site", "--site", a, "-q", "--dims", "64"]);
  const r = await le.buildSite({ site: b, quiet: true, dims: 64 });
  assert.equal(r.bundle, join(b, "lightembed"));
  assert.match(r.summary, /^indexed 1 page → 3 passages in /);
  assert.deepEqual(tree(r.bundle), tree(join(a, "lightembed")));
  await assert.rejects(le.buildSite({ site: join(tmp, "nope") }), {
    name: "LightembedError",
    message: `--site ${join(tmp, "nope")}: not a folder`,
  });
});

test("pages and records added by hand are found in the bundle", async () => {
  const index = await le.createIndex({ dims: 128 });
  assert.deepEqual(
    await index.addHTMLFile({
      url: "/garden/tomatoes.html",
      content: "<html><head><title>Tomatoes</title></head><body><h1>Tomatoes</h1><p>Water tomato plants deeply twice a week; mulch keeps the soil moist.</p></body></html>",
    }),
    { passages: 1 },
  );
  assert.deepEqual(
    await index.addCustomRecord({ url: "/faq/rust", content: "The borrow checker makes sure references never outlive the data they point to.", meta: { title: "Rust FAQ" } }),
    { passages: 1 },
  );
  await index.addHTMLFile({ sourcePath: "docs/ship.html", content: Buffer.from("<title>Ships</title><p>Sailing ships carry cargo across oceans.</p>") });
  const { files } = await index.getFiles();
  assert.ok(files.some((f) => f.path === "manifest.json"));
  const hits = await searchBundle(files, "how often should I water my tomatoes");
  assert.equal(hits[0].url, "/garden/tomatoes.html");
  const hits2 = await searchBundle(files, "lifetime of references");
  assert.equal(hits2[0].url, "/faq/rust");
  assert.equal(hits2[0].title, "Rust FAQ");
  const hits3 = await searchBundle(files, "boats");
  assert.equal(hits3[0].url, "docs/ship.html");
});

test("bad arguments reject with a clear message", async () => {
  await assert.rejects(le.createIndex({ dims: 100 }), /^LightembedError: --dims: /);
  await assert.rejects(le.createIndex({ dims: "64" }), { message: 'dims must be a positive integer, not "64"' });
  await assert.rejects(le.createIndex({ exclude: "x" }), { message: "exclude must be an array of glob strings" });
  await assert.rejects(le.createIndex({ exclude: ["a["] }), /^LightembedError: --exclude "a\[": not a valid glob/);
  await assert.rejects(le.createIndex({ model: "/nonexistent.bin" }), {
    message: "cannot read /nonexistent.bin: No such file or directory (os error 2)",
  });
  await assert.rejects(le.createIndex({ rootSelector: "main[[" }), /^LightembedError: --root-selector: /);
  const index = await le.createIndex();
  await assert.rejects(index.addHTMLFile({ url: 5, content: "x" }), { message: "addHTMLFile: url must be a string, not number" });
  await assert.rejects(index.addHTMLFile({ url: "/a" }), { message: "addHTMLFile: content must be a string or a Uint8Array" });
  await assert.rejects(index.addCustomRecord({ url: "", content: "x" }), { message: "a custom record needs a url" });
  await assert.rejects(index.addDirectory({ path: join(tmp, "missing") }), { message: `--site ${join(tmp, "missing")}: not a folder` });
  await assert.rejects(index.addHTMLFile({ url: "/b", content: new Uint8Array([60, 0, 1]) }), { message: "/b: binary file (a NUL byte in its first 8 KiB)" });
  // Nothing was added: no text.
  const out = join(tmp, "never");
  await assert.rejects(index.writeFiles({ outputPath: out }), { message: "no text found in the inputs (1 file read)" });
  assert.ok(!existsSync(out));
});

test("loadModel: the bundled model by name or default, a path, the engine's errors", async () => {
  const m = await le.loadModel();
  assert.equal(m.modelId, "lightembed-en-0l");
  assert.equal((await le.loadModel("lightembed-en-static")).sha256, m.sha256);
  const v = m.embed("hello world", 32);
  assert.equal(v.length, 32);
  await assert.rejects(le.loadModel(join(root, "tests/fixtures/malformed/bad_magic.bin")), (e) => {
    assert.equal(e.rule, "bad_magic");
    assert.match(e.message, /bad_magic\.bin: bad magic "LEMX"/);
    return true;
  });
});

test("ES module import sees every name", async () => {
  const { pathToFileURL } = await import("node:url");
  const esm = await import(pathToFileURL(require.resolve("lightembed")).href);
  for (const name of ["Model", "SearchIndex", "SiteIndex", "createIndex", "buildSite", "loadModel", "LightembedError"]) {
    assert.equal(typeof esm[name], "function", name);
  }
});
