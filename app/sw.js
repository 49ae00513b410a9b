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

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // `cache: 'reload'`: straight from the network, not from the HTTP cache (which may hold
    // files of an older build under the same unhashed names, e.g. worker.js).
    await cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })));
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
