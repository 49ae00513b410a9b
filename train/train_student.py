#!/usr/bin/env python3
"""Distil a lightembed student from the cached teacher embeddings. Resumable.

  python train/train_student.py --name static --layers 0 --epochs 6
  python train/train_student.py --name 2l --layers 2 --epochs 2 --emb-quant ternary

Target frame: PCA rotation R of the teacher space (train/data/pca.npy), so leading dims carry
most variance.  Loss over Matryoshka prefixes {32,64,128,256,384}: (1 - cos) on normalised
prefixes + in-batch similarity-matrix MSE (+ optional ranking KL), and optionally
(`--contrastive W`, issue 34) W × a symmetric in-batch InfoNCE term on pairs (natural pairs from
`--pairs FILE`, teacher nearest neighbours `--nn-pairs`, span → line `--span-pairs`), over the
same prefixes.  Writes train/runs/NAME/{ckpt.pt,student.npz,log}.
"""
import argparse
import glob
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import (DATA, PREFIXES, PROFILE, RUNS, TEACHER, Student, Tok, device, pad_batch, read_corpus)  # noqa: E402
import quant  # noqa: E402
from pairs import PairSource  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VAL = 1000


class MultiOpt:
    """SparseAdam for the embedding table + Adam for the rest, driven as one optimiser."""

    def __init__(self, *opts):
        self.opts = opts
        self.param_groups = [g for o in opts for g in o.param_groups]

    def zero_grad(self, set_to_none=True):
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)

    def step(self):
        for o in self.opts:
            o.step()

    def state_dict(self):
        return [o.state_dict() for o in self.opts]

    def load_state_dict(self, sds):
        for o, sd in zip(self.opts, sds):
            o.load_state_dict(sd)


def load_targets():
    shards = sorted(glob.glob(os.path.join(TEACHER, "shard_*.npy")))
    T = np.concatenate([np.load(p).astype(np.float32) for p in shards]) if shards else None
    return center(T)


def center(X):
    """Profiles with `center` (Turkish: e5's vectors share a mean of norm 0.91, so raw cosines
    sit near 0.8 and the ranking lives in what is left): the targets are the teacher vectors minus
    the corpus mean (`teacher_mean.npy`, computed once from all shards), re-normalised. Centred
    e5 also ranks better: 0.591 vs 0.537 nDCG@10 (symmetric, Turkish dev split)."""
    if X is None or not PROFILE.get("center"):
        return X
    p = os.path.join(common.FRAME, "teacher_mean.npy")
    if not os.path.exists(p):
        np.save(p, X.mean(0).astype(np.float64))
    Y = X - np.load(p).astype(np.float32)
    return (Y / np.linalg.norm(Y, axis=1, keepdims=True)).astype(np.float32)


def pca_rotation(T):
    p = os.path.join(common.FRAME, "pca.npy")
    if os.path.exists(p):
        return np.load(p)
    C = np.cov(T[:50000].astype(np.float64), rowvar=False)
    w, V = np.linalg.eigh(C)
    R = V[:, ::-1].copy()  # columns = principal axes, descending variance
    # fix signs deterministically
    R *= np.sign(R[np.abs(R).argmax(0), range(R.shape[1])])
    np.save(p, R.astype(np.float64))
    return R


