"""BitLinear details pinned by hand-computed values; tokenizer and embed() contracts."""
import math

import numpy as np
import pytest

import forward
from forward import Linear
from helpers import model_bytes

F = np.float32


def tern(w, scale=1.0, bias=None):
    return Linear(weight=np.asarray(w, F), scale=F(scale), bias=None if bias is None else np.asarray(bias, F),
                  ternary=True)


def ln_by_hand(row):
    """Non-affine LayerNorm in float64, biased variance, eps 1e-5."""
    row = np.asarray(row, np.float64)
    mu = row.mean()
    var = ((row - mu) ** 2).mean()
    return (row - mu) / math.sqrt(var + 1e-5)


def test_bitlinear_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 4.0]], F)
    W = [[1, 0, -1, 0], [0, 1, 1, 1], [-1, -1, 0, 1]]
    lin = tern(W, scale=2.0, bias=[0.5, -1.0, 3.0])
    n = ln_by_hand(x[0])  # [-1.3416, -0.4472, 0.4472, 1.3416]
    x_scale = 128.0 / np.abs(n).max()  # 128.0, not 127.0
    xq = np.clip(np.round(n * x_scale), -128, 127)
    assert xq.tolist() == [-128, -43, 43, 127]  # +128 clamps to 127
    y = np.array(W, np.float64) @ xq + np.array([0.5, -1.0, 3.0])  # bias BEFORE the rescale
    expected = y / (2.0 * x_scale)
    np.testing.assert_allclose(forward.bitlinear(x, lin)[0], expected, rtol=1e-6)
    # the wrong readings are measurably different
    wrong_bias_after = (np.array(W) @ xq) / (2.0 * x_scale) + np.array([0.5, -1.0, 3.0])
    assert np.abs(forward.bitlinear(x, lin)[0] - wrong_bias_after).max() > 0.1
    x_scale_127 = 127.0 / np.abs(n).max()
    wrong_127 = (np.array(W) @ np.clip(np.round(n * x_scale_127), -128, 127) + [0.5, -1.0, 3.0]) / (2 * x_scale_127)
    assert np.abs(forward.bitlinear(x, lin)[0] - wrong_127).max() > 1e-3


def test_bitlinear_rounds_half_to_even():
    # [-64, -1.25, 1.25, 64] normalises to exactly [-128, -2.5, 2.5, 128] on the int8 grid
    for b, q in [(1.25, 2), (1.75, 4)]:
        x = np.array([[-64.0, -b, b, 64.0]], F)
        seen = []
        out = forward.bitlinear(x, tern(np.eye(4)), observe=seen.append)
        assert seen[0].tolist() == [[-128.0, -2 * b, 2 * b, 128.0]]
        x_scale = 128.0 / np.abs(ln_by_hand(x[0])).max()
        np.testing.assert_allclose(out[0], np.array([-128, -q, q, 127]) / x_scale, rtol=1e-6)


def test_bitlinear_internal_layernorm_is_non_affine_and_per_row():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 8)).astype(F)
    W = rng.integers(-1, 2, size=(4, 8))
    lin = tern(W, scale=3.0, bias=rng.normal(size=4))
    out = forward.bitlinear(x, lin)
    # an affine change of one row (a·x + b) leaves its normalised, quantised input unchanged
    # (up to float rounding), so the output is unchanged — only an internal LN does that
    x2 = x.copy()
    x2[1] = 5.0 * x[1] + 3.0
    np.testing.assert_allclose(forward.bitlinear(x2, lin), out, rtol=1e-4, atol=1e-4)
    # per token row (decision 12): each row is the same alone as in the batch
    for i in range(3):
        np.testing.assert_array_equal(forward.bitlinear(x[i : i + 1], lin)[0], out[i])


def test_bitlinear_fp32_is_plain_linear_and_ignores_scale():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 8)).astype(F)
    W = rng.normal(size=(4, 8)).astype(F)
    b = rng.normal(size=4).astype(F)
    lin = Linear(weight=W, scale=F(0.25), bias=b, ternary=False)
    np.testing.assert_allclose(forward.bitlinear(x, lin), x @ W.T + b, rtol=1e-6)


def test_bitlinear_zero_row_uses_absmax_floor():
    out = forward.bitlinear(np.full((1, 4), 3.0, F), tern(np.eye(4), bias=[1, 0, 0, 0]))
    # LN of a constant row is 0 → x_q = 0 → y = bias; x_scale = 128 / 1e-5
    np.testing.assert_allclose(out[0], np.array([1, 0, 0, 0]) / (128.0 / 1e-5), rtol=1e-6)


def test_gelu_is_exact_erf():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 1.0, 2.0], F)
    exact = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)]
    np.testing.assert_allclose(forward.gelu(x), exact, rtol=1e-7, atol=1e-9)
    tanh_approx = 0.5 * 1.0 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1.0 + 0.044715)))
    assert abs(forward.gelu(np.array([1.0], F))[0] - tanh_approx) > 1e-4


def test_layer_norm_biased_variance():
    x = np.array([[1.0, 2.0, 3.0, 4.0]], F)
    w = np.array([1, 2, 3, 4], F)
    b = np.array([0, 1, 0, -1], F)
    np.testing.assert_allclose(forward.layer_norm(x, w, b)[0], ln_by_hand(x[0]) * w + b, rtol=1e-6)


def test_normalize_floor():
    assert forward.normalize(np.zeros(4, F)).tolist() == [0, 0, 0, 0]
    np.testing.assert_allclose(forward.normalize(np.array([3, 4], F)), [0.6, 0.8], rtol=1e-7)


