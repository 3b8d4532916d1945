# lockviz with its whole lab inside: the same Debian servers `make run` uses (redis-server,
# zookeeper, postgresql, pgbouncer, etcd-server, libfaketime), installed by the same script the
# README's commands run (scripts/bootstrap.sh), so every fault works here too: clock jumps,
# crashes and restarts of nodes, cut links. Each run gets its own servers inside the container.
FROM debian:bookworm-slim

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update && apt-get install -y -q --no-install-recommends python3 python3-venv make \
    && rm -rf /var/lib/apt/lists/*
# The app and the lab's servers run as this user, never as root.
RUN useradd --create-home --uid 10001 lockviz

WORKDIR /app
COPY . /app
RUN scripts/bootstrap.sh run && rm -rf /var/lib/apt/lists/* && chown -R lockviz:lockviz /app

USER lockviz
ENV LOCKVIZ_STATE_DIR=/home/lockviz/state
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["/app/.venv/bin/python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
