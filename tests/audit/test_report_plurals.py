"""What verify_audit and verify_sources print of their checks reads in the singular for one
(the demo's log has one API token: it printed "1 API tokens match")."""

from __future__ import annotations

from reviewqueue.reviews.integrity import records_report
from reviewqueue.sources.integrity import sources_report


def test_one_of_each_record_reads_in_the_singular() -> None:
    assert records_report(1, 1, 1, 0, [], 1) == (
        "Records OK: 1 answer stands where its last audit event left it; 1 verdict and 1 "
        "decision match the audit events that recorded them; 1 API token matches the audit "
        "events that issued and revoked it.")
    assert records_report(1, 1, 0, 1, ["Verdict #3: changed"], 1) == (
        "Records CHANGED: 1 problem in 1 answer, 1 verdict, 0 decisions and 1 API token:\n"
        "  Verdict #3: changed")


def test_many_records_still_read_in_the_plural() -> None:
    assert records_report(302, 302, 7, 0, [], 2) == (
        "Records OK: 302 answers stand where their last audit events left them; 302 verdicts "
        "and 7 decisions match the audit events that recorded them; 2 API tokens match the "
        "audit events that issued and revoked them.")


def test_one_revision_and_one_document_read_in_the_singular() -> None:
    assert sources_report(1, 1, 0, []) == (
        "Sources OK: 1 revision matches the audit event that published it; 1 document has the "
        "readers its current revision gives.")
    assert sources_report(2, 1, 1, ["x: changed"]) == (
        "Sources CHANGED: 1 problem in 2 revisions and 1 document:\n  x: changed")
    assert sources_report(23, 21, 0, []) == (
        "Sources OK: 23 revisions match the audit events that published them; 21 documents "
        "have the readers their current revision gives.")
