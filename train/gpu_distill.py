#!/usr/bin/env python3
"""The 2-layer student distilled with the teacher in the loop, on a CUDA GPU (issue 14).

On the CPU the teacher's vectors are computed once per corpus line and cached (embed_teacher.py),
so the student only ever sees those lines. With the teacher on a GPU (thousands of texts/s) the
training texts can be made per step, which is what this script adds to `train_student.py`'s
recipe (same student, same losses, same Matryoshka prefixes and PCA frame):

* every corpus line up to 80 words (the CPU runs dropped lines over 48 words);
* query-like spans: 2–8 consecutive words of a batch line, embedded by the teacher on the fly and
  put in the same batch, so the in-batch ranking KL also ranks short queries against passages —
  the held-out task (a package synopsis against long descriptions);
* pseudo-passages: two lines of one topic cluster joined, so longer inputs are seen too;
* token level (`tokens`): each word's student output against the teacher's last hidden states of
  that word (both tokenizers split text into the same words), beside the pooled losses.

Several variants (`VARIANTS`) train side by side as separate processes on the one GPU from the
same start, each for the same wall-clock budget (learning rate: warm-up, then cosine over the
budget); each is exported (`OUT/NAME.npz`: int4 table codes, the rest fp32; `--import` makes it a
run) and scored on the held-out retrieval set (nDCG@10 at 384 and 128 dims, int4 table as packed). Everything it reads comes
from `gpu_pack.py`'s folder:

  LE_VOCAB=train/data/vocab_19000_v6.txt train/.venv/bin/python train/gpu_pack.py \
      --pca train/data/pca_v2frame.npy                                              # here → gpu_pack/
  python3 train/gpu_distill.py --pack gpu_pack --out "$OUT" --seconds 500   # on the GPU machine
  train/.venv/bin/python train/gpu_distill.py --import OUT/NAME.npz --name RUN   # back here → runs/RUN

`--seconds` is the wall-clock budget of the whole command (setup, training, scoring); training
gets what setup leaves. `LE_DEVICE=cpu` with `--limit` runs the same code on a CPU (a smoke test).
"""
import argparse
import json
import lzma
import math
import os
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# name → recipe; all start from the pack's init.npz (the shipped 2-layer run). `float`: layers
# unquantised (LE_FLOAT_LAYERS=1, an upper bound; never shipped).
VARIANTS = {
    "lines": dict(spans=0.0, concat=0.0, lr=3e-4, emb_lr=1e-3),
    "spans": dict(spans=0.5, concat=0.25, lr=3e-4, emb_lr=1e-3),
    "spans_hi": dict(spans=0.5, concat=0.25, lr=1e-3, emb_lr=3e-3),
    "spans_kl4": dict(spans=0.5, concat=0.25, lr=1e-3, emb_lr=3e-3, kl=4.0),
    "more_q": dict(spans=1.0, concat=0.5, lr=1e-3, emb_lr=3e-3),
    "spans_float": dict(spans=0.5, concat=0.25, lr=1e-3, emb_lr=3e-3, float=True),
    # token level: each word's student output (projection of its final-LayerNorm states, the terms
    # whose mean is the sentence vector) against the teacher's last hidden states of that word
    "tokens": dict(spans=0.0, concat=0.0, lr=3e-4, emb_lr=1e-3, tokens=1.0),
    "tokens4": dict(spans=0.0, concat=0.0, lr=3e-4, emb_lr=1e-3, tokens=4.0),
}
DEFAULT = "lines,spans,spans_hi,spans_kl4,more_q"
MAX_WORDS = 80  # longer lines are dropped; the few that still pass 128 pieces are cut by both
# tokenizers (the word loss skips a cut word)
BS = 256  # corpus lines per step (+ spans and pseudo-passages)
HARD = 0.75  # fraction of the lines from one topic cluster
LOSS = dict(lam=5.0, weights={32: 1.0, 64: 1.0, 128: 2.0, 256: 1.0, 384: 1.0}, sim_full=True,
            prefix_cos=1.0, kl=2.0, tau=0.05)


