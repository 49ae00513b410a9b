// End-to-end test of `lightembed site` and the <lightembed-search> widget on a real site: the
// Rust book from Debian's rust-doc, served under a sub-path (/docs/), in headless Chromium.
//
//   1. `lightembed site --site <copy of the book>` writes <copy>/lightembed/; every page gets
//      the three lines of the README (stylesheet, module script, element) after <body>.
//   2. Nothing is fetched before the box is focused; focus → the query head (not the model
//      file) and the index load (ready); the question fetches a few row shards of its tokens.
//   3. A question → results grouped by page (data-testid="lightembed-result", each with an
//      <a href>), the query's words marked; ↓ selects the first page (aria-activedescendant),
//      Esc closes the list, ↓ again, Enter follows the link — to an anchor that exists.
//   4. On that second page the model and the index come from the cache: no second download (nor
//      of the fragments of a question the first page asked).
//   5. Enter acts on the results of the text in the box: nothing after Backspace or Esc Esc
//      emptied it; a new query typed and Enter at once → that query's top hit.
//   6. The site rebuilt in place (a page changed, `lightembed site` again) while the page is open:
//      the next query is answered by the new build, with no raw HTTP error.
//   7. A host serving damaged (truncated) fragments: the message names the file in words, no
//      result stays listed, Enter does nothing; whole files again → results. Rebuilt again with
//      the new build's fragments damaged: "The search index was updated — reload the page".
//   8. 20 remove/re-add rounds of the element (new ones and the same one, as routers do): at most
//      one live worker (window.Worker wrapped to count), and search still works.
//   2b. The bundle's binary files are stored gzip-compressed and this host does not compress:
//      what it sends for the model, wasm, core, shards and chunks is the compressed files (gzip
//      magic, the manifest's sizes), and the widget decompresses them.
//   9. A host that gzips `.bin` files (Content-Length smaller than the bytes): progress ≤ 100 %
//      and reaching 100 % (the manifest's sizes are what a download delivers, pre-compressed
//      files gzipped again by the host included).
//   9b. A bundle written with `--no-gzip` (raw files): a cold visitor's widget reads it too.
//  10. A browser without WebAssembly SIMD gets a readable message (WebAssembly.validate stubbed).
//  11. The shortcut: `/` and Ctrl-K focus the box (its `/` hint shown until then), not while the
//      visitor types in another field; shortcut="off" turns them off.
//  12. Colours: light by default, dark with data-theme="dark" on <html> (or <body>) or a system
//      that prefers dark (unless the page says data-theme="light"), the element's theme="…"
//      first, and a --lightembed-* property over all of them (computed colours checked).
//  13. No layout shift: with the widget's script held back, the element already has its final
//      height, and the content after it does not move when the box appears.
//  3b. The widget's wasm has no Unicode tables: the site's subset comes with it; a query with a
//      character the site never uses (é, ï: not in the book) fetches the complete tables once and
//      lists the same pages as the query without accents.
//  14. Slow-link scheduling (issue 30 #3), cold, the host holding the model's answer back (for
//      this static model, its query head: the widget never downloads the model file, step 2):
//      the wasm, the core and the head are asked for at once (the host answers the wasm only once
//      the core was asked for), the query's term shards while the head is held, no row shard
//      before it; keyword results (data-ranking="keyword", the status line says so) come before the model;
//      released, the hybrid results replace them with the pages from the top down to the selected
//      one kept in place (the same elements; the selection stays) and the hybrid ranking below
//      (with nothing selected, the first page once the list counts as read: data-keywords-read);
//      Enter typed with a new query while the model is held follows that query's keyword top
//      (the CLI's `--mode keyword` top on the same bundle), not the previous query's. With the
//      model (query head) in and the query's first vector partition held: its keyword results
//      first (the CLI's keyword top first; the status says meaning is being added), then the
//      hybrid ones.
//
// Figures (printed): time to first results for a cold visitor (timed in the page, from the focus
// event), warm query time, bytes fetched for the first query. Run with scripts/site-e2e.sh (builds
// what is needed), or directly:
// `node tests/e2e/site.spec.mjs BIN` where BIN is a lightembed built after js/build.sh (js/pkg/widget).

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
// A page titled as Sphinx titles pages ("Page — Project"): its results are grouped under the
// whole title, never under the part after the last dash (issue 29 #3).
fs.writeFileSync(path.join(site, 'sphinx-install.html'), '<html><head><title>Install — Garden 1.0 documentation</title></head>'
  + '<body><div role="main"><section id="install"><h1>Install</h1><p>Read the notes first.</p>'
  + '<section id="windows"><h2>Windows</h2><p>Double-click the zanzibar installer and follow the wizard to the end.</p>'
  + '</section></section></div></body></html>');
