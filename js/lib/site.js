"use strict";
// `lightembed site` for Node: the same library call as the native CLI (`lightembed_build::site`,
// compiled into pkg/node), with Node doing the file I/O and embedding on every core
// (worker_threads). The same site gives the same bundle, byte for byte, as the native CLI.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const wasm = require("../pkg/node/lightembed_wasm.js");
const { LightembedError, ioMessage, joinPath, walk, warn } = require("./io.js");
const { embedParallel } = require("./embed-pool.js");

/** The folder the bundle is written to, inside the site. */
const BUNDLE_DIR = "lightembed";
/** The model used without `model`: the shipped static model. */
const DEFAULT_MODEL = path.join(__dirname, "../pkg/models/lightembed-en-static.bin");
/**
 * The widget's own wasm build for the bundle of `prepared` (a wasm `PreparedSite`), as the bundle
 * ships it: what a visitor's browser runs (js/build.sh's widget builds, not pkg/web) —
 * pkg/widget (search-only: the query embedded from the bundle's query side) for a static model,
 * pkg/widget-model (with Model) for a transformer.
 */
function widgetWasm(prepared) {
  const dir = path.join(__dirname, prepared.staticModel ? "../pkg/widget" : "../pkg/widget-model");
  return {
    wasm: fs.readFileSync(path.join(dir, "lightembed_wasm_bg.wasm")),
    js: fs.readFileSync(path.join(dir, "lightembed_wasm.js"), "utf8"),
  };
}

/** The model bytes and the name errors give it. */
function readModel(modelPath) {
  if (modelPath == null) {
    return { bytes: fs.readFileSync(DEFAULT_MODEL), name: "the built-in model" };
  }
  try {
    return { bytes: fs.readFileSync(modelPath), name: modelPath };
  } catch (err) {
    throw new LightembedError(`cannot read ${modelPath}: ${ioMessage(err)}`);
  }
}

/** True when the folder holds an `.html`/`.htm` file anywhere (hidden folders included). */
function hasPages(dir) {
  const stack = [dir];
  const seen = new Set();
  while (stack.length) {
    const d = stack.pop();
    let real;
    try {
      real = fs.realpathSync(d);
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    let names;
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const name of names) {
      const p = joinPath(d, name);
      let st;
      try {
        st = fs.statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) stack.push(p);
      else if (st.isFile() && /\.html?$/i.test(name)) return true;
    }
  }
  return false;
}

/** Refuses a `SITE/lightembed` that exists and is not a bundle this tool wrote. */
function checkBundleDir(bundle) {
  let entries;
  try {
    entries = fs.readdirSync(bundle);
  } catch {
    let exists = false;
    try {
      fs.lstatSync(bundle);
      exists = true;
    } catch {}
    let isDir = false;
    try {
      isDir = fs.statSync(bundle).isDirectory();
    } catch {}
    if (exists && !isDir) {
      throw new LightembedError(
        `${bundle} exists and is not a folder; lightembed site writes its bundle there: move it away first`,
      );
    }
    return;
  }
  if (entries.length === 0) return;
  let ours = false;
  try {
    ours = JSON.parse(fs.readFileSync(path.join(bundle, "manifest.json"), "utf8")).bundle_version !== undefined;
  } catch {}
  if (!ours) {
    throw new LightembedError(
      `${bundle} exists and is not a lightembed bundle (no manifest.json written by \`lightembed site\`); ` +
        "lightembed site replaces that folder whole, so move it away or rename it first",
    );
  }
}

const tempPrefix = (kind) => `.${BUNDLE_DIR}-${kind}-`;

