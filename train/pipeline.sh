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
if has data; then
  [[ -f train/data/corpus.tsv ]] || { log corpus; $py train/extract_corpus.py; }
  [[ -f train/data/eval/retrieval.json ]] || { log eval data; $py train/prepare_eval.py; }
fi
if has teacher; then log "teacher embeddings (resumes by shard)"; $py train/embed_teacher.py; fi
threads="--threads ${LE_THREADS}"
if has static; then
  # v3: from the shipped v2 weights, with the in-batch ranking KL term and topic batches.
  [[ -f train/runs/static_v2/student.npz ]] || $py train/unpack.py public/models/lightembed-en-static.bin --name static_v2
  log "static student (resumes from train/runs/static_v3/ckpt.pt)"
  $py train/train_student.py $threads --name static_v3 --layers 0 --init-from static_v2 \
    --epochs "${STATIC_EPOCHS:-4}" --bs 128 --lr 5e-4 --emb-lr 1e-2 --prefix-weights 128:2 \
    --kl "${KL:-1.0}" --tau 0.05 --hard "${HARD:-0.5}" --max-minutes "${MAX_MINUTES:-1e9}"
fi
if has 2l; then
  log "2-layer student (resumes from train/runs/2l_v4/ckpt.pt)"
  $py train/train_student.py $threads --name 2l_v4 --layers 2 --init-from static_v3 --emb-quant ternary \
    --epochs "${TWO_EPOCHS:-3}" --bs 128 --lr 1e-3 --emb-lr 3e-3 --prefix-weights 128:2 --kl "${KL:-1.0}" --hard "${HARD:-0.5}"
fi
if has eval; then
  log eval
  $py train/eval.py --run static=static_v3 --run 2l=2l_v4
fi
log done