// E2E_SITE_FLAGS: more flags for this first build, e.g. `--partitions 160 --cells 12` for a
// two-level bundle (the book alone gets one level), whose widget fetches centroid cells first.
const extraFlags = (process.env.E2E_SITE_FLAGS || '').split(/\s+/).filter(Boolean);
const out = execFileSync(bin, ['site', '--site', site, '--quiet', ...extraFlags], { encoding: 'utf8' });
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
// What a step can make the host do: gzip `.bin` responses (Content-Encoding: gzip, so
// Content-Length is the compressed size), or damage the fragments (`f/<build>/[tvc]N.bin`) it serves.
// Scheduling steps: `events` (an array) records each bundle file's request and its answer
// ("request core", "sent wasm", …, in the order the host saw them); `wasmAfterCore` holds the
// wasm's answer until the core is asked for (3 s at most, so a widget that asks for them one after
// the other goes on); `modelGate` (a promise) holds the model's answer until it resolves;
// `partitionGate` (a promise) holds the answer of the first vector partition asked for (one
// only: held requests take the browser's connections, six per host on HTTP/1.1).
const host = { gzipBin: false, truncateFragments: false, events: null, wasmAfterCore: false, modelGate: null, partitionGate: null };
const kindOf = (p) => (/\.wasm$/.test(p) ? 'wasm' : /\/core\.[0-9a-f]+\.bin$/.test(p) ? 'core'
  // 'model': what the hybrid ranking waits for — the static model's query head (its row shards
  // are 'rows'), or the model file of a bundle without one.
  : /\/(query|model)\.[0-9a-f]+\.bin$/.test(p) ? 'model' : /\/q\/[0-9a-f]+\/r\d+\.bin$/.test(p) ? 'rows'
  : /\/t\d+\.bin$/.test(p) ? 'shard' : /\/v\d+\.bin$/.test(p) ? 'partition' : /\/c\d+\.bin$/.test(p) ? 'chunk' : null);
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (!url.pathname.startsWith(MOUNT)) { res.writeHead(404).end(); return; }
  let p = path.normalize(path.join(site, decodeURIComponent(url.pathname.slice(MOUNT.length))));
  if (!p.startsWith(site)) { res.writeHead(403).end(); return; }
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, 'index.html');
  if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
  let body = fs.readFileSync(p);
  const request = { path: url.pathname, bytes: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length, file: p };
  requests.push(request);
  if (host.truncateFragments && /\/f\/[0-9a-f]+\/[tvc]\d+\.bin$/.test(url.pathname)) body = body.subarray(0, body.length >> 1);
  const headers = { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' };
  if (host.gzipBin && p.endsWith('.bin')) {
    body = zlib.gzipSync(body, { level: 1 });
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = body.length;
  request.sent = body.length;
  request.head = body.subarray(0, 2);
  const kind = kindOf(url.pathname);
  const events = host.events;
  if (events && kind) {
    events.push(`request ${kind}`);
    if (kind === 'wasm' && host.wasmAfterCore) {
      for (const t0 = Date.now(); !events.includes('request core') && Date.now() - t0 < 3000;) await new Promise((r) => setTimeout(r, 10));
    }
    if (kind === 'model' && host.modelGate) await host.modelGate;
    if (kind === 'partition' && host.partitionGate) {
      const gate = host.partitionGate;
      host.partitionGate = null;
      await gate;
    }
    events.push(`sent ${kind}`); // answered now (recorded before the bytes go out)
  }
  res.writeHead(200, headers);
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
  // Timed in the page, from the focus event to the first result listed and to the final results'
  // excerpts (a MutationObserver): timed from here, the same lists measured 320–390 ms or, in
  // about half the runs, ~900 ms, the rest being this process's wait on the browser.
  await page.evaluate(() => {
    const w = document.querySelector('lightembed-search');
    const t = (window.lightembedCold = {});
    w.querySelector('input').addEventListener('focus', () => { t.focus = performance.now(); }, { once: true });
    const obs = new MutationObserver(() => {
      if (t.list === undefined && w.querySelector('[data-testid="lightembed-result"]')) t.list = performance.now();
      if (w.dataset.ranking === 'hybrid' && w.dataset.lastExcerptMs) { t.excerpts = performance.now(); obs.disconnect(); }
    });
    obs.observe(w, { childList: true, subtree: true, attributes: true });
  });
  await input().focus();
  const q = 'how do I read a file line by line';
  await input().fill(q);
  await page.waitForSelector('[data-testid="lightembed-result"]', { timeout: STEP_MS });
  // The final results: the hybrid ranking's (the keyword side may answer first) and their excerpts.
  await page.waitForFunction(() => {
    const w = document.querySelector('lightembed-search');
    return w.dataset.ranking === 'hybrid' && w.dataset.lastExcerptMs;
  }, null, { timeout: STEP_MS });
  const cold = await page.evaluate(() => window.lightembedCold);
  figures.coldMs = Math.round(cold.list - cold.focus);
  figures.coldExcerptMs = Math.round(cold.excerpts - cold.focus);
  figures.coldBytes = requests.reduce((s, r) => s + r.bytes, 0);
  figures.coldGzip = requests.reduce((s, r) => s + r.gzip, 0);
  figures.coldRequests = requests.length;
  // This host does not compress: the binary files it sent are the stored gzip files (magic 1f 8b,
  // the manifest's sizes), smaller than what they decompress to.
  {
    const m = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));
    assert(m.bundle_version === 3 && m.compression === 'gzip', `manifest: version ${m.bundle_version}, compression ${m.compression}`);
    const binary = bundleRequests().filter(heavy);
    assert(binary.length >= 5, `${binary.length} binary files fetched`);
    let sent = 0;
    let raw = 0;
    for (const r of binary) {
      assert(r.head[0] === 0x1f && r.head[1] === 0x8b, `${r.path} was sent without its gzip compression`);
      assert(r.sent === fs.statSync(r.file).size, `${r.path}: ${r.sent} bytes sent`);
      sent += r.sent;
      raw += zlib.gunzipSync(fs.readFileSync(r.file)).length;
    }
    // A static model's bundle: the widget downloads its query head and the query's row shards,
    // never the model file.
    assert(m.files.query && m.query.bytes > 0, `manifest: no query head (${JSON.stringify(m.files)})`);
    assert(!binary.some((r) => r.path.endsWith(`/${m.files.model}`)), 'the model file was downloaded');
    const rows = binary.filter((r) => r.path.includes(`/lightembed/${m.files.rows}`));
    assert(rows.length >= 3 && rows.length <= 12, `${rows.length} row shards fetched for the question`);
    for (const [key, size] of [['query', m.query.bytes], ['core', m.index.bytes], ['wasm', m.wasm.bytes]]) {
      const r = binary.find((x) => x.path.endsWith(`/${m.files[key]}`));
      assert(r && r.sent === size, `${key}: ${r && r.sent} bytes sent, the manifest says ${size}`);
    }
    assert(sent < raw * 0.7, `${sent} bytes sent for ${raw} bytes of files`);
    figures.plainBinary = `${(sent / 1e6).toFixed(3)} MB sent for ${(raw / 1e6).toFixed(3)} MB of binary files`;
  }
  // What the search itself fetched (the bundle), by kind: gzip -9 bytes / requests.
  const kinds = {};
  for (const r of requests.filter((r) => r.path.includes('/lightembed/'))) {
    const name = r.path.split('/').pop();
    const kind = /^t\d+\.bin$/.test(name) ? 'terms' : /^v\d+\.bin$/.test(name) ? 'vectors'
      : /^c\d+\.bin$/.test(name) ? 'text' : name.replace(/\.[0-9a-f]{16}\./, '.');
    kinds[kind] = kinds[kind] || { gzip: 0, n: 0 };
    kinds[kind].gzip += r.gzip;
    kinds[kind].n += 1;
  }
  figures.bundleGzip = Object.values(kinds).reduce((s, k) => s + k.gzip, 0);
  figures.bundleRequests = Object.values(kinds).reduce((s, k) => s + k.n, 0);
  figures.kinds = Object.entries(kinds).map(([k, v]) => `${k} ${(v.gzip / 1e3).toFixed(0)} kB/${v.n}`).join(', ');
  // The index came in fragments: the core, a few term shards, the vector partitions the query
  // probes, the text chunks of the results.
  const frags = requests.filter((r) => /\/lightembed\/f\/[0-9a-f]{16}\/[tvcg]\d+\.bin$/.test(r.path));
  const manifest = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));
  const shards = frags.filter((r) => /\/t\d+\.bin$/.test(r.path)).length;
  const parts = frags.filter((r) => /\/v\d+\.bin$/.test(r.path)).length;
  // A two-level bundle (E2E_SITE_FLAGS): the centroid cells nearest the query, before its partitions.
  const cells = frags.filter((r) => /\/g\d+\.bin$/.test(r.path)).length;
  if (manifest.index.cells) assert(cells >= 1 && cells < manifest.index.cells, `${cells} of ${manifest.index.cells} centroid cells fetched`);
  else assert(cells === 0, `${cells} centroid cells fetched from a one-level bundle`);
  assert(shards >= 1 && shards < manifest.index.shards / 2, `${shards} of ${manifest.index.shards} term shards fetched`);
  assert(parts >= 1 && parts <= manifest.index.partitions, `${parts} of ${manifest.index.partitions} vector partitions fetched`);
  assert(frags.length - shards - parts - cells >= 1, 'text chunks fetched for the titles and excerpts');
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

