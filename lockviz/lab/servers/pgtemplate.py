"""A PostgreSQL data dir made once per process, copied for every new cluster instead of initdb.

``initdb`` is the slow part of a PostgreSQL start: measured on the 2-core dev machine with a load
average of 15, 2.4-3.9 s, against 0.44 s to copy its result (``cp -a``, 39 MB) and 0.18 s for
the copy's new password (``postgres --single`` reading ``ALTER ROLE`` on its stdin). So the first
cluster a process starts runs ``initdb`` once into a template dir (``lockviz-pgtemplate-*``,
0700, under the lab base), and every cluster copies it:

* each copy gets a **password of its own** before it ever listens: the template's is random and
  thrown away at once (nobody can log in with it), and the copy's is set in single-user mode,
  which opens no port and reads the statement on its stdin (never on a command line), as a
  ready SCRAM secret of :data:`SCRAM_ITERATIONS` (why so few: :mod:`lockviz.lab.servers.postgres`);
* the template is **never started**: every copy is what ``initdb`` leaves, so a cluster from the
  template starts with the same state as one from its own ``initdb`` (no sequence, no table);
* the template dir is **recorded in the registry** with no process (its ``lab.json``): removed at
  exit, and a killed app's is swept at the next start-up like a run dir.

As root, ``initdb``, ``cp`` and ``postgres --single`` run as the ``postgres`` OS user (they
refuse root, and the copy must be that user's), as the server does.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import hmac
import os
import shutil
import subprocess
import threading
from collections.abc import Callable

from lockviz.lab import procs, registry
from lockviz.lab.errors import LabError
from lockviz.lab.servers.base import new_password

STEP_TIMEOUT_S = 60.0
# PBKDF2 iterations of a copy's SCRAM secret (PostgreSQL's own is 4096): see the module's doc.
SCRAM_ITERATIONS = 1

_lock = threading.Lock()
_templates: dict[str, str] = {}  # bin dir -> the template's data dir


def run(args: list[str], log_path: str, popen: procs.AsUser, what: str, text: str = "") -> None:
    """Run one step to its end (``text`` on its stdin); LabError naming ``what`` if it fails."""
    with open(log_path, "ab") as log:
        proc = procs.spawn(args, stdin=subprocess.PIPE, stdout=log, stderr=log, **popen)
        try:
            proc.communicate(text.encode(), timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise LabError(f"{what} did not finish within {STEP_TIMEOUT_S:.0f} s") from None
    if proc.returncode != 0:
        raise LabError(f"{what} failed: {_tail(log_path)}")


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()[-500:].strip() or "no output"
    except OSError:
        return "no log"


def template(
    binaries: str,
    initdb: Callable[[str, str, str], None],
    prepare: Callable[[str], None],
    base: str | None = None,
) -> str:
    """This process's template data dir for ``binaries`` (made on first use, under a lock):
    ``initdb(dir, data_dir, password)`` makes it, ``prepare(dir)`` gives ``dir`` (inside the
    template's dir) to the server's OS user."""
    with _lock:
        found = _templates.get(binaries)
        if found is not None and os.path.exists(os.path.join(found, "PG_VERSION")):
            return found
        workdir = registry.new_run_dir(prefix="lockviz-pgtemplate-", base=base)
        registry.record(workdir, {})  # no process: swept with the dir once this process is gone
        atexit.register(shutil.rmtree, workdir, True)
        try:
            # The dir stays the app's (the registry trusts only its own dirs); inside it, one the
            # server's OS user owns, as a run dir has one per server.
            own = os.path.join(workdir, "pg")
            os.mkdir(own, 0o700)
            prepare(own)
            data_dir = os.path.join(own, "data")
            initdb(own, data_dir, new_password())  # a password thrown away at once
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        _templates[binaries] = data_dir
        return data_dir


def copy(
    binaries: str,
    source: str,
    data_dir: str,
    password: str,
    log_path: str,
    popen: procs.AsUser,  # the OS user each step runs as (as root)
) -> None:
    """``source`` copied to ``data_dir``, its superuser's password set to ``password``."""
    run(["cp", "-a", source, data_dir], log_path, popen, "copying the template data dir")
    single = [os.path.join(binaries, "postgres"), "--single", "-D", data_dir, "-c", "fsync=off"]
    if not (password.isascii() and password.replace("-", "").replace("_", "").isalnum()):
        raise LabError("a PostgreSQL password must be URL-safe (letters, digits, - and _)")
    secret = scram_secret(password)  # base64, $ and : only: nothing in it to quote
    statement = f"ALTER ROLE postgres PASSWORD '{secret}';\n"
    run([*single, "postgres"], log_path, popen, "setting the copy's password", statement)


def scram_secret(password: str, iterations: int = SCRAM_ITERATIONS, salt: bytes = b"") -> str:
    """The SCRAM-SHA-256 secret PostgreSQL stores for ``password`` (RFC 5802 and 7677, in
    PostgreSQL's ``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`` form); given to
    ``ALTER ROLE ... PASSWORD``, the server keeps it as it is. ``password`` is ASCII, which
    SASLprep leaves unchanged (libpq applies it before hashing)."""
    salt = salt or os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.digest(salted, b"Server Key", "sha256")
    parts = [base64.b64encode(part).decode() for part in (salt, stored_key, server_key)]
    return f"SCRAM-SHA-256${iterations}:{parts[0]}${parts[1]}:{parts[2]}"
