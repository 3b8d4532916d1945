"""``/healthz``, ``/readyz`` and ``/metrics`` as a proxy, a healthcheck and Prometheus see them:
plain text, the right status, and ``/metrics`` for nobody but the allowed scraper."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from channels.testing import HttpCommunicator
from django.db import DEFAULT_DB_ALIAS
from django.db.utils import ConnectionHandler
from django.test import Client

from lockviz.lab.ports import free_port
from lockviz.ops import metrics, readiness

FAMILIES = (
    "lockviz_runs",
    "lockviz_lab_slots",
    "lockviz_lab_limit",
    "lockviz_queue_length",
    "lockviz_viewers",
    "lockviz_refusals_total",
    "lockviz_event_publish_seconds",
)
ELSEWHERE = "203.0.113.7"  # an address of the documentation range: never an allowed scraper


@pytest.fixture
def unreachable_database() -> Iterator[Any]:
    """A real connection to a PostgreSQL that is not there: a loopback port nobody listens on."""
    handler = ConnectionHandler(
        {
            DEFAULT_DB_ALIAS: {
                "ENGINE": "django.db.backends.postgresql",
                "HOST": "127.0.0.1",
                "PORT": str(free_port()),
                "NAME": "lockviz",
                "USER": "lockviz",
                "OPTIONS": {"connect_timeout": 2},
            }
        }
    )
    connection = handler[DEFAULT_DB_ALIAS]
    yield connection
    connection.close()


def test_healthz_answers_without_touching_the_database(client: Client) -> None:
    # No django_db mark: pytest-django makes any query in this test fail loudly.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.content == b"ok\n"
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.live
@pytest.mark.django_db
def test_readyz_is_ready_with_a_line_per_check(client: Client) -> None:
    response = client.get("/readyz")
    lines = response.content.decode().splitlines()
    assert response.status_code == 200, lines
    assert lines[0] == "ready"
    assert [line.split(":")[0] for line in lines[1:]] == ["database", "channel layer", "lab"]
    assert all(": ok: " in line for line in lines[1:])
    assert "answered PING" in lines[2] and "the fork server runs" in lines[3]


@pytest.mark.live
@pytest.mark.django_db
def test_readyz_names_an_unreachable_database(
    client: Client, unreachable_database: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readiness, "connection", unreachable_database)
    response = client.get("/readyz")
    text = response.content.decode()
    assert response.status_code == 503
    assert text.startswith("not ready\n")
    failed = [line for line in text.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith("database: FAILED: OperationalError")
    assert "Traceback" not in text and response["Content-Type"].startswith("text/plain")
    assert "channel layer: ok" in text  # the others are still checked, and said


@pytest.mark.live
@pytest.mark.django_db
def test_readyz_through_the_public_proxy_says_outcomes_not_addresses(client: Client) -> None:
    response = client.get("/readyz", REMOTE_ADDR="203.0.113.5")
    lines = response.content.decode().splitlines()
    assert response.status_code == 200
    assert lines == ["ready", "database: ok", "channel layer: ok", "lab: ok"]


def test_readyz_skips_the_lab_when_servers_are_given(settings: Any) -> None:
    settings.LOCKVIZ_SERVERS = "redis-1=redis-1:6379,storage=storage:6379"
    assert "LOCKVIZ_SERVERS" in readiness.lab()


@pytest.mark.django_db
def test_metrics_from_loopback_lists_every_family(client: Client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    text = response.content.decode()
    assert response.status_code == 200
    for family in FAMILIES:
        assert f"# TYPE {family} " in text, family
    assert 'lockviz_runs{status="queued"} 0.0' in text
    assert 'lockviz_refusals_total{reason="not_owner"}' in text


@pytest.mark.django_db
def test_metrics_from_ipv6_loopback(client: Client) -> None:
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200


@pytest.mark.django_db
def test_metrics_is_not_found_from_elsewhere(client: Client) -> None:
    response = client.get("/metrics", REMOTE_ADDR=ELSEWHERE)
    assert response.status_code == 404
    assert b"lockviz_" not in response.content


@pytest.mark.django_db
def test_metrics_is_not_found_through_a_proxy_even_on_loopback(client: Client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=ELSEWHERE)
    assert response.status_code == 404


@pytest.mark.django_db
def test_metrics_with_the_token_from_anywhere(client: Client, settings: Any) -> None:
    settings.LOCKVIZ_METRICS_TOKEN = "a-long-scrape-token"
    good = {"HTTP_AUTHORIZATION": "Bearer a-long-scrape-token"}
    assert client.get("/metrics", REMOTE_ADDR=ELSEWHERE, **good).status_code == 200
    through_proxy = {**good, "HTTP_X_FORWARDED_FOR": ELSEWHERE}
    assert client.get("/metrics", REMOTE_ADDR="10.0.0.2", **through_proxy).status_code == 200
    wrong = {"HTTP_AUTHORIZATION": "Bearer a-long-scrape-tokeN"}
    assert client.get("/metrics", REMOTE_ADDR=ELSEWHERE, **wrong).status_code == 404
    basic = {"HTTP_AUTHORIZATION": "Basic a-long-scrape-token"}
    assert client.get("/metrics", REMOTE_ADDR=ELSEWHERE, **basic).status_code == 404


@pytest.mark.django_db
def test_no_token_is_accepted_when_none_is_set(client: Client, settings: Any) -> None:
    settings.LOCKVIZ_METRICS_TOKEN = ""
    empty = {"HTTP_AUTHORIZATION": "Bearer "}
    assert client.get("/metrics", REMOTE_ADDR=ELSEWHERE, **empty).status_code == 404


@pytest.mark.django_db
def test_metrics_from_a_configured_network(client: Client, settings: Any) -> None:
    from lockviz.edge.proxies import networks

    settings.LOCKVIZ_METRICS_FROM = networks(["10.9.0.0/16"])
    assert client.get("/metrics", REMOTE_ADDR="10.9.3.4").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404


def asgi_get(path: str, peer: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """``path`` through the app's whole ASGI stack (lockviz.asgi), from ``peer``, on a loop and
    thread of its own (the browser tests keep an event loop in the main thread)."""
    from lockviz.asgi import application

    communicator = HttpCommunicator(application, "GET", path, headers=headers)
    communicator.scope["client"] = (peer, 40000)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, communicator.get_response(timeout=10)).result()


@pytest.mark.django_db(transaction=True)
def test_a_proxy_on_loopback_that_is_not_trusted_still_cannot_scrape() -> None:
    # An nginx on this host, not named in LOCKVIZ_TRUSTED_PROXIES: its X-Forwarded-For is
    # dropped before Django (lockviz.edge.proxies), yet the request still came through it.
    host = [(b"host", b"127.0.0.1")]
    forwarded = [*host, (b"x-forwarded-for", ELSEWHERE.encode())]
    assert asgi_get("/metrics", "127.0.0.1", forwarded)["status"] == 404
    assert asgi_get("/metrics", "127.0.0.1", host)["status"] == 200


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_database_that_refuses_connections_is_a_503_that_says_so(
    client: Client, unreachable_database: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when PostgreSQL has no connection left (seen: twenty runs on two replicas took all
    # 100): the page is told to retry in a moment, not given a server error.
    from django.db import connections

    def sample() -> float:
        value = metrics.REGISTRY.get_sample_value(
            "lockviz_refusals_total", {"reason": "database_busy"}
        )
        return value or 0.0

    counted = sample()
    with monkeypatch.context() as patch:
        patch.setattr(connections._connections, DEFAULT_DB_ALIAS, unreachable_database)
        answers = {path: client.get(path) for path in ("/runs/0123456789/follow.json",
                                                        "/runs/0123456789/")}  # fmt: skip
    for path, answer in answers.items():
        assert answer.status_code == 503 and int(answer["Retry-After"]) > 0, path
        assert "the database is not taking connections" in answer.content.decode()
    assert sample() == counted + 2  # counted apart from a full lab


@pytest.mark.live
@pytest.mark.django_db
def test_readyz_asked_often_checks_once_a_second_over_one_connection(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/readyz is public: each call ran every check and opened a new connection to the layer's
    Redis."""
    ran = []
    run_checks = readiness.run_checks
    monkeypatch.setattr(readiness, "run_checks", lambda: ran.append(1) or run_checks())
    [url] = readiness.layer_urls()
    watcher = redis.Redis.from_url(url)
    before = int(watcher.info("stats")["total_connections_received"])
    started = time.monotonic()
    for _ in range(40):
        answer = client.get("/readyz")
        assert answer.status_code == 200, answer.content
    seconds = time.monotonic() - started
    opened = int(watcher.info("stats")["total_connections_received"]) - before
    assert len(ran) <= seconds / readiness.FRESH_S + 1
    assert opened <= 1  # (the watcher's own connection was opened before)
    watcher.close()
