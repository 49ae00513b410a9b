#!/usr/bin/env node
"use strict";
// `lightembed` from the npm package (`npx lightembed site --site public`): no Rust toolchain,
// Node ≥ 20 only. `site` runs the site build library (compiled to wasm) with Node doing the file
// I/O and embedding on every core; every other command, and `site --help` or a `site` command
// line this launcher does not take apart itself, runs the CLI compiled to WASI — so flags,
// messages and exit codes are the native CLI's.

const { runWasi } = require("../lib/wasi.js");

const SITE_FLAGS = new Set(["--site", "--model", "--dims", "--exclude", "--root-selector"]);
const SITE_SWITCHES = new Set(["--no-default-excludes", "-q", "--quiet", "--full-model", "--no-gzip"]);

/** `lightembed site` options, or null when the WASI CLI should answer (help, a usage error). */
function parseSite(args) {
  const o = { exclude: [], defaultExcludes: true, quiet: false, fullModel: false };
  const seen = new Set();
  for (let i = 0; i < args.length; i++) {
    let a = args[i];
    let value;
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    if (eq > 0) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    if (SITE_SWITCHES.has(a)) {
      if (value !== undefined || seen.has(a === "-q" ? "--quiet" : a)) return null;
      seen.add(a === "-q" ? "--quiet" : a);
      if (a === "--no-default-excludes") o.defaultExcludes = false;
      else if (a === "--full-model") o.fullModel = true;
      else if (a === "--no-gzip") o.gzip = false;
      else o.quiet = true;
      continue;
    }
    if (!SITE_FLAGS.has(a)) return null;
    if (value === undefined) {
      if (i + 1 >= args.length) return null;
      value = args[++i];
    }
    if (a !== "--exclude" && seen.has(a)) return null;
    seen.add(a);
    if (a === "--site") o.site = value;
    else if (a === "--model") o.model = value;
    else if (a === "--root-selector") o.rootSelector = value;
    else if (a === "--exclude") o.exclude.push(value);
    else if (a === "--dims") {
      if (!/^\d{1,9}$/.test(value)) return null;
      o.dims = Number(value);
    }
  }
  return o.site === undefined ? null : o;
}

async function main(argv) {
  if (argv[0] === "site") {
    const o = parseSite(argv.slice(1));
    if (o) {
      const { buildSite } = require("../lib/site.js");
      const { warn } = require("../lib/io.js");
      try {
        const r = await buildSite(o);
        process.stdout.write(r.summary + "\n");
        if (r.skipped > 0) {
          const what = r.skipped === 1 ? "input" : "inputs";
          warn(`warning: ${r.skipped} ${what} skipped (named above); exit code 4`);
          return 4;
        }
        return 0;
      } catch (err) {
        warn(`error: ${String(err.message).replace(/\n/g, " ")}`);
        return err.exitCode ?? 1;
      }
    }
  }
  return runWasi(argv);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`error: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 1;
  },
);
