"""Embeddings beside chat: MEAI's ``IEmbeddingGenerator`` in Python.

``EmbeddingGenerator`` is the protocol every embedding client and layer implements:
``generate(values, options)`` returns ``GeneratedEmbeddings``, one ``Embedding`` per value, in
the order of the values, with the request's ``usage``. ``DelegatingEmbeddingGenerator`` is the
base of layers (retry, telemetry, a cache), as ``DelegatingChatClient`` is for chat.

A vector is an ``EmbeddingVector``: float32 values in one buffer (4 bytes a dimension), not a
list of Python floats (32 bytes a dimension: a float object and its pointer), since an agent's
memory holds thousands of them. ``tolist()`` gives floats, ``to_numpy()`` a read-only array over
the same buffer (no copy), and ``buffer()`` the raw buffer.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

from providers.abstractions.records import value_class
from providers.abstractions.usage import UsageDetails

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DelegatingEmbeddingGenerator",
    "Embedding",
    "EmbeddingGenerationOptions",
    "EmbeddingGenerator",
    "EmbeddingVector",
    "GeneratedEmbeddings",
    "generate_embedding",
    "generate_vector",
]

_LITTLE = sys.byteorder == "little"


class EmbeddingVector(Sequence[float]):
    """float32 values in one compact buffer; see the module docstring."""

    __slots__ = ("_values",)

    def __init__(self, values: Iterable[float] = ()) -> None:
        self._values = (
            values if isinstance(values, array) and values.typecode == "f" else array("f", values)
        )

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> EmbeddingVector:
        """Little-endian float32 bytes (OpenAI's ``encoding_format: base64``, decoded).
        ``ValueError`` when the length is not a whole number of floats."""
        if len(data) % 4:
            raise ValueError(f"{len(data)} bytes are not a whole number of float32 values")
        read = array("f")
        read.frombytes(data)
        if not _LITTLE:
            read.byteswap()
        # ``frombytes`` over-allocates (1/16 more); an exact copy is 0.8 us a 1024-dim vector
        # and 6 % less memory for an index of them (benchmarks/README.md, issue 36)
        return cls(read[:])

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> list[float]: ...
    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return self._values[index].tolist()
        return self._values[index]

    def __iter__(self) -> Iterator[float]:
        return iter(self._values)

    def buffer(self) -> memoryview:
        """The float32 values' own buffer (native byte order), without a copy."""
        return memoryview(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EmbeddingVector):
            return self._values == other._values
        return NotImplemented

    # equal by value, like a list: so not hashable
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(f"{v:.4g}" for v in self._values[:4])
        more = ", …" if len(self._values) > 4 else ""
        return f"EmbeddingVector([{head}{more}], dimensions={len(self._values)})"

    @property
    def nbytes(self) -> int:
        return len(self._values) * 4

    def tolist(self) -> list[float]:
        return self._values.tolist()

    def to_bytes(self) -> bytes:
        """Little-endian float32 bytes, whatever this machine's byte order."""
        if _LITTLE:
            return self._values.tobytes()
        swapped = array("f", self._values)
        swapped.byteswap()
        return swapped.tobytes()

    def to_numpy(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """A read-only ``numpy`` array over this vector's buffer (needs numpy; no copy)."""
        import numpy  # deferred: numpy is optional, and only this method needs it

        view = numpy.frombuffer(memoryview(self._values), dtype=numpy.float32)
        view.flags.writeable = False
        return view

    def norm(self) -> float:
        """The Euclidean (L2) length."""
        return math.sqrt(math.fsum(v * v for v in self._values))

    def normalized(self) -> EmbeddingVector:
        """This vector scaled to length 1 (itself when its length is 0)."""
        length = self.norm()
        if length == 0.0:
            return self
        return EmbeddingVector(array("f", (v / length for v in self._values)))


@value_class()
class Embedding:
    """One value's vector, with the model that made it."""

    vector: EmbeddingVector
    model_id: str | None = None
    additional_properties: dict[str, Any] | None = None

    @property
    def dimensions(self) -> int:
        return len(self.vector)


class GeneratedEmbeddings(Sequence[Embedding]):
    """One ``Embedding`` per value, in the values' order, and the request's ``usage``."""

    __slots__ = ("_embeddings", "additional_properties", "usage")

    def __init__(
        self,
        embeddings: Iterable[Embedding] = (),
        *,
        usage: UsageDetails | None = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        self._embeddings = list(embeddings)
        self.usage = usage
        self.additional_properties = additional_properties

    def __len__(self) -> int:
        return len(self._embeddings)

    @overload
    def __getitem__(self, index: int) -> Embedding: ...
    @overload
    def __getitem__(self, index: slice) -> list[Embedding]: ...
    def __getitem__(self, index: int | slice) -> Embedding | list[Embedding]:
        return self._embeddings[index]

    def __repr__(self) -> str:
        return f"GeneratedEmbeddings({len(self._embeddings)} embeddings, usage={self.usage!r})"

    def vectors(self) -> list[EmbeddingVector]:
        return [embedding.vector for embedding in self._embeddings]


@value_class()
class EmbeddingGenerationOptions:
    """Per-request options. ``dimensions``: a shorter vector, for models trained to give one
    (Matryoshka); ``additional_properties``: extra request-body keys."""

    model_id: str | None = None
    dimensions: int | None = None
    additional_properties: dict[str, Any] | None = None


@runtime_checkable
class EmbeddingGenerator(Protocol):
    """Turns strings into vectors (MEAI's ``IEmbeddingGenerator<string, Embedding<float>>``)."""

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings: ...

    async def aclose(self) -> None: ...


class DelegatingEmbeddingGenerator:
    """Forwards every call to ``inner``; layers override what their concern changes."""

    def __init__(self, inner: EmbeddingGenerator) -> None:
        self.inner = inner

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        return await self.inner.generate(values, options)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> DelegatingEmbeddingGenerator:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def generate_embedding(
    generator: EmbeddingGenerator, value: str, options: EmbeddingGenerationOptions | None = None
) -> Embedding:
    """The embedding of one value (MEAI's ``GenerateAsync(value)``)."""
    generated = await generator.generate([value], options)
    if len(generated) != 1:
        raise ValueError(f"asked for 1 embedding, got {len(generated)}")
    return generated[0]


async def generate_vector(
    generator: EmbeddingGenerator, value: str, options: EmbeddingGenerationOptions | None = None
) -> EmbeddingVector:
    """The vector of one value (MEAI's ``GenerateVectorAsync``)."""
    return (await generate_embedding(generator, value, options)).vector
