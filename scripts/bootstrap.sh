#!/usr/bin/env bash
# Everything `make run` and `make test` need, installed once: Debian packages (as root; as a
# normal user it says what is missing and how to get it) and the project's venv.
#
#   scripts/bootstrap.sh run    what the app needs (the lab's servers, the venv): `make run`, and
#                               the Docker image, which is built with this same script
#   scripts/bootstrap.sh server what a school's server needs without Docker: the app's, and
#                               nginx in front (docs/deploy.md, "Without Docker"): `make
#                               serve-setup`. Nothing of the tests' (no npm, no chromium)
#   scripts/bootstrap.sh test   that, plus what the tests need (chromium, mermaid's parser,
#                               docker-compose to validate docker-compose.yml): `make test`
#
#   scripts/bootstrap.sh MODE --list   says what MODE installs, and installs nothing
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-test}
case "$MODE" in run | server | test) ;; *)
  echo "scripts/bootstrap.sh: no mode '$MODE': run, server or test" >&2
  exit 2
  ;;
esac

# redis-server and faketime are the lab's spine; zookeeper, postgresql and etcd-server are the
# other lock services (pgbouncer for the pooled-connection pitfall); python3-venv builds .venv.
PACKAGES=(redis-server faketime zookeeper postgresql pgbouncer etcd-server python3-venv)
if [ "$MODE" = server ]; then
  # Debian's nginx runs the shipped deploy/nginx.conf in front of the replicas; the system's own
  # PostgreSQL and Redis (the packages above) keep the runs and carry the live events.
  PACKAGES+=(nginx curl)
fi
if [ "$MODE" = test ]; then
  # chromium drives the browser tests; docker-compose (the engine-less client) checks the file;
  # nginx-light and caddy run the shipped proxy configurations in tests/deploy; nginx and curl
  # are a server's, for the documented route a test runs on a machine of its own (test_route.py).
  PACKAGES+=(chromium fonts-dejavu-core docker-compose nginx-light nginx curl caddy)
fi
if [ "${2:-}" = --list ]; then
  echo "Debian packages: ${PACKAGES[*]}"
  echo "Python packages: lockviz$([ "$MODE" = test ] && echo " and its [dev] extras (pytest, Playwright, ruff, mypy)")"
  echo "npm packages: $([ "$MODE" = test ] && echo "the dev dependencies of package.json (ESLint, Prettier, mermaid, axe-core)" || echo none)"
  exit 0
fi

# One dpkg-query for all of them: a set-up checkout must start in seconds (`make run`).
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for pkg in "${PACKAGES[@]}"; do
  grep -qx "$pkg install ok installed" <<<"$installed" || missing+=("$pkg")
done

if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    echo "==> installing Debian packages: ${missing[*]}"
    # Packages must not start their system services here: the lab runs its own servers.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "lockviz needs these Debian packages, which are not installed: ${missing[*]}" >&2
    echo "Install them with:" >&2
    echo "    sudo apt-get install ${missing[*]}" >&2
    echo "(then run this command again; nothing else needs root)" >&2
    exit 1
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
# npm dev dependencies: ESLint and Prettier (make lint), and mermaid's parser, with which the
# browser tests check exported Mermaid. Node itself runs the front end's unit tests (node --test).
if [ "$MODE" = test ] && [ -f package.json ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; }; then
  if command -v npm >/dev/null; then
    echo "==> installing npm dev dependencies (eslint, prettier, mermaid, axe-core)"
    npm ci --no-audit --no-fund --loglevel=error && touch node_modules
  elif [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
    npm ci --no-audit --no-fund --loglevel=error && touch node_modules
  else
    echo "npm is missing: sudo apt-get install nodejs npm (the lint and the tests need it)" >&2
    exit 1
  fi
fi

# Python packages: a stamp per mode says they were all there since pyproject.toml last changed.
# The tests' packages include the app's, so the test stamp does for `run` too. Without a fresh
# stamp, what is missing is asked of the venv itself and only that is installed.
# A server's Python packages are the app's (`run`).
STAMP=$([ "$MODE" = test ] && echo test || echo run)
fresh() { [ -f ".venv/.installed-$1" ] && [ ! pyproject.toml -nt ".venv/.installed-$1" ]; }
if ! fresh "$STAMP" && ! { [ "$STAMP" = run ] && fresh test; }; then
  EXTRAS=$([ "$MODE" = test ] && echo "--extra dev" || echo "")
  mapfile -t lacking < <(.venv/bin/python scripts/missing_requirements.py $EXTRAS)
  if [ "${lacking[0]:-}" = "-e ." ]; then  # lockviz itself: a new venv, everything with it
    echo "==> installing Python packages into .venv"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".$([ "$MODE" = test ] && echo "[dev]")"
  elif ((${#lacking[@]})); then
    echo "==> installing the missing Python packages: ${lacking[*]}"
    .venv/bin/python -m pip install -q "${lacking[@]}"
  fi
  touch ".venv/.installed-$STAMP"
fi

# The pages' scripts and styles under names with their content's hash, gzipped beside them
# (lockviz/edge/staticfiles.py), so an image built with this script carries them ready. Collected
# again only when a file under static/ or a Python package is newer than the last collection;
# `manage.py serve` and the tests check precisely (every static finder) before they serve.
MANIFEST=build/static/staticfiles.json
if [ ! -f "$MANIFEST" ] || [ -n "$(find static .venv/.installed-* -newer "$MANIFEST" -print -quit)" ]; then
  .venv/bin/python manage.py collectstatic --noinput --verbosity 0
fi

# The app's own modules compiled ahead: every process the lab and the tests start (`serve`, its
# lab host, a client's fork server) imports them, and a shell that sets PYTHONDONTWRITEBYTECODE
# (as this machine's does) would have each one compile them from source again, ~0.15 s of CPU
# a process. compileall skips a module whose compiled file is current.
.venv/bin/python -m compileall -q -j 0 lockviz algorithms >/dev/null
