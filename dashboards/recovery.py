"""Recovery: after a dissatisfied turn, does the assistant win the user back, how fast, and
how often does the user give up."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from dashboards.panels import (
    COUNT,
    FULL,
    PER_MINUTE,
    RATIO,
    SECONDS,
    THIRD,
    Board,
    Query,
    datasource_variable,
    graph,
    label_variable,
    single_value,
)
from dashboards.promql import (
    RANGE_WINDOW,
    RATE_WINDOW,
    eq,
    increase,
    mean,
    per_minute,
    quantile,
    rate,
    ratio,
    select,
    total,
)
from dashboards.vocabulary import JOB, TRAFFIC
from stream.metrics import (
    EPISODES_CLOSED,
    EPISODES_OPEN,
    EPISODES_OPENED,
    RECOVERY_SECONDS,
    RECOVERY_TURNS,
)

UID = "uxmon-recovery"

_QUANTILES = (0.5, 0.9, 0.99)


def recovery_rate(*by: str, window: str = RATE_WINDOW) -> str:
    """Recovered episodes / all closed episodes (recovered, failed, gave_up)."""
    recovered = rate(EPISODES_CLOSED, eq("outcome", "recovered"), *TRAFFIC, window=window)
    closed = rate(EPISODES_CLOSED, *TRAFFIC, window=window)
    return ratio(total(recovered, *by), total(closed, *by))


def _unlabelled(what: str) -> str:
    return f"{what} Recovered episodes only; not labelled by scenario or assistant."


def build() -> Dashboard:
    board = Board(
        UID,
        "uxmon / Recovery",
        "Recovery episodes: one opens on a dissatisfied turn (reaction, explicit feedback or "
        "a bad verdict) and closes within a few turns as recovered, failed or gave_up.",
    ).variables(
        datasource_variable(),
        label_variable("job", "Scrape job", EPISODES_OPENED),
        label_variable("scenario", "Scenario", EPISODES_OPENED),
        label_variable("assistant", "Assistant", EPISODES_OPENED),
    )

    board.row("Outcomes").add(
        single_value(
            "Recovery rate (whole range)",
            "Recovered / all closed episodes over the selected time range.",
            Query(recovery_rate(window=RANGE_WINDOW), instant=True),
            unit=RATIO,
            width=THIRD,
        ),
        single_value(
            "Open episodes",
            "Episodes open now, summed over workers.",
            Query(total(select(EPISODES_OPEN, JOB))),
            unit=COUNT,
            width=THIRD,
        ),
        single_value(
            "Episodes closed (whole range)",
            "Episodes closed over the selected time range, any outcome.",
            Query(
                total(increase(EPISODES_CLOSED, *TRAFFIC, window=RANGE_WINDOW)),
                instant=True,
            ),
            unit=COUNT,
            width=THIRD,
        ),
        graph(
            "Recovery rate by scenario",
            "Recovered / all closed episodes, per scenario.",
            [Query(recovery_rate("scenario"), "{{scenario}}", exemplars=True)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Recovery rate by assistant",
            "Recovered / all closed episodes, per assistant.",
            [Query(recovery_rate("assistant"), "{{assistant}}", exemplars=True)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Outcomes over time",
            "Episodes closed per minute by outcome (recovered, failed, gave_up), stacked.",
            [
                Query(
                    per_minute(total(rate(EPISODES_CLOSED, *TRAFFIC), "outcome")),
                    "{{outcome}}",
                    exemplars=True,
                )
            ],
            unit=PER_MINUTE,
            stacked=True,
            bars=True,
        ),
        graph(
            "Episodes opened by trigger",
            "Episodes opened per minute by what opened them: a dissatisfied reaction, "
            "explicit feedback, or a bad verdict.",
            [
                Query(
                    per_minute(total(rate(EPISODES_OPENED, *TRAFFIC), "trigger")),
                    "{{trigger}}",
                )
            ],
            unit=PER_MINUTE,
            stacked=True,
        ),
    )

    board.row("Time and turns to recover").add(
        graph(
            "Time to recover",
            _unlabelled("From the episode opening to the reply that recovered it (event time)."),
            [
                *(
                    Query(quantile(q, RECOVERY_SECONDS, matchers=(JOB,)), f"p{round(q * 100)}")
                    for q in _QUANTILES
                ),
                Query(mean(RECOVERY_SECONDS, matchers=(JOB,)), "mean"),
            ],
            unit=SECONDS,
        ),
        graph(
            "Turns to recover",
            _unlabelled("Assistant turns from the episode opening to the reply that recovered it."),
            [
                *(
                    Query(quantile(q, RECOVERY_TURNS, matchers=(JOB,)), f"p{round(q * 100)}")
                    for q in _QUANTILES
                ),
                Query(mean(RECOVERY_TURNS, matchers=(JOB,)), "mean"),
            ],
            unit=COUNT,
        ),
        graph(
            "Open episodes by worker",
            "Episodes held open in each worker's state.",
            [Query(total(select(EPISODES_OPEN, JOB), "instance"), "{{instance}}")],
            unit=COUNT,
            width=FULL,
        ),
    )
    return board.build()
