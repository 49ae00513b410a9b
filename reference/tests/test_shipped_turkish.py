"""The shipped Turkish model (`public/models/lightembed-tr-static.bin`, issue 16) through the
normative reference: spec §3's Turkish caveat on real cased text, and parity with the trained
student on the committed fixture (`tests/fixtures/e2e/lightembed-tr-static.json`, written by
`train/ship.py`)."""
import json
import os

import numpy as np
import pytest

import forward

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "public", "models", "lightembed-tr-static.bin")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "e2e", "lightembed-tr-static.json")


@pytest.fixture(scope="module")
def model():
    with open(MODEL, "rb") as f:
        return forward.load(f.read())


@pytest.fixture(scope="module")
def fixture():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def test_header_is_cased_turkish(model):
    h = model.header
    assert h.model_id == "lightembed-tr-0l"
    assert (h.do_lower_case, h.strip_accents) == (False, False)
    assert h.n_layers == 0 and len(model.vocab) == 32000


@pytest.mark.parametrize("text", ["İSTANBUL'DA ışık", "Iğdır", "ÇOCUK"])
def test_cased_turkish_ids_match_the_fixture_and_keep_the_dots(model, fixture, text):
    case = next(c for c in fixture["cases"] if c["text"] == text)
    ids = forward.tokenize(model, text)
    assert ids == case["ids"]  # written by HF tokenizers with this vocabulary (train/ship.py)
    pieces = "".join(model.vocab[i] for i in ids[1:-1])
    assert "\u0307" not in pieces
    # no lowercasing: the capital letters survive as themselves
    assert pieces.replace("##", "")[:2] == text.replace("'", "")[:2]


def test_dotted_and_dotless_capitals_differ(model):
    assert forward.tokenize(model, "Iğdır") != forward.tokenize(model, "İğdır")


def test_reference_reproduces_the_trained_student(model, fixture):
    cos = []
    for c in fixture["cases"]:
        assert forward.tokenize(model, c["text"]) == c["ids"], c["text"]
        v = forward.embed(model, c["text"])
        want = np.asarray(c["embedding"], dtype=np.float64)
        cos.append(float(v @ want / np.linalg.norm(want)))
    assert np.mean(cos) >= fixture["min_mean_cosine"], np.mean(cos)
