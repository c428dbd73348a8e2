FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY gating ./gating
COPY reviewqueue ./reviewqueue
RUN pip install --no-cache-dir .
COPY . .
RUN DATABASE_URL=postgres://build@localhost/build SECRET_KEY=build-only-not-used-at-runtime-0123456789 \
    python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "reviewqueue.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
