"""Where this machine's PostgreSQL is, and who runs it: Debian's server binaries (the newest
major's), PgBouncer's, and the ``postgres`` OS user the servers run as when the lab is root
(``initdb`` and ``postgres`` refuse root), with the dirs they must pass through handed to it.
:mod:`lockviz.lab.servers.postgres` and its template (:mod:`~lockviz.lab.servers.pgtemplate`)
start their processes through these."""

from __future__ import annotations

import glob
import os
import pwd
import shutil

from lockviz.lab import procs

OS_USER = "postgres"


def bin_dir() -> str | None:
    """Debian's server binaries live in /usr/lib/postgresql/<major>/bin; take the newest."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=major)
    return os.path.dirname(found[-1]) if found else None


def major(path: str) -> int:
    version = path.split("/")[4]
    return int(version) if version.isdigit() else 0


def pgbouncer_binary() -> str | None:
    return shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")


def give_template_dir(path: str) -> None:
    """As root: ``path`` (in the template's dir, in the lab base) to the server's OS user, the
    dirs above it passable (search only), as a server's own dir is
    (:meth:`lockviz.lab.servers.postgres.PostgresServer._prepare_dir`)."""
    ids = os_user_ids()
    if ids is not None:
        template_dir = os.path.dirname(path)
        for above in (template_dir, os.path.dirname(template_dir)):
            os.chmod(above, os.stat(above).st_mode | 0o011)
        os.chown(path, *ids)


def as_os_user() -> procs.AsUser:
    """Popen arguments to run as ``postgres`` when we are root (it refuses to run as root)."""
    if os.geteuid() != 0:
        return {}
    return {"user": OS_USER, "group": pwd.getpwnam(OS_USER).pw_gid, "extra_groups": []}


def os_user_ids() -> tuple[int, int] | None:
    """(uid, gid) to give the server's files to when we are root; ``None`` otherwise."""
    if os.geteuid() != 0:
        return None
    entry = pwd.getpwnam(OS_USER)
    return entry.pw_uid, entry.pw_gid