def loss_fn(y, t, lam, weights=None, sim_full=False, prefix_cos=1.0, kl=0.0, tau=0.05):
    """Weighted mean over Matryoshka prefixes of (1 - cos) + lam * in-batch similarity MSE
    (+ kl * in-batch ranking KL: each row's softmax(teacher similarities / tau) against the
    student's, the diagonal left out — it weights a text's nearest neighbours in the batch, which
    is what retrieval ranks, where the MSE weights every pair alike).

    sim_full: the similarity term of every prefix targets the teacher's full 384-d similarities
    (what a truncated vector should rank like) instead of the teacher's own truncated prefix.
    prefix_cos: weight of the (1 - cos) term for prefixes shorter than the full vector."""
    weights = weights or {d: 1.0 for d in PREFIXES}
    total = 0.0
    parts = {}
    tf = F.normalize(t, dim=-1)
    for d in PREFIXES:
        s = F.normalize(y[:, :d], dim=-1)
        tt = F.normalize(t[:, :d], dim=-1)
        lc = (1 - (s * tt).sum(-1)).mean()
        ts = tf if sim_full else tt
        ls = ((s @ s.T - ts @ ts.T) ** 2).mean()
        wc = 1.0 if d == PREFIXES[-1] else prefix_cos
        lk = 0.0
        if kl > 0:
            eye = torch.eye(len(s), dtype=torch.bool, device=s.device)
            st = (ts @ ts.T / tau).masked_fill(eye, -1e4)
            ss = (s @ s.T / tau).masked_fill(eye, -1e4)
            lk = F.kl_div(F.log_softmax(ss, -1), F.log_softmax(st, -1), log_target=True,
                          reduction="batchmean")
        total = total + weights[d] * (wc * lc + lam * ls + kl * lk)
        parts[d] = lc.item()
    return total / sum(weights.values()), parts


def info_nce(yq, yp, weights=None, tau=0.05, groups=None):
    """Symmetric in-batch InfoNCE (multiple-negatives ranking) over pairs, averaged over the
    Matryoshka prefixes with the same weights as the distillation terms: row i of `yq` should
    pick row i of `yp` among all rows of `yp` (and back), every other row a negative. `groups`
    (one id per pair, e.g. the source line) keeps pairs of one group from being each other's
    negatives."""
    weights = weights or {d: 1.0 for d in PREFIXES}
    n = len(yq)
    lab = torch.arange(n, device=yq.device)
    mask = None
    if groups is not None:
        g = torch.as_tensor(groups, device=yq.device)
        mask = (g[:, None] == g[None, :]) & ~torch.eye(n, dtype=torch.bool, device=yq.device)
    total = 0.0
    for d in PREFIXES:
        q = F.normalize(yq[:, :d], dim=-1)
        p = F.normalize(yp[:, :d], dim=-1)
        lg = q @ p.T / tau
        if mask is not None:
            lg = lg.masked_fill(mask, -1e4)
        total = total + weights[d] * 0.5 * (F.cross_entropy(lg, lab) + F.cross_entropy(lg.T, lab))
    return total / sum(weights.values())


def nn_pairs(T, min_cos, P, block=1024):
    """(i, j) with j = the nearest other text to i by teacher cosine, kept when that cosine is at
    least `min_cos` and below 0.98 (near-duplicates teach nothing)."""
    t0 = time.time()
    X = torch.as_tensor(T, dtype=torch.float32)
    X = F.normalize(X, dim=-1)
    out = []
    for a in range(0, len(X), block):
        S = X[a:a + block] @ X.T
        S[torch.arange(len(S)), torch.arange(a, a + len(S))] = -1
        S = S.masked_fill(S >= 0.98, -1)
        v, j = S.max(1)
        out += [(a + i, int(j[i])) for i in range(len(S)) if v[i] >= min_cos]
    P(f"nearest-neighbour pairs: {len(out)} of {len(X)} texts at cos ≥ {min_cos} in {time.time() - t0:.0f}s")
    return out


def batches(lengths, bs, rng, clusters=None, hard=0.0):
    """Batches of `bs` indices. With `clusters` (a topic label per text) and `hard` > 0, that
    fraction of each batch comes from one topic cluster (its texts in a row, clusters in random
    order) and the rest at random, so in-batch neighbours are informative."""
    if clusters is not None and hard > 0:
        n_hard = int(bs * hard)
        order = rng.permutation(int(clusters.max()) + 1)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        topical = np.lexsort((rng.random_sample(len(clusters)), rank[clusters]))
        rand = rng.permutation(len(lengths))
        nb = len(lengths) // bs
        return [list(topical[i * n_hard:(i + 1) * n_hard]) + list(rand[i * (bs - n_hard):(i + 1) * (bs - n_hard)])
                for i in range(nb)]
    idx = rng.permutation(len(lengths))
    out = []
    for g in range(0, len(idx), bs * 50):  # sort within chunks of 50 batches to cut padding
        grp = sorted(idx[g: g + bs * 50], key=lambda i: lengths[i])
        out += [grp[i: i + bs] for i in range(0, len(grp), bs)]
    order = rng.permutation(len(out))
    return [out[i] for i in order]


