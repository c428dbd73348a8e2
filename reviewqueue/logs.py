"""JSON log lines carrying ids, reasons and timings — never passage text, answer text or tokens."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from reviewqueue.middleware import request_id_var, trace_id_var

_STANDARD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        trace_id = trace_id_var.get()
        if trace_id and not hasattr(record, "trace_id"):
            record.trace_id = trace_id
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and value not in ("", None):
                payload[key] = value if isinstance(value, (int, float, bool)) else str(value)
        if record.exc_info:
            payload["exc_type"] = record.exc_info[0].__name__ if record.exc_info[0] else None
        return json.dumps(payload, ensure_ascii=False)
