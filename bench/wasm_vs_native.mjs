// The wasm engine's vectors against the native CLI's, sentence by sentence.
//   bash js/build.sh
//   target/release/lightembed embed --model M bench/sentences.txt > /tmp/native.jsonl
//   node bench/wasm_vs_native.mjs M /tmp/native.jsonl [bench/sentences.txt]
// Prints the worst cosine and how many sentences fall below 0.9999.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const le = require('../js/pkg/node/lightembed_wasm.js');
const [modelPath, nativePath, textsPath = 'bench/sentences.txt'] = process.argv.slice(2);
if (!modelPath || !nativePath) {
  console.error('usage: node bench/wasm_vs_native.mjs MODEL.bin NATIVE.jsonl [TEXTS.txt]');
  process.exit(2);
}
const model = le.Model.fromBytes(fs.readFileSync(modelPath));
const texts = fs.readFileSync(textsPath, 'utf8').split('\n').filter((s) => s.length);
const native = fs.readFileSync(nativePath, 'utf8').split('\n').filter((s) => s).map((l) => JSON.parse(l).embedding);
if (native.length !== texts.length) throw new Error(`${native.length} native vectors for ${texts.length} texts`);
let worst = 1;
let below = 0;
texts.forEach((t, i) => {
  const v = model.embed(t);
  let dot = 0;
  for (let j = 0; j < v.length; j++) dot += v[j] * native[i][j];
  worst = Math.min(worst, dot);
  if (dot < 0.9999) below += 1;
});
console.log(JSON.stringify({ model: modelPath, texts: texts.length, worst_cosine: worst, below_0_9999: below }));
