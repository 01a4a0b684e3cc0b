"""Calibrated decision thresholds shipped with the scorers (JSON files, loaded by path)."""
