"""nDCG@k and MRR@k of one relevant document per query from a score matrix, with ties counted
fairly (numpy only, so train/test_ranking.py runs in CI without PyTorch).

A document scored exactly like the relevant one is as likely to be ranked above it as below: the
figures are their expected values when tied documents are put in a random order. Counting only
strictly higher scores (the rule before 2026-12-03) ranked the relevant document first among
every document it ties with — for BM25, a query none of whose words occurs in any document
(every score 0) counted as a perfect hit. Float cosines of distinct texts almost never tie, so
vector rows are unchanged; BM25 rows fall where many documents share a score.
"""
import numpy as np


def rank_metrics(S, qrels, k=10):
    """`(ndcg, mrr)`: per-query arrays (length len(qrels)) of nDCG@k and MRR@k, where S[i, j] is
    query i's score of document j (higher first) and qrels[i] the index of its relevant document.
    With g documents scored above it and t others tied with it, the relevant document's rank is
    uniform on g+1 … g+t+1; each figure is its mean over those ranks (0 beyond rank k). Raises
    ValueError when a relevant document's score is NaN (a zero vector normalised)."""
    S = np.asarray(S)
    qrels = np.asarray(qrels)
    rel = S[np.arange(len(qrels)), qrels][:, None]
    if np.isnan(rel).any():  # NaN compares unequal to everything: no rank to speak of
        bad = np.flatnonzero(np.isnan(rel[:, 0]))
        raise ValueError(f"{len(bad)} queries score their relevant document NaN (first: query {bad[0]})")
    above = (S > rel).sum(1)
    tied = (S == rel).sum(1) - 1
    r = np.arange(1, k + 1, dtype=np.float64)
    gain, recip = 1 / np.log2(r + 1), 1 / r
    nd = np.empty(len(qrels))
    mr = np.empty(len(qrels))
    for i, (g, t) in enumerate(zip(above, tied)):
        lo, hi = g, min(g + t + 1, k)  # 0-based ranks g … g+t, those within the top k
        nd[i] = gain[lo:hi].sum() / (t + 1) if lo < k else 0.0
        mr[i] = recip[lo:hi].sum() / (t + 1) if lo < k else 0.0
    return nd, mr
