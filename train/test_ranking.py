"""Tests of ranking.py: nDCG@10 / MRR@10 of one relevant document, ties counted as a random order.

  .venv/bin/python -m pytest train/test_ranking.py -q
"""
import math
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ranking import rank_metrics  # noqa: E402


def test_distinct_scores_give_the_plain_rank():
    S = [[0.9, 0.5, 0.1], [0.9, 0.5, 0.1], [0.9, 0.5, 0.1]]
    nd, mr = rank_metrics(S, [0, 1, 2])
    assert nd == pytest.approx([1.0, 1 / math.log2(3), 0.5], abs=1e-12)
    assert mr == pytest.approx([1.0, 0.5, 1 / 3], abs=1e-12)


def test_a_query_that_matches_nothing_is_not_a_hit():
    """Twenty documents all scored 0 (a BM25 query with no known word): the relevant one is
    equally likely at ranks 1–20, so nDCG@10 is the mean gain of ranks 1–10 over 20, not 1."""
    nd, mr = rank_metrics(np.zeros((1, 20)), [7])
    want_nd = sum(1 / math.log2(r + 1) for r in range(1, 11)) / 20
    want_mr = sum(1 / r for r in range(1, 11)) / 20
    assert nd[0] == pytest.approx(want_nd, abs=1e-12)
    assert mr[0] == pytest.approx(want_mr, abs=1e-12)
    assert nd[0] < 0.25


def test_ties_past_the_cutoff_count_only_within_it():
    # 9 documents above, the relevant one tied with 2 others: ranks 10, 11, 12 equally likely
    S = np.array([[5.0] * 9 + [1.0, 1.0, 1.0, 0.0]])
    nd, mr = rank_metrics(S, [10])
    assert nd[0] == pytest.approx((1 / math.log2(11)) / 3, abs=1e-12)
    assert mr[0] == pytest.approx((1 / 10) / 3, abs=1e-12)
    nd, _ = rank_metrics(np.array([[5.0] * 10 + [1.0, 1.0]]), [10])
    assert nd[0] == 0.0


def test_a_tie_above_counts_half():
    nd, mr = rank_metrics([[0.3, 0.7, 0.7]], [2])
    assert nd[0] == pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-12)
    assert mr[0] == pytest.approx(0.75, abs=1e-12)


def test_a_nan_relevant_score_is_an_error():
    with pytest.raises(ValueError, match="1 queries score their relevant document NaN"):
        rank_metrics([[0.2, 0.1], [np.nan, 0.5]], [0, 0])
