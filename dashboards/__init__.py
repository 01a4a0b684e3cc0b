"""Dashboards as code (rendered Grafana JSON, provisioning through the Grafana HTTP API).

Reads only the metric-name constants of `stream.metrics`. Built with grafana-foundation-sdk;
`render` writes dashboards/json/<uid>.json, `provision.push` sends them to a Grafana, and
`grafana` holds every Grafana HTTP call. docs/dashboards.md describes the dashboards.
"""
