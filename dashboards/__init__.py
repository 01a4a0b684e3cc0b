"""Dashboards as code (rendered Grafana JSON, provisioning through the Grafana HTTP API).

Reads only the metric-name constants of `stream.metrics`. The dashboards themselves are the
subject of the dashboards/alerting work and are not built yet.
"""
