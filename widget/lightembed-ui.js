// <lightembed-search>: search a static site by meaning and keywords, entirely in the browser.
//
//   <link rel="stylesheet" href="/lightembed/lightembed-ui.css">
//   <script type="module" src="/lightembed/lightembed-ui.js"></script>
//   <lightembed-search placeholder="Search the docs"></lightembed-search>
//
// Nothing is fetched until the visitor focuses the box. Then a worker loads the model and the
// index written by `lightembed site` (verified, cached across pages and visits; its binary files
// come gzip-compressed from any host and the worker decompresses them; the engine and the index
// core are asked for at once, the model as soon as they are in) and answers each query with
// hybrid (BM25 + vector) ranking. Until the model is in (on a slow link it is the largest file),
// queries are answered by the keyword side alone (BM25 over the query's
// term shards), the status line saying so ("by keywords; adding meaning (model N %)…"); when the
// model arrives the query is asked again and its hybrid results replace those in one swap. Later
// too, a query whose vector side (row shards, vector partitions) is still on its way once its
// keyword results are titled (a slow link) gets those first, then its hybrid results, the same
// way. One rule for the swap: the pages from the top of the keyword list down to the one
// selected (↓ ↑ or the mouse) stay where they are — the same elements, so what the visitor reads, points at or would
// follow with Enter does not move —, and the hybrid ranking fills the places below (the kept
// pages left out of it). With nothing selected, the first page stays once the keyword list has
// been shown for READ_MS (it may be being read); a list replaced sooner (a fast link: the model
// follows within moments) is replaced whole. Results are grouped by page, with the page's
// matching sections under it; the query's words are marked — as text nodes in <mark>, never as
// HTML. Keyboard: ↓ ↑ move through the pages, Enter follows the selected (or first) result, Esc
// closes the list (a second Esc clears the box). Keys act only on results of the text now in the
// box: Enter typed ahead of them waits for them; in an empty box it does nothing. ARIA: combobox
// + listbox. Works under a sub-path: every URL is resolved against this file's own URL.
//
// Shortcut: `/` or Ctrl-K (⌘K) focuses the first box on the page that is shown, unless the visitor
// is typing in another field; `shortcut="off"` on the element leaves it out (a page whose own
// handler opens the search, as the Starlight component does). Look: lightembed-ui.css, themed by
// the --lightembed-* custom properties, light or dark as the page's data-theme or the system says
// (`theme="light|dark"` on the element decides for it); the element keeps its size while loading.
//
// A site rebuilt while the page is open: the old build's fragments are gone, so a query that
// needs one fails; the element then re-reads the manifest and moves to the new build (a new
// worker), asking the query again. An element removed from the page ends its worker.
//
// Remote mode, for a collection too large for a static index (docs/scale-out.md): `serve="URL"`
// names a `lightembed serve` (its base URL: queries go to URL/search; relative to the page, or
// another origin whose --cors-origin lists this site). The worker then loads only the engine and
// the bundle's model (a static model's query side: its head and the row shards of the query's
// tokens), embeds each query here and sends its text and vector; the server ranks them in
// PostgreSQL and answers with the hits and their excerpts, listed as the static index's are
// (grouped by page, words marked, text as text). Links the server gives are followed when they are
// http(s) URLs (another site included) or paths below the site root. A refusal is said in words:
// the server's spec §8 message when its passages were embedded with another model, its message
// for a query it refuses, and that it is busy or cannot be reached. The attribute is read when the
// search starts (the first focus); changing it later starts again on the next focus.
//
// Test hooks: the input has data-testid="lightembed-query", each page result
// data-testid="lightembed-result" (its first <a href> is the best section of the page).

const BUNDLE = new URL('.', import.meta.url);
// Page URLs in the index are relative to the site root: the folder above the bundle.
const SITE = new URL('..', BUNDLE);

/** A result's link: its page URL from the index, resolved against the site root. The index is
 *  data: a URL that would leave the site (another origin, or a scheme such as `javascript:` from a
 *  page named `javascript:x.html` in an index built before `:` was percent-encoded) is taken as the
 *  path below the site root that it was meant to be. */
