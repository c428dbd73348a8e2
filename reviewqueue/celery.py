"""The Celery application. All Celery settings live in Django settings under CELERY_*."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")

app = Celery("reviewqueue")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
