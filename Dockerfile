# One image for the web server and the Celery workers (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=webapp.settings \
    MLSCHED_VAR_DIR=/data \
    MEDIA_ROOT=/data/media

WORKDIR /app
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

COPY manage.py ./
COPY scheduling/ scheduling/
COPY workers/ workers/
COPY webapp/ webapp/
COPY templates/ templates/
COPY static/ static/
# plotly.js from the installed plotly package, so that the pages work offline. (The settings need a
# secret key to load; this build step's is used for nothing else: the containers get theirs from
# DJANGO_SECRET_KEY.)
RUN DJANGO_SECRET_KEY=build-step-only python manage.py vendor_plotly \
    && useradd --create-home --uid 1000 app \
    && mkdir -p /data/media \
    && chown -R app /data

USER app
EXPOSE 8000
CMD ["gunicorn", "webapp.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--timeout", "120"]
