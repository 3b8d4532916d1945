"""Rates per address: each over its share is a 429 with a sentence and Retry-After, and several
app processes on one Redis (replicas) count one share, not one each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.test.utils import override_settings

from lockviz.models import Room
from tests.conftest import ROOT, layer_env, redis_layer

TAKE_ONE = """
import django, sys
django.setup()
from django.conf import settings
from lockviz.errors import TooMany
from lockviz.shares import rates
assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
try:
    rates.take(rates.ROOMS, "10.1.1.1")
except TooMany as refused:
    print(refused.message)
    sys.exit(3)
"""


@pytest.mark.django_db
@override_settings(LOCKVIZ_ROOMS_PER_HOUR=2, LOCKVIZ_IMPORTS_PER_HOUR=1)
def test_rooms_and_imports_past_an_addresss_share_get_429_with_retry_after() -> None:
    teacher = Client(REMOTE_ADDR="10.1.1.1")
    assert [teacher.post("/rooms/").status_code for _ in range(3)] == [302, 302, 429]
    refused = Client(REMOTE_ADDR="10.1.1.1").post("/rooms/")  # a fresh jar: the same address
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    assert "2 new rooms in an hour" in refused.content.decode() and Room.objects.count() == 2
    importer = Client(REMOTE_ADDR="10.1.1.2")
    assert importer.post("/import/", {"text": "{}"}).status_code == 400  # read, and refused
    again = importer.post("/import/", {"text": "{}"})
    assert again.status_code == 429 and "LOCKVIZ_IMPORTS_PER_HOUR" in again.content.decode()


@pytest.mark.live
def test_replicas_on_one_redis_count_one_share(tmp_path: Path) -> None:
    with redis_layer(tmp_path) as layer:
        env = {
            **os.environ, **layer_env(layer), "LOCKVIZ_ROOMS_PER_HOUR": "2",
            "DJANGO_SETTINGS_MODULE": "lockviz.settings", "LOCKVIZ_STATE_DIR": str(tmp_path),
        }  # fmt: skip
        codes = []
        for _ in range(3):  # three app processes, one after the other: one count
            done = subprocess.run(
                [sys.executable, "-c", TAKE_ONE], env=env, cwd=ROOT, capture_output=True,
                text=True, timeout=60,
            )  # fmt: skip
            codes.append(done.returncode)
        assert codes == [0, 0, 3], done.stderr
        assert "as many as one address may (LOCKVIZ_ROOMS_PER_HOUR)" in done.stdout
