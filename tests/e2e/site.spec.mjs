// End-to-end test of `lightembed site` and the <lightembed-search> widget on a real site: the
// Rust book from Debian's rust-doc, served under a sub-path (/docs/), in headless Chromium.
//
//   1. `lightembed site --site <copy of the book>` writes <copy>/lightembed/; every page gets
//      the three lines of the README (stylesheet, module script, element) after <body>.
//   2. Nothing is fetched before the box is focused; focus → model and index load (ready).
//   3. A question → results grouped by page (data-testid="lightembed-result", each with an
//      <a href>), the query's words marked; ↓ selects the first page (aria-activedescendant),
//      Esc closes the list, ↓ again, Enter follows the link — to an anchor that exists.
//   4. On that second page the model and the index come from the cache: no second download.
//   5. A browser without WebAssembly SIMD gets a readable message (WebAssembly.validate stubbed).
//
// Figures (printed): time to first results for a cold visitor, warm query time, bytes fetched
// for the first query. Run with scripts/site-e2e.sh (builds what is needed), or directly:
// `node tests/e2e/site.spec.mjs BIN` where BIN is a lightembed built with js/pkg/web present.

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = path.join(root, 'target', 'e2e');
const bin = path.resolve(process.argv[2] || path.join(root, 'target', 'debug', 'lightembed'));
const book = process.env.BOOK || '/usr/share/doc/rust-doc/html/book';
const site = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-site-'));
const MOUNT = '/docs/';
const STEP_MS = Number(process.env.E2E_TIMEOUT_S || 120) * 1000;

// 1. Build the bundle and add the widget to every page.
fs.cpSync(book, site, { recursive: true, verbatimSymlinks: true });
const out = execFileSync(bin, ['site', '--site', site, '--quiet'], { encoding: 'utf8' });
console.log(`     ${out.split('\n')[0]}`);
const snippet = `<link rel="stylesheet" href="${MOUNT}lightembed/lightembed-ui.css">`
  + `<script type="module" src="${MOUNT}lightembed/lightembed-ui.js"></script>`
  + '<lightembed-search placeholder="Search the book"></lightembed-search>';
let pages = 0;
for (const f of fs.readdirSync(site)) {
  if (!f.endsWith('.html')) continue;
  const p = path.join(site, f);
  const html = fs.readFileSync(p, 'utf8');
  const at = html.indexOf('>', html.indexOf('<body')) + 1;
  if (at <= 0) continue;
  fs.writeFileSync(p, html.slice(0, at) + snippet + html.slice(at));
  pages++;
}

// Static server for the site under MOUNT; logs every request.
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.bin': 'application/octet-stream' };
const requests = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (!url.pathname.startsWith(MOUNT)) { res.writeHead(404).end(); return; }
  let p = path.normalize(path.join(site, decodeURIComponent(url.pathname.slice(MOUNT.length))));
  if (!p.startsWith(site)) { res.writeHead(403).end(); return; }
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, 'index.html');
  if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
  const body = fs.readFileSync(p);
  requests.push({ path: url.pathname, bytes: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length });
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}${MOUNT}`;

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-site-profile-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  viewport: { width: 1100, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] || await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => { if (String(e.stack || e).includes('/lightembed/')) pageErrors.push(String(e)); });
// The Debian copy of the book links fonts and scripts from other packages (dangling here, so the
// book's own scripts fail): only errors of the widget's own files count.
page.on('console', (m) => {
  if (m.type() !== 'error') return;
  const where = m.location()?.url || '';
  if (/Failed to load resource/.test(m.text()) && !where.includes('/lightembed/')) return;
  pageErrors.push(`${m.text()} (${where})`);
});

let failed = 0;
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message.split('\n')[0]}`);
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, `FAIL-site-${name.replace(/\W+/g, '-')}.png`) }).catch(() => {});
  }
}
const assert = (c, m) => { if (!c) throw new Error(m); };
const input = () => page.locator('[data-testid="lightembed-query"]');
const bundleRequests = () => requests.filter((r) => r.path.startsWith(`${MOUNT}lightembed/`));
const heavy = (r) => /\.(bin|wasm)$/.test(r.path);
const figures = {};

await step(`site bundle for ${pages} pages; nothing fetched before focus`, async () => {
  await page.goto(`${base}ch01-00-getting-started.html`);
  await input().waitFor({ timeout: STEP_MS });
  const fetched = bundleRequests().map((r) => r.path.split('/').pop());
  assert(fetched.every((f) => /^lightembed-ui\.(js|css)$/.test(f)), `only the loader and CSS before focus: ${fetched}`);
});