await step('a query with characters the site never uses: the complete Unicode tables, once; the same pages as without them', async () => {
  const all = () => requests.filter((r) => /\/lightembed\/unicode-all\.[0-9a-f]{16}\.bin$/.test(r.path)).length;
  assert(requests.some((r) => /\/lightembed\/unicode\.[0-9a-f]{16}\.bin$/.test(r.path)), 'the site\'s Unicode subset came with the wasm');
  const plainPages = await ask(page, 'how do I read a file line by line');
  assert(all() === 0, 'the complete Unicode tables were fetched before a query needed them');
  // é and ï occur nowhere in the book: the uncased model strips the accents, the keyword side folds them.
  const accented = await ask(page, 'how do I réad a fïle line by line');
  assert(all() === 1, `${all()} requests for the complete Unicode tables`);
  assert(JSON.stringify(accented) === JSON.stringify(plainPages), `accented: ${accented.slice(0, 3)}\nplain: ${plainPages.slice(0, 3)}`);
  const marks = await page.locator('[data-testid="lightembed-result"] mark').allTextContents();
  assert(marks.some((m) => /^(read|file)/i.test(m)), `marks: ${marks.slice(0, 5)}`);
  await ask(page, 'ﬁle réading ñ');
  assert(all() === 1, 'the complete Unicode tables were fetched again');
});

await step('a Sphinx-style title ("Install — Garden 1.0 documentation"): the group is titled with the page title from the index', async () => {
  await input().fill('zanzibar installer wizard');
  await page.waitForFunction(() => {
    const first = document.querySelector('lightembed-search [data-testid="lightembed-result"]');
    return first && first.querySelector('a').href.includes('sphinx-install.html');
  }, null, { timeout: STEP_MS });
  const first = page.locator('[data-testid="lightembed-result"]').first();
  const title = await first.locator('.lightembed-page-title').textContent();
  assert(title === 'Install — Garden 1.0 documentation', `group title: ${title}`);
  const heading = await first.locator('.lightembed-heading').first().textContent();
  assert(heading === 'Windows', `section heading: ${heading}`);
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
  // The worker writes what it downloaded to Cache Storage once idle (data-cache-written): the
  // second page's step counts on it.
  await page.waitForFunction(() => document.querySelector('lightembed-search').dataset.cacheWritten === 'true', null, { timeout: STEP_MS });
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
  assert(!heavyNow.some((p) => /\/(model|query|core)\.[0-9a-f]+\.bin$/.test(p)), `downloaded again: ${heavyNow}`);
  // A question the first page asked: its fragments (term shards, row shards, partitions, text
  // chunks) were written to Cache Storage once that worker was idle, so none is downloaded again.
  const asked = requests.length;
  await ask(page, 'how do I read a file line by line');
  const again = requests.slice(asked).filter(heavy).map((r) => r.path);
  assert(again.length === 0, `fragments of a question the first page asked, downloaded again: ${again}`);
  // Warm queries (typing): end to end in the page.
  const times = [];
  const excerptTimes = [];
  for (const q of ['ownership', 'borrowing rules', 'what is a trait object', 'match on an enum', 'cargo workspaces']) {
    await input().fill(q);
    await page.waitForFunction((q) => {
      const el = document.querySelector('lightembed-search');
      return el.querySelector('input').value === q && el.querySelector('[data-testid="lightembed-status"]').textContent.includes('ms')
        && el.dataset.ranking === 'hybrid' && el.dataset.lastExcerptMs;
    }, q, { timeout: STEP_MS });
    const d = await page.evaluate(() => ({ ...document.querySelector('lightembed-search').dataset }));
    times.push(Number(d.lastQueryMs));
    excerptTimes.push(Number(d.lastExcerptMs));
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  figures.warmQueryMs = median(times);
  figures.warmExcerptMs = median(excerptTimes);
});

// Asks `q` on page `p` and waits for its final results (the hybrid ranking's, not the keyword
// side's shown while the model loads) and their excerpts: the results listed before are marked
// first, so neither they nor a late excerpt of an earlier query pass for this one's.
async function ask(p, q) {
  await p.evaluate(() => {
    const w = document.querySelector('lightembed-search');
    delete w.dataset.lastExcerptMs;
    for (const li of w.querySelectorAll('[data-testid="lightembed-result"]')) li.dataset.before = '';
  });
  await p.locator('[data-testid="lightembed-query"]').fill(q);
  await p.waitForFunction((q) => {
    const w = document.querySelector('lightembed-search');
    const first = w.querySelector('[data-testid="lightembed-result"]');
    return w.querySelector('input').value === q && first && first.dataset.before === undefined && w.dataset.lastExcerptMs
      && w.dataset.ranking === 'hybrid';
  }, q, { timeout: STEP_MS });
  return p.locator('[data-testid="lightembed-result"]').evaluateAll((els) => els.map((e) => e.querySelector('a').href));
}
// Whether `p` leaves its URL within `ms` (a navigation Enter should not have started).
const navigates = (p, ms = 800) => {
  const here = p.url();
  return p.waitForURL((u) => u.href !== here, { timeout: ms }).then(() => true, () => false);
};
const statusOf = (p) => p.locator('[data-testid="lightembed-status"]').evaluate((s) => ({ text: s.textContent, error: s.classList.contains('lightembed-error') }));

await step('Enter acts on the results of the text in the box: none when it is empty, the new query\'s when typed', async () => {
  await input().focus();
  const [top2] = await ask(page, 'cargo workspaces');
  const [top1] = await ask(page, 'ownership');
  assert(top1 && top2 && top1 !== top2, `two queries with different top hits: ${top1} ${top2}`);
  // Backspace empties the box; Enter at once must not follow the old results.
  await input().press('Control+a');
  await input().press('Backspace');
  let went = navigates(page);
  await input().press('Enter');
  assert(!(await went), `Enter in a box emptied by Backspace went to ${page.url()}`);
  // Esc Esc empties it too.
  await ask(page, 'ownership');
  await input().press('Escape');
  await input().press('Escape');
  assert(await input().inputValue() === '', 'the second Esc clears the box');
  went = navigates(page);
  await input().press('Enter');
  assert(!(await went), `Enter in a box emptied by Esc Esc went to ${page.url()}`);
  // A new query and Enter at once: the new query's top hit, not the old one's.
  await ask(page, 'ownership');
  const here = page.url();
  await input().fill('cargo workspaces');
  await Promise.all([page.waitForURL((u) => u.href !== here, { timeout: STEP_MS }), input().press('Enter')]);
  assert(page.url() === top2, `Enter went to ${page.url().slice(base.length)}, not the new query's ${top2.slice(base.length)}`);
});

await step('the site rebuilt while the page is open: the next query is answered by the new build', async () => {
  await input().focus();
  await ask(page, 'ownership');
  const manifestPath = path.join(site, 'lightembed', 'manifest.json');
  const before = JSON.parse(fs.readFileSync(manifestPath, 'utf8')).files;
  const changed = 'ch05-01-defining-structs.html';
  const file = path.join(site, changed);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('</main>',
    '<p>The zanzibarquux frobnicator keeps every wombatology record in one struct.</p></main>'));
  execFileSync(bin, ['site', '--site', site, '--quiet'], { encoding: 'utf8' });
  const after = JSON.parse(fs.readFileSync(manifestPath, 'utf8')).files;
  assert(after.core !== before.core && after.fragments !== before.fragments, 'a new build id');
  const q = 'zanzibarquux frobnicator wombatology';
  await input().fill(q);
  // Settled: the new page on top with its words marked (the new build's shards and chunks), or a
  // message.
  await page.waitForFunction((changed) => {
    const w = document.querySelector('lightembed-search');
    const s = w.querySelector('[data-testid="lightembed-status"]');
    const top = w.querySelector('[data-testid="lightembed-result"]');
    const found = top && !w.querySelector('[role="listbox"]').hidden && top.querySelector('a').href.includes(changed)
      && [...top.querySelectorAll('mark')].some((m) => /zanzibarquux/i.test(m.textContent));
    return found || s.classList.contains('lightembed-error') || /HTTP|reload|answered/i.test(s.textContent);
  }, changed, { timeout: STEP_MS });
  const st = await statusOf(page);
  assert(!st.error && !/HTTP|answered/.test(st.text), `status: ${st.text}`);
  const [top] = await page.locator('[data-testid="lightembed-result"]').evaluateAll((els) => els.map((e) => e.querySelector('a').href));
  assert(top && top.includes(changed), `top hit from the new build: ${top}`);
  console.log(`     rebuilt (${before.fragments} → ${after.fragments}); "${q}" → ${top.slice(base.length)} · ${st.text}`);
});

