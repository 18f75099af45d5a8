# cardtable: the Discord bot in a slim Python 3.11 image, dependencies pinned by uv.lock.
#
#   docker build -t cardtable .
#   docker run -d --name cardtable -e DISCORD_TOKEN=... -v cardtable-data:/app/data cardtable
#
# The code lives in /opt/cardtable (owned by root, read-only for the bot); the SQLite
# database lives in /app/data, the only writable place, meant to be a volume. The message
# catalogues (data/locales), fonts and value tables (data/*.json) stay with the code so a
# volume on /app/data never hides them.

ARG PYTHON_VERSION=3.11
ARG UV_VERSION=0.13.9
# Base images pinned by digest, so a rebuild never picks up a silently re-pushed tag. Each
# is "@sha256:<digest>" appended to the tag, and must be updated with the version above:
#   docker buildx imagetools inspect python:3.11-slim          # the "Digest:" line
#   docker buildx imagetools inspect ghcr.io/astral-sh/uv:0.13.9
# Use the index digest printed there (not one platform's), so every architecture builds.
# Paste it here, or pass --build-arg PYTHON_DIGEST=@sha256:... . Empty: the tag, unpinned.
ARG PYTHON_DIGEST=""
ARG UV_DIGEST=""

FROM ghcr.io/astral-sh/uv:${UV_VERSION}${UV_DIGEST} AS uv

# -- build: a virtual environment with exactly the locked runtime dependencies ----------
FROM python:${PYTHON_VERSION}-slim${PYTHON_DIGEST} AS build
COPY --from=uv /uv /usr/local/bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/cardtable/.venv
WORKDIR /opt/cardtable
COPY pyproject.toml uv.lock ./
# The bot runs from its source folder (python -m bot), so the project itself is not installed.
RUN uv sync --frozen --no-dev --no-install-project

# -- runtime ----------------------------------------------------------------------------
FROM python:${PYTHON_VERSION}-slim${PYTHON_DIGEST}
RUN groupadd --system --gid 10001 cardtable \
    && useradd --system --uid 10001 --gid cardtable --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin cardtable \
    && mkdir -p /app/data \
    && chown cardtable:cardtable /app/data
COPY --from=build /opt/cardtable/.venv /opt/cardtable/.venv
COPY bot /opt/cardtable/bot
COPY cogs /opt/cardtable/cogs
COPY data/locales /opt/cardtable/data/locales
COPY data/fonts /opt/cardtable/data/fonts
# The computer players' value tables (plain numbers, read once per process).
COPY data/*.json /opt/cardtable/data/
RUN python -m compileall -q /opt/cardtable/bot /opt/cardtable/cogs
ENV PATH=/opt/cardtable/.venv/bin:$PATH \
    PYTHONPATH=/opt/cardtable \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CARDTABLE_DATABASE=/app/data/cardtable.db
WORKDIR /app
USER cardtable
VOLUME ["/app/data"]
# SIGINT lets discord.py close the gateway and the database cleanly on `docker stop`.
STOPSIGNAL SIGINT
# The running bot rewrites /app/data/cardtable.db.heartbeat every 30 s; this reads it
# (same user, PATH, PYTHONPATH and CARDTABLE_DATABASE as the bot) without importing the
# bot. Liveness only: a bot riding out a database outage is alive (exit 0), and restarting
# it would only add a cold start; a gone or stuck bot exits 1.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD ["python", "-m", "bot", "health", "--live"]
CMD ["python", "-m", "bot"]
