// The npm package's `lightembed` command (bin/lightembed.js: `site` through the build library
// compiled to wasm, every other command through the CLI compiled to WASI) against the native
// CLI on the same inputs: the same bundle byte for byte, the same stdout, stderr and exit code
// for good and bad input, the same --help.
//
//   bash js/build.sh && cargo build -p lightembed-cli && node --test js/test/cli.test.mjs
//
// LIGHTEMBED_CLI: the native CLI (default target/debug/lightembed). LIGHTEMBED_NODE_CLI: the
// npm package's command to test (default js/bin/lightembed.js; js/test-packed.sh points it at the
// one `npm install` put in node_modules/.bin). BOOK: a real site to compare bundles on (default
// Debian's rust-doc book, skipped when absent).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const native = process.env.LIGHTEMBED_CLI ?? join(root, "target/debug/lightembed");
const nodeCli = process.env.LIGHTEMBED_NODE_CLI ?? join(root, "js/bin/lightembed.js");
const model = join(root, "public/models/lightembed-en-static.bin");
const fixtureSite = join(root, "tests/fixtures/site");
const book = process.env.BOOK ?? "/usr/share/doc/rust-doc/html/book";

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 256 << 20, ...opts });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const nat = (args, opts) => run(native, args, opts);
const npm = (args, opts) => run(nodeCli, args, opts);

/** `rel → sha256` of every file under `dir`. */
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

