"""In-batch contrastive pairs for train_student.py (issue 34), as token id lists: numpy only, so
that train/test_pairs.py runs without PyTorch."""
import math


class PairSource:
    """Pairs for the contrastive term, as token ids: a fixed list (`--pairs FILE`: query TAB
    positive; `--nn-pairs`: each text with its nearest teacher neighbour) and/or query-like word
    spans of corpus lines made afresh each step (`--span-pairs`: 2–6 whole words of a line of at
    least 8 words → that line; every corpus line, with or without a teacher vector)."""

    def __init__(self, fixed, span_lines, cont_ids, rng, keyword=0.0):
        """`rng`: a numpy RandomState (the trainer's, seeded)."""
        self.fixed = fixed          # list of (q_ids, p_ids, group)
        self.lines = span_lines     # list of token id lists ([CLS] … [SEP]) long enough for a span
        self.cont = cont_ids        # ids of `##` continuation pieces (a span starts at a word)
        self.rng = rng
        self.keyword = keyword      # fraction of span queries made of the line's rarest words
        self.idf = {}
        if keyword > 0:
            df = {}
            for ids in span_lines:
                for t in set(ids[1:-1]):
                    df[t] = df.get(t, 0) + 1
            n = len(span_lines)
            self.idf = {t: math.log(1 + n / c) for t, c in df.items()}

    def word_starts(self, body):
        """Indices in `body` where a word begins (a piece that is not a `##` continuation)."""
        return [i for i, t in enumerate(body) if t not in self.cont]

    def keywords(self, ids):
        """1–3 words of the line (a word: its first piece and its `##` pieces) drawn from its 5
        rarest (highest mean piece idf; a word counted once), kept in the line's order."""
        body = ids[1:-1]
        starts = self.word_starts(body) + [len(body)]
        words, seen = [], set()
        for a, b in zip(starts, starts[1:]):
            w = tuple(body[a:b])
            if w and w not in seen:
                seen.add(w)
                words.append((a, w, sum(self.idf.get(t, 0.0) for t in w) / len(w)))
        if len(words) < 2:
            return ids
        top = sorted(words, key=lambda x: -x[2])[:5]
        k = int(self.rng.randint(1, 4))
        pick = sorted((top[i] for i in self.rng.choice(len(top), min(k, len(top)), replace=False)),
                      key=lambda x: x[0])
        return [ids[0]] + [t for _, w, _ in pick for t in w] + [ids[-1]]

    def span(self, ids):
        """2–6 whole consecutive words of the line (the line itself when it has no more words)."""
        body = ids[1:-1]
        starts = self.word_starts(body)
        k = int(self.rng.randint(2, 7))
        if len(starts) <= k:
            return ids
        a = int(self.rng.randint(0, len(starts) - k))
        end = starts[a + k] if a + k < len(starts) else len(body)
        return [ids[0]] + body[starts[a]:end] + [ids[-1]]

    def batch(self, n):
        """`n` pairs `(queries, positives, groups)`: all fixed pairs without span lines, all spans
        without fixed pairs, else half and half; a span's group is −1 − its line index."""
        nf = n if not self.lines else (n // 2 if self.fixed else 0)
        q, p, g = [], [], []
        if nf:
            for i in self.rng.randint(0, len(self.fixed), nf):  # a repeat is one group: masked
                a, b, grp = self.fixed[i]
                q.append(a), p.append(b), g.append(grp)
        if n - nf:
            for i in self.rng.randint(0, len(self.lines), n - nf):
                line = self.lines[i]
                kw = self.keyword > 0 and self.rng.random_sample() < self.keyword
                q.append(self.keywords(line) if kw else self.span(line)), p.append(line), g.append(-1 - int(i))
        return q, p, g
