// <lightembed-search>: search a static site by meaning and keywords, entirely in the browser.
//
//   <link rel="stylesheet" href="/lightembed/lightembed-ui.css">
//   <script type="module" src="/lightembed/lightembed-ui.js"></script>
//   <lightembed-search placeholder="Search the docs"></lightembed-search>
//
// Nothing is fetched until the visitor focuses the box. Then a worker loads the model and the
// index written by `lightembed site` (verified, cached across pages and visits) and answers each
// query with hybrid (BM25 + vector) ranking. Results are grouped by page, with the page's
// matching sections under it; the query's words are marked — as text nodes in <mark>, never as
// HTML. Keyboard: ↓ ↑ move through the pages, Enter follows the selected (or first) result, Esc
// closes the list (a second Esc clears the box). ARIA: combobox + listbox. Works under a
// sub-path: every URL is resolved against this file's own URL.
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
// The smallest module using a SIMD128 instruction (i8x16 splat / popcnt); the engine needs SIMD.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1,
  0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
const DEBOUNCE_MS = 60;
let nextId = 0;

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
    // Titles are "Heading — Page title" (or the page title alone).
    const cut = h.title.lastIndexOf(' — ');
    const pageTitle = cut >= 0 ? h.title.slice(cut + 3) : h.title;
    const heading = cut >= 0 ? h.title.slice(0, cut) : '';
    if (!pages.has(page)) pages.set(page, { page, title: pageTitle, sections: [] });
    pages.get(page).sections.push({ ...h, heading });
  }
  return [...pages.values()];
}

class LightembedSearch extends HTMLElement {
  connectedCallback() {
    if (this.input) return;
    const n = nextId++;
    this.listId = `lightembed-list-${n}`;
    this.input = el('input', {
      type: 'search', class: 'lightembed-input', role: 'combobox', 'aria-expanded': 'false',
      'aria-controls': this.listId, 'aria-autocomplete': 'list', autocomplete: 'off',
      spellcheck: 'false', 'data-testid': 'lightembed-query',
      placeholder: this.getAttribute('placeholder') || 'Search this site',
      'aria-label': this.getAttribute('label') || 'Search this site',
    });
    this.status = el('p', { class: 'lightembed-status', 'aria-live': 'polite', 'data-testid': 'lightembed-status' });
    this.list = el('ul', { class: 'lightembed-results', role: 'listbox', id: this.listId, hidden: '' });
    this.append(el('div', { class: 'lightembed' }, this.input, this.status, this.list));
    this.active = -1;
    this.pending = null;
    this.input.addEventListener('focus', () => this.start(), { once: true });
    this.input.addEventListener('input', () => this.schedule());
    this.input.addEventListener('keydown', (e) => this.key(e));
  }

  start() {
    if (this.worker || this.failed) return;
    if (!WebAssembly.validate(SIMD_PROBE)) {
      this.fail('Search needs a browser with WebAssembly SIMD (Chrome 91+, Firefox 89+, Safari 16.4+).');
      return;
    }
    this.t0 = performance.now();
    this.say('Loading search…');
    const manifest = new URL('manifest.json', BUNDLE).href;
    // The manifest names this build's files; its wasm name versions the worker and its glue, so
    // an upgraded site never runs an old cached worker against a new wasm.
    this.worker = fetch(manifest, { cache: 'no-cache' })
      .then((r) => { if (!r.ok) throw new Error(`${manifest}: HTTP ${r.status}`); return r.json(); })
      .then((m) => {
        const url = new URL('lightembed-worker.js', BUNDLE);
        url.searchParams.set('v', m.files.wasm);
        const worker = new Worker(url, { type: 'module' });
        worker.onmessage = (e) => this.message(e.data);
        worker.onerror = (e) => this.fail(`Search failed to start: ${e.message || 'worker error'}`);
        worker.postMessage({ type: 'init', manifest });
        return worker;
      })
      .catch((err) => { this.fail(`Search is unavailable: ${err.message}`); return null; });
  }

  fail(message) {
    this.failed = true;
    this.say(message);
    this.status.classList.add('lightembed-error');
  }

  say(text) { this.status.textContent = text; }

