// lightembed search worker: owns the model and the index (the `lightembed` wasm package, web
// target), so the page never blocks on embedding or ranking. Messages in: {type: 'init',
// manifest: URL, files: the manifest as the page read it (optional: fetched when absent), serve:
// the remote search endpoint (optional: remote mode, below)}, then
// {type: 'search', id, query, k} and {type: 'excerpts', id, query, passages}; out: {type:
// 'progress', what, loaded, total}, {type: 'keywords', ...} (the core is read: queries are
// answered by the keyword side), {type: 'ready', ...} (the model too: by the hybrid ranking),
// {type: 'kept'} (idle, and every file downloaded so far is written to Cache Storage:
// `keepWhenIdle`),
// {type: 'results', id, hits, ms, fetched, mode ('keyword' | 'hybrid'), keywordMatch, warnings
// (remote mode: the server's), partial (true: the keyword side's results, posted while the vector
// side is on its way; the same id's final results follow)}, {type: 'excerpts', id, items},
// {type: 'error', id, message, fragment, remote} (`fragment`:
// {kind, n, file, problem, status} when a fragment (term shard, centroid cell, vector partition,
// text chunk, typo or row shard) could not be used; the page
// then re-reads the manifest, since a rebuilt site removes the old build's fragments).
//
// Remote mode (`serve` in the init message: the URL of a `lightembed serve`, for a collection too
// large for a static index): only the engine and the query side (the query encoder and its row
// shards, or the model) are fetched, never the core or its fragments; each query is embedded
// here and POSTed with its text to `serve`'s /search, which ranks it in PostgreSQL. Its hits come
// back with their excerpts (`snippet` and `highlights`: UTF-16 offsets here, as the wasm gives
// them), so no `excerpts` message is needed. A refusal of the server is an error with `remote`:
// {status (0: no answer), kind: 'model' (409, spec §8) | 'request' (other 4xx) | 'busy' (5xx) |
// 'unreachable' | 'answer' (not a search answer)}.
//
// The index comes in fragments (`lightembed_index::fragments`): the core at start; for each
// query the term shards of its words and, once its embedding exists (the model or the query
// encoder with its tokens' row shards is in), the vector partitions nearest it (a big site's:
// after the centroid cells nearest it), alongside; a word
// no page holds (a typo?) costs its typo shards and then its correction's term shard
// (`typoShards`), a query whose words all occur nothing more; then the text chunks of its results,
// which carry their URLs and titles as well as their text (so results are posted one round trip
// after the ranking, titled; the excerpts then find their chunks in).
// On a slow link no file waits for another to be processed: the wasm and the core are asked for
// at once as soon as the manifest is read, the model as soon as those two are downloaded, the term
// shards of a query as soon as the core is read; a query is answered by the keyword side (BM25,
// no model needed) until the model is in; the page asks again then, and gets the hybrid ranking.
// Files are fetched by content-hashed names (the manifest lists the core; fragments live in a
// folder named by the core's build id) and kept in the Cache API (written when the worker is idle,
// `keepWhenIdle`), so a second page or a later
// visit downloads nothing already seen; the model is verified on every load
// (`Model.fromBytes`: its trailing SHA-256 against its contents + every load rule), and that
// SHA-256 must be the one the manifest lists. Works on plain-http origins too (no
// `crypto.subtle` needed; without the Cache API files are fetched on each page). Document text is
// only ever passed on as text.
// Bundle version 3 stores the core, shards, chunks, model and wasm gzip-compressed (so a host that
// does not compress still sends few bytes); they are decompressed here with the browser's
// DecompressionStream, told from raw files (version 2, or `--no-gzip`) by the gzip magic. A host
// that compresses them again (Content-Encoding: gzip) is undone by the browser before this code
// sees the bytes, so the manifest's sizes are what a download delivers either way.
// The glue is imported with the wasm's hashed name as a version (`?v=`, given by the page from
// the manifest), so a browser never pairs an old cached glue with a new wasm.
const version = new URL(self.location.href).searchParams.get('v') || '';
const glue = import(`./lightembed_wasm.js?v=${encodeURIComponent(version)}`);
let Model;
let SiteIndex;
let QueryEncoder;
let loadUnicode;
let unicodeCovers;

