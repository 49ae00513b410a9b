"""The exceptions of ``lightembed`` (defined in Python so that one can derive from two bases)."""

from __future__ import annotations

__all__ = ["LightembedError", "LightembedFileNotFoundError"]


class LightembedError(ValueError):
    """A model, index or input that lightembed refuses.

    The message is the text the ``lightembed`` CLI prints after ``error:``, e.g.
    ``model.bin: bad magic: expected "LEMB", found "ABCD"`` or
    ``Index was built with lightembed-en v1.2 but the loaded model is v2.0. Re-run `lightembed index`.``
    """

    __module__ = "lightembed"


class LightembedFileNotFoundError(LightembedError, FileNotFoundError):
    """A file lightembed was asked to read does not exist (``cannot read PATH: No such file or
    directory (os error 2)``). Both a :class:`LightembedError` and a :class:`FileNotFoundError`."""

    __module__ = "lightembed"
