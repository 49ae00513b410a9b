#!/usr/bin/env python3
"""PDF text extraction quality and speed (issue 33): each PDF of bench/pdf/data/set/ (fetch.sh)
read by pdftotext (poppler-utils, the reference), by lightembed-ingest (what `lightembed index`
and the app's worker embed: headers, footers and page numbers dropped, hyphenation joined), by
pdf-extract's own plain text and pdf_oxide (bench/pdf/compare), and by pdf.js (pdfjs-dist under
Node); bag-of-words recall and precision against pdftotext (bow.py), seconds per file.

    bash bench/pdf/fetch.sh && python3 bench/pdf/quality.py [--skip-compare] [--skip-pdfjs]

Writes the Markdown table to stdout and the texts to bench/pdf/data/out/<reader>/.
Needs: cargo, poppler-utils, node + npm (pdf.js); run from anywhere.
"""
import csv
import io
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
SET = os.path.join(DATA, "set")
OUT = os.path.join(DATA, "out")
sys.path.insert(0, HERE)
from bow import recall_precision  # noqa: E402


def tsv(text):
    return {row[0]: row[1:] for row in csv.reader(io.StringIO(text), delimiter="\t") if row}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def main():
    files = sorted(f for f in os.listdir(SET) if f.endswith(".pdf"))
    paths = [os.path.join(SET, f) for f in files]
    times, errors, pages = {}, {}, {}
    # pdftotext, the reference.
    os.makedirs(os.path.join(OUT, "pdftotext"), exist_ok=True)
    for f, p in zip(files, paths):
        t = time.perf_counter()
        subprocess.run(["pdftotext", "-enc", "UTF-8", p, os.path.join(OUT, "pdftotext", f + ".txt")],
                       check=True, capture_output=True)
        times[("pdftotext", f)] = time.perf_counter() - t
        info = run(["pdfinfo", p])
        pages[f] = int(next(l.split()[1] for l in info.splitlines() if l.startswith("Pages:")))
    readers = ["pdftotext", "lightembed-ingest"]
    # lightembed-ingest (release build of the example).
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "lightembed-ingest", "--example",
                    "document_text"], cwd=ROOT, check=True)
    rows = tsv(run([os.path.join(target, "release/examples/document_text"),
                    os.path.join(OUT, "lightembed-ingest")] + paths))
    for f, (secs, _, err) in rows.items():
        times[("lightembed-ingest", f)], errors[("lightembed-ingest", f)] = float(secs), err
    if "--skip-compare" not in sys.argv:
        ctarget = os.path.join(DATA, "compare-target")
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(HERE, "compare"),
                       check=True, env={**os.environ, "CARGO_TARGET_DIR": ctarget})
        out = run([os.path.join(ctarget, "release/pdfeval"), OUT] + paths)
        for row in csv.reader(io.StringIO(out), delimiter="\t"):
            f, lib, secs, err = row
            times[(lib, f)], errors[(lib, f)] = float(secs), err
        readers += ["pdf-extract", "pdf_oxide"]
    if "--skip-pdfjs" not in sys.argv:
        if not os.path.isdir(os.path.join(HERE, "node_modules", "pdfjs-dist")):
            subprocess.run(["npm", "install", "--no-save", "--silent"], cwd=HERE, check=True)
        out = run(["node", os.path.join(HERE, "pdfjs_extract.mjs"), os.path.join(OUT, "pdf.js")] + paths,
                  cwd=HERE)
        for row in csv.reader(io.StringIO(out), delimiter="\t"):
            f, lib, secs, err = row
            times[(lib, f)], errors[(lib, f)] = float(secs), err
        readers.append("pdf.js")

    head = "| file | pages | words (pdftotext) | " + " | ".join(
        f"{r} recall / precision / s" for r in readers[1:]) + " | pdftotext s |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    sums = {r: [0.0, 0.0, 0.0, 0] for r in readers}
    for f in files:
        ref = open(os.path.join(OUT, "pdftotext", f + ".txt"), errors="replace").read()
        cells = []
        for r in readers[1:]:
            cand = open(os.path.join(OUT, r, f + ".txt"), errors="replace").read()
            rec, prec, n_ref = recall_precision(ref, cand)
            s = sums[r]
            s[0] += rec; s[1] += prec; s[2] += times[(r, f)]; s[3] += 1
            err = errors.get((r, f), "")
            note = " (failed)" if err else ""
            cells.append(f"{rec:.3f} / {prec:.3f} / {times[(r, f)]:.2f}{note}")
        sums["pdftotext"][2] += times[("pdftotext", f)]
        n_ref = recall_precision(ref, ref)[2]
        print(f"| {f} | {pages[f]} | {n_ref} | " + " | ".join(cells) + f" | {times[('pdftotext', f)]:.2f} |")
    total = sum(pages.values())
    cells = [f"**{s[0] / s[3]:.3f} / {s[1] / s[3]:.3f} / {s[2]:.1f}**" for s in (sums[r] for r in readers[1:])]
    print(f"| **mean (time: sum)** | {total} | | " + " | ".join(cells) + f" | {sums['pdftotext'][2]:.1f} |")
    for r in readers[1:]:
        failed = [f for f in files if errors.get((r, f))]
        if failed:
            print(f"\n{r} failed on: " + "; ".join(f"{f} ({errors[(r, f)]})" for f in failed))


if __name__ == "__main__":
    main()