const CACHE = 'lightembed';
let model = null;
// A static model's query side (bundles with `files.query`): the head, then the rows of each
// query's tokens, fetched in shards — the same query vector as the model, without the model.
let encoder = null;
let index = null;
// Remote mode: {url: the /search endpoint, origin, model: the request's `model` field}.
let remote = null;
let cache = null;
// The URLs in `cache` when the worker started, and those it put there since: a file not listed
// is fetched without asking the cache first (each lookup is an asynchronous trip to the browser's
// cache storage, and a cold visit's fragments are never there). Another tab's writes are not
// seen; such a file is fetched again, which costs nothing but the request.
const cached = new Set();
let fragBase = null;
let rowsBase = null;
// The widget's wasm has no Unicode decomposition tables of its own (`lightembed::unicode`): the
// bundle's subset (every character of the site's text) comes with the wasm; the complete tables
// (`unicodeAllUrl`) only for a query with a character the subset lacks, once.
let unicodeAllUrl = null;
let unicodeAll = null;
// Fragments being fetched (number → promise), so concurrent queries share one request:
// term shards, text chunks, row shards.
const pending = { t: new Map(), c: new Map(), r: new Map(), n: new Map(), g: new Map(), v: new Map() };
// Resolved once the core is read (queries asked before wait for it).
const indexReady = (() => {
  let resolve;
  const p = new Promise((r) => { resolve = r; });
  p.resolve = resolve;
  return p;
})();

function post(msg) { self.postMessage(msg); }

// Cache writes wait until the worker is idle: a `cache.put` costs the browser's storage work on
// the same cores that fetch, decompress and rank, and done as each file came in it made a query
// ~40 % slower (bench/RESULTS.md, "Warm queries: cache writes when idle"). `keep()` queues the
// write; from KEEP_IDLE_MS after the last message of this worker was answered the queue is
// written one file at a time, and a message that comes meanwhile stops it after the file being
// written (the rest wait for the next idle time). A page closed sooner keeps nothing of the
// files still queued (its next visit downloads them again).
const KEEP_IDLE_MS = 150;
const keeps = [];
let working = 0;
let keepTimer = null;
let writing = false;
function keepWhenIdle() {
  clearTimeout(keepTimer);
  if (working > 0 || writing) return;
  if (keeps.length === 0) {
    post({ type: 'kept' }); // idle, and nothing downloaded is left unwritten
    return;
  }
  keepTimer = setTimeout(async () => {
    writing = true;
    while (working === 0 && keeps.length > 0) await keeps.shift()();
    writing = false;
    keepWhenIdle();
  }, KEEP_IDLE_MS);
}

// The bytes at `url` (immutable: its name carries its hash), from the cache when there.
// Progress counts against `size`, the file's length as the manifest records it, never against
// Content-Length: that is the length on the wire, which a host that compresses (Content-Encoding:
// gzip) makes smaller than the bytes read. `keep()` puts a downloaded file in the cache once the
// worker is idle (`keepWhenIdle`); callers call it only once the bytes passed their check, so a
// damaged download is never kept (a cache write never fails). The cache is asked only for files
// `cached` lists, unless `lookup`.
async function fetchCached(url, what, { size = 0, quiet = false, priority = 'auto', lookup = false } = {}) {
  // `lookup`: ask the cache whatever `cached` says (the first files, asked for before the cache's
  // keys are listed).
  let res = cache && (lookup || cached.has(url)) ? await cache.match(url) : undefined;
  const fromCache = Boolean(res);
  if (!res) {
    res = await fetch(url, { priority });
    if (!res.ok) throw Object.assign(new Error(`${what}: ${url} answered HTTP ${res.status}`), { status: res.status });
  }
  // The cache keeps the bytes read here (not a tee of the response stream: that cost every
  // fragment more asynchronous hops while a query's others load).
  let bytes;
  if (quiet) {
    // No progress to tell (fragments: a few kB each): the body in one read.
    bytes = new Uint8Array(await res.arrayBuffer());
  } else {
    const reader = res.body.getReader();
    const parts = [];
    let loaded = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      loaded += value.length;
      post({ type: 'progress', what, loaded: Math.min(loaded, size), total: size });
    }
    bytes = new Uint8Array(loaded);
    let at = 0;
    for (const p of parts) { bytes.set(p, at); at += p.length; }
  }
  const keep = () => {
    if (!cache || fromCache) return;
    keeps.push(() => {
      cached.add(url);
      return cache.put(url, new Response(bytes)).catch(() => { cached.delete(url); });
    });
  };
  return { bytes, fromCache, keep };
}

