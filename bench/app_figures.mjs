// Figures for bench/RESULTS.md "## App (headless Chromium)": measured on the trunk-built dist/
// in headless /usr/bin/chromium (playwright-core from tests/e2e/node_modules).
//
//   scripts/e2e.sh && node bench/app_figures.mjs     # e2e.sh builds dist/ (trunk, release); prints Markdown
//
// Per bundled model (fresh browser profile each):
//   cold start   navigation → `model-status` = ready (download + verify + worker start)
//   warm start   reload → ready again (model from the IndexedDB cache)
//   throughput   indexing the whole bundled corpus in the worker (passages/s)
//   query p50    50 queries typed into the search box: worker embed + HNSW search, and the
//                UI round trip (postMessage both ways)
//   restore      reload → index restored from IndexedDB (read + validate), no embedding
// And the bytes shipped (gzip -9) and where SIMD128 shows up in the built worker wasm.
//
// Env: DIST, LIMIT (passages to index; default all), QUERIES (default 50), QUERY_FILE (JSONL with
// a "query" field per line instead of the built-in Rust-book questions), MODELS (comma-separated
// model file names to measure; default all in the manifest), WORKERS (engines per indexing job,
// `?workers=N`; default one per core, at most 4), RELAXED=0 (`?relaxed=0`: the SIMD128 worker even
// where the browser has relaxed SIMD).

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const require = createRequire(path.join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');
const dist = path.resolve(process.env.DIST || path.join(root, 'dist'));
const N_QUERIES = Number(process.env.QUERIES || 50);
const manifest = JSON.parse(fs.readFileSync(path.join(dist, 'models', 'manifest.json'), 'utf8'));
const corpus = fs.readFileSync(path.join(dist, 'corpus', 'rust-book.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const LIMIT = Number(process.env.LIMIT || corpus.length);

const QUERIES = process.env.QUERY_FILE
  ? fs.readFileSync(process.env.QUERY_FILE, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query)
  : [
  'what is ownership', 'difference between stack and heap', 'how do I read a file', 'borrowing rules for references',
  'mutable reference', 'lifetimes in function signatures', 'pattern matching on enums', 'Option and None',
  'error handling with Result', 'the question mark operator', 'unrecoverable errors with panic', 'generic types',
  'traits as parameters', 'closures capture their environment', 'iterators and map', 'smart pointers Box',
  'reference counting Rc', 'interior mutability RefCell', 'threads and message passing', 'Mutex shared state',
  'async await', 'writing tests', 'cargo workspaces', 'publishing a crate to crates.io', 'modules and privacy',
  'use keyword paths', 'vectors store lists of values', 'strings are UTF-8', 'hash maps', 'slices',
  'structs and methods', 'impl blocks', 'match control flow', 'if let syntax', 'loops while for',
  'variables and mutability', 'shadowing', 'data types integers floats', 'functions return values', 'comments',
  'guessing game random number', 'installing rustup', 'hello world cargo', 'unsafe rust raw pointers',
  'macros declarative', 'trait objects dynamic dispatch', 'object oriented programming', 'patterns refutability',
  'advanced traits associated types', 'building a web server thread pool',
];

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let p = path.normalize(path.join(dist, decodeURIComponent(url.pathname)));
  if (!p.startsWith(dist)) { res.writeHead(403).end(); return; }
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, 'index.html');
  if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
  const body = fs.readFileSync(p);
  const st = fs.statSync(p);
  res.writeHead(200, {
    'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'content-length': body.length,
    'last-modified': st.mtime.toUTCString(), etag: `"${st.size}-${st.mtimeMs}"`, 'cache-control': 'no-cache',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const attr = (page, id, name) => page.getAttribute(`[data-testid="${id}"]`, name);
const waitText = (page, id, value, timeout) => page.waitForFunction(([id, v]) =>
  document.querySelector(`[data-testid="${id}"]`)?.textContent.trim() === v, [id, value], { timeout, polling: 20 });

async function measure(model) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-figs-'));
  const ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const url = `${base}/?model=models/${model.file}&limit=${LIMIT}${process.env.WORKERS ? `&workers=${process.env.WORKERS}` : ''}${process.env.RELAXED === '0' ? '&relaxed=0' : ''}`;
  const r = { model: `${model.file} (${model.model_id} v${model.version}, ${model.n_layers ? `${model.n_layers} layers` : 'static'}, ${model.embedding_quant} emb)`, file: model.file, size: model.size };

  await page.goto(url);
  await waitText(page, 'model-status', 'ready', 300_000);
  r.cold_ms = Number(await attr(page, 'model-status', 'data-ready-ms'));
  r.cold_verify_ms = Number(await attr(page, 'model-info', 'data-verify-ms'));

  await page.click('[data-testid="load-corpus"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="index-progress"]')?.dataset.done === 'true', null, { timeout: 3_600_000, polling: 200 });
  r.passages = Number(await page.textContent('[data-testid="doc-count"]'));
  r.per_sec = Number(await attr(page, 'index-progress', 'data-per-sec'));
  r.workers = Number(await attr(page, 'index-progress', 'data-workers'));

  const total = []; const embed = []; const search = [];
  for (let i = 0; i < N_QUERIES; i++) {
    const q = QUERIES[i % QUERIES.length] + (i >= QUERIES.length ? ` ${i}` : '');
    await page.fill('[data-testid="query"]', q);
    await page.waitForFunction((q) => document.querySelector('[data-testid="latency"]')?.dataset.query === q, q, { timeout: 30_000, polling: 5 });
    total.push(Number(await attr(page, 'latency', 'data-total-ms')));
    embed.push(Number(await attr(page, 'latency', 'data-embed-ms')));
    search.push(Number(await attr(page, 'latency', 'data-search-ms')));
  }
  r.q_total_p50 = pct(total, 0.5); r.q_embed_p50 = pct(embed, 0.5); r.q_search_p50 = pct(search, 0.5);
  r.q_total_p95 = pct(total, 0.95);
  await page.waitForTimeout(1000); // let the index write finish

  await page.reload();
  await waitText(page, 'model-status', 'ready', 120_000);
  r.warm_ms = Number(await attr(page, 'model-status', 'data-ready-ms'));
  r.warm_verify_ms = Number(await attr(page, 'model-info', 'data-verify-ms'));
  await waitText(page, 'doc-count', String(r.passages), 120_000);
  r.restore_ms = Number(await attr(page, 'doc-count', 'data-restore-ms'));
  r.restore_embed = await page.textContent('[data-testid="embed-count"]');
  r.ready_to_restored_ms = await page.evaluate(() => performance.now()) - r.warm_ms;
  await ctx.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  return r;
}

const rows = [];
const only = process.env.MODELS ? process.env.MODELS.split(',') : null;
for (const m of manifest.models.filter((m) => !only || only.includes(m.file))) {
  process.stderr.write(`measuring ${m.file}…\n`);
  rows.push(await measure(m));
}
server.close();

// Bytes shipped.
const files = fs.readdirSync(dist).filter((f) => /\.(wasm|js)$/.test(f));
const sizes = files.map((f) => {
  const b = fs.readFileSync(path.join(dist, f));
  return { f, raw: b.length, gz: zlib.gzipSync(b, { level: 9 }).length };
});
// SIMD128 in the worker wasm.
let simd = 'wasm-objdump not found (apt-get install wabt)';
const workerWasm = files.find((f) => /^worker_bg.*\.wasm$/.test(f));
try {
  const dis = execFileSync('wasm-objdump', ['-d', path.join(dist, workerWasm)], { maxBuffer: 1 << 30 }).toString();
  const count = (re) => (dis.match(re) || []).length;
  const funcs = new Set();
  let cur = null;
  for (const line of dis.split('\n')) {
    const m = line.match(/^[0-9a-f]+ func\[(\d+)\](?: <([^>]+)>)?:/);
    if (m) cur = m[2] || `func[${m[1]}]`;
    else if (cur && /\b(v128|i8x16|i16x8|i32x4|f32x4)\./.test(line)) funcs.add(cur);
  }
  const names = [...funcs].map((n) => n.replace(/::h[0-9a-f]{16}$/, '')).filter((n) => /lightembed|kernel|dot|matmul|simd/i.test(n));
  simd = `${workerWasm}: ${count(/\bv128\./g)} v128.*, ${count(/\bi8x16\./g)} i8x16.*, ${count(/\bi16x8\./g)} i16x8.*, ${count(/\bi32x4\./g)} i32x4.* `
    + `(${count(/i32x4\.dot_i16x8_s/g)} i32x4.dot_i16x8_s), ${count(/\bf32x4\./g)} f32x4.* instructions in ${funcs.size} functions`
    + (names.length ? `; e.g. ${names.slice(0, 6).join(', ')}` : '');
} catch (e) { simd = `wasm-objdump failed: ${e.message.split('\n')[0]}`; }

const f1 = (x) => (x ?? NaN).toFixed(1);
const cpu = os.cpus()[0]?.model || 'unknown CPU';
let md = `## App (headless Chromium)\n\n`;
md += `Measured by \`node bench/app_figures.mjs\` on the release build (\`trunk build --release=true\`), headless \`/usr/bin/chromium\` `
  + `(${execFileSync('/usr/bin/chromium', ['--version']).toString().trim()}), ${os.cpus().length} cores (${cpu}), served from localhost; `
  + `fresh browser profile per model; corpus = ${rows[0]?.passages} passages (${dist}/corpus/rust-book.jsonl); ${N_QUERIES} queries${process.env.QUERY_FILE ? ` from ${process.env.QUERY_FILE}` : ''}; hybrid ranking (the default).\n\n`;
md += `| model | size | cold start → ready (of which verify) | warm start (cache) → ready (verify) | indexing in the worker | query p50 (embed + search) | query p50 / p95 UI round trip | restore from IndexedDB |\n`;
md += `|---|---:|---:|---:|---:|---:|---:|---:|\n`;
for (const r of rows) {
  md += `| ${r.model} | ${(r.size / 1e6).toFixed(2)} MB | ${f1(r.cold_ms)} ms (${f1(r.cold_verify_ms)}) | ${f1(r.warm_ms)} ms (${f1(r.warm_verify_ms)}) | ${f1(r.per_sec)} passages/s (${r.workers} worker${r.workers === 1 ? '' : 's'}) | `
    + `${r.q_embed_p50.toFixed(2)} + ${r.q_search_p50.toFixed(2)} ms | ${f1(r.q_total_p50)} / ${f1(r.q_total_p95)} ms | `
    + `${f1(r.restore_ms)} ms (${r.passages} passages, ${r.restore_embed} embedded) |\n`;
}
md += `\nCold start = navigation → \`model-status\` = ready: page + both wasm modules, worker start, model download, verification `
  + `(\`Model::from_bytes\`: SHA-256 + every load rule, in the worker). The model is written to IndexedDB after \`ready\`. Warm start = reload with the model in IndexedDB (verification still runs). Restore = reading the index bytes `
  + `from IndexedDB, §8 manifest check and \`Index::from_bytes\` validation.\n\n`;
md += `Bytes shipped (gzip -9):\n\n| file | raw | gzip |\n|---|---:|---:|\n`;
for (const s of sizes) md += `| ${s.f} | ${(s.raw / 1024).toFixed(1)} KiB | ${(s.gz / 1024).toFixed(1)} KiB |\n`;
const tot = sizes.reduce((a, s) => ({ raw: a.raw + s.raw, gz: a.gz + s.gz }), { raw: 0, gz: 0 });
md += `| **total wasm + JS** | ${(tot.raw / 1024).toFixed(1)} KiB | ${(tot.gz / 1024).toFixed(1)} KiB |\n\n`;
md += `SIMD128: ${simd}.\n`;
fs.mkdirSync(path.join(root, 'target'), { recursive: true });
fs.writeFileSync(path.join(root, 'target', 'app_figures.md'), md);
fs.writeFileSync(path.join(root, 'target', 'app_figures.json'), JSON.stringify({ rows, sizes, simd }, null, 1));
console.log(md);
