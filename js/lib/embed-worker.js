"use strict";
// One embedding worker of embed-pool.js: loads the model, then answers {texts} with
// {vectors: ArrayBuffer} (texts.length × dims floats, transferred).

const { parentPort, workerData } = require("node:worker_threads");
const { Model } = require("../pkg/node/lightembed_wasm.js");

let model;
try {
  model = Model.fromBytes(workerData.modelBytes);
  parentPort.postMessage({ ready: true });
} catch (err) {
  parentPort.postMessage({ error: err.message });
}

parentPort.on("message", ({ texts }) => {
  try {
    const out = new Float32Array(texts.length * workerData.dims);
    texts.forEach((t, i) => out.set(model.embed(t, workerData.dims), i * workerData.dims));
    parentPort.postMessage({ vectors: out.buffer }, [out.buffer]);
  } catch (err) {
    parentPort.postMessage({ error: err.message });
  }
});
