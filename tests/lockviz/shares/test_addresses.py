"""Who a client is, for its shares: an IPv6 host is its /64, an IPv4-mapped address is its IPv4
address. Every per-address share keyed on the full address let a host with a /64 (every IPv6
host has one) escape them all."""

from __future__ import annotations

import pytest
from django.test import Client
from django.test.utils import override_settings

from lockviz.models import Run
from lockviz.runs import recorder
from lockviz.shares import client_of


@pytest.mark.parametrize(
    ("address", "client"),
    [
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("::ffff:10.1.2.3", "10.1.2.3"),
        ("10.1.2.3", "10.1.2.3"),
        ("::1", "::/64"),
        ("unknown", "unknown"),
    ],
)
def test_a_client_is_counted_by_its_address_as_shares_see_it(address: str, client: str) -> None:
    assert client_of(address) == client


@pytest.mark.django_db
@override_settings(LOCKVIZ_MAX_PER_ADDRESS=2)
def test_a_hosts_slash_64_is_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "start", lambda run, scenario, open_ended=False, **_: None)
    host = [f"2001:db8:5:6:{i}::1" for i in range(3)]
    codes = [
        Client(REMOTE_ADDR=a).post("/runs/", {"scenario": "contention"}).status_code for a in host
    ]
    assert codes == [302, 302, 429]
    mapped = Client(REMOTE_ADDR="::ffff:10.9.8.7")
    plain = Client(REMOTE_ADDR="10.9.8.7")
    codes = [
        c.post("/runs/", {"scenario": "contention"}).status_code for c in (mapped, plain, plain)
    ]
    assert codes == [302, 302, 429]
    assert set(Run.objects.values_list("address", flat=True)) == {"2001:db8:5:6::/64", "10.9.8.7"}
