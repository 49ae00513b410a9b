"use strict";
// Embedding on every core with worker_threads: each worker loads the model once (the wasm engine,
// SIMD128) and embeds batches of passages; results land in passage order. The vectors are the
// ones `Model.embed` gives in this thread (the same code), so the bundle does not depend on the
// number of threads.

const { Worker } = require("node:worker_threads");
const path = require("node:path");

/** Passages per batch handed to a worker. */
const BATCH = 256;
/** Below this many passages the work is done in this thread (starting workers costs more). */
const MIN_PARALLEL = 2048;

/**
 * Embeds every passage of `prepared` (a wasm `PreparedSite`) with `threads` workers; returns
 * `passages × dims` floats in passage order. `progress(done)` is called as batches finish.
 */
async function embedParallel(prepared, threads, progress) {
  const n = prepared.passages;
  const dims = prepared.dims;
  const out = new Float32Array(n * dims);
  if (threads <= 1 || n < MIN_PARALLEL) {
    for (let s = 0; s < n; s += BATCH) {
      const e = Math.min(n, s + BATCH);
      out.set(prepared.embedRange(s, e), s * dims);
      if (progress) progress(e);
    }
    return out;
  }
  const modelBytes = prepared.modelBytes();
  const batches = [];
  for (let s = 0; s < n; s += BATCH) batches.push([s, Math.min(n, s + BATCH)]);
  let next = 0;
  let done = 0;
  const workers = [];
  try {
    await Promise.all(
      Array.from({ length: Math.min(threads, batches.length) }, () =>
        new Promise((resolve, reject) => {
          const w = new Worker(path.join(__dirname, "embed-worker.js"), { workerData: { modelBytes, dims } });
          workers.push(w);
          let current = null;
          const feed = () => {
            if (next >= batches.length) {
              current = null;
              resolve();
              return;
            }
            current = batches[next++];
            w.postMessage({ texts: prepared.texts(current[0], current[1]) });
          };
          w.on("message", (msg) => {
            if (msg.error) {
              reject(new Error(msg.error));
              return;
            }
            if (msg.ready) {
              feed();
              return;
            }
            out.set(new Float32Array(msg.vectors), current[0] * dims);
            done += current[1] - current[0];
            if (progress) progress(done);
            feed();
          });
          w.on("error", reject);
          w.on("exit", (code) => {
            if (current) reject(new Error(`an embedding worker stopped (exit code ${code})`));
          });
        }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}

module.exports = { embedParallel, BATCH, MIN_PARALLEL };
