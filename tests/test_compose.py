"""docker-compose.yml, as Debian's docker-compose reads it (no Docker engine runs here): two app
replicas behind a reverse proxy, healthchecks and start order, private by default, no root."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def config() -> dict[str, Any]:
    binary = shutil.which("docker-compose")
    assert binary, "docker-compose is missing: scripts/bootstrap.sh test installs it"
    done = subprocess.run(
        [binary, "-f", "docker-compose.yml", "config"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = yaml.safe_load(done.stdout)
    return parsed


def test_the_file_is_valid_and_runs_two_replicas_behind_a_proxy() -> None:
    services = config()["services"]
    assert {"app-1", "app-2", "proxy", "db", "live", "secrets"} <= set(services)
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server app-1:8000" in nginx and "server app-2:8000" in nginx
    assert "hash $cookie_sessionid" in nginx  # a browser's clicks reach its run's replica
    for name in ("app-1", "app-2"):
        env = services[name]["environment"]
        assert env["LOCKVIZ_DATABASE_URL"].startswith("postgresql://")  # one shared database
        assert env["LOCKVIZ_CHANNEL_REDIS"] == "redis://live:6379/0"  # one shared layer
        assert "LOCKVIZ_SERVERS" not in env  # the lab's own servers: every fault works


def test_everything_long_running_is_checked_and_starts_in_order() -> None:
    services = config()["services"]
    for name, service in services.items():
        if name != "secrets":
            assert "healthcheck" in service, name
    assert services["proxy"]["depends_on"] == {
        "app-1": {"condition": "service_healthy"},
        "app-2": {"condition": "service_healthy"},
    }
    app = services["app-1"]["depends_on"]
    assert app["db"] == {"condition": "service_healthy"}
    assert app["secrets"] == {"condition": "service_completed_successfully"}


def test_it_is_private_by_default_and_nothing_runs_as_root() -> None:
    services = config()["services"]
    published = [p for s in services.values() for p in s.get("ports", [])]
    assert published and all(str(p).startswith("127.0.0.1:") for p in published)
    hosts = services["app-1"]["environment"]["LOCKVIZ_ALLOWED_HOSTS"]
    assert "*" not in hosts  # explicit hosts only: no DNS rebinding
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "USER lockviz" in dockerfile and "scripts/bootstrap.sh run" in dockerfile
    assert "HEALTHCHECK" in dockerfile
