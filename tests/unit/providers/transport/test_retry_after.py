"""``retry_after_from_headers``: each rule pinned by a case that fails when the rule changes.

Written to kill the mutants ``tools/mutation.py retry_after`` found alive: a negative
``retry-after-ms``, HTTP-dates without a zone read on a machine that is not on UTC, and the
keyword form of the call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from providers.transport.retry_after import retry_after_from_headers

NOW = 784111777.0  # Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run with the local zone five hours behind UTC, as a developer machine may be."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_negative_retry_after_ms_waits_nothing() -> None:
    assert retry_after_from_headers({"retry-after-ms": "-5"}) == 0.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert retry_after_from_headers({"Retry-After-Ms": "1500", "Retry-After": "9"}) == 1.5


def test_an_unreadable_retry_after_ms_falls_back_to_retry_after() -> None:
    assert retry_after_from_headers({"retry-after-ms": "nan", "retry-after": "2"}) == 2.0


def test_seconds_negative_and_infinite() -> None:
    assert retry_after_from_headers({"retry-after": "-3"}) == 0.0
    assert retry_after_from_headers({"retry-after": "inf"}) is None


@pytest.mark.parametrize("headers", [{}, {"retry-after": ""}, {"retry-after": "soon"}])
def test_absent_or_unreadable_is_none(headers: dict[str, str]) -> None:
    assert retry_after_from_headers(headers, now=NOW) is None


@pytest.mark.usefixtures("new_york")
@pytest.mark.parametrize(
    "date",
    [
        "Sun, 06 Nov 1994 08:49:47 GMT",  # IMF-fixdate
        "Sun Nov  6 08:49:47 1994",  # asctime: no zone, and it is GMT
        "Sun, 06 Nov 1994 08:49:47 -0000",  # "-0000": zone unknown, read as GMT
        "Sun, 06 Nov 1994 10:49:47 +0200",  # an offset a server should not send, still read
    ],
)
def test_http_dates_are_gmt_whatever_the_local_zone(date: str) -> None:
    assert retry_after_from_headers(headers={"Retry-After": date}, now=NOW) == 10.0


def test_a_date_in_the_past_waits_nothing() -> None:
    assert (
        retry_after_from_headers({"retry-after": "Sun, 06 Nov 1994 08:49:27 GMT"}, now=NOW) == 0.0
    )


def test_the_default_now_is_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW - 4.0)
    assert retry_after_from_headers({"retry-after": "Sun, 06 Nov 1994 08:49:37 GMT"}) == 4.0
