#!/usr/bin/env python3
"""Compares the passages `lightembed passages FOLDER` writes (CLI) with the app's passages of the
same folder cut natively (`app/tests/library_parity.rs`, OUT=...), file by file (issue 33 item 7).

    python3 bench/app/parity_compare.py cli.jsonl app.jsonl

Prints documents and passages per top folder on both sides, how many files have identical
passages, files on one side only, and the texts the app has that the CLI dropped (most frequent
first), with whether each is kept by the CLI in another file (a repeat across documents).
"""
import collections
import json
import sys
import urllib.parse


def load(path, file_key, unquote):
    out = collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            name = urllib.parse.unquote(r[file_key]) if unquote else r[file_key]
            out[name].append(r["text"])
    return out


def main():
    cli = load(sys.argv[1], "page", True)
    app = load(sys.argv[2], "file", False)
    for side, docs in (("cli", cli), ("app", app)):
        per = collections.Counter()
        for name, ps in docs.items():
            per[name.split("/")[0]] += len(ps)
        print(f"{side}: {len(docs)} documents, {sum(per.values())} passages, {dict(sorted(per.items()))}")
    print("files only in cli:", sorted(set(cli) - set(app))[:20])
    print("files only in app:", sorted(set(app) - set(cli))[:20])
    kept = collections.Counter(t for ps in cli.values() for t in ps)
    same, extra, missing = 0, collections.Counter(), 0
    for name in set(cli) | set(app):
        a, c = app.get(name, []), cli.get(name, [])
        if a == c:
            same += 1
            continue
        left = collections.Counter(c)
        for t in a:
            if left[t] > 0:
                left[t] -= 1
            else:
                extra[t] += 1
        missing += sum(left.values())
    print(f"files with identical passages: {same}; app passages the cli dropped: {sum(extra.values())} "
          f"({len(extra)} distinct texts, {sum(n for t, n in extra.items() if kept[t] == 0)} kept nowhere by the cli); "
          f"cli passages the app lacks: {missing}")
    for t, n in extra.most_common(5):
        print(f"  {n:5} × {t[:90]!r}")


if __name__ == "__main__":
    main()