@torch.no_grad()
def evaluate(model, ids, T):
    model.eval()
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    ys = []
    dev = next(model.parameters()).device
    for i in range(0, len(ids), 256):
        ys.append(model(pad_batch([ids[j] for j in order[i: i + 256]]).to(dev)).cpu())
    y = torch.cat(ys)
    t = torch.from_numpy(T[order])
    res = {d: F.cosine_similarity(y[:, :d], t[:, :d]).mean().item() for d in PREFIXES}
    model.train()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--epochs", type=float, default=4)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--emb-lr", type=float, default=None)
    ap.add_argument("--lam", type=float, default=5.0)
    ap.add_argument("--emb-quant", default="none", choices=["none"] + list(quant.RULES))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--init-from", default=None,
                    help="RUN: start from that run's student.npz (embedding, final LayerNorm, projection); "
                         "transformer layers start as small residuals, so step 0 equals that model")
    ap.add_argument("--prefix-weights", default=None,
                    help="loss weight per Matryoshka prefix, e.g. 128:2 (others 1)")
    ap.add_argument("--sim-full", action="store_true",
                    help="similarity term of every prefix targets the teacher's full-dim similarities")
    ap.add_argument("--prefix-cos", type=float, default=1.0,
                    help="weight of the (1 - cos) term for the prefixes shorter than 384")
    ap.add_argument("--max-minutes", type=float, default=1e9, help="stop (checkpointed) after this")
    ap.add_argument("--kl", type=float, default=0.0,
                    help="weight of the in-batch ranking KL term (0: off)")
    ap.add_argument("--tau", type=float, default=0.05, help="temperature of the ranking KL term")
    ap.add_argument("--spans", action="store_true",
                    help="also train on the short word spans of spans.tsv (teacher/spans_*.npy)")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME",
                    help="also train on DATA/NAME.txt with its teacher vectors (embed_teacher.py --extra NAME)")
    ap.add_argument("--vocab-examples", action="store_true",
                    help="also train on each vocabulary token alone against the teacher's vector of it")
    ap.add_argument("--residual-scale", type=float, default=0.1,
                    help="--init-from a run with fewer layers: the new layers' output projections "
                         "(attention out, FFN down) are scaled by this; 0 starts the model exactly "
                         "as that run (zero residuals)")
    ap.add_argument("--contrastive", type=float, default=0.0,
                    help="weight of the in-batch InfoNCE term on pairs (0: off, the pure distillation runs)")
    ap.add_argument("--ctau", type=float, default=0.05, help="temperature of the InfoNCE term")
    ap.add_argument("--cbs", type=int, default=None, help="pairs per step for InfoNCE (default --bs)")
    ap.add_argument("--pairs", default=None, help="TSV of natural pairs (query TAB positive) for InfoNCE")
    ap.add_argument("--span-pairs", action="store_true",
                    help="InfoNCE pairs made each step: a 2–6-word span of a corpus line → that line")
    ap.add_argument("--keyword-spans", type=float, default=0.0, metavar="FRACTION",
                    help="with --span-pairs: this fraction of the span queries are instead 1–3 of the "
                         "line's rarest words (highest idf over the span lines), in their order: a "
                         "keyword or title-like query → that line")
    ap.add_argument("--nn-pairs", type=float, default=None, metavar="MIN_COS",
                    help="InfoNCE pairs: each training text with its nearest teacher neighbour (cos ≥ MIN_COS)")
    ap.add_argument("--hard", type=float, default=0.0,
                    help="fraction of each batch drawn from one topic cluster of the teacher vectors")
    ap.add_argument("--token-weights", type=float, default=None, metavar="ALPHA",
                    help="learn a pooling weight per token, starting from idf^ALPHA over the corpus "
                         "([CLS]/[SEP] near 0); idf_sink.py --weights-from RUN lays it out in the format")
    ap.add_argument("--weight-lr", type=float, default=1e-2, help="learning rate of the token weights' logits")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the initialisation, batch order and pair draws (a second seed sizes run-to-run noise)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out = os.path.join(RUNS, args.name)
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "log"), "a")

    def P(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    T = load_targets()
    R = pca_rotation(T)
    corpus = read_corpus()
    texts = corpus[: len(T)]
    if args.limit:
        texts, T = texts[: args.limit], T[: args.limit]
    if args.spans:
        # query-like word spans of corpus lines (extract_corpus_tr.py) with their teacher vectors,
        # put first like the vocabulary examples
        sp = [l.rstrip("\n") for l in open(os.path.join(DATA, "spans.tsv"), encoding="utf-8")]
        shards = sorted(glob.glob(os.path.join(TEACHER, "spans_*.npy")))
        S = center(np.concatenate([np.load(p).astype(np.float32) for p in shards]))
        texts, T = sp[: len(S)] + texts, np.concatenate([S, T])
        P(f"+{len(S)} span examples")
    for name in args.extra:
        # more texts with their teacher vectors (embed_teacher.py --extra NAME: DATA/NAME.txt,
        # one text per line → TEACHER/NAME_*.npy), e.g. the passages longer than read_corpus keeps
        ex = [l.rstrip("\n") for l in open(os.path.join(DATA, f"{name}.txt"), encoding="utf-8")]
        shards = sorted(glob.glob(os.path.join(TEACHER, f"{name}_*.npy")))
        X = center(np.concatenate([np.load(p).astype(np.float32) for p in shards]))
        assert len(X) == len(ex), f"{name}: {len(X)} teacher vectors for {len(ex)} texts"
        texts, T = ex + texts, np.concatenate([X, T])
        P(f"+{len(X)} {name} examples")
    if args.vocab_examples:
        # every vocabulary token's own text with the teacher's vector of it (embed_teacher.py's
        # vocab_tokens.npy) as extra training pairs, put first so the validation rows stay corpus
        # text: each table row gets a direct target even when the corpus is small (Turkish)
        vocab = [l.rstrip("\n") for l in open(common.vocab_path(), encoding="utf-8")]
        V = center(np.load(os.path.join(TEACHER, "vocab_tokens.npy")))
        keep = [i for i, t in enumerate(vocab) if not (t.startswith("[") and t.endswith("]"))]
        texts = [vocab[i][2:] if vocab[i].startswith("##") else vocab[i] for i in keep] + texts
        T = np.concatenate([V[keep].astype(np.float32), T])
        P(f"+{len(keep)} vocabulary examples")
    T = (T @ R).astype(np.float32)
    tok = Tok()
    t0 = time.time()
    ids = tok.encode_batch(texts)
    P(f"{len(texts)} texts, tokenized in {time.time() - t0:.0f}s; mean len {np.mean([len(i) for i in ids]):.1f}")
    val_ids, val_T = ids[-VAL:], T[-VAL:]
    tr_ids, tr_T = ids[:-VAL], torch.from_numpy(T[:-VAL])
    lengths = [len(i) for i in tr_ids]
    clusters = topic_clusters(tr_T, P) if args.hard > 0 else None  # on the CPU copy
    pairs = make_pair_source(args, tok, texts, tr_ids, tr_T, P) if args.contrastive > 0 else None

    model = Student(len(tok.vocab), n_layers=args.layers)
    if args.token_weights is not None:
        idf, count = common.corpus_idf(tok, corpus)  # over the whole corpus, as idf_sink.py
        w0 = np.clip(common.idf_weights(tok, idf, args.token_weights), 0.02, 0.98)
        model.token_logit = torch.nn.Parameter(torch.from_numpy(np.log(w0 / (1 - w0)).astype(np.float32)[:, None]))
        # kappa as idf_sink.py sets it: 1 / the mean weight of a corpus token, kept fixed
        model.kappa = float(1.0 / (w0 * count / count.sum()).sum())
        P(f"token weights from idf^{args.token_weights}, kappa {model.kappa:.2f}")
    ck = os.path.join(out, "ckpt.pt")
    state = None
    if os.path.exists(ck):
        state = torch.load(ck, weights_only=False, map_location="cpu")
        model.load_state_dict(state["model"])
        P(f"resumed at step {state['step']}")
    elif args.init_from:
        init_from_run(model, args.init_from, P, args.residual_scale)
    else:
        init_model(model, tok, tr_ids[:3000], tr_T[:3000], R, P)
    if args.emb_quant != "none":
        model.emb_quant = quant.RULES[args.emb_quant]
    dev = device()
    model.to(dev)
    tr_T = tr_T.to(dev)
    P(f"device {dev}")

    emb_params = [model.embedding.weight]
    other = [p for n, p in model.named_parameters() if n not in ("embedding.weight", "token_logit")]
    opts = [torch.optim.SparseAdam(emb_params, lr=args.emb_lr or args.lr), torch.optim.Adam(other, lr=args.lr)]
    if model.token_logit is not None:
        opts.append(torch.optim.SparseAdam([model.token_logit], lr=args.weight_lr))
    opt = MultiOpt(*opts)
    steps_per_epoch = math.ceil(len(tr_ids) / args.bs)
    total = int(steps_per_epoch * args.epochs)
    warm = min(300, total // 20)
    base = [g["lr"] for g in opt.param_groups]
    step = 0
    if state:
        opt.load_state_dict(state["opt"])
        step = state["step"]
    weights = {d: 1.0 for d in PREFIXES}
    for kv in (args.prefix_weights or "").split(","):
        if kv:
            k, v = kv.split(":")
            weights[int(k)] = float(v)
    P(f"steps {total} ({steps_per_epoch}/epoch), layers {args.layers}, emb_quant {args.emb_quant}, "
      f"prefix weights {weights}")
    P("init/resume val cos", evaluate(model, val_ids, val_T))
    model.train()
    start = time.time()
    epoch = step // steps_per_epoch
    while step < total:
        erng = np.random.RandomState([epoch, args.seed] if args.seed else epoch)  # seed 0: the old order
        bl = batches(lengths, args.bs, erng, clusters, args.hard)
        for bi, b in enumerate(bl):
            if epoch * steps_per_epoch + bi < step:
                continue
            if step >= total:
                break
            f = step / max(1, warm) if step < warm else 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))
            for g, lr0 in zip(opt.param_groups, base):
                g["lr"] = lr0 * max(f, 0.02)
            x = pad_batch([tr_ids[i] for i in b]).to(dev)
            y = model(x)
            loss, parts = loss_fn(y, tr_T[b], args.lam, weights, args.sim_full, args.prefix_cos,
                                  args.kl, args.tau)
            if pairs is not None:
                qi, pi, grp = pairs.batch(args.cbs or args.bs)
                yq = model(pad_batch(qi).to(dev))
                yp = model(pad_batch(pi).to(dev))
                lc = info_nce(yq, yp, weights, args.ctau, grp)
                loss = loss + args.contrastive * lc
                parts["nce"] = lc.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(other, 1.0)
            opt.step()
            step += 1
            if step % 50 == 0:
                el = time.time() - start
                nce = f" nce {parts['nce']:.3f}" if "nce" in parts else ""
                P(f"step {step}/{total} loss {loss.item():.4f} cos@32 {1 - parts[32]:.3f} "
                  f"cos@384 {1 - parts[384]:.3f}{nce} {el / 60:.1f} min")
            stop = (time.time() - start) / 60 > args.max_minutes or os.path.exists(os.path.join(out, "STOP"))
            if step % 50 == 0 or step == total or stop:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ck + ".tmp")
                os.replace(ck + ".tmp", ck)
                if stop:
                    P(f"max minutes / STOP file reached at step {step}; checkpointed, rerun to resume")
                    return finish(model, out, val_ids, val_T, P, args, complete=False)
        epoch += 1
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ck)
    finish(model, out, val_ids, val_T, P, args, complete=True)