await step('a damaged fragment: named in plain words, the list cleared, Enter does nothing; then it recovers', async () => {
  const p4 = await context.newPage();
  try {
    await p4.goto(`${base}ch03-01-variables-and-mutability.html`);
    // Forget the fragments kept in Cache Storage, so this page downloads the ones it needs.
    await p4.evaluate(async () => {
      const c = await caches.open('lightembed');
      for (const r of await c.keys()) if (r.url.includes('/f/')) await c.delete(r);
    });
    const inp = p4.locator('[data-testid="lightembed-query"]');
    await inp.focus();
    await ask(p4, 'ownership');
    const before = (await statusOf(p4)).text;
    host.truncateFragments = true;
    const q = 'closures capture their environment; iterator adaptors are lazy';
    await inp.fill(q);
    await p4.waitForFunction((before) => {
      const s = document.querySelector('[data-testid="lightembed-status"]');
      return s.classList.contains('lightembed-error') || (s.textContent !== before && !/pages \(|^$|Loading/.test(s.textContent));
    }, before, { timeout: STEP_MS });
    const st = await statusOf(p4);
    assert(/\b[tvc]\d+\.bin\b/.test(st.text) && !/HTTP|answered/.test(st.text), `the message names the file in words: ${st.text}`);
    const listed = await p4.locator('[data-testid="lightembed-result"]').count();
    assert(listed === 0, `${listed} results still listed under the error`);
    const went = navigates(p4);
    await inp.press('Enter');
    assert(!(await went), `Enter under the error went to ${p4.url()}`);
    host.truncateFragments = false;
    await inp.fill('');
    const tops = await ask(p4, q);
    assert(tops.length > 0 && !(await statusOf(p4)).error, 'results once the host serves whole files again');
    console.log(`     ${st.text}`);
  } finally {
    host.truncateFragments = false;
    await p4.close();
  }
});

await step('a rebuild whose new fragments fail too: "The search index was updated — reload the page"', async () => {
  await input().focus();
  await ask(page, 'ownership');
  const file = path.join(site, 'ch06-02-match.html');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('</main>',
    '<p>A quokkafloof arm matches every plinthwort value.</p></main>'));
  execFileSync(bin, ['site', '--site', site, '--quiet'], { encoding: 'utf8' });
  host.truncateFragments = true;
  try {
    await input().fill('quokkafloof plinthwort');
    await page.waitForFunction(() => document.querySelector('[data-testid="lightembed-status"]').classList.contains('lightembed-error')
      || /HTTP|answered|reload/.test(document.querySelector('[data-testid="lightembed-status"]').textContent), null, { timeout: STEP_MS });
    const st = await statusOf(page);
    assert(/The search index was updated — reload the page/.test(st.text), `status: ${st.text}`);
    assert(await page.locator('[data-testid="lightembed-result"]').count() === 0, 'no result listed under the message');
  } finally {
    host.truncateFragments = false;
  }
});

