// Bytes a cold visitor downloads for the first query of <lightembed-search>, on two kinds of host:
//   gzip  — a host that compresses every response (Content-Encoding: gzip, zlib level 6, as
//           nginx/Apache/CDNs do when told to compress everything);
//   plain — a host that sends files as they are (many static hosts do for `.bin` and `.wasm`).
// Each SITE is a built site with its `lightembed/` bundle (any `lightembed site` version: the
// widget in the bundle is the one tested). A page with the three lines of the README is added at
// the site root, served on localhost to headless Chromium; the query is typed, and the bytes the
// server sent under `lightembed/` are counted until the excerpts are shown (the model, wasm,
// index core, the query's term shards and its results' text chunks, scripts, CSS, manifest).
// Prints one table row per site and host, and the split by kind.
//
//   node bench/first_query_bytes.mjs SITE [SITE…]    (QUERY="…" to change the question)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');
const query = process.env.QUERY || 'how do I read a file line by line';
const sites = process.argv.slice(2);
if (!sites.length) {
  console.error('usage: node bench/first_query_bytes.mjs SITE [SITE…]');
  process.exit(2);
}
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css', '.bin': 'application/octet-stream' };
const PAGE = 'lightembed-first-query-bench.html';

function kindOf(p) {
  const name = p.split('/').pop();
  if (/^t\d+\.bin$/.test(name)) return 'terms';
  if (/^c\d+\.bin$/.test(name)) return 'text';
  if (/^model\./.test(name)) return 'model';
  if (/^core\./.test(name)) return 'core';
  if (/\.wasm$/.test(name)) return 'wasm';
  return 'scripts+css+manifest';
}

async function measure(site, mode) {
  const log = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = path.normalize(path.join(site, decodeURIComponent(url.pathname)));
    if (!p.startsWith(site) || !fs.existsSync(p) || !fs.statSync(p).isFile()) { res.writeHead(404).end(); return; }
    let body = fs.readFileSync(p);
    const headers = { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'cache-control': 'no-store' };
    if (mode === 'gzip') {
      body = zlib.gzipSync(body, { level: 6 });
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = body.length;
    log.push({ path: url.pathname, sent: body.length });
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-bytes-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = context.pages()[0] || await context.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/${PAGE}`);
    const box = page.locator('[data-testid="lightembed-query"]');
    await box.focus();
    await box.fill(query);
    // The final (hybrid) results' excerpts: a widget that answers by keywords first fetches more.
    await page.waitForFunction(() => {
      const w = document.querySelector('lightembed-search');
      return (w.dataset.lastExcerptMs && w.dataset.ranking !== 'keyword') || document.querySelector('.lightembed-error');
    }, null, { timeout: 120000 });
    const err = await page.locator('.lightembed-error').count();
    if (err) throw new Error(`${site}: ${await page.locator('[data-testid="lightembed-status"]').textContent()}`);
    const kinds = {};
    let total = 0;
    for (const r of log.filter((r) => r.path.startsWith('/lightembed/'))) {
      const k = kindOf(r.path);
      kinds[k] = kinds[k] || { bytes: 0, n: 0 };
      kinds[k].bytes += r.sent;
      kinds[k].n += 1;
      total += r.sent;
    }
    return { total, requests: Object.values(kinds).reduce((s, k) => s + k.n, 0), kinds };
  } finally {
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

console.log(`query: "${query}"`);
console.log('| site | bundle | host | first query: bytes sent / requests | model | wasm | core | term shards | text chunks | scripts+css+manifest |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const s of sites) {
  const site = path.resolve(s);
  const manifest = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));
  const pagePath = path.join(site, PAGE);
  fs.writeFileSync(pagePath, '<!doctype html><html><head><meta charset="utf-8"><title>bench</title>'
    + '<link rel="stylesheet" href="/lightembed/lightembed-ui.css">'
    + '<script type="module" src="/lightembed/lightembed-ui.js"></script></head>'
    + '<body><lightembed-search></lightembed-search></body></html>');
  try {
    for (const mode of ['gzip', 'plain']) {
      const m = await measure(site, mode);
      const cell = (k) => (m.kinds[k] ? `${m.kinds[k].bytes.toLocaleString('en')}${m.kinds[k].n > 1 ? ` / ${m.kinds[k].n}` : ''}` : '–');
      console.log(`| ${s} | v${manifest.bundle_version}${manifest.compression ? ` ${manifest.compression}` : ''} | ${mode} | **${m.total.toLocaleString('en')}** / ${m.requests} | `
        + `${['model', 'wasm', 'core', 'terms', 'text', 'scripts+css+manifest'].map(cell).join(' | ')} |`);
    }
  } finally {
    fs.rmSync(pagePath, { force: true });
  }
}