function pageHref(url) {
  const u = new URL(url, SITE);
  return u.origin === SITE.origin && u.protocol === SITE.protocol ? u.href : new URL(`./${url}`, SITE).href;
}
/** A link the search server gave (remote mode): an http(s) URL as it is, another site's
 *  included; anything else (`javascript:`, `data:`, a malformed URL) as a path below the site root. */
function remoteHref(url) {
  try {
    const u = new URL(url, SITE);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.href;
    return new URL(`./${url}`, SITE).href;
  } catch {
    return SITE.href;
  }
}

/** The `serve` attribute as the search endpoint (URL/search, resolved against the page), or an
 *  Error saying why it is not one. */
function serveEndpoint(value) {
  let base;
  try {
    base = new URL(value, document.baseURI);
  } catch {
    return new Error(`serve="${value}" is not a URL`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    return new Error(`serve="${value}" is not an http(s) URL`);
  }
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('search', base);
}

// The smallest module using a SIMD128 instruction (i8x16 splat / popcnt); the engine needs SIMD.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1,
  0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
const DEBOUNCE_MS = 60;
// The list shows at most SHOWN_PAGES pages, each with at most SHOWN_SECTIONS sections (sent with
// each query: the worker fetches text for no more).
const SHOWN_PAGES = 8;
const SHOWN_SECTIONS = 3;
// How long a keyword list is shown before its first page counts as read (kept by the re-rank).
const READ_MS = 1000;
const MANIFEST = new URL('manifest.json', BUNDLE).href;
let nextId = 0;

// The bundle's manifest, revalidated (`no-cache`), so a rebuilt site is seen at once.
async function readManifest() {
  const r = await fetch(MANIFEST, { cache: 'no-cache' });
  if (!r.ok) throw new Error(`${MANIFEST}: HTTP ${r.status}`);
  return r.json();
}

// A fragment the worker could not use ({kind, n, file, problem}), in words for the status line.
function fragmentWords(f) {
  const part = `${{ t: 'keyword shard', n: 'typo shard', v: 'vector partition', c: 'text chunk' }[f.kind] || 'fragment'} ${f.n}`;
  const problem = { missing: 'is missing on the site', damaged: 'is damaged or incomplete' }[f.problem]
    || 'could not be downloaded';
  return `part of the search index (${part}, file ${f.file}) ${problem}`;
}

// A refusal or failure of the search server (remote mode: {kind, status}) in words.
function remoteWords(r, message) {
  if (r.kind === 'model') return `The search server cannot answer queries embedded by this site's model: ${message}`;
  if (r.kind === 'request') return `The search server refused the query: ${message}`;
  if (r.kind === 'busy') return `The search server failed (HTTP ${r.status}): ${message}. Try again later.`;
  return `Search is unavailable: ${message}.`;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

// `text` with the [start, end) ranges wrapped in <mark>, as DOM nodes (never innerHTML).
function marked(text, ranges) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const [a, b] of ranges) {
    if (a < at || b <= a || b > text.length) continue;
    if (a > at) frag.append(text.slice(at, a));
    frag.append(el('mark', {}, text.slice(a, b)));
    at = b;
  }
  frag.append(text.slice(at));
  return frag;
}

// Hits (best first, one per section) → pages in order of their best section.
function groupByPage(hits) {
  const pages = new Map();
  for (const h of hits) {
    const page = h.url.split('#')[0];
    // The page title and the heading come apart from the index (a title is never split: Sphinx
    // titles such as "Install — Python 3.12 documentation" hold a dash of their own).
    if (!pages.has(page)) pages.set(page, { page, title: h.pageTitle, sections: [] });
    pages.get(page).sections.push(h);
  }
  return [...pages.values()];
}

class LightembedSearch extends HTMLElement {
  static get observedAttributes() { return ['shortcut', 'serve']; }

