"""``GET /metrics``: the gateway's counters in Prometheus' text format (version 0.0.4).

Written here rather than with ``prometheus_client``: six series, kept in dicts, rendered on
scrape; the library would add a dependency and a process-global registry for that. Values are
per process: with several workers, scrape each (``docs/serve.md``).

Request outcomes come from two places: the HTTP layer counts every answer by status (including
those refused before a pipeline ran: 401, 413, 429…), and the pipeline's telemetry record
(``RequestRecord``, through ``observe``) gives the time to first token, the decode rate and the
typed error of each request that reached a backend.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from typing import Final

from telemetry.recorder import RequestRecord

__all__ = ["GatewayMetrics"]

_TTFT_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_RATE_BUCKETS: Final = (1.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0)
_Labels = tuple[tuple[str, str], ...]


class _Histogram:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def add(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def lines(self, name: str, labels: _Labels) -> Iterator[str]:
        running = 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            edge = "+Inf" if bound == float("inf") else repr(bound)
            yield f"{name}_bucket{_text((*labels, ('le', edge)))} {running}"
        yield f"{name}_sum{_text(labels)} {self.sum!r}"
        yield f"{name}_count{_text(labels)} {running}"


class GatewayMetrics:
    """The process's counters. ``observer(model)`` is a ``TelemetryChatClient`` observer."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.started = clock()
        self.in_flight = 0
        self._requests: dict[_Labels, int] = {}
        self._errors: dict[_Labels, int] = {}
        self._tokens: dict[_Labels, int] = {}
        self._ttft: dict[_Labels, _Histogram] = {}
        self._rate: dict[_Labels, _Histogram] = {}

    def answered(self, route: str, model: str, status: int) -> None:
        """One HTTP answer (every route but ``/metrics`` and ``/health``)."""
        key = (("route", route), ("model", model), ("status", str(status)))
        self._requests[key] = self._requests.get(key, 0) + 1

    def refused(self, model: str, error_type: str) -> None:
        """An error answered before or without a backend (``model`` may be ``""``)."""
        self._count_error(model, "", error_type)

    def observer(self, model: str, backend: str) -> Callable[[RequestRecord], None]:
        """Feeds one entry's series: ``model`` is the name clients send, ``backend`` the
        configured backend behind it."""

        def observe(record: RequestRecord) -> None:
            self._observe(model, backend, record)

        return observe

    def _observe(self, model: str, backend: str, record: RequestRecord) -> None:
        labels = (("model", model), ("backend", backend))
        if record.error is not None:
            self._count_error(model, backend, type(record.error).__name__)
        client = record.timings.client
        if client.first_token is not None:
            ttft = self._ttft.setdefault(labels, _Histogram(_TTFT_BUCKETS))
            ttft.add(max(0.0, client.first_token - client.started))
        rate = record.timings.output_tokens_per_second_client
        if rate is not None:
            self._rate.setdefault(labels, _Histogram(_RATE_BUCKETS)).add(rate)
        if record.usage is not None and record.usage.output_token_count is not None:
            self._tokens[labels] = self._tokens.get(labels, 0) + record.usage.output_token_count

    def _count_error(self, model: str, backend: str, error_type: str) -> None:
        key = (("model", model), ("backend", backend), ("type", error_type))
        self._errors[key] = self._errors.get(key, 0) + 1

    def render(self) -> bytes:
        """The exposition, every series sorted so two scrapes diff cleanly."""
        prefix = "oaicompat_gateway_"
        out = [
            *_family(f"{prefix}requests_total", "HTTP answers by route and status", self._requests),
            *_family(f"{prefix}errors_total", "Errors by typed error class", self._errors),
            *_family(f"{prefix}output_tokens_total", "Output tokens (server usage)", self._tokens),
            f"# HELP {prefix}requests_in_flight Requests being answered.",
            f"# TYPE {prefix}requests_in_flight gauge",
            f"{prefix}requests_in_flight {self.in_flight}",
        ]
        for name, what, series in (
            ("time_to_first_token_seconds", "Time to the first token", self._ttft),
            ("output_tokens_per_second", "Decode rate seen by the gateway", self._rate),
        ):
            out += [f"# HELP {prefix}{name} {what}.", f"# TYPE {prefix}{name} histogram"]
            for labels in sorted(series):
                out.extend(series[labels].lines(prefix + name, labels))
        return ("\n".join(out) + "\n").encode()


def _family(name: str, what: str, series: dict[_Labels, int]) -> Iterator[str]:
    yield f"# HELP {name} {what}."
    yield f"# TYPE {name} counter"
    for labels in sorted(series):
        yield f"{name}{_text(labels)} {series[labels]}"


def _text(labels: _Labels) -> str:
    escaped = (
        (k, v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')) for k, v in labels
    )
    return "{" + ",".join(f'{k}="{v}"' for k, v in escaped) + "}"
