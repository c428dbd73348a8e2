"""Reads for answers, verdicts, the queue and decisions."""
