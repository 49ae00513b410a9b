"""lightembed: tiny sentence-embedding models and hybrid (BM25 + vector) search.

The engine, the search index and the ``lightembed`` CLI of https://example.invalid/lightembed as a
native module (no PyTorch, no download: the default English model is in the wheel)::

    import lightembed
    model = lightembed.Model.load()                 # bundled "lightembed-en-static"
    vectors = model.encode(["first text", "second text"])  # float32, shape (2, 384), unit rows
    index = lightembed.Index.build(["first text", "second text"], model)
    index.search("first")                           # [{"rank": 1, "id": "0", "score": …, …}, …]

Errors are :class:`LightembedError` (a ``ValueError``) carrying the CLI's message, or
:class:`LightembedFileNotFoundError` (also a ``FileNotFoundError``) for a missing file.
"""

from __future__ import annotations

import os
import pathlib
from typing import Iterable, Optional, Union

from lightembed._errors import LightembedError, LightembedFileNotFoundError
from lightembed._lightembed import BUNDLED_MODELS, Index, Model, __version__
from lightembed._lightembed import _build_site

__all__ = [
    "BUNDLED_MODELS",
    "Index",
    "LightembedError",
    "LightembedFileNotFoundError",
    "Model",
    "__version__",
    "build_site",
]

_PathLike = Union[str, "os.PathLike[str]"]


def build_site(
    site: _PathLike,
    model: Union[None, _PathLike, Model] = None,
    dims: Optional[int] = None,
    exclude: Iterable[str] = (),
    *,
    full_model: bool = False,
    root_selector: Optional[str] = None,
    default_excludes: bool = True,
    quiet: bool = True,
) -> pathlib.Path:
    """Adds search to a built static site: ``lightembed site --site SITE``, in-process.

    Indexes every ``.html``/``.htm`` page under ``site`` and writes the search bundle into
    ``SITE/lightembed/`` (the ``<lightembed-search>`` element, its worker and wasm, the model, the
    index in fragments, ``manifest.json``), replacing a previous bundle as a whole.

    Args:
        site: the built site's root folder.
        model: a ``.bin`` path or a :class:`Model` loaded from a file; ``None`` (or the bundled
            model) uses the shipped static model.
        dims: index dims, a Matryoshka prefix of the model (default: 128 when the model has it).
        exclude: globs of pages to leave out, relative to ``site`` (``--exclude``).
        full_model: ship the whole model instead of a site model cut to the site's tokens.
        root_selector: CSS selector of the pages' content element (``--root-selector``).
        default_excludes: ``False`` also indexes ``_sources`` folders (``--no-default-excludes``).
        quiet: no progress on stderr (``--quiet``); the summary is still printed on stdout.

    Returns:
        The bundle folder, ``SITE/lightembed``.

    Raises:
        LightembedError: the CLI's error, e.g. ``--site DIR: no .html or .htm pages in this
            folder (lightembed site indexes a built site's HTML pages)``.
    """
    argv = ["--site", os.fspath(site)]
    if isinstance(model, Model):
        if model.path is None and model.sha256 != Model.load().sha256:
            raise ValueError("model: this Model was made from bytes; pass the path of its file")
        model = model.path  # None for the bundled model: the CLI's default is the same model
    if model is not None:
        argv += ["--model", os.fspath(model)]
    if dims is not None:
        argv += ["--dims", str(int(dims))]
    if isinstance(exclude, str):
        exclude = [exclude]
    for glob in exclude:
        argv += ["--exclude", glob]
    if full_model:
        argv.append("--full-model")
    if root_selector is not None:
        argv += ["--root-selector", root_selector]
    if not default_excludes:
        argv.append("--no-default-excludes")
    if quiet:
        argv.append("--quiet")
    _build_site(argv)
    return pathlib.Path(site) / "lightembed"
