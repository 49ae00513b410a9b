// Drives the browser app (trunk-built dist/) in remote mode in headless Chromium and reports what
// it showed, as JSON on stdout; python/tests/scale/test_app_remote.py serves dist/, starts
// PostgreSQL and `lightembed serve`, runs this, and checks the report against the servers' own
// answers.
//
//   node tests/e2e/remote-app.mjs CONFIG.json
//
// CONFIG: {"app": URL of dist/'s index.html with its query (the model forced, ?nostore),
//          "serve": {"main": URL, "refused": URL, "down": URL}, "queries": [text…],
//          "errorQueries": [text…]}
//   1. the app opened with `&serve=<main>`: each query typed, its results read back (ids, titles,
//      links, excerpts, marked words); each of `errorQueries` typed, the error in the results area
//      read;
//   2. the setting: "Remove" (the address bar loses ?serve=, the stored address is gone, the page
//      searches its own empty index), then the `refused` server typed into the setting and "Use":
//      a query's error read; a reload without ?serve= keeps that server (stored); then the `down`
//      server: what the setting and a query say.
// Report: {"requests": [{method, url}…], "results": {query: {latency, hits: [{id, title, href,
// snippet, marks}]}}, "errors": {query or server name: text}, "setting": {…}, "injected": elements
// of kinds the server's text must never create (img, script, b) found in the results,
// "pwned": window.__pwned}.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const STEP_MS = Number(process.env.E2E_TIMEOUT_S || 180) * 1000;
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lightembed-app-remote-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  viewport: { width: 1100, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const report = { requests: [], results: {}, errors: {}, setting: {}, injected: 0, pwned: null };
context.on('request', (r) => report.requests.push({ method: r.method(), url: r.url() }));
const sel = (id) => `[data-testid="${id}"]`;

// Waits until the model is ready and the server has said what it holds (or why it cannot).
async function ready(page) {
  await page.waitForSelector(`${sel('model-status')}.ready`, { timeout: STEP_MS });
  await page.waitForFunction(() => {
    const t = document.querySelector('[data-testid="remote-info"]')?.textContent ?? '';
    return t && !t.includes('asking the server');
  }, null, { timeout: STEP_MS });
  return page.textContent(sel('remote-status'));
}

// Types `q` and waits for its results (the latency line names the query) or, with `error`, for
// the error in the results area.
async function ask(page, q, error = false) {
  await page.fill(sel('query'), q);
  await page.waitForFunction(([text, wantError]) => {
    const err = document.querySelector('[data-testid="remote-error"]');
    if (wantError) return !!err;
    return !err && document.querySelector('[data-testid="latency"]').dataset.query === text;
  }, [q, error], { timeout: STEP_MS });
}

// The results as shown.
function listed(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="result"]')].map((li) => ({
    id: li.dataset.id,
    title: li.querySelector('.title bdi').textContent,
    href: li.querySelector('.title a')?.href ?? null,
    snippet: li.querySelector('[data-testid="snippet"]').textContent,
    marks: [...li.querySelectorAll('[data-testid="snippet"] mark')].map((m) => m.textContent),
  })));
}

const storedServe = (page) => page.evaluate(() => localStorage.getItem('lightembed.serve'));

try {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error(`[page] ${m.text()}`); });
  await page.goto(`${config.app}&serve=${encodeURIComponent(config.serve.main)}`);
  report.setting.status = await ready(page);
  report.setting.note = await page.textContent(sel('remote-note'));
  report.setting.sub = await page.textContent('p.sub');
  report.setting.stored = await storedServe(page);
  report.setting.modeDisabled = await page.isDisabled(sel('search-mode'));
  for (const q of config.queries) {
    await ask(page, q);
    report.results[q] = { latency: await page.textContent(sel('latency')), hits: await listed(page) };
    report.injected += await page.evaluate(() => document.querySelectorAll('.results :is(img, script, b)').length);
  }
  await page.screenshot({ path: process.env.SHOT || path.join(os.tmpdir(), 'app-remote-results.png'), fullPage: false });
  for (const q of config.errorQueries || []) {
    await ask(page, q, true);
    report.errors[q] = await page.textContent(sel('remote-error'));
    report.results[q] = { latency: await page.textContent(sel('latency')), hits: await listed(page) };
  }
  report.pwned = await page.evaluate(() => window.__pwned ?? null);

  // The setting: remove, then another server typed in.
  await page.click(sel('remote-remove'));
  await page.waitForSelector(sel('remote-input'), { timeout: STEP_MS });
  report.setting.afterRemove = {
    search: await page.evaluate(() => location.search),
    stored: await storedServe(page),
    note: await page.locator(sel('remote-note')).count(),
    hits: (await listed(page)).length,
  };
  for (const name of ['refused', 'down']) {
    // An empty box: the new server's first answer is to the query typed below.
    await page.fill(sel('query'), '');
    await page.fill(sel('remote-input'), config.serve[name]);
    await page.click(sel('remote-use'));
    report.setting[name] = { status: await ready(page), stored: await storedServe(page) };
    await ask(page, `${config.queries[0]} (${name})`, true);
    report.errors[name] = await page.textContent(sel('remote-error'));
    if (name === 'refused') {
      // Stored: a visit without ?serve= searches the same server.
      await page.goto(config.app);
      report.setting.reloaded = await ready(page);
      await ask(page, config.queries[0], true);
      report.errors.reloaded = await page.textContent(sel('remote-error'));
    }
    await page.click(sel('remote-remove'));
    await page.waitForSelector(sel('remote-input'), { timeout: STEP_MS });
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