def make_pair_source(args, tok, texts, tr_ids, tr_T, P):
    """The contrastive term's pairs (`PairSource`) from --pairs / --nn-pairs / --span-pairs. The
    span lines are every corpus line (read_corpus, beyond the teacher's shards too) except the
    validation rows."""
    rng = np.random.RandomState([1, args.seed] if args.seed else 1)
    fixed = []
    if args.pairs:
        rows = [l.rstrip("\n").split("\t") for l in open(args.pairs, encoding="utf-8")]
        rows = [r for r in rows if len(r) >= 2 and r[0] and r[1]]
        qi, pi = tok.encode_batch([r[0] for r in rows]), tok.encode_batch([r[1] for r in rows])
        # a positive seen twice is one group (not a negative of itself)
        gid = {}
        fixed += [(a, b, gid.setdefault(r[1], len(gid))) for a, b, r in zip(qi, pi, rows)]
        P(f"+{len(rows)} pairs from {args.pairs}")
    if args.nn_pairs is not None:
        off = 10_000_000
        fixed += [(tr_ids[i], tr_ids[j], off + min(i, j)) for i, j in nn_pairs(tr_T, args.nn_pairs, P)]
    lines = []
    if args.span_pairs:
        val = set(texts[-VAL:])
        allt = [t for t in read_corpus() if t not in val and len(t.split()) >= 8]
        lines = tok.encode_batch(allt)
        P(f"span pairs from {len(lines)} corpus lines")
    cont = {i for t, i in tok.vocab.items() if t.startswith("##")}
    if not fixed and not lines:
        sys.exit("--contrastive needs pairs: --pairs FILE, --nn-pairs MIN_COS or --span-pairs")
    if args.keyword_spans and not lines:
        sys.exit("--keyword-spans needs --span-pairs")
    return PairSource(fixed, lines, cont, rng, args.keyword_spans)


