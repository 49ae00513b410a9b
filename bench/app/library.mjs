// Issue 33 item 5: the app with a library of ~100,000 passages of real documents (PDF and HTML
// manuals from Debian packages, bench/app/make_library.sh), picked as one folder in headless
// Chromium. Prints a Markdown table for bench/RESULTS.md and writes target/app_library.json.
//
//   bash bench/app/make_library.sh                     # the folder (bench/app/data/library)
//   trunk build --release=true                         # dist/ (scripts/e2e.sh builds the same)
//   node bench/app/library.mjs                         # ~10–20 min on 2 cores
//
// What it measures, on the default model (the static English one) with storage on (IndexedDB):
//   indexing       the folder picked → the last document indexed (the progress line done and the
//                  passage count still for 3 s): wall time, passages/s, documents, skipped files
//   responsiveness every Long Task (PerformanceObserver 'longtask', the page's main thread) from
//                  the pick to the end of indexing: count > 50 ms, count > 200 ms, the longest
//   storage        the app's own line (originals kept) and navigator.storage.estimate().usage
//   reload         reload → model ready → the index restored (passage count shown) → the first
//                  query answered: "reload to searchable"
//   query p50/p95  QUERIES (default 50) typed into the search box, the UI's round trip
//                  (data-total-ms: page → worker embed + hybrid search → page), after the reload
//
// Env: DIST (default dist/), LIBRARY (default bench/app/data/library), QUERIES, MODEL (a model
// file name from the manifest; default the app's default), TIMEOUT_MIN (indexing; default 60),
// PICK_ONLY=S (stop S seconds after the pick and print the long tasks so far).

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const require = createRequire(path.join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');
const dist = path.resolve(process.env.DIST || path.join(root, 'dist'));
const library = path.resolve(process.env.LIBRARY || path.join(here, 'data', 'library'));
const N_QUERIES = Number(process.env.QUERIES || 50);
const TIMEOUT_MS = Number(process.env.TIMEOUT_MIN || 60) * 60_000;
if (!fs.existsSync(path.join(dist, 'index.html'))) throw new Error(`no app build in ${dist}: run trunk build --release=true`);
if (!fs.existsSync(library)) throw new Error(`no library in ${library}: run bash bench/app/make_library.sh`);

// Questions a reader of these manuals would ask (Qt, Boost, R, gnuplot, glpk, asymptote, X).
const QUERIES = [
  'connect a signal to a slot', 'convert a QString to an integer', 'read a text file line by line with QFile',
  'thread safety of QObject', 'layout managers for widgets', 'model view programming with QAbstractItemModel',
  'open a database connection with QSqlDatabase', 'send an HTTP request with QNetworkAccessManager',
  'draw with QPainter on a widget', 'event loop and timers', 'shared pointer with a custom deleter',
  'regular expression match and capture groups', 'parse command line options', 'asynchronous socket io_service',
  'serialize a class to an archive', 'filesystem path iterate directory', 'date and time durations',
  'unit test framework test case', 'spirit parser grammar', 'graph breadth first search',
  'thread pool and futures', 'lexical cast string to number', 'multi index container ordered index',
  'format strings with placeholders', 'interprocess shared memory segment', 'read a csv file into a data frame',
  'install packages from a repository', 'apply a function over a list', 'linear regression model fit',
  'factor levels and contrasts', 'set a logarithmic scale on the y axis', 'plot data from a file with columns',
  'output to png terminal', 'fit a curve to data points', 'solve a linear program with the simplex method',
  'mixed integer programming branch and bound', 'maximum flow in a network', 'draw a path with arrows',
  'three dimensional surfaces', 'ASN.1 DER encoding', 'mime type of a file by its contents',
  'inter client communication conventions selections', 'font names in X logical font description',
  'build a live system image', 'boot parameters of the live system', 'XSL stylesheet parameters for html output',
  'multiple choice exam scanning', 'garbage collection and memory', 'string encoding and unicode',
  'error handling with exceptions',
];

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let p = path.normalize(path.join(dist, decodeURIComponent(url.pathname)));
  if (!p.startsWith(dist)) { res.writeHead(403).end(); return; }
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, 'index.html');
  if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
  const body = fs.readFileSync(p);
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'content-length': body.length, 'cache-control': 'no-cache' });
  res.end(req.method === 'HEAD' ? undefined : body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const sel = (id) => `[data-testid="${id}"]`;
const log = (m) => process.stderr.write(`[library ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

const files = execFileSync('find', [library, '-type', 'f']).toString().trim().split('\n');
const bytesOnDisk = files.reduce((a, f) => a + fs.statSync(f).size, 0);
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-library-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
// Long Tasks of the page's main thread, from the navigation on (a new list per page load).
await ctx.addInitScript(() => {
  window.__longtasks = [];
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
      .observe({ type: 'longtask', buffered: true });
  } catch (e) { window.__longtasks = null; }
  // When the folder input's change event reaches the page (capture: before the app's handler).
  document.addEventListener('change', (e) => { if (e.target?.dataset?.testid === 'folder-input') window.__changeAt = performance.now(); }, true);
});
const page = ctx.pages()[0] || await ctx.newPage();
page.on('pageerror', (e) => log(`page error: ${e.message}`));
// The workers' console (a panic's message, an allocation failure) goes to the log.
const fromConsole = (where) => (m) => { if (/panic|memory|alloc|error/i.test(m.text())) log(`${where} console ${m.type()}: ${m.text().slice(0, 500)}`); };
page.on('console', fromConsole('page'));
page.on('worker', (w) => { log(`worker started: ${w.url()}`); if (typeof w.on === 'function') w.on('console', fromConsole('worker')); });
const model = process.env.MODEL ? `?model=models/${process.env.MODEL}` : '';
const r = { files: files.length, bytes_on_disk: bytesOnDisk, chromium: execFileSync('/usr/bin/chromium', ['--version']).toString().trim(), cores: os.cpus().length };

await page.goto(`${base}/${model}`);
await page.waitForFunction((s) => document.querySelector(s)?.textContent.trim() === 'ready', sel('model-status'), { timeout: 300_000 });
r.model = `${await page.textContent(sel('model-id'))} v${await page.textContent(sel('model-version'))}`;
log(`model ready: ${r.model}; picking ${files.length} files (${(bytesOnDisk / 1e6).toFixed(0)} MB), load ${load()}`);

// 1. The folder picked → indexed.
// Long tasks are told apart by their start on the page's clock: the observer may report one of
// the page's start-up (before the pick) only after the pick.
const pickAt = await page.evaluate(() => performance.now());
const t0 = Date.now();
const loads = [];
await page.locator(sel('folder-input')).setInputFiles(library);
let last = -1; let stableSince = 0; let lastLog = t0;
for (;;) {
  await page.waitForTimeout(1000);
  const s = await page.evaluate((sels) => ({
    done: document.querySelector(sels[0])?.dataset.done === 'true',
    count: Number(document.querySelector(sels[1])?.textContent || 0),
    progress: document.querySelector(sels[0])?.textContent.trim() || '',
    heap: Number(document.querySelector(sels[0])?.dataset.heapBytes || 0),
    live: Number(document.querySelector(sels[0])?.dataset.heapLive || 0),
    trouble: [...document.querySelectorAll(sels[2])].map((e) => e.textContent.trim()).join(' | ').slice(0, 300),
  }), [sel('index-progress'), sel('doc-count'), '[data-testid="crash-notice"], [data-testid="error"], [data-testid="worker-restarts"], [data-testid="storage-warning"]']);
  if (s.count !== last) { last = s.count; stableSince = Date.now(); }
  if (s.heap > (r.worker_heap_max || 0)) { r.worker_heap_max = s.heap; r.heap_trace = [...(r.heap_trace || []), [s.count, s.heap, s.live]]; }
  if (Date.now() - lastLog >= 30_000) { lastLog = Date.now(); log(`${Math.round((Date.now() - t0) / 1000)} s: ${s.count} passages · ${s.progress} · worker heap ${(s.heap / 2 ** 20).toFixed(0)} MiB (${(s.live / 2 ** 20).toFixed(0)} live) · load ${load()}${s.trouble ? ` · ${s.trouble}` : ''}`); loads.push(os.loadavg()[0]); }
  if (/worker crashed/.test(s.trouble)) { r.crashed = { at_s: (Date.now() - t0) / 1000, passages: s.count, notice: s.trouble.slice(0, 200) }; log(`the worker crashed at ${s.count} passages: stopping`); break; }
  if (s.done && s.count > 0 && Date.now() - stableSince >= 3000) break;
  if (process.env.PICK_ONLY && Date.now() - t0 > Number(process.env.PICK_ONLY) * 1000) break;
  if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`indexing did not finish in ${TIMEOUT_MS / 60_000} min (${s.count} passages)`);
}
r.index_s = (stableSince - t0) / 1000;
r.passages = last;
r.documents = Number((await page.locator(sel('doc-count')).locator('xpath=..').textContent()).match(/ in ([\d,]+) document/)?.[1].replace(/,/g, '') ?? NaN);
r.per_sec = r.passages / r.index_s;
r.app_per_sec = Number(await page.getAttribute(sel('index-progress'), 'data-per-sec'));
r.summary = (await page.textContent(sel('drop-summary')).catch(() => '')).trim().replace(/\s+/g, ' ').slice(0, 400);
r.load_avg = loads.length ? `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : load();
const lt = ((await page.evaluate(() => window.__longtasks)) || []).filter((x) => x[0] >= pickAt).map((x) => [x[0] - pickAt, x[1]]);
r.startup_longtasks = ((await page.evaluate(() => window.__longtasks)) || []).filter((x) => x[0] < pickAt).map((x) => [Math.round(x[0]), Math.round(x[1])]);
r.change_after_pick_ms = Math.round((await page.evaluate(() => window.__changeAt)) - pickAt);
log(`the input's change event ${r.change_after_pick_ms} ms after the pick`);
log(`page start-up (before the pick, at ${Math.round(pickAt)} ms on the page's clock): long tasks ${JSON.stringify(r.startup_longtasks)}`);
r.longtasks = { supported: lt !== null, n50: lt.length, n200: lt.filter((x) => x[1] > 200).length, max_ms: Math.max(0, ...lt.map((x) => x[1])), total_ms: lt.reduce((a, x) => a + x[1], 0), over200: lt.filter((x) => x[1] > 200).map((x) => [Math.round(x[0]), Math.round(x[1])]).slice(0, 20) };
log(`indexed ${r.passages} passages in ${r.index_s} s (${r.per_sec.toFixed(0)}/s); long tasks: ${JSON.stringify(r.longtasks)}`);
if (process.env.PICK_ONLY) {
  console.log(`PICK_ONLY: ${r.passages} passages after ${process.env.PICK_ONLY} s; long tasks after the pick: ${JSON.stringify(r.longtasks)}`);
  await ctx.close(); server.close(); process.exit(0);
}
if (r.crashed) {
  fs.writeFileSync(path.join(root, 'target', 'app_library.json'), JSON.stringify(r, null, 1));
  console.log(`CRASHED: ${JSON.stringify(r.crashed)}; long tasks until then: ${JSON.stringify(r.longtasks)}`);
  await ctx.close(); server.close(); process.exit(3);
}

// 2. Storage, once the last save is through (the app saves at most once a second).
await page.waitForTimeout(3000);
r.storage_line = (await page.textContent(sel('storage-used'))).trim().replace(/\s+/g, ' ');
r.originals_bytes = Number(await page.getAttribute(sel('storage-used'), 'data-originals'));
r.usage_bytes = await page.evaluate(async () => (await navigator.storage.estimate()).usage);
log(`storage: ${r.storage_line}; estimate ${(r.usage_bytes / 1e6).toFixed(1)} MB`);

// 3. Reload → searchable.
const t1 = Date.now();
await page.reload();
await page.waitForFunction((s) => document.querySelector(s)?.textContent.trim() === 'ready', sel('model-status'), { timeout: 300_000, polling: 20 });
r.reload_ready_ms = Date.now() - t1;
await page.waitForFunction(([s, n]) => Number(document.querySelector(s)?.textContent) === n, [sel('doc-count'), r.passages], { timeout: 600_000, polling: 20 });
r.reload_restored_ms = Date.now() - t1;
r.restore_ms = Number(await page.getAttribute(sel('doc-count'), 'data-restore-ms'));
await page.fill(sel('query'), QUERIES[0]);
await page.waitForFunction(([s, q]) => document.querySelector(s)?.dataset.query === q, [sel('latency'), QUERIES[0]], { timeout: 120_000, polling: 10 });
r.reload_searchable_ms = Date.now() - t1;
r.reload_longtasks = await page.evaluate(() => window.__longtasks && { n200: window.__longtasks.filter((x) => x[1] > 200).length, max_ms: Math.max(0, ...window.__longtasks.map((x) => x[1])) });
log(`reload: ready ${r.reload_ready_ms} ms, restored ${r.reload_restored_ms} ms (restore ${r.restore_ms} ms), searchable ${r.reload_searchable_ms} ms`);

// 4. Queries typed into the search box.
const total = []; const embed = []; const search = []; let withHits = 0;
for (let i = 0; i < N_QUERIES; i++) {
  const q = QUERIES[i % QUERIES.length] + (i >= QUERIES.length ? ` ${i}` : '');
  await page.fill(sel('query'), q);
  await page.waitForFunction(([s, q]) => document.querySelector(s)?.dataset.query === q, [sel('latency'), q], { timeout: 60_000, polling: 5 });
  total.push(Number(await page.getAttribute(sel('latency'), 'data-total-ms')));
  embed.push(Number(await page.getAttribute(sel('latency'), 'data-embed-ms')));
  search.push(Number(await page.getAttribute(sel('latency'), 'data-search-ms')));
  if (await page.locator(sel('result')).count() > 0) withHits++;
}
Object.assign(r, { q_total_p50: pct(total, 0.5), q_total_p95: pct(total, 0.95), q_embed_p50: pct(embed, 0.5), q_search_p50: pct(search, 0.5), q_with_hits: withHits, q_n: N_QUERIES });
log(`queries: p50 ${r.q_total_p50} ms (embed ${r.q_embed_p50} + search ${r.q_search_p50}), p95 ${r.q_total_p95} ms`);

await ctx.close();
server.close();
fs.rmSync(userDataDir, { recursive: true, force: true });

const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
let md = `| figure | value |\n|---|---:|\n`;
md += `| library | ${r.files} files, ${mb(r.bytes_on_disk)} on disk |\n`;
md += `| indexed | **${r.passages} passages** in ${r.documents} documents |\n`;
md += `| indexing (pick → last passage) | ${r.index_s.toFixed(1)} s = **${r.per_sec.toFixed(0)} passages/s** (the progress line's rate at the end: ${r.app_per_sec.toFixed(0)}/s) |\n`;
md += `| Long Tasks on the page's main thread while indexing | ${r.longtasks.n50} > 50 ms, **${r.longtasks.n200} > 200 ms**, longest ${r.longtasks.max_ms.toFixed(0)} ms, ${r.longtasks.total_ms.toFixed(0)} ms in all |\n`;
md += `| storage (app's line) | ${r.storage_line} |\n`;
md += `| storage (navigator.storage.estimate) | **${mb(r.usage_bytes)}** (originals ${mb(r.originals_bytes)}) |\n`;
md += `| reload → model ready / index restored / first query answered | ${r.reload_ready_ms} / ${r.reload_restored_ms} / **${r.reload_searchable_ms} ms** (restore itself ${r.restore_ms.toFixed(0)} ms) |\n`;
md += `| query in the UI, p50 / p95 (embed + search p50) | **${r.q_total_p50.toFixed(1)}** / ${r.q_total_p95.toFixed(1)} ms (${r.q_embed_p50.toFixed(1)} + ${r.q_search_p50.toFixed(1)} ms; ${r.q_with_hits}/${r.q_n} with hits) |\n`;
md += `\n${r.model}; ${r.chromium}; ${r.cores} cores; load average ${r.load_avg} while indexing.\n`;
fs.mkdirSync(path.join(root, 'target'), { recursive: true });
fs.writeFileSync(path.join(root, 'target', 'app_library.json'), JSON.stringify(r, null, 1));
console.log(md);
