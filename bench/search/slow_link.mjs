// Time to results on a slow link: Pagefind 1.6 and `lightembed site` on the same built site, each
// searched cold (fresh browser profile, nothing cached) in headless Chromium with the network
// emulated by CDP `Network.emulateNetworkConditions` (default: "slow 4G" — 150 ms latency,
// 1.6 Mbit/s = 200,000 bytes/s down, 750 kbit/s up). Sets as in pagefind_vs.mjs (SET=book|python).
//
//   (cd bench/search && npm install)          # pagefind 1.6.0
//   js/build.sh && cargo build --release -p lightembed-cli
//   git show <rev>:widget/lightembed-ui.js > /tmp/w-old/lightembed-ui.js   # (and the worker)
//   SET=book WIDGETS=before:/tmp/w-old,after:widget RUNS=3 node bench/search/slow_link.mjs
//
// WIDGETS: label:folder pairs; each folder's lightembed-ui.js and lightembed-worker.js are copied
// over the bundle's before that variant's runs (the bundle's other files — wasm, model, core,
// fragments — are the same bytes for every variant), so widget versions compare on one bundle.
// Without WIDGETS the bundle is searched as `lightembed site` wrote it.
//
// Clock: from focusing the box and typing the query (the widget starts loading on focus; for
// Pagefind, from importing pagefind.js and calling search(), as its UI does on the first input)
//   - first results: lightembed: the first result listed (the keyword side's, where the widget
//     answers before the model is in); Pagefind: search() resolved and data() of its first 5
//     results (what its UI lists first),
//   - final: lightembed: the hybrid ranking's results listed (`data-ranking="hybrid"`, or, for a
//     widget without a keyword stage, its results once ready); Pagefind: the same as first,
//   - +excerpts: lightembed: those final results' excerpts shown (their text chunks fetched).
// Medians of RUNS cold runs (default 3); the request start times (server arrival, ms after typing)
// of lightembed's wasm, core, model and first term shard, from the median run, show the schedule.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const require = createRequire(path.join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');
const bin = process.env.LIGHTEMBED || path.join(root, 'target', 'release', 'lightembed');
const pagefindBin = path.join(here, 'node_modules', '.bin', 'pagefind');
const SET = process.env.SET || 'book';
const SETS = {
  book: { src: '/usr/share/doc/rust-doc/html/book', remove: ['print.html'], page: 'ch01-01-installation.html',
    query: 'how do I read a file line by line' },
  python: { src: '/usr/share/doc/python3.11/html', page: 'tutorial/index.html', query: 'how do I read a file line by line' },
};
const set = SETS[SET];
if (!set) throw new Error(`SET=${SET}: expected one of ${Object.keys(SETS).join(', ')}`);
const RUNS = Number(process.env.RUNS || 3);
const LINK = {
  offline: false,
  latency: Number(process.env.LATENCY_MS || 150),
  downloadThroughput: Number(process.env.DOWN_BPS || 200_000),
  uploadThroughput: Number(process.env.UP_BPS || 93_750),
};
const widgets = (process.env.WIDGETS || '').split(',').filter(Boolean).map((w) => {
  const [label, dir] = w.split(':');
  return { label, dir: path.resolve(root, dir) };
});

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'slow-link-'));
fs.cpSync(set.src, site, { recursive: true, dereference: true });
for (const f of set.remove || []) fs.rmSync(path.join(site, f), { force: true });
execFileSync(pagefindBin, ['--site', site], { stdio: 'ignore' });
execFileSync(bin, ['site', '--site', site, '--quiet'], { stdio: 'ignore' });
const page1 = path.join(site, set.page);
const html = fs.readFileSync(page1, 'utf8');
const at = html.indexOf('>', html.indexOf('<body')) + 1;
fs.writeFileSync(page1, html.slice(0, at) + '<link rel="stylesheet" href="/lightembed/lightembed-ui.css">'
  + '<script type="module" src="/lightembed/lightembed-ui.js"></script><lightembed-search></lightembed-search>' + html.slice(at));
const manifest = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css' };
let log = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = path.join(site, decodeURIComponent(url.pathname));
  if (!p.startsWith(site) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404).end(); return; }
  const body = fs.readFileSync(p);
  log.push({ path: url.pathname, at: Date.now(), bytes: body.length });
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