def topic_clusters(T, P, k=512, iters=8):
    """k-means (k topics) of the teacher vectors on their first 64 PCA coordinates; cached in
    train/data/clusters_K.npy for the training split."""
    p = os.path.join(common.FRAME, f"clusters_{k}_{len(T)}.npy")
    if os.path.exists(p):
        return np.load(p)
    t0 = time.time()
    X = F.normalize(T[:, :64].float(), dim=-1)
    g = torch.Generator().manual_seed(0)
    C = X[torch.randperm(len(X), generator=g)[:k]].clone()
    for _ in range(iters):
        lab = torch.cat([(X[i:i + 20000] @ C.T).argmax(1) for i in range(0, len(X), 20000)])
        for c in range(k):
            m = lab == c
            if m.any():
                C[c] = F.normalize(X[m].mean(0), dim=0)
    lab = lab.numpy()
    np.save(p, lab)
    P(f"topic clusters: k={k} in {time.time() - t0:.0f}s, sizes {np.bincount(lab, minlength=k).min()}–{np.bincount(lab, minlength=k).max()}")
    return lab


def finish(model, out, val_ids, val_T, P, args, complete):
    """Export student.npz; `DONE` marks a run whose schedule ran to its end (pipeline.sh starts
    the next step only then — a run stopped by --max-minutes or STOP is resumed instead)."""
    P("final val cos", evaluate(model, val_ids, val_T))
    model.export_npz(os.path.join(out, "student.npz"))
    if model.token_logit is not None:
        np.savez(os.path.join(out, "token_weights.npz"), kappa=np.float64(model.kappa),
                 w=torch.sigmoid(model.token_logit[:, 0]).detach().cpu().double().numpy())
    json.dump({"layers": args.layers, "emb_quant": args.emb_quant}, open(os.path.join(out, "meta.json"), "w"))
    done = os.path.join(out, "DONE")
    if complete:
        open(done, "w").write("schedule complete\n")
    elif os.path.exists(done):
        os.remove(done)
    P("exported", os.path.join(out, "student.npz"))


