"""Concatenates `lightembed passages --embed-text` JSON lines files, keeping the first passage of
each embedded text (as `lightembed site` drops repeated texts), and prints per-file and per-package
counts (the first path segment of the url) on stderr. Used by bench/scale/make_corpus_1m.sh.

    python3 bench/scale/dedupe_passages.py A.jsonl B.jsonl > corpus.jsonl
"""

import collections
import hashlib
import json
import sys


def main() -> None:
    seen = set()
    kept = collections.Counter()
    dropped = collections.Counter()
    out = sys.stdout
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                package = rec["url"].split("/", 1)[0]
                key = hashlib.blake2b(rec["embed_text"].encode(), digest_size=16).digest()
                if key in seen:
                    dropped[package] += 1
                    continue
                seen.add(key)
                kept[package] += 1
                out.write(line)
    for package in sorted(kept.keys() | dropped.keys()):
        print(f"{package:28} {kept[package]:9,} kept {dropped[package]:9,} repeated texts dropped", file=sys.stderr)
    print(f"{'all':28} {sum(kept.values()):9,} kept {sum(dropped.values()):9,} repeated texts dropped", file=sys.stderr)


if __name__ == "__main__":
    main()
