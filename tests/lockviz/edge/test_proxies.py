"""The proxy's word about the client (lockviz.edge.proxies): believed from trusted proxies only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from lockviz.edge.proxies import ForwardedBy, client_address, networks

PROXIES = networks(["127.0.0.1", "172.28.0.0/16"])


def seen_by_app(
    headers: dict[str, str], peer: str = "127.0.0.1", kind: str = "http"
) -> dict[str, Any]:
    """The scope the app behind :class:`ForwardedBy` is handed (rewritten as it would be)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        pass

    scope = {
        "type": kind,
        "scheme": "ws" if kind == "websocket" else "http",
        "client": (peer, 50000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    seen = dict(ForwardedBy(app, PROXIES).rewrite(scope))
    seen["header"] = {k.decode(): v.decode() for k, v in seen["headers"]}
    return seen


def test_a_trusted_proxy_says_who_the_client_is_and_how_it_came() -> None:
    seen = seen_by_app(
        {
            "host": "127.0.0.1:8443",
            "x-forwarded-for": "203.0.113.9, 172.28.0.5",  # the client, then an inner proxy
            "x-forwarded-proto": "https",
        }
    )
    assert seen["client"][0] == "203.0.113.9"
    assert seen["scheme"] == "https"
    assert seen["header"]["host"] == "127.0.0.1:8443"


def test_a_websocket_through_an_https_proxy_is_wss() -> None:
    seen = seen_by_app({"x-forwarded-proto": "https"}, kind="websocket")
    assert seen["scheme"] == "wss"


def test_anyone_else_cannot_forge_their_address_scheme_or_host() -> None:
    seen = seen_by_app(
        {
            "host": "lab.example",
            "x-forwarded-for": "10.9.9.9",
            "x-forwarded-proto": "https",
            "x-forwarded-host": "evil.example",
        },
        peer="198.51.100.7",
    )
    assert seen["client"][0] == "198.51.100.7"
    assert seen["scheme"] == "http"
    assert seen["header"] == {"host": "lab.example"}  # the forged headers are gone


def test_the_leftmost_address_is_whatever_the_client_wrote() -> None:
    # A client sends X-Forwarded-For: 1.2.3.4; the proxy appends the real peer.
    assert client_address("1.2.3.4, 198.51.100.7", PROXIES) == "198.51.100.7"
    assert client_address("172.28.0.9, 127.0.0.1", PROXIES) == "172.28.0.9"  # all trusted
    assert client_address("not-an-ip", PROXIES) is None


def test_a_bad_proxy_entry_is_named() -> None:
    with pytest.raises(ValueError, match=r"'lab\.example' is not an IP address or network"):
        networks(["127.0.0.1", "lab.example"])


@pytest.mark.django_db
@override_settings(PUBLIC_URL="https://locks.example.edu", ALLOWED_HOSTS=["locks.example.edu"])
def test_the_join_link_and_its_qr_point_at_the_public_address() -> None:
    browser = Client(HTTP_HOST="locks.example.edu")
    opened = browser.post("/rooms/", secure=True)
    room = opened.url.rstrip("/").rsplit("/", 1)[1]
    page = browser.get(opened.url, secure=True).content.decode()
    assert f"https://locks.example.edu/r/{room}" in page


@pytest.mark.django_db
def test_without_a_public_address_the_join_link_keeps_the_port_it_came_to() -> None:
    browser = Client(HTTP_HOST="127.0.0.1:8000")
    opened = browser.post("/rooms/")
    room = opened.url.rstrip("/").rsplit("/", 1)[1]
    assert f"http://127.0.0.1:8000/r/{room}" in browser.get(opened.url).content.decode()
