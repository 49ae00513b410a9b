// Times the lightembed engine compiled to wasm32 + SIMD128 under Node, single thread.
// Usage: [WASM_FEATURES=simd128+relaxed-simd] node bench/engine_node.mjs PKG_DIR MODEL.bin [MODEL.bin ...]
//   (WASM_FEATURES only labels the output: the features the package was built with.)
//   PKG_DIR: wasm-bindgen --target nodejs output of bench/wasm-node (see bench/engine.sh).
// Prints one line per model: sentences/s, tokens/s and effective GMAC/s on bench/sentences.txt.
// Time is the process's CPU time (process.cpuUsage: user + system), like the native benchmark's
// thread CPU time, so other processes competing for the cores do not distort it. The loop is
// single-threaded wasm; Node's own helper threads (GC) add a little CPU time, never remove any.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [pkgDir, ...models] = process.argv.slice(2);
if (!pkgDir || models.length === 0) {
  console.error('usage: node bench/engine_node.mjs PKG_DIR MODEL.bin [MODEL.bin ...]');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const { WasmModel } = require(path.resolve(pkgDir, 'lightembed_bench_wasm.js'));
const sentences = readFileSync(new URL('./sentences.txt', import.meta.url), 'utf8').trim();
const lines = sentences.split('\n');

// Multiply-accumulates of one forward pass with n tokens (header fields of spec §3).
function macs(h, n) {
  const layer = n * (4 * h.d * h.d + 2 * h.d * h.ffn) + 2 * n * n * h.d;
  return h.layers * layer + h.d * h.out;
}

for (const file of models) {
  const bytes = readFileSync(file);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const h = { d: dv.getUint16(12, true), layers: dv.getUint8(14), ffn: dv.getUint16(16, true), out: dv.getUint16(18, true) };
  const model = new WasmModel(bytes);
  let totalMacs = 0;
  for (const l of lines) totalMacs += macs(h, model.count_tokens(l));
  const tokens = model.count_tokens(sentences);
  model.embed_lines(sentences, h.out); // warm-up
  let passes = 0;
  const c0 = process.cpuUsage();
  let cpuMs = 0;
  while (cpuMs < 3000 || passes < 2) {
    model.embed_lines(sentences, h.out);
    passes += 1;
    const c = process.cpuUsage(c0);
    cpuMs = (c.user + c.system) / 1000;
  }
  const s = cpuMs / 1000;
  const sps = (passes * lines.length) / s;
  console.log(JSON.stringify({
    model: path.basename(file), runtime: `node ${process.version} wasm32+${process.env.WASM_FEATURES ?? 'simd128'}`,
    sentences: lines.length, mean_tokens: +(tokens / lines.length).toFixed(1),
    sentences_per_s: Math.round(sps), tokens_per_s: Math.round((passes * tokens) / s),
    gmac_per_s: +((passes * totalMacs) / s / 1e9).toFixed(2),
  }));
  model.free();
}
