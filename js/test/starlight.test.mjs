// lightembed/starlight on a real Starlight site built by `astro build` (base "/docs"): what
// js/test-starlight.sh sets up (npm install of astro, @astrojs/starlight and the packed lightembed;
// the site; the build) and then runs this file on, with LIGHTEMBED_STARLIGHT_SITE=<the site>.
// Without it every test here is reported skipped, saying so (it needs the npm registry).
//
//   bash js/test-starlight.sh

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const siteDir = process.env.LIGHTEMBED_STARLIGHT_SITE;
const skip = siteDir ? false : "needs a built Starlight site: run bash js/test-starlight.sh (npm registry)";
const dist = siteDir ? path.join(siteDir, "dist") : "";
const MOUNT = "/docs/";
const STEP_MS = Number(process.env.E2E_TIMEOUT_S || 120) * 1000;
// The site's pages (src/content/docs) as Starlight writes them.
const PAGES = ["index.html", "guides/watering/index.html", "guides/soil/index.html"];

let server;
let userDataDir;
let base;
let context;
let page;
const pageErrors = [];
const requests = [];

before(async () => {
  if (skip) return;
  const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css",
    ".wasm": "application/wasm", ".json": "application/json", ".svg": "image/svg+xml" };
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (!url.pathname.startsWith(MOUNT)) { res.writeHead(404).end(); return; }
    let p = path.normalize(path.join(dist, decodeURIComponent(url.pathname.slice(MOUNT.length))));
    if (!p.startsWith(dist)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, "index.html");
    if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
    requests.push(url.pathname);
    res.writeHead(200, { "content-type": TYPES[path.extname(p)] || "application/octet-stream" });
    res.end(fs.readFileSync(p));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}${MOUNT}`;
  const { chromium } = createRequire(path.join(root, "tests", "e2e", "package.json"))("playwright-core");
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lightembed-starlight-profile-"));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
    viewport: { width: 1100, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") pageErrors.push(`${m.text()} (${m.location()?.url || ""})`); });
});

after(async () => {
  if (context) await context.close();
  if (server) server.close();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
});

const dialog = () => page.locator("lightembed-starlight dialog");
const input = () => page.locator('lightembed-starlight [data-testid="lightembed-query"]');
const isOpen = () => dialog().evaluate((d) => d.open);

test("astro build wrote dist/lightembed/ for the site's pages, and no dist/pagefind/", { skip }, () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(dist, "lightembed", "manifest.json"), "utf8"));
  for (const key of ["core", "fragments", "model", "wasm"]) {
    assert.ok(fs.existsSync(path.join(dist, "lightembed", manifest.files[key])), `${key}: ${manifest.files[key]}`);
  }
  for (const f of ["lightembed-ui.js", "lightembed-ui.css", "lightembed-worker.js"]) {
    assert.ok(fs.existsSync(path.join(dist, "lightembed", f)), f);
  }
  // The three content pages (404.html is left out).
  assert.ok(fs.existsSync(path.join(dist, "404.html")), "Starlight wrote a 404 page");
  assert.equal(manifest.index.pages, PAGES.length, `pages in the index: ${manifest.index.pages}`);
  assert.ok(!fs.existsSync(path.join(dist, "pagefind")), "dist/pagefind/ was written");
});

test("every page has the search button and loads the widget from /docs/lightembed/", { skip }, () => {
  for (const p of PAGES) {
    const html = fs.readFileSync(path.join(dist, p), "utf8");
    assert.match(html, /<lightembed-starlight[\s>]/, `${p}: the component`);
    assert.match(html, /<button[^>]*data-open-modal/, `${p}: the button`);
    assert.match(html, /<lightembed-search[^>]*shortcut="off"/, `${p}: the widget in the dialog`);
    assert.ok(html.includes('src="/docs/lightembed/lightembed-ui.js"'), `${p}: the widget's script under the base`);
    assert.ok(html.includes('href="/docs/lightembed/lightembed-ui.css"'), `${p}: the widget's style under the base`);
    assert.doesNotMatch(html, /\/pagefind\/|pagefind-ui/, `${p}: Pagefind's UI`);
  }
});

