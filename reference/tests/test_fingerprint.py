"""Fingerprints (spec §7, decision 9): the portable rotation, packing, similarity preservation,
the registry, detection, and the committed cross-language fixtures."""
import json
import math
import os

import numpy as np
import pytest

import fingerprint as fp
import forward
import make_fingerprint_fixtures
import pack
from helpers import config, weights

FIXDIR = make_fingerprint_fixtures.OUT


def fixture_json(name):
    with open(os.path.join(FIXDIR, name), encoding="utf-8") as f:
        return json.load(f)


# --- the generator ----------------------------------------------------------------------------


def test_splitmix64_known_outputs():
    # SplitMix64 from state 0 (the published reference sequence starts with these).
    assert [int(v) for v in fp.splitmix64(0, 2)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    # The vectorised numpy version equals a scalar one in Python integers (wrap-around included).
    def scalar(state, n):
        out = []
        for _ in range(n):
            state = (state + fp.GAMMA) & fp.MASK64
            z = ((state ^ (state >> 30)) * fp.MIX1) & fp.MASK64
            z = ((z ^ (z >> 27)) * fp.MIX2) & fp.MASK64
            out.append(z ^ (z >> 31))
        return out

    for state in (0, 1, fp.MASK64, fp.MASK64 - fp.GAMMA, 0x0123456789ABCDEF):
        assert [int(v) for v in fp.splitmix64(state, 5)] == scalar(state, 5)


def test_gaussians_box_muller_by_hand():
    a, b = (int(v) for v in fp.splitmix64(12345, 2))
    u1 = ((a >> 11) + 1) * 2.0 ** -53
    u2 = (b >> 11) * 2.0 ** -53
    r = math.sqrt(-2.0 * math.log(u1))
    z = fp.gaussians(12345, 3)
    assert z[0] == pytest.approx(r * math.cos(2 * math.pi * u2), abs=1e-15)
    assert z[1] == pytest.approx(r * math.sin(2 * math.pi * u2), abs=1e-15)
    assert len(z) == 3 and np.array_equal(fp.gaussians(12345, 4)[:3], z)  # odd count: prefix
    big = fp.gaussians(7, 200_000)
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1.0) < 0.01


def test_rotations_fixture_matches_within_1e_12():
    doc = fixture_json("rotations.json")
    for case in doc["splitmix64"]:
        got = [f"0x{int(v):016x}" for v in fp.splitmix64(fp.parse_seed(case["state"]), len(case["outputs"]))]
        assert got == case["outputs"]
    for case in doc["gaussians"]:
        np.testing.assert_allclose(fp.gaussians(fp.parse_seed(case["state"]), len(case["values"])), case["values"],
                                   rtol=0, atol=1e-14)
    for case in doc["cases"]:
        seed = fp.parse_seed(case["seed"])
        segs = fp.segments(case["output_dim"], case["matryoshka_dims"])
        assert [list(s) for s in segs] == case["blocks"]
        assert [f"0x{s:016x}" for s in fp.block_seeds(seed, len(segs))] == case["block_seeds"]
        r = fp.rotation(seed, case["output_dim"], case["matryoshka_dims"])
        assert np.abs(r - np.array(case["rotation"])).max() <= 1e-12


@pytest.mark.parametrize("m", [1, 2, 5, 33])
def test_blocks_are_orthogonal_qr_with_positive_diagonal(m):
    state = 0xABCDEF + m
    q = fp.haar_orthogonal(state, m)
    np.testing.assert_allclose(q.T @ q, np.eye(m), atol=1e-13)
    g = fp.gaussians(state, m * m).reshape(m, m)
    r = q.T @ g  # G = Q·R with R upper triangular, diag(R) > 0
    assert np.all(np.diag(r) > 0)
    assert np.abs(np.tril(r, -1)).max(initial=0.0) < 1e-9


def test_blocks_look_haar():
    # Haar on O(m): E[Q_ij] = 0, E[Q_ij²] = 1/m, det = ±1 equally often, E[tr Q] = 0.
    m, n = 4, 600
    qs = np.stack([fp.haar_orthogonal(s, m) for s in fp.block_seeds(99, n)])
    assert abs(qs.mean()) < 0.03
    assert abs((qs ** 2).mean() - 1 / m) < 0.01
    dets = np.linalg.det(qs)
    assert np.allclose(np.abs(dets), 1.0) and 0.4 < (dets > 0).mean() < 0.6
    assert abs(np.trace(qs, axis1=1, axis2=2).mean()) < 0.15


