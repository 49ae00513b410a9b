// A visitor on a site that a generator built with lightembed (Sphinx with lightembed.sphinx, Hugo
// with the js/README recipe), in headless Chromium:
//   1. a static server (`python3 -m http.server`, started here, stopped by its pid) serves the
//      folder --serve on 127.0.0.1;
//   2. open --page, click the search box, type --query;
//   3. the first result is --expect (a path under the server's root) and its title shows
//      --title as text; the page is screenshotted to target/e2e/--shot;
//   4. click that result: the browser lands on --expect (and on an anchor that exists there),
//      a page with an <h1> that says --title;
//   5. no errors in the page's console.
//
//   node tests/e2e/generator.spec.mjs --serve DIR --page docs/a.html --query "…" \
//        --expect docs/b.html --title "B" --shot NAME.png [--python PYTHON]
// (js/test-recipes.sh and tests/e2e/sphinx-site.sh call it; PYTHON defaults to python3.)

import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = path.join(root, 'target', 'e2e');
const { values: opt } = parseArgs({
  options: {
    serve: { type: 'string' }, page: { type: 'string' }, query: { type: 'string' },
    expect: { type: 'string' }, title: { type: 'string' }, shot: { type: 'string' },
    python: { type: 'string', default: 'python3' },
  },
});
for (const k of ['serve', 'page', 'query', 'expect', 'title', 'shot']) {
  if (!opt[k]) { console.error(`generator.spec.mjs: --${k} is required`); process.exit(2); }
}
const STEP_MS = Number(process.env.E2E_TIMEOUT_S || 120) * 1000;
const name = path.basename(opt.shot, '.png');

// 1. The static server, as a site's author tries a build: python3 -m http.server on port 0.
const server = spawn(opt.python, ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', path.resolve(opt.serve)],
  { stdio: ['ignore', 'pipe', 'pipe'] });
const stopServer = () => { if (server.exitCode === null && server.signalCode === null) process.kill(server.pid, 'SIGTERM'); };
process.on('exit', stopServer);
const serverLog = [];
server.stderr.on('data', (d) => serverLog.push(String(d)));
const port = await new Promise((resolve, reject) => {
  let seen = '';
  const timer = setTimeout(() => reject(new Error(`no port from the server: ${seen}${serverLog.join('')}`)), 20000);
  server.stdout.on('data', (d) => {
    seen += d;
    const m = /port (\d+)/.exec(seen);
    if (m) { clearTimeout(timer); resolve(Number(m[1])); }
  });
  server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the server exited (${code}): ${serverLog.join('')}`)); });
});
const origin = `http://127.0.0.1:${port}/`;
console.log(`     ${opt.python} -m http.server: pid ${server.pid}, ${origin} serves ${opt.serve}`);

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lightembed-${name}-profile-`));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  viewport: { width: 1100, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] || await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));
// The browser asks for /favicon.ico on its own; a site without one is no error of the page's.
page.on('console', (m) => {
  const where = m.location()?.url || '';
  if (m.type() === 'error' && !where.endsWith('/favicon.ico')) pageErrors.push(`${m.text()} (${where})`);
});

let failed = 0;
async function step(title, fn) {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${title} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${title}: ${e.message.split('\n')[0]}`);
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, `FAIL-${name}.png`) }).catch(() => {});
  }
}
const assert = (c, m) => { if (!c) throw new Error(m); };
const input = () => page.locator('[data-testid="lightembed-query"]');
const expected = new URL(opt.expect, origin);
let first;

