"""An event inserted with the seq of an existing one, at the boundary of the verification's
keyset chunk, is read by the walk all the same, and the chain does not check out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.audit.hashing import event_hash
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import VERIFY_CHUNK
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


def test_a_forged_event_sharing_the_seq_at_a_chunk_boundary_is_caught(
    bulk: Callable[..., None], tamper: Any
) -> None:
    bulk(VERIFY_CHUNK + 20)
    genuine = AuditEvent.objects.get(seq=VERIFY_CHUNK)
    before_it = AuditEvent.objects.get(seq=VERIFY_CHUNK - 1)
    with tamper() as cursor:
        cursor.execute("SELECT conname FROM pg_constraint WHERE conrelid = "
                       "'audit_auditevent'::regclass AND contype = 'u'")
        (name,) = cursor.fetchone()
        cursor.execute(f'ALTER TABLE audit_auditevent DROP CONSTRAINT "{name}"')
        cursor.execute("CREATE INDEX probe_seq ON audit_auditevent (seq)")
        forged = {"seq": VERIFY_CHUNK, "created_at": genuine.created_at.isoformat(),
                  "actor_type": "user", "actor": "user:mallory", "action": "decision.approved",
                  "object_type": "answer", "object_id": "t-x", "trace_id": "t-x",
                  "document_id": "", "request_id": "", "before": {}, "after": {}}
        cursor.execute(
            """INSERT INTO audit_auditevent (seq, created_at, actor_type, actor, action,
                   object_type, object_id, trace_id, document_id, request_id, before, after,
                   prev_hash, hash)
               VALUES (%s, %s, 'user', 'user:mallory', 'decision.approved', 'answer', 't-x',
                       't-x', '', '', '{}', '{}', %s, %s)""",
            [VERIFY_CHUNK, genuine.created_at, before_it.hash,
             event_hash(forged, before_it.hash)],
        )
    assert AuditEvent.objects.filter(actor="user:mallory").count() == 1  # in the log
    run = verify()
    assert not run.ok, run.detail
    assert run.detail.startswith("Event #5000 is the first bad event: it comes after event "
                                 "#5000 (seq must go up by one): it was inserted or moved.")
    assert "Checked 5021 events" in run.detail
