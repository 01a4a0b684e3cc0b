"""UX overview: how dissatisfied users are (raw and corrected), by scenario and assistant; what
they do next; what they say explicitly; how the scorers' scores are spread.

Queries use the worker's own metrics, so the dashboard works on any Prometheus that scrapes
it. One exception: the corrected rate takes the scorer's accuracy from the recording rules
where they are loaded, so that it is the rate the alerts read (`correction: live` included),
and from the benchmark gauge where they are not.
"""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from dashboards.panels import (
    COUNT,
    PER_MINUTE,
    QUARTER,
    RATIO,
    Board,
    Query,
    datasource_variable,
    graph,
    histogram_heatmap,
    label_variable,
    single_value,
)
from dashboards.promql import (
    RANGE_WINDOW,
    RATE_WINDOW,
    bucket,
    eq,
    histogram_count,
    increase,
    matches,
    not_matches,
    per_minute,
    quantile,
    rate,
    ratio,
    select,
    total,
)
from dashboards.recorded import CORRECTION_SENSITIVITY, CORRECTION_SPECIFICITY
from dashboards.vocabulary import (
    BAD,
    CONTENT_REACTIONS,
    DISSATISFIED_FEEDBACK,
    GOOD,
    JOB,
    TASK1,
    TRAFFIC,
    UX_JUDGE,
)
from stream.metrics import (
    BENCHMARK_METRIC,
    FEEDBACK,
    JUDGE_REACTION_PAIRS,
    LABELS,
    REACTIONS,
    SCORE,
    TURN_VERDICTS,
    TURNS_SCORED,
)

UID = "uxmon-ux-overview"

# The scorer the dissatisfaction rate reads: the dashboard's $scorer (default: the UX-Judge).
SCORER = eq("scorer", "$scorer")
_JUDGE = (SCORER, *TRAFFIC)


def raw_dissatisfaction(*by: str, window: str = RATE_WINDOW) -> str:
    """Share of the chosen scorer's verdicts that are bad, per `by` labels."""
    bad = total(rate(TURNS_SCORED, *_JUDGE, eq("verdict", BAD), window=window), *by)
    scored = total(rate(TURNS_SCORED, *_JUDGE, window=window), *by)
    return ratio(bad, scored)


def benchmark_accuracy(metric: str) -> str:
    """The chosen scorer's last Task-1 validation figure (`bad_acc`, `good_acc`)."""
    # avg: during a rolling deploy two workers may report different scorer versions.
    chosen = (SCORER, JOB, eq("task", TASK1), eq("metric", metric))
    return total(select(BENCHMARK_METRIC, *chosen), how="avg")


def correction_accuracy(recorded: str, metric: str) -> str:
    """The accuracy the alerts' correction uses (a recorded series), else the benchmark's."""
    return f"({total(select(recorded, SCORER), how='avg')} or {benchmark_accuracy(metric)})"


def corrected_dissatisfaction(*by: str, window: str = RATE_WINDOW) -> str:
    """Rogan–Gladen: (raw + spec − 1) / (sens + spec − 1), clamped to [0, 1], with the
    sensitivity and specificity the alerts' correction uses (the last Task-1 validation's
    Bad-Acc and Good-Acc, or the live figures with `correction: live`). Empty (no data) while
    no validation has run or when sens + spec − 1 ≤ 0 (the scorer is no better than chance,
    so the observed rate says nothing)."""
    sensitivity = correction_accuracy(CORRECTION_SENSITIVITY, "bad_acc")
    specificity = correction_accuracy(CORRECTION_SPECIFICITY, "good_acc")
    join = " on() group_left() " if by else " "
    youden = f"({sensitivity} + {specificity} - 1 > 0)"
    corrected = (
        f"({raw_dissatisfaction(*by, window=window)} +{join}{specificity} - 1) /{join}{youden}"
    )
    return f"clamp({corrected}, 0, 1)"


def _verdict_of_record_share(matcher: str) -> str:
    """Share of assistant turns whose verdict of record matches `matcher`."""
    return ratio(
        total(rate(TURN_VERDICTS, matcher, *TRAFFIC)),
        total(rate(TURN_VERDICTS, *TRAFFIC)),
    )


