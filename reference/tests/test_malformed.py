"""Every load rule: the malformed fixture for it, plus edge cases the fixtures do not cover."""
import hashlib
import json
import os
import struct

import numpy as np
import pytest

import forward
import pack
from forward import SectionType as ST
from helpers import config, model_bytes, weights

MALFORMED = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "malformed")


def cases():
    with open(os.path.join(MALFORMED, "cases.json"), encoding="utf-8") as f:
        return json.load(f)


def test_one_fixture_per_rule_in_check_order():
    assert [c["rule"] for c in cases()] == list(forward.RULES)
    assert all(c["file"] == c["rule"] + ".bin" for c in cases())
    on_disk = sorted(n for n in os.listdir(MALFORMED) if n.endswith(".bin"))
    assert on_disk == sorted(r + ".bin" for r in forward.RULES)


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["rule"])
def test_malformed_fixture_raises_its_rule(case):
    with open(os.path.join(MALFORMED, case["file"]), "rb") as f:
        data = f.read()
    with pytest.raises(forward.LoadError) as e:
        forward.load(data)
    assert e.value.rule == case["rule"], str(e.value)
    assert e.value.message and case["rule"] in str(e.value)
    if case["rule"] not in ("file_too_short", "hash_mismatch"):  # everything else keeps a valid trailer
        assert hashlib.sha256(data[:-32]).digest() == data[-32:]


# --- edge cases, built on the fly ------------------------------------------------------------


def parts(**kw):
    cfg = config(**{k: v for k, v in kw.items() if k not in ("embedding_quant", "weight_quant")})
    header, secs = pack.build_sections(cfg, weights(cfg), embedding_quant=kw.get("embedding_quant", "fp32"),
                                       weight_quant=kw.get("weight_quant", "fp32"))
    return bytearray(header), [pack.Section(int(t), b) for t, b in secs.items()]


def rule_of(data):
    try:
        forward.load(data)
    except forward.LoadError as e:
        return e.rule
    return None


def with_entry(data, index, **fields):
    buf = bytearray(data)
    off = 66 + 20 * index
    t, r, o, n = struct.unpack_from("<HHQQ", buf, off)
    struct.pack_into("<HHQQ", buf, off, fields.get("type", t), fields.get("reserved", r),
                     fields.get("offset", o), fields.get("length", n))
    return pack.rehash(bytes(buf))


def test_minimum_size_and_empty_table():
    h, _ = parts()
    data = pack.assemble(bytes(h), [], tail_pad=False)
    assert len(data) == forward.MIN_FILE_SIZE == 98
    assert rule_of(data) == "missing_section_vocab"
    assert rule_of(b"") == "file_too_short"


def test_offset_plus_length_overflowing_u64_is_out_of_bounds():
    data = model_bytes()
    assert rule_of(with_entry(data, 0, offset=2**64 - 8, length=16)) == "section_out_of_bounds"
    assert rule_of(with_entry(data, 0, length=2**64 - 1)) == "section_out_of_bounds"


def test_unknown_sections_are_skipped_but_bounds_and_alignment_apply():
    h, secs = parts()
    ok = pack.assemble(bytes(h), secs + [pack.Section(300, b"abc"), pack.Section(201, b"")])
    assert rule_of(ok) is None
    n = len(secs)
    assert rule_of(with_entry(ok, n, offset=4)) == "section_overlaps_header"
    assert rule_of(with_entry(ok, n, offset=len(ok) - 8)) == "section_overlaps_hash"
    assert rule_of(with_entry(ok, n, offset=len(ok))) == "section_out_of_bounds"
    assert rule_of(with_entry(ok, n, reserved=9)) == "section_reserved_nonzero"
    misaligned = pack.assemble(bytes(h), secs + [pack.Section(300, b"abc", gap=2)])
    assert rule_of(misaligned) == "section_misaligned"
    # unknown sections may overlap known ones (only known sections are checked against each other)
    assert rule_of(with_entry(ok, n, offset=struct.unpack_from("<Q", ok, 66 + 4)[0])) is None


def test_zero_length_sections():
    h, secs = parts()
    assert rule_of(pack.assemble(bytes(h), secs + [pack.Section(ST.METADATA, b"")])) is None
    for s in secs:
        if s.type == ST.FINAL_LN:
            s.data = b""
    assert rule_of(pack.assemble(bytes(h), secs)) == "section_length_mismatch"


def test_unknown_weight_quant_and_heads_ignored_for_static_models():
    h, secs = parts()
    h[7] = 9  # weight_quant
    h[15] = 0  # n_heads
    struct.pack_into("<H", h, 16, 0)  # ffn_dim
    assert rule_of(pack.assemble(bytes(h), secs)) is None


def test_layers_present_in_static_model_is_unexpected():
    h, secs = parts()
    lh, lsecs = parts(n_layers=1)
    layers = next(s for s in lsecs if s.type == ST.LAYERS)
    assert rule_of(pack.assemble(bytes(h), secs + [layers])) == "unexpected_section"


def test_matryoshka_entry_zero_is_not_ascending():
    h, secs = parts()
    struct.pack_into("<H", h, 24, 0)
    assert rule_of(pack.assemble(bytes(h), secs)) == "matryoshka_not_ascending"