// `bytes` decompressed when they are gzip (magic 1f 8b), else as they are. A damaged stream is
// an error naming `file`.
async function plain(bytes, file) {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  if (typeof DecompressionStream !== 'function') {
    throw new Error(`${file} is gzip-compressed and this browser has no DecompressionStream`);
  }
  try {
    // Written into the stream directly (not through a Blob's stream piped into it): fewer
    // asynchronous hops per file, ~3× less time per small fragment while a query's others load.
    const ds = new DecompressionStream('gzip');
    const w = ds.writable.getWriter();
    w.write(bytes).catch(() => {}); // a damaged stream rejects these too; the read below says so
    w.close().catch(() => {});
    return new Uint8Array(await new Response(ds.readable).arrayBuffer());
  } catch (err) {
    throw new Error(`${file} is damaged (gzip: ${err && err.message ? err.message : err})`);
  }
}

// The bundle versions this worker reads: 2 (raw files) and 3 (gzip-compressed binary files).
const BUNDLE_VERSIONS = [2, 3];

async function start(manifestUrl, given, serveUrl) {
  const t0 = performance.now();
  let manifest = given;
  if (!manifest) {
    const r = await fetch(manifestUrl, { cache: 'no-cache' });
    if (!r.ok) throw new Error(`${manifestUrl}: HTTP ${r.status}`);
    manifest = await r.json();
  }
  if (!BUNDLE_VERSIONS.includes(manifest.bundle_version)) {
    throw new Error(`bundle version ${manifest.bundle_version} is not one this widget reads (${BUNDLE_VERSIONS.join(' or ')}): re-run \`lightembed site\``);
  }
  const base = new URL('.', new URL(manifestUrl, self.location.href));
  cache = self.caches ? await self.caches.open(CACHE).catch(() => null) : null;
  fragBase = new URL(manifest.files.fragments, base);
  const wasmUrl = new URL(manifest.files.wasm, base).href;
  const coreUrl = new URL(manifest.files.core, base).href;
  const modelUrl = new URL(manifest.files.model, base).href;
  // Bundles of a static model carry its query side (head + row shards): a few tens of kB in
  // place of the model, asked for with the keyword side's files.
  const headUrl = manifest.files.query ? new URL(manifest.files.query, base).href : null;
  rowsBase = manifest.files.rows ? new URL(manifest.files.rows, base) : null;
  const unicodeUrl = manifest.files.unicode ? new URL(manifest.files.unicode, base).href : null;
  unicodeAllUrl = manifest.files.unicode_all ? new URL(manifest.files.unicode_all, base).href : null;
  // The keyword side's files (the engine and the core) are asked for now, at once, and the model
  // (on most sites the largest file) as soon as they are downloaded: the model is not needed to
  // answer by keywords, and on a slow link files fetched together share its bandwidth, so asking
  // for all three at once delays the first results by the model's share while the last (hybrid)
  // results come no sooner — bench/RESULTS.md, "Slow link". The query's term shards are asked
  // for as soon as the core is read (`search`), alongside the model.
  // Remote mode needs no index file: the model (or its query side) is asked for with the engine.
  if (serveUrl) {
    const url = new URL(serveUrl);
    remote = {
      url: url.href,
      origin: url.origin,
      model: { id: manifest.model.id, version: manifest.model.version, dims: manifest.index.dims, sha256: manifest.model.sha256 },
    };
  }
  const first = { priority: 'high', lookup: true };
  const got = { wasm: fetchCached(wasmUrl, 'engine', { quiet: true, ...first }) };
  if (!remote) got.core = fetchCached(coreUrl, 'index', { size: manifest.index.bytes, ...first });
  if (unicodeUrl) got.unicode = fetchCached(unicodeUrl, 'engine', { quiet: true, ...first });
  if (headUrl) {
    got.head = fetchCached(headUrl, 'model', { size: manifest.query.bytes, ...first });
  } else if (remote) {
    got.model = fetchCached(modelUrl, 'model', { size: manifest.model.bytes, ...first });
  } else {
    got.model = Promise.all([got.wasm, got.core])
      .then(() => fetchCached(modelUrl, 'model', { size: manifest.model.bytes, lookup: true }));
  }
  for (const p of Object.values(got)) p.catch(() => {}); // each is awaited below, in turn
  // Whether the query head is downloaded (it is asked for with the wasm and is a fraction of its
  // size, so on a cold visit it is usually in before the wasm; on a warm one, always).
  let headIn = false;
  if (got.head) got.head.then(() => { headIn = true; }, () => {});
  const wanted = new Set(headUrl ? [wasmUrl, coreUrl, headUrl] : [wasmUrl, coreUrl, modelUrl]);
  if (unicodeUrl) wanted.add(unicodeUrl).add(unicodeAllUrl);
  if (cache) {
    // Files of an older build of this site are never asked for again; the rest are listed in
    // `cached` (before the first query: fragments are asked for once the core is read).
    for (const req of await cache.keys()) {
      const url = req.url;
      if (url.startsWith(base.href) && !wanted.has(url) && !url.startsWith(fragBase.href)
          && !(rowsBase && url.startsWith(rowsBase.href))) {
        await cache.delete(req);
      } else {
        cached.add(url);
      }
    }
  }
  const wasm = await glue;
  ({ Model, SiteIndex, QueryEncoder, loadUnicode, unicodeCovers } = wasm);
  // The engine's wasm, fetched here (not by the glue) so a gzip-compressed one is decompressed.
  const w = await got.wasm;
  try {
    await wasm.default({ module_or_path: await plain(w.bytes, manifest.files.wasm) });
  } catch (err) {
    if (cache) await cache.delete(wasmUrl);
    throw new Error(`engine: ${err.message}`);
  }
  w.keep();
  if (got.unicode) await loadTables(await got.unicode, unicodeUrl, manifest.files.unicode);
  if (remote) {
    indexReady.resolve(); // no index here: queries wait for the query side alone ('ready')
    if (headUrl) await startEncoder(manifest, got.head, headUrl, coreUrl, t0, false);
    else await startModel(manifest, got.model, modelUrl, coreUrl, t0, false);
    return;
  }
  // The keyword side first: with the core read, queries are answered by BM25 over the term shards
  // (`mode: 'keyword'`) while the model is still on its way.
  const ix = await got.core;
  let core;
  try {
    core = SiteIndex.fromCore(await plain(ix.bytes, manifest.files.core));
  } catch (err) {
    if (cache) await cache.delete(coreUrl);
    throw err;
  }
  ix.keep();
  index = core;
  if (headUrl && headIn) {
    // The head is in already: the query side is set up before the first query is answered, so
    // it gets the hybrid ranking at once instead of keyword results and a second answer (one
    // round trip less on a slow link). `ready` alone tells the page.
    try {
      await startEncoder(manifest, got.head, headUrl, coreUrl, t0, ix.fromCache);
    } finally {
      indexReady.resolve();
    }
    return;
  }
  indexReady.resolve();
  post({ type: 'keywords', passages: index.length, fromCache: ix.fromCache, ms: performance.now() - t0 });
  if (headUrl) await startEncoder(manifest, got.head, headUrl, coreUrl, t0, ix.fromCache);
  else await startModel(manifest, got.model, modelUrl, coreUrl, t0, ix.fromCache);
}

