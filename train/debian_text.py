"""Debian package descriptions (apt's English translations), parsed with the standard library only.

Reserved for evaluation: no model is trained on them. Needs `apt-get -o Acquire::Languages=en update`.
Used by `train/prepare_eval.py` and `bench/search/make_set.py`.
"""
import glob
import subprocess


def descriptions():
    """`[(package, synopsis, [paragraph, ...]), ...]` in file order: each long description of at least
    15 words, with duplicate long descriptions and duplicate synopses (case-insensitive) dropped."""
    seen_long, seen_syn = set(), set()
    out = []
    for f in sorted(glob.glob("/var/lib/apt/lists/*_main_i18n_Translation-en*")):
        txt = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", f], capture_output=True, text=True,
                             check=True).stdout
        for block in txt.split("\n\n"):
            pkg, syn, body = None, None, []
            for line in block.split("\n"):
                if line.startswith("Package:"):
                    pkg = line.split(":", 1)[1].strip()
                elif line.startswith("Description-en:"):
                    syn = line.split(":", 1)[1].strip()
                elif line.startswith(" ") and syn is not None:
                    body.append(line[1:])
            if not pkg or not syn or not body:
                continue
            paras = [" ".join(l.strip() for l in p.split("\n") if l.strip())
                     for p in "\n".join(body).split("\n.\n")]
            paras = [p for p in paras if p and p != "."]
            long = " ".join(paras)
            if len(long.split()) < 15 or long in seen_long or syn.lower() in seen_syn:
                continue
            seen_long.add(long)
            seen_syn.add(syn.lower())
            out.append((pkg, syn, paras))
    return out
