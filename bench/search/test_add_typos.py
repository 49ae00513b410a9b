"""Tests of bench/search/add_typos.py: `python3 -m unittest bench/search/test_add_typos.py` (or pytest)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_typos as T  # noqa: E402


class Kinds(unittest.TestCase):
    def test_swap(self):
        self.assertEqual(T.swaps("trait"), ["tarit", "triat", "trati"])
        self.assertEqual(T.swaps("ball"), ["blal"])   # "ll" swapped is no typo; never the first letter

    def test_drop(self):
        self.assertEqual(T.drops("cargo"), ["crgo", "cago", "caro", "carg"])

    def test_double(self):
        self.assertEqual(T.doubles("join"), ["jooin", "joiin", "joinn"])

    def test_wrong_is_a_qwerty_neighbour(self):
        self.assertEqual(T.NEIGHBOURS["s"], "adewxz")
        self.assertEqual(T.NEIGHBOURS["q"], "aw")
        self.assertEqual(T.NEIGHBOURS["m"], "jkn")
        self.assertEqual(T.NEIGHBOURS["g"], "bfhtvy")
        for ch, near in T.NEIGHBOURS.items():   # symmetric: a key's neighbour has it as neighbour
            for n in near:
                self.assertIn(ch, T.NEIGHBOURS[n])
        self.assertEqual(len(T.NEIGHBOURS), 26)

    def test_wrong_keeps_case_and_first_letter(self):
        out = T.wrongs("Drop")
        self.assertTrue(all(w[0] == "D" for w in out))
        self.assertIn("Droo", out)
        self.assertTrue(all(w[1].isupper() for w in T.wrongs("AB")))


class Words(unittest.TestCase):
    def spans(self, q):
        kind, spans = T.words(q)
        return kind, [q[s:e] for s, e in spans]

    def test_plain_words_first(self):
        self.assertEqual(self.spans("Rc<T> reference counting"), ("plain", ["reference", "counting"]))
        self.assertEqual(self.spans("json.dumps indent"), ("plain", ["indent"]))
        self.assertEqual(self.spans("how do I read a file line by line?"),
                         ("plain", ["read", "file", "line", "line"]))
        self.assertEqual(self.spans("a project's packages"), ("plain", ["project", "packages"]))
        self.assertEqual(self.spans("String push_str"), ("plain", ["String"]))

    def test_code_only_when_no_plain_word(self):
        self.assertEqual(self.spans("RefCell borrow_mut"), ("code", ["RefCell", "borrow"]))
        self.assertEqual(self.spans("os.path.join"), ("code", ["path", "join"]))
        self.assertEqual(self.spans("re.sub"), ("short", ["sub"]))
        self.assertEqual(self.spans("if let"), ("short", ["let"]))
        self.assertEqual(self.spans("? ! x"), ("none", []))


class Typo(unittest.TestCase):
    def test_exactly_one_word_changed_once(self):
        for q in ["how do I read a file line by line", "RefCell borrow_mut", "re.sub", "venv"]:
            for seed in range(20):
                new, t = T.typo(q, seed=seed)
                self.assertNotEqual(new, q)
                self.assertIn(t["kind"], T.KINDS)
                self.assertIn(t["as"], T.SPELLINGS[t["kind"]](t["word"]))
                # the query is the same but for that one word
                a, b = q.split(), new.split()
                self.assertEqual(len(a), len(b))
                diff = [(x, y) for x, y in zip(a, b) if x != y]
                self.assertEqual(len(diff), 1)
                self.assertEqual(diff[0][1].replace(t["as"], t["word"], 1), diff[0][0])

    def test_deterministic_and_seeded(self):
        q = "how to stop worker threads cleanly when the server shuts down"
        self.assertEqual(T.typo(q), T.typo(q))
        self.assertEqual(T.typo(q, seed=T.SEED), T.typo(q))
        self.assertGreater(len({T.typo(q, seed=s)[0] for s in range(10)}), 3)

    def test_all_kinds_drawn(self):
        q = "ownership and borrowing rules explained"
        self.assertEqual({T.typo(q, seed=s)[1]["kind"] for s in range(60)}, set(T.KINDS))

    def test_avoids_vocabulary_words(self):
        # Every spelling of "form" but one is made a word of the corpus: that one must be chosen.
        every = set(w.lower() for f in T.SPELLINGS.values() for w in f("form"))
        keep = "fomr"
        for seed in range(20):
            new, t = T.typo("form", vocab=frozenset(every - {keep}), seed=seed)
            self.assertEqual(new, keep)
            self.assertNotIn("in_vocabulary", t)

    def test_unavoidable_vocabulary_word_is_marked(self):
        every = frozenset(w.lower() for f in T.SPELLINGS.values() for w in f("form"))
        new, t = T.typo("form", vocab=every)
        self.assertTrue(t["in_vocabulary"])
        self.assertIn(new.lower(), every)

    def test_no_letters(self):
        self.assertEqual(T.typo("? !"), ("? !", None))

    def test_fields_kept(self):
        line = json.dumps({"kind": "natural", "query": "how do I compress files", "relevant": ["a.html"], "pooled": []})
        out = json.loads(T.with_typos([line], frozenset())[0])
        self.assertEqual(set(out), {"kind", "query", "relevant", "pooled", "typo"})
        self.assertEqual((out["kind"], out["relevant"], out["pooled"]), ("natural", ["a.html"], []))


class Committed(unittest.TestCase):
    """The committed typo sets are what the script writes (needs rust-doc and python3.11-doc)."""

    def test_regenerates_identically(self):
        for name in T.COMMITTED:
            lines = T.regenerate(name)
            if lines is None:
                self.skipTest(f"{T.COMMITTED[name]} not installed")
            path = os.path.join(T.HERE, "questions", f"{name}-typos.jsonl")
            self.assertEqual(T.read(path), "".join(lines), path)


if __name__ == "__main__":
    unittest.main()