// The model read, checked against the manifest and the index (spec §8; in remote mode there is no
// index here: the server checks each query's model); from then on queries are ranked by the
// hybrid ranking.
async function startModel(manifest, gotModel, modelUrl, coreUrl, t0, indexFromCache) {
  const m = await gotModel;
  let loaded;
  try {
    loaded = Model.fromBytes(await plain(m.bytes, manifest.files.model));
    if (loaded.sha256 !== manifest.model.sha256) {
      throw new Error(`SHA-256 ${loaded.sha256} is not the ${manifest.model.sha256} the manifest lists`);
    }
  } catch (err) {
    if (cache) await cache.delete(modelUrl);
    throw new Error(`model: ${err.message}`);
  }
  try {
    if (index) index.checkCompatible(loaded);
  } catch (err) {
    if (cache) await cache.delete(coreUrl);
    throw err;
  }
  m.keep();
  model = loaded; // from now on queries are ranked by the hybrid ranking
  post({
    type: 'ready',
    passages: index ? index.length : null,
    model: `${model.modelId} v${model.version}`,
    fromCache: { model: m.fromCache, index: indexFromCache },
    ms: performance.now() - t0,
  });
}

// The query side of a static model's bundle: the head read, checked against the manifest's model
// and the index (spec §8); from then on queries are ranked by the hybrid ranking, each fetching
// its tokens' row shards alongside its term shards.
async function startEncoder(manifest, gotHead, headUrl, coreUrl, t0, indexFromCache) {
  const h = await gotHead;
  let loaded;
  try {
    loaded = QueryEncoder.fromHead(await plain(h.bytes, manifest.files.query));
    if (loaded.sha256 !== manifest.model.sha256) {
      throw new Error(`SHA-256 ${loaded.sha256} is not the ${manifest.model.sha256} the manifest lists`);
    }
  } catch (err) {
    if (cache) await cache.delete(headUrl);
    throw new Error(`model: ${err.message}`);
  }
  try {
    if (index) index.checkQueryEncoder(loaded);
  } catch (err) {
    if (cache) await cache.delete(coreUrl);
    throw err;
  }
  h.keep();
  encoder = loaded;
  post({
    type: 'ready',
    passages: index ? index.length : null,
    model: `${manifest.model.id} v${manifest.model.version}`,
    fromCache: { model: h.fromCache, index: indexFromCache },
    ms: performance.now() - t0,
  });
}