def test_rotation_is_block_diagonal_over_matryoshka_segments():
    r = fp.rotation(5, 12, [3, 8])
    assert fp.segments(12, [3, 8]) == [(0, 3), (3, 8), (8, 12)]
    mask = np.zeros((12, 12), bool)
    for a, b in fp.segments(12, [3, 8]):
        mask[a:b, a:b] = True
    assert np.all(r[~mask] == 0.0)
    np.testing.assert_allclose(r.T @ r, np.eye(12), atol=1e-13)
    # Different seeds, different rotations; same seed, same bits.
    assert not np.allclose(r, fp.rotation(6, 12, [3, 8]))
    assert np.array_equal(r, fp.rotation(5, 12, [3, 8]))


def test_segments_edge_cases():
    assert fp.segments(384, [32, 64, 128, 256]) == [(0, 32), (32, 64), (64, 128), (128, 256), (256, 384)]
    assert fp.segments(16, [8, 16]) == [(0, 8), (8, 16)]  # last dim == output_dim adds no block
    assert fp.segments(5, []) == [(0, 5)]
    for bad in ([4, 4], [9], [0, 4], [5, 3]):
        with pytest.raises(ValueError):
            fp.segments(8, bad)


def test_seed_parsing():
    assert fp.parse_seed("42") == 42 == fp.parse_seed(42) == fp.parse_seed("0x2A")
    assert fp.parse_seed("0xFFFF_FFFF_FFFF_FFFF") == fp.MASK64
    assert fp.format_seed(255) == "0x00000000000000ff"
    for bad in ("-1", "0x", "1.5", str(1 << 64), True, 1.0):
        with pytest.raises(ValueError):
            fp.parse_seed(bad)


# --- the registry -----------------------------------------------------------------------------


def test_registry_round_trip_and_rules(tmp_path):
    reg = fp.Registry()
    e = reg.add(17, "0x1234", "ACME")
    r2 = reg.add(18)  # fresh random seed
    assert e.seed == 0x1234 and r2.seed != e.seed
    back = fp.Registry.from_json(reg.to_json())
    assert back.entries == reg.entries
    with pytest.raises(ValueError):
        reg.add(17, 99)  # duplicate license
    with pytest.raises(ValueError):
        reg.add(19, 0x1234)  # duplicate seed
    for bad in (0, 1 << 32, -1, True):
        with pytest.raises(ValueError):
            reg.add(bad, 5)
    with pytest.raises(ValueError):
        fp.Registry.from_json('{"entries": []}')
    assert fp.Registry.from_json(fp.Registry().to_json()).entries == []
    # Seeds may be JSON integers too.
    assert fp.Registry.from_json('{"format": "%s", "entries": [{"license_id": 3, "seed": 7}]}'
                                 % fp.REGISTRY_FORMAT).entries[0].seed == 7

    path = str(tmp_path / "reg.json")
    assert fp.main(["registry", "add", "--registry", path, "--license-id", "5", "--seed", "0xbeef", "--note", "x"]) == 0
    assert fp.main(["registry", "add", "--registry", path, "--license-id", "6"]) == 0
    loaded = fp.Registry.load(path)
    assert [e.license_id for e in loaded.entries] == [5, 6] and loaded.by_license(5).seed == 0xBEEF
    with pytest.raises(ValueError):
        fp.main(["registry", "add", "--registry", path, "--license-id", "5"])


def test_fixture_registry_has_1000_entries():
    reg = fp.Registry.load(os.path.join(FIXDIR, "registry.json"))
    assert [e.license_id for e in reg.entries] == list(range(1, 1001))


# --- packing ----------------------------------------------------------------------------------


def _fp_config(**over):
    return config(n_layers=2, ffn_dim=12, output_dim=12, matryoshka_dims=[4, 8], license_id=0, **over)


