"""Mail to people: the address a mail links a page by, and sending best effort.

Mail is never what records anything: the change it tells of is stored, and the recipient's
pages list it. So a mail server that refuses or cannot be reached is logged and passed over,
and it is waited for once, not once a mail, since mail goes out from the request that made the
change (after its commit).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.mail import EmailMessage, mailers

log = logging.getLogger(__name__)


def page_address(path: str) -> str:
    """A page as a mail names it: at SITE_URL (https://reviewqueue.example.com/owner/), or by
    its path alone where SITE_URL is not set."""
    return f"{settings.SITE_URL}{path}"


@checks.register("mail", deploy=True)
def site_url_set(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """`check --deploy`: a deployment without SITE_URL mails paths no mail reader opens."""
    if settings.SITE_URL:
        return []
    return [checks.Warning(
        "SITE_URL is not set: mails name ReviewQueue's pages by their path alone (/owner/), "
        "which no mail reader opens.",
        hint="Set SITE_URL to the address people open ReviewQueue at, such as "
             "https://reviewqueue.example.com.",
        id="reviewqueue.W001")]


def mail_to_each(subject: str, body: str, recipients: Sequence[str]) -> list[EmailMessage]:
    """The same mail to each recipient on their own: none sees who else was told."""
    return [EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL,
                         to=[address]) for address in recipients]


def send_each(messages: Sequence[tuple[Mapping[str, Any], EmailMessage]], failure: str) -> None:
    """Send the messages through one connection, each on its own: one the server refuses does
    not stop the others. Each comes with what the log says of it (`failure`, and its fields)
    when it cannot be sent."""
    if not messages:
        return
    mailer = mailers.default
    try:
        mailer.open()
    except Exception:
        log.exception(failure, extra={"mails": len(messages),
                                      "about": [dict(fields) for fields, _ in messages]})
        return
    try:
        for fields, message in messages:
            try:
                mailer.send_messages([message])
            except Exception:
                log.exception(failure, extra=dict(fields))
    finally:
        try:
            mailer.close()
        except Exception:  # the mails went; a failed goodbye must not fail the request
            log.exception("closing the mail connection failed")
