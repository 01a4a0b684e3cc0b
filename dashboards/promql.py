"""PromQL text built from metric-name constants: matchers, rates, ratios and quantiles.

Every function returns a string; nothing here knows a metric name. Windows default to
Grafana's `$__rate_interval` (at least four scrape intervals, so a rate always has two
samples) and `$__range` (the dashboard's whole time range) for totals.
"""

from __future__ import annotations

RATE_WINDOW = "$__rate_interval"
RANGE_WINDOW = "$__range"


def eq(label: str, value: str) -> str:
    return f'{label}="{value}"'


def matches(label: str, pattern: str) -> str:
    return f'{label}=~"{pattern}"'


def not_matches(label: str, pattern: str) -> str:
    return f'{label}!~"{pattern}"'


def select(metric: str, *matchers: str) -> str:
    """`metric{m1, m2}` (just `metric` without matchers)."""
    return f"{metric}{{{', '.join(matchers)}}}" if matchers else metric


def rate(metric: str, *matchers: str, window: str = RATE_WINDOW) -> str:
    return f"rate({select(metric, *matchers)}[{window}])"


def increase(metric: str, *matchers: str, window: str = RATE_WINDOW) -> str:
    return f"increase({select(metric, *matchers)}[{window}])"


def total(expr: str, *by: str, how: str = "sum") -> str:
    """`sum by (labels) (expr)`; `sum(expr)` without labels (one series, no labels)."""
    return f"{how} by ({', '.join(by)}) ({expr})" if by else f"{how}({expr})"


def bucket(histogram: str) -> str:
    return f"{histogram}_bucket"


def histogram_sum(histogram: str) -> str:
    return f"{histogram}_sum"


def histogram_count(histogram: str) -> str:
    return f"{histogram}_count"


def quantile(q: float, histogram: str, *by: str, matchers: tuple[str, ...] = ()) -> str:
    """The q-quantile of a histogram over the rate window, per `by` labels."""
    rates = rate(bucket(histogram), *matchers)
    return f"histogram_quantile({q}, {total(rates, 'le', *by)})"


def mean(histogram: str, *by: str, matchers: tuple[str, ...] = ()) -> str:
    """Mean observation over the rate window (sum of observations / their count)."""
    return (
        f"{total(rate(histogram_sum(histogram), *matchers), *by)}"
        f" / {total(rate(histogram_count(histogram), *matchers), *by)}"
    )


def ratio(numerator: str, denominator: str) -> str:
    """Share of `denominator` in `numerator`; parenthesised so it composes."""
    return f"({numerator}) / ({denominator})"


def per_minute(expr: str) -> str:
    """A per-second rate scaled to per minute (uxmon's events are too rare for per second)."""
    return f"60 * {expr}"
