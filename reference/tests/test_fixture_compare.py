"""Fixture checks are machine-independent: last-bit float differences (numpy, BLAS, LAPACK, libm
on another CPU) pass, changed decisions (codes, ids, verdicts, text) fail."""
import hashlib
import json
import os
import shutil

import numpy as np

import fixture_compare as fc
import forward
import make_fingerprint_fixtures as mff

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures")


def rehash(data: bytes) -> bytes:
    return data[:-32] + hashlib.sha256(data[:-32]).digest()


def section(data: bytes, t: int):
    return next(e for e in forward.load(data).sections if e.type == t)


def test_json_floats_within_tolerance_decisions_exact():
    # The two differences another machine produced (issue 11).
    assert fc.compare_json({"r": [0.1436742712775403]}, {"r": [0.14367427127754032]}, atol=1e-12) == []
    assert fc.compare_json({"best_distance": 1e-08}, {"best_distance": 2e-08}, atol=1e-6) == []
    assert fc.compare_json({"d": 0.5}, {"d": 0.5 + 2e-6}, atol=1e-6) != []
    assert fc.compare_json({"verdict": "match"}, {"verdict": "no_match"}, atol=1) != []
    assert fc.compare_json({"license_id": 17}, {"license_id": 18}, atol=1) != []
    assert fc.compare_json({"ok": True}, {"ok": 1}, atol=1) != []
    assert fc.compare_json([1, 2], [1, 2, 3], atol=1) != []
    assert fc.compare_json({"a": 1}, {"b": 1}, atol=1) != []
    assert fc.compare_json({"x": 1.0}, {"x": 1}, atol=0) == []


def test_bin_float_sections_tolerate_last_bits_codes_do_not():
    with open(os.path.join(FIXTURES, "fingerprint", "licensed_17.bin"), "rb") as f:
        data = f.read()
    assert fc.compare_bin(data, data) == []
    proj = section(data, forward.SectionType.PROJECTION)
    b = bytearray(data)
    b[proj.offset] ^= 1  # last mantissa bit of the first projection float
    assert fc.compare_bin(data, rehash(bytes(b))) == []
    b[proj.offset + 3] ^= 0x40  # an exponent bit: a real change
    assert fc.compare_bin(data, rehash(bytes(b)))[0].startswith("section PROJECTION: float32 values differ")
    emb = section(data, forward.SectionType.EMBEDDING_WEIGHTS)  # int8 codes
    b = bytearray(data)
    b[emb.offset] ^= 1
    assert fc.compare_bin(data, rehash(bytes(b)))[0].startswith(f"byte {emb.offset} differs outside")
    b = bytearray(data)
    b[proj.offset] ^= 1  # not rehashed: the file on disk does not load
    assert fc.compare_bin(data, bytes(b))[0].startswith("the file on disk does not load")


def test_bin_ternary_codes_compare_exactly():
    with open(os.path.join(FIXTURES, "models", "tern_2l_cased.bin"), "rb") as f:
        data = f.read()
    layers = section(data, forward.SectionType.LAYERS)
    b = bytearray(data)
    b[layers.offset + layers.length // 2] ^= 0x01
    assert fc.compare_bin(data, rehash(bytes(b))) != []


def test_fingerprint_check_accepts_another_machines_last_bits(tmp_path, monkeypatch):
    """The committed fixtures as another CPU writes them (the two values of issue 11) pass
    `--check`; a changed verdict does not."""
    out = tmp_path / "fingerprint"
    shutil.copytree(mff.OUT, out)
    rot = json.loads((out / "rotations.json").read_text())
    rot["cases"][0]["rotation"][0][0] = float(np.nextafter(rot["cases"][0]["rotation"][0][0], 1.0))
    rot["gaussians"][0]["values"][0] = float(np.nextafter(rot["gaussians"][0]["values"][0], 9.0))
    (out / "rotations.json").write_text(json.dumps(rot, indent=1) + "\n")
    exp = json.loads((out / "expected.json").read_text())
    exp["suspects"][0]["best_distance"] += 1e-8
    (out / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")
    monkeypatch.setattr(mff, "OUT", str(out))
    files = mff.generate()
    assert mff.check(files) == []
    exp["suspects"][0]["verdict"] = "no_match" if exp["suspects"][0]["verdict"] != "no_match" else "match"
    (out / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")
    bad = mff.check(files)
    assert len(bad) == 1 and bad[0].startswith("expected.json: $.suspects[0].verdict")