function alive(pid) {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** Removes `.lightembed-new-PID` / `.lightembed-old-PID` folders an interrupted run left. */
function removeStaleTemps(site) {
  let names;
  try {
    names = fs.readdirSync(site);
  } catch {
    return;
  }
  for (const name of names) {
    const kind = ["new", "old"].find((k) => name.startsWith(tempPrefix(k)));
    if (!kind) continue;
    const pidText = name.slice(tempPrefix(kind).length);
    if (!/^\d+$/.test(pidText) || alive(Number(pidText))) continue;
    const p = joinPath(site, name);
    try {
      if (!fs.statSync(p).isDirectory()) continue;
      fs.rmSync(p, { recursive: true, force: true });
      warn(`removed ${p}, left by an interrupted run`);
    } catch (err) {
      warn(`warning: cannot remove ${p} (left by an interrupted run): ${ioMessage(err)}`);
    }
  }
}

/** Writes `files` (`[rel, bytes]`) under `dir`. */
function writeFiles(dir, files) {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new LightembedError(`cannot create ${dir}: ${ioMessage(err)}`);
  }
  for (const [name, bytes] of files) {
    const p = joinPath(dir, name);
    const parent = path.dirname(p);
    try {
      fs.mkdirSync(parent, { recursive: true });
    } catch (err) {
      throw new LightembedError(`cannot create ${parent}: ${ioMessage(err)}`);
    }
    try {
      fs.writeFileSync(p, bytes);
    } catch (err) {
      throw new LightembedError(`cannot write ${p}: ${ioMessage(err)}`);
    }
  }
}

/** Replaces `bundle` by `tmp` (old moved aside, new renamed in, old removed; put back on failure). */
function swap(tmp, bundle, site) {
  const old = joinPath(site, `${tempPrefix("old")}${process.pid}`);
  const hadOld = fs.existsSync(bundle);
  if (hadOld) {
    try {
      fs.renameSync(bundle, old);
    } catch (err) {
      throw new LightembedError(`cannot move the old ${bundle} aside: ${ioMessage(err)}`);
    }
  }
  try {
    fs.renameSync(tmp, bundle);
  } catch (err) {
    if (hadOld) {
      try {
        fs.renameSync(old, bundle);
      } catch {}
    }
    throw new LightembedError(`cannot move the new bundle to ${bundle}: ${ioMessage(err)}`);
  }
  if (hadOld) fs.rmSync(old, { recursive: true, force: true });
}

/**
 * Reads a site's pages into a `SiteBuilder` as `lightembed site` does. Returns
 * `{ builder, files, skipped, excluded }`.
 */
function readSite(site, builder, pages) {
  const files = [];
  const seen = new Set();
  let skipped = 0;
  let excluded = 0;
  walk(
    site,
    (full, rel) => {
      if (!/\.(html?|md|markdown|txt|jsonl)$/i.test(rel)) return;
      if (pages.isExcluded(rel) || !pages.isPage(rel)) {
        excluded += 1;
        return;
      }
      let key = full;
      try {
        key = fs.realpathSync(full);
      } catch {}
      if (seen.has(key)) return;
      seen.add(key);
      files.push({ full, rel });
    },
    (full, err, isLink) => {
      // A dangling link to something never read (a `fonts` folder linked to a system package)
      // is not a skipped input.
      if (isLink && !/\.(html?|md|markdown|txt|jsonl)$/i.test(full)) return;
      warn(`warning: skipping ${full}: ${ioMessage(err)}`);
      skipped += 1;
    },
  );
  for (const f of files) {
    let bytes;
    try {
      bytes = fs.readFileSync(f.full);
    } catch (err) {
      warn(`warning: skipping ${f.full}: cannot read: ${ioMessage(err)}`);
      skipped += 1;
      continue;
    }
    const page = builder.addPage(f.rel, bytes);
    if (page.skipped) {
      warn(`warning: skipping ${f.full}: ${page.skipped}`);
      skipped += 1;
    }
    if (page.warning) warn(`warning: ${f.full}: ${page.warning}`);
  }
  return { files: files.length, skipped, excluded };
}