@torch.no_grad()
def init_from_run(model, run, P, residual_scale=0.1):
    """Start from another run's exported student (`student.npz`): the embedding table, final
    LayerNorm and projection always; the transformer layers too when that run has as many (e.g.
    continuing the 2-layer model on more data). Otherwise (e.g. from the static model) the new
    layers' output projections are scaled down so each starts as a small residual."""
    init_from_arrays(model, np.load(os.path.join(RUNS, run, "student.npz")), f"run {run}", P, residual_scale)


@torch.no_grad()
def init_from_arrays(model, z, label, P, residual_scale=0.1):
    """`init_from_run` from `student.npz` arrays already loaded (`z`: name → array)."""
    names = {"embedding": model.embedding.weight,
             "final_ln.weight": model.final_ln.weight, "final_ln.bias": model.final_ln.bias,
             "projection.weight": model.projection.weight, "projection.bias": model.projection.bias}
    src_layers = len({k.split(".")[1] for k in z if k.startswith("layers.")})
    if src_layers == len(model.layers):
        for i, L in enumerate(model.layers):
            p = f"layers.{i}."
            names.update({p + "ln1.weight": L.ln1.weight, p + "ln1.bias": L.ln1.bias,
                          p + "attn.q.weight": L.q.weight, p + "attn.k.weight": L.k.weight,
                          p + "attn.v.weight": L.v.weight,
                          p + "attn.out.weight": L.out.weight, p + "attn.out.bias": L.out.bias,
                          p + "ln2.weight": L.ln2.weight, p + "ln2.bias": L.ln2.bias,
                          p + "ffn.up.weight": L.up.weight, p + "ffn.up.bias": L.up.bias,
                          p + "ffn.down.weight": L.down.weight, p + "ffn.down.bias": L.down.bias})
    else:
        for L in model.layers:
            for lin in (L.out, L.down):
                lin.weight.mul_(residual_scale)
                if residual_scale == 0 and lin.bias is not None:
                    lin.bias.zero_()
    for k, param in names.items():
        param.copy_(torch.from_numpy(z[k]))
    P(f"init from {label} ({src_layers} layers there, {len(model.layers)} here)")