  attributeChangedCallback(name, before, after) {
    if (!this.input) return;
    if (name === 'shortcut') this.keyshortcuts();
    else if (before !== after && (this.conn || this.failed)) {
      // Another server: what was started (and listed) is the old one's; the next focus starts again.
      this.disconnectedCallback();
    }
  }

  // The keys that focus the box, as ARIA states them (none with shortcut="off").
  keyshortcuts() {
    if (this.getAttribute('shortcut') === 'off') this.input.removeAttribute('aria-keyshortcuts');
    else this.input.setAttribute('aria-keyshortcuts', '/ Control+K Meta+K');
  }

  connectedCallback() {
    // The box is built once: an element put back on the page keeps it (and its text).
    if (!this.input) this.build();
  }

  // Removed from the page (as routers do): release what `start` took — the worker, with its model
  // and index — and forget the results. Put back, the element starts again on its next focus.
  disconnectedCallback() {
    clearTimeout(this.pending);
    this.stop();
    this.failed = false;
    this.enterFor = null;
    this.clearResults();
    this.say('');
  }

  build() {
    const n = nextId++;
    this.listId = `lightembed-list-${n}`;
    this.input = el('input', {
      type: 'search', class: 'lightembed-input', role: 'combobox', 'aria-expanded': 'false',
      'aria-controls': this.listId, 'aria-autocomplete': 'list', autocomplete: 'off',
      spellcheck: 'false', 'data-testid': 'lightembed-query',
      placeholder: this.getAttribute('placeholder') || 'Search this site',
      'aria-label': this.getAttribute('label') || 'Search this site',
    });
    this.keyshortcuts();
    // The shortcut's hint, over the box's end (CSS hides it on focus, with text, or when off).
    const hint = el('span', { class: 'lightembed-kbd', 'aria-hidden': 'true' }, el('kbd', {}, '/'));
    this.status = el('p', { class: 'lightembed-status', 'aria-live': 'polite', 'data-testid': 'lightembed-status' });
    this.list = el('ul', { class: 'lightembed-results', role: 'listbox', id: this.listId, hidden: '' });
    this.append(el('div', { class: 'lightembed' }, this.input, hint, this.status, this.list));
    this.active = -1;
    this.pending = null;
    this.conn = null;
    this.enterFor = null;
    this.loading = new Map(); // file → % loaded (null: size unknown), while the search loads
    // Every focus, not once: `start` does nothing while running, and a put-back element restarts.
    this.input.addEventListener('focus', () => this.start());
    this.input.addEventListener('input', () => this.schedule());
    this.input.addEventListener('keydown', (e) => this.key(e));
  }

  start() {
    if (this.conn || this.failed || !this.isConnected) return;
    if (!WebAssembly.validate(SIMD_PROBE)) {
      this.fail('Search needs a browser with WebAssembly SIMD (Chrome 91+, Firefox 89+, Safari 16.4+).');
      return;
    }
    this.t0 = performance.now();
    this.say('Loading search…');
    this.connect(false);
  }

  // Starts a worker on the build `manifest` names (read now when not given). `updated`: in place of
  // the worker of an older build, found gone by `recover`.
  async connect(updated, manifest = null) {
    const conn = { worker: null, build: null, updated, recovering: false };
    this.conn = conn;
    let serve = null;
    if (this.hasAttribute('serve')) {
      serve = serveEndpoint(this.getAttribute('serve'));
      if (serve instanceof Error) {
        this.fail(`Search is unavailable: ${serve.message}`);
        return;
      }
    }
    try {
      const m = manifest || await readManifest();
      if (this.conn !== conn) return; // removed from the page meanwhile: no worker to start
      // The manifest names this build's files; its wasm name versions the worker and its glue, so
      // an upgraded site never runs an old cached worker against a new wasm.
      const url = new URL('lightembed-worker.js', BUNDLE);
      url.searchParams.set('v', m.files.wasm);
      conn.build = m.files.core;
      conn.worker = new Worker(url, { type: 'module' });
      // Messages of a worker already replaced or stopped are dropped.
      conn.worker.onmessage = (e) => { if (this.conn === conn) this.message(e.data); };
      conn.worker.onerror = (e) => {
        if (this.conn === conn) this.fail(`Search failed to start: ${e.message || 'worker error'}`);
      };
      // The worker gets the manifest this page read, so both use the same build.
      conn.worker.postMessage({ type: 'init', manifest: MANIFEST, files: m, serve: serve && serve.href });
    } catch (err) {
      if (this.conn === conn) this.fail(`Search is unavailable: ${err.message}`);
    }
  }

