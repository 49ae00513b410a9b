"""Small shared builders for the reference tests."""
import numpy as np

import make_fixtures
import pack

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "##s", "the",
         "[", "]", "c", "##l", "cl", "a", "##a", "##b"]


def config(**over):
    c = {
        "vocab": list(VOCAB), "d_model": 8, "n_layers": 0, "n_heads": 2, "ffn_dim": 8, "output_dim": 8,
        "max_seq_len": 16, "matryoshka_dims": [4], "do_lower_case": True, "strip_accents": True,
        "model_id": "test", "version": "1.2.3", "license_id": 7,
    }
    c.update(over)
    return c


def weights(cfg, seed=0):
    rng = np.random.default_rng(seed)
    return make_fixtures.random_weights(rng, len(cfg["vocab"]), cfg["d_model"], cfg["n_layers"],
                                        cfg["ffn_dim"], cfg["output_dim"])


def model_bytes(embedding_quant="fp32", weight_quant="fp32", seed=0, **over):
    cfg = config(**over)
    return pack.pack(cfg, weights(cfg, seed), embedding_quant=embedding_quant, weight_quant=weight_quant)
