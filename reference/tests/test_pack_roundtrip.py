"""pack → load round trips, the CLI, and the packer's quantisation rules."""
import json
import struct

import numpy as np
import pytest

import forward
import pack
from forward import EmbeddingQuant, SectionType
from helpers import VOCAB, config, weights


@pytest.mark.parametrize("eq", ["fp32", "int8", "int4", "ternary"])
@pytest.mark.parametrize("wq", ["fp32", "ternary"])
def test_round_trip_all_quantisations(eq, wq):
    cfg = config(n_layers=2, ffn_dim=12, output_dim=12, matryoshka_dims=[4, 8], has_fingerprint=True)
    w = weights(cfg, seed=3)
    data = pack.pack(cfg, w, embedding_quant=eq, weight_quant=wq, metadata={"k": "ü"})
    m = forward.load(data)
    h = m.header
    assert (h.vocab_size, h.d_model, h.n_layers, h.n_heads, h.ffn_dim, h.output_dim) == (len(VOCAB), 8, 2, 2, 12, 12)
    assert h.embedding_quant == EmbeddingQuant[eq.upper()]
    assert h.max_seq_len == 16 and h.matryoshka_dims == (4, 8, 0, 0, 0, 0, 0, 0) and h.n_matryoshka == 2
    assert h.do_lower_case and h.strip_accents and h.has_fingerprint
    assert (h.version, h.license_id, h.model_id) == ("1.2.3", 7, "test")
    assert m.vocab == VOCAB
    tc = m.tokenizer_config
    assert (tc.unk_token_id, tc.cls_token_id, tc.sep_token_id, tc.pad_token_id, tc.mask_token_id) == (1, 2, 3, 0, 4)
    assert tc.max_input_chars_per_word == 100 and tc.continuing_subword_prefix == "##"
    assert json.loads(m.metadata) == {"k": "ü"}
    assert m.valid_dims == [4, 8, 12]
    np.testing.assert_array_equal(m.final_ln_weight, w["final_ln.weight"])
    np.testing.assert_array_equal(m.projection_weight, w["projection.weight"])
    np.testing.assert_array_equal(m.projection_bias, w["projection.bias"])

    emb = w["embedding"]
    if eq == "fp32":
        np.testing.assert_array_equal(m.embedding, emb)
    elif eq in ("int8", "int4"):
        qmax = 127 if eq == "int8" else 7
        np.testing.assert_allclose(m.embedding_scales, np.abs(emb).max(1) / qmax, rtol=1e-6)
        assert np.all(np.abs(m.embedding - emb) <= m.embedding_scales[:, None] / 2 * (1 + 1e-5))
        assert np.all(np.abs(m.embedding_codes).max(1) == qmax)  # absmax element hits ±qmax
    else:
        assert set(np.unique(m.embedding_codes)) <= {-1, 0, 1}

    layer0 = m.layers[0]
    q = w["layers.0.attn.q.weight"]
    if wq == "ternary":
        med = np.sort(np.abs(q).ravel())[(q.size - 1) // 2]
        assert layer0.q.scale == np.float32(1) / med
        np.testing.assert_array_equal(layer0.q.weight, np.clip(np.round(q * layer0.q.scale), -1, 1))
    else:
        np.testing.assert_array_equal(layer0.q.weight, q)
        assert layer0.q.scale == 1.0  # decision 3
    np.testing.assert_array_equal(layer0.out.bias, w["layers.0.attn.out.bias"])
    np.testing.assert_array_equal(m.layers[1].down.bias, w["layers.1.ffn.down.bias"])
    v = forward.embed(m, "hello, world!")
    assert v.dtype == np.float32 and abs(np.linalg.norm(v) - 1) < 1e-5


def test_sections_are_aligned_padded_and_hashed():
    data = pack.pack(config(), weights(config()), embedding_quant="int4", weight_quant="fp32", metadata="x")
    m = forward.load(data)
    ends = sorted((e.offset, e.end) for e in m.sections)
    for e in m.sections:
        assert e.offset % 8 == 0
    for (_, end), (nxt, _) in zip(ends, ends[1:]):
        assert data[end:nxt] == b"\x00" * (nxt - end)  # zero padding
    assert (len(data) - 32) % 8 == 0


def test_section_order_and_unknown_sections():
    cfg = config()
    data = pack.pack(cfg, weights(cfg), embedding_quant="int8", weight_quant="fp32", metadata={"a": 1},
                     section_order=[7, 6, 200, 5, 4, 3, 2, 1, 8], extra_sections=[(200, b"\xff" * 5), (9, b"")])
    m = forward.load(data)
    assert [e.type for e in m.sections] == [7, 6, 200, 4, 3, 2, 1, 8, 9]
    same = pack.pack(cfg, weights(cfg), embedding_quant="int8", weight_quant="fp32")
    np.testing.assert_array_equal(forward.embed(m, "hello world"), forward.embed(forward.load(same), "hello world"))


def test_special_tokens_and_options_from_config():
    vocab = ["<pad>", "hello", "<unk>", "<s>", "</s>", "<mask>", "@@s"]
    cfg = config(vocab=vocab, unk_token="<unk>", cls_token="<s>", sep_token="</s>", pad_token="<pad>",
                 mask_token="<mask>", max_input_chars_per_word=9, continuing_subword_prefix="@@")
    m = forward.load(pack.pack(cfg, weights(cfg), embedding_quant="fp32", weight_quant="fp32"))
    tc = m.tokenizer_config
    assert (tc.unk_token_id, tc.cls_token_id, tc.sep_token_id, tc.pad_token_id, tc.mask_token_id) == (2, 3, 4, 0, 5)
    assert (tc.max_input_chars_per_word, tc.continuing_subword_prefix) == (9, "@@")
    assert forward.tokenize(m, "hellos hellosss hellossss hellosssss") == [3, 1, 6, 1, 6, 6, 6, 1, 6, 6, 6, 6, 2, 4]


def test_pack_rejects_bad_input():
    cfg = config()
    w = weights(cfg)
    with pytest.raises(ValueError, match="not in the vocab"):
        pack.pack(config(cls_token="<cls>"), w, embedding_quant="fp32", weight_quant="fp32")
    bad = dict(w, embedding=w["embedding"][:, :4])
    with pytest.raises(ValueError, match="shape"):
        pack.pack(cfg, bad, embedding_quant="fp32", weight_quant="fp32")
    with pytest.raises(ValueError, match="quantisation"):
        pack.pack(cfg, w, embedding_quant="int2", weight_quant="fp32")
    with pytest.raises(forward.LoadError) as e:  # pack verifies with load
        pack.pack(config(d_model=6), weights(config(d_model=6)), embedding_quant="fp32", weight_quant="fp32")
    assert e.value.rule == "d_model_not_multiple_of_4"


def test_cli(tmp_path, capsys):
    cfg = config(n_layers=1)
    w = weights(cfg)
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    cfg["vocab"] = "vocab.txt"  # relative to the config file
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "meta.json").write_text('{"teacher": "x"}')
    np.savez(tmp_path / "w.npz", **w)
    out = tmp_path / "m.bin"
    rc = pack.main(["--weights", str(tmp_path / "w.npz"), "--config", str(tmp_path / "config.json"),
                    "--out", str(out), "--embedding-quant", "ternary", "--weight-quant", "ternary",
                    "--metadata", str(tmp_path / "meta.json")])
    assert rc == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and "tokenizer_vocab" in line and "layers" in line
    m = forward.load(out.read_bytes())
    assert m.vocab == VOCAB and m.metadata == '{"teacher": "x"}' and m.header.n_layers == 1


