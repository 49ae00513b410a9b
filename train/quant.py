"""Embedding quantisation rules, torch mirrors of reference/pack.py (dequantised rows).

Used (a) for quantisation-aware training of the embedding table (STE) and (b) to predict what
the packed model computes.  Must stay identical to reference/pack.py::quantize_embedding.
"""
import torch


def int_absmax(rows, qmax):
    scale = rows.abs().amax(-1, keepdim=True) / qmax
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    codes = torch.round(rows / safe).clamp(-qmax, qmax)
    return codes * scale


def int8(rows):
    return int_absmax(rows, 127.0)


def int4(rows):
    return int_absmax(rows, 7.0)


def ternary(rows):
    """AbsMedian threshold per row (lower median, torch.median semantics), LSQ scale."""
    m = rows.abs().median(dim=-1, keepdim=True).values
    codes = torch.round(rows * (1.0 / m.clamp(min=1e-5))).clamp(-1, 1)
    nz = (codes != 0).to(rows.dtype)
    cnt = nz.sum(-1, keepdim=True)
    scale = (rows.abs() * nz).sum(-1, keepdim=True) / cnt.clamp(min=1)
    return codes * scale


def fp32(rows):
    return rows


RULES = {"int8": int8, "int4": int4, "ternary": ternary}
ALL = {"fp32": fp32, **RULES}