  // Ends the worker (if any): nothing of it stays running.
  stop() {
    if (this.conn && this.conn.worker) this.conn.worker.terminate();
    this.conn = null;
    this.ready = false;
    this.modelReady = false;
    this.loading = new Map();
    this.asking = null;
    delete this.dataset.ready;
    delete this.dataset.keywordsReady;
  }

  post(msg) {
    if (this.conn && this.conn.worker) this.conn.worker.postMessage(msg);
  }

  // A message that search cannot go on from (until the element is put back on the page).
  fail(message) {
    this.stop();
    this.failed = true;
    this.error(message);
  }

  // An error shown in the status line. No result stays listed under it, so Enter and the arrows
  // never act on results that may be stale.
  error(message) {
    this.clearResults();
    this.say(message);
    this.status.classList.add('lightembed-error');
  }

  say(text) {
    this.status.textContent = text;
    this.status.classList.remove('lightembed-error');
  }

  message(m) {
    if (m.type === 'progress') {
      // `total` is the size the manifest records (not Content-Length, which is smaller when the
      // host compresses): never shown above 100 %. The files load at once: each keeps its figure.
      this.loading.set(m.what, m.total ? Math.min(100, Math.round((100 * m.loaded) / m.total)) : null);
      if (this.status.classList.contains('lightembed-error')) return;
      if (this.shown !== undefined) this.sayResults();
      else this.say(`Loading search (${[...this.loading].map(([w, p]) => (p === null ? w : `${w} ${p} %`)).join(', ')})…`);
    } else if (m.type === 'keywords') {
      // The core is in: the keyword side answers while the model loads.
      this.ready = true;
      this.dataset.keywordsReady = 'true';
      if (this.current()) this.search();
    } else if (m.type === 'ready') {
      this.ready = true;
      this.modelReady = true;
      this.dataset.ready = 'true';
      this.dataset.readyMs = String(Math.round(performance.now() - this.t0));
      this.dataset.fromCache = `${m.fromCache.model},${m.fromCache.index}`;
      // The box's query again, now by the hybrid ranking (its keyword results stay until then).
      if (this.current()) this.search();
      else this.say('');
    } else if (m.type === 'results') {
      if (m.id !== this.latest) return;
      // Keyword results sent ahead of the hybrid ones (the query's vector side still on its way)
      // are shown only over another query's list: one of this text is kept until the final
      // ranking refines it (as after the model came: the query asked again).
      if (m.partial && this.shown === this.query) return;
      this.asking = null;
      this.conn.updated = false; // this build answers: later errors are its own
      if (m.warnings && m.warnings.length) console.warn(`lightembed search server: ${m.warnings.join('; ')}`);
      this.show(m.hits, m.ms, m.keywordMatch, m.mode || 'hybrid', Boolean(m.partial));
    } else if (m.type === 'kept') {
      // The worker is idle and every file it downloaded is in Cache Storage (it writes them when
      // idle): a page opened now downloads none of them again. Tests wait for this before
      // leaving a page; a new query clears it.
      this.dataset.cacheWritten = 'true';
    } else if (m.type === 'excerpts') {
      if (m.id !== this.latest) return;
      for (const x of m.items) {
        for (const span of this.list.querySelectorAll(`[data-passage="${x.passage}"]`)) {
          span.replaceChildren(marked(x.snippet, x.highlights));
          span.dataset.filled = '';
        }
      }
      this.dataset.lastExcerptMs = (performance.now() - this.sent).toFixed(1);
    } else if (m.type === 'error') {
      // The start failed (no id), or the latest query; errors of queries since replaced are moot.
      if (m.id === this.latest) this.asking = null;
      if (m.id === undefined || m.id === this.latest) this.recover(m);
    }
  }