def test_vocab_file_with_empty_line_is_rejected(tmp_path):
    (tmp_path / "v.txt").write_text("[PAD]\n\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty line"):
        pack._load_vocab(str(tmp_path / "v.txt"))


# --- quantisation details --------------------------------------------------------------------


def test_ternary_code_mapping_low_bits_first():
    assert pack.pack_ternary(np.array([1, 0, 1, -1])) == bytes([0b10_01_00_01])
    assert pack.pack_ternary(np.array([-1, 0, 0, 0, 0, 0, 0, 1])) == bytes([0b10, 0b01_00_00_00])
    codes = forward.unpack_ternary(bytes([0b10_01_00_01, 0b00_00_10_01]), 8, "ternary_reserved_code_layers", "t")
    assert codes.tolist() == [1, 0, 1, -1, 1, -1, 0, 0]
    with pytest.raises(forward.LoadError) as e:
        forward.unpack_ternary(bytes([0b11_00_00_00]), 4, "ternary_reserved_code_embedding", "t")
    assert e.value.rule == "ternary_reserved_code_embedding"


def test_int4_low_nibble_first_and_sign_extension():
    assert pack.pack_int4(np.array([1, -2])) == bytes([0xE1])
    assert pack.pack_int4(np.array([-7, 7])) == bytes([0x79])
    # every nibble value, including the never-emitted -8 (0x8)
    raw = bytes([(hi << 4) | lo for lo, hi in zip(range(0, 16, 2), range(1, 16, 2))])
    assert forward.unpack_int4(raw, 16).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1]