def absmax_rows(v, qmax):
    """Per-row absmax quantisation of a float32 matrix → (int8 codes in [−qmax, qmax], float32 row
    scales; a zero row has scale 0 and codes 0): quant.int_absmax's rule, as codes."""
    import numpy as np
    s = (np.abs(v).max(1) / np.float32(qmax)).astype(np.float32)
    safe = np.where(s > 0, s, np.float32(1.0)).astype(np.float32)
    return np.clip(np.round(v / safe[:, None]), -qmax, qmax).astype(np.int8), s


def pack_student(z):
    """A student.npz's arrays for the trip (no file over 16 MiB): the embedding table as its int4
    codes and row scales (quant.int4, the packed model's rule, so the shipped table is the same),
    everything else fp32."""
    import numpy as np
    out = {}
    for k in z:
        v = np.asarray(z[k], dtype=np.float32)
        if k == "embedding":
            out["embedding::q4"], out["embedding::s"] = absmax_rows(v, 7)
        else:
            out[k] = v
    return out


def unpack_student(z):
    """pack_student's arrays (or a plain student.npz) → fp32 student.npz arrays."""
    import numpy as np
    out = {k: np.asarray(z[k], dtype=np.float32) for k in z if "::" not in k}
    if "embedding::q4" in z:
        out["embedding"] = z["embedding::q4"].astype(np.float32) * z["embedding::s"][:, None]
    return out


def log_to(path):
    f = open(path, "a")

    def P(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        f.write(s + "\n")
        f.flush()
    return P


class Teacher:
    """all-MiniLM-L6-v2 from the pack (int8 rows dequantised): BERT, mean pooling over the
    attention mask, L2 normalisation, 128 tokens — what sentence-transformers computes."""

    def __init__(self, pack, dev):
        import numpy as np
        import torch
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel
        cfg = BertConfig.from_json_file(os.path.join(pack, "config.json"))
        self.m = BertModel(cfg, add_pooling_layer=False)
        z = np.load(os.path.join(pack, "teacher.npz"))
        sd = {}
        for k in z.files:
            if k.endswith("::s"):
                continue
            if k.endswith("::q"):
                name = k[:-3]
                sd[name] = torch.from_numpy(z[k].astype(np.float32) * z[name + "::s"][:, None])
            else:
                sd[k] = torch.from_numpy(z[k].astype(np.float32))
        missing, unexpected = self.m.load_state_dict(sd, strict=False)
        assert not unexpected and all("position_ids" in k for k in missing), (missing, unexpected)
        self.m.to(dev).eval()
        self.dev = dev
        self.tok = Tokenizer.from_file(os.path.join(pack, "tokenizer.json"))
        self.tok.enable_truncation(max_length=128)
        self.tok.no_padding()

    def _forward(self, encs):
        """Encodings padded into one batch → (last hidden states [B, T, 384] fp32, mask [B, T]);
        inference-mode tensors."""
        import torch
        from common import pad_batch
        ids = pad_batch([e.ids for e in encs]).to(self.dev)
        mask = (ids != 0).long()
        with torch.inference_mode():
            return self.m(input_ids=ids, attention_mask=mask).last_hidden_state.float(), mask

    def encode(self, texts, bs=1024):
        """[len(texts), 384] float32 on the device, unit rows."""
        import torch
        import torch.nn.functional as F
        encs = self.tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = torch.empty(len(texts), 384, device=self.dev)
        with torch.inference_mode():
            for i in range(0, len(order), bs):
                idx = order[i:i + bs]
                h, mask = self._forward([encs[j] for j in idx])
                m = mask.unsqueeze(-1).float()
                out[torch.tensor(idx, device=self.dev)] = F.normalize((h * m).sum(1) / m.sum(1), dim=-1)
        return out

    def hidden(self, texts):
        """Last hidden states [B, T, 384] (fp32, padded) and each row's word index per position
        (None for [CLS]/[SEP]), plus whether the row was truncated."""
        encs = self.tok.encode_batch(list(texts))
        h, _ = self._forward(encs)
        return h.clone(), [e.word_ids for e in encs], [len(e.overflowing) > 0 for e in encs]


def word_slots(t_words, t_trunc, t_len, s_encs, s_len):
    """Positions (flat, row-major) of each shared word's pieces in the teacher's and the student's
    padded batches → (t_pos, t_slot, s_pos, s_slot, n_slots). A word counts when neither side cut it
    (the last word of a truncated row may be cut)."""
    from common import MAX_SEQ_LEN
    t_pos, t_slot, s_pos, s_slot = [], [], [], []
    n = 0
    for r, (tw, e) in enumerate(zip(t_words, s_encs)):
        sw = e.word_ids[: MAX_SEQ_LEN - 2]  # the student keeps 126 pieces between [CLS] and [SEP]
        s_cut = len(e.word_ids) > len(sw)
        tset = {w for w in tw if w is not None}
        sset = {w for w in sw if w is not None}
        if t_trunc[r] and tset:
            tset.discard(max(tset))
        if s_cut and sset:
            sset.discard(max(sset))
        slot = {w: n + i for i, w in enumerate(sorted(tset & sset))}
        n += len(slot)
        for p, w in enumerate(tw):
            if w in slot:
                t_pos.append(r * t_len + p)
                t_slot.append(slot[w])
        for p, w in enumerate(sw):
            if w in slot:
                s_pos.append(r * s_len + p + 1)  # after [CLS]
                s_slot.append(slot[w])
    return t_pos, t_slot, s_pos, s_slot, n


def student_tokens(model, ids):
    """The student's forward (common.Student.forward) keeping the per-token terms: returns the
    sentence vector [B, 384] and each position's projected final-LayerNorm state [B, T, 384]
    (the projection is affine, so the sentence vector is their masked mean)."""
    mask = ids != 0
    x = model.embed_rows(ids)
    for layer in model.layers:
        x = layer(x, mask)
    y = model.projection(model.final_ln(x))
    m = mask.unsqueeze(-1).to(y.dtype)
    return (y * m).sum(1) / m.sum(1).clamp(min=1), y


def mean_by_slot(flat, pos, slot, n):
    import torch
    dev = flat.device
    out = torch.zeros(n, flat.shape[-1], device=dev).index_add_(0, torch.tensor(slot, device=dev),
                                                               flat[torch.tensor(pos, device=dev)])
    cnt = torch.zeros(n, device=dev).index_add_(0, torch.tensor(slot, device=dev),
                                                torch.ones(len(slot), device=dev))
    return out / cnt[:, None]


def token_loss(y_words, t_words):
    """1 − cos² between the student's and the teacher's word vectors taken as one long vector each:
    the relative squared error left after the best global scale (the student's scale is free,
    sentence vectors are normalised), so words keep their relative norms — their weights in the
    mean pool. In [0, 1]."""
    dot = (y_words * t_words).sum()
    return 1 - dot * dot / ((y_words * y_words).sum() * (t_words * t_words).sum()).clamp(min=1e-12)


def read_lines(pack, limit=None):
    with lzma.open(os.path.join(pack, "corpus.tsv.xz"), "rt", encoding="utf-8") as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f]
    texts = [t for t in texts if len(t.split()) <= MAX_WORDS]
    return texts[:limit] if limit else texts