// Unicode tables (`unicode.<hash>.bin` or `unicode-all.<hash>.bin`) loaded into the wasm; a
// damaged file is dropped from the cache and named.
async function loadTables(got, url, file) {
  try {
    loadUnicode(await plain(got.bytes, file));
  } catch (err) {
    if (cache) await cache.delete(url);
    throw new Error(`engine: ${err.message}`);
  }
  got.keep();
}

// Before `text` is tokenized: the complete Unicode tables when the loaded ones lack one of its
// characters (fetched once; a failure is forgotten so the next query tries again).
async function coverUnicode(text) {
  if (!unicodeAllUrl || unicodeCovers(text)) return;
  if (!unicodeAll) {
    unicodeAll = fetchCached(unicodeAllUrl, 'engine', { quiet: true })
      .then((got) => loadTables(got, unicodeAllUrl, unicodeAllUrl.split('/').pop()));
    unicodeAll.catch(() => { unicodeAll = null; });
  }
  await unicodeAll;
}

const KIND_NAMES = { t: 'term shard', c: 'text chunk', r: 'row shard', n: 'typo shard', g: 'centroid cell', v: 'vector partition' };

// A term shard, vector partition, text chunk, typo or row shard that could not be used, said by what it is, never by raw HTTP
// status: `problem` is 'missing' (404/410: gone, as after a rebuild of the site), 'unreachable'
// (another status, or no answer) or 'damaged' (it failed its check: `addShard`/`addChunk` threw).
class FragmentError extends Error {
  constructor(kind, n, problem, cause) {
    super(`${KIND_NAMES[kind]} ${kind}${n}.bin: ${cause.message || cause}`);
    this.fragment = { kind, n, file: `${kind}${n}.bin`, problem, status: cause.status };
  }
}

// Fetches and adds fragment `n` of `kind` ('t' term shard, 'g' centroid cell, 'v' vector
// partition, 'c' text chunk, 'n' typo shard, 'r' row shard of the query encoder) once; resolves to true when it came from the network. A failure is
// forgotten, so the next query tries again.
function ensure(kind, n) {
  const map = pending[kind];
  if (!map.has(n)) {
    const url = new URL(`${kind}${n}.bin`, kind === 'r' ? rowsBase : fragBase).href;
    const p = (async () => {
      let got;
      try {
        got = await fetchCached(url, { t: 'terms', c: 'text', r: 'rows', n: 'terms', g: 'vectors', v: 'vectors' }[kind], { quiet: true });
      } catch (err) {
        throw new FragmentError(kind, n, err.status === 404 || err.status === 410 ? 'missing' : 'unreachable', err);
      }
      try {
        const bytes = await plain(got.bytes, `${kind}${n}.bin`);
        if (kind === 't') index.addShard(bytes);
        else if (kind === 'c') index.addChunk(bytes);
        else if (kind === 'n') index.addTypoShard(bytes);
        else if (kind === 'g') index.addCell(bytes);
        else if (kind === 'v') index.addPartition(bytes);
        else encoder.addShard(bytes);
      } catch (err) {
        if (got.fromCache && cache) cache.delete(url).catch(() => {});
        throw new FragmentError(kind, n, 'damaged', err);
      }
      got.keep();
      return !got.fromCache;
    })();
    p.catch(() => { if (map.get(n) === p) map.delete(n); });
    map.set(n, p);
  }
  return map.get(n);
}

