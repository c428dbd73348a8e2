"""Defects a review of the audit area found:

- an admin's own password change (the admin header's form) ran its audit outside any
  transaction: a 500, the password changed and no event;
- any identifier containing "rq_" and 20 more characters (`sparq_customer_retention_policy`)
  was taken for an API token, and ingest or publish failed with a 500;
- the quarantine showed any admin the passage text of a refused revision they may not read.
"""

from __future__ import annotations

import json
from html import unescape
from typing import Any

import pytest
from django.test import Client

from reviewqueue.audit.models import AuditEvent, QuarantinedPayload
from tests.audit.conftest import body_shown
from tests.conftest import answer_body, revision_body

QUARANTINE = "/admin/audit/quarantinedpayload/"
SECRET = "SECRET-SALARY-BANDS are 90k"


@pytest.mark.django_db(transaction=True)
def test_an_admins_own_password_change_is_saved_with_its_event(admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    new = "a-new-long-passphrase-42"

    response = client.post("/admin/password_change/", {
        "old_password": "pw-for-tests-only", "new_password1": new, "new_password2": new})

    admin_user.refresh_from_db()
    assert response.status_code == 302
    assert admin_user.check_password(new)
    assert AuditEvent.objects.filter(action="user.password_changed",
                                     object_id="ada").count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["sparq_customer_retention_policy",
                                  "irq_handler_timeout_seconds_default"])
def test_an_identifier_containing_rq_is_no_token(name: str, publish: Any, submit: Any,
                                                 make_user: Any,
                                                 django_capture_on_commit_callbacks: Any) -> None:
    make_user("oscar", "owner")
    fact = {"key": name, "value": 14, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}
    with django_capture_on_commit_callbacks(execute=True):
        publish(name, "r1", facts=[fact])
        publish("other", "r1", owner="oscar", facts=[{**fact, "value": 30}])  # a conflict

    response = submit("t-1", retrieved=[{"cite": "d1", "document_id": name, "revision": "r1",
                                         "span": "p1"}],
                      claims=[{"key": name, "value": 14, "cite": "d1"}])

    assert response.status_code == 201, response.content
    assert AuditEvent.objects.filter(action="conflict.opened", after__key=name).exists()


@pytest.fixture
def refused_hr_revision(service_api: Any) -> QuarantinedPayload:
    body = revision_body(principals=["group:hr"],
                         passages=[{"span": "p1", "text": SECRET}])
    body["updated_at"] = "not a date"
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", body, format="json")
    assert response.status_code == 400
    return QuarantinedPayload.objects.get()


@pytest.mark.django_db
def test_the_quarantine_hides_passages_of_a_revision_the_admin_may_not_read(
    refused_hr_revision: QuarantinedPayload, admin_client: Client, make_user: Any
) -> None:
    hr_admin = Client()
    hr_admin.force_login(make_user("hilda", "admin", groups=("hr",)))

    hidden = body_shown(admin_client, refused_hr_revision)
    shown = body_shown(hr_admin, refused_hr_revision)

    assert SECRET not in hidden
    assert f"[{len(SECRET)} characters not shown: a revision you may not read]" in hidden
    assert "not a date" in hidden  # the rest of the body, which the errors are about
    assert SECRET in shown
    assert SECRET in QuarantinedPayload.objects.get().body  # kept whole


@pytest.mark.django_db
def test_a_broken_body_that_may_hold_passages_shows_only_its_size(
    service_api: Any, admin_client: Client
) -> None:
    broken = '{"allowed_principals": ["group:hr"], "passages": [{"span": "p1", "text": "' \
        + SECRET + '"'
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", broken,
                               content_type="application/json")
    assert response.status_code == 400
    payload = QuarantinedPayload.objects.get()

    shown = body_shown(admin_client, payload)

    assert SECRET not in shown
    assert f"[{len(broken)} characters not shown" in shown
    assert json.dumps(SECRET)[1:-1] in payload.body


@pytest.mark.django_db
def test_the_quarantine_page_shows_no_title_fact_value_or_raw_body_of_a_hidden_revision(
    service_api: Any, admin_client: Client
) -> None:
    body = revision_body(principals=["group:hr"], title="HR-TITLE",
                         passages=[{"span": "p1", "text": SECRET}],
                         facts=[{"key": "band_top", "value": "HR-FACT-VALUE",
                                 "valid_from": "2026-01-01", "span": "p1"}])
    body["updated_at"] = "not a date"
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", body, format="json")
    assert response.status_code == 400
    payload = QuarantinedPayload.objects.get()

    html = admin_client.get(f"{QUARANTINE}{payload.pk}/change/").content.decode()

    for secret in (SECRET, "HR-TITLE", "HR-FACT-VALUE"):
        assert secret not in html
    shown = unescape(body_shown(admin_client, payload))
    assert '"band_top"' in shown and "not a date" in shown
    assert f"[{len('HR-TITLE')} characters not shown: a revision you may not read]" in shown
    assert html.count("not a date") == 1  # the raw body is not shown beside it


