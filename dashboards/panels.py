"""The few panel and variable shapes uxmon's dashboards use, on grafana-foundation-sdk builders.

Every panel queries the dashboard's `$datasource` variable (a Prometheus data source), so the
same JSON works against any Grafana whatever its data source is called. `Board` numbers panels
1, 2, 3... in the order they are added, which keeps ids stable from one render to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as dashboard_builders
from grafana_foundation_sdk.builders import heatmap, prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog import variants
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.models import common, units
from grafana_foundation_sdk.models import dashboard as models
from grafana_foundation_sdk.models import prometheus as prometheus_models

DATASOURCE_VARIABLE = "datasource"
DATASOURCE = models.DataSourceRef(type_val="prometheus", uid=f"${{{DATASOURCE_VARIABLE}}}")
#: The data source `uxmon dashboards push` provisions; the variable selects it by default.
DEFAULT_DATASOURCE_UID = "uxmon-prometheus"

FULL, HALF, THIRD, QUARTER = 24, 12, 8, 6
GRAPH_HEIGHT, STAT_HEIGHT = 8, 4

# Units, from the sdk's catalogue of Grafana's unit ids
RATIO = units.PercentUnit
SECONDS = units.Seconds
PER_SECOND = units.EventsPerSecond
PER_MINUTE = units.EventsPerMinute
COUNT = units.Number
BYTES = units.BytesIEC


PanelBuilder = timeseries.Panel | stat.Panel | heatmap.Panel | table.Panel


@dataclass(frozen=True, slots=True)
class Query:
    """One PromQL target: `legend` is a Grafana legend template ({{label}})."""

    expr: str
    legend: str = ""
    instant: bool = False
    as_table: bool = False
    as_heatmap: bool = False
    #: Ask Prometheus for the exemplars (conversation and turn ids) of the series it reads.
    exemplars: bool = False


def _targets(queries: Sequence[Query]) -> list[Builder[variants.Dataquery]]:
    built: list[Builder[variants.Dataquery]] = []
    for index, query in enumerate(queries):
        target = prometheus.Dataquery().expr(query.expr).ref_id(chr(ord("A") + index))
        if query.legend:
            target = target.legend_format(query.legend)
        if query.instant:
            target = target.instant()
        if query.as_table:
            target = target.format(prometheus_models.PromQueryFormat.TABLE)
        if query.as_heatmap:
            target = target.format(prometheus_models.PromQueryFormat.HEATMAP)
        if query.exemplars:
            target = target.exemplar(True)
        built.append(target)
    return built


def _legend() -> common_builders.VizLegendOptions:
    return (
        common_builders.VizLegendOptions()
        .show_legend(True)
        .display_mode(common.LegendDisplayMode.LIST)
        .placement(common.LegendPlacement.BOTTOM)
    )


def _tooltip() -> common_builders.VizTooltipOptions:
    return (
        common_builders.VizTooltipOptions()
        .mode(common.TooltipDisplayMode.MULTI)
        .sort(common.SortOrder.DESCENDING)
    )


def graph(
    title: str,
    description: str,
    queries: Sequence[Query],
    *,
    unit: str,
    width: int = HALF,
    stacked: bool = False,
    bars: bool = False,
    max_value: float | None = None,
) -> timeseries.Panel:
    panel = (
        timeseries.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .targets(_targets(queries))
        .unit(unit)
        .min(0)
        .span(width)
        .height(GRAPH_HEIGHT)
        .legend(_legend())
        .tooltip(_tooltip())
        .draw_style(common.GraphDrawStyle.BARS if bars else common.GraphDrawStyle.LINE)
        .fill_opacity(60 if bars else 10)
    )
    if max_value is not None:
        panel = panel.max(max_value)
    if stacked:
        panel = panel.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
    return panel


def single_value(
    title: str,
    description: str,
    query: Query,
    *,
    unit: str,
    width: int = QUARTER,
    red_above: float | None = None,
) -> stat.Panel:
    """A big number (the last value), red past `red_above` when given."""
    steps = [models.Threshold(value=None, color="green")]
    if red_above is not None:
        steps.append(models.Threshold(value=red_above, color="red"))
    return (
        stat.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .targets(_targets([query]))
        .unit(unit)
        .span(width)
        .height(STAT_HEIGHT)
        .reduce_options(common_builders.ReduceDataOptions().calcs(["lastNotNull"]))
        .graph_mode(common.BigValueGraphMode.AREA)
        .color_mode(common.BigValueColorMode.VALUE)
        .thresholds(
            dashboard_builders.ThresholdsConfig().mode(models.ThresholdsMode.ABSOLUTE).steps(steps)
        )
    )


def histogram_heatmap(
    title: str, description: str, query: Query, *, unit: str, width: int = HALF
) -> heatmap.Panel:
    """A Prometheus histogram's buckets (query in heatmap format, not recalculated)."""
    return (
        heatmap.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .targets(_targets([query]))
        .span(width)
        .height(GRAPH_HEIGHT)
        .calculate(False)
        # Grafana's default, spelled out so the typed model round-trips the field config.
        .hide_from(common_builders.HideSeriesConfig().legend(False).tooltip(False).viz(False))
        .y_axis(heatmap.YAxisConfig().unit(unit))
        .show_tooltip()
        .show_legend()
    )


