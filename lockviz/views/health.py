"""What the proxy, container healthchecks and Prometheus ask: ``/healthz``, ``/readyz``,
``/metrics``. Plain text; what is checked and counted lives in :mod:`lockviz.ops`.

``/healthz`` says only that the process answers (no query: a liveness probe that restarts a
replica must not restart it because the database is away); ``/readyz`` says whether it can
serve a class now (database, channel layer, lab), 200 or 503 with a line per check (and why,
to those who may read ``/metrics``: the reasons name internal addresses).
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from lockviz.ops import access, metrics, readiness


@never_cache
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


@never_cache
@require_GET
def readyz(request: HttpRequest) -> HttpResponse:
    checks = readiness.checks()  # at most once a second, whoever asks (lockviz.ops.readiness)
    ready = all(check.ok for check in checks)
    # The reasons name internal addresses: only for those who may read /metrics (the host
    # itself, compose's healthcheck); through the public proxy, each check's outcome only.
    said = access.may_read_metrics(request)
    lines = [
        "ready" if ready else "not ready",
        *(
            check.line if said else f"{check.what}: {'ok' if check.ok else 'FAILED'}"
            for check in checks
        ),
    ]
    return HttpResponse(
        "\n".join(lines) + "\n",
        status=200 if ready else 503,
        content_type="text/plain; charset=utf-8",
    )


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not access.may_read_metrics(request):
        raise Http404  # the answer any unknown path gets: nothing says it is here
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)
