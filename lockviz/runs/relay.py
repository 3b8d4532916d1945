"""Every replica serves any click: a request for a run another app process executes is relayed.

A run's engine lives in the process that started it (its servers, clients and threads are that
process's children). With several app processes behind a proxy that is not sticky, a click or a
Finish for that run may land on any of them. The one that receives it asks the owner, named by
the run's ``host`` (lockviz.runs.recovery.process_id), over the Redis the processes already
share for live streams (``LOCKVIZ_CHANNEL_REDIS``), and answers the browser with the owner's
reply, within the same request:

    asker                                       owner (listen() thread)
    RPUSH lockviz:relay:<owner> {op, run, owner, data, reply, deadline}
    BLPOP <reply> (≤ ASK_TIMEOUT_S)             BLPOP lockviz:relay:<owner>
                                                handler(run, data) → answer
                                                RPUSH <reply> answer; EXPIRE <reply>

No answer in time means the owner is gone or frozen: :func:`ask` returns None and the caller
says the run is not live (lockviz.runs.recovery marks a dead owner's runs interrupted). A
request the owner reads after its deadline is dropped, never applied late: the learner was
already told it was not. With no shared Redis there is one process, and nothing to relay.

**The trust boundary.** Whoever can write to that Redis (it holds its password) can put a
request in any process's inbox; the channel Redis is inside the installation's trust boundary,
like its database, and must not be reachable from the class's network (docs/deploy.md). Each
request also says which run owner it speaks for (``owner``: the run's owner, whose request the
asking process checked), and the answering process applies it only if that is the run's owner
in the database: a writer of the Redis must also know a browser's secret token.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import redis
from django.conf import settings
from django.db import close_old_connections

from lockviz.jsontypes import JsonObject

log = logging.getLogger(__name__)

ASK_TIMEOUT_S = 5.0  # an owner that answers nothing in this long is gone or frozen
REPLY_TTL_S = 30
Handler = Callable[[str, str, JsonObject], JsonObject]  # (run id, owner, its data) -> answer

_listening: threading.Thread | None = None
_listen_lock = threading.Lock()


def enabled() -> bool:
    """Whether app processes share a Redis (and so may relay to one another)."""
    return bool(settings.LOCKVIZ_CHANNEL_REDIS)


def inbox(process: str) -> str:
    return f"lockviz:relay:{process}"


def _client(timeout_s: float) -> redis.Redis:
    return redis.Redis.from_url(
        settings.LOCKVIZ_CHANNEL_REDIS, socket_timeout=timeout_s, socket_connect_timeout=2
    )


def ask(process: str, op: str, run_id: str, owner: str, data: JsonObject) -> JsonObject | None:
    """``op`` on ``run_id`` for its ``owner``, done by ``process``, which runs it: its answer, or
    None when it did not answer within :data:`ASK_TIMEOUT_S` (or Redis is away)."""
    reply = f"lockviz:relay:reply:{secrets.token_urlsafe(12)}"
    request = {
        "op": op,
        "run": run_id,
        "owner": owner,
        "data": data,
        "reply": reply,
        "deadline": time.time() + ASK_TIMEOUT_S,
    }
    try:
        client = _client(ASK_TIMEOUT_S + 2)
        with client.pipeline() as pipe:
            pipe.rpush(inbox(process), json.dumps(request))
            pipe.expire(inbox(process), int(ASK_TIMEOUT_S * 4))  # a dead owner's inbox goes
            pipe.execute()
        got = client.blpop([reply], timeout=ASK_TIMEOUT_S)
    except redis.RedisError as exc:
        log.warning("could not relay %s for run %s to %s: %s", op, run_id, process, exc)
        return None
    if got is None:
        return None
    answer = json.loads(got[1])
    return answer if isinstance(answer, dict) else None


def listen(process: str, handlers: dict[str, Handler]) -> None:
    """Answer requests for this process's runs, from now on (a daemon thread; once)."""
    global _listening
    if not enabled():
        return
    with _listen_lock:
        if _listening is None or not _listening.is_alive():
            _listening = threading.Thread(
                target=_listen, args=(process, handlers), name="relay", daemon=True
            )
            _listening.start()


def _listen(process: str, handlers: dict[str, Handler]) -> None:
    workers = ThreadPoolExecutor(4, thread_name_prefix="relay")  # a slow Finish holds no click
    client = _client(15)
    while True:
        try:
            got = client.blpop([inbox(process)], timeout=10)
        except redis.RedisError as exc:  # Redis is away for a moment: listen again soon
            log.warning("relay: %s", exc)
            time.sleep(1)
            continue
        if got is not None:
            workers.submit(_answer, client, got[1], handlers)


def _answer(client: redis.Redis, raw: bytes | str, handlers: dict[str, Handler]) -> None:
    try:
        request = json.loads(raw)
        if time.time() > float(request["deadline"]):
            log.warning("relay: dropped %s for run %s, asked too long ago", *_what(request))
            return
        answer = handlers[request["op"]](
            str(request["run"]), str(request.get("owner", "")), dict(request["data"])
        )
        with client.pipeline() as pipe:
            pipe.rpush(request["reply"], json.dumps(answer))
            pipe.expire(request["reply"], REPLY_TTL_S)
            pipe.execute()
    except Exception:  # a bad request or Redis away: the asker times out and says so
        log.exception("relay: could not answer a request")
    finally:
        close_old_connections()


def _what(request: JsonObject) -> tuple[str, str]:
    return str(request.get("op")), str(request.get("run"))