def label_table(
    title: str, description: str, query: Query, hidden: Sequence[str], *, width: int = HALF
) -> table.Panel:
    """An instant query's label sets as rows, without the columns named in `hidden`."""
    organize = models.DataTransformerConfig(
        id_val="organize", options={"excludeByName": {name: True for name in hidden}}
    )
    return (
        table.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .targets(_targets([query]))
        .span(width)
        .height(GRAPH_HEIGHT)
        .show_header(True)
        .with_transformation(organize)
    )


def datasource_variable() -> dashboard_builders.DatasourceVariable:
    return (
        dashboard_builders.DatasourceVariable(DATASOURCE_VARIABLE)
        .id(DATASOURCE_VARIABLE)
        .label("Data source")
        .type("prometheus")
        .current(
            models.VariableOption(
                selected=True, text=DEFAULT_DATASOURCE_UID, value=DEFAULT_DATASOURCE_UID
            )
        )
    )


def label_variable(
    name: str, label: str, metric: str, *, include_all: bool = True, default: str | None = None
) -> dashboard_builders.QueryVariable:
    """Values of `name` seen on `metric`; multi-select with an All that matches anything,
    or (not `include_all`) one value, `default` until the user picks another."""
    variable = (
        dashboard_builders.QueryVariable(name)
        .id(name)
        .label(label)
        .datasource(DATASOURCE)
        .query(f"label_values({metric}, {name})")
        .refresh(models.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(models.VariableSort.ALPHABETICAL_ASC)
    )
    if default is not None:
        variable = variable.current(
            models.VariableOption(selected=True, text=default, value=default)
        )
    if include_all:
        # ".*" rather than Grafana's default (a regex of every value) keeps queries short and
        # matches values that appeared after the dashboard loaded.
        variable = (
            variable.multi(True)
            .include_all(True)
            .all_value(".*")
            .current(models.VariableOption(selected=True, text="All", value="$__all"))
        )
    return variable


class Board:
    """A dashboard under construction: rows and panels in reading order, ids 1, 2, 3..."""

    def __init__(self, uid: str, title: str, description: str) -> None:
        self._next_id = 1
        self.builder = (
            dashboard_builders.Dashboard(title)
            .uid(uid)
            .description(description)
            .tags(["uxmon"])
            .editable()
            .timezone("browser")
            .time("now-6h", "now")
            .refresh("1m")
            .tooltip(models.DashboardCursorSync.CROSSHAIR)
        )

    def variables(self, *variables: Builder[models.VariableModel]) -> Board:
        self.builder = self.builder.variables(list(variables))
        return self

    def row(self, title: str) -> Board:
        self.builder = self.builder.with_row(dashboard_builders.Row(title).id(self._take_id()))
        return self

    def add(self, *panels: PanelBuilder) -> Board:
        for panel in panels:
            self.builder = self.builder.with_panel(panel.id(self._take_id()))
        return self

    def build(self) -> models.Dashboard:
        return self.builder.build()

    def _take_id(self) -> int:
        taken = self._next_id
        self._next_id += 1
        return taken
