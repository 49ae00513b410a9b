// pdf.js (pdfjs-dist) text per page: items joined, a newline at hasEOL, pages split by \f.
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import fs from "node:fs"; import path from "node:path";
const [out, ...files] = process.argv.slice(2);
fs.mkdirSync(out, { recursive: true });
for (const f of files) {
  const t = performance.now(); let text = "", err = "";
  try {
    const doc = await getDocument({ data: new Uint8Array(fs.readFileSync(f)), verbosity: 0 }).promise;
    const pages = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const c = await (await doc.getPage(i)).getTextContent();
      pages.push(c.items.map(it => (it.str ?? "") + (it.hasEOL ? "\n" : "")).join(""));
    }
    text = pages.join("\f"); await doc.destroy();
  } catch (e) { err = String(e); }
  const s = (performance.now() - t) / 1000;
  fs.writeFileSync(path.join(out, path.basename(f) + ".txt"), text);
  console.log(`${path.basename(f)}\tpdf.js\t${s.toFixed(3)}\t${err}`);
}