await step('20 remove/re-add rounds of the element: at most one live worker, and search still works', async () => {
  const p3 = await context.newPage();
  try {
    // Count workers: constructed minus terminated.
    await p3.addInitScript(() => {
      const W = window.Worker;
      const n = { made: 0, ended: 0 };
      window.__workers = n;
      window.Worker = class extends W {
        constructor(...a) { super(...a); n.made += 1; }
        terminate() { if (!this.ended) { this.ended = true; n.ended += 1; } return super.terminate(); }
      };
    });
    await p3.goto(`${base}ch04-01-what-is-ownership.html`);
    await p3.evaluate(async () => {
      const until = async (f) => {
        for (const t0 = Date.now(); !f(); await new Promise((r) => setTimeout(r, 20))) {
          if (Date.now() - t0 > 30000) return; // counted below all the same
        }
      };
      let w = document.querySelector('lightembed-search');
      const parent = w.parentNode;
      for (let i = 0; i < 20; i++) {
        w.remove();
        // What routers do: even rounds render a new element, odd ones put the same one back.
        if (i % 2 === 0) w = document.createElement('lightembed-search');
        parent.prepend(w);
        w.querySelector('input').focus();
        // Half the rounds leave once search is ready, the others while it is still starting.
        if (i % 4 < 2) await until(() => w.dataset.ready === 'true');
        else await new Promise((r) => setTimeout(r, 30));
      }
    });
    await p3.waitForTimeout(500);
    const n = await p3.evaluate(() => ({ ...window.__workers, widgets: document.querySelectorAll('lightembed-search').length }));
    assert(n.widgets === 1, `${n.widgets} widgets`);
    assert(n.made - n.ended <= 1, `${n.made - n.ended} live workers (${n.made} started, ${n.ended} ended)`);
    const tops = await ask(p3, 'what is ownership');
    assert(tops.length > 0, 'results after the rounds');
    console.log(`     ${n.made} workers started, ${n.ended} ended`);
  } finally {
    await p3.close();
  }
});

await step('a host that gzips .bin files: progress never above 100 %', async () => {
  const p5 = await context.newPage();
  host.gzipBin = true;
  try {
    await p5.goto(`${base}ch06-00-enums.html`);
    // A cold start: nothing in Cache Storage, so the model and the core are downloaded.
    await p5.evaluate(() => caches.delete('lightembed'));
    await p5.evaluate(() => {
      const s = document.querySelector('[data-testid="lightembed-status"]');
      window.__said = [];
      new MutationObserver(() => window.__said.push(s.textContent)).observe(s, { childList: true, characterData: true, subtree: true });
    });
    await p5.locator('[data-testid="lightembed-query"]').focus();
    await p5.waitForFunction(() => document.querySelector('lightembed-search').dataset.ready === 'true', null, { timeout: STEP_MS });
    await ask(p5, 'pattern matching');
    const said = await p5.evaluate(() => window.__said);
    const pcts = said.flatMap((t) => [...t.matchAll(/(\d+) %/g)].map((m) => Number(m[1])));
    assert(pcts.length > 0, `progress shown: ${said.slice(0, 5)}`);
    assert(Math.max(...pcts) <= 100, `progress above 100 %: ${said.filter((t) => /(\d{4,}|[2-9]\d\d|1\d[1-9]|1[1-9]\d) %/.test(t)).slice(0, 4).join(' | ')}`);
    // The model and the index each end at 100 %: the manifest's sizes are the bytes a download
    // delivers (the stored gzip files, whatever the host's own compression).
    // (Both load at once: the line shows each, "Loading search (index 100 %, model 37 %)…".)
    for (const what of ['model', 'index']) {
      assert(said.some((t) => new RegExp(`[(,] ?${what} 100 %[,)]`).test(t)), `${what} progress never reached 100 %: ${said.filter((t) => t.includes(what)).slice(-2).join(' | ')}`);
    }
    console.log(`     ${pcts.length} progress messages, last "${said.filter((t) => /%/.test(t)).pop()}"`);
  } finally {
    host.gzipBin = false;
    await p5.close();
  }
});

// A cold page with the model's answer held back by the host (`host.modelGate`) and the events
// recorded; `release()` lets the model through.
async function heldModelPage(url) {
  let release;
  host.modelGate = new Promise((r) => { release = r; });
  host.events = [];
  const p = await context.newPage();
  await p.goto(url);
  await p.evaluate(() => caches.delete('lightembed'));
  return { p, release: () => { release(); host.modelGate = null; } };
}
const pageOf = (href) => href.split('#')[0];
const listed = (p) => p.locator('[data-testid="lightembed-result"]').evaluateAll((els) => els.map((e) => ({
  href: e.querySelector('a').href, kept: e.dataset.e2eKept === 'yes', id: e.id, selected: e.getAttribute('aria-selected'),
})));

await step('slow link: wasm, core and query head asked for at once, the term shards while the head is held', async () => {
  host.wasmAfterCore = true;
  const { p, release } = await heldModelPage(`${base}ch09-02-recoverable-errors-with-result.html`);
  try {
    await p.locator('[data-testid="lightembed-query"]').focus();
    await p.locator('[data-testid="lightembed-query"]').fill('how do I read a file line by line');
    // Until the query head is asked for (its answer is held) and the wasm's held answer is sent
    // (the host releases it on polling for the core's request: it may come after the head's).
    const ev = host.events;
    for (const t0 = Date.now(); !(ev.includes('request model') && ev.includes('sent wasm')) && Date.now() - t0 < STEP_MS;) await p.waitForTimeout(20);
    const at = (e) => ev.indexOf(e);
    assert(at('request core') >= 0 && at('request core') < at('sent wasm'),
      `the core is asked for while the wasm's answer is outstanding: ${ev.join(', ')}`);
    // The head (a few tens of kB) is asked for with them, before the core is read (no term
    // shard asked for yet).
    await p.waitForFunction(() => document.querySelector('[data-testid="lightembed-result"]'), null, { timeout: STEP_MS });
    assert(at('request model') >= 0 && at('request model') < at('request shard'),
      `the query head is asked for with the wasm and the core: ${ev.join(', ')}`);
    // The query's term shards: asked for while the head is held, and the first results with them;
    // no row shard before the head is in.
    assert(at('request shard') > 0 && at('sent model') < 0 && at('request rows') < 0,
      `term shards asked for while the head is held: ${ev.join(', ')}`);
    // Vector partitions are asked for only with the query's embedding, so not before the head.
    assert(at('request partition') < 0, `no vector partition asked for before the query head: ${ev.join(', ')}`);
    console.log(`     ${ev.filter((e) => !/chunk/.test(e)).slice(0, 8).join(', ')}, …`);
  } finally {
    host.wasmAfterCore = false;
    release();
    host.events = null;
    await p.close();
  }
});

