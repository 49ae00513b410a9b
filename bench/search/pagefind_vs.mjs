// Side by side: Pagefind 1.6 and `lightembed site` on the same built site. Both tools index the
// same folder with their defaults; both are searched in headless Chromium from their own bundle
// (Pagefind: its JS API; lightembed: the <lightembed-search> widget for the timings and bytes, and
// `lightembed search` on the same bundle folder for the rankings — the npm package's tests show
// the two rank identically). Sets (SET=…):
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
//
//   python3 bench/search/make_git_set.py      # SET=git only
//   (cd bench/search && npm install)          # pagefind 1.6.0 (ships its binary through npm)
//   js/build.sh && cargo build --release -p lightembed-cli
//   SET=book node bench/search/pagefind_vs.mjs   # prints a Markdown table
//
// Figures: index time, bundle bytes, first-query bytes (gzip -9 of every file fetched, as a
// server would send it) and requests, time to first results (cold), warm query time, and
// success@1 / success@10 / MRR@10 at page level (a hit on any relevant page counts), per kind of
// question and overall.

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
const bin = path.join(root, 'target', 'release', 'lightembed');
const pagefindBin = path.join(here, 'node_modules', '.bin', 'pagefind');
const SET = process.env.SET || 'git';
const SETS = {
  git: { src: path.join(here, 'data', 'git-html'), page: 'git-commit.html', pfPage: 'git-add.html',
    first: 'Use binary search to find the commit that introduced a bug', warm: 'Show changes between commits',
    questions: () => fs.readFileSync(path.join(here, 'data', 'git.jsonl'), 'utf8').split('\n').filter(Boolean)
      .map((l) => JSON.parse(l)).map((q) => ({ query: q.query, relevant: [q.id], kind: 'mechanical' })) },
  book: { src: '/usr/share/doc/rust-doc/html/book', remove: ['print.html'], page: 'ch01-01-installation.html',
    first: 'how do I read a file line by line', warm: 'ownership and borrowing',
    questions: () => readQuestions('book') },
  python: { src: '/usr/share/doc/python3.11/html', page: 'tutorial/index.html',
    first: 'how do I read a file line by line', warm: 'json.dumps indent',
    questions: () => readQuestions('python') },
  // The same sites and questions with one typo per question (bench/search/add_typos.py).
  'book-typos': { src: '/usr/share/doc/rust-doc/html/book', remove: ['print.html'], page: 'ch01-01-installation.html',
    first: 'how do I read a file line by line', warm: 'ownership and borrowing',
    questions: () => readQuestions('book-typos') },
  'python-typos': { src: '/usr/share/doc/python3.11/html', page: 'tutorial/index.html',
    first: 'how do I read a file line by line', warm: 'json.dumps indent',
    questions: () => readQuestions('python-typos') },
  // A big site: real HTML docs of several Debian packages, one folder each
  // (bench/search/make_big_site.sh), with bench/search/make_big_set.py's mechanical questions.
  big: { src: path.join(here, 'data', 'big-site'), page: 'openjdk-17-doc/api/index.html',
    first: 'how do I read a file line by line', warm: 'HashMap computeIfAbsent',
    questions: () => readQuestions('big') },
};
function readQuestions(name) {
  return fs.readFileSync(path.join(here, 'questions', `${name}.jsonl`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
const set = SETS[SET];
if (!set) throw new Error(`SET=${SET}: expected one of ${Object.keys(SETS).join(', ')}`);
const queries = set.questions();
// A page URL → its path relative to the site root, as the questions name pages.
const pageKey = (u) => {
  let p = decodeURI(u.split('#')[0].replace(/^https?:\/\/[^/]+/, '').replace(/^\//, ''));
  if (p === '' || p.endsWith('/')) p += 'index.html';
  // The Rust book folder also holds earlier editions' copies of the chapters
  // (`2018-edition/ch15-04-rc.html`): the same chapter, so the same page for judging.
  if (SET.startsWith('book')) p = p.replace(/^(2018-edition|second-edition)\//, '');
  return p;
};

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'pf-vs-'));
fs.cpSync(set.src, site, { recursive: true, dereference: true });
for (const f of set.remove || []) fs.rmSync(path.join(site, f), { force: true });
const timed = (f) => { const t = process.hrtime.bigint(); f(); return Number(process.hrtime.bigint() - t) / 1e9; };
const pfTime = timed(() => execFileSync(pagefindBin, ['--site', site], { stdio: 'ignore' }));
// SITE_ARGS: extra `lightembed site` arguments, e.g. SITE_ARGS=--prune
const siteArgs = (process.env.SITE_ARGS || '').split(' ').filter(Boolean);
const leTime = timed(() => execFileSync(bin, ['site', '--site', site, '--quiet', ...siteArgs], { stdio: 'ignore' }));
const dirBytes = (d) => fs.readdirSync(d, { recursive: true }).map((f) => path.join(d, f))
  .filter((p) => fs.statSync(p).isFile()).reduce((s, p) => s + fs.statSync(p).size, 0);

// The widget on one page, for the lightembed timings.
const page1 = path.join(site, set.page);
const html = fs.readFileSync(page1, 'utf8');
const at = html.indexOf('>', html.indexOf('<body')) + 1;
fs.writeFileSync(page1, html.slice(0, at) + '<link rel="stylesheet" href="/lightembed/lightembed-ui.css">'
  + '<script type="module" src="/lightembed/lightembed-ui.js"></script><lightembed-search></lightembed-search>' + html.slice(at));

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css' };
let log = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = path.join(site, decodeURIComponent(url.pathname));
  if (!p.startsWith(site) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404).end(); return; }
  const body = fs.readFileSync(p);
  log.push({ path: url.pathname, gzip: zlib.gzipSync(body, { level: 9 }).length });
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function fresh() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pf-vs-profile-'));
  const ctx = await chromium.launchPersistentContext(dir, { executablePath: '/usr/bin/chromium', headless: true, args });
  return { ctx, page: ctx.pages()[0] || await ctx.newPage() };
}
const firstQuery = set.first;
const warmQuery = set.warm;

// Pagefind: cold first query, warm query, then every query's top 10 pages.
const pf = await (async () => {
  const { ctx, page } = await fresh();
  await page.goto(`${base}${set.pfPage || set.page}`);
  log = [];
  const cold = await page.evaluate(async (q) => {
    const t = performance.now();
    const pagefind = await import('/pagefind/pagefind.js');
    const r = await pagefind.search(q);
    await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
    return performance.now() - t;
  }, firstQuery);
  const first = { bytes: log.reduce((s, r) => s + r.gzip, 0), requests: log.length };
  const warm = await page.evaluate(async (q) => {
    const pagefind = await import('/pagefind/pagefind.js');
    const t = performance.now();
    const r = await pagefind.search(q);
    await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
    return performance.now() - t;
  }, warmQuery);
  const ranked = await page.evaluate(async (qs) => {
    const pagefind = await import('/pagefind/pagefind.js');
    const out = [];
    for (const q of qs) {
      const r = await pagefind.search(q.query);
      const data = await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
      out.push(data.map((d) => d.url));
    }
    return out;
  }, queries);
  await ctx.close();
  return { cold, warm, first, ranked };
})();

// lightembed: the widget's cold first query and a warm one; rankings from the CLI on the bundle.
const le = await (async () => {
  const { ctx, page } = await fresh();
  await page.goto(`${base}${set.page}`);
  log = [];
  const input = page.locator('[data-testid="lightembed-query"]');
  const t0 = Date.now();
  await input.focus();
  await input.fill(firstQuery);
  await page.waitForSelector('[data-testid="lightembed-result"]', { timeout: 120_000 });
  const cold = Date.now() - t0;
  const first = { bytes: log.reduce((s, r) => s + r.gzip, 0), requests: log.length };
  await input.fill(warmQuery);
  await page.waitForFunction((q) => {
    const el = document.querySelector('lightembed-search');
    return el.querySelector('input').value === q && el.dataset.ranking !== 'keyword'
      && el.querySelector('[data-testid="lightembed-status"]').textContent.includes('ms');
  }, warmQuery, { timeout: 60_000 });
  const warm = Number(await page.evaluate(() => document.querySelector('lightembed-search').dataset.lastQueryMs));
  await ctx.close();
  const qfile = path.join(site, '..', `${path.basename(site)}-queries.jsonl`);
  fs.writeFileSync(qfile, queries.map((q, i) => JSON.stringify({ id: i, query: q.query })).join('\n') + '\n');
  const out = execFileSync(bin, ['search', '--index', path.join(site, 'lightembed'),
    '-k', '30', '--jsonl', qfile], { encoding: 'utf8', maxBuffer: 256 << 20 });
  fs.rmSync(qfile);
  const ranked = out.split('\n').filter(Boolean).map((l) => JSON.parse(l).hits.map((h) => h.url));
  return { cold, warm, first, ranked };
})();
server.close();

// Page-level metrics of ranked URL lists (duplicates of a page collapse to its first rank) over
// the questions `which` selects.
function quality(ranked, which = () => true) {
  let s1 = 0; let s10 = 0; let mrr = 0; let empty = 0; let n = 0;
  ranked.forEach((urls, i) => {
    if (!which(queries[i])) return;
    n++;
    const pages = [];
    for (const u of urls) { const p = pageKey(u); if (!pages.includes(p)) pages.push(p); }
    const top = pages.slice(0, 10);
    const r = top.findIndex((p) => queries[i].relevant.includes(p));
    if (urls.length === 0) empty++;
    if (r === 0) s1++;
    if (r >= 0) { s10++; mrr += 1 / (r + 1); }
  });
  return { s1: s1 / n, s10: s10 / n, mrr: mrr / n, empty, n };
}
const rows = [['Pagefind 1.6.0', pfTime, dirBytes(path.join(site, 'pagefind')), pf],
  [`lightembed site${siteArgs.length ? ` ${siteArgs.join(' ')}` : ''}`, leTime, dirBytes(path.join(site, 'lightembed')), le]];
const pages = fs.readdirSync(site, { recursive: true }).filter((f) => /\.html?$/.test(f) && !f.startsWith('pagefind') && !f.startsWith('lightembed')).length;
console.log(`SET=${SET}: ${pages} pages, ${queries.length} questions, page level; headless Chromium on localhost.\n`);
console.log('| tool | index time | bundle on disk | first query: gzip bytes / requests | cold: first results | warm query | no results |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, t, bytes, r] of rows) {
  const q = quality(r.ranked);
  console.log(`| ${name} | ${t.toFixed(1)} s | ${(bytes / 1e6).toFixed(2)} MB | ${(r.first.bytes / 1e6).toFixed(2)} MB / ${r.first.requests} | ${Math.round(r.cold)} ms | ${r.warm.toFixed(1)} ms | ${q.empty} |`);
}
if (process.env.DEBUG) {
  const rank = (urls, q) => {
    const pages = [];
    for (const u of urls) { const p = pageKey(u); if (!pages.includes(p)) pages.push(p); }
    return pages.slice(0, 10).findIndex((p) => q.relevant.includes(p)) + 1;
  };
  const top = (urls) => [...new Set(urls.map(pageKey))].slice(0, 5).join(' ');
  queries.forEach((q, i) => console.log(`${rank(pf.ranked[i], q)}\t${rank(le.ranked[i], q)}\t${q.kind}\t${q.query}\tPF: ${top(pf.ranked[i])}\tLE: ${top(le.ranked[i])}`));
}
const kinds = [...new Set(queries.map((q) => q.kind))];
console.log('\n| tool | questions | n | success@1 | success@10 | MRR@10 |');
console.log('|---|---|---|---|---|---|');
for (const [name, , , r] of rows) {
  for (const kind of [...kinds, ...(kinds.length > 1 ? ['all'] : [])]) {
    const q = quality(r.ranked, (x) => kind === 'all' || x.kind === kind);
    console.log(`| ${name} | ${kind} | ${q.n} | ${q.s1.toFixed(3)} | ${q.s10.toFixed(3)} | ${q.mrr.toFixed(3)} |`);
  }
}
fs.rmSync(site, { recursive: true, force: true });