// Keyword hits whose text chunks are asked for early (`search`; those of them the list would
// show: `shownHits`).
const EARLY_CHUNK_HITS = 5;
// How long the keyword side's titled hits wait for the vector side before they are posted alone
// (`search`): on a fast link the hybrid ranking usually follows within it, and one list is shown
// instead of two in quick succession.
const KEYWORDS_FIRST_WAIT_MS = 60;
// The hits of a ranked list that the list will show (`shown`, from the page with each query:
// at most `pages` pages, `sections` sections each), in rank order. A hit's page number comes with
// it (`page`), before its text chunk, so only these hits' chunks need fetching: on a slow link
// every request counts (HTTP/1.1 hosts serve six at a time), and a query's 20 hits often lie on
// fewer pages than it has sections. Without `shown`, every hit.
function shownHits(hits, shown) {
  if (!shown) return hits;
  const perPage = new Map();
  return hits.filter((h) => {
    const n = perPage.get(h.page);
    if (n === undefined && perPage.size >= shown.pages) return false;
    if (n >= shown.sections) return false;
    perPage.set(h.page, (n || 0) + 1);
    return true;
  });
}

// Ranks `query`: fetches the term shards it needs and, alongside, the vector side's files (the row
// shards of its tokens when the query encoder is in, then the vector partitions its embedding
// probes), ranks, then fetches the text chunks of the hits the list shows (`shown`; their URLs
// and titles travel there) and ranks again — the same ranking, now titled. Hits carry no text
// yet. Ranked by the hybrid ranking once the model (or the query encoder) is in; before, by the
// keyword side alone (BM25, which needs no model): `mode` says which. `onKeywords` (optional) is
// called at most once, before this resolves, with the keyword side's titled top hits ({fetched,
// mode: 'keyword', hits, keywordMatch}) when they are ready well before the vector side.
async function search(query, k, shown, onKeywords) {
  let fetched = 0;
  const count = (downloaded) => { if (downloaded) fetched += 1; };
  await coverUnicode(query);
  // The term shards are asked for before the row shards: a host serves a few requests at a time
  // (six on HTTP/1.1), in the order asked, and the keyword side's results can be shown first.
  const terms = Promise.all(Array.from(index.missingShards(query), (n) => ensure('t', n).then(count)));
  terms.catch(() => {}); // awaited below
  const vectorSide = queryVector(query, encoder, count);
  vectorSide.catch(() => {}); // awaited below, after the term shards
  await terms;
  await typoShards(query, count);
  // While the vector side is on its way (row shards, then vector partitions), the text chunks of
  // the keyword side's top hits are asked for: most of them are among the final hits, whose
  // titles and excerpts would otherwise wait for one more round trip after the ranking.
  // Those hits, titled, are the keyword results posted first (`onKeywords`) when the vector side
  // is still on its way (a slow link) KEYWORDS_FIRST_WAIT_MS after them; the page shows them and
  // refines the list in place when the hybrid ranking follows (lightembed-ui.js). A chunk that
  // fails here fails the final ranking only if one of its hits is shown there.
  if (encoder || model) {
    const options = { k: EARLY_CHUNK_HITS, mode: 'keyword' };
    // Resolves to the titled hits, or to null (a chunk failed: said by the final ranking, if one
    // of its hits is shown there).
    const first = titled(query, options, index.search(query, options), count, shown).catch(() => null);
    if (onKeywords) {
      const vectorIn = vectorSide.then(() => 'vector', () => 'vector');
      const wait = (ms) => new Promise((r) => { setTimeout(() => r('wait'), ms); });
      const hits = await Promise.race([vectorIn, first]);
      if (hits !== 'vector' && hits && hits.length > 0
          && (await Promise.race([vectorIn, wait(KEYWORDS_FIRST_WAIT_MS)])) !== 'vector') {
        onKeywords({ fetched, mode: 'keyword', hits, keywordMatch: index.keywordMatches(query) });
      }
    }
  }
  const vector = await vectorSide;
  const mode = vector ? 'hybrid' : 'keyword';
  const options = vector ? { k, mode, vector } : { k, mode };
  const hits = await titled(query, options, index.search(query, options), count, shown);
  // keywordMatch: some passage holds a word of the query (the keyword side decides, not the
  // excerpts shown: a word only in a title or heading counts).
  return { fetched, mode, hits, keywordMatch: index.keywordMatches(query) };
}

