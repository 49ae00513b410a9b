"""Tests of extract_corpus_tr_general.py on small made-up documents (no download): the held-back
split, the footnote cleaning, passages, the natural pairs, the dev set and that no dev text reaches
the training corpus or pairs.

  .venv/bin/python -m pytest train/test_extract_corpus_tr_general.py -q
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract_corpus_tr_general as G  # noqa: E402

S1 = "Arkadaşlar, bu gece burada sizleri toplamaktan maksadım şudur."
S2 = "Memleketin yaşadığı vahim anları size söylemeye lüzum görmüyorum."
S3 = "Bu bedbaht memlekete karşı çok mühim vazifelerimiz vardır ve onları yapacağız."
S4 = "Onu kurtarmak bizim için yegâne hedef olarak her zaman önümüzde duracaktır."
S5 = "Bugün bütün kıtayı vatan camiasından ayırmak istiyorlar ve buna izin vermeyeceğiz."


def speech(doc_id, title):
    # two paragraphs: a one-sentence lead, then a passage of four sentences
    return ("ataturk", doc_id, title, [S1, " ".join([S2, S3, S4, S5])])


def test_split_is_a_stable_hash_of_source_and_id():
    assert [G.split("s", str(i)) for i in range(6)] == ["dev", "train", "train", "train", "train", "dev"]
    assert G.split("ataturk", "x") == "train"
    n = sum(G.split("s", str(i)) == "dev" for i in range(2000))
    assert abs(n / 2000 - G.DEV_PCT / 100) < 0.02  # 389 of 2000


def test_footnote_marks_are_removed_and_numbers_kept():
    t = "Nuri1 oradaysa âlâ, 1’inci Şube’ye 1920 tarihinden; edildi.2 Sonra 113’ü kabul, Fuat2?"
    assert G.FOOTNOTE.sub("", t) == "Nuri oradaysa âlâ, 1’inci Şube’ye 1920 tarihinden; edildi. Sonra 113’ü kabul, Fuat?"


def test_sentences_split_before_a_capital_only():
    assert G.sentences("Bu bir cümle. İkinci cümle geldi! Üçüncü mü? sayı 3. madde") == [
        "Bu bir cümle.", "İkinci cümle geldi!", "Üçüncü mü? sayı 3. madde"]


def test_passages_pack_whole_sentences_within_a_paragraph():
    ps = G.passages([S1, " ".join([S2, S3, S4, S5])], limit=20)
    assert ps == [[S1], [S2, S3], [S4], [S5]]  # 8 | 8+11 | 11 | 11 words; never across paragraphs
    assert G.passages([S1], limit=3) == [[S1]]  # a sentence longer than the limit stays whole


def test_doc_pairs_title_to_lead_and_sentence_to_rest():
    rng = G.random.Random(0)
    pairs = G.doc_pairs(speech("a", "Selanik’te Yaptığı Konuşma"), rng)
    assert pairs[0] == ("Selanik’te Yaptığı Konuşma", S1, "title", None)
    (q, pos, kind, i), = pairs[1:]
    assert kind == "sentence" and i == 1
    assert q in (S2, S3, S4, S5) and q not in pos
    assert sorted(G.sentences(pos) + [q]) == sorted([S2, S3, S4, S5])
    two = G.doc_pairs(speech("a", "Selanik’te Yaptığı Konuşma"), G.random.Random(0), per_passage=2)[1:]
    assert len(two) == 2 and two[0][0] != two[1][0] and all(q not in p for q, p, _, _ in two)


def test_wiki_and_web_documents_are_one_passage():
    wiki = ("twt-wiki", "http://tr.wikipedia.org/wiki/Y%C4%B1ld%C4%B1z", "Yıldız", [S2, S3])
    assert G.doc_pairs(wiki, G.random.Random(0)) == [("Yıldız", f"{S2} {S3}", "wiki-title", None)]
    web = ("twt-web", "tr-forum:1", None, [S3, S4])
    (q, pos, kind, i), = G.doc_pairs(web, G.random.Random(0))
    assert kind == "web-sentence" and i == 0 and {q, pos} == {S3, S4}


def test_dev_set_answers_and_distractors():
    docs = [speech("a", "Selanik’te Yaptığı Konuşma"), speech("b", "Salih Bey’e Yazdığı Mektup")]
    ret = G.dev_set(docs, generic={"salih bey’e yazdığı mektup"})
    # the generic title is no query; the other title and one sentence per speech are
    assert ret["kinds"] == ["title", "sentence", "sentence"]
    for q, r in zip(ret["queries"], ret["qrels"]):
        assert q not in ret["docs"][r]  # an answer never contains its query text
    assert ret["docs"][ret["qrels"][0]] == S1
    # S1 (the lead of both) and each speech's passage without its query sentence
    assert len(ret["docs"]) == len(set(ret["docs"])) == 3
    assert G.dev_set(docs, set(), max_sentence=0)["kinds"] == ["title", "title"]


def test_build_keeps_dev_documents_out_of_the_training_text():
    # ids chosen so that one speech is dev and one is training (by `split`)
    dev_id = next(str(i) for i in range(100) if G.split("ataturk", str(i)) == "dev")
    tr_id = next(str(i) for i in range(100) if G.split("ataturk", str(i)) == "train")
    shared = "Bu cümle iki ayrı konuşmada da aynen geçen uzunca bir cümledir."
    dev_doc = ("ataturk", dev_id, "Sivas’ta Yaptığı Konuşma", [S1, " ".join([S2, S3, shared])])
    tr_doc = ("ataturk", tr_id, "Ankara’da Yaptığı Konuşma", [S4, S5, shared])
    rows, vocab, dev, pairs, st = G.build([dev_doc, tr_doc])
    texts = {t for _, t in rows}
    assert texts == {"Ankara’da Yaptığı Konuşma", S4, S5}  # the shared sentence is dropped
    assert st["train_docs"]["ataturk"] == 1 and st["dev_docs"] == 1
    assert all(S1 not in q + p and S2 not in q + p for q, p, _ in pairs)
    assert "Sivas’ta Yaptığı Konuşma" in dev["queries"] and vocab == [S4, S5, shared]


def test_clean_normalises_quotes_soft_hyphens_and_the_dotted_i():
    assert G.clean("Irak Elçisi Nadji\u0307  Chevket  Bey") == "Irak Elçisi Nadji Chevket Bey"
    assert G.clean("``Because of You'' ile\u00adri") == '"Because of You" ileri'
    assert G.clean("İSTANBUL") == "İSTANBUL"  # a capital İ is a letter of its own, kept
