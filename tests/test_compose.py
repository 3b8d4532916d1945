"""The shipped deployment, as Debian's own tools read it (no Docker engine runs here):
docker-compose.yml as docker-compose reads it (two app replicas behind Caddy, healthchecks and
start order, private by default, nothing long-running as root, each secret only where it is
read, every image pinned), deploy/Caddyfile as caddy validates it and deploy/nginx.conf as
nginx -t tests it. tests/deploy/ runs both proxies in front of real replicas."""

from __future__ import annotations

import datetime
import functools
import ipaddress
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
APPS = ("app-1", "app-2")
ONE_SHOTS = {"secrets", "proxy-volumes"}  # run as root to chown volumes, then exit
PINNED = re.compile(r"^[a-z0-9./-]+:\d+\.\d+(\.\d+)?(-[a-z0-9.]+)?$")  # caddy:2.8.4-alpine


def binary(name: str) -> str:
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )
    assert found, f"{name} is missing: scripts/bootstrap.sh test installs it"
    return found


@functools.cache
def config() -> dict[str, Any]:
    """What docker compose would run with nothing set: no LOCKVIZ_* and no .env file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKVIZ_")}
    with tempfile.TemporaryDirectory() as empty:
        (Path(empty) / ".env").touch()
        done = subprocess.run(
            [binary("docker-compose"), "--env-file", f"{empty}/.env", "-f", "docker-compose.yml",
             "config"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = yaml.safe_load(done.stdout)
    return parsed


def services() -> dict[str, Any]:
    found: dict[str, Any] = config()["services"]
    return found


def mounted_volumes(service: dict[str, Any]) -> dict[str, str]:
    """{volume name: where it is mounted} for the named volumes a service mounts."""
    found = {}
    for mount in service.get("volumes", []):
        if isinstance(mount, dict):
            if mount.get("type") == "volume":
                found[mount["source"]] = mount["target"]
        elif not mount.startswith(("/", ".")):
            source, target = mount.split(":")[:2]
            found[source] = target
    return found


def uid(service: dict[str, Any]) -> int:
    return int(str(service["user"]).split(":")[0])


def test_two_replicas_behind_caddy_and_any_replica_serves_any_request() -> None:
    found = services()
    assert {*APPS, "lab", "proxy", "proxy-volumes", "db", "live", "secrets"} == set(found)
    proxy = found["proxy"]
    assert proxy["image"].startswith("caddy:2.")
    assert any(
        str(m).startswith(f"{ROOT}/deploy/Caddyfile:/etc/caddy/Caddyfile") for m in proxy["volumes"]
    )
    assert proxy["environment"]["LOCKVIZ_DOMAIN"] == "localhost"  # a laptop: Caddy's local CA
    assert {"caddy-data", "caddy-config"} <= set(mounted_volumes(proxy))  # certificates kept
    for name in APPS:
        env = found[name]["environment"]
        assert env["LOCKVIZ_DATABASE_URL"].startswith("postgresql://")  # one shared database
        assert env["LOCKVIZ_CHANNEL_REDIS"] == "redis://live:6379/0"  # one shared layer
        assert "LOCKVIZ_SERVERS" not in env  # the lab's own servers: every fault works
        assert env["LOCKVIZ_PUBLIC_URL"] == "https://localhost"
        assert "*" not in env.get("LOCKVIZ_ALLOWED_HOSTS", "")  # no DNS rebinding
        assert env["LOCKVIZ_LAB_HOSTS"] == "remote"  # the web replicas run no lab
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server app-1:8000" in nginx and "server app-2:8000" in nginx
    live = [line.split("#")[0] for line in nginx.splitlines()]
    assert not any(word in line for line in live for word in ("hash", "sticky")), "no affinity"


def test_lab_hosts_run_the_labs_beside_the_web_replicas() -> None:
    """Issue 21: a ``lab`` service of two replicas runs ``manage.py labhost`` on the same
    database and Redis as the web replicas; they drain on SIGTERM, given time to."""
    found = services()
    lab = found["lab"]
    assert lab["command"][-2:] == ["manage.py", "labhost"]
    assert lab["deploy"]["replicas"] == 2
    assert "ports" not in lab  # nothing reaches a lab host but Redis and the database
    env, web = lab["environment"], found["app-1"]["environment"]
    for shared in ("LOCKVIZ_DATABASE_URL", "LOCKVIZ_CHANNEL_REDIS", "LOCKVIZ_STATE_DIR"):
        assert env[shared] == web[shared], shared
    assert env.get("LOCKVIZ_LAB_HOSTS") in (None, "remote")
    assert "--healthy" in lab["healthcheck"]["test"]
    assert lab["depends_on"]["db"] == {"condition": "service_healthy"}
    assert lab["stop_grace_period"] not in ("", "0s")
    assert lab["volumes"] == ["secrets:/secrets:ro"]
    assert uid(lab) != 0


def test_the_apps_believe_forwarded_headers_from_the_proxy_alone() -> None:
    found = services()
    proxy_ip = ipaddress.ip_address(found["proxy"]["networks"]["default"]["ipv4_address"])
    (subnet,) = config()["networks"]["default"]["ipam"]["config"]
    assert proxy_ip in ipaddress.ip_network(subnet["subnet"])
    for name in APPS:
        trusted = found[name]["environment"]["LOCKVIZ_TRUSTED_PROXIES"]
        assert [ipaddress.ip_network(p.strip()) for p in trusted.split(",")] == [
            ipaddress.ip_network(proxy_ip)
        ]


def test_everything_long_running_is_checked_and_starts_in_order() -> None:
    found = services()
    for name, service in found.items():
        if name not in ONE_SHOTS:
            assert "healthcheck" in service, name
    for name in APPS:
        assert "/readyz" in " ".join(found[name]["healthcheck"]["test"])  # database, layer, lab
    assert "2019" in " ".join(found["proxy"]["healthcheck"]["test"])  # Caddy's own endpoint
    assert found["proxy"]["depends_on"] == {
        "proxy-volumes": {"condition": "service_completed_successfully"},
        "app-1": {"condition": "service_healthy"},
        "app-2": {"condition": "service_healthy"},
    }
    app = found["app-1"]["depends_on"]
    assert app["db"] == {"condition": "service_healthy"}
    assert app["live"] == {"condition": "service_healthy"}
    assert app["secrets"] == {"condition": "service_completed_successfully"}


def test_it_is_private_by_default_and_nothing_long_running_runs_as_root() -> None:
    found = services()
    published = [p for s in found.values() for p in s.get("ports", [])]
    assert published and all(str(p).startswith("127.0.0.1:") for p in published)
    for name, service in found.items():
        assert "user" in service, f"{name} runs as its image's default user"
        if name in ONE_SHOTS:  # root, to chown; no network, no ports, never restarted
            assert service["network_mode"] == "none" and "ports" not in service, name
            assert service.get("restart", "no") == "no", name
        else:
            assert uid(service) != 0, name
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "USER lockviz" in dockerfile and "scripts/bootstrap.sh run" in dockerfile
    assert "HEALTHCHECK" in dockerfile


def test_each_service_mounts_only_the_secrets_it_reads() -> None:
    found = services()
    makes = found["secrets"]["command"]
    where = mounted_volumes(found["secrets"])  # {volume: its folder in the secrets service}
    secret_volumes = {"secrets", "db-secret", "live-secret"}
    assert set(where) == secret_volumes
    # The database and the live Redis: their own password, copied in as their own user.
    assert set(mounted_volumes(found["db"])) == {"db-secret", "db"}
    assert found["db"]["environment"]["POSTGRES_PASSWORD_FILE"] == "/secrets/db_password"
    assert set(mounted_volumes(found["live"])) == {"live-secret"}
    for secret, reader, volume in (
        ("db_password", "db", "db-secret"),
        ("live_password", "live", "live-secret"),
    ):
        assert f"{secret}={where[volume]}:{uid(found[reader])}" in makes
    # The replicas: the app's own volume (the secret key and both passwords), read-only.
    for name in APPS:
        assert found[name]["volumes"] == ["secrets:/secrets:ro"]
        assert makes[makes.index(where["secrets"]) + 1] == str(uid(found[name]))
    for name in ("proxy", "proxy-volumes"):
        assert not secret_volumes & set(mounted_volumes(found[name])), name


def test_every_image_is_pinned_to_a_version() -> None:
    for name, service in services().items():
        if "build" in service:
            continue  # lockviz itself, built from this checkout
        image = service["image"]
        assert PINNED.match(image), f"{name}: {image} is not pinned to a version"


@pytest.mark.parametrize(
    "domain", [None, "locks.example.edu", ":80", "http://lab-pc.local"], ids=str
)
def test_the_caddyfile_is_valid_for_https_and_for_a_closed_lab(
    domain: str | None, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKVIZ_")}
    env |= {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    if domain is not None:
        env["LOCKVIZ_DOMAIN"] = domain
    caddyfile = str(ROOT / "deploy" / "Caddyfile")

    def caddy(*args: str) -> str:
        done = subprocess.run(
            [binary("caddy"), *args, "--config", caddyfile, "--adapter", "caddyfile"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    caddy("validate")
    adapted = caddy("adapt")
    json.loads(adapted)
    assert '"uri":"/healthz"' in adapted  # active health checks: a dead replica is left out
    assert '"dial":"app-1:8000"' in adapted and '"dial":"app-2:8000"' in adapted
    assert '"path":["/metrics","/metrics/*"]' in adapted and '"status_code":404' in adapted
    assert "cookie" not in adapted and "ip_hash" not in adapted  # no sticky sessions
    listens = json.loads(adapted)["apps"]["http"]["servers"]["srv0"]["listen"]
    assert listens == ([":80"] if domain in (":80", "http://lab-pc.local") else [":443"])


def self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return folder / "cert.pem", folder / "key.pem"


@pytest.mark.parametrize("https", [False, True], ids=["http", "https"])
def test_the_nginx_file_starts_as_shipped_but_for_its_upstream_and_listen_lines(
    https: bool, tmp_path: Path
) -> None:
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    # What an admin edits: the lines the file marks "upstream:" and "listen:" (app-1 and app-2
    # do not resolve here, and port 80 is not ours), and for HTTPS the lines marked "https:".
    text = text.replace("server app-1:8000", "server 127.0.0.1:18001")
    text = text.replace("server app-2:8000", "server 127.0.0.1:18002")
    text = re.sub(r"listen 80 default_server;(?=  # listen:)", "listen 127.0.0.1:18080;", text)
    if https:
        cert, key = self_signed(tmp_path)
        shipped = "# https: listen 443 ssl default_server;"
        text = text.replace(shipped, "listen 127.0.0.1:18443 ssl;")
        text = re.sub(r"# https: (ssl_certificate) +\S+;", rf"\1 {cert};", text)
        text = re.sub(r"# https: (ssl_certificate_key) +\S+;", rf"\1 {key};", text)
        assert "listen 127.0.0.1:18443 ssl;" in text and str(key) in text
    (tmp_path / "lockviz.conf").write_text(text)
    temp = " ".join(
        f"{kind}_temp_path {tmp_path / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path / 'nginx.pid'};\nevents {{}}\n"
        f"http {{ access_log off; {temp} include {tmp_path / 'lockviz.conf'}; }}\n"
    )
    done = subprocess.run(
        [binary("nginx"), "-t", "-q", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
         "-c", str(tmp_path / "nginx.conf")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "proxy_set_header Host $http_host;" in text  # the port too: CSRF's Origin check
    assert "location = /metrics" in text
