"""The committed tokenizer fixtures are what HF `tokenizers` produces today (so they cannot rot),
and they are well-formed. Regenerate with `reference/make_tokenizer_parity.py --expected`."""

import importlib.util
import json
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_tokenizer_parity", REFERENCE / "make_tokenizer_parity.py")
mtp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mtp)


def test_tokenizers_version():
    import tokenizers

    assert tokenizers.__version__ == "0.22.1", "fixtures are pinned to the HF tokenizers the models were trained with"


@pytest.mark.parametrize("mode", sorted(mtp.MODES))
def test_expected_ids_match_hf_tokenizers(mode):
    lines = mtp.read_lines()
    committed = (mtp.FIXTURES / f"expected_{mode}.jsonl").read_text(encoding="utf-8")
    regenerated = mtp.expected_jsonl(mtp.expected_ids(lines, mode))
    if committed != regenerated:
        old = committed.splitlines()
        new = regenerated.splitlines()
        bad = [i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b]
        pytest.fail(f"expected_{mode}.jsonl is stale: {len(old)} vs {len(new)} lines, differing lines {bad[:20]}")


def test_expected_cased_words_match_hf_tokenizers():
    lines = mtp.read_lines()
    committed = (mtp.FIXTURES / "expected_cased_words.txt").read_text(encoding="utf-8")
    regenerated = mtp.words_txt(mtp.expected_words(lines, "cased"))
    assert committed == regenerated, "expected_cased_words.txt is stale"


def test_lines_are_well_formed():
    raw = mtp.LINES.read_bytes()
    assert len(raw) <= 600_000
    lines = mtp.read_lines()
    assert len(lines) >= 2000
    assert not any("\r" in s for s in lines)
    assert len(set(lines)) == len(lines), "lines are distinct"
    sources = json.loads(mtp.SOURCES.read_text(encoding="utf-8"))
    assert [s["first"] for s in sources] == [sum(t["count"] for t in sources[:i]) for i in range(len(sources))]
    assert sum(s["count"] for s in sources) == len(lines)
    for mode in mtp.MODES:
        rows = (mtp.FIXTURES / f"expected_{mode}.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == len(lines)
    assert len(mtp.read_lines(mtp.FIXTURES / "expected_cased_words.txt")) == len(lines)


def test_vocab_is_bert_base_uncased():
    vocab = mtp.read_vocab()
    assert len(vocab) == 30522 and len(set(vocab)) == len(vocab)
    assert [vocab.index(t) for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]] == [0, 100, 101, 102, 103]


def test_hf_behaviour_the_engine_relies_on():
    """Spot checks of HF behaviour documented in engine/src/tokenizer.rs."""
    vocab = mtp.read_vocab()
    uncased = mtp.hf_tokenizer(vocab, True)
    cased = mtp.hf_tokenizer(vocab, False)
    # Strip accents before lowercasing: İ → I + U+0307 → I → i.
    assert uncased.encode("İstanbul").tokens == ["[CLS]", "istanbul", "[SEP]"]
    # Typed special tokens are plain text (decision 11).
    assert uncased.encode("[SEP]").tokens == ["[CLS]", "[", "sep", "]", "[SEP]"]
    # Unicode 8.0 category tables: U+2E43 (Unicode 9.0) is not punctuation, so no split.
    assert uncased.encode("a\u2e43b").tokens == ["[CLS]", "[UNK]", "[SEP]"]
    # Per-character lowercasing: no final sigma.
    assert uncased.normalizer.normalize_str("ΟΔΥΣ") == "οδυσ"
    # Cf and C1 controls are dropped, not turned into spaces.
    assert cased.normalizer.normalize_str("a\u200bb\u0085c\u00a0d") == "abc d"
    # Truncation keeps [CLS] and [SEP] (decision 1).
    ids = uncased.encode("word " * 600).ids
    assert len(ids) == 512 and ids[0] == 101 and ids[-1] == 102
    # Empty text.
    assert uncased.encode("").ids == [101, 102]