const tmp = mkdtempSync(join(tmpdir(), "lightembed-npm-cli-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
/** A fresh copy of `src` (symlinks kept as links). */
function copy(src) {
  const d = join(tmp, `site${n++}`);
  cpSync(src, d, { recursive: true, verbatimSymlinks: true });
  return d;
}

/** Runs `args` (with `{SITE}` → a fresh copy of `src`) through both; returns both results. */
function both(args, src = fixtureSite) {
  const a = copy(src);
  const b = copy(src);
  const r1 = nat(args.map((x) => x.replaceAll("{SITE}", a)));
  const r2 = npm(args.map((x) => x.replaceAll("{SITE}", b)));
  const norm = (s, site) => s.replaceAll(site, "{SITE}").replace(/ in \d+\.\d s;/, " in S s;");
  return [
    { ...r1, stdout: norm(r1.stdout, a), stderr: norm(r1.stderr, a), site: a },
    { ...r2, stdout: norm(r2.stdout, b), stderr: norm(r2.stderr, b), site: b },
  ];
}

test("site: the same bundle, byte for byte, and the same report as the native CLI", () => {
  const [a, b] = both(["site", "--site", "{SITE}", "--quiet"]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, a.stdout);
  assert.equal(b.stderr, a.stderr);
  const ta = tree(join(a.site, "lightembed"));
  assert.ok(Object.keys(ta).some((f) => /^core\.[0-9a-f]{16}\.bin$/.test(f)), Object.keys(ta).join(" "));
  assert.deepEqual(tree(join(b.site, "lightembed")), ta);
  // The files compared are the gzip-compressed ones (the default): the wasm build's compressor
  // writes the native CLI's bytes.
  const binary = Object.keys(ta).filter((f) => /\.(bin|wasm)$/.test(f));
  assert.ok(binary.length >= 5, binary.join(" "));
  for (const f of binary) {
    const head = readFileSync(join(b.site, "lightembed", f)).subarray(0, 10);
    assert.deepEqual([...head], [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255], `${f} stored gzip-compressed, deterministic header`);
  }
});

test("site --no-gzip: the same raw bundle as the native CLI", () => {
  const [a, b] = both(["site", "--site", "{SITE}", "--quiet", "--no-gzip"]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, a.stdout);
  const ta = tree(join(a.site, "lightembed"));
  assert.deepEqual(tree(join(b.site, "lightembed")), ta);
  const manifest = JSON.parse(readFileSync(join(b.site, "lightembed", "manifest.json"), "utf8"));
  assert.equal(manifest.compression, "none");
  const core = readFileSync(join(b.site, "lightembed", manifest.files.core));
  assert.equal(core.subarray(0, 4).toString("latin1"), "LEFI");
});

test("site with flags (--dims, --full-model, --exclude, --root-selector): the same bundle", () => {
  const [a, b] = both(["site", "--site={SITE}", "-q", "--dims", "64", "--full-model", "--exclude", "guide/**", "--root-selector", "main"]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, a.code, b.stderr);
  assert.equal(b.stdout, a.stdout);
  assert.deepEqual(tree(join(b.site, "lightembed")), tree(join(a.site, "lightembed")));
});

test("site on a real site (the Rust book): the same bundle", { skip: !existsSync(join(book, "index.html")) && `no ${book}` }, () => {
  const [a, b] = both(["site", "--site", "{SITE}", "-q"], book);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, a.stdout);
  const ta = tree(join(a.site, "lightembed"));
  assert.ok(Object.keys(ta).length > 50);
  assert.deepEqual(tree(join(b.site, "lightembed")), ta);
  // A second run replaces the bundle whole (and says the same).
  const again = npm(["site", "--site", b.site, "-q"]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(tree(join(b.site, "lightembed")), ta);
});

/** Bad input: the npm command says exactly what the native CLI says, with its exit code. */
const BAD = {
  "missing folder": ["site", "--site", "/nonexistent/site"],
  "a folder without pages": ["site", "--site", "{SITE}/guide/empty"],
  "a bad --exclude glob": ["site", "--site", "{SITE}", "--exclude", "a["],
  "dims the model lacks": ["site", "--site", "{SITE}", "--dims", "100"],
  "dims that are not a number": ["site", "--site", "{SITE}", "--dims", "-3"],
  "a missing model": ["site", "--site", "{SITE}", "--model", "/nonexistent/m.bin"],
  "a malformed model": ["site", "--site", "{SITE}", "--model", join(root, "tests/fixtures/malformed/bad_magic.bin")],
  "a bad --root-selector": ["site", "--site", "{SITE}", "--root-selector", "main[["],
  "an unknown flag": ["site", "--site", "{SITE}", "--bogus"],
  "no --site": ["site"],
  "--site twice": ["site", "--site", "{SITE}", "--site", "{SITE}"],
  "verify a malformed model": ["verify", join(root, "tests/fixtures/malformed/bad_magic.bin")],
  "verify a missing file": ["verify", "/nonexistent.bin"],
  "an unknown command": ["frobnicate"],
};
for (const [what, args] of Object.entries(BAD)) {
  test(`bad input, the native CLI's message and exit code: ${what}`, () => {
    const prep = (site) => mkdirSync(join(site, "guide/empty"), { recursive: true });
    const a = copy(fixtureSite);
    const b = copy(fixtureSite);
    prep(a);
    prep(b);
    const r1 = nat(args.map((x) => x.replaceAll("{SITE}", a)));
    const r2 = npm(args.map((x) => x.replaceAll("{SITE}", b)));
    assert.notEqual(r1.code, 0);
    assert.equal(r2.code, r1.code, r2.stderr);
    assert.equal(r2.stderr.replaceAll(b, "{SITE}"), r1.stderr.replaceAll(a, "{SITE}"));
    assert.equal(r2.stdout, r1.stdout);
    // Nothing half-written.
    assert.ok(!existsSync(join(b, "lightembed")));
    assert.deepEqual(readdirSync(b).filter((f) => f.startsWith(".lightembed")), []);
  });
}

test("a SITE/lightembed folder that is not a bundle is refused and kept", () => {
  const [a, b] = [copy(fixtureSite), copy(fixtureSite)];
  for (const s of [a, b]) {
    mkdirSync(join(s, "lightembed"));
    writeFileSync(join(s, "lightembed/mine.txt"), "keep me");
  }
  const r1 = nat(["site", "--site", a]);
  const r2 = npm(["site", "--site", b]);
  assert.equal(r1.code, 1);
  assert.equal(r2.code, 1);
  assert.equal(r2.stderr.replaceAll(b, "S"), r1.stderr.replaceAll(a, "S"));
  assert.equal(readFileSync(join(b, "lightembed/mine.txt"), "utf8"), "keep me");
});

test("a binary page is skipped with a warning and exit code 4, as natively", () => {
  const [a, b] = [copy(fixtureSite), copy(fixtureSite)];
  for (const s of [a, b]) writeFileSync(join(s, "blob.html"), Buffer.from([0x3c, 0x70, 0, 1, 2]));
  const r1 = nat(["site", "--site", a, "-q"]);
  const r2 = npm(["site", "--site", b, "-q"]);
  assert.equal(r1.code, 4);
  assert.equal(r2.code, 4);
  assert.equal(r2.stderr.replaceAll(b, "S"), r1.stderr.replaceAll(a, "S"));
  assert.match(r2.stderr, /warning: skipping .*blob\.html: binary file/);
  assert.deepEqual(tree(join(b, "lightembed")), tree(join(a, "lightembed")));
});

test("--help of every command is the native CLI's", () => {
  for (const args of [["--help"], ["--version"], ...["site", "index", "search", "embed", "tokenize", "passages", "inspect", "verify"].map((c) => [c, "--help"])]) {
    const r1 = nat(args);
    const r2 = npm(args);
    assert.equal(r2.code, r1.code, args.join(" "));
    assert.equal(r2.stdout, r1.stdout, args.join(" "));
  }
});

test("inspect, verify, embed, tokenize, passages: the native CLI's output", () => {
  const input = join(tmp, "texts.jsonl");
  writeFileSync(input, ['{"id":7,"text":"How do I read a file?"}', '{"id":"b","text":"Ownership and borrowing"}', ""].join("\n"));
  for (const args of [
    ["inspect", model],
    ["inspect", "--json", model],
    ["verify", model],
    ["embed", "--model", model, "--dims", "64", "--jsonl", input],
    ["tokenize", "--model", model, "--jsonl", input],
    ["passages", "--model", model, "--embed-text", fixtureSite],
  ]) {
    const r1 = nat(args);
    const r2 = npm(args);
    assert.equal(r1.code, 0, r1.stderr);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(r2.stdout, r1.stdout, args.join(" "));
  }
});

test("index then search: the same index.bin and the same ranking", () => {
  const [o1, o2] = [join(tmp, "ix-native"), join(tmp, "ix-npm")];
  const args = (out) => ["index", "--model", model, "--out", out, "-q", fixtureSite];
  assert.equal(nat(args(o1)).code, 0);
  const r = npm(args(o2));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(readFileSync(join(o2, "index.bin")), readFileSync(join(o1, "index.bin")));
  const q = (out) => ["search", "--index", out, "--json", "-k", "5", "how do I configure the tool"];
  const strip = (s) => {
    const v = JSON.parse(s);
    delete v.ms;
    return v;
  };
  assert.deepEqual(strip(npm(q(o2)).stdout), strip(nat(q(o1)).stdout));
});

test("relative paths are the user's working folder's", () => {
  const d = copy(fixtureSite);
  const r = npm(["site", "--site", "site", "-q"], { cwd: dirname(d) , env: { ...process.env } });
  // `site` is not a folder there (the copies are named siteN): the native message, relative.
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "error: --site site: not a folder\n");
  const ok = npm(["verify", relative(tmp, model)], { cwd: tmp });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^ok: /);
});