@torch.no_grad()
def init_model(model, tok, ids, T, R, P):
    """Embedding rows ← teacher vector of each token alone (rotated into the PCA frame, first
    d_model coords); projection ← least squares from pooled features to targets."""
    V = center(np.load(os.path.join(TEACHER, "vocab_tokens.npy"))) @ R
    d = model.embedding.weight.shape[1]
    E = torch.from_numpy(V[:, :d].astype(np.float32))
    E = E / E.std() * (1.0 if model.cfg["n_layers"] == 0 else 1.0)
    model.embedding.weight.copy_(E)
    for L in model.layers:
        for lin in (L.out, L.down):
            lin.weight.mul_(0.1)
    model.eval()
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # little padding
    ids = [ids[i] for i in order]
    T = T[order]
    feats = []
    for i in range(0, len(ids), 256):
        x = pad_batch(ids[i: i + 256])
        mask = x != 0
        h = model.embed_rows(x)
        for L in model.layers:
            h = L(h, mask)
        h = model.final_ln(h)
        m = mask.unsqueeze(-1).float()
        feats.append((h * m).sum(1) / m.sum(1))
    X = torch.cat(feats)
    X1 = torch.cat([X, torch.ones(len(X), 1)], 1)
    X1, Td = X1.double(), T.double()
    G = X1.T @ X1
    lam = 1e-2 * G.diagonal().mean()  # ridge: pooled features are highly collinear
    W = torch.linalg.solve(G + lam * torch.eye(len(G), dtype=G.dtype), X1.T @ Td).float()  # [d+1, 384]
    # output is L2-normalised, so any positive rescale is free: bring weights to O(1/sqrt(d))
    c = (1.0 / math.sqrt(W.shape[0] - 1)) / W[:-1].std()
    model.projection.weight.copy_(W[:-1].T * c)
    model.projection.bias.copy_(W[-1] * c)
    model.train()
    P("init done")


if __name__ == "__main__":
    main()
