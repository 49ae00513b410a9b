"""Tests of pairs.py (the contrastive term's pair source) on made-up token ids: spans are whole
consecutive words, keyword queries are 1–3 of a line's rarest words in the line's order, and a
run without keyword queries draws the same pairs as before they existed.

  .venv/bin/python -m pytest train/test_pairs.py -q
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pairs import PairSource  # noqa: E402

CLS, SEP = 2, 3
CONT = {100, 101}  # `##` pieces
# Ten lines that share the common words 10–15; line 0 also has the rare words 40, 41+##100, 42, 43
# and 44 (each in that line only), the two-piece word 41 ##100 among them.
COMMON = [10, 11, 12, 13, 14, 15]
LINES = [[CLS] + [10, 40, 11, 41, 100, 12, 42, 13, 43, 14, 44, 15] + [SEP]]
LINES += [[CLS] + COMMON + [20 + i, 30 + i] + [SEP] for i in range(9)]


def words(ids):
    """The words of a query's body as tuples of piece ids."""
    body, out = ids[1:-1], []
    for t in body:
        if t in CONT:
            out[-1] += (t,)
        else:
            out.append((t,))
    return out


def test_keywords_are_the_rarest_words_in_line_order():
    ps = PairSource([], LINES, CONT, np.random.RandomState(0), keyword=1.0)
    rare = [(40,), (41, 100), (42,), (43,), (44,)]
    line_words = words(LINES[0])
    seen_sizes = set()
    for _ in range(200):
        q = ps.keywords(LINES[0])
        assert q[0] == CLS and q[-1] == SEP
        ws = words(q)
        seen_sizes.add(len(ws))
        assert all(w in rare for w in ws), ws  # the common words never (they are in every line)
        assert len(set(ws)) == len(ws)
        pos = [line_words.index(w) for w in ws]
        assert pos == sorted(pos)  # the line's order
    assert seen_sizes == {1, 2, 3}


def test_spans_are_whole_consecutive_words():
    ps = PairSource([], LINES, CONT, np.random.RandomState(0))
    line_words = words(LINES[0])
    for _ in range(200):
        ws = words(ps.span(LINES[0]))
        assert 2 <= len(ws) <= 6
        a = line_words.index(ws[0])
        assert line_words[a:a + len(ws)] == ws


def test_batch_halves_and_groups():
    fixed = [([CLS, 50, SEP], [CLS, 51, 52, SEP], 7)]
    ps = PairSource(fixed, LINES, CONT, np.random.RandomState(0), keyword=0.5)
    q, p, g = ps.batch(8)
    assert g[:4] == [7] * 4 and q[:4] == [[CLS, 50, SEP]] * 4
    assert all(x < 0 and p[i] == LINES[-1 - x] for i, x in enumerate(g[4:], 4))


def test_no_keyword_queries_keep_the_old_draws():
    """keyword=0 draws no extra random numbers: runs made before --keyword-spans reproduce."""
    ps = PairSource([], LINES, CONT, np.random.RandomState(5))
    rng = np.random.RandomState(5)
    idx = rng.randint(0, len(LINES), 4)
    want = []
    for i in idx:  # span() as it was: k words from a random whole-word start
        body = LINES[i][1:-1]
        starts = [j for j, t in enumerate(body) if t not in CONT]
        k = int(rng.randint(2, 7))
        a = int(rng.randint(0, len(starts) - k))
        end = starts[a + k] if a + k < len(starts) else len(body)
        want.append([CLS] + body[starts[a]:end] + [SEP])
    assert ps.batch(4)[0] == want
