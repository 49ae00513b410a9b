// lightembed search worker: owns the model and the index (the `lightembed` wasm package, web
// target), so the page never blocks on embedding or ranking. Messages in: {type: 'init',
// manifest: URL} then {type: 'search', id, query, k}; out: {type: 'progress', what, loaded,
// total}, {type: 'ready', ...}, {type: 'results', id, hits, ms}, {type: 'error', message}.
//
// Files are fetched by their content-hashed names (the manifest lists them) and kept in the Cache
// API, so a second page or a later visit downloads nothing; the model is verified on every load
// (`Model.fromBytes`: trailing SHA-256 + every load rule) and must also match the manifest's
// SHA-256. Document text is only ever passed on as text.
import init, { Model, SearchIndex } from './lightembed_wasm.js';

const CACHE = 'lightembed';
let model = null;
let index = null;

function post(msg) { self.postMessage(msg); }

async function hex(bytes) {
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The bytes at `url` (immutable: its name carries its hash), from the cache when there.
async function fetchCached(url, what, cache) {
  let res = cache ? await cache.match(url) : undefined;
  const fromCache = Boolean(res);
  if (!res) {
    res = await fetch(url);
    if (!res.ok) throw new Error(`${what}: ${url} answered HTTP ${res.status}`);
  }
  const total = Number(res.headers.get('content-length')) || 0;
  const reader = res.clone().body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    post({ type: 'progress', what, loaded, total });
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) { bytes.set(p, at); at += p.length; }
  if (cache && !fromCache) await cache.put(url, res).catch(() => {});
  return { bytes, fromCache };
}

async function start(manifestUrl) {
  const t0 = performance.now();
  const manifest = await (await fetch(manifestUrl, { cache: 'no-cache' })).json();
  const base = new URL('.', new URL(manifestUrl, self.location.href));
  const cache = self.caches ? await self.caches.open(CACHE).catch(() => null) : null;
  const wanted = new Set(Object.values(manifest.files).map((f) => new URL(f, base).href));
  if (cache) {
    // Files of an older build of this site are never asked for again.
    for (const req of await cache.keys()) {
      if (req.url.startsWith(base.href) && !wanted.has(req.url)) await cache.delete(req);
    }
  }
  await init({ module_or_path: new URL(manifest.files.wasm, base) });
  const m = await fetchCached(new URL(manifest.files.model, base).href, 'model', cache);
  const sha = await hex(m.bytes);
  if (sha !== manifest.model.sha256) {
    if (cache) await cache.delete(new URL(manifest.files.model, base).href);
    throw new Error(`model: SHA-256 ${sha} is not the ${manifest.model.sha256} the manifest lists`);
  }
  model = Model.fromBytes(m.bytes);
  const ix = await fetchCached(new URL(manifest.files.index, base).href, 'index', cache);
  index = SearchIndex.fromBytes(ix.bytes);
  index.checkCompatible(model);
  post({
    type: 'ready',
    passages: index.length,
    model: `${model.modelId} v${model.version}`,
    fromCache: { model: m.fromCache, index: ix.fromCache },
    ms: performance.now() - t0,
  });
}

self.onmessage = async (e) => {
  const msg = e.data;
  try {
    if (msg.type === 'init') {
      await start(msg.manifest);
    } else if (msg.type === 'search') {
      if (!index) throw new Error('not ready');
      const t = performance.now();
      const hits = index.search(msg.query, { k: msg.k || 20, mode: 'hybrid', model, excerptChars: 180 });
      post({ type: 'results', id: msg.id, hits, ms: performance.now() - t });
    }
  } catch (err) {
    post({ type: 'error', id: msg.id, message: String(err && err.message ? err.message : err) });
  }
};