def test_matryoshka_equal_to_output_dim_is_valid():
    data = model_bytes(matryoshka_dims=[4, 8])
    assert forward.load(data).valid_dims == [4, 8]


def test_model_id_edge_cases():
    for raw, rule in [(b"", None), (b"x" * 16, None), ("café-ü".encode(), None), (b"\x00" * 16, None),
                      (b"a\x00b", "model_id_not_nul_padded"), (b"\xc3", "model_id_not_utf8")]:
        h, secs = parts()
        h[48:64] = raw.ljust(16, b"\x00")
        assert rule_of(pack.assemble(bytes(h), secs)) == rule, raw


def test_prefix_running_past_section_is_truncated_and_empty_prefix_is_valid():
    h, secs = parts()
    cfg = next(s for s in secs if s.type == ST.TOKENIZER_CONFIG)
    good = cfg.data
    cfg.data = good[:22] + bytes([3]) + b"##"  # claims 3 prefix bytes, has 2
    assert rule_of(pack.assemble(bytes(h), secs)) == "tokenizer_config_truncated"
    cfg.data = good[:22] + bytes([0])
    m = forward.load(pack.assemble(bytes(h), secs))
    assert m.tokenizer_config.continuing_subword_prefix == ""


def test_vocab_shorter_than_vocab_size():
    h, secs = parts()
    voc = next(s for s in secs if s.type == ST.TOKENIZER_VOCAB)
    voc.data = pack.encode_vocab(config()["vocab"][:-1])
    assert rule_of(pack.assemble(bytes(h), secs)) == "vocab_truncated"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_anywhere(value):
    for eq, wq, t, off in [("fp32", "fp32", ST.EMBEDDING_WEIGHTS, 12), ("int8", "fp32", ST.EMBEDDING_SCALES, 4),
                           ("fp32", "ternary", ST.LAYERS, 8), ("fp32", "fp32", ST.LAYERS, 8 * 4 * 2 + 4),
                           ("fp32", "fp32", ST.FINAL_LN, 0), ("fp32", "fp32", ST.PROJECTION, 4 * 8 * 8)]:
        h, secs = parts(n_layers=1, embedding_quant=eq, weight_quant=wq)
        s = next(s for s in secs if s.type == t)
        s.data = s.data[:off] + struct.pack("<f", value) + s.data[off + 4:]
        assert rule_of(pack.assemble(bytes(h), secs)) == "non_finite_float", (eq, wq, t)


@pytest.mark.parametrize("value,rule", [(0.0, "nonpositive_layer_scale"), (-0.0, "nonpositive_layer_scale"),
                                        (-2.0, "nonpositive_layer_scale"), (float("nan"), "non_finite_float"),
                                        (float("inf"), "non_finite_float"), (1e-30, None)])
def test_layer_scale_rules(value, rule):
    h, secs = parts(n_layers=1, weight_quant="ternary")
    s = next(s for s in secs if s.type == ST.LAYERS)
    off = 2 * 8 * 4 + 8 * 8 // 4  # after ln1 and q.weight
    s.data = s.data[:off] + struct.pack("<f", value) + s.data[off + 4:]
    assert rule_of(pack.assemble(bytes(h), secs)) == rule


@pytest.mark.parametrize("value", [0.0, -5.0, float("nan")])
def test_fp32_weight_scales_are_ignored(value):
    h, secs = parts(n_layers=1, weight_quant="fp32")
    s = next(s for s in secs if s.type == ST.LAYERS)
    off = 2 * 8 * 4 + 8 * 8 * 4
    s.data = s.data[:off] + struct.pack("<f", value) + s.data[off + 4:]
    assert rule_of(pack.assemble(bytes(h), secs)) is None


def test_embedding_scales_may_be_zero_or_negative():
    h, secs = parts(embedding_quant="int8")
    s = next(s for s in secs if s.type == ST.EMBEDDING_SCALES)
    s.data = struct.pack("<ff", 0.0, -1.5) + s.data[8:]
    m = forward.load(pack.assemble(bytes(h), secs))
    assert not m.embedding[0].any() and np.all(m.embedding[1] == -1.5 * m.embedding_codes[1])


def test_special_ids_may_coincide():
    h, secs = parts()
    cfg = next(s for s in secs if s.type == ST.TOKENIZER_CONFIG)
    cfg.data = struct.pack("<5I", 1, 1, 1, 1, 1) + cfg.data[20:]
    m = forward.load(pack.assemble(bytes(h), secs))
    assert forward.tokenize(m, "") == [1, 1]


def test_padding_between_sections_is_not_checked():
    data = bytearray(model_bytes())
    m = forward.load(bytes(data))
    ends = sorted(e.end for e in m.sections)
    gap = next(e for e in ends if e % 8)  # a section that needed padding
    data[gap] = 0xAB
    assert rule_of(pack.rehash(bytes(data))) is None


def test_load_error_has_rule_and_message():
    with pytest.raises(forward.LoadError) as e:
        forward.load(b"LEMB")
    assert e.value.rule == "file_too_short" and "98" in e.value.message