@pytest.mark.django_db
def test_adduser_setting_an_existing_users_password_records_it(make_user: Any) -> None:
    make_user("alice", "reviewer", password="pw-for-tests-only")
    make_user("alice", "reviewer", password=None)  # the same role again, no password
    make_user("alice", "reviewer", password="another-long-password-7")

    assert AuditEvent.objects.filter(action="user.password_changed",
                                     object_id="alice").count() == 1


def test_a_removal_from_the_end_after_an_anchor_broke_is_still_news(chain: Any,
                                                                    tamper: Any) -> None:
    """The broken anchor stays the one vouched for; the end the last check read is checked
    too. Before, the second removal gave the same problems, digest and no alert."""
    from reviewqueue.audit.models import AuditAlert
    from tests.audit.conftest import verify

    chain(6)
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 5")
    assert [p["problem"] for p in verify().problems] == ["truncated"]
    chain(6)
    assert not verify().ok
    alerts = AuditAlert.objects.count()
    assert not verify().ok and AuditAlert.objects.count() == alerts  # nothing new: no alert

    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 8")
    run = verify()

    assert AuditAlert.objects.count() == alerts + 1
    assert "truncated" in [p["problem"] for p in run.problems]
    assert any(p["seq"] == 10 for p in run.problems)


@pytest.mark.django_db
def test_a_failed_sign_in_logs_what_was_typed_only_when_it_names_an_account(
    reviewer: Any, caplog: Any
) -> None:
    client = Client()
    with caplog.at_level("WARNING", logger="reviewqueue.auth"):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong-one"})
        client.post("/accounts/login/", {"username": "Hunter2-my-password", "password": "x"})

    failed = [r for r in caplog.records if r.getMessage() == "sign-in failed"]
    assert [r.username for r in failed] == ["alice", "(no such account)"]
    assert "Hunter2-my-password" not in caplog.text
    assert failed[0].typed_sha256 != failed[1].typed_sha256


HR_PAY = [{"key": "pay_band", "value": 90, "valid_from": "2026-01-01", "span": "p1"}]
HR_RETRIEVED = [{"cite": "d1", "document_id": "hr-pay", "revision": "r1", "span": "p1"}]


@pytest.fixture
def hr_admin(make_user: Any) -> Client:
    client = Client()
    client.force_login(make_user("hilda", "admin", groups=("hr",)))
    return client


@pytest.mark.django_db
def test_a_refused_answer_citing_a_document_the_admin_may_not_read_hides_its_text(
    publish: Any, service_api: Any, admin_client: Client, hr_admin: Client
) -> None:
    publish("hr-pay", principals=["group:hr"], facts=HR_PAY)
    body = answer_body("t-hr", answer=f"{SECRET} [d1].", retrieved=HR_RETRIEVED,
                       claims=[{"key": "pay_band", "value": 90, "cite": "d1", "extra": 1}])
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    payload = QuarantinedPayload.objects.get()

    hidden = unescape(body_shown(admin_client, payload))
    assert SECRET not in hidden and "How long is the free trial?" not in hidden
    assert (f"[{len(SECRET) + 6} characters not shown: it names a document you may not read]"
            in hidden)
    # What the errors are about, and whose it is, stays readable.
    assert '"extra": 1' in hidden and '"document_id": "hr-pay"' in hidden
    assert '"trace_id": "t-hr"' in hidden
    assert SECRET in unescape(body_shown(hr_admin, payload))


@pytest.mark.django_db
def test_a_refused_decision_on_an_answer_the_admin_may_not_read_hides_its_comment(
    publish: Any, submit: Any, token_client: Any, make_user: Any, admin_client: Client,
    hr_admin: Client
) -> None:
    publish("hr-pay", principals=["group:hr"], facts=HR_PAY)
    assert submit("t-hr", retrieved=HR_RETRIEVED,
                  claims=[{"key": "pay_band", "value": 90, "cite": "d1"}]).status_code == 201
    hana = token_client(make_user("hana", "reviewer", groups=("hr",)))
    # Nothing in the body names the document: the address names the answer.
    response = hana.post("/api/v1/answers/t-hr/decisions",
                         {"action": "approve", "verdict": "x", "comment": SECRET},
                         format="json")
    assert response.status_code == 400
    payload = QuarantinedPayload.objects.get()

    hidden = unescape(body_shown(admin_client, payload))
    assert SECRET not in hidden and '"verdict": "x"' in hidden
    assert SECRET in unescape(body_shown(hr_admin, payload))


@pytest.mark.django_db
def test_a_refused_revisions_note_is_hidden_with_its_passages(
    service_api: Any, admin_client: Client
) -> None:
    body = revision_body(principals=["group:hr"])
    body.update(note=SECRET, updated_at="not a date")
    assert service_api.put("/api/v1/documents/hr-pay/revisions/r1", body,
                           format="json").status_code == 400

    hidden = unescape(body_shown(admin_client, QuarantinedPayload.objects.get()))
    assert SECRET not in hidden and "not a date" in hidden
