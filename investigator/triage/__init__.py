"""Scheduled anomaly triage: scan many metrics, investigate what moved, notify once (issue 12)."""
