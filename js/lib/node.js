"use strict";
// The npm package's Node entry: the engine and index classes (pkg/node, wasm-bindgen) plus the
// site build in Pagefind's shape (`createIndex` → `addDirectory` / `addHTMLFile` /
// `addCustomRecord` → `writeFiles`), `buildSite` (what `npx lightembed site` runs) and
// `loadModel`. Errors are rejected promises whose message is the native CLI's.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const wasm = require("../pkg/node/lightembed_wasm.js");
const { LightembedError, ioMessage, joinPath } = require("./io.js");
const site = require("./site.js");
const { embedParallel } = require("./embed-pool.js");

/** Names of the models shipped in the package, for `loadModel(name)`. */
const BUNDLED_MODELS = { "lightembed-en-static": site.DEFAULT_MODEL };

/**
 * Loads and fully verifies a model: a path to a `.bin`, or a bundled name
 * (`"lightembed-en-static"`, the default).
 */
async function loadModel(pathOrName = "lightembed-en-static") {
  const file = BUNDLED_MODELS[pathOrName] ?? pathOrName;
  let bytes;
  try {
    bytes = await fs.promises.readFile(file);
  } catch (err) {
    throw new LightembedError(`cannot read ${pathOrName}: ${ioMessage(err)}`);
  }
  try {
    return wasm.Model.fromBytes(bytes);
  } catch (err) {
    const e = new LightembedError(`${pathOrName}: ${err.message}`);
    e.rule = err.rule;
    throw e;
  }
}

function expectString(value, what) {
  if (typeof value !== "string") {
    throw new LightembedError(`${what} must be a string, not ${value === null ? "null" : typeof value}`);
  }
}

/** A site index being built: see `createIndex`. */
class SiteIndexBuilder {
  constructor(options) {
    const o = { exclude: [], defaultExcludes: true, fullModel: false, gzip: true, ...options };
    if (!Array.isArray(o.exclude) || o.exclude.some((g) => typeof g !== "string")) {
      throw new LightembedError("exclude must be an array of glob strings");
    }
    if (o.dims !== undefined && !(Number.isInteger(o.dims) && o.dims > 0)) {
      throw new LightembedError(`dims must be a positive integer, not ${JSON.stringify(o.dims)}`);
    }
    const model = site.readModel(o.model);
    try {
      this._builder = new wasm.SiteBuilder(model.bytes, model.name, o.dims, o.fullModel, o.rootSelector, o.gzip !== false);
      this._pages = new wasm.SitePages(o.exclude, o.defaultExcludes);
    } catch (err) {
      throw new LightembedError(err.message);
    }
    this._threads = Math.max(1, o.threads ?? os.availableParallelism());
    this._files = 0;
    this._excluded = 0;
    this._skipped = [];
    this._bundle = null;
    this._siteDir = null;
  }

  _open() {
    if (!this._builder) throw new LightembedError("this index was already written; create a new one to add pages");
    return this._builder;
  }

  /**
   * Adds every page of a built site folder, as `lightembed site` reads it (sorted, hidden
   * entries and excluded paths left out). Resolves to `{ pages, passages, skipped }`.
   */
  async addDirectory({ path: dir } = {}) {
    expectString(dir, "addDirectory: path");
    const b = this._open();
    let isDir = false;
    try {
      isDir = fs.statSync(dir).isDirectory();
    } catch {}
    if (!isDir) throw new LightembedError(`--site ${dir}: not a folder`);
    const before = { pages: b.documents, passages: b.passages };
    const read = site.readSite(dir, b, this._pages);
    this._files += read.files;
    this._excluded += read.excluded;
    this._siteDir ??= dir;
    return { pages: b.documents - before.pages, passages: b.passages - before.passages, skipped: read.skipped };
  }