  // After a worker error: the fragments (and the core) are named by build, so a file gone or
  // failing its check may mean the site was rebuilt since this page read the manifest. Re-read
  // it; on a new build, start a worker there and ask again (`ready` re-runs the box's query).
  // Otherwise, or when the new build fails before its first answer, say what failed in words.
  async recover(m) {
    const conn = this.conn;
    if (!conn || conn.recovering) return;
    if (m.remote) {
      // The search server's answer (remote mode): the site's bundle is not in question.
      this.enterFor = null;
      this.error(remoteWords(m.remote, m.message));
      return;
    }
    conn.recovering = true;
    this.clearResults(); // what is listed may be the old build's
    let fresh = null;
    try { fresh = await readManifest(); } catch { /* unreachable now: said below */ }
    if (this.conn !== conn) return;
    conn.recovering = false;
    if (fresh && fresh.files && fresh.files.core !== conn.build) {
      this.stop();
      this.say('The search index was updated — loading it…');
      this.connect(true, fresh);
      return;
    }
    this.enterFor = null;
    if (conn.updated) {
      this.fail('The search index was updated — reload the page.');
    } else if (m.id === undefined) {
      this.fail(`Search is unavailable: ${m.message}`);
    } else if (m.fragment) {
      this.error(`Search failed: ${fragmentWords(m.fragment)}. Try again, or reload the page.`);
    } else {
      this.error(`Search failed: ${m.message}`);
    }
  }

  current() { return this.input.value.trim(); }

  schedule() {
    this.enterFor = null; // typing after Enter cancels it
    clearTimeout(this.pending);
    this.pending = setTimeout(() => this.search(), DEBOUNCE_MS);
  }

  search() {
    clearTimeout(this.pending);
    if (this.failed) return; // keeps the message
    const q = this.current();
    if (!q) { this.clearResults(); this.say(''); return; }
    if (!this.ready) return; // searched once ready
    this.latest = nextId++;
    this.query = q;
    this.asking = q; // until its results (or an error) come
    this.sent = performance.now();
    delete this.dataset.cacheWritten;
    this.post({ type: 'search', id: this.latest, query: q, k: 20, shown: { pages: SHOWN_PAGES, sections: SHOWN_SECTIONS } });
  }