await step('focus → model and index verified and loaded; a question → results grouped by page', async () => {
  const t0 = Date.now();
  await input().focus();
  const q = 'how do I read a file line by line';
  await input().fill(q);
  await page.waitForSelector('[data-testid="lightembed-result"]', { timeout: STEP_MS });
  figures.coldMs = Date.now() - t0;
  await page.waitForFunction(() => document.querySelector('lightembed-search').dataset.lastExcerptMs, null, { timeout: STEP_MS });
  figures.coldExcerptMs = Date.now() - t0;
  figures.coldBytes = requests.reduce((s, r) => s + r.bytes, 0);
  figures.coldGzip = requests.reduce((s, r) => s + r.gzip, 0);
  figures.coldRequests = requests.length;
  // What the search itself fetched (the bundle), by kind: gzip -9 bytes / requests.
  const kinds = {};
  for (const r of requests.filter((r) => r.path.includes('/lightembed/'))) {
    const name = r.path.split('/').pop();
    const kind = /^t\d+\.bin$/.test(name) ? 'terms' : /^c\d+\.bin$/.test(name) ? 'text' : name.replace(/\.[0-9a-f]{16}\./, '.');
    kinds[kind] = kinds[kind] || { gzip: 0, n: 0 };
    kinds[kind].gzip += r.gzip;
    kinds[kind].n += 1;
  }
  figures.bundleGzip = Object.values(kinds).reduce((s, k) => s + k.gzip, 0);
  figures.bundleRequests = Object.values(kinds).reduce((s, k) => s + k.n, 0);
  figures.kinds = Object.entries(kinds).map(([k, v]) => `${k} ${(v.gzip / 1e3).toFixed(0)} kB/${v.n}`).join(', ');
  // The index came in fragments: the core, a few term shards, the text chunks of the results.
  const frags = requests.filter((r) => /\/lightembed\/f\/[0-9a-f]{16}\/[tc]\d+\.bin$/.test(r.path));
  const manifest = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));
  const shards = frags.filter((r) => /\/t\d+\.bin$/.test(r.path)).length;
  assert(shards >= 1 && shards < manifest.index.shards / 2, `${shards} of ${manifest.index.shards} term shards fetched`);
  assert(frags.length - shards >= 1, 'text chunks fetched for the excerpts');
  const results = await page.locator('[data-testid="lightembed-result"]').evaluateAll((els) => els.map((e) => ({
    href: e.querySelector('a')?.getAttribute('href'),
    sections: e.querySelectorAll('.lightembed-sections li').length,
    marks: [...e.querySelectorAll('mark')].map((m) => m.textContent),
  })));
  assert(results.length >= 3, `${results.length} page results`);
  const pagesShown = results.map((r) => r.href.split('#')[0]);
  assert(new Set(pagesShown).size === pagesShown.length, `one entry per page: ${pagesShown}`);
  assert(results.every((r) => r.href && r.href.startsWith(base)), `links under the sub-path: ${results[0].href}`);
  assert(results.some((r) => r.marks.some((m) => /^(read|file|line)/i.test(m))), 'query words marked');
  assert(results.slice(0, 3).some((r) => /ch12-0[0-2]/.test(r.href)), `a chapter-12 page (reading a file) in the top 3: ${pagesShown.slice(0, 3)}`);
  fs.mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, 'site-results.png') });
  console.log(`     ${results.length} pages; top: ${results.slice(0, 3).map((r) => r.href.slice(base.length)).join(' | ')}`);
});

await step('a query no page has a word of: the results say they are by meaning alone', async () => {
  const widget = page.locator('lightembed-search');
  await input().fill('xyzzy plugh');
  await page.waitForFunction(() => document.querySelector('lightembed-search').dataset.meaningAlone === 'true', null, { timeout: STEP_MS });
  const status = await page.locator('[data-testid="lightembed-status"]').textContent();
  assert(/closest by meaning/.test(status), `status: ${status}`);
  await input().fill('how do I read a file line by line');
  await page.waitForFunction(() => {
    const w = document.querySelector('lightembed-search');
    return w.querySelector('input').value === 'how do I read a file line by line' && w.dataset.lastExcerptMs && !w.dataset.meaningAlone;
  }, null, { timeout: STEP_MS });
  assert(!/closest by meaning/.test(await page.locator('[data-testid="lightembed-status"]').textContent()), 'no note when words match');
  assert(await widget.count() === 1, 'one widget');
});

