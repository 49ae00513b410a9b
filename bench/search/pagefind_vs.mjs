// Side by side, one harness: Pagefind (bench/search/package.json's pin) and `lightembed site` on the
// same built site. Both tools index the same folder with their defaults; both are searched in
// headless Chromium from their own bundle — Pagefind through its JS API (`pagefind.js`,
// `search()`, `data()` of the results its UI lists first), lightembed through the
// <lightembed-search> widget, typed into as a visitor does. Sets (SET=…):
//
//   git     the Git manual pages of bench/search/make_git_set.py (NAME block removed) with its 155
//           mechanical queries (each command's one-line description → its page); the default
//   book    the Rust book from Debian's rust-doc (print.html, the whole book on one page, removed
//           for both tools) with bench/search/questions/book.jsonl: 55 questions we wrote and
//           judged (30 keyword-like, 25 natural-language; one or more relevant pages each). A
//           chapter's copy in an earlier edition's folder counts as that chapter.
//           Judging: relevant pages were written first; then the top 3 pages of both tools were
//           pooled and judged by reading them (TREC-style pooling): those found to answer the
//           question are listed under "pooled" as well as in "relevant".
//   python  the Python 3.11 docs from Debian's python3.11-doc (HTML only), questions/python.jsonl
//   big     several Debian doc packages (bench/search/make_big_site.sh) with questions/big.jsonl
//           (bench/search/make_big_set.py): 400 mechanical questions
//   site    any folder of built HTML: SITE=folder, PAGE (the page the widget goes on, relative;
//           default index.html, else the first page), FIRST and WARM (the two timed queries),
//           QUESTIONS (optional: a JSONL file of {"query", "relevant": [page paths relative to
//           SITE]}; without it the quality rows say "not measured"), TYPOS (optional, the same
//           with typos). For a site of your own, e.g. one held out from all of the above.
//
// Questions with typos: questions/SET-typos.jsonl (bench/search/add_typos.py) when it is there
// (for git: data/git-typos.jsonl, written by add_typos.py if it exists); otherwise the typo rows
// say "not measured".
//
//   python3 bench/search/make_git_set.py      # SET=git only
//   (cd bench/search && npm install)          # pagefind (ships its binary through npm)
//   (cd tests/e2e && npm install)             # playwright-core; Chromium from Debian (/usr/bin/chromium)
//   bash js/build.sh && cargo build --release -p lightembed-cli
//   SET=book node bench/search/pagefind_vs.mjs   # prints Markdown tables
//
// Environment: RUNS (cold runs per tool and link, default 3; timings are their medians, each run
// in brackets), LATENCY_MS / DOWN_BPS / UP_BPS (the slow link, default 150 ms, 200,000 B/s =
// 1.6 Mbit/s down, 93,750 B/s = 750 kbit/s up: "slow 4G"), SITE_ARGS (extra `lightembed site`
// arguments), WIDGETS=label:folder,… (widget variants on one bundle: each folder's
// lightembed-ui.js and lightembed-worker.js are copied over the bundle's before that variant's
// runs; every other bundle file stays the same bytes), LIGHTEMBED (the CLI binary), DEBUG=1 (each
// question's rank per tool), TRACE=1 (every lightembed request of each slow-link cold run: when the
// host received it, ms after typing, and its bytes).
//
// What is measured, per tool:
//   - index time, bundle bytes on disk;
//   - first-query bytes and requests: every response under the tool's bundle folder (`pagefind/`,
//     `lightembed/`) from the page load to the last step below (lightembed: its final results'
//     excerpts shown; Pagefind: data() of its first 5 results), as sent by a *plain* host (the
//     stored files as they are; both tools store their index files compressed — the headline) and
//     by a *gzip* host (every response Content-Encoding: gzip, zlib level 6); RUNS runs each, the
//     run of the median byte count (the widget's fetches depend a little on timing);
//   - cold time, fresh browser context (nothing cached), page loaded at full speed, clock from the
//     first keystroke (lightembed: focus + the query typed, the widget starts loading on focus;
//     Pagefind: import of pagefind.js + search(), as its UI does on the first input), measured in
//     the page: *first results* (lightembed: the first result listed — keyword results while the
//     model, or the query's own vector side, is on its way; Pagefind: search() resolved and
//     data() of its first 5 results), *final*
//     (lightembed: the hybrid list, `data-ranking` no longer "keyword"; Pagefind: = first), and
//     lightembed's *+ excerpts*; on localhost and on the slow link (CDP
//     Network.emulateNetworkConditions, which Chromium applies to the widget's worker too);
//   - warm query (after the cold run, a second query): lightembed: the widget's own figure
//     (`data-last-query-ms`, query posted → results listed); Pagefind: search() + data() of 5;
//   - success@1, success@10, MRR@10 at page level (a hit on any relevant page counts; duplicates
//     of a page collapse to its first rank), clean questions and questions with typos.
//     Pagefind: its top 10 pages. lightembed: the pages the widget lists (at most 8: the widget
//     shows no more), and, for reference, `lightembed search` on the same bundle folder (top 10
//     pages of k=30 passages) in hybrid mode and in keyword mode (BM25 alone: the list a visitor
//     sees first while the model loads).
// The harness names no bundle file beyond manifest.json: requests are counted by folder, and the
// per-file split uses the names manifest.json's `files` lists.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const require = createRequire(path.join(root, 'tests', 'e2e', 'package.json'));
const { chromium } = require('playwright-core');
const bin = process.env.LIGHTEMBED || path.join(root, 'target', 'release', 'lightembed');
const pagefindBin = path.join(here, 'node_modules', '.bin', 'pagefind');
const pagefindVersion = JSON.parse(fs.readFileSync(path.join(here, 'node_modules', 'pagefind', 'package.json'), 'utf8')).version;
const SET = process.env.SET || 'git';
const RUNS = Math.max(1, Number(process.env.RUNS || 3));
const LINK = {
  offline: false,
  latency: Number(process.env.LATENCY_MS || 150),
  downloadThroughput: Number(process.env.DOWN_BPS || 200_000),
  uploadThroughput: Number(process.env.UP_BPS || 93_750),
};
const TIMEOUT = 300_000; // any one wait in the browser, ms

