"""Type stubs of the native module ``lightembed._lightembed`` (re-exported by ``lightembed``)."""

import os
import pathlib
from typing import Iterable, List, Optional, Sequence, Tuple, TypedDict, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
BUNDLED_MODELS: Tuple[str, ...]

_PathLike = Union[str, "os.PathLike[str]"]

class Hit(TypedDict):
    """One result of :meth:`Index.search` (the fields of ``lightembed search --json``)."""

    rank: int
    score: float
    id: str
    title: str
    url: str
    snippet: str
    highlights: List[Tuple[int, int]]

class Model:
    """A lightembed model (``.bin`` v1, verified on load)."""

    def __init__(self, path_or_name: Optional[_PathLike] = None) -> None: ...
    @staticmethod
    def load(path_or_name: Optional[_PathLike] = None) -> "Model":
        """A ``.bin`` path, or a bundled name (``"lightembed-en-static"``, the default).

        Raises ``LightembedFileNotFoundError`` / ``LightembedError`` with the CLI's message."""
    @staticmethod
    def from_bytes(data: Union[bytes, bytearray]) -> "Model": ...
    @property
    def model_id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def output_dim(self) -> int: ...
    @property
    def valid_dims(self) -> List[int]: ...
    @property
    def max_seq_len(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def file_size(self) -> int: ...
    @property
    def path(self) -> Optional[str]: ...
    @overload
    def encode(
        self,
        texts: str,
        dims: Optional[int] = None,
        batch_size: int = 256,
        show_progress_bar: bool = False,
    ) -> npt.NDArray[np.float32]:
        """One text: a unit vector of shape ``(dims,)``."""
    @overload
    def encode(
        self,
        texts: Iterable[str],
        dims: Optional[int] = None,
        batch_size: int = 256,
        show_progress_bar: bool = False,
    ) -> npt.NDArray[np.float32]:
        """Texts: unit rows, shape ``(len(texts), dims)``; ``ValueError`` for bad ``dims``,
        ``TypeError`` naming a non-``str`` item."""
    def tokenize(self, text: str) -> List[int]: ...
    def tokens(self, text: str) -> List[str]: ...

class Index:
    """A hybrid (BM25 + HNSW) search index, ranked as ``lightembed search``."""

    @staticmethod
    def build(
        records: Iterable[Union[str, dict]],
        model: Optional[Model] = None,
        dims: Optional[int] = None,
        *,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 96,
        snippet_chars: int = 400,
        keyword_stemming: str = "auto",
        int8_vectors: bool = False,
        show_progress_bar: bool = False,
    ) -> "Index": ...
    @staticmethod
    def from_files(
        paths: Sequence[_PathLike],
        model: Optional[Model] = None,
        dims: Optional[int] = None,
        *,
        exclude: Sequence[str] = (),
        default_excludes: bool = True,
        root_selector: Optional[str] = None,
        passage_tokens: int = 128,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 96,
        snippet_chars: int = 400,
        keyword_stemming: str = "auto",
        int8_vectors: bool = False,
        show_progress_bar: bool = False,
    ) -> "Index": ...
    @staticmethod
    def load(folder: _PathLike) -> "Index": ...
    def save(self, folder: _PathLike) -> pathlib.Path: ...
    def search(
        self,
        query: str,
        model: Optional[Model] = None,
        k: int = 10,
        mode: str = "hybrid",
        *,
        ef_search: Optional[int] = None,
        all_passages: bool = False,
    ) -> List[Hit]: ...
    def __len__(self) -> int: ...
    @property
    def dims(self) -> int: ...
    @property
    def model_id(self) -> str: ...
    @property
    def model_version(self) -> str: ...
    @property
    def model_sha256(self) -> str: ...
    @property
    def model_path(self) -> Optional[str]: ...
    @property
    def keyword_stemming(self) -> bool: ...
    def ids(self) -> List[str]: ...
    def to_bytes(self) -> bytes: ...

def _build_site(argv: List[str]) -> int: ...
def _run_cli(argv: List[str]) -> int: ...
