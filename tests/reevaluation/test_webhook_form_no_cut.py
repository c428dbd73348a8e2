"""The endpoint registration form cuts nothing a person pastes: a signing secret cut to 200
characters by the browser's maxlength would sign every delivery with a secret the receiver
does not hold. A text over the limit is refused whole by the server, naming the field, and
given back (reviewqueue/textlimit.py), as on every other page."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.django_db


def register_inputs(page: str) -> dict[str, str]:
    form = page.split("<h2>Register an endpoint</h2>", 1)[1].split("</form>", 1)[0]
    return {re.search(r'name="([^"]+)"', tag).group(1): tag  # type: ignore[union-attr]
            for tag in re.findall(r"<input\b[^>]*>", form) if 'type="hidden"' not in tag}


def test_no_field_of_the_register_form_cuts_a_paste(admin_user: Any, client: Any) -> None:
    client.force_login(admin_user)
    inputs = register_inputs(client.get("/webhooks/").content.decode())
    assert set(inputs) >= {"url", "description", "secret"}
    for name in ("secret", "description"):
        assert "maxlength" not in inputs[name], inputs[name]

