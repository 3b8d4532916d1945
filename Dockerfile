# lockviz against external Redis servers (see docker-compose.yml). The app container needs no
# servers of its own: with LOCKVIZ_SERVERS set, `manage.py serve` skips the local lab check.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir .

EXPOSE 8000
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