// The query's embedding at the index dims, with the vector partitions it probes added: from the
// query encoder once its tokens' row shards are in, or from the model; null before either is in
// (the keyword side answers alone). A big site's core holds only coarse cells: the centroids of
// the partitions in the query's nearest cells come first (`g<n>.bin`, one more round trip), then
// the partitions they rank nearest; a one-level core lists no cells.
async function queryVector(query, enc, count) {
  let vector = null;
  if (enc) {
    await Promise.all(Array.from(enc.missingShards(query), (n) => ensure('r', n).then(count)));
    vector = enc.embed(query, index.dims);
  } else if (model) {
    vector = model.embed(query, index.dims);
  }
  if (vector) {
    await Promise.all(Array.from(index.cellsFor(vector), (n) => ensure('g', n).then(count)));
    await Promise.all(Array.from(index.partitionsFor(vector), (n) => ensure('v', n).then(count)));
  }
  return vector;
}

// `hits` with their URLs and titles: those travel in the text chunks, so the chunks of the hits
// the widget shows (`shownHits`) not titled yet are fetched and the query ranked again (the same
// ranking, now titled). Hits still untitled then (ones the list would not show) are left out:
// without their chunk they have no URL to group by.
async function titled(query, options, hits, count, shown) {
  const missing = [...new Set(shownHits(hits, shown).filter((h) => !index.hasText(h.passage)).map((h) => h.chunk))];
  if (missing.length > 0) {
    await Promise.all(missing.map((n) => ensure('c', n).then(count)));
    hits = index.search(query, options);
  }
  return hits.filter((h) => index.hasText(h.passage));
}

// Typo tolerance: once a query's term shards are in, a word of it no page holds needs its typo
// shards (the indexed words within one edit are listed there), then the term shard of the word
// it is corrected to. A query whose words all occur asks for nothing here.
// A correction can lead to more (the typed word's own keys once its stem is known, a corrected
// term's shard): rounds until nothing is missing, at most four (then `search` names what is).
async function typoShards(query, count) {
  for (let round = 0; round < 4; round += 1) {
    const typos = Array.from(index.missingTypoShards(query));
    const terms = Array.from(index.missingShards(query));
    if (typos.length === 0 && terms.length === 0) return;
    await Promise.all([
      ...typos.map((n) => ensure('n', n).then(count)),
      ...terms.map((n) => ensure('t', n).then(count)),
    ]);
  }
}

// How long a remote search may take before it is given up (the server has its own statement
// timeout; this bounds a connection that never answers).
const REMOTE_TIMEOUT_MS = 20000;
// Characters of a remote hit's excerpt: the static bundle's (`excerpts` below).
const EXCERPT_CHARS = 180;

// A refusal or failure of the search server, said in words by the page (`remote.kind`).
class RemoteError extends Error {
  constructor(kind, status, message) {
    super(message);
    this.remote = { kind, status };
  }
}

// UTF-8 byte ranges of `text` (the server's highlights) → UTF-16 offsets (JS string indices);
// a range that does not fall on character boundaries inside `text` is dropped.
function utf16Ranges(text, ranges) {
  const at = new Map([[0, 0]]); // byte offset → UTF-16 offset, at every character boundary
  let bytes = 0;
  let units = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    units += ch.length;
    at.set(bytes, units);
  }
  const out = [];
  for (const r of Array.isArray(ranges) ? ranges : []) {
    const a = at.get(Array.isArray(r) ? r[0] : NaN);
    const b = at.get(Array.isArray(r) ? r[1] : NaN);
    if (a !== undefined && b !== undefined && a < b) out.push([a, b]);
  }
  return out;
}

