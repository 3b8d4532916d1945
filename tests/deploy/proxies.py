"""The shipped proxy configurations, run by Debian's nginx and Caddy as child processes.

Each file is used as it ships, with only what an admin changes rewritten by pattern: the
replicas' addresses (``app-1:8000``, ``app-2:8000``) and where the proxy listens. Every rewrite
must find what it rewrites exactly as often as expected, so a change in the shipped file's shape
fails here, loudly, instead of testing a configuration nobody ships.

- nginx: ``deploy/nginx.conf`` goes inside an ``http`` block (as Debian's conf.d does), in a
  top-level file of our own that keeps its pid, logs and temp files in the test's directory.
  The access log names the replica that answered each request (``$upstream_addr``).
- Caddy: ``deploy/Caddyfile``'s site address is ``{$LOCKVIZ_DOMAIN}``, set in Caddy's
  environment, so only its upstreams are rewritten. It has no hook for a certificate the admin
  provides, so the test's copy gets one added line, ``tls <cert> <key>`` (a certificate made for
  the test: Caddy's automatic HTTPS would otherwise make one from a CA of its own), and global
  options that keep it off ports 80 and 2019 (``http_port``, ``admin off``).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bench.app import ROOT
from lockviz.lab import procs
from lockviz.lab.ports import free_port

SHIPPED_NGINX = Path(ROOT) / "deploy" / "nginx.conf"
SHIPPED_CADDYFILE = Path(ROOT) / "deploy" / "Caddyfile"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CADDY = shutil.which("caddy") or "/usr/bin/caddy"
START_TIMEOUT_S = 20.0


def rewrite(text: str, pattern: str, replacement: str, expected: int, what: str) -> str:
    """``text`` with ``pattern`` replaced, which must occur exactly ``expected`` times."""
    changed, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    assert count == expected, (
        f"{what}: expected {expected} match(es) of {pattern!r} in the shipped file, found "
        f"{count}: its shape changed, so this test no longer knows what to rewrite"
    )
    return changed


def nginx_site(shipped: str, upstreams: dict[str, int], port: int) -> str:
    """The shipped nginx.conf with its upstream server lines and its listen line rewritten."""
    for name, upstream_port in upstreams.items():
        shipped = rewrite(
            shipped,
            rf"^(\s*)server\s+{re.escape(name)}:8000\b",
            rf"\1server 127.0.0.1:{upstream_port}",
            1,
            f"nginx upstream {name}",
        )
    return rewrite(
        shipped, r"^(\s*)listen\s+80(\s+default_server)?\s*;", rf"\1listen 127.0.0.1:{port}\2;", 1,
        "listen",
    )  # fmt: skip


def caddy_site(
    shipped: str, upstreams: dict[str, int], cert: Path, key: Path, http_port: int
) -> str:
    """The shipped Caddyfile with its upstreams rewritten, the test's certificate, and global
    options that keep Caddy off ports a machine may already use."""
    for name, upstream_port in upstreams.items():
        shipped = rewrite(
            shipped, rf"(?<![\w.-]){re.escape(name)}:8000\b", f"127.0.0.1:{upstream_port}", 1,
            f"Caddy upstream {name}",
        )  # fmt: skip
    shipped = rewrite(
        shipped, r"^\{\s*$", f"{{\n\tadmin off\n\thttp_port {http_port}", 1, "Caddy global options"
    )
    return rewrite(
        shipped, r"^(\{\$LOCKVIZ_DOMAIN[^}]*\}\s*\{)\s*$", rf"\1\n\ttls {cert} {key}", 1,
        "Caddy site block {$LOCKVIZ_DOMAIN}",
    )  # fmt: skip


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key, made for the test."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lockviz test")])
    now = dt.datetime.now(dt.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


class Proxy:
    """A proxy process started by the test, answering on :attr:`url` once constructed."""

    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path

    def _wait(self, tls: bool) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(self.port, tls):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.url} did not start:\n{self.output()}")
            time.sleep(0.05)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def access(self) -> list[str]:
        """Each request it has logged (nginx only): method, path, status, the replica(s) tried
        and what each answered."""
        return []

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Nginx(Proxy):
    """Debian's nginx running the shipped deploy/nginx.conf in front of ``upstreams``."""

    def __init__(self, workdir: Path, upstreams: dict[str, int], port: int) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        site = workdir / "lockviz.conf"
        site.write_text(nginx_site(SHIPPED_NGINX.read_text(), upstreams, self.port))
        temp = "\n".join(
            f"    {kind}_temp_path {workdir / kind};" for kind in ("client_body", "proxy")
        )
        top = workdir / "nginx.conf"
        top.write_text(
            f"""daemon off;
{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} warn;
events {{ worker_connections 1024; }}
http {{
    include /etc/nginx/mime.types;
    log_format upstream '$request_method $uri $status $upstream_addr $upstream_status';
    access_log {workdir / "access.log"} upstream;
{temp}
    fastcgi_temp_path {workdir / "fastcgi"};
    uwsgi_temp_path {workdir / "uwsgi"};
    scgi_temp_path {workdir / "scgi"};
    include {site};
}}
"""
        )
        self.log_path = workdir / "error.log"
        self.access_path = workdir / "access.log"
        with open(workdir / "stderr.log", "ab") as log:
            self.proc = procs.spawn(
                [NGINX, "-p", str(workdir), "-e", str(self.log_path), "-c", str(top)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )  # fmt: skip
        self._wait(tls=False)

    def access(self) -> list[str]:
        try:
            return self.access_path.read_text().splitlines()
        except FileNotFoundError:
            return []


class Caddy(Proxy):
    """Debian's Caddy running the shipped deploy/Caddyfile, over HTTPS with the test's
    certificate, in front of ``upstreams``."""

    def __init__(self, workdir: Path, upstreams: dict[str, int], port: int) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.url = f"https://127.0.0.1:{port}"
        cert, key = certificate(workdir)
        caddyfile = workdir / "Caddyfile"
        shipped = SHIPPED_CADDYFILE.read_text()
        caddyfile.write_text(caddy_site(shipped, upstreams, cert, key, free_port()))
        env = {
            **os.environ,
            "LOCKVIZ_DOMAIN": self.url,
            "HOME": str(workdir),  # its storage and autosave, not root's
            "XDG_DATA_HOME": str(workdir / "data"),
            "XDG_CONFIG_HOME": str(workdir / "config"),
        }
        self.log_path = workdir / "caddy.log"
        with open(self.log_path, "ab") as log:
            self.proc = procs.spawn(
                [CADDY, "run", "--config", str(caddyfile), "--adapter", "caddyfile"],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )  # fmt: skip
        self._wait(tls=True)


def _listening(port: int, tls: bool) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            if tls:
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                with context.wrap_socket(sock, server_hostname="127.0.0.1"):
                    pass
        return True
    except OSError:
        return False
