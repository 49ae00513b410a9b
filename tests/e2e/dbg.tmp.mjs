import { chromium } from 'playwright-core';
import http from 'node:http'; import fs from 'node:fs'; import path from 'node:path';
const site = '/tmp/bk';
fs.writeFileSync(path.join(site, 'dbg.html'), '<html><body><script type="module" src="/lightembed/lightembed-ui.js"></script><lightembed-search></lightembed-search></body></html>');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = http.createServer((req, res) => { const p = path.join(site, decodeURIComponent(new URL(req.url, 'http://x').pathname)); if (!fs.existsSync(p)) { res.writeHead(404).end(); return; } res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' }); res.end(fs.readFileSync(p)); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await b.newPage();
page.on('worker', (w) => w.on('console', (m) => console.log('worker', m.text())));
await page.goto(`http://127.0.0.1:${server.address().port}/dbg.html`);
await page.evaluate(() => { const el = document.querySelector('lightembed-search'); const orig = el.message.bind(el); el.message = (m) => { if (m.type === 'results') console.log(JSON.stringify({ ms: m.ms, fetched: m.fetched, timing: m.timing })); orig(m); }; });
page.on('console', (m) => console.log('page', m.text()));
const q = page.locator('[data-testid="lightembed-query"]');
await q.focus();
for (const t of ['read a file', 'ownership', 'borrowing rules', 'what is a trait object', 'match on an enum', 'cargo workspaces']) { await q.fill(t); await page.waitForTimeout(1500); }
await b.close(); server.close();