def test_pack_without_fingerprint_is_unchanged():
    cfg = _fp_config()
    w = weights(cfg, seed=3)
    plain = pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary")
    assert pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary", license_id=None,
                     fingerprint_seed=None) == plain
    only_id = forward.load(pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary", license_id=9))
    assert only_id.header.license_id == 9 and not only_id.header.has_fingerprint


def test_pack_folds_the_rotation_into_the_projection_only():
    cfg = _fp_config()
    w = weights(cfg, seed=3)
    w_before = {k: v.copy() for k, v in w.items()}
    plain = forward.load(pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary"))
    data = pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary", license_id=77, fingerprint_seed="0xC0FFEE")
    m = forward.load(data)
    assert m.header.has_fingerprint and m.header.license_id == 77
    assert all(np.array_equal(w[k], w_before[k]) for k in w)  # inputs untouched
    r = fp.rotation(0xC0FFEE, 12, [4, 8])
    np.testing.assert_array_equal(m.projection_weight, (r @ w["projection.weight"].astype(np.float64)).astype(np.float32))
    np.testing.assert_array_equal(m.projection_bias, (r @ w["projection.bias"].astype(np.float64)).astype(np.float32))
    # Every other section is byte-identical; sizes too (same work at embed time).
    sec = lambda mm, raw: {e.type: raw[e.offset:e.offset + e.length] for e in mm.sections}  # noqa: E731
    a, b = sec(plain, pack.pack(cfg, w, embedding_quant="int8", weight_quant="ternary")), sec(m, data)
    assert a.keys() == b.keys()
    for t in a:
        assert (a[t] == b[t]) == (t != forward.SectionType.PROJECTION), t
        assert len(a[t]) == len(b[t])


def test_pack_fingerprint_needs_a_license():
    cfg = _fp_config()
    with pytest.raises(ValueError, match="license_id"):
        pack.pack(cfg, weights(cfg), embedding_quant="fp32", weight_quant="fp32", fingerprint_seed=1)
    with pytest.raises(ValueError):
        pack.pack(cfg, weights(cfg), embedding_quant="fp32", weight_quant="fp32", license_id=1, fingerprint_seed="x")


@pytest.mark.parametrize("wq", ["fp32", "ternary"])
def test_cosine_and_ranking_preserved_at_every_dims(wq):
    cfg = _fp_config()
    w = weights(cfg, seed=11)
    plain = forward.load(pack.pack(cfg, w, embedding_quant="int4", weight_quant=wq))
    fpm = forward.load(pack.pack(cfg, w, embedding_quant="int4", weight_quant=wq, license_id=3, fingerprint_seed=99))
    texts = ["hello world", "the world", "hello, the world!", "cl a", "aab", "the hellos", "world world", "",
             "[CLS] hello", "the cl"]
    for dims in plain.valid_dims:
        a = forward.embed_batch(plain, texts, dims).astype(np.float64)
        b = forward.embed_batch(fpm, texts, dims).astype(np.float64)
        assert np.abs(a - b).max() > 1e-2  # the coordinates really moved
        ca, cb = a @ a.T, b @ b.T
        assert np.abs(ca - cb).max() <= 1e-5
        for i in range(len(texts)):
            order_a = np.argsort(-ca[i], kind="stable")
            order_b = np.argsort(-cb[i], kind="stable")
            # identical ranking wherever scores differ by more than the tolerance
            for k in np.nonzero(order_a != order_b)[0]:
                assert abs(ca[i, order_a[k]] - ca[i, order_b[k]]) <= 1e-5


def test_pack_cli_flags(tmp_path):
    cfg = _fp_config(vocab=config()["vocab"])
    w = weights(cfg, seed=2)
    np.savez(tmp_path / "w.npz", **w)
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    reg = fp.Registry()
    reg.add(41, "0x99")
    reg.save(str(tmp_path / "reg.json"))
    base = ["--weights", str(tmp_path / "w.npz"), "--config", str(tmp_path / "c.json"),
            "--embedding-quant", "fp32", "--weight-quant", "fp32"]
    assert pack.main(base + ["--out", str(tmp_path / "a.bin"), "--license-id", "41", "--fingerprint-seed", "0x99"]) == 0
    assert pack.main(base + ["--out", str(tmp_path / "b.bin"), "--license-id", "41",
                             "--registry", str(tmp_path / "reg.json")]) == 0
    a, b = (tmp_path / "a.bin").read_bytes(), (tmp_path / "b.bin").read_bytes()
    assert a == b and forward.load(a).header.has_fingerprint
    with pytest.raises(SystemExit):
        pack.main(base + ["--out", str(tmp_path / "c.bin"), "--registry", str(tmp_path / "reg.json")])
    with pytest.raises(SystemExit):
        pack.main(base + ["--out", str(tmp_path / "c.bin"), "--license-id", "41", "--fingerprint-seed", "1",
                          "--registry", str(tmp_path / "reg.json")])


# --- detection --------------------------------------------------------------------------------


def _vectors(seed_or_none, n=60, out=12, mdims=(4, 8)):
    g = fp.gaussians(123, n * out).reshape(n, out)
    x = g / np.linalg.norm(g, axis=1, keepdims=True)
    if seed_or_none is None:
        return x, x.copy()
    return x, x @ fp.rotation(seed_or_none, out, list(mdims)).T


def _registry(n=50):
    reg = fp.Registry()
    for i in range(1, n + 1):
        reg.add(i, 1000 + i)
    return reg


def test_detect_identifies_rejects_and_reports_identity():
    reg = _registry()
    x, y = _vectors(1007)
    d = fp.detect(x, y, 12, [4, 8], reg)
    assert (d.verdict, d.best.license_id) == ("match", 7) and d.best.distance < 1e-6 and d.margin > 1.0
    assert d.to_dict()["license_id"] == 7
    x, y = _vectors(5555)  # not registered
    assert fp.detect(x, y, 12, [4, 8], reg).verdict == "no_match"
    x, y = _vectors(None)
    d = fp.detect(x, y, 12, [4, 8], reg)
    assert (d.verdict, d.best.license_id, d.to_dict()["license_id"]) == ("unfingerprinted", 0, None)
    # Only a prefix observed: only its blocks are compared.
    x, y = _vectors(1007)
    d = fp.detect(x[:, :8], y[:, :8], 12, [4, 8], reg)
    assert (d.verdict, d.best.license_id, d.blocks) == ("match", 7, [(0, 4), (4, 8)])
    with pytest.raises(ValueError):
        fp.detect(x[:, :6], y[:, :6], 12, [4, 8], reg)  # 6 is not a valid dims
    # Two entries with the same rotation cannot be told apart: ambiguous, not a match.
    reg2 = _registry()
    reg2.entries.append(fp.Entry(99, 1007))
    assert fp.detect(x, y, 12, [4, 8], reg2).verdict == "ambiguous"


def test_metrics():
    x, y = _vectors(1007, n=5, out=16, mdims=())  # 5 probes for a 16-dim block
    q = fp.rotation(1007, 16, [])
    other = fp.rotation(1, 16, [])
    fro = fp.BlockFit.from_vectors(x, y, "frobenius")
    assert fro.distance(other) == pytest.approx(np.linalg.norm(fro.rhat - other) / 4.0, abs=1e-12)
    assert fro.distance(q) > 0.5  # the directions no probe spans are arbitrary in R̂
    w = fp.BlockFit.from_vectors(x, y, "weighted")
    assert w.distance(q) < 1e-6 and w.distance(other) > 1.0
    # Isotropic probes: the two metrics agree.
    x, y = np.eye(16), fp.rotation(1007, 16, [])
    a = fp.BlockFit.from_vectors(x, y, "weighted").distance(other)
    b = fp.BlockFit.from_vectors(x, y, "frobenius").distance(other)
    assert a == pytest.approx(b, abs=1e-12)


def test_fixtures_are_up_to_date_and_detection_matches_expected():
    assert make_fingerprint_fixtures.main(["--check"]) == 0
    exp = fixture_json("expected.json")
    verdicts = {(s["file"], s["dims"]): s["verdict"] for s in exp["suspects"]}
    assert verdicts[("licensed_17.bin", 48)] == "match" and verdicts[("licensed_17.bin", 8)] == "match"
    assert verdicts[("impostor.bin", 48)] == "no_match" and verdicts[("plain.bin", 48)] == "unfingerprinted"


def test_detect_cli_with_suspect_vectors(tmp_path, capsys):
    probes = fp.load_probes()
    lic = forward.load(open(os.path.join(FIXDIR, "licensed_17.bin"), "rb").read())
    vec = forward.embed_batch(lic, probes, 16)
    p = tmp_path / "v.jsonl"
    p.write_text("".join(json.dumps({"embedding": [float(v) for v in row]}) + "\n" for row in vec))
    args = ["detect", "--reference", os.path.join(FIXDIR, "plain.bin"), "--registry",
            os.path.join(FIXDIR, "registry.json"), "--suspect-vectors", str(p), "--json"]
    assert fp.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["license_id"] == 17 and out["blocks"] == [[0, 8], [8, 16]]