test("`lightembed search` on the bundle finds each page (the installed package's command)", { skip }, () => {
  const cli = path.join(siteDir, "node_modules", ".bin", "lightembed");
  const search = (q) => JSON.parse(execFileSync(cli, ["search", "--index", path.join(dist, "lightembed"), "--json", "-k", "3", q],
    { encoding: "utf8" }));
  const top = (q) => {
    const hits = search(q);
    const list = Array.isArray(hits) ? hits : hits.results ?? hits.hits;
    assert.ok(Array.isArray(list) && list.length > 0, `no hits for "${q}": ${JSON.stringify(hits).slice(0, 200)}`);
    return list[0].url;
  };
  assert.match(top("how often should I water tomato plants"), /^guides\/watering\//);
  assert.match(top("compost and worms"), /^guides\/soil\//);
  assert.match(top("how much sun do the beds need"), /^(index\.html)?(#.*)?$/);
});

// Waits until the box shows the final (hybrid, not keyword-only) results of the text now in it
// (the widget's `shown` query).
async function settled() {
  await page.waitForFunction(() => {
    const w = document.querySelector("lightembed-starlight lightembed-search");
    const q = w.querySelector("input").value.trim();
    return q && w.shown === q && w.dataset.lastExcerptMs && w.dataset.ranking !== "keyword";
  }, null, { timeout: STEP_MS });
  return page.locator('lightembed-starlight [data-testid="lightembed-result"]').evaluateAll(
    (els) => els.map((e) => e.querySelector("a").href));
}
const focused = () => page.waitForFunction(
  () => document.activeElement?.matches?.('lightembed-starlight [data-testid="lightembed-query"]'), null, { timeout: STEP_MS });

async function open(p) {
  await page.goto(`${base}${p}`);
  await page.waitForFunction(() => {
    const b = document.querySelector("lightembed-starlight button[data-open-modal]");
    return b && !b.disabled;
  }, null, { timeout: STEP_MS });
}

test("Chromium: Ctrl-K opens the dialog, a question gets results under /docs/, Enter follows one", { skip }, async () => {
  await open("guides/soil/");
  assert.ok(!(await isOpen()), "the dialog starts closed");
  assert.ok(!requests.some((r) => /\/lightembed\/.*\.(bin|wasm)$/.test(r)), "nothing heavy fetched before the dialog opens");
  await page.keyboard.press("Control+k");
  await focused();
  assert.ok(await isOpen(), "Ctrl-K opens the dialog");
  await page.keyboard.type("how often should I water tomato plants");
  const hrefs = await settled();
  assert.ok(hrefs.length >= 1, "results");
  assert.ok(hrefs.every((h) => h.startsWith(base)), `links under the base: ${hrefs}`);
  assert.ok(hrefs[0].startsWith(`${base}guides/watering/`), `top result: ${hrefs}`);
  // The results list sits in the dialog, in flow (not a drop-down over the page).
  const pos = await page.locator("lightembed-starlight .lightembed-results").evaluate((e) => getComputedStyle(e).position);
  assert.equal(pos, "static");
  fs.mkdirSync(path.join(root, "target", "e2e"), { recursive: true });
  await page.screenshot({ path: path.join(root, "target", "e2e", "starlight-results.png") });
  await Promise.all([page.waitForURL((u) => u.href.startsWith(`${base}guides/watering/`), { timeout: STEP_MS }), page.keyboard.press("Enter")]);
  const hash = decodeURIComponent(new URL(page.url()).hash.slice(1));
  if (hash) assert.ok(await page.evaluate((id) => Boolean(document.getElementById(id)), hash), `#${hash} exists`);
  assert.ok(!(await isOpen()), "a new page starts with the dialog closed");
});

test("Chromium: `/` opens the dialog, not while typing in a field; Esc closes it at once", { skip }, async () => {
  await open("guides/watering/");
  await page.keyboard.press("/");
  await page.waitForFunction(() => document.querySelector("lightembed-starlight dialog").open, null, { timeout: STEP_MS });
  await focused();
  await page.keyboard.type("drip line");
  assert.ok((await settled()).length > 0, "results");
  await page.keyboard.press("Escape");
  assert.ok(!(await isOpen()), "one Esc closes the dialog, results listed or not");
  // A field of the page: `/` is typed there.
  await page.evaluate(() => {
    const f = document.createElement("input");
    f.id = "other-field";
    document.querySelector("main").prepend(f);
  });
  await page.locator("#other-field").focus();
  await page.keyboard.type("a/b");
  assert.equal(await page.locator("#other-field").inputValue(), "a/b");
  assert.ok(!(await isOpen()), "`/` in another field does not open the dialog");
  // The button opens it too, with the last query still in the box.
  await page.locator("lightembed-starlight button[data-open-modal]").click();
  await page.waitForFunction(() => document.querySelector("lightembed-starlight dialog").open, null, { timeout: STEP_MS });
  assert.equal(await input().inputValue(), "drip line");
  await page.keyboard.press("Control+k");
  assert.ok(!(await isOpen()), "Ctrl-K again closes it");
});

test("Chromium: the box takes Starlight's colours in its dark and light themes (data-theme)", { skip }, async () => {
  await open("");
  const colours = async (theme) => {
    await page.evaluate((t) => { document.documentElement.dataset.theme = t; }, theme);
    if (!(await isOpen())) await page.keyboard.press("Control+k");
    return page.evaluate(() => {
      const probe = document.createElement("div");
      probe.style.background = "var(--sl-color-black)";
      probe.style.color = "var(--sl-color-white)";
      document.body.append(probe);
      const want = { bg: getComputedStyle(probe).backgroundColor, fg: getComputedStyle(probe).color };
      probe.remove();
      const s = getComputedStyle(document.querySelector('lightembed-starlight [data-testid="lightembed-query"]'));
      return { want, bg: s.backgroundColor, fg: s.color };
    });
  };
  const dark = await colours("dark");
  const light = await colours("light");
  assert.equal(dark.bg, dark.want.bg, "dark: the box's background is --sl-color-black");
  assert.equal(dark.fg, dark.want.fg, "dark: its text is --sl-color-white");
  assert.equal(light.bg, light.want.bg, "light: the box's background is --sl-color-black");
  assert.equal(light.fg, light.want.fg, "light: its text is --sl-color-white");
  assert.notEqual(dark.bg, light.bg, `the two themes differ: ${dark.bg}`);
  await page.keyboard.press("Escape");
});

test("no errors on the pages", { skip }, () => {
  assert.deepEqual(pageErrors, []);
});