  message(m) {
    if (m.type === 'progress') {
      const pct = m.total ? ` ${Math.round((100 * m.loaded) / m.total)} %` : '';
      this.say(`Loading search (${m.what}${pct})…`);
    } else if (m.type === 'ready') {
      this.ready = true;
      this.dataset.ready = 'true';
      this.dataset.readyMs = String(Math.round(performance.now() - this.t0));
      this.dataset.fromCache = `${m.fromCache.model},${m.fromCache.index}`;
      this.say('');
      if (this.input.value.trim()) this.search();
    } else if (m.type === 'results') {
      if (m.id === this.latest) this.show(m.hits, m.ms);
    } else if (m.type === 'excerpts') {
      if (m.id !== this.latest) return;
      for (const x of m.items) {
        for (const span of this.list.querySelectorAll(`[data-passage="${x.passage}"]`)) {
          span.replaceChildren(marked(x.snippet, x.highlights));
        }
      }
      // No shown passage holds a word of the query: the ranking is by meaning alone (its best
      // score is 1 all the same), which the reader should know.
      if (m.items.length && m.items.every((x) => !x.highlights || x.highlights.length === 0)) {
        this.dataset.meaningAlone = 'true';
        this.say(`${this.statusText} · none has these words: closest by meaning`);
      }
      this.dataset.lastExcerptMs = (performance.now() - this.sent).toFixed(1);
    } else if (m.type === 'error') {
      if (m.id === undefined) this.fail(`Search is unavailable: ${m.message}`);
      else this.say(m.message);
    }
  }

  schedule() {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => this.search(), DEBOUNCE_MS);
  }

  search() {
    const q = this.input.value.trim();
    if (!q) { this.close(); this.say(''); return; }
    if (!this.ready) return; // searched once ready
    this.latest = nextId++;
    this.query = q;
    this.sent = performance.now();
    const id = this.latest;
    this.worker.then((w) => w && w.postMessage({ type: 'search', id, query: q, k: 20 }));
  }

  show(hits, ms) {
    this.list.replaceChildren();
    this.active = -1;
    this.input.removeAttribute('aria-activedescendant');
    const pages = groupByPage(hits).slice(0, 8);
    const shown = [];
    pages.forEach((p, i) => {
      const best = p.sections[0];
      const li = el('li', {
        class: 'lightembed-page', role: 'option', id: `${this.listId}-${i}`,
        'aria-selected': 'false', 'data-testid': 'lightembed-result',
      });
      li.append(el('a', { class: 'lightembed-page-title', href: pageHref(best.url) }, p.title));
      const subs = el('ul', { class: 'lightembed-sections' });
      for (const s of p.sections.slice(0, 3)) {
        const a = el('a', { href: pageHref(s.url) });
        if (s.heading) a.append(el('span', { class: 'lightembed-heading' }, s.heading));
        // The excerpt arrives once the passage's text chunk is fetched (`excerpts` message).
        a.append(el('span', { class: 'lightembed-excerpt', 'data-passage': String(s.passage) }));
        shown.push({ passage: s.passage, chunk: s.chunk });
        subs.append(el('li', {}, a));
      }
      li.append(subs);
      li.addEventListener('mousemove', () => this.select(i));
      this.list.append(li);
    });
    const took = performance.now() - this.sent;
    this.dataset.lastQueryMs = took.toFixed(1);
    delete this.dataset.lastExcerptMs;
    if (shown.length) {
      this.worker.then((w) => w && w.postMessage({ type: 'excerpts', id: this.latest, query: this.query, passages: shown }));
    }
    delete this.dataset.meaningAlone;
    this.statusText = pages.length ? `${pages.length} pages (${ms.toFixed(1)} ms)` : 'No results';
    this.say(this.statusText);
    this.list.hidden = pages.length === 0;
    this.input.setAttribute('aria-expanded', String(pages.length > 0));
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

  close() {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
    this.active = -1;
  }

  key(e) {
    const opts = this.options();
    if (e.key === 'ArrowDown' && opts.length) {
      e.preventDefault();
      this.list.hidden = false;
      this.input.setAttribute('aria-expanded', 'true');
      this.select((this.active + 1) % opts.length);
    } else if (e.key === 'ArrowUp' && opts.length) {
      e.preventDefault();
      this.select(this.active <= 0 ? opts.length - 1 : this.active - 1);
    } else if (e.key === 'Enter') {
      const opt = opts[Math.max(this.active, 0)];
      const a = opt && opt.querySelector('a');
      if (a) { e.preventDefault(); window.location.href = a.href; }
    } else if (e.key === 'Escape') {
      // First Esc closes the list (and keeps the query: the browser's own clear of a search box
      // is prevented); a second Esc clears the box.
      if (!this.list.hidden) { e.preventDefault(); this.close(); } else { this.input.value = ''; this.say(''); }
    }
  }
}

if (!customElements.get('lightembed-search')) customElements.define('lightembed-search', LightembedSearch);
