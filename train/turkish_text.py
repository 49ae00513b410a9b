"""Turkish text from Debian packages, parsed with the standard library only (issue 16).

Sources (`train/setup.sh` installs them): `libreoffice-help-tr` (help pages, HTML), `manpages-tr`
(roff, rendered by `man`), the Turkish gettext catalogues (`*/tr/LC_MESSAGES/*.mo`, incl.
`libreoffice-l10n-tr`) and Firefox's Turkish Fluent strings (`firefox-esr-l10n-tr`).

The LibreOffice help pages are split by a hash of their path: `help_split(path)` is `"dev"`,
`"test"` or `"train"`. Dev and test pages are held out: no model, vocabulary or teacher choice
trains on them (`extract_corpus_tr.py` skips them, `prepare_eval_tr.py` builds the retrieval set
from them). Reserved for evaluation and never read here: the Turkish WordNet KeNet and the
`sadedegel` news sample.
"""
import glob
import gzip
import hashlib
import html
import os
import re
import subprocess
import zipfile
from html.parser import HTMLParser

HELP = "/usr/share/libreoffice/help/tr/text"
WS = re.compile(r"\s+")
TR_CHARS = set("çğıöşüÇĞİÖŞÜ")
TR_WORDS = {"ve", "bir", "bu", "için", "ile", "olarak", "veya", "da", "de", "ise", "gibi", "olan", "daha",
            "kadar", "tüm", "her", "göre", "ya", "ancak", "şu", "ne", "nasıl", "değil", "çok", "sonra"}


def clean(t):
    return WS.sub(" ", html.unescape(t)).strip()


def is_turkish(t):
    """A heuristic: Turkish letters or Turkish function words make up enough of the text. The
    translated help still has untranslated English paragraphs; those are dropped."""
    words = re.findall(r"\w+", t.lower())
    if not words:
        return False
    marked = sum(1 for w in words if w in TR_WORDS or any(c in TR_CHARS for c in w))
    return marked / len(words) >= 0.2


def help_split(path):
    """`dev` (10 %), `test` (15 %) or `train` (75 %) for a help page, by SHA-1 of its path relative
    to the help root (stable across machines)."""
    rel = os.path.relpath(path, HELP)
    h = int(hashlib.sha1(rel.encode()).hexdigest()[:8], 16) % 100
    return "dev" if h < 10 else "test" if h < 25 else "train"


class _HelpPage(HTMLParser):
    """Title (the first `<h1>`) and the text blocks of `#DisplayArea`, each `(tag, text)` with tag
    `h` for a heading and `p` for a paragraph; hidden spans (the macOS key names) are skipped."""

    BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_area = 0  # div depth inside #DisplayArea (0: outside)
        self.hidden = 0
        self.block = None
        self.buf = []
        self.blocks = []
        self.title = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div":
            if self.in_area:
                self.in_area += 1
            elif a.get("id") == "DisplayArea":
                self.in_area = 1
            return
        if not self.in_area:
            return
        if self.hidden or "hidden" in a:
            if tag == "span":
                self.hidden += 1
            return
        if tag in self.BLOCKS and self.block is None:
            self.block, self.buf = tag, []
        elif tag == "br" and self.block:
            self.buf.append(" ")

    def handle_endtag(self, tag):
        if tag == "div" and self.in_area:
            self.in_area -= 1
            return
        if self.hidden and tag == "span":
            self.hidden -= 1
            return
        if tag == self.block:
            t = clean("".join(self.buf))
            if t:
                if tag == "h1" and self.title is None:
                    self.title = t
                else:
                    self.blocks.append(("h" if tag.startswith("h") else "p", t))
            self.block = None

    def handle_data(self, data):
        if self.block and not self.hidden:
            self.buf.append(data)


def help_pages():
    """`[(path, title, [(kind, text), ...]), ...]` for every LibreOffice help page with a title,
    sorted by path; `kind` is `h` (heading) or `p` (paragraph). Untranslated blocks are kept here
    (callers filter with `is_turkish`)."""
    out = []
    for path in sorted(glob.glob(os.path.join(HELP, "**", "*.html"), recursive=True)):
        p = _HelpPage()
        with open(path, encoding="utf-8") as f:
            p.feed(f.read())
        if p.title:
            out.append((path, p.title, p.blocks))
    return out


def manpages():
    """`[(name, [paragraph, ...]), ...]` from `manpages-tr`, rendered by `man` (plain text, no
    hyphenation), paragraphs = blank-line separated blocks joined into one line."""
    out = []
    env = dict(os.environ, MANWIDTH="2000", LANG="C.UTF-8", MAN_KEEP_FORMATTING="0")
    for f in sorted(glob.glob("/usr/share/man/tr/man*/*")):
        r = subprocess.run(["man", "--nh", "--nj", "-l", f], capture_output=True, env=env)
        if r.returncode != 0:
            continue
        txt = subprocess.run(["col", "-b"], input=r.stdout, capture_output=True).stdout.decode("utf-8", "replace")
        paras = [clean(b) for b in re.split(r"\n\s*\n", txt)]
        out.append((os.path.basename(f), [p for p in paras if p]))
    return out


def _mo_strings(data):
    """msgstr values of a GNU .mo catalogue (both byte orders; plural forms split at NUL)."""
    import struct
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic == 0x950412DE else ">"
    _, n, _, toff = struct.unpack(e + "4I", data[:16])
    out = []
    for i in range(n):
        ln, off = struct.unpack(e + "2I", data[toff + 8 * i: toff + 8 * i + 8])
        for s in data[off: off + ln].split(b"\0"):
            try:
                out.append(s.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def catalogues():
    """`[(catalogue name, [string, ...]), ...]`: every Turkish .mo on the system, plus Firefox's
    Fluent (`.ftl`) values. Markup, accelerators (`_`, `&`, `~`) and placeholders are removed."""
    out = []
    files = sorted(set(glob.glob("/usr/share/locale/tr/LC_MESSAGES/*.mo")
                       + glob.glob("/usr/lib/libreoffice/program/resource/tr/LC_MESSAGES/*.mo")))
    for f in files:
        with open(f, "rb") as fh:
            out.append((os.path.basename(f), [_ui_text(s) for s in _mo_strings(fh.read())]))
    for xpi in sorted(glob.glob("/usr/lib/firefox-esr/browser/extensions/langpack-tr*.xpi")):
        with zipfile.ZipFile(xpi) as z:
            vals = []
            for n in z.namelist():
                if n.endswith(".ftl"):
                    for line in z.read(n).decode("utf-8", "replace").splitlines():
                        m = re.match(r"\s*[\w.-]+\s*=\s*(.+)$", line) or re.match(r"\s+\.\w+\s*=\s*(.+)$", line)
                        if m:
                            vals.append(_ui_text(m.group(1)))
            out.append(("firefox", vals))
    return out


def _ui_text(s):
    s = re.sub(r"<[^>]+>", " ", s)
    s = re.sub(r"\{[^}]*\}|%\w|%\d\$\w|\$\w+", " ", s)
    s = re.sub(r"(?<=\w)[_~&](?=\w)|^[_~&]|(?<=\s)[_~&]", "", s)
    return clean(s)