def _reaction_dissatisfaction(window: str = RATE_WINDOW) -> str:
    unhappy = rate(REACTIONS, not_matches("reaction", CONTENT_REACTIONS), *TRAFFIC, window=window)
    return ratio(total(unhappy), total(rate(REACTIONS, *TRAFFIC, window=window)))


def _judge_reaction_agreement() -> str:
    agree = (
        f"{rate(JUDGE_REACTION_PAIRS, JOB, eq('verdict', BAD), eq('dissatisfied', 'true'))}"
        f" or {rate(JUDGE_REACTION_PAIRS, JOB, eq('verdict', GOOD), eq('dissatisfied', 'false'))}"
    )
    return ratio(total(agree, "scorer"), total(rate(JUDGE_REACTION_PAIRS, JOB), "scorer"))


def build() -> Dashboard:
    board = Board(
        UID,
        "uxmon / UX overview",
        "How dissatisfied users are and how they show it. The dissatisfaction rates read the "
        "scorer chosen above (the UX-Judge unless you run your own); job, scenario and "
        "assistant filters apply to every panel whose metric carries those labels.",
    ).variables(
        datasource_variable(),
        label_variable("job", "Scrape job", TURNS_SCORED),
        label_variable("scenario", "Scenario", TURNS_SCORED),
        label_variable("assistant", "Assistant", TURNS_SCORED),
        label_variable(
            "scorer",
            "Scorer (rates, heatmap)",
            histogram_count(SCORE),
            include_all=False,
            default=UX_JUDGE,
        ),
    )

    board.row("Dissatisfaction").add(
        single_value(
            "Dissatisfied (raw, whole range)",
            "Share of assistant turns the chosen scorer rated bad over the selected time range.",
            Query(raw_dissatisfaction(window=RANGE_WINDOW), instant=True),
            unit=RATIO,
            width=QUARTER,
        ),
        single_value(
            "Dissatisfied (corrected, whole range)",
            "The raw share corrected for the chosen scorer's known errors (Rogan–Gladen "
            "with the sensitivity and specificity the alerts use: Bad-Acc and Good-Acc from "
            "its last Task-1 validation run, or the live figures against thumbs where the "
            "rules are rendered with correction: live; the Benchmark dashboard shows both). "
            "Empty until a validation has run, or when sensitivity + specificity - 1 <= 0 "
            "(the judge is no better than chance).",
            Query(corrected_dissatisfaction(window=RANGE_WINDOW), instant=True),
            unit=RATIO,
            width=QUARTER,
        ),
        single_value(
            "Dissatisfied by reaction (whole range)",
            "Share of users' reactions that show dissatisfaction (complaint, skip-read, "
            "dismiss, repeat, rephrase, abandon) among all reactions, no-follow-up included.",
            Query(_reaction_dissatisfaction(RANGE_WINDOW), instant=True),
            unit=RATIO,
            width=QUARTER,
        ),
        single_value(
            "Explicit dissatisfaction (whole range)",
            "thumbs_down + regenerate events over the selected range. Not filtered.",
            Query(
                total(
                    increase(
                        FEEDBACK, JOB, matches("kind", DISSATISFIED_FEEDBACK), window=RANGE_WINDOW
                    )
                ),
                instant=True,
            ),
            unit=COUNT,
            width=QUARTER,
        ),
        graph(
            "Dissatisfaction rate: raw vs corrected",
            "Raw: share of the chosen scorer's verdicts that are bad. Corrected: Rogan–Gladen "
            "estimate of the true share (see the stat above).",
            [
                Query(raw_dissatisfaction(), "raw", exemplars=True),
                Query(corrected_dissatisfaction(), "corrected", exemplars=True),
            ],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Verdict of record",
            "Each assistant turn once, by the verdict recovery episodes go by: the GRM's "
            "where it scored the turn (the judge's uncertain turns, every recovery attempt, "
            "a sample), else the UX-Judge's. 'bad': the share of bad verdicts of record; "
            "'decided by the GRM': the share the GRM decided. The corrected rate uses the "
            "UX-Judge alone: only its errors over all turns are measured by validation.",
            [
                Query(_verdict_of_record_share(eq("verdict", BAD)), "bad", exemplars=True),
                # every verdict of record not the judge's, whatever the GRM is called
                Query(
                    _verdict_of_record_share(not_matches("decided_by", "$scorer")),
                    "decided by the GRM",
                    exemplars=True,
                ),
            ],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Corrected dissatisfaction by scenario",
            "Rogan–Gladen estimate per scenario, using the judge's overall Bad-Acc/Good-Acc "
            "(validation is not per scenario, so treat small scenarios with care).",
            [Query(corrected_dissatisfaction("scenario"), "{{scenario}}", exemplars=True)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Raw dissatisfaction by scenario",
            "Share of the chosen scorer's verdicts that are bad, per scenario.",
            [Query(raw_dissatisfaction("scenario"), "{{scenario}}", exemplars=True)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Raw dissatisfaction by assistant",
            "Share of the chosen scorer's verdicts that are bad, per assistant (the first "
            "UXMON_LABEL_VALUES_MAX assistant ids; the rest are 'other'). The assistant's "
            "model version is not a label today, so a model rollout shows only as a change "
            "over time here.",
            [Query(raw_dissatisfaction("assistant"), "{{assistant}}", exemplars=True)],
            unit=RATIO,
            max_value=1,
        ),
    )

    board.row("What users do next").add(
        graph(
            "Reactions by kind",
            "The user's reaction to an assistant turn: the next message classified "
            "(complaint, skip_read, dismiss, repeat, rephrase, abandon, satisfied) or "
            "no_follow_up. Per minute, stacked.",
            [
                Query(
                    per_minute(total(rate(REACTIONS, *TRAFFIC), "reaction")),
                    "{{reaction}}",
                    exemplars=True,
                )
            ],
            unit=PER_MINUTE,
            stacked=True,
        ),
        graph(
            "Dissatisfied by reaction vs by judge",
            "Two views of the same thing: the share of reactions that show dissatisfaction, "
            "and the share of turns the chosen scorer rated bad.",
            [
                Query(_reaction_dissatisfaction(), "reactions", exemplars=True),
                Query(raw_dissatisfaction(), "$scorer", exemplars=True),
            ],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Explicit feedback by kind",
            "Feedback events (thumbs_up, thumbs_down, regenerate, copy, share, stop) per "
            "minute. Not labelled by scenario or assistant, so the filters do not apply.",
            [Query(per_minute(total(rate(FEEDBACK, JOB), "kind")), "{{kind}}")],
            unit=PER_MINUTE,
            stacked=True,
        ),
        graph(
            "Labelled turns by source",
            "Turns published to the labels topic (UXMON_LABELS_TOPIC, docs/labels.md) per "
            "minute: explicit (a thumb, regenerate, copy, share) or implicit (a complaint, a "
            "satisfied follow-up). Empty while the labels topic is off. Not filtered.",
            [
                Query(
                    per_minute(total(rate(LABELS, JOB), "source", "kind")),
                    "{{source}} {{kind}}",
                )
            ],
            unit=PER_MINUTE,
            stacked=True,
        ),
        graph(
            "Judge–reaction agreement",
            "Share of turns where a scorer's verdict agrees with the user's reaction "
            "(bad with a dissatisfied reaction, good with a content one). A drift proxy: a "
            "falling line means the judge and the users disagree more. Not filtered.",
            [Query(_judge_reaction_agreement(), "{{scorer}}")],
            unit=RATIO,
            max_value=1,
        ),
    )

    board.row("Scores").add(
        graph(
            "Score quantiles by scorer",
            "Median and 10th/90th percentiles of P(user satisfied) per scorer. GRM scores "
            "cluster near 0.5 (weakly confident), so its spread is narrow by nature.",
            [
                Query(
                    quantile(q, SCORE, "scorer", matchers=(JOB,)),
                    f"{{{{scorer}}}} p{round(q * 100)}",
                    exemplars=True,
                )
                for q in (0.1, 0.5, 0.9)
            ],
            unit=RATIO,
            max_value=1,
        ),
        histogram_heatmap(
            "Score distribution ($scorer)",
            "How many turns fell in each score bucket over time, for the scorer chosen above.",
            Query(
                total(rate(bucket(SCORE), SCORER, JOB), "le"),
                "{{le}}",
                as_heatmap=True,
                exemplars=True,
            ),
            unit=RATIO,
        ),
    )
    return board.build()