await step('keyboard: ↓ selects, Esc closes, Enter follows the link to an anchor that exists', async () => {
  await input().press('ArrowDown');
  const active = await input().getAttribute('aria-activedescendant');
  assert(active && (await page.locator(`#${active}`).getAttribute('aria-selected')) === 'true', `active option ${active}`);
  const typed = await input().inputValue();
  await input().press('Escape');
  assert(await page.locator('[role="listbox"]').isHidden(), 'Esc closes the list');
  assert(await input().inputValue() === typed, 'the first Esc keeps the query');
  await input().press('ArrowDown');
  const href = await page.locator(`#${await input().getAttribute('aria-activedescendant')} a`).first().getAttribute('href');
  await Promise.all([page.waitForURL(href, { timeout: STEP_MS }), input().press('Enter')]);
  const hash = decodeURIComponent(new URL(page.url()).hash.slice(1));
  if (hash) assert(await page.evaluate((id) => Boolean(document.getElementById(id)), hash), `#${hash} exists in the page`);
  console.log(`     Enter → ${page.url().slice(base.length)}`);
});

await step('second page: model and index from the cache, no second download', async () => {
  const before = requests.filter(heavy).length;
  const t0 = Date.now();
  await input().focus();
  await page.waitForFunction(() => document.querySelector('lightembed-search')?.dataset.ready === 'true', null, { timeout: STEP_MS });
  figures.warmStartMs = Date.now() - t0;
  const fromCache = await page.evaluate(() => document.querySelector('lightembed-search').dataset.fromCache);
  assert(fromCache === 'true,true', `model, index from the cache: ${fromCache}`);
  const heavyNow = requests.filter(heavy).slice(before).map((r) => r.path);
  // The wasm comes from the HTTP cache or a revalidation; the model and index never again.
  assert(!heavyNow.some((p) => /\/(model|core)\.[0-9a-f]+\.bin$/.test(p)), `downloaded again: ${heavyNow}`);
  // Warm queries (typing): end to end in the page.
  const times = [];
  const excerptTimes = [];
  for (const q of ['ownership', 'borrowing rules', 'what is a trait object', 'match on an enum', 'cargo workspaces']) {
    await input().fill(q);
    await page.waitForFunction((q) => {
      const el = document.querySelector('lightembed-search');
      return el.querySelector('input').value === q && el.querySelector('[data-testid="lightembed-status"]').textContent.includes('ms')
        && el.dataset.lastExcerptMs;
    }, q, { timeout: STEP_MS });
    const d = await page.evaluate(() => ({ ...document.querySelector('lightembed-search').dataset }));
    times.push(Number(d.lastQueryMs));
    excerptTimes.push(Number(d.lastExcerptMs));
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  figures.warmQueryMs = median(times);
  figures.warmExcerptMs = median(excerptTimes);
});

await step('no WebAssembly SIMD → a readable message', async () => {
  const p2 = await context.newPage();
  await p2.addInitScript(() => { const v = WebAssembly.validate; WebAssembly.validate = (b) => (b.length < 64 ? false : v(b)); });
  await p2.goto(`${base}ch02-00-guessing-game-tutorial.html`);
  await p2.locator('[data-testid="lightembed-query"]').focus();
  await p2.waitForFunction(() => /SIMD/.test(document.querySelector('[data-testid="lightembed-status"]')?.textContent || ''), null, { timeout: STEP_MS });
  await p2.close();
});

console.log(`     figures: cold visitor → first results ${figures.coldMs} ms (excerpts ${figures.coldExcerptMs} ms), ${(figures.coldBytes / 1e6).toFixed(2)} MB fetched (uncompressed), `
  + `${(figures.coldGzip / 1e6).toFixed(2)} MB gzip -9, ${figures.coldRequests} requests (the search bundle: ${(figures.bundleGzip / 1e6).toFixed(3)} MB gzip, ${figures.bundleRequests} requests: ${figures.kinds}); `
  + `second page ready ${figures.warmStartMs} ms; warm query p50 ${figures.warmQueryMs} ms (excerpts ${figures.warmExcerptMs} ms)`);
if (pageErrors.length) { console.log(`FAIL page errors: ${pageErrors.slice(0, 3).join(' | ')}`); failed++; }
await context.close();
server.close();
fs.rmSync(site, { recursive: true, force: true });
fs.rmSync(userDataDir, { recursive: true, force: true });
console.log(failed ? `${failed} site steps failed` : 'all site steps passed');
process.exit(failed ? 1 : 0);