  // Lists `hits`, ranked by `mode` ('keyword': BM25 alone, the model still loading; 'hybrid').
  // Hybrid results of the query whose keyword results are listed refine them under the rule in
  // the header: the pages from the top down to the selected one (with none selected: the first,
  // once the list was shown READ_MS — `data-keywords-read`) are kept, as they are, in their
  // places; the hybrid ranking fills the rest.
  show(hits, ms, keywordMatch, mode, partial = false) {
    const refine = mode === 'hybrid' && this.ranking === 'keyword' && this.shown === this.query;
    const closed = refine && this.list.hidden;
    const read = this.dataset.keywordsRead === 'true';
    const kept = refine ? this.options().slice(0, this.active >= 0 ? this.active + 1 : Number(read)) : [];
    const keptPages = new Set(kept.map((li) => li.dataset.page));
    this.list.replaceChildren(...kept);
    this.shown = this.query;
    this.ranking = mode;
    this.dataset.ranking = mode;
    // Keyword results posted while the query's vector side is on its way: its hybrid ranking follows.
    this.meaningComing = partial;
    clearTimeout(this.reading);
    delete this.dataset.keywordsRead;
    if (mode === 'keyword') this.reading = setTimeout(() => { this.dataset.keywordsRead = 'true'; }, READ_MS);
    if (!refine) {
      this.active = -1;
      this.input.removeAttribute('aria-activedescendant');
    }
    const pages = groupByPage(hits).filter((p) => !keptPages.has(p.page)).slice(0, SHOWN_PAGES - kept.length);
    const href = this.hasAttribute('serve') ? remoteHref : pageHref;
    const shown = [];
    // Kept pages whose excerpts have not come yet (they were asked for under the keyword query's id).
    for (const span of this.list.querySelectorAll('.lightembed-excerpt:not([data-filled])')) {
      shown.push({ passage: Number(span.dataset.passage), chunk: Number(span.dataset.chunk) });
    }
    pages.forEach((p, j) => {
      const i = kept.length + j;
      const best = p.sections[0];
      const li = el('li', {
        class: 'lightembed-page', role: 'option', id: `${this.listId}-${i}`,
        'aria-selected': 'false', 'data-testid': 'lightembed-result', 'data-page': p.page,
      });
      li.append(el('a', { class: 'lightembed-page-title', href: href(best.url) }, p.title));
      const subs = el('ul', { class: 'lightembed-sections' });
      for (const s of p.sections.slice(0, SHOWN_SECTIONS)) {
        const a = el('a', { href: href(s.url) });
        if (s.heading) a.append(el('span', { class: 'lightembed-heading' }, s.heading));
        const span = el('span', { class: 'lightembed-excerpt', 'data-passage': String(s.passage), 'data-chunk': String(s.chunk) });
        if (typeof s.snippet === 'string') {
          // Remote mode: the server sent the excerpt with the hit.
          span.append(marked(s.snippet, s.highlights));
          span.dataset.filled = '';
        } else {
          // The excerpt arrives once the passage's text chunk is fetched (`excerpts` message).
          shown.push({ passage: s.passage, chunk: s.chunk });
        }
        a.append(span);
        subs.append(el('li', {}, a));
      }
      li.append(subs);
      li.addEventListener('mousemove', () => this.select(i));
      this.list.append(li);
    });
    const count = this.options().length;
    const took = performance.now() - this.sent;
    this.dataset.lastQueryMs = took.toFixed(1);
    delete this.dataset.lastExcerptMs;
    if (shown.length) {
      this.post({ type: 'excerpts', id: this.latest, query: this.query, passages: shown });
    } else if (count) {
      this.dataset.lastExcerptMs = '0.0'; // every excerpt is already there
    }
    this.statusText = count ? `${count === 1 ? '1 page' : `${count} pages`} (${ms.toFixed(1)} ms)` : 'No results';
    // No passage holds a word of the query (the keyword side says so, not the excerpts: a word
    // only in a title counts): the ranking is by meaning alone (its best score is 1 all the
    // same), which the reader should know.
    this.meaningAlone = Boolean(count && mode === 'hybrid' && keywordMatch === false);
    if (this.meaningAlone) this.dataset.meaningAlone = 'true';
    else delete this.dataset.meaningAlone;
    this.sayResults();
    // A list the visitor closed (Esc) stays closed when its results are refined.
    this.list.hidden = count === 0 || closed;
    this.input.setAttribute('aria-expanded', String(!this.list.hidden));
    // Enter was pressed before these results came: follow the first, if they answer the box.
    if (this.enterFor !== null && this.enterFor === this.shown) {
      this.enterFor = null;
      if (this.shown === this.current()) this.follow(0);
    }
  }

  // The status line under listed results: how many, and how they are ranked while the model loads.
  sayResults() {
    if (this.ranking === 'keyword' && (!this.modelReady || this.meaningComing)) {
      const pct = this.modelReady ? null : this.loading.get('model');
      const adding = `adding meaning${pct == null ? '' : ` (model ${pct} %)`}…`;
      this.say(this.options().length ? `${this.statusText} · by keywords; ${adding}` : `No page has these words; ${adding}`);
    } else if (this.meaningAlone) {
      this.say(`${this.statusText} · none has these words: closest by meaning`);
    } else {
      this.say(this.statusText);
    }
  }