def test_int4_minus_8_code_reads_back_as_minus_8_times_scale():
    cfg = config()
    header, secs = pack.build_sections(cfg, weights(cfg), embedding_quant="int4", weight_quant="fp32")
    emb = bytearray(secs[SectionType.EMBEDDING_WEIGHTS])
    emb[5 * 4] = 0x08 | (0x0F << 4)  # row 5: elements 0, 1 = -8, -1
    secs[SectionType.EMBEDDING_WEIGHTS] = bytes(emb)
    scales = np.frombuffer(secs[SectionType.EMBEDDING_SCALES], "<f4")
    m = forward.load(pack.assemble(header, [pack.Section(int(t), b) for t, b in secs.items()]))
    assert m.embedding_codes[5, 0] == -8 and m.embedding_codes[5, 1] == -1
    assert m.embedding[5, 0] == np.float32(-8) * scales[5]
    assert m.embedding[5, 1] == -scales[5]


def test_int8_quantisation_rule_and_zero_row():
    e = np.array([[0.5, -1.27, 0.01, 0.0], [0, 0, 0, 0]], dtype=np.float32)
    data, scales = pack.quantize_embedding(e, EmbeddingQuant.INT8)
    assert scales.tolist() == [np.float32(1.27) / np.float32(127), 0.0]
    codes = np.frombuffer(data, np.int8).reshape(2, 4)
    assert codes[0].tolist() == [50, -127, 1, 0] and codes[1].tolist() == [0, 0, 0, 0]


def test_absmedian_uses_lower_median():
    w = np.array([[0.1, -0.2, 0.4, -0.8]], dtype=np.float32)  # |W| sorted 0.1 0.2 0.4 0.8
    codes, scale = pack.absmedian_ternary(w)
    assert scale == np.float32(1) / np.float32(0.2)  # torch.median: lower middle value, not 0.3
    assert codes.tolist() == [[0, -1, 1, -1]]  # 0.1*5 = 0.5 → 0 (ties to even)
    codes, scale = pack.absmedian_ternary(np.zeros((2, 4), np.float32))
    assert scale == np.float32(1e5) and not codes.any()


def test_ternary_embedding_rule_least_squares_scale():
    row = np.array([[0.1, -0.3, 0.35, -2.0, 0.0, 0.5, -0.05, 0.2]], dtype=np.float32)
    data, scales = pack.quantize_embedding(row, EmbeddingQuant.TERNARY)
    codes = forward.unpack_ternary(data, 8, "ternary_reserved_code_embedding", "t")
    # lower median of |row| = 0.2 → threshold 0.1 (0.1/0.2 = 0.5 rounds to 0, ties to even)
    assert codes.tolist() == [0, -1, 1, -1, 0, 1, 0, 1]
    assert scales[0] == np.float32(np.mean(np.float32([0.3, 0.35, 2.0, 0.5, 0.2])))