try {
  await step(`open ${opt.page}, click the search box, type "${opt.query}": ${opt.expect} first`, async () => {
    await page.goto(new URL(opt.page, origin).href);
    await input().waitFor({ timeout: STEP_MS });
    assert(await input().isVisible(), 'the search box is visible');
    await input().click();
    await page.keyboard.type(opt.query);
    // Settled: the final (hybrid, not keyword-only) results of the text now in the box, with their
    // excerpts (or an error said).
    await page.waitForFunction(() => {
      const w = document.querySelector('lightembed-search');
      const q = w.querySelector('input').value.trim();
      return (q && w.shown === q && w.dataset.lastExcerptMs && w.dataset.ranking !== 'keyword') || w.querySelector('.lightembed-error');
    }, null, { timeout: STEP_MS });
    const error = await page.locator('lightembed-search .lightembed-error').count();
    assert(!error, `the box says: ${error && await page.locator('[data-testid="lightembed-status"]').textContent()}`);
    const results = await page.locator('[data-testid="lightembed-result"]').evaluateAll((els) => els.map((e) => {
      const a = e.querySelector('a.lightembed-page-title');
      return {
        href: a.href, title: a.textContent,
        // Text, never markup: a title or excerpt holds only text (and <mark> for query words).
        markup: [...e.querySelectorAll('.lightembed-page-title *, .lightembed-excerpt *')].filter((n) => n.tagName !== 'MARK').length,
        excerpt: e.querySelector('.lightembed-excerpt')?.textContent || '',
      };
    }));
    assert(results.length >= 1, 'no results');
    const top = results[0];
    const firstUrl = new URL(top.href);
    assert(firstUrl.origin + firstUrl.pathname === expected.href,
      `first result ${top.href}, expected ${expected.href}; all: ${results.map((r) => r.href).join(' | ')}`);
    assert(top.title.includes(opt.title), `first result titled "${top.title}", expected "${opt.title}" in it`);
    assert(top.excerpt.trim().length > 20, `first result's excerpt: "${top.excerpt}"`);
    assert(results.every((r) => r.markup === 0), 'only text (and <mark>) in titles and excerpts');
    // The visitor sees the whole first result: at its top, middle and bottom (within the window)
    // the browser hits the result itself, not a theme's box that clips or covers it.
    const seen = await page.locator('[data-testid="lightembed-result"]').first().evaluate((li) => {
      li.scrollIntoView({ block: 'nearest' });
      const r = li.getBoundingClientRect();
      const bottom = Math.min(r.bottom, window.innerHeight) - 4;
      return [r.top + 4, (r.top + bottom) / 2, bottom].map((y) => {
        const hit = document.elementFromPoint(r.left + 12, y);
        return hit && li.contains(hit) ? 'ok' : `${Math.round(y)}px: ${hit ? hit.tagName.toLowerCase() + (hit.className ? '.' + hit.className : '') : 'nothing'}`;
      });
    });
    assert(seen.every((s) => s === 'ok'), `the first result is hidden at ${seen.filter((s) => s !== 'ok').join(', ')}`);
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, opt.shot) });
    console.log(`     ${results.length} pages; first: "${top.title}" ${firstUrl.pathname}${firstUrl.hash}; screenshot target/e2e/${opt.shot}`);
    first = top;
  });

  await step(`click the first result: the browser lands on ${opt.expect}`, async () => {
    assert(first, 'no right first result (the step before failed)');
    await Promise.all([
      page.waitForURL((u) => u.origin + u.pathname === expected.href, { timeout: STEP_MS }),
      page.locator('[data-testid="lightembed-result"] a.lightembed-page-title').first().click(),
    ]);
    const at = new URL(page.url());
    assert(at.origin + at.pathname === expected.href, `landed on ${page.url()}`);
    const hash = decodeURIComponent(at.hash.slice(1));
    if (hash) assert(await page.evaluate((id) => Boolean(document.getElementById(id)), hash), `#${hash} exists on ${at.pathname}`);
    // A theme may have an <h1> of its own (mdBook's menu bar): one of them is the page's title.
    const h1s = (await page.locator('h1').allTextContents()).map((t) => t.trim());
    const h1 = h1s.find((t) => t.includes(opt.title));
    assert(h1, `the page's <h1>s: ${JSON.stringify(h1s)}`);
    console.log(`     landed on ${at.pathname}${at.hash} ("${h1}")`);
  });

  if (pageErrors.length) { console.log(`FAIL page errors: ${pageErrors.slice(0, 3).join(' | ')}`); failed++; }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  stopServer();
}
console.log(failed ? `${failed} ${name} steps failed` : `all ${name} steps passed`);
process.exit(failed ? 1 : 0);