  // Empties the list: nothing it showed can be followed any more.
  clearResults() {
    this.list.replaceChildren();
    this.shown = undefined;
    this.ranking = undefined;
    delete this.dataset.ranking;
    clearTimeout(this.reading);
    delete this.dataset.keywordsRead;
    this.close();
  }

  options() { return [...this.list.querySelectorAll('[role="option"]')]; }

  select(i) {
    const opts = this.options();
    opts.forEach((o, j) => o.setAttribute('aria-selected', String(j === i)));
    this.active = i;
    if (opts[i]) {
      this.input.setAttribute('aria-activedescendant', opts[i].id);
      opts[i].scrollIntoView({ block: 'nearest' });
    }
  }

  follow(i) {
    const opt = this.options()[Math.max(i, 0)];
    const a = opt && opt.querySelector('a');
    if (a) window.location.href = a.href;
  }

  close() {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
    this.active = -1;
  }

  key(e) {
    // The listed results answer `this.shown`; ↓ ↑ Enter act on them only while the box holds that
    // query. After Backspace, Esc Esc or new typing they are stale until the new ones come.
    const q = this.current();
    const opts = q && q === this.shown ? this.options() : [];
    if (e.key === 'ArrowDown' && opts.length) {
      e.preventDefault();
      this.list.hidden = false;
      this.input.setAttribute('aria-expanded', 'true');
      this.select((this.active + 1) % opts.length);
    } else if (e.key === 'ArrowUp' && opts.length) {
      e.preventDefault();
      this.select(this.active <= 0 ? opts.length - 1 : this.active - 1);
    } else if (e.key === 'Enter') {
      // An empty box: nothing to follow. The box's results listed: the selected (or first).
      // Not yet: wait for them (asked now if they are not on their way; after an error, this
      // asks again) and follow the first.
      if (!q) return;
      if (opts.length) {
        e.preventDefault();
        this.follow(this.active);
      } else if (q !== this.shown) {
        e.preventDefault();
        this.enterFor = q;
        if (this.asking !== q) this.search();
      }
    } else if (e.key === 'Escape') {
      // First Esc closes the list (and keeps the query: the browser's own clear of a search box
      // is prevented); a second Esc clears the box, and the list with it.
      if (!this.list.hidden) {
        e.preventDefault();
        this.close();
      } else {
        this.input.value = '';
        this.enterFor = null;
        this.search();
      }
    }
  }
}

// Whether a key pressed in `t` is typed into a field (a text box, a select, an editable region).
function typingIn(t) {
  if (!(t instanceof Element)) return false;
  if (t.isContentEditable || t.matches('textarea, select')) return true;
  return t.matches('input') && !/^(button|checkbox|color|file|image|radio|range|reset|submit)$/i.test(t.type);
}

// The shortcut, for the whole page: `/` or Ctrl-K (⌘K on a Mac) focuses (and selects the text
// of) the first box that is shown and has no shortcut="off". Ctrl-K in that box selects its text;
// `/` there, and either key in any other field, is left alone, as is a key a page handler took.
function shortcut(e) {
  if (e.defaultPrevented || e.isComposing || e.altKey || typeof e.key !== 'string') return;
  const ctrlK = (e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 'k';
  const slash = e.key === '/' && !e.ctrlKey && !e.metaKey;
  if (!ctrlK && !slash) return;
  const box = [...document.querySelectorAll('lightembed-search')].find((w) => w.input
    && w.getAttribute('shortcut') !== 'off' && w.input.getClientRects().length > 0);
  if (!box) return;
  const target = e.composedPath()[0];
  if (target === box.input) {
    if (ctrlK) { e.preventDefault(); box.input.select(); }
    return;
  }
  if (typingIn(target)) return;
  e.preventDefault(); // Ctrl-K would go to the browser's address bar, `/` to find-in-page
  box.input.focus();
  box.input.select();
}

if (!customElements.get('lightembed-search')) {
  customElements.define('lightembed-search', LightembedSearch);
  document.addEventListener('keydown', shortcut);
}
