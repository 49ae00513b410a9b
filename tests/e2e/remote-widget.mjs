// Drives <lightembed-search serve="…"> (remote mode) in headless Chromium and reports what it
// showed, as JSON on stdout; python/tests/scale/test_widget_remote.py starts the site, PostgreSQL
// and `lightembed serve`, runs this, and checks the report against the server's own answers.
//
//   node tests/e2e/remote-widget.mjs CONFIG.json
//
// CONFIG: {"pages": {"main": URL, "refused": URL, "down": URL, "model": URL}, "queries": [text…],
//          "errorQueries": [text…]} — `main` holds an element whose server answers; each query
// is typed there and its listed results read back; each of `errorQueries` is typed there too and
// the status line read once it shows an error. On `refused` (a server whose passages come from
// another model), `down` (a server that is not running) and `model` (optional: a bundle of
// another model than the server's passages) the first query is typed and the status line read. Report: {"requests": [{method, url}…] (every request the pages made),
// "results": {query: {status, pages: [{title, href, sections: [{href, heading, excerpt, marks}]}]}},
// "errors": {query or page name: status text}, "injected": elements of kinds the server's
// text must never create (img, script, b) found in the results, "pwned": window.__pwned on each page}.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const STEP_MS = Number(process.env.E2E_TIMEOUT_S || 120) * 1000;
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-remote-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  viewport: { width: 1100, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const report = { requests: [], results: {}, errors: {}, injected: 0, pwned: {} };
context.on('request', (r) => report.requests.push({ method: r.method(), url: r.url() }));

// Types `q` into the box of `page` and waits until the element has listed results of `q` (or says
// there are none), or shows an error when `error` is set.
async function ask(page, q, error = false) {
  await page.fill('[data-testid="lightembed-query"]', q);
  await page.waitForFunction(([text, wantError]) => {
    const w = document.querySelector('lightembed-search');
    const status = w.querySelector('[data-testid="lightembed-status"]');
    if (wantError) return status.classList.contains('lightembed-error');
    return w.shown === text && !status.classList.contains('lightembed-error');
  }, [q, error], { timeout: STEP_MS });
  return page.textContent('[data-testid="lightembed-status"]');
}

// The listed results, read from the DOM as a visitor sees them.
function listed(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="lightembed-result"]')].map((li) => ({
    title: li.querySelector('.lightembed-page-title').textContent,
    href: li.querySelector('.lightembed-page-title').href,
    sections: [...li.querySelectorAll('.lightembed-sections a')].map((a) => ({
      href: a.href,
      heading: a.querySelector('.lightembed-heading')?.textContent ?? '',
      excerpt: a.querySelector('.lightembed-excerpt').textContent,
      marks: [...a.querySelectorAll('mark')].map((m) => m.textContent),
    })),
  })));
}

async function open(url) {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error(`[page] ${m.text()}`); });
  await page.goto(url);
  await page.focus('[data-testid="lightembed-query"]');
  return page;
}

try {
  const main = await open(config.pages.main);
  await main.waitForSelector('lightembed-search[data-ready="true"]', { timeout: STEP_MS });
  for (const q of config.queries) {
    const status = await ask(main, q);
    report.results[q] = { status, pages: await listed(main) };
    report.injected += await main.evaluate(() => document.querySelectorAll('.lightembed-results :is(img, script, b)').length);
  }
  for (const q of config.errorQueries || []) {
    report.errors[q] = await ask(main, q, true);
    report.results[q] = { status: report.errors[q], pages: await listed(main) };
  }
  report.pwned.main = await main.evaluate(() => window.__pwned ?? null);
  for (const name of ['refused', 'down', 'model'].filter((n) => config.pages[n])) {
    const page = await open(config.pages[name]);
    report.errors[name] = await ask(page, config.queries[0], true);
    report.pwned[name] = await page.evaluate(() => window.__pwned ?? null);
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
