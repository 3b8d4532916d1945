"""The fork server's own process: imports what any child needs once, then forks one child per
request from the app and hands back its pid and a pidfd (the app's side, and why:
:mod:`lockviz.lab.forkserver`).

Run as ``python -m lockviz.lab.children.forkserver FD``, FD its end of the app's socket. A forked
child asks for ``PR_SET_PDEATHSIG`` relative to this server as soon as it exists, then checks it
was not orphaned meanwhile; it takes the two pipe ends it was sent as stdin and stdout and
becomes the module it was asked for (:data:`lockviz.lab.forkserver.FORKED`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
from types import FrameType

from lockviz.lab import children, procs


def serve(sock: socket.socket) -> None:
    """Import everything a child may need, then fork one child per request until EOF."""
    _warm_up()
    gc.collect()
    gc.freeze()  # a child's collections then leave the shared pages alone
    signal.signal(signal.SIGCHLD, _reap)
    me = os.getpid()
    sock.sendall(b"ready")
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(sock, 64, 2)
        except ConnectionError:
            return
        if not request:
            return  # the app closed its end: it is stopping
        role = request.decode()
        # No reaping between the fork and the pidfd: the pid must still be the child's.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        pid = os.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            _become(role, me, sock, fds)  # never returns
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        try:
            socket.send_fds(sock, [str(pid).encode()], [pidfd])
        finally:
            os.close(pidfd)


def _warm_up() -> None:
    """What any child will need, imported once, here."""
    import lockviz.lab.backends.etcd
    import lockviz.lab.backends.postgres
    import lockviz.lab.backends.redis
    import lockviz.lab.backends.redlock
    import lockviz.lab.backends.zookeeper
    import lockviz.lab.children.proxy
    import lockviz.lab.children.worker  # noqa: F401


def _reap(signum: int, frame: FrameType | None) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _become(role: str, server_pid: int, sock: socket.socket, fds: list[int]) -> None:
    """In a forked child: die with the server, take the pipes as stdin and stdout, run ``role``."""
    code = 0
    try:
        procs.die_with_parent()
        if os.getppid() != server_pid:  # the server died before we asked: so must we
            os._exit(1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        child_in, child_out = fds
        os.dup2(child_in, 0)
        os.dup2(child_out, 1)
        os.close(child_in)
        os.close(child_out)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        if role == children.WORKER:
            from lockviz.lab.children import worker

            worker.main()
        elif role == children.PROXY:
            from lockviz.lab.children import proxy

            proxy.main()
        else:
            code = 2  # not something a child can become
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(code)


def main() -> None:
    procs.die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the app, which stops us
    serve(socket.socket(fileno=int(sys.argv[1])))


if __name__ == "__main__":
    main()
