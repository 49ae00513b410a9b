"""Tests of extract_corpus_en_general.py on small made-up documents (no download): mail bodies lose
quoted lines, attributions, URLs and what follows a footer marker; spam is never read; subjects
lose their "Re:" and list tags; passages, pairs and the held-out filter.

  .venv/bin/python -m pytest train/test_extract_corpus_en_general.py -q
"""
import email
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract_corpus_en_general as E  # noqa: E402

MAIL = """From: a@example.org
Subject: Re: [zzzzteana] Nothing like mama used to make
Content-Type: text/plain; charset=us-ascii

Martin Adamson wrote:
> Isn't it just basically a mixture of beaten egg and bacon?
> You mix in the raw egg.

You're probably right, mine's just the same but with the cream
added to the eggs. See http://www.example.com/recipe for the one I found.

I guess I should try it without the cream next time.

------------------------ Yahoo! Groups Sponsor ---------------------
To unsubscribe from this group, send an email to the list.
"""


def test_mail_body_keeps_the_writers_own_paragraphs():
    body = E.mail_body(email.message_from_string(MAIL))
    paras = [" ".join(p.split()) for p in body.split("\n") if p.strip()]
    assert paras == [
        "You're probably right, mine's just the same but with the cream added to the eggs. "
        "See for the one I found.",
        "I guess I should try it without the cream next time.",
    ]


def test_mail_docs_read_ham_only_and_clean_the_subject(tmp_path):
    tgz = tmp_path / "mail.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        for name, text in [("easy-ham-1/00001.json", MAIL), ("spam-1/00001.json", MAIL.replace("Re:", "WIN"))]:
            b = json.dumps({"id": "00001", "text": text}).encode()
            info = tarfile.TarInfo(f"package/data/{name}")
            info.size = len(b)
            t.addfile(info, io.BytesIO(b))
    docs = E.mail_docs(str(tgz))
    assert [(s, title) for s, title, _ in docs] == [("mail", "Nothing like mama used to make")]


def test_passages_group_whole_sentences_up_to_the_limit():
    s1 = "The first sentence has exactly seven words here."
    s2 = "A second one follows it with six."
    s3 = "And a third closes the short text."
    assert E.passages(" ".join([s1, s2, s3]), limit=15) == [[s1, s2], [s3]]  # 8 + 7 words, then 7
    assert E.passages("ok.") == []  # too short to be a good sentence


def test_build_pairs_and_held_out_filter():
    s1 = "Call me Ishmael and listen to the story."
    s2 = "Some years ago I went to sea for a while."
    s3 = "It is a way I have of driving off the spleen."
    passage = " ".join([s1, s2, s3])
    docs = [("moby-dick", "Loomings", passage), ("sotu", None, s1)]
    lines, pairs = E.build(docs, reserved=set())
    assert sorted(lines) == sorted([s1, s2, s3, passage, "Loomings"])  # s1 once
    assert ("Loomings", passage) in pairs
    (q, rest), = [p for p in pairs if p[0] != "Loomings"]  # one sentence → the rest of its passage
    assert q in (s1, s2, s3) and q not in rest
    assert len(q.split()) + len(rest.split()) == len(passage.split())
    lines, pairs = E.build(docs, reserved={s2.lower(), "loomings"})
    assert s2 not in lines and "Loomings" not in lines and passage in lines
    assert all(a != "Loomings" and s2 != a for a, _ in pairs)
