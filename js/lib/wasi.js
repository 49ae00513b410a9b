"use strict";
// Runs the lightembed CLI compiled to WASI (pkg/cli/lightembed.wasm, built by js/build.sh from
// the same crate as the native binary) under Node's WASI: the same flags, messages, output and
// exit codes as the native `lightembed`. The file system is the host's (preopened at `/`), the
// working folder is passed in LIGHTEMBED_CWD and the process id in LIGHTEMBED_PID.

const fs = require("node:fs");
const path = require("node:path");

const CLI_WASM = path.join(__dirname, "../pkg/cli/lightembed.wasm");
let compiled = null;

/** Runs `lightembed ARGS…`; resolves to its exit code. Output goes to this process's stdio. */
function runWasi(args) {
  // Node ≤ 22 prints an ExperimentalWarning for node:wasi; it is not the user's concern.
  const emit = process.emitWarning;
  process.emitWarning = (w, ...rest) => {
    if (String(w && w.message ? w.message : w).includes("WASI")) return;
    emit.call(process, w, ...rest);
  };
  const { WASI } = require("node:wasi");
  process.emitWarning = emit;
  const wasi = new WASI({
    version: "preview1",
    args: ["lightembed", ...args],
    env: { ...process.env, LIGHTEMBED_CWD: process.cwd(), LIGHTEMBED_PID: String(process.pid) },
    preopens: { "/": "/" },
    returnOnExit: true,
  });
  compiled ??= new WebAssembly.Module(fs.readFileSync(CLI_WASM));
  const instance = new WebAssembly.Instance(compiled, wasi.getImportObject());
  return wasi.start(instance);
}

module.exports = { runWasi, CLI_WASM };
