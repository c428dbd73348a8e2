"""A believable demo knowledge base for a fictional software company, Kestrel Software.

Dates are relative to today so that the expired, current and future-dated facts stay so.
Everything is written through the same services the API uses.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.services import token_issue, user_create_or_update
from reviewqueue.audit.services import SYSTEM, Actor
from reviewqueue.reviews.models import Answer, Decision, OwnerQuestion
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.reviews.services.handoff import (
    review_item_owner_reply,
    review_item_send_to_owner,
)
from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest
from reviewqueue.sources.models import Document
from reviewqueue.sources.services import FactInput, PassageInput, RevisionInput, revision_publish

DEMO_PASSWORD = "demo-pass"

ACCOUNTS = [
    ("alice", Role.REVIEWER, [], "business reviewer"),
    ("hana", Role.REVIEWER, ["hr"], "business reviewer who may read HR documents"),
    ("olivia", Role.OWNER, [], "document owner (pricing, trials, support)"),
    ("oscar", Role.OWNER, ["hr"], "document owner (HR, security, API)"),
    ("ada", Role.ADMIN, [], "admin / auditor"),
    ("rag-service", Role.SERVICE, [], "upstream RAG service (token below)"),
]


@dataclass(frozen=True)
class F:
    key: str
    value: Any
    start: int  # days from today
    end: int | None  # days from today; None = open-ended
    subject: str = ""
    span: str = "p1"
    text: str = ""


@dataclass(frozen=True)
class Doc:
    key: str
    title: str
    owner: str
    revisions: tuple[tuple[str, int, tuple[F, ...]], ...]  # (revision id, updated days ago, facts)
    principals: tuple[str, ...] = ("*",)


def _d(offset: int) -> date:
    return timezone.localdate() + timedelta(days=offset)


OPEN = None
DOCS: tuple[Doc, ...] = (
    Doc(
        "pricing-plans",
        "Plans and pricing",
        "olivia",
        (
            (
                "2026-03",
                260,
                (
                    F(
                        "monthly_price_usd",
                        29,
                        -400,
                        -31,
                        "basic",
                        "p1",
                        "Basic costs $29 per month.",
                    ),
                    F("monthly_price_usd", 79, -400, -31, "pro", "p2", "Pro costs $79 per month."),
                ),
            ),
            (
                "2026-10",
                30,
                (
                    F(
                        "monthly_price_usd",
                        29,
                        -30,
                        OPEN,
                        "basic",
                        "p1",
                        "Basic stays at $29 per month.",
                    ),
                    F(
                        "monthly_price_usd",
                        89,
                        -30,
                        OPEN,
                        "pro",
                        "p2",
                        "Pro costs $89 per month from this release.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "trial-policy",
        "Free trial policy",
        "olivia",
        (
            (
                "v1",
                200,
                (
                    F(
                        "trial_days",
                        14,
                        -365,
                        60,
                        "",
                        "p1",
                        "Every new workspace gets a 14-day free trial.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "trial-promo-autumn",
        "Autumn trial promotion",
        "olivia",
        (
            (
                "v1",
                20,
                (
                    F(
                        "trial_days",
                        30,
                        -20,
                        40,
                        "",
                        "p1",
                        "Until the end of the promotion, new workspaces get a 30-day trial.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "support-hours",
        "Support hours",
        "olivia",
        (
            (
                "2025-12",
                330,
                (
                    F(
                        "support_hours",
                        "09:00-17:00",
                        -500,
                        -60,
                        "",
                        "p1",
                        "Support answers tickets from 09:00 to 17:00 on weekdays.",
                    ),
                ),
            ),
            (
                "2026-09",
                60,
                (
                    F(
                        "support_hours",
                        "08:00-20:00",
                        -59,
                        OPEN,
                        "",
                        "p1",
                        "Support answers tickets from 08:00 to 20:00 on weekdays.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "support-hours-legacy",
        "Support hours (old help centre)",
        "olivia",
        (
            (
                "v3",
                400,
                (F("weekend_support", False, -700, -45, "", "p1", "There is no weekend support."),),
            ),
        ),
    ),
    Doc(
        "refund-policy",
        "Refund policy",
        "olivia",
        (
            (
                "v2",
                90,
                (
                    F(
                        "refund_window_days",
                        30,
                        -300,
                        OPEN,
                        "",
                        "p1",
                        "You can ask for a full refund within 30 days of purchase.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "refund-policy-eu",
        "Refund policy (EU)",
        "olivia",
        (
            (
                "v1",
                95,
                (
                    F(
                        "refund_window_days",
                        14,
                        -300,
                        OPEN,
                        "eu",
                        "p1",
                        "Customers in the EU may withdraw within 14 days.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "sla",
        "Service level agreement",
        "oscar",
        (
            (
                "2026",
                120,
                (
                    F(
                        "uptime_percent",
                        99.9,
                        -330,
                        35,
                        "enterprise",
                        "p1",
                        "Enterprise workspaces get 99.9% monthly uptime.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "status-page",
        "Incident response",
        "oscar",
        (
            (
                "v4",
                15,
                (
                    F(
                        "incident_response_minutes",
                        30,
                        -100,
                        OPEN,
                        "enterprise",
                        "p1",
                        "Enterprise incidents get a first response within 30 minutes.",
                    ),
                    F(
                        "incident_response_minutes",
                        60,
                        -100,
                        OPEN,
                        "pro",
                        "p2",
                        "Pro incidents get a first response within an hour.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "security-whitepaper",
        "Security whitepaper",
        "oscar",
        (
            (
                "2026-h1",
                150,
                (
                    F(
                        "data_retention_days",
                        90,
                        -200,
                        OPEN,
                        "",
                        "p1",
                        "Deleted workspace data is purged after 90 days.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "data-retention-policy",
        "Data retention policy",
        "oscar",
        (
            (
                "v2",
                10,
                (
                    F(
                        "data_retention_days",
                        180,
                        -10,
                        OPEN,
                        "",
                        "p1",
                        "Backups of deleted workspaces are kept for 180 days.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "api-limits",
        "API rate limits",
        "oscar",
        (
            (
                "v5",
                70,
                (
                    F(
                        "rate_limit_rpm",
                        600,
                        -200,
                        OPEN,
                        "",
                        "p1",
                        "The API accepts 600 requests per minute per token.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "api-limits-next",
        "API rate limits (next release)",
        "oscar",
        (
            (
                "v1",
                5,
                (
                    F(
                        "rate_limit_rpm_next",
                        1200,
                        33,
                        OPEN,
                        "",
                        "p1",
                        "From next quarter the API accepts 1200 requests per minute.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "billing-faq",
        "Billing FAQ",
        "olivia",
        (
            (
                "v7",
                40,
                (
                    F(
                        "invoice_day",
                        1,
                        -400,
                        OPEN,
                        "",
                        "p1",
                        "Invoices are issued on the first day of each month.",
                    ),
                    F(
                        "payment_terms_days",
                        30,
                        -400,
                        OPEN,
                        "",
                        "p2",
                        "Invoices are due within 30 days.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "education-discount",
        "Education discount",
        "olivia",
        (
            (
                "v1",
                100,
                (
                    F(
                        "education_discount_percent",
                        50,
                        -300,
                        25,
                        "",
                        "p1",
                        "Schools and universities get 50% off any plan.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "onboarding-guide",
        "Onboarding guide",
        "olivia",
        (
            (
                "v2",
                50,
                (
                    F(
                        "onboarding_sessions",
                        2,
                        -250,
                        OPEN,
                        "",
                        "p1",
                        "Every paid workspace gets two onboarding sessions.",
                    ),
                ),
            ),
        ),
    ),
    Doc(
        "hr-leave-policy",
        "Annual leave policy",
        "oscar",
        (
            (
                "2026",
                180,
                (
                    F(
                        "annual_leave_days",
                        20,
                        -330,
                        32,
                        "",
                        "p1",
                        "Employees receive 20 days of paid annual leave.",
                    ),
                ),
            ),
        ),
        principals=("group:hr",),
    ),
    Doc(
        "hr-parental-leave",
        "Parental leave",
        "oscar",
        (
            (
                "v2",
                60,
                (
                    F(
                        "parental_leave_weeks",
                        16,
                        -200,
                        OPEN,
                        "",
                        "p1",
                        "Parents receive 16 weeks of paid leave.",
                    ),
                ),
            ),
        ),
        principals=("group:hr",),
    ),
    Doc(
        "hr-remote-work",
        "Remote work policy",
        "oscar",
        (
            (
                "2027",
                3,
                (
                    F(
                        "remote_days_per_week",
                        3,
                        33,
                        OPEN,
                        "",
                        "p1",
                        "From next year, employees may work remotely three days a week.",
                    ),
                ),
            ),
        ),
        principals=("group:hr",),
    ),
    Doc(
        "hr-handbook-2025",
        "Employee handbook 2025",
        "oscar",
        (
            (
                "v9",
                340,
                (
                    F(
                        "annual_leave_days",
                        18,
                        -700,
                        OPEN,
                        "",
                        "p4",
                        "Employees receive 18 days of paid annual leave.",
                    ),
                ),
            ),
        ),
        principals=("group:hr",),
    ),
)


def _revision_input(doc: Doc, updated_days_ago: int, facts: tuple[F, ...]) -> RevisionInput:
    updated = datetime.combine(
        _d(-updated_days_ago), time(9, 0), tzinfo=timezone.get_current_timezone()
    )
    passages = {f.span: f.text for f in facts}
    return RevisionInput(
        title=doc.title,
        owner=doc.owner,
        url=f"https://docs.kestrel.example/{doc.key}",
        updated_at=updated,
        allowed_principals=doc.principals,
        passages=tuple(PassageInput(span, text) for span, text in passages.items()),
        facts=tuple(
            FactInput(
                key=f.key,
                value=f.value,
                valid_from=_d(f.start),
                valid_until=_d(f.end) if f.end is not None else None,
                subject=f.subject,
                span=f.span,
            )
            for f in facts
        ),
    )


@dataclass(frozen=True)
class Scenario:
    question: str
    answer: str
    retrieved: tuple[tuple[str, str, str, str], ...]  # cite, document, revision, span
    claims: tuple[dict[str, Any], ...]
    asked_by: tuple[str, ...] = ("user:customer",)


def _scenarios() -> list[Scenario]:
    def one(cite: str, doc: str, rev: str, span: str = "p1") -> tuple[str, str, str, str]:
        return (cite, doc, rev, span)

    return [
        Scenario(
            "What does the Pro plan cost?",
            "Pro costs $89 per month [d1].",
            (one("d1", "pricing-plans", "2026-10", "p2"),),
            ({"subject": "pro", "key": "monthly_price_usd", "value": 89, "cite": "d1"},),
        ),
        Scenario(
            "What does the Pro plan cost?",
            "Pro costs $79 per month [d1].",
            (one("d1", "pricing-plans", "2026-03", "p2"),),
            ({"subject": "pro", "key": "monthly_price_usd", "value": 79, "cite": "d1"},),
        ),
        Scenario(
            "How long is the free trial?",
            "New workspaces get a 14-day trial [d1].",
            (one("d1", "trial-policy", "v1"), one("d2", "trial-promo-autumn", "v1")),
            ({"key": "trial_days", "value": 14, "cite": "d1"},),
        ),
        Scenario(
            "How long is the free trial?",
            "The trial lasts 30 days [d2].",
            (one("d2", "trial-promo-autumn", "v1"),),
            ({"key": "trial_days", "value": 30, "cite": "d2"},),
        ),
        Scenario(
            "When can I reach support?",
            "Support is open 08:00-20:00 on weekdays [s1].",
            (one("s1", "support-hours", "2026-09"),),
            ({"key": "support_hours", "value": "08:00-20:00", "cite": "s1"},),
        ),
        Scenario(
            "When can I reach support?",
            "Support is open 09:00-17:00 on weekdays [s1].",
            (one("s1", "support-hours", "2025-12"),),
            ({"key": "support_hours", "value": "09:00-17:00", "cite": "s1"},),
        ),
        Scenario(
            "Is there weekend support?",
            "There is no weekend support [s2].",
            (one("s2", "support-hours-legacy", "v3"),),
            ({"key": "weekend_support", "value": False, "cite": "s2"},),
        ),
        Scenario(
            "How long do I have to ask for a refund?",
            "You can ask for a refund within 30 days [r1].",
            (one("r1", "refund-policy", "v2"), one("r2", "refund-policy-eu", "v1")),
            ({"key": "refund_window_days", "value": 30, "cite": "r1"},),
        ),
        Scenario(
            "How long do I have to ask for a refund?",
            "You can ask for a refund within 60 days [r1].",
            (one("r1", "refund-policy", "v2"),),
            ({"key": "refund_window_days", "value": 60, "cite": "r1"},),
        ),
        Scenario(
            "How long is deleted data kept?",
            "Deleted data is purged after 90 days [w1].",
            (one("w1", "security-whitepaper", "2026-h1"), one("w2", "data-retention-policy", "v2")),
            ({"key": "data_retention_days", "value": 90, "cite": "w1"},),
        ),
        Scenario(
            "What is the API rate limit?",
            "The API accepts 600 requests a minute [a1].",
            (one("a1", "api-limits", "v5"),),
            ({"key": "rate_limit_rpm", "value": 600, "cite": "a1"},),
        ),
        Scenario(
            "What is the API rate limit?",
            "The API accepts 1200 requests a minute [a2].",
            (one("a2", "api-limits-next", "v1"),),
            ({"key": "rate_limit_rpm_next", "value": 1200, "cite": "a2"},),
        ),
        Scenario(
            "What uptime does Enterprise get?",
            "Enterprise gets 99.9% uptime [u1].",
            (one("u1", "sla", "2026"),),
            ({"subject": "enterprise", "key": "uptime_percent", "value": 99.9, "cite": "u1"},),
        ),
        Scenario(
            "When are invoices issued?",
            "Invoices go out on the 1st [b1] and are due within 30 days [b1].",
            (one("b1", "billing-faq", "v7"),),
            (
                {"key": "invoice_day", "value": 1, "cite": "b1"},
                {"key": "payment_terms_days", "value": 30, "cite": "b1"},
            ),
        ),
        Scenario(
            "Is there an education discount?",
            "Schools get 50% off [e1].",
            (one("e1", "education-discount", "v1"),),
            ({"key": "education_discount_percent", "value": 50, "cite": "e1"},),
        ),
        Scenario(
            "How many onboarding sessions are included?",
            "Paid workspaces get three onboarding sessions [o1].",
            (one("o1", "onboarding-guide", "v2"),),
            ({"key": "onboarding_sessions", "value": 3, "cite": "o1"},),
        ),
        Scenario(
            "How fast are incidents answered?",
            "Enterprise incidents get a response within 30 minutes [i1].",
            (one("i1", "status-page", "v4"),),
            (
                {
                    "subject": "enterprise",
                    "key": "incident_response_minutes",
                    "value": 30,
                    "cite": "i1",
                },
            ),
        ),
        Scenario(
            "How fast are incidents answered?",
            "Pro incidents are answered within 30 minutes [i9].",
            (one("i1", "status-page", "v4", "p2"),),
            ({"subject": "pro", "key": "incident_response_minutes", "value": 30, "cite": "i9"},),
        ),
        Scenario(
            "How many days of annual leave do we get?",
            "Employees get 20 days of paid leave [h1].",
            (one("h1", "hr-leave-policy", "2026"), one("h2", "hr-handbook-2025", "v9", "p4")),
            ({"key": "annual_leave_days", "value": 20, "cite": "h1"},),
            asked_by=("group:hr", "user:employee"),
        ),
        Scenario(
            "How many days of annual leave do we get?",
            "Employees get 20 days of paid leave [h1].",
            (one("h1", "hr-leave-policy", "2026"),),
            ({"key": "annual_leave_days", "value": 20, "cite": "h1"},),
            asked_by=("user:contractor",),
        ),
        Scenario(
            "How long is parental leave?",
            "Parents get 16 weeks of paid leave [h3].",
            (one("h3", "hr-parental-leave", "v2"),),
            ({"key": "parental_leave_weeks", "value": 16, "cite": "h3"},),
            asked_by=("group:hr",),
        ),
        Scenario(
            "Can I work remotely?",
            "You may work remotely three days a week [h4].",
            (one("h4", "hr-remote-work", "2027"),),
            ({"key": "remote_days_per_week", "value": 3, "cite": "h4"},),
            asked_by=("group:hr",),
        ),
        Scenario(
            "What changed in the pricing?",
            "Pricing changed for several plans in the latest "
            "release, and the team expects further adjustments next year as new features "
            "arrive, so customers should check the pricing page and their invoices "
            "regularly for the amounts that apply to them.",
            (one("d1", "pricing-plans", "2026-10"),),
            ({"subject": "basic", "key": "monthly_price_usd", "value": 29, "cite": "d1"},),
        ),
        Scenario(
            "Do you offer a discount for non-profits?",
            "Non-profits get a discount on request.",
            (),
            ({"key": "nonprofit_discount", "value": True, "cite": "n1"},),
        ),
        Scenario(
            "What is included in the Pro plan?",
            "Pro includes everything in Basic and more [d1].",
            (one("d1", "pricing-plans", "2026-10", "p2"),),
            (),
        ),
        Scenario(
            "Which regions do you host in?",
            "We host in three regions [g1].",
            (one("g1", "hosting-regions", "v1"),),
            ({"key": "region_count", "value": 3, "cite": "g1"},),
        ),
    ]


def load(stdout: Any, answers: int = 300, seed: int = 7) -> dict[str, str]:
    """Create accounts, documents and answers. Returns {username: note or token}."""
    rng = random.Random(seed)
    printed: dict[str, str] = {}
    for username, role, groups, note in ACCOUNTS:
        user_create_or_update(
            username=username,
            role=role,
            groups=groups,
            password=DEMO_PASSWORD,
            actor=SYSTEM,
            email=f"{username}@kestrel.example",
        )
        printed[username] = note

    if not Document.objects.filter(key=DOCS[0].key).exists():
        for doc in DOCS:
            for revision, updated_days_ago, facts in doc.revisions:
                revision_publish(
                    document_key=doc.key,
                    revision=revision,
                    data=_revision_input(doc, updated_days_ago, facts),
                    actor=SYSTEM,
                )
        stdout.write(f"published {len(DOCS)} documents")

    scenarios = _scenarios()
    existing = Answer.objects.filter(trace_id__startswith="demo-").count()
    for n in range(existing, answers):
        s = scenarios[n % len(scenarios)] if n < len(scenarios) else rng.choice(scenarios)
        answer_ingest(
            data=AnswerInput(
                trace_id=f"demo-{n:04d}",
                question=s.question,
                answer=s.answer,
                asked_by=s.asked_by,
                index_release=rng.choice(["2026.10", "2026.11"]),
                retrieved=tuple(RetrievedInput(*r) for r in s.retrieved),
                claims=s.claims,
            ),
            actor=SYSTEM,
        )
    # The queue's times are the real ones: backdating them would contradict the verdicts'
    # and the audit log's, which nothing may rewrite.
    _first_decisions(stdout)
    rag = get_user_model().objects.get(username="rag-service")
    printed["rag-service"] = (
        f"{printed['rag-service']}: {token_issue(user=rag, actor=SYSTEM, name='demo')}"
    )
    return printed


# What the reviewers did first, so that the insight figures, the audit log's decisions and the
# owner inbox have something to show: (reviewer, the answer's text, how many, what they did,
# the reject reason, the comment or the note to the owner).
FIRST_DECISIONS = [
    ("alice", "Pro costs $79 per month [d1].", 2, "reject", "outdated",
     "It quotes the March price list, which a later one replaced."),
    ("alice", "There is no weekend support [s2].", 2, "reject", "outdated",
     "The old help-centre page stopped being valid in October."),
    ("alice", "You can ask for a refund within 30 days [r1].", 2, "approve", "",
     "30 days is right here; the EU policy applies to EU customers only."),
    ("hana", "Employees get 20 days of paid leave [h1].", 1, "approve", "",
     "The 2026 leave policy replaces the 2025 handbook."),
    ("alice", "New workspaces get a 14-day trial [d1].", 1, "send", "",
     "The autumn promotion says 30 days: which trial do new workspaces get now?"),
    ("alice", "Deleted data is purged after 90 days [w1].", 1, "send", "",
     "The whitepaper says 90 days, the retention policy 180: which do customers get?"),
    ("oscar", "Deleted data is purged after 90 days [w1].", 1, "reply", "",
     "Both are right: workspace data goes after 90 days, backups after 180. The answer "
     "should say it means the workspace data."),
]


def _first_decisions(stdout: Any) -> None:
    """Decide a few held answers through the reviewers' own services, once."""
    if Decision.objects.exists() or OwnerQuestion.objects.exists():
        return
    users = get_user_model().objects.in_bulk(["alice", "hana", "oscar"], field_name="username")
    decided = 0
    for username, text, count, action, reason, comment in FIRST_DECISIONS:
        user = users[username]
        held = (Answer.objects.filter(status=Answer.Status.HELD, current_version__text=text,
                                      trace_id__startswith="demo-")
                .order_by("trace_id")[:count])
        for answer in held:
            if action == "send":
                review_item_send_to_owner(trace_id=answer.trace_id, user=user, note=comment,
                                          actor=Actor.of_user(user))
                continue
            if action == "reply":
                review_item_owner_reply(trace_id=answer.trace_id, user=user, reply=comment,
                                        actor=Actor.of_user(user))
                continue
            assert answer.current_verdict_id is not None
            answer_decide(trace_id=answer.trace_id, user=user, actor=Actor.of_user(user),
                          data=DecisionInput(action=action, verdict_id=answer.current_verdict_id,
                                             comment=comment, reject_reason=reason))
            decided += 1
    stdout.write(f"decided {decided} answers as alice and hana, and sent two to their owners "
                 "(oscar replied to one)")