  /**
   * Adds one HTML page: `content` (string or bytes) served at `url`, or at the URL of
   * `sourcePath` (relative to the site root) when `url` is not given. Resolves to `{ passages }`.
   */
  async addHTMLFile({ url, sourcePath, content } = {}) {
    const b = this._open();
    if (typeof content !== "string" && !(content instanceof Uint8Array)) {
      throw new LightembedError("addHTMLFile: content must be a string or a Uint8Array");
    }
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    let outcome;
    if (url !== undefined) {
      expectString(url, "addHTMLFile: url");
      outcome = b.addHtml(url, bytes);
    } else {
      expectString(sourcePath, "addHTMLFile: url or sourcePath");
      outcome = b.addPage(sourcePath.split(path.sep).join("/"), bytes);
    }
    this._files += 1;
    if (outcome.skipped) throw new LightembedError(`${url ?? sourcePath}: ${outcome.skipped}`);
    return { passages: outcome.passages };
  }

  /**
   * Adds a record that is not an HTML page: `content` (plain text) at `url`, titled
   * `meta.title`. Resolves to `{ passages }`.
   */
  async addCustomRecord({ url, content, meta = {} } = {}) {
    const b = this._open();
    expectString(url, "addCustomRecord: url");
    expectString(content, "addCustomRecord: content");
    const title = meta.title ?? "";
    expectString(title, "addCustomRecord: meta.title");
    try {
      return { passages: b.addRecord(url, title, content) };
    } catch (err) {
      throw new LightembedError(err.message);
    }
  }

  /** Embeds and assembles the bundle (once); further adds are refused. */
  async _build() {
    if (this._bundle) return this._bundle;
    const b = this._open();
    this._builder = null;
    let prepared;
    try {
      prepared = b.prepare(this._files, this._excluded);
    } catch (err) {
      throw new LightembedError(err.message);
    } finally {
      b.free();
      this._pages.free();
    }
    try {
      const vectors = await embedParallel(prepared, this._threads, null);
      const w = site.widgetWasm(prepared);
      this._bundle = prepared.assemble(vectors, w.wasm, w.js);
    } catch (err) {
      throw new LightembedError(err.message);
    } finally {
      prepared.free();
    }
    return this._bundle;
  }

  /** The bundle's files without writing them: `{ files: [{ path, content: Uint8Array }] }`. */
  async getFiles() {
    const bundle = await this._build();
    return { files: bundle.files().map(([p, content]) => ({ path: p, content })) };
  }

  /**
   * Writes the bundle to `outputPath` (default: `lightembed/` in the first folder given to
   * `addDirectory`), replacing an earlier bundle there whole. Resolves to
   * `{ outputPath, pages, passages }`.
   */
  async writeFiles({ outputPath } = {}) {
    const out = outputPath ?? (this._siteDir != null ? joinPath(this._siteDir, site.BUNDLE_DIR) : undefined);
    expectString(out, "writeFiles: outputPath");
    site.checkBundleDir(out);
    const bundle = await this._build();
    const parent = path.dirname(out);
    try {
      fs.mkdirSync(parent, { recursive: true });
    } catch (err) {
      throw new LightembedError(`cannot create ${parent}: ${ioMessage(err)}`);
    }
    const tmp = joinPath(parent, `.${site.BUNDLE_DIR}-new-${process.pid}`);
    try {
      site.writeFiles(tmp, bundle.files());
      site.swap(tmp, out, parent);
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
    return { outputPath: out, pages: bundle.pages, passages: bundle.passages };
  }
}

/**
 * A new site index (Pagefind's `createIndex`). options: `model` (path of a `.bin`; default the
 * shipped static model), `dims`, `fullModel`, `rootSelector`, `exclude` (globs for
 * `addDirectory`), `defaultExcludes` (default true), `gzip` (default true), `threads`.
 */
async function createIndex(options = {}) {
  return new SiteIndexBuilder(options);
}

// One assignment per name (not `...wasm`), so Node's ES module loader sees every name:
// `import { Model, createIndex } from "lightembed"`.
exports.Model = wasm.Model;
exports.SearchIndex = wasm.SearchIndex;
exports.SiteIndex = wasm.SiteIndex;
exports.SiteBuilder = wasm.SiteBuilder;
exports.SitePages = wasm.SitePages;
exports.PreparedSite = wasm.PreparedSite;
exports.SiteBundle = wasm.SiteBundle;
exports.createIndex = createIndex;
exports.buildSite = site.buildSite;
exports.loadModel = loadModel;
exports.LightembedError = LightembedError;