def ndcg_at(model, tok, ret):
    """nDCG@10 at 384 and 128 dims of an eval-mode student (int4 table as packed) on the
    retrieval set; CPU, like quick_eval.py."""
    import numpy as np
    import eval as ev
    from common import student_encode
    m = ev.with_emb_quant(model, "int4")
    Q = student_encode(m, tok, ret["queries"])
    D = student_encode(m, tok, ret["docs"])
    res = {}
    for d in (384, 128):
        Qd = Q[:, :d] / np.linalg.norm(Q[:, :d], axis=1, keepdims=True)
        Dd = D[:, :d] / np.linalg.norm(D[:, :d], axis=1, keepdims=True)
        res[d] = ev.ndcg_mrr(Qd, Dd, ret["qrels"])[0]
    return res


def load_npz_student(path):
    """A Student (eval mode, CPU) from a `pack_student` file or a plain student.npz."""
    import numpy as np
    import eval as ev
    return ev.student_from_arrays(unpack_student(np.load(path)))


def prepare(args, P):
    """Teacher vectors of every line (rotated into the PCA frame), student token ids, topic
    clusters → /tmp/le_prep.pt for the variant processes."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from common import Tok, device, pad_batch
    dev = device()
    t0 = time.time()
    teacher = Teacher(args.pack, dev)
    ret = json.load(open(os.path.join(args.pack, "retrieval.json")))
    t1 = time.time()
    tq = teacher.encode(ret["queries"]).cpu().numpy()
    td = teacher.encode(ret["docs"]).cpu().numpy()
    import eval as ev
    tn = ev.ndcg_mrr(tq, td, ret["qrels"])[0]
    P(f"teacher (int8 pack) nDCG@10 {tn:.4f} on the retrieval set ({time.time() - t1:.1f}s; "
      f"load {t1 - t0:.1f}s)")
    texts = read_lines(args.pack, args.limit)
    t1 = time.time()
    T = teacher.encode(texts)
    dt = time.time() - t1
    P(f"teacher: {len(texts)} lines in {dt:.1f}s ({len(texts) / dt:.0f} texts/s on {dev})")
    R = torch.from_numpy(np.load(os.path.join(args.pack, "pca.npy")).astype(np.float32)).to(dev)
    T = T @ R
    t1 = time.time()
    tok = Tok()
    ids = tok.encode_batch(texts)
    lens = torch.tensor([len(i) for i in ids])
    L = int(lens.max())
    idm = pad_batch(ids).to(torch.int32)
    P(f"student tokens: {len(ids)} lines in {time.time() - t1:.1f}s, mean {lens.float().mean():.1f}, max {L}")
    # topic clusters: k-means on the first 64 PCA coordinates (as train_student.topic_clusters)
    t1 = time.time()
    k = min(512, max(2, len(texts) // 100))
    X = F.normalize(T[:, :64], dim=-1)
    g = torch.Generator(device="cpu").manual_seed(0)
    C = X[torch.randperm(len(X), generator=g)[:k].to(dev)].clone()
    for _ in range(10):
        lab = torch.cat([(X[i:i + 65536] @ C.T).argmax(1) for i in range(0, len(X), 65536)])
        C = F.normalize(torch.zeros_like(C).index_add_(0, lab, X), dim=-1)
    P(f"clusters: k={k} in {time.time() - t1:.1f}s")
    torch.save({"T": T.cpu(), "ids": idm, "lens": lens, "clusters": lab.cpu(), "texts": texts,
                "teacher_ndcg": tn}, "/tmp/le_prep.pt")
    del teacher
    if dev == "cuda":
        torch.cuda.empty_cache()
    return tn


def child(args):
    """One variant: train until the deadline, export OUT/NAME.npz (`pack_student`)."""
    import numpy as np
    import torch
    from common import Student, Tok, device, pad_batch
    import quant
    from train_student import MultiOpt, batches, init_from_arrays, loss_fn
    v = VARIANTS[args.child]
    P = log_to(os.path.join("/tmp", f"le_{args.child}.log"))  # the parent appends it to OUT/log.txt
    dev = device()
    torch.set_num_threads(2)
    if dev == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True  # the teacher's matmuls (the student's ternary
        # products are exact in TF32: |x_q| ≤ 128, w ∈ {-1,0,1}, fp32 accumulation)
    torch.manual_seed(0)
    rng = np.random.RandomState(zlib.crc32(args.child.encode()))
    prep = torch.load("/tmp/le_prep.pt", weights_only=False)
    texts, T, idm, lens, clusters = prep["texts"], prep["T"].to(dev), prep["ids"], prep["lens"], prep["clusters"].numpy()
    n = len(texts)
    VAL = min(1000, n // 10)
    tr = n - VAL
    teacher = Teacher(args.pack, dev) if (v["spans"] or v["concat"] or v.get("tokens")) else None
    R = torch.from_numpy(np.load(os.path.join(args.pack, "pca.npy")).astype(np.float32)).to(dev)
    tok = Tok()
    model = Student(len(tok.vocab), n_layers=2)
    init_from_arrays(model, unpack_student(np.load(os.path.join(args.pack, "init.npz"))),
                     "the pack's init.npz", P)
    model.emb_quant = quant.RULES["int4"]
    model.to(dev)
    idm = idm.to(dev)
    lens_d = lens.to(dev)

    def lines_batch(b):
        b_t = torch.as_tensor(b, device=dev)
        x = idm[b_t, : int(lens_d[b_t].max())].long()
        return x, T[b_t]

    val_b = list(range(tr, n))

    @torch.no_grad()
    def val_cos():
        model.eval()
        cs = []
        for i in range(0, len(val_b), 256):
            x, t = lines_batch(val_b[i:i + 256])
            cs.append(torch.nn.functional.cosine_similarity(model(x), t).cpu())
        model.train()
        return float(torch.cat(cs).mean())

    emb = [model.embedding.weight]
    other = [p for nme, p in model.named_parameters() if nme != "embedding.weight"]
    opt = MultiOpt(torch.optim.SparseAdam(emb, lr=v["emb_lr"]), torch.optim.Adam(other, lr=v["lr"]))
    base = [g["lr"] for g in opt.param_groups]
    P(f"{args.child}: {v}, {tr} training lines, init val cos {val_cos():.4f}, deadline in "
      f"{args.deadline - time.time():.0f}s")
    start = time.time()
    budget = max(1.0, args.deadline - start)
    step, epoch, done = 0, 0, False
    last = start
    while not done:
        for b in batches(lens[:tr].tolist(), BS, np.random.RandomState(epoch), clusters[:tr], HARD):
            el = time.time() - start
            if el >= budget:
                done = True
                break
            f = el / (0.05 * budget) if el < 0.05 * budget else 0.5 * (1 + math.cos(math.pi * (el - 0.05 * budget) / (0.95 * budget)))
            for g, lr0 in zip(opt.param_groups, base):
                g["lr"] = lr0 * max(f, 0.02)
            x, t = lines_batch(b)
            extra = []
            if v["spans"]:
                cand = [i for i in b if len(texts[i].split()) >= 6]
                for i in rng.permutation(len(cand))[: int(BS * v["spans"])]:
                    w = texts[cand[i]].split()
                    ln = rng.randint(2, min(8, len(w) // 2) + 1)
                    s = rng.randint(0, len(w) - ln + 1)
                    extra.append(" ".join(w[s:s + ln]))
            if v["concat"]:
                hard = b[: int(BS * HARD)]
                for j in range(0, min(len(hard) - 1, 2 * int(BS * v["concat"])), 2):
                    a, c = texts[hard[j]], texts[hard[j + 1]]
                    if len(a.split()) + len(c.split()) <= MAX_WORDS:
                        extra.append(a + " " + c)
            if extra:
                te = teacher.encode(extra) @ R
                xe = pad_batch(tok.encode_batch(extra)).to(dev)
                Lm = max(x.shape[1], xe.shape[1])
                x = torch.cat([torch.nn.functional.pad(x, (0, Lm - x.shape[1])),
                               torch.nn.functional.pad(xe, (0, Lm - xe.shape[1]))])
                t = torch.cat([t, te])
            if v.get("tokens"):
                y, y_tok = student_tokens(model, x)
            else:
                y = model(x)
            loss, parts = loss_fn(y, t, LOSS["lam"], LOSS["weights"], LOSS["sim_full"],
                                  LOSS["prefix_cos"], v.get("kl", LOSS["kl"]), LOSS["tau"])
            if v.get("tokens"):
                bt = [texts[i] for i in b]
                h, t_words, t_trunc = teacher.hidden(bt)
                s_encs = tok.tok.encode_batch(bt, add_special_tokens=False)
                tp, ts, sp, ss, nw = word_slots(t_words, t_trunc, h.shape[1], s_encs, x.shape[1])
                tw = mean_by_slot(h.reshape(-1, h.shape[-1]), tp, ts, nw) @ R
                yw = mean_by_slot(y_tok[: len(b)].reshape(-1, y_tok.shape[-1]), sp, ss, nw)
                lt = token_loss(yw, tw)
                loss = loss + v["tokens"] * lt
                parts["tok"] = lt.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(other, 1.0)
            opt.step()
            step += 1
            if time.time() - last > 60 or step == 1:
                last = time.time()
                P(f"{args.child} step {step} ({step / max(1e-9, last - start):.1f}/s) loss {loss.item():.4f} "
                  + (f"token loss {parts['tok']:.4f} " if "tok" in parts else "")
                  + f"cos@384 {1 - parts[384]:.3f} rows {len(x)} lr×{max(f, 0.02):.2f} val cos {val_cos():.4f}")
        epoch += 1
    P(f"{args.child} done: {step} steps ({step * BS / tr:.2f} epochs of lines) in "
      f"{time.time() - start:.0f}s, val cos {val_cos():.4f}")
    tmp = os.path.join("/tmp", f"le_{args.child}.npz")
    model.export_npz(tmp)
    np.savez_compressed(os.path.join(args.out, f"{args.child}.npz"), **pack_student(np.load(tmp)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", default=os.path.join(os.path.dirname(HERE), "gpu_pack"))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/le_gpu_out"))
    ap.add_argument("--seconds", type=float, default=500, help="wall-clock budget of the whole command")
    ap.add_argument("--variants", default=DEFAULT, help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--limit", type=int, default=None, help="first N corpus lines only (smoke test)")
    ap.add_argument("--score-seconds", type=float, default=60,
                    help="of --seconds, kept for exporting and scoring the variants")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--import", dest="imp", default=None,
                    help="OUT/NAME.npz from a GPU run → train/runs/RUN/student.npz (with --name)")
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    os.environ.setdefault("LE_VOCAB", os.path.join(args.pack, "vocab.txt"))
    if args.imp:
        import numpy as np
        import common
        d = os.path.join(common.RUNS, args.name)
        os.makedirs(d, exist_ok=True)
        np.savez(os.path.join(d, "student.npz"), **unpack_student(np.load(args.imp)))
        json.dump({"layers": 2, "emb_quant": "int4"}, open(os.path.join(d, "meta.json"), "w"))
        print(f"{args.imp} → {d}/student.npz")
        return
    os.makedirs(args.out, exist_ok=True)
    if args.child:
        if VARIANTS[args.child].get("float"):
            os.environ["LE_FLOAT_LAYERS"] = "1"
        return child(args)
    t_start = time.time()
    P = log_to(os.path.join(args.out, "log.txt"))
    import torch
    P(f"torch {torch.__version__}, cuda {torch.cuda.is_available()}"
      + (f" ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else ""))
    tn = prepare(args, P)
    score_s = args.score_seconds  # export + scoring at the end
    deadline = t_start + args.seconds - score_s
    P(f"setup took {time.time() - t_start:.0f}s; training {deadline - time.time():.0f}s")
    names = [n for n in args.variants.split(",") if n]
    procs = {}
    for name in names:
        env = dict(os.environ)
        if VARIANTS[name].get("float"):
            env["LE_FLOAT_LAYERS"] = "1"
        procs[name] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--pack", args.pack,
                                        "--out", args.out, "--child", name, "--deadline", str(deadline)]
                                       + (["--limit", str(args.limit)] if args.limit else []), env=env)
    for name, p in procs.items():
        rc = p.wait()
        if rc:
            P(f"{name}: exited {rc}")
    with open(os.path.join(args.out, "log.txt"), "a") as f:  # ≤ 8 files come back: one log
        for name in names:
            lp = os.path.join("/tmp", f"le_{name}.log")
            if os.path.exists(lp):
                f.write(f"--- {name}\n" + open(lp).read())
    import common
    tok = common.Tok()
    ret = json.load(open(os.path.join(args.pack, "retrieval.json")))
    summary = {"teacher_ndcg": tn}
    for name in ["init"] + names:
        path = os.path.join(args.pack, "init.npz") if name == "init" else os.path.join(args.out, f"{name}.npz")
        if not os.path.exists(path):
            continue
        common.FLOAT_LAYERS = bool(VARIANTS.get(name, {}).get("float"))  # read by BitLinear.forward
        r = ndcg_at(load_npz_student(path), tok, ret)
        common.FLOAT_LAYERS = False
        summary[name] = r
        P(f"{name:12s} nDCG@10 @384 {r[384]:.4f} ({100 * r[384] / tn:.1f}% of teacher) @128 {r[128]:.4f}")
        if VARIANTS.get(name, {}).get("float"):
            os.remove(path)  # not shippable; keep the figure only
    json.dump(summary, open(os.path.join(args.out, "summary.json"), "w"), indent=1)
    P(f"all done in {time.time() - t_start:.0f}s")


if __name__ == "__main__":
    main()
