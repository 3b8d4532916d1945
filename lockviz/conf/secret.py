"""The secret key of one installation: made once, kept outside the repository, never a constant.

It signs the session cookies that say which browser started a run, so a fixed, published key
would let anyone forge "I started that run". ``LOCKVIZ_SECRET_KEY`` wins when set (several app
processes must share one key); otherwise the key is read from a file of its own (mode 0600) in
the state directory, and made there by the first process that needs it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from pathlib import Path


def install_key(path: Path) -> str:
    """The key in ``path``, made (atomically, 0600) if there is none yet."""
    with contextlib.suppress(FileNotFoundError):
        return _read(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key)
    try:
        os.link(tmp, path)  # whole, and only if no other process got there first
    except FileExistsError:
        return _read(path)
    finally:
        tmp.unlink()
    return key


def _read(path: Path) -> str:
    key = path.read_text().strip()
    if len(key) < 32:
        raise RuntimeError(f"{path} holds no usable secret key; delete it to make a new one")
    return key


SECRETS = ("secret_key", "db_password", "live_password")
USAGE = "usage: python -m lockviz.conf.secret DIR [OWNER_UID] [NAME=DIR:UID ...]"


def share(source: Path, folder: Path, owner: int) -> None:
    """A copy of the secret ``source`` in ``folder`` (0600, ``owner``'s), replaced whole."""
    target = folder / source.name
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(_read(source))
    os.chown(tmp, owner, -1)
    os.replace(tmp, target)


def main(argv: list[str] | None = None) -> None:
    """``python -m lockviz.conf.secret DIR [OWNER_UID] [NAME=DIR:UID ...]``: a deployment's secrets.

    docker compose runs it before anything else: the app's secret key (shared by its replicas,
    so a session cookie one signs the other accepts), the app database's password and the live
    streams' Redis password, each a file of its own (0600, owned by the app's user) in DIR.
    Files that exist are kept: restarting the stack keeps everyone's sessions. Each
    ``NAME=DIR:UID`` then copies one of them into a folder of its own, owned by the user of the
    one service that reads it (``db_password=/db:999`` for PostgreSQL), so that service mounts
    that secret and no other.
    """
    args = (argv if argv is not None else sys.argv)[1:]
    if not args:
        raise SystemExit(USAGE)
    folder, rest = Path(args[0]), args[1:]
    owner = int(rest.pop(0)) if rest and rest[0].isdigit() else os.getuid()
    shares: list[tuple[str, Path, int]] = []
    for spec in rest:
        name, _, place = spec.partition("=")
        where, _, reader = place.rpartition(":")
        if name not in SECRETS or not where or not reader.isdigit():
            raise SystemExit(f"{spec!r} is not NAME=DIR:UID, NAME one of {SECRETS}\n{USAGE}")
        shares.append((name, Path(where), int(reader)))
    for name in SECRETS:
        install_key(folder / name)
        os.chown(folder / name, owner, -1)
    for name, into, uid in shares:
        share(folder / name, into, uid)


if __name__ == "__main__":
    main()