// A fresh profile on `set.page`, loaded at full speed; the link is slowed once the page is there.
async function fresh() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slow-link-profile-'));
  const ctx = await chromium.launchPersistentContext(dir, { executablePath: '/usr/bin/chromium', headless: true, args });
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(`${base}${set.page}`);
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', LINK);
  // Chromium applies the page's conditions to its dedicated workers' requests too (the widget's
  // worker fetches the bundle): the schedule column shows the worker's files paced by the link.
  return { ctx, page, done: async () => { await ctx.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

async function pagefindRun() {
  const { page, done } = await fresh();
  log = [];
  const t0 = Date.now();
  await page.evaluate(async (q) => {
    const pagefind = await import('/pagefind/pagefind.js');
    const r = await pagefind.search(q);
    await Promise.all(r.results.slice(0, 5).map((x) => x.data()));
  }, set.query);
  const first = Date.now() - t0;
  const bytes = log.reduce((s, r) => s + r.bytes, 0);
  await done();
  return { first, final: first, excerpts: first, bytes, requests: log.length };
}

async function lightembedRun() {
  const { page, done } = await fresh();
  log = [];
  const input = page.locator('[data-testid="lightembed-query"]');
  const t0 = Date.now();
  await input.focus();
  await input.fill(set.query);
  await page.waitForSelector('[data-testid="lightembed-result"]', { timeout: 300_000 });
  const first = Date.now() - t0;
  const ranking = await page.evaluate(() => document.querySelector('lightembed-search').dataset.ranking || 'hybrid');
  await page.waitForFunction(() => {
    const w = document.querySelector('lightembed-search');
    return w.dataset.ready === 'true' && w.dataset.ranking !== 'keyword' && w.querySelector('[data-testid="lightembed-result"]');
  }, null, { timeout: 300_000, polling: 20 });
  const final = Date.now() - t0;
  await page.waitForFunction(() => {
    const w = document.querySelector('lightembed-search');
    return w.dataset.ranking !== 'keyword' && w.dataset.lastExcerptMs;
  }, null, { timeout: 300_000, polling: 20 });
  const excerpts = Date.now() - t0;
  const startOf = (re) => { const r = log.find((x) => re.test(x.path)); return r ? r.at - t0 : null; };
  const schedule = {
    wasm: startOf(/\.wasm$/), core: startOf(new RegExp(`/${manifest.files.core.replace('.', '\\.')}$`)),
    model: startOf(/\/model\.[0-9a-f]+\.bin$/), shard: startOf(/\/t\d+\.bin$/),
  };
  const bytes = log.reduce((s, r) => s + r.bytes, 0);
  await done();
  return { first, final, excerpts, bytes, requests: log.length, ranking, schedule };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const variants = [{ label: 'Pagefind 1.6.0', run: pagefindRun }];
const bundleDir = path.join(site, 'lightembed');
const orig = Object.fromEntries(['lightembed-ui.js', 'lightembed-worker.js'].map((f) => [f, fs.readFileSync(path.join(bundleDir, f))]));
for (const w of widgets.length ? widgets : [{ label: 'as written', dir: null }]) {
  variants.push({
    label: `lightembed (${w.label})`,
    run: () => {
      for (const f of Object.keys(orig)) fs.writeFileSync(path.join(bundleDir, f), w.dir ? fs.readFileSync(path.join(w.dir, f)) : orig[f]);
      return lightembedRun();
    },
  });
}
const rows = [];
for (const v of variants) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await v.run());
  const mid = runs.map((r) => r.final).indexOf(median(runs.map((r) => r.final)));
  rows.push({ label: v.label, runs, mid: runs[mid] });
}
server.close();
fs.rmSync(site, { recursive: true, force: true });

const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const pages = (manifest.index && manifest.index.passages) ? `${manifest.index.passages} passages` : '';
console.log(`SET=${SET} (${pages}), query "${set.query}", cold, emulated link: ${LINK.latency} ms latency, `
  + `${LINK.downloadThroughput} B/s down, ${LINK.uploadThroughput} B/s up; medians of ${RUNS} runs (all runs in brackets).\n`);
console.log('| tool | first results | final (hybrid) results | + excerpts | bytes / requests | request starts (wasm, core, model, first shard) |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const all = (k) => `**${s(median(r.runs.map((x) => x[k])))}** (${r.runs.map((x) => (x[k] / 1000).toFixed(1)).join(', ')})`;
  const sch = r.mid.schedule ? Object.values(r.mid.schedule).map((t) => (t === null ? '—' : s(t))).join(', ') : '—';
  console.log(`| ${r.label} | ${all('first')} | ${all('final')} | ${all('excerpts')} | ${(r.mid.bytes / 1e6).toFixed(2)} MB / ${r.mid.requests} | ${sch} |`);
}
