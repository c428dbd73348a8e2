"""Writes for answers, verdicts, review items and decisions.

- `ingest`: accept an answer from upstream and gate it at once.
- `evaluation`: gate one answer version on the current revisions and store the verdict.
- `transitions`: the one place an answer's status and queue entry change.
"""