# --- tokenizer -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model():
    return forward.load(model_bytes(n_layers=1, weight_quant="ternary", embedding_quant="int8",
                                    matryoshka_dims=[2, 4], max_seq_len=6))


def test_truncation_keeps_cls_and_sep(model):
    ids = forward.tokenize(model, "hello world hello world hello world")
    assert ids == [2, 5, 6, 5, 6, 3]  # max_seq_len 6 = [CLS] + 4 pieces + [SEP]
    assert forward.tokenize(model, "") == [2, 3]
    assert forward.tokenize(model, "hello world hello world") == [2, 5, 6, 5, 6, 3]


def test_typed_special_tokens_are_plain_text(model):
    ids = forward.tokenize(model, "[CLS]")
    assert ids[0] == 2 and ids[-1] == 3 and 2 not in ids[1:-1]
    assert [model.vocab[i] for i in ids[1:-1]] == ["[", "cl", "##s", "]"]
    assert forward.tokenize(model, "[UNK]")[1:-1] != [1]


def test_max_seq_len_2_gives_only_cls_sep():
    m = forward.load(model_bytes(max_seq_len=2))
    assert forward.tokenize(m, "hello world") == [2, 3]


# --- embed -----------------------------------------------------------------------------------


def test_embed_dims(model):
    assert model.valid_dims == [2, 4, 8]
    full = forward.embed(model, "hello world")
    assert full.shape == (8,) and full.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(full), 1.0, rtol=1e-6)
    projected = forward.forward(model, forward.tokenize(model, "hello world"))
    for d in (2, 4, 8):
        v = forward.embed(model, "hello world", d)
        np.testing.assert_allclose(v, projected[:d] / np.linalg.norm(projected[:d]), rtol=1e-5)  # truncate, then normalise
    for bad in (0, 3, 5, 9, 16, -1, 4.0, True, "4"):
        with pytest.raises(ValueError, match=r"valid dims: \[2, 4, 8\]"):
            forward.embed(model, "hello", bad)


def test_embed_batch(model):
    texts = ["hello", "", "world, hello!"]
    batch = forward.embed_batch(model, texts, 4)
    assert batch.shape == (3, 4)
    for row, t in zip(batch, texts):
        np.testing.assert_array_equal(row, forward.embed(model, t, 4))
    with pytest.raises(ValueError):
        forward.embed_batch(model, texts, 3)


def test_empty_text_gives_valid_vector(model):
    v = forward.embed(model, "")
    assert np.all(np.isfinite(v)) and abs(np.linalg.norm(v) - 1) < 1e-6


def test_static_path_is_layernorm_mean_projection():
    m = forward.load(model_bytes())
    ids = forward.tokenize(m, "hello, world")
    x = m.embedding[ids].astype(np.float64)
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    x = (x - mu) / np.sqrt(var + 1e-5) * m.final_ln_weight + m.final_ln_bias
    p = x.mean(0) @ m.projection_weight.T.astype(np.float64) + m.projection_bias
    np.testing.assert_allclose(forward.embed(m, "hello, world"), p / np.linalg.norm(p), rtol=1e-5, atol=1e-6)


def independent_forward(m, ids):
    """A second, float64, loop-per-head implementation of §6.1 to cross-check the reference."""
    def ln(x, w=None, b=None):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        y = (x - mu) / np.sqrt(var + 1e-5)
        return y if w is None else y * w + b

    def bl(x, lin):
        if not lin.ternary:
            return x @ lin.weight.T.astype(np.float64) + (0 if lin.bias is None else lin.bias)
        n = ln(x)
        s = 128.0 / np.maximum(np.abs(n).max(-1, keepdims=True), 1e-5)
        q = np.clip(np.round(n * s), -128, 127)
        y = q @ lin.weight.T.astype(np.float64) + (0 if lin.bias is None else lin.bias)
        return y / (float(lin.scale) * s)

    h = m.header
    dh = h.d_model // h.n_heads
    x = m.embedding[ids].astype(np.float64)
    for L in m.layers:
        a = ln(x, L.ln1_weight, L.ln1_bias)
        Q, K, V = bl(a, L.q), bl(a, L.k), bl(a, L.v)
        heads = []
        for j in range(h.n_heads):
            sl = slice(j * dh, (j + 1) * dh)
            sc = Q[:, sl] @ K[:, sl].T / math.sqrt(dh)
            p = np.exp(sc - sc.max(1, keepdims=True))
            heads.append((p / p.sum(1, keepdims=True)) @ V[:, sl])
        x = x + bl(np.concatenate(heads, 1), L.out)
        f = bl(ln(x, L.ln2_weight, L.ln2_bias), L.up)
        f = 0.5 * f * (1 + np.vectorize(math.erf)(f / math.sqrt(2)))
        x = x + bl(f, L.down)
    x = ln(x, m.final_ln_weight, m.final_ln_bias)
    return x.mean(0) @ m.projection_weight.T.astype(np.float64) + m.projection_bias


def test_transformer_matches_independent_float64_implementation():
    checked = 0
    for seed in range(60):
        m = forward.load(model_bytes(n_layers=2, n_heads=2, ffn_dim=12, weight_quant="ternary",
                                     embedding_quant="int4", seed=seed))
        ids = forward.tokenize(m, "hello, world! the")
        dist = []
        forward.forward(m, ids, observe=lambda p: dist.append(np.abs(p - np.floor(p) - 0.5).min()))
        if min(dist) < 1e-3:
            continue  # a rounding tie too close for a float64 cross-check
        np.testing.assert_allclose(forward.forward(m, ids), independent_forward(m, ids), rtol=1e-4, atol=1e-5)
        checked += 1
        if checked == 3:
            return
    pytest.fail(f"only {checked} tie-free seeds")
