"""Keeps the scorers honest: UXBench-format data, task metrics, synthetic data.

Imports `scorer` (types only), never `stream` (DESIGN.md, dependency rule).
"""
