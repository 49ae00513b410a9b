// lightembed app service worker: the app works offline after the first visit, and a new
// deployment is offered as an update instead of being mixed with the old files.
//
// `scripts/sw_manifest.py` (trunk post_build hook) fills in VERSION (a hash over every file of the
// build) and FILES (every file of dist/ but the model .bin files, which the worker keeps verified in
// IndexedDB). A new build therefore has a byte-different sw.js: the browser installs it next to the
// running one, it precaches that build's files into its own cache `lightembed-app-<VERSION>`, and
// waits. The page shows "a new version is available"; only on the visitor's click does the new
// worker take over (`skipWaiting`), the page reloads, and the old cache is deleted. Until then every
// request is answered from the old build's cache — never a mix of two builds.
const VERSION = '__LIGHTEMBED_SW_VERSION__';
const FILES = ['__LIGHTEMBED_SW_FILES__'];
const CACHE = `lightembed-app-${VERSION}`;

// The build ships two workers (SIMD128 and relaxed SIMD, same vectors); index.html picks one by
// validating a tiny relaxed-SIMD module. The same test here precaches only the one this browser
// runs — the other is ~1.8 MB a visitor never uses. Where the test cannot run, both are kept.
// (A page opened with the `?relaxed=0` opt-out then loads its worker from the network.)
function relaxedSimd() {
  try {
    // (func (result v128) i32.const 0 i8x16.splat i32.const 0 i8x16.splat i16x8.relaxed_dot_i8x16_i7x16_s)
    return WebAssembly.validate(new Uint8Array(
      [0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 15, 1, 13, 0, 65, 0, 253, 15, 65, 0, 253, 15, 253, 146, 2, 11]));
  } catch (e) {
    return null;
  }
}

/** The files to precache: FILES less the worker build this browser will not load. */
function precacheList() {
  const relaxed = relaxedSimd();
  if (relaxed === null) return FILES;
  const unused = relaxed ? /^worker(_loader\.js|\.js|_bg\.wasm)$/ : /^worker_relaxed(_loader\.js|\.js|_bg\.wasm)$/;
  return FILES.filter((f) => !unused.test(f));
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // `cache: 'reload'`: straight from the network, not from the HTTP cache (which may hold
    // files of an older build under the same unhashed names, e.g. worker.js).
    await cache.addAll(precacheList().map((f) => new Request(f, { cache: 'reload' })));
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('lightembed-app-') && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data === 'skipWaiting') self.skipWaiting();
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || !req.url.startsWith(self.registration.scope)) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    // The app page is one file whatever its query (?model=, ?limit=, …).
    const hit = await cache.match(req, { ignoreSearch: req.mode === 'navigate' });
    if (hit) return hit;
    return fetch(req);
  })());
});