/**
 * Builds the search bundle of the static site in `options.site` and writes it to
 * `SITE/lightembed/` (swapped in whole: a failed run leaves the old bundle as it was).
 *
 * options: `site` (folder), `model` (path of a `.bin`; default the shipped static model), `dims`,
 * `exclude` (globs), `defaultExcludes` (default true), `fullModel`, `rootSelector`, `quiet`,
 * `gzip` (default true: the binary files stored gzip-compressed; false is `--no-gzip`),
 * `threads` (embedding threads; default the machine's cores).
 * Resolves to `{ bundle, pages, passages, skipped, summary, seconds }`; rejects with a
 * `LightembedError` carrying the native CLI's message.
 */
async function buildSite(options) {
  const t0 = process.hrtime.bigint();
  const o = { defaultExcludes: true, quiet: false, fullModel: false, gzip: true, exclude: [], ...options };
  const site = o.site;
  if (typeof site !== "string" || site === "") throw new LightembedError("--site: a folder is needed");
  let isDir = false;
  try {
    isDir = fs.statSync(site).isDirectory();
  } catch {}
  if (!isDir) {
    let dangling = false;
    try {
      dangling = fs.lstatSync(site).isSymbolicLink();
    } catch {}
    throw new LightembedError(`--site ${site}: not a folder${dangling ? " (a link to a missing folder)" : ""}`);
  }
  if (!hasPages(site)) {
    throw new LightembedError(
      `--site ${site}: no .html or .htm pages in this folder (lightembed site indexes a built site's HTML pages)`,
    );
  }
  const bundle = joinPath(site, BUNDLE_DIR);
  checkBundleDir(bundle);
  removeStaleTemps(site);
  const model = readModel(o.model);
  let builder;
  let pages;
  try {
    builder = new wasm.SiteBuilder(model.bytes, model.name, o.dims ?? undefined, o.fullModel, o.rootSelector ?? undefined, o.gzip !== false);
    pages = new wasm.SitePages(o.exclude, o.defaultExcludes);
  } catch (err) {
    throw new LightembedError(err.message);
  }
  const read = readSite(site, builder, pages);
  pages.free();
  const passages = builder.passages;
  const documents = builder.documents;
  let prepared;
  try {
    prepared = builder.prepare(read.files, read.excluded);
  } catch (err) {
    throw new LightembedError(err.message);
  } finally {
    builder.free();
  }
  const threads = Math.max(1, o.threads ?? os.availableParallelism());
  if (!o.quiet) {
    if (prepared.siteModelNote) warn(prepared.siteModelNote);
    warn(
      `${count(read.files, "file")} (${read.excluded} excluded) → ${count(documents, "document")}, ${count(passages, "passage")}; ` +
        `model ${prepared.modelId} v${prepared.modelVersion}, ${prepared.dims} dims, ${threads} threads`,
    );
  }
  let built;
  try {
    const vectors = await embedParallel(prepared, threads, o.quiet ? null : progressLine(passages));
    const w = widgetWasm(prepared);
    built = prepared.assemble(vectors, w.wasm, w.js);
  } catch (err) {
    throw err instanceof LightembedError ? err : new LightembedError(err.message);
  } finally {
    prepared.free();
  }
  const tmp = joinPath(site, `${tempPrefix("new")}${process.pid}`);
  try {
    writeFiles(tmp, built.files());
    swap(tmp, bundle, site);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    built.free();
    throw err;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const result = {
    bundle,
    pages: built.pages,
    passages: built.passages,
    skipped: read.skipped,
    seconds,
    summary: built.summary(bundle, seconds),
  };
  built.free();
  return result;
}

/** `n` and the noun, singular for 1 (as the native CLI's messages count). */
const count = (n, noun) => (n === 1 ? `1 ${noun}` : `${n} ${noun}s`);

/** Progress on stderr while embedding, drawn only on a terminal (as the native CLI's bar). */
function progressLine(total) {
  if (!process.stderr.isTTY) return null;
  return (done) => {
    process.stderr.write(`\r embedding ${done}/${total} passages`);
    if (done >= total) process.stderr.write("\r\x1b[K");
  };
}

module.exports = { buildSite, readSite, readModel, widgetWasm, BUNDLE_DIR, DEFAULT_MODEL, writeFiles, swap, checkBundleDir };