// On a cold page with the model held: `q`'s keyword results, then (after `down` presses of ↓, or
// with none once the list counts as read) the model released and the refined list checked
// against the rule: the pages from the top down to the selected one (none selected: the first)
// stay — the same elements, the selection with them —, the hybrid ranking of `q` fills the rest.
async function refined(q, down) {
  const { p, release } = await heldModelPage(`${base}ch09-02-recoverable-errors-with-result.html`);
  try {
    const box = p.locator('[data-testid="lightembed-query"]');
    await box.focus();
    await box.fill(q);
    await p.waitForSelector('[data-testid="lightembed-result"]', { timeout: STEP_MS });
    await p.waitForFunction(() => document.querySelector('lightembed-search').dataset.lastExcerptMs, null, { timeout: STEP_MS });
    // The model is still held: these are the keyword side's, and say so.
    assert(!host.events.includes('sent model'), 'results shown before the model was sent');
    const w = await p.evaluate(() => ({ ...document.querySelector('lightembed-search').dataset }));
    assert(w.ranking === 'keyword' && w.ready === undefined, `ranking ${w.ranking}, ready ${w.ready}`);
    let st = await statusOf(p);
    assert(/pages? \(.* · by keywords; adding meaning/.test(st.text) && !st.error, `status: ${st.text}`);
    const marks = await p.locator('[data-testid="lightembed-result"] mark').allTextContents();
    assert(marks.length > 0, 'query words marked in the keyword results');
    for (let i = 0; i < down; i++) await box.press('ArrowDown');
    // Nothing selected: the first page is kept once the list has been shown long enough to be read.
    if (!down) await p.waitForFunction(() => document.querySelector('lightembed-search').dataset.keywordsRead === 'true', null, { timeout: STEP_MS });
    const keep = Math.max(down, 1);
    const keyword = await p.locator('[data-testid="lightembed-result"]').evaluateAll((els, keep) => els.map((e, i) => {
      if (i < keep) e.dataset.e2eKept = 'yes';
      return e.querySelector('a').href;
    }), keep);
    assert(keyword.length > keep, `${keyword.length} keyword results`);
    const active = await box.getAttribute('aria-activedescendant');
    release();
    await p.waitForFunction(() => {
      const el = document.querySelector('lightembed-search');
      return el.dataset.ranking === 'hybrid' && el.dataset.lastExcerptMs;
    }, null, { timeout: STEP_MS });
    const hybrid = await listed(p);
    const stayed = hybrid.slice(0, keep);
    assert(stayed.every((h, i) => h.kept && h.href === keyword[i]),
      `the top ${keep} stayed: ${stayed.map((h) => `${h.href.slice(base.length)} kept=${h.kept}`)}`);
    assert(!hybrid.slice(keep).some((h) => h.kept), 'no other element kept');
    if (down) {
      assert(await box.getAttribute('aria-activedescendant') === active && hybrid[down - 1].selected === 'true', 'the selection stays');
    } else {
      assert(await box.getAttribute('aria-activedescendant') === null, 'nothing selected');
    }
    st = await statusOf(p);
    assert(!/by keywords/.test(st.text) && /pages? \(/.test(st.text), `status: ${st.text}`);
    assert(await p.locator('[data-testid="lightembed-result"] .lightembed-excerpt:not([data-filled])').count() === 0, 'every excerpt shown');
    // Below them, the hybrid ranking of the query (asked again now that the model is in).
    const kept = new Set(keyword.slice(0, keep).map(pageOf));
    const fresh = (await ask(p, `${q} `)).map(pageOf);
    const want = [...keyword.slice(0, keep).map(pageOf), ...fresh.filter((h) => !kept.has(h)).slice(0, hybrid.length - keep)];
    const got = hybrid.map((h) => pageOf(h.href));
    assert(JSON.stringify(got) === JSON.stringify(want), `refined list ${got.map((h) => h.slice(base.length))}, want ${want.map((h) => h.slice(base.length))}`);
    console.log(`     "${q}": keyword top ${keyword.slice(0, 2).map((h) => pageOf(h).slice(base.length)).join(' | ')}; hybrid alone ${fresh.slice(0, 2).map((h) => h.slice(base.length)).join(' | ')}`);
  } finally {
    release();
    host.events = null;
    await p.close();
  }
}

await step('keyword results before the model; the hybrid ones keep the top down to the selected page in place', async () => {
  await refined('how do I read a file line by line', 2);
});

await step('keyword results read with nothing selected: the hybrid ones keep the first page in place', async () => {
  await refined('what is a trait object', 0);
});

await step('the model in, a query\'s vector side on its way: its keyword results first, then the hybrid ones', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  host.events = [];
  const p = await context.newPage();
  try {
    await p.goto(`${base}ch09-02-recoverable-errors-with-result.html`);
    await p.evaluate(() => caches.delete('lightembed'));
    const box = p.locator('[data-testid="lightembed-query"]');
    await box.focus();
    await p.waitForFunction(() => document.querySelector('lightembed-search').dataset.ready === 'true', null, { timeout: STEP_MS });
    host.partitionGate = gate; // the query's first vector partition is held
    await box.fill('how do I read a file line by line');
    await p.waitForSelector('[data-testid="lightembed-result"]', { timeout: STEP_MS });
    const ev = host.events;
    assert(ev.includes('request partition') && host.partitionGate === null, `a vector partition is held: ${ev.join(', ')}`);
    const w = await p.evaluate(() => ({ ...document.querySelector('lightembed-search').dataset }));
    assert(w.ranking === 'keyword', `ranking ${w.ranking} while a vector partition is held`);
    let st = await statusOf(p);
    assert(/pages? \(.* · by keywords; adding meaning…$/.test(st.text) && !st.error, `status: ${st.text}`);
    // The keyword side's list: the CLI's `--mode keyword` top page on the same bundle comes first.
    const cli = JSON.parse(execFileSync(bin, ['search', '--index', path.join(site, 'lightembed'), '--mode', 'keyword', '-k', '5', '--json',
      'how do I read a file line by line'], { encoding: 'utf8' }));
    const first = await p.locator('[data-testid="lightembed-result"] a').first().getAttribute('href');
    assert(pageOf(new URL(first, base).href) === pageOf(new URL(cli.results[0].url, base).href),
      `keyword top ${first}, the CLI's ${cli.results[0].url}`);
    release();
    await p.waitForFunction(() => {
      const el = document.querySelector('lightembed-search');
      return el.dataset.ranking === 'hybrid' && el.dataset.lastExcerptMs;
    }, null, { timeout: STEP_MS });
    st = await statusOf(p);
    assert(!/by keywords/.test(st.text) && /pages? \(/.test(st.text), `status: ${st.text}`);
  } finally {
    release();
    host.partitionGate = null;
    host.events = null;
    await p.close();
  }
});

await step('while the model loads, Enter follows the keyword results of the text in the box, not the previous query\'s', async () => {
  const { p, release } = await heldModelPage(`${base}ch09-02-recoverable-errors-with-result.html`);
  try {
    const box = p.locator('[data-testid="lightembed-query"]');
    await box.focus();
    await box.fill('ownership');
    await p.waitForFunction(() => document.querySelector('lightembed-search').dataset.ranking === 'keyword', null, { timeout: STEP_MS });
    const old = await p.locator('[data-testid="lightembed-result"] a').first().getAttribute('href');
    // The top hit of the new query by keywords, as the CLI ranks the same bundle.
    const q = 'cargo workspaces';
    const cli = JSON.parse(execFileSync(bin, ['search', '--index', path.join(site, 'lightembed'), '--mode', 'keyword', '-k', '5', '--json', q], { encoding: 'utf8' }));
    const want = pageOf(new URL(cli.results[0].url, base).href);
    assert(want !== pageOf(new URL(old).href), `the two queries' keyword tops differ: ${want}`);
    const here = p.url();
    await box.fill(q);
    await Promise.all([p.waitForURL((u) => u.href !== here, { timeout: STEP_MS }), box.press('Enter')]);
    assert(pageOf(p.url()) === want, `Enter went to ${p.url().slice(base.length)}, not the new query's ${want.slice(base.length)}`);
    assert(!host.events.includes('sent model'), 'followed before the model came');
  } finally {
    release();
    host.events = null;
    await p.close();
  }
});

await step('a bundle written with --no-gzip (raw files): a cold visitor searches it too', async () => {
  execFileSync(bin, ['site', '--site', site, '--quiet', '--no-gzip'], { encoding: 'utf8' });
  const m = JSON.parse(fs.readFileSync(path.join(site, 'lightembed', 'manifest.json'), 'utf8'));
  assert(m.compression === 'none', `compression ${m.compression}`);
  const p7 = await context.newPage();
  try {
    await p7.goto(`${base}ch08-01-vectors.html`);
    await p7.evaluate(() => caches.delete('lightembed'));
    const from = requests.length;
    await p7.locator('[data-testid="lightembed-query"]').focus();
    const tops = await ask(p7, 'store a list of values in a vector');
    assert(tops.length > 0 && !(await statusOf(p7)).error, `results: ${tops.length}, status ${(await statusOf(p7)).text}`);
    const binary = requests.slice(from).filter((r) => r.path.includes('/lightembed/') && heavy(r));
    assert(binary.length >= 4 && binary.every((r) => !(r.head[0] === 0x1f && r.head[1] === 0x8b)), `raw files sent: ${binary.map((r) => r.path.split('/').pop())}`);
    console.log(`     ${binary.length} raw binary files; top: ${tops[0].slice(base.length)}`);
  } finally {
    await p7.close();
  }
});

await step('no WebAssembly SIMD → a readable message', async () => {
  const p2 = await context.newPage();
  await p2.addInitScript(() => { const v = WebAssembly.validate; WebAssembly.validate = (b) => (b.length < 64 ? false : v(b)); });
  await p2.goto(`${base}ch02-00-guessing-game-tutorial.html`);
  await p2.locator('[data-testid="lightembed-query"]').focus();
  await p2.waitForFunction(() => /SIMD/.test(document.querySelector('[data-testid="lightembed-status"]')?.textContent || ''), null, { timeout: STEP_MS });
  await p2.close();
});

await step('shortcut: `/` and Ctrl-K focus the box, not while typing in another field; shortcut="off" turns it off', async () => {
  const p6 = await context.newPage();
  try {
    await p6.goto(`${base}ch01-01-installation.html`);
    const box = p6.locator('[data-testid="lightembed-query"]');
    await box.waitFor({ timeout: STEP_MS });
    const active = () => p6.evaluate(() => document.activeElement?.getAttribute('data-testid') || document.activeElement?.id || document.activeElement?.tagName);
    const hint = () => p6.locator('.lightembed-kbd').evaluate((e) => getComputedStyle(e).display);
    assert(await box.getAttribute('aria-keyshortcuts') === '/ Control+K Meta+K', `aria-keyshortcuts: ${await box.getAttribute('aria-keyshortcuts')}`);
    assert(await hint() !== 'none', 'the `/` hint shows on an empty box without focus');
    await p6.keyboard.press('/');
    assert(await active() === 'lightembed-query', `\`/\` focuses the box (focus on ${await active()})`);
    assert(await box.inputValue() === '', '`/` is not typed into the box');
    assert(await hint() === 'none', 'no hint while the box has focus');
    await p6.keyboard.type('ownership');
    await p6.evaluate(() => document.activeElement.blur());
    await p6.keyboard.press('Control+k');
    assert(await active() === 'lightembed-query', 'Ctrl-K focuses the box');
    assert(await p6.evaluate(() => { const i = document.activeElement; return i.selectionStart === 0 && i.selectionEnd === i.value.length; }),
      'and selects its text');
    await p6.evaluate(() => document.activeElement.blur());
    await p6.keyboard.press('Meta+k');
    assert(await active() === 'lightembed-query', '⌘K focuses the box');
    // Typing in another field of the page: the keys are the field's.
    await p6.evaluate(() => {
      const t = document.createElement('textarea');
      t.id = 'other-field';
      document.body.append(t);
    });
    await p6.locator('#other-field').focus();
    await p6.keyboard.type('a/b');
    await p6.keyboard.press('Control+k');
    assert(await active() === 'other-field', `focus stays in the other field (on ${await active()})`);
    assert(await p6.locator('#other-field').inputValue() === 'a/b', 'the `/` typed there');
    // shortcut="off": no shortcut, no hint, no aria-keyshortcuts.
    await p6.evaluate(() => {
      document.querySelector('lightembed-search').setAttribute('shortcut', 'off');
      document.querySelector('[data-testid="lightembed-query"]').value = '';
      document.activeElement.blur();
    });
    await p6.keyboard.press('/');
    await p6.keyboard.press('Control+k');
    assert(await active() !== 'lightembed-query', 'shortcut="off": the keys do not focus the box');
    assert(await box.getAttribute('aria-keyshortcuts') === null, 'shortcut="off": no aria-keyshortcuts');
    assert(await hint() === 'none', 'shortcut="off": no hint');
  } finally {
    await p6.close();
  }
});

await step('dark and light: data-theme on <html>, prefers-color-scheme, theme="…", --lightembed-* (computed colours)', async () => {
  const p7 = await context.newPage();
  try {
    await p7.goto(`${base}ch01-02-hello-world.html`);
    await p7.locator('[data-testid="lightembed-query"]').waitFor({ timeout: STEP_MS });
    // The box's background and text, the status line's colour, after setting the page up.
    const look = async (media, setup) => {
      await p7.emulateMedia({ colorScheme: media });
      return p7.evaluate((setup) => {
        const html = document.documentElement;
        const w = document.querySelector('lightembed-search');
        html.removeAttribute('data-theme');
        document.body.removeAttribute('data-theme');
        html.style.removeProperty('--lightembed-bg');
        w.removeAttribute('theme');
        if (setup.page) html.dataset.theme = setup.page;
        if (setup.body) document.body.dataset.theme = setup.body;
        if (setup.element) w.setAttribute('theme', setup.element);
        if (setup.bg) html.style.setProperty('--lightembed-bg', setup.bg);
        const s = getComputedStyle(w.querySelector('input'));
        return `${s.backgroundColor} ${s.color}`;
      }, setup);
    };
    const LIGHT = 'rgb(255, 255, 255) rgb(34, 34, 34)';
    const DARK = 'rgb(28, 29, 34) rgb(228, 228, 231)';
    const cases = [
      ['light', {}, LIGHT, 'the default'],
      ['light', { page: 'dark' }, DARK, 'data-theme="dark"'],
      ['dark', {}, DARK, 'a system that prefers dark'],
      ['dark', { page: 'light' }, LIGHT, 'data-theme="light" over the system'],
      ['light', { body: 'dark' }, DARK, 'data-theme="dark" on <body> (Sphinx\'s Furo)'],
      ['dark', { body: 'light' }, LIGHT, 'data-theme="light" on <body> over the system'],
      ['dark', { body: 'auto' }, DARK, 'data-theme="auto": the system'],
      ['light', { page: 'dark', element: 'light' }, LIGHT, 'theme="light" on the element over data-theme'],
      ['light', { element: 'dark' }, DARK, 'theme="dark" on the element'],
      ['dark', { page: 'dark', bg: 'rgb(1, 2, 3)' }, 'rgb(1, 2, 3) rgb(228, 228, 231)', '--lightembed-bg on :root'],
    ];
    for (const [media, setup, want, what] of cases) {
      const got = await look(media, setup);
      assert(got === want, `${what} (system ${media}): ${got}, not ${want}`);
    }
    await look('light', {});
  } finally {
    await p7.close();
  }
});

await step('no layout shift: the element has its final height before its script runs', async () => {
  const p8 = await context.newPage();
  try {
    // Hold the widget's script back until the page has been measured without it.
    let release;
    const held = new Promise((r) => { release = r; });
    await p8.route('**/lightembed/lightembed-ui.js', async (route) => { await held; await route.continue(); });
    await p8.goto(`${base}ch03-02-data-types.html`, { waitUntil: 'commit' });
    const measure = () => p8.evaluate(() => {
      const w = document.querySelector('lightembed-search');
      if (!w || !document.body) return null;
      const next = w.nextElementSibling;
      return { defined: Boolean(customElements.get('lightembed-search')), built: Boolean(w.querySelector('input')),
        height: w.getBoundingClientRect().height, nextTop: next ? next.getBoundingClientRect().top : null,
        minHeight: getComputedStyle(w).minHeight };
    });
    await p8.waitForFunction(() => {
      const w = document.querySelector('lightembed-search');
      return w && w.nextElementSibling && parseFloat(getComputedStyle(w).minHeight) > 0;
    }, null, { timeout: STEP_MS });
    const before = await measure();
    assert(!before.defined && !before.built, 'measured before the script ran');
    release();
    await p8.waitForFunction(() => document.querySelector('lightembed-search input'), null, { timeout: STEP_MS });
    const afterBuilt = await measure();
    assert(before.height > 30, `height reserved: ${before.height}px`);
    assert(Math.abs(afterBuilt.height - before.height) < 0.5, `height ${before.height}px before the script, ${afterBuilt.height}px after`);
    assert(Math.abs(afterBuilt.nextTop - before.nextTop) < 0.5, `the content below moved: ${before.nextTop}px → ${afterBuilt.nextTop}px`);
    console.log(`     ${before.height.toFixed(2)}px reserved, ${afterBuilt.height.toFixed(2)}px built`);
  } finally {
    await p8.close();
  }
});

console.log(`     figures: cold visitor → first results ${figures.coldMs} ms (excerpts ${figures.coldExcerptMs} ms), ${(figures.coldBytes / 1e6).toFixed(2)} MB fetched (uncompressed), `
  + `${(figures.coldGzip / 1e6).toFixed(2)} MB gzip -9, ${figures.coldRequests} requests (the search bundle: ${(figures.bundleGzip / 1e6).toFixed(3)} MB gzip, ${figures.bundleRequests} requests: ${figures.kinds}); `
  + `plain host (no compression): ${figures.plainBinary}; `
  + `second page ready ${figures.warmStartMs} ms; warm query p50 ${figures.warmQueryMs} ms (excerpts ${figures.warmExcerptMs} ms)`);
if (pageErrors.length) { console.log(`FAIL page errors: ${pageErrors.slice(0, 3).join(' | ')}`); failed++; }
await context.close();
server.close();
fs.rmSync(site, { recursive: true, force: true });
fs.rmSync(userDataDir, { recursive: true, force: true });
console.log(failed ? `${failed} site steps failed` : 'all site steps passed');
process.exit(failed ? 1 : 0);