function readJsonl(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
const readQuestions = (name) => readJsonl(path.join(here, 'questions', `${name}.jsonl`));
// The questions with typos of a set, when bench/search/add_typos.py has written them.
const typosOf = (name) => () => {
  const f = path.join(here, 'questions', `${name}-typos.jsonl`);
  return fs.existsSync(f) ? readJsonl(f) : null;
};
const gitQuestions = (file) => readJsonl(path.join(here, 'data', file))
  .map((q) => ({ query: q.query, relevant: q.relevant || [q.id], kind: q.kind || 'mechanical' }));
const SETS = {
  git: { src: path.join(here, 'data', 'git-html'), page: 'git-commit.html', pfPage: 'git-add.html',
    first: 'Use binary search to find the commit that introduced a bug', warm: 'Show changes between commits',
    questions: () => gitQuestions('git.jsonl'),
    typos: () => {
      const f = path.join(here, 'data', 'git-typos.jsonl');
      const script = path.join(here, 'add_typos.py');
      if (!fs.existsSync(f) && fs.existsSync(script)) {
        try {
          execFileSync('python3', [script, path.join(here, 'data', 'git.jsonl'), '--site', path.join(here, 'data', 'git-html'), '--out', f], { stdio: 'ignore' });
        } catch { return null; }
      }
      return fs.existsSync(f) ? gitQuestions('git-typos.jsonl') : null;
    } },
  book: { src: '/usr/share/doc/rust-doc/html/book', remove: ['print.html'], page: 'ch01-01-installation.html',
    first: 'how do I read a file line by line', warm: 'ownership and borrowing',
    questions: () => readQuestions('book'), typos: typosOf('book') },
  python: { src: '/usr/share/doc/python3.11/html', page: 'tutorial/index.html',
    first: 'how do I read a file line by line', warm: 'json.dumps indent',
    questions: () => readQuestions('python'), typos: typosOf('python') },
  // A big site: real HTML docs of several Debian packages, one folder each
  // (bench/search/make_big_site.sh), with bench/search/make_big_set.py's mechanical questions.
  big: { src: path.join(here, 'data', 'big-site'), page: 'openjdk-17-doc/api/index.html',
    first: 'how do I read a file line by line', warm: 'HashMap computeIfAbsent',
    questions: () => readQuestions('big'), typos: typosOf('big') },
  site: {
    src: process.env.SITE && path.resolve(process.env.SITE),
    get page() {
      if (process.env.PAGE) return process.env.PAGE;
      if (fs.existsSync(path.join(this.src, 'index.html'))) return 'index.html';
      const first = fs.readdirSync(this.src, { recursive: true }).filter((f) => /\.html?$/.test(f)).sort()[0];
      if (!first) throw new Error(`SET=site: no .html page under ${this.src}`);
      return first;
    },
    first: process.env.FIRST || 'how do I get started',
    warm: process.env.WARM || 'configuration options',
    questions: () => (process.env.QUESTIONS ? readJsonl(path.resolve(process.env.QUESTIONS)) : null),
    typos: () => (process.env.TYPOS ? readJsonl(path.resolve(process.env.TYPOS)) : null),
  },
};
// The sets' typo questions are measured with the set itself (the typo rows): SET=book-typos is
// SET=book.
SETS['book-typos'] = SETS.book;
SETS['python-typos'] = SETS.python;
const set = SETS[SET];
if (!set) throw new Error(`SET=${SET}: expected one of ${Object.keys(SETS).join(', ')}`);
if (SET === 'site' && !(set.src && fs.statSync(set.src, { throwIfNoEntry: false })?.isDirectory())) {
  throw new Error('SET=site needs SITE=<a folder of built HTML pages>');
}
const clean = set.questions();
const typos = set.typos ? set.typos() : null;
// A page URL → its path relative to the site root, as the questions name pages.
const pageKey = (u) => {
  let p = decodeURI(u.split('#')[0].replace(/^https?:\/\/[^/]+/, '').replace(/^\//, ''));
  if (p === '' || p.endsWith('/')) p += 'index.html';
  // The Rust book folder also holds earlier editions' copies of the chapters
  // (`2018-edition/ch15-04-rc.html`): the same chapter, so the same page for judging.
  if (SET.startsWith('book')) p = p.replace(/^(2018-edition|second-edition)\//, '');
  return p;
};
const widgets = (process.env.WIDGETS || '').split(',').filter(Boolean).map((w) => {
  const [label, dir] = w.split(':');
  return { label, dir: path.resolve(root, dir) };
});
const siteArgs = (process.env.SITE_ARGS || '').split(' ').filter(Boolean);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timed = (f) => { const t = process.hrtime.bigint(); f(); return Number(process.hrtime.bigint() - t) / 1e9; };
const dirBytes = (d) => fs.readdirSync(d, { recursive: true }).map((f) => path.join(d, f))
  .filter((p) => fs.statSync(p).isFile()).reduce((s, p) => s + fs.statSync(p).size, 0);

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };
const load0 = os.loadavg();
const tmp = [];
let server = null;
let browser = null;
// Stopped from outside (Ctrl-C, timeout): the temporary folders go too (Playwright ends the browser
// it started when this process exits; the server goes with the process).
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
    process.exit(130);
  });
}
try {
  // ---- the site, both bundles ----
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'pf-vs-'));
  tmp.push(site);
  fs.cpSync(set.src, site, { recursive: true, dereference: true });
  for (const f of set.remove || []) fs.rmSync(path.join(site, f), { force: true });
  const pfTime = timed(() => execFileSync(pagefindBin, ['--site', site], { stdio: 'ignore' }));
  const leTime = timed(() => execFileSync(bin, ['site', '--site', site, '--quiet', ...siteArgs], { stdio: 'ignore' }));
  const bundleDir = path.join(site, 'lightembed');
  const manifest = JSON.parse(fs.readFileSync(path.join(bundleDir, 'manifest.json'), 'utf8'));
  const leDisk = dirBytes(bundleDir);
  const pfDisk = dirBytes(path.join(site, 'pagefind'));
  // The widget on one page (the lines `lightembed site` prints).
  const page1 = path.join(site, set.page);
  const html = fs.readFileSync(page1, 'utf8');
  const at = html.indexOf('>', html.indexOf('<body')) + 1;
  fs.writeFileSync(page1, html.slice(0, at) + '<link rel="stylesheet" href="/lightembed/lightembed-ui.css">'
    + '<script type="module" src="/lightembed/lightembed-ui.js"></script><lightembed-search></lightembed-search>' + html.slice(at));

  // ---- one loopback server; `host.gzip` switches it to a compressing host ----
  const host = { gzip: false, log: [] };
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let p;
    try { p = path.normalize(path.join(site, decodeURIComponent(url.pathname))); } catch { res.writeHead(400).end(); return; }
    if (!p.startsWith(site + path.sep) || !fs.existsSync(p) || !fs.statSync(p).isFile()) { res.writeHead(404).end(); return; }
    let body = fs.readFileSync(p);
    const headers = { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' };
    if (host.gzip) {
      body = zlib.gzipSync(body, { level: 6 });
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = body.length;
    host.log.push({ path: url.pathname, at: Date.now(), sent: body.length });
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise((r, j) => { server.once('error', j); server.listen(0, '127.0.0.1', r); });
  const base = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const sentUnder = (folder) => {
    const rs = host.log.filter((r) => r.path.startsWith(`/${folder}/`));
    return { bytes: rs.reduce((s, r) => s + r.sent, 0), requests: rs.length, log: rs };
  };

  // A fresh context (no cache, no storage) on `pagePath`, loaded at full speed; `slow` then
  // slows the link. `f(page, t0Wall)` runs in it; the context is closed whatever happens.
  async function inFresh(pagePath, slow, f) {
    const ctx = await browser.newContext();
    try {
      const page = await ctx.newPage();
      host.log = [];
      await page.goto(`${base}${pagePath}`, { timeout: TIMEOUT });
      if (slow) {
        const cdp = await ctx.newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', LINK);
      }
      return await f(page);
    } finally {
      await ctx.close();
    }
  }

  // ---- Pagefind ----
  const pfSearch = async (page, q, n) => page.evaluate(async ({ q, n }) => {
    const t = performance.now();
    const wall = Date.now();
    const pagefind = await import('/pagefind/pagefind.js');
    const r = await pagefind.search(q);
    const data = await Promise.all(r.results.slice(0, n).map((x) => x.data()));
    return { ms: performance.now() - t, wall, urls: data.map((d) => d.url) };
  }, { q, n });
  async function pagefindCold(slow) {
    return inFresh(set.pfPage || set.page, slow, async (page) => {
      const r = await pfSearch(page, set.first, 5);
      const sent = sentUnder('pagefind');
      const warm = slow ? null : (await pfSearch(page, set.warm, 5)).ms;
      return { first: r.ms, final: r.ms, excerpts: r.ms, warm, bytes: sent.bytes, requests: sent.requests };
    });
  }
  async function pagefindRank(questions) {
    if (!questions) return null;
    return inFresh(set.pfPage || set.page, false, async (page) => {
      const out = [];
      for (const q of questions) out.push((await pfSearch(page, q.query, 10)).urls);
      return out;
    });
  }

  // ---- lightembed: the widget ----
  // Types `q` into an empty box (focus first: a cold widget starts loading then) and resolves, in
  // page time from that keystroke, when the first result is listed, when the final (hybrid) list
  // is, and when its excerpts are shown.
  const leType = (page, q) => page.evaluate(({ q, timeout }) => new Promise((resolve, reject) => {
    const w = document.querySelector('lightembed-search');
    const input = w.querySelector('[data-testid="lightembed-query"]');
    const t = {};
    let t0 = 0;
    let obs = null;
    let timer = null;
    const finish = (err) => { obs.disconnect(); clearTimeout(timer); if (err) reject(err); else resolve(t); };
    const check = () => {
      const now = performance.now() - t0;
      const err = w.querySelector('.lightembed-error');
      if (err) { finish(new Error(`widget: ${err.textContent}`)); return; }
      if (input.value !== q) return;
      const listed = w.querySelector('[data-testid="lightembed-result"]');
      const final = w.dataset.ready === 'true' && w.dataset.ranking !== 'keyword';
      if (t.first === undefined && listed) t.first = now;
      if (t.final === undefined && final && listed) t.final = now;
      if (t.final !== undefined && final && w.dataset.lastExcerptMs !== undefined) {
        t.excerpts = now;
        t.queryMs = Number(w.dataset.lastQueryMs);
        finish();
      }
    };
    obs = new MutationObserver(check);
    obs.observe(w, { attributes: true, childList: true, subtree: true, characterData: true });
    timer = setTimeout(() => finish(new Error(`no final results for "${q}" in ${timeout} ms (${JSON.stringify(t)}; `
      + `status: ${w.querySelector('[data-testid="lightembed-status"]').textContent})`)), timeout);
    t0 = performance.now();
    t.wall = Date.now();
    input.focus();
    input.value = q;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }), { q, timeout: TIMEOUT });
  // Empties the box and waits for the list to be gone (nothing of the last query left).
  const leClear = (page) => page.evaluate((timeout) => new Promise((resolve, reject) => {
    const w = document.querySelector('lightembed-search');
    const input = w.querySelector('[data-testid="lightembed-query"]');
    input.value = '';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    const t0 = performance.now();
    const poll = () => {
      if (w.dataset.ranking === undefined && !w.querySelector('[data-testid="lightembed-result"]')) {
        // A widget without a keyword stage sets no data-ranking: its next list is told by this.
        delete w.dataset.lastQueryMs;
        resolve();
      }
      else if (performance.now() - t0 > timeout) reject(new Error('the widget kept its list after the box was emptied'));
      else setTimeout(poll, 5);
    };
    poll();
  }), TIMEOUT);
  // The final list of `q` (empty box first): its pages' links, in order, and the widget's time.
  const leAsk = async (page, q) => {
    await leClear(page);
    return page.evaluate(({ q, timeout }) => new Promise((resolve, reject) => {
      const w = document.querySelector('lightembed-search');
      const input = w.querySelector('[data-testid="lightembed-query"]');
      input.value = q;
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const t0 = performance.now();
      const poll = () => {
        const err = w.querySelector('.lightembed-error');
        if (err) reject(new Error(`widget: ${err.textContent}`));
        else if (w.dataset.ready === 'true' && w.dataset.lastQueryMs !== undefined && w.dataset.ranking !== 'keyword') {
          resolve({
            ms: Number(w.dataset.lastQueryMs),
            urls: [...w.querySelectorAll('[data-testid="lightembed-result"]')].map((li) => li.querySelector('a[href]').href),
          });
        } else if (performance.now() - t0 > timeout) reject(new Error(`no final results for "${q}"`));
        else setTimeout(poll, 5);
      };
      poll();
    }), { q, timeout: TIMEOUT });
  };
  // Where each file manifest.json names was first asked for, ms after typing (a folder entry: its
  // first file).
  const schedule = (log, wall) => Object.fromEntries(Object.entries(manifest.files || {}).map(([k, name]) => {
    const r = log.find((x) => x.path === `/lightembed/${name}` || (name.endsWith('/') && x.path.startsWith(`/lightembed/${name}`)));
    return [k, r ? r.at - wall : null];
  }));
  const splitByFile = (log) => {
    const out = {};
    for (const r of log) {
      const rel = r.path.slice('/lightembed/'.length);
      const k = Object.entries(manifest.files || {}).find(([, name]) => rel === name || (name.endsWith('/') && rel.startsWith(name)));
      const key = k ? k[0] : 'other (scripts, css, manifest)';
      out[key] = out[key] || { bytes: 0, n: 0 };
      out[key].bytes += r.sent;
      out[key].n += 1;
    }
    return out;
  };
  async function lightembedCold(slow) {
    return inFresh(set.page, slow, async (page) => {
      const t = await leType(page, set.first);
      const sent = sentUnder('lightembed');
      const sched = schedule(sent.log, t.wall);
      const split = splitByFile(sent.log);
      if (process.env.TRACE && slow) {
        console.log(`TRACE slow cold run: first ${t.first.toFixed(0)} ms, final ${t.final.toFixed(0)} ms; requests under /lightembed/ (ms after typing, bytes)`);
        for (const r of sent.log) console.log(`TRACE ${String(r.at - t.wall).padStart(6)} ${String(r.sent).padStart(8)} ${r.path}`);
      }
      const warm = slow ? null : (await leAsk(page, set.warm)).ms;
      return { first: t.first, final: t.final, excerpts: t.excerpts, warm, bytes: sent.bytes, requests: sent.requests, sched, split };
    });
  }
  async function lightembedRank(questions) {
    if (!questions) return null;
    return inFresh(set.page, false, async (page) => {
      await leType(page, set.first); // loads the search
      const out = [];
      for (const q of questions) out.push((await leAsk(page, q.query)).urls);
      return out;
    });
  }
  // `lightembed search` on the bundle folder, one mode.
  function cliRank(questions, mode) {
    if (!questions) return null;
    const qfile = path.join(site, '..', `${path.basename(site)}-queries.jsonl`);
    fs.writeFileSync(qfile, questions.map((q, i) => JSON.stringify({ id: i, query: q.query })).join('\n') + '\n');
    try {
      const out = execFileSync(bin, ['search', '--index', bundleDir, '--mode', mode, '-k', '30', '--jsonl', qfile],
        { encoding: 'utf8', maxBuffer: 256 << 20 });
      return out.split('\n').filter(Boolean).map((l) => JSON.parse(l).hits.map((h) => h.url));
    } finally {
      fs.rmSync(qfile, { force: true });
    }
  }

  // ---- the runs ----
  async function measure(cold, rank) {
    const local = [];
    const slow = [];
    host.gzip = false;
    for (let i = 0; i < RUNS; i++) local.push(await cold(false));
    for (let i = 0; i < RUNS; i++) slow.push(await cold(true));
    host.gzip = true;
    const gzRuns = [];
    for (let i = 0; i < RUNS; i++) gzRuns.push(await cold(false));
    host.gzip = false;
    // Bytes can differ run to run (excerpts of a keyword list replaced before they were asked
    // for are never fetched): the run of the median byte count.
    const gz = gzRuns[gzRuns.map((r) => r.bytes).indexOf(median(gzRuns.map((r) => r.bytes)))];
    return { local, slow, gz, clean: await rank(clean), typos: await rank(typos) };
  }
  const pf = await measure(pagefindCold, pagefindRank);
  const les = [];
  const orig = Object.fromEntries(['lightembed-ui.js', 'lightembed-worker.js'].map((f) => [f, fs.readFileSync(path.join(bundleDir, f))]));
  for (const w of widgets.length ? widgets : [{ label: null, dir: null }]) {
    for (const f of Object.keys(orig)) fs.writeFileSync(path.join(bundleDir, f), w.dir ? fs.readFileSync(path.join(w.dir, f)) : orig[f]);
    les.push({ label: w.label, ...(await measure(lightembedCold, lightembedRank)) });
  }
  for (const f of Object.keys(orig)) fs.writeFileSync(path.join(bundleDir, f), orig[f]);
  const cli = { clean: cliRank(clean, 'hybrid'), typos: cliRank(typos, 'hybrid'),
    kwClean: cliRank(clean, 'keyword'), kwTypos: cliRank(typos, 'keyword') };
  await browser.close();
  browser = null;

  // ---- the tables ----
  function quality(questions, ranked, which = () => true) {
    let s1 = 0; let s10 = 0; let mrr = 0; let empty = 0; let n = 0;
    ranked.forEach((urls, i) => {
      if (!which(questions[i])) return;
      n++;
      const pages = [];
      for (const u of urls) { const p = pageKey(u); if (!pages.includes(p)) pages.push(p); }
      const r = pages.slice(0, 10).findIndex((p) => questions[i].relevant.includes(p));
      if (urls.length === 0) empty++;
      if (r === 0) s1++;
      if (r >= 0) { s10++; mrr += 1 / (r + 1); }
    });
    return { s1: s1 / n, s10: s10 / n, mrr: mrr / n, empty, n };
  }
  const sec = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);
  const timing = (runs, k) => `**${sec(median(runs.map((r) => r[k])))}** (${runs.map((r) => sec(r[k])).join(', ')})`;
  const mb = (b) => `${(b / 1e6).toFixed(2)} MB`;
  const leName = (l) => `lightembed${l.label ? ` (${l.label})` : ''}`;
  const q3 = (questions, ranked) => {
    if (!questions || !ranked) return 'not measured';
    const q = quality(questions, ranked);
    return `**${q.mrr.toFixed(3)}** / ${q.s1.toFixed(3)} / ${q.s10.toFixed(3)}`;
  };
  const pages = fs.readdirSync(site, { recursive: true })
    .filter((f) => /\.html?$/.test(f) && !f.startsWith('pagefind') && !f.startsWith('lightembed')).length;
  const load1 = os.loadavg();
  console.log(`SET=${SET}: ${pages} pages (lightembed: ${manifest.index ? manifest.index.passages : '?'} passages), `
    + `${clean ? clean.length : 'no'} questions${typos ? ` + ${typos.length} with typos` : ' (no questions with typos for this set: typo rows not measured)'}; `
    + `page level; headless Chromium, loopback host. Timings: medians of ${RUNS} cold runs, each run in brackets. `
    + `Slow link: ${LINK.latency} ms latency, ${LINK.downloadThroughput} B/s down, ${LINK.uploadThroughput} B/s up. `
    + `First query "${set.first}", warm query "${set.warm}". ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')} `
    + `at the start, ${load1.map((x) => x.toFixed(2)).join(' ')} at the end.\n`);
  const cols = [`Pagefind ${pagefindVersion}`, ...les.map(leName)];
  const row = (label, pfCell, leCell) => console.log(`| ${label} | ${pfCell} | ${les.map(leCell).join(' | ')} |`);
  console.log(`| | ${cols.join(' | ')} |`);
  console.log(`|---|${cols.map(() => '---').join('|')}|`);
  row('index time', `${pfTime.toFixed(1)} s`, () => `${leTime.toFixed(1)} s${siteArgs.length ? ` (\`${siteArgs.join(' ')}\`)` : ''}`);
  row('bundle on disk', mb(pfDisk), () => mb(leDisk));
  const midBytes = (runs) => runs[runs.map((r) => r.bytes).indexOf(median(runs.map((r) => r.bytes)))];
  row('first query, plain host (headline): bytes / requests', `**${mb(midBytes(pf.local).bytes)}** / ${midBytes(pf.local).requests}`,
    (l) => `**${mb(midBytes(l.local).bytes)}** / ${midBytes(l.local).requests}`);
  row('first query, gzip host: bytes / requests', `${mb(pf.gz.bytes)} / ${pf.gz.requests}`, (l) => `${mb(l.gz.bytes)} / ${l.gz.requests}`);
  row('cold, localhost: first results', timing(pf.local, 'first'), (l) => timing(l.local, 'first'));
  row('cold, localhost: final (hybrid) results', '= first', (l) => timing(l.local, 'final'));
  row('cold, slow link: first results', timing(pf.slow, 'first'), (l) => timing(l.slow, 'first'));
  row('cold, slow link: final (hybrid) results', '= first', (l) => timing(l.slow, 'final'));
  row('cold, slow link: + excerpts', '= first', (l) => timing(l.slow, 'excerpts'));
  row('warm query', timing(pf.local, 'warm'), (l) => timing(l.local, 'warm'));
  const leRanked = (l, which) => q3(which === 'clean' ? clean : typos, l[which]);
  row('MRR@10 / success@1 / success@10, clean questions', q3(clean, pf.clean), (l) => leRanked(l, 'clean'));
  row('… questions with typos', q3(typos, pf.typos), (l) => leRanked(l, 'typos'));
  row('… clean, `lightembed search` (CLI) hybrid / keyword only', '', () => `${q3(clean, cli.clean)}; ${q3(clean, cli.kwClean)}`);
  row('… typos, `lightembed search` (CLI) hybrid / keyword only', '', () => `${q3(typos, cli.typos)}; ${q3(typos, cli.kwTypos)}`);
  const empties = (qs, ranked) => (qs ? quality(qs, ranked).empty : '–');
  row('questions with no results (clean; typos)', `${empties(clean, pf.clean)}; ${empties(typos, pf.typos)}`,
    (l) => `${empties(clean, l.clean)}; ${empties(typos, l.typos)}`);

  // Per kind of question.
  const kinds = [...new Set((clean || []).map((q) => q.kind))];
  console.log('\n| tool | questions | n | success@1 | success@10 | MRR@10 |');
  console.log('|---|---|---|---|---|---|');
  const lists = [[cols[0], pf.clean, pf.typos], ...les.map((l) => [`${leName(l)}, widget`, l.clean, l.typos]),
    ['lightembed search (CLI, hybrid)', cli.clean, cli.typos], ['lightembed search (CLI, keyword only)', cli.kwClean, cli.kwTypos]];
  for (const [name, c, t] of lists) {
    for (const [qs, ranked, tag] of [[clean, c, ''], [typos, t, ' (typos)']]) {
      if (!qs || !ranked) continue;
      for (const kind of [...kinds, ...(kinds.length > 1 ? ['all'] : [])]) {
        const q = quality(qs, ranked, (x) => kind === 'all' || x.kind === kind);
        if (q.n) console.log(`| ${name} | ${kind}${tag} | ${q.n} | ${q.s1.toFixed(3)} | ${q.s10.toFixed(3)} | ${q.mrr.toFixed(3)} |`);
      }
    }
  }

  // lightembed's first query, file by file (names from manifest.json), and the slow link's schedule.
  for (const l of les) {
    const mid = (runs) => runs[runs.map((r) => r.final).indexOf(median(runs.map((r) => r.final)))];
    const m = mid(l.slow);
    const plain = l.local[l.local.map((r) => r.bytes).indexOf(median(l.local.map((r) => r.bytes)))];
    const keys = [...new Set([...Object.keys(plain.split), ...Object.keys(l.gz.split)])];
    console.log(`\n${leName(l)}, first query by manifest file: bytes sent (requests), plain host / gzip host; `
      + 'slow link (median run): request start after typing');
    console.log('| file | plain host | gzip host | slow link: first request at |');
    console.log('|---|---:|---:|---:|');
    const cell = (s) => (s ? `${s.bytes.toLocaleString('en')} (${s.n})` : '–');
    for (const k of keys) {
      console.log(`| ${k} | ${cell(plain.split[k])} | ${cell(l.gz.split[k])} | ${m.sched[k] == null ? '–' : sec(m.sched[k])} |`);
    }
    const total = (split) => ({ bytes: Object.values(split).reduce((s, x) => s + x.bytes, 0), n: Object.values(split).reduce((s, x) => s + x.n, 0) });
    console.log(`| all | ${cell(total(plain.split))} | ${cell(total(l.gz.split))} | |`);
  }

  if (process.env.DEBUG) {
    for (const [qs, tag, pr, lr, cr] of [[clean, 'clean', pf.clean, les[0].clean, cli.clean], [typos, 'typos', pf.typos, les[0].typos, cli.typos]]) {
      if (!qs) continue;
      const rank = (urls, q) => [...new Set(urls.map(pageKey))].slice(0, 10).findIndex((p) => q.relevant.includes(p)) + 1;
      const top = (urls) => [...new Set(urls.map(pageKey))].slice(0, 5).join(' ');
      console.log(`\nDEBUG ${tag}: rank Pagefind, widget, CLI (0: not in the top 10)`);
      qs.forEach((q, i) => console.log(`${rank(pr[i], q)}\t${rank(lr[i], q)}\t${rank(cr[i], q)}\t${q.kind}\t${q.query}\tPF: ${top(pr[i])}\tLE: ${top(lr[i])}`));
    }
  }
} finally {
  if (browser) await browser.close().catch(() => {});
  if (server) { server.closeAllConnections(); server.close(); }
  for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
}
