"""Every dashboard reads the job (and, where it reads one scorer's verdicts, the scorer) the
user picked: nothing names a job or a scorer literally, so a team with another job name or
its own judge sees its own data."""

from __future__ import annotations

import re

import pytest

from dashboards import ux_overview
from dashboards.coverage import panel_queries
from dashboards.render import as_dicts

DASHBOARDS = as_dicts()
SELECTOR = re.compile(r"\b(uxmon_\w+|up)\b(\{[^}]*\})?")


@pytest.mark.parametrize("uid", sorted(DASHBOARDS))
def test_every_series_is_filtered_by_the_chosen_job(uid: str) -> None:
    for expr in panel_queries(DASHBOARDS[uid]):
        for name, matchers in SELECTOR.findall(expr):
            assert 'job=~"$job"' in matchers, f"{uid}: {name} without the job filter in {expr}"
    names = [v["name"] for v in DASHBOARDS[uid]["templating"]["list"]]
    assert "job" in names


@pytest.mark.parametrize("uid", sorted(DASHBOARDS))
def test_no_query_names_a_scorer_or_a_job(uid: str) -> None:
    for expr in panel_queries(DASHBOARDS[uid]):
        assert not re.search(r'(scorer|decided_by|job)=~?"(ux_judge|grm|uxmon)"', expr), expr


def test_the_overviews_rates_read_the_chosen_scorer_the_judge_by_default() -> None:
    board = DASHBOARDS[ux_overview.UID]
    (scorer,) = [v for v in board["templating"]["list"] if v["name"] == "scorer"]
    assert scorer["current"]["value"] == "ux_judge" and not scorer.get("multi")
    assert 'scorer="$scorer"' in ux_overview.raw_dissatisfaction()
    assert ux_overview.corrected_dissatisfaction().count('scorer="$scorer"') == 8
