"""Bag-of-words recall and precision of extracted text against a reference (pdftotext).

Words are runs of letters and digits (Unicode `\\w`, underscores out), lowercased; a form feed
separates pages and counts for nothing. Recall = words of the reference found (as a multiset)
in the candidate / words of the reference; precision = the same / words of the candidate.
"""
import collections
import re

WORD = re.compile(r"[^\W_]+")


def words(text):
    return collections.Counter(w.lower() for w in WORD.findall(text))


def recall_precision(reference, candidate):
    ref, cand = words(reference), words(candidate)
    common = sum((ref & cand).values())
    n_ref, n_cand = sum(ref.values()), sum(cand.values())
    return (common / n_ref if n_ref else 0.0, common / n_cand if n_cand else 0.0, n_ref)
