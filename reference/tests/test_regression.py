"""Inputs found by fuzzing the Rust engine, kept as regression tests for the reference too."""
import pathlib

import pytest

import forward

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_overflowing_forward_pass_raises_not_nan():
    # Clarification F.8: all stored floats are finite (the file loads) but the forward pass
    # overflows f32; embed must raise instead of returning NaN.
    model = forward.load((ROOT / "tests/fixtures/regression/fuzz_overflow_nan.bin").read_bytes())
    for dims in model.valid_dims:
        with pytest.raises(FloatingPointError, match="the forward pass overflowed"):
            forward.embed(model, "fuzzing the engine, ünïcödé 漢字 [CLS]", dims)
