"""Label values and variable filters the dashboards share (label values, never metric names).

The values mirror the closed label sets documented in docs/metrics.md; they are spelled here
rather than imported because `dashboards` reads nothing from the service but metric names.
"""

from __future__ import annotations

from dashboards.promql import matches

UX_JUDGE = "ux_judge"
GRM = "grm"
BAD = "bad"
GOOD = "good"
TASK1 = "task1"

#: Reactions that do not count as dissatisfaction (every other reaction does).
CONTENT_REACTIONS = "satisfied|no_follow_up"
#: Explicit feedback kinds that count as dissatisfaction.
DISSATISFIED_FEEDBACK = "thumbs_down|regenerate"

#: The scrape-job template variable's matcher: every dashboard filters by job, so one
#: Prometheus can hold several uxmon deployments (staging and production) apart.
JOB = matches("job", "$job")
#: Matchers for the job, scenario and assistant template variables (metrics with scenario
#: and assistant labels).
TRAFFIC = (JOB, matches("scenario", "$scenario"), matches("assistant", "$assistant"))