// The query's embedding at the server's dims, from the query encoder (its tokens' row shards
// fetched first) or the model.
async function embedRemote(query, count) {
  await coverUnicode(query);
  if (encoder) {
    await Promise.all(Array.from(encoder.missingShards(query), (n) => ensure('r', n).then(count)));
    return encoder.embed(query, remote.model.dims);
  }
  return model.embed(query, remote.model.dims);
}

// Remote mode: embeds `query` here and asks the server (`POST /search` with the text, the vector
// and the model's identity); its hits, in the shape `search` gives, each with its excerpt. The
// server's text is only ever passed on as text.
async function searchRemote(query, k) {
  let fetched = 0;
  const vector = await embedRemote(query, (downloaded) => { if (downloaded) fetched += 1; });
  const body = JSON.stringify({
    query, vector: Array.from(vector), model: remote.model, k, excerpt_chars: EXCERPT_CHARS,
  });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), REMOTE_TIMEOUT_MS);
  let res;
  let answer;
  try {
    res = await fetch(remote.url, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal: abort.signal,
      credentials: 'omit', cache: 'no-store',
    });
    answer = await res.json().catch(() => null);
  } catch (err) {
    const late = abort.signal.aborted;
    throw new RemoteError('unreachable', 0, late
      ? `the search server ${remote.origin} did not answer within ${REMOTE_TIMEOUT_MS / 1000} s`
      : `the search server ${remote.origin} could not be reached: it is not running, or its --cors-origin does not list this site`);
  } finally {
    clearTimeout(timer);
  }
  const said = answer && typeof answer.error === 'string' ? answer.error : `HTTP ${res.status}`;
  if (res.status === 409) throw new RemoteError('model', 409, said);
  if (res.status >= 400 && res.status < 500) throw new RemoteError('request', res.status, said);
  if (!res.ok) throw new RemoteError('busy', res.status, said);
  if (!answer || !Array.isArray(answer.hits)) {
    throw new RemoteError('answer', res.status, `the search server ${remote.origin} sent something that is not a search answer`);
  }
  const text = (v) => (typeof v === 'string' ? v : '');
  const hits = answer.hits.map((h, i) => {
    const snippet = text(h.snippet);
    return {
      passage: i, chunk: -1, url: text(h.url), id: text(h.id),
      pageTitle: text(h.page_title) || text(h.title), heading: text(h.heading),
      snippet, highlights: utf16Ranges(snippet, h.highlights),
    };
  });
  return { fetched, mode: 'hybrid', hits, keywordMatch: null, warnings: Array.isArray(answer.warnings) ? answer.warnings.map(String) : [] };
}

// Excerpts of the passages shown: fetches their text chunks first.
async function excerpts(query, passages) {
  await coverUnicode(query);
  const chunks = new Set(passages.map((p) => p.chunk));
  await Promise.all([...chunks].map((n) => ensure('c', n)));
  return passages.map((p) => ({ passage: p.passage, ...index.excerpt(p.passage, query, 180) }));
}

self.onmessage = async (e) => {
  const msg = e.data;
  working += 1;
  clearTimeout(keepTimer);
  try {
    if (msg.type === 'init') {
      await start(msg.manifest, msg.files, msg.serve || null);
    } else if (msg.type === 'search') {
      // A query asked before the core is read waits for it (the page asks once `keywords` came).
      await indexReady;
      const t = performance.now();
      const { hits, fetched, mode, keywordMatch, warnings } = remote
        ? await searchRemote(msg.query, msg.k || 20)
        : await search(msg.query, msg.k || 20, msg.shown, (first) => {
          post({ type: 'results', id: msg.id, ...first, partial: true, ms: performance.now() - t });
        });
      post({ type: 'results', id: msg.id, hits, fetched, mode, keywordMatch, warnings, ms: performance.now() - t });
    } else if (msg.type === 'excerpts') {
      if (!index) throw new Error('not ready');
      post({ type: 'excerpts', id: msg.id, items: await excerpts(msg.query, msg.passages) });
    }
  } catch (err) {
    post({
      type: 'error', id: msg.id, message: String(err && err.message ? err.message : err),
      fragment: err && err.fragment, remote: err && err.remote,
    });
  } finally {
    working -= 1;
    keepWhenIdle();
  }
};
