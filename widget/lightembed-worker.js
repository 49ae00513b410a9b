// lightembed search worker: owns the model and the index (the `lightembed` wasm package, web
// target), so the page never blocks on embedding or ranking. Messages in: {type: 'init',
// manifest: URL} then {type: 'search', id, query, k}; out: {type: 'progress', what, loaded,
// total}, {type: 'ready', ...}, {type: 'results', id, hits, ms}, {type: 'error', message}.
//
// Files are fetched by their content-hashed names (the manifest lists them) and kept in the Cache
// API, so a second page or a later visit downloads nothing; the model is verified on every load
// (`Model.fromBytes`: its trailing SHA-256 against its contents + every load rule), and that
// SHA-256 must be the one the manifest lists. Works on plain-http origins too (no
// `crypto.subtle` needed; without the Cache API files are fetched on each page). Document text is
// only ever passed on as text.
// The glue is imported with the wasm's hashed name as a version (`?v=`, given by the page from
// the manifest), so a browser never pairs an old cached glue with a new wasm.
const version = new URL(self.location.href).searchParams.get('v') || '';
const glue = import(`./lightembed_wasm.js?v=${encodeURIComponent(version)}`);
let Model;
let SearchIndex;

const CACHE = 'lightembed';
let model = null;
let index = null;

function post(msg) { self.postMessage(msg); }

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
  const wasm = await glue;
  ({ Model, SearchIndex } = wasm);
  await wasm.default({ module_or_path: new URL(manifest.files.wasm, base) });
  const modelUrl = new URL(manifest.files.model, base).href;
  const m = await fetchCached(modelUrl, 'model', cache);
  try {
    model = Model.fromBytes(m.bytes);
    if (model.sha256 !== manifest.model.sha256) {
      throw new Error(`SHA-256 ${model.sha256} is not the ${manifest.model.sha256} the manifest lists`);
    }
  } catch (err) {
    if (cache) await cache.delete(modelUrl);
    throw new Error(`model: ${err.message}`);
  }
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
