"""Owners' mail (conflicts, hand-offs) reaches the SMTP server EMAIL_HOST names. With none named
DEBUG writes each mail to the output and a deployment's `check --deploy` says none is sent; a
setting that could not send stops the process at start-up instead of failing each mail."""

from __future__ import annotations

import os
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SEND = (
    "import django; django.setup()\n"
    "from django.core.mail import send_mail\n"
    "print('sent', send_mail('Conflict on pricing', 'Documents disagree.', None,"
    " ['olivia@example.com']))\n"
)


class _Inbox(socketserver.StreamRequestHandler):
    """Just enough SMTP to take one message: each line's reply, the DATA until its dot."""

    messages: list[tuple[list[str], str]] = []

    def handle(self) -> None:
        self.wfile.write(b"220 test SMTP\r\n")
        lines: list[str] = []
        while line := self.rfile.readline():
            verb = line[:4].upper()
            if verb == b"DATA":
                self.wfile.write(b"354 go on\r\n")
                body = []
                while (part := self.rfile.readline()) not in (b".\r\n", b""):
                    body.append(part.decode())
                self.messages.append((lines, "".join(body)))
                self.wfile.write(b"250 taken\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                lines.append(line.decode().strip())
                self.wfile.write(b"250 ok\r\n")


@pytest.fixture
def smtp_port() -> Iterator[int]:
    _Inbox.messages = []
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Inbox)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _run(*command: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("EMAIL_") and k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    base.update(DEBUG="0", DJANGO_SETTINGS_MODULE="reviewqueue.settings",
                DATABASE_URL=os.environ.get("DATABASE_URL",
                                            "postgres://postgres@127.0.0.1:5432/postgres"))
    base.update(env)
    return subprocess.run([sys.executable, *(command or ("-c", SEND))], cwd=ROOT, env=base,
                          capture_output=True, text=True, timeout=120)


def test_mail_goes_to_the_smtp_server_email_host_names(smtp_port: int) -> None:
    result = _run(EMAIL_HOST="127.0.0.1", EMAIL_PORT=str(smtp_port),
                  DEFAULT_FROM_EMAIL="reviewqueue@example.com")
    assert result.returncode == 0, result.stderr
    assert "sent 1" in result.stdout
    [(commands, message)] = _Inbox.messages
    assert "mail from:<reviewqueue@example.com>" in [c.lower() for c in commands]
    assert "rcpt to:<olivia@example.com>" in [c.lower() for c in commands]
    assert "Subject: Conflict on pricing" in message
    assert "Documents disagree." in message


def test_without_email_host_debug_writes_each_mail_whole_to_the_output() -> None:
    result = _run(DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert "sent 1" in result.stdout
    assert "To: olivia@example.com" in result.stdout
    assert "Documents disagree." in result.stdout


def test_without_email_host_a_deployment_sends_nothing_and_its_check_says_so() -> None:
    result = _run()
    assert result.returncode == 0, result.stderr
    assert "Documents disagree." not in result.stdout + result.stderr  # not into the logs
    check = _run("manage.py", "check", "--deploy", "--fail-level", "WARNING", HTTPS="1",
                 ALLOWED_HOSTS="reviewqueue.example")
    assert check.returncode != 0
    assert "mail.E001" in check.stdout + check.stderr
    assert "email will not be sent" in check.stdout + check.stderr


@pytest.mark.parametrize(("env", "named"), [
    ({"EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend"}, "EMAIL_HOST"),
    ({"EMAIL_HOST": "127.0.0.1", "EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "EMAIL_USE_SSL"),
    ({"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": "smtp"}, "EMAIL_PORT"),
])
def test_a_mail_setting_that_cannot_send_stops_the_start(env: dict[str, str], named: str) -> None:
    result = _run(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert named in result.stderr
    assert "sent" not in result.stdout
