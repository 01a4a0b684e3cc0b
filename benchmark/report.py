"""Render a `Report` three ways: report.json (the data), report.md (a summary for a pull
request or a terminal) and report.html (self-contained, charts as inline SVG).

Rendering is a pure function of the report: no clock, no randomness, fixed number
formats and orderings, so the same report always gives the same bytes. Nothing here
shows record text; only cids, taxonomy labels and numbers reach the page.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from benchmark import charts
from benchmark.errors import BenchmarkError
from benchmark.metrics import LIKED
from benchmark.result import ItemResult, Metric, Report

_LABELS = {
    "avg_acc": "Avg-Acc",
    "good_acc": "Good-Acc",
    "bad_acc": "Bad-Acc",
    "auroc": "AUROC",
    "ece": "ECE",
    "mean_score": "mean P(satisfied)",
    "good_pct": "Good%",
    "good_pct_valid": "Good% (valid judgments)",
    "recovery_rate": "Recovery Rate (all items)",
    "recovery_rate_valid": "Recovery Rate (valid judgments)",
    "n": "items",
    "n_liked": "liked",
    "n_disliked": "disliked",
    "n_scored": "scored",
    "n_valid": "valid judgments",
    "n_unparseable": "unparseable",
    "n_missing": "missing reply",
    "n_with_reply": "with a reply",
    "n_good": "rated good",
    "n_recovered": "recovered",
}
_RATE_LABEL = {"task1": "accuracy", "task2": "Good%", "task3": "recovery (all)"}
_COLUMN_ORDER = [
    "n",
    "n_liked",
    "n_disliked",
    "n_missing",
    "rate",
    "rate_valid",
    "good_acc",
    "bad_acc",
]
_COLUMN_LABELS = {
    "rate_valid": "recovery (valid)",
    "good_acc": "Good-Acc",
    "bad_acc": "Bad-Acc",
    "n_liked": "liked",
    "n_disliked": "disliked",
    "n_missing": "missing",
}
_NOTES = {
    "task1": (
        "Good-Acc is recall on liked turns, Bad-Acc recall on disliked turns, Avg-Acc their "
        "mean; an unparseable verdict counts as wrong. AUROC and ECE use the items with a "
        "valid score. Intervals: stratified bootstrap, 1000 resamples, seed 0."
    ),
    "task2": (
        "Good% = replies rated good / items with a reply (a failed judgment counts as not "
        "good); items without a reply are reported as missing. Good% (valid judgments) "
        "divides by valid judgments only. Intervals: Wilson."
    ),
    "task3": (
        "Recovery Rate (all items) = recovery replies rated good / all items: a missing "
        "reply or a failed judgment is not a recovery. Recovery Rate (valid judgments) "
        "divides by valid judgments only. Intervals: Wilson."
    ),
}
_BREAKDOWN_TITLES = {
    "scenario": "scenario",
    "dimension": "dimension",
    "difficulty": "difficulty",
    "signal_type": "signal type",
}


class ReportWriteError(BenchmarkError):
    """An output path the report cannot be written to."""


# What a misjudged item shows of its text when asked to: the user's message and the
# reply's start, each cut to this many characters.
TEXT_CHARS = 200
MISJUDGED = 10  # items in the "most confidently wrong" table

Texts = dict[str, tuple[str, str]]  # cid -> (user message, reply)


def write_report(
    report: Report, out: str | os.PathLike[str], texts: Texts | None = None
) -> list[Path]:
    """Write `out` (must end in .json) and the .md and .html beside it; returns the paths.

    `texts` puts the misjudged items' text into the .md and .html (ids are always there);
    report.json never holds text."""
    json_path = Path(out)
    if json_path.suffix.lower() != ".json":
        raise ReportWriteError(f"expected an output path ending in .json, got {json_path.name!r}")
    paths = [json_path, json_path.with_suffix(".md"), json_path.with_suffix(".html")]
    contents = [report.to_json(), markdown(report, texts), html(report, texts)]
    try:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        for path, content in zip(paths, contents, strict=True):
            path.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise ReportWriteError(
            f"could not write the report to {json_path.parent}: {type(exc).__name__}"
        ) from None
    return paths


# --- formatting shared by both renderings ---


def _is_rate(key: str) -> bool:
    return key.endswith(("_acc", "_pct", "_valid")) or key in ("rate", "recovery_rate")


def _value(key: str, value: Metric | str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, str):
        return value
    if _is_count(key) or isinstance(value, int):
        return str(int(value))
    if _is_rate(key):
        return f"{value * 100:.1f}%"
    return f"{value:.3f}"


def _interval(report: Report, key: str) -> str:
    ci = report.intervals.get(key)
    if ci is None or math.isnan(ci.low):
        return ""
    return f"{ci.low * 100:.1f}–{ci.high * 100:.1f}%"


def _ordered(keys: Iterable[str], order: Sequence[str]) -> list[str]:
    """Known keys in `order`, then unknown ones by name: output never depends on the order
    a report's dicts happen to have (report.json sorts its keys)."""
    rank = {k: i for i, k in enumerate(order)}
    return sorted(keys, key=lambda k: (rank.get(k, len(rank)), k))


def _shown_metrics(report: Report) -> list[str]:
    """Headline first, then the other intervals, then the remaining non-count metrics."""
    rest = _ordered((k for k in report.metrics if not _is_count(k)), list(_LABELS))
    keys = [report.headline, *_ordered(report.intervals, list(_LABELS))]
    keys += [k for k in rest if k not in keys]
    return [k for k in dict.fromkeys(keys) if k in report.metrics]


def _is_count(key: str) -> bool:
    return key == "n" or key.startswith("n_")


def _counts(report: Report) -> list[tuple[str, str]]:
    keys = _ordered((k for k in report.metrics if _is_count(k)), list(_LABELS))
    return [(_LABELS.get(k, k), _value(k, report.metrics[k])) for k in keys]


def _columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    keys = {k for row in rows for k in row if k != "group"}
    return _ordered(keys, _COLUMN_ORDER)


def _breakdowns(report: Report) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(k, report.breakdowns[k]) for k in _ordered(report.breakdowns, list(_BREAKDOWN_TITLES))]


def _column_label(report: Report, key: str) -> str:
    if key == "rate":
        return _RATE_LABEL.get(report.task, "rate")
    return _COLUMN_LABELS.get(key, key)


def misjudged(report: Report, limit: int = MISJUDGED) -> list[ItemResult]:
    """The labelled items the scorer got wrong, most confident first (furthest from 0.5)."""
    wrong = [
        i
        for i in report.items
        if i.label is not None and i.outcome == 0 and i.status == "scored" and i.score is not None
    ]
    return sorted(wrong, key=lambda i: (-abs((i.score or 0.0) - 0.5), i.cid))[:limit]


def _misjudged_rows(report: Report, texts: Texts | None) -> tuple[list[str], list[list[str]]]:
    header = ["cid", "label", "P(satisfied)", "verdict", "scenario", "dimension"]
    if texts is not None:
        header += ["user message", "reply"]
    rows = []
    for item in misjudged(report):
        row = [
            item.cid,
            "liked" if item.label == LIKED else "disliked",
            _value("score", item.score),
            item.verdict or "",
            item.groups.get("scenario", ""),
            item.groups.get("dimension", ""),
        ]
        if texts is not None:
            message, reply = texts.get(item.cid, ("", ""))
            row += [_cut(message), _cut(reply)]
        rows.append(row)
    return header, rows


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"


_MISJUDGED_NOTE = (
    "Labelled items the scorer got wrong, furthest from 0.5 first. Ids only; "
    "`uxmon bench --show-text` adds the message and the reply's start."
)


def _failures(report: Report) -> list[tuple[str, int]]:
    return sorted(report.errors.items())


def _title(report: Report) -> str:
    return f"{report.task} · {report.scorer} {report.scorer_version}"


# --- Markdown ---


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(cell(h) for h in header) + " |"]
    out.append("|" + "|".join("---" for _ in header) + "|")
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def markdown(report: Report, texts: Texts | None = None) -> str:
    lines = [f"# UXBench {_title(report)}", ""]
    lines.append(
        f"Task version {report.task_version} · {report.n} items · created {report.created} · "
        f"{report.elapsed_s:.1f} s"
    )
    lines += ["", "## Metrics", ""]
    rows = []
    for key in _shown_metrics(report):
        label = _LABELS.get(key, key)
        value = _value(key, report.metrics[key])
        if key == report.headline:
            label, value = f"**{label}**", f"**{value}**"
        rows.append([label, value, _interval(report, key)])
    lines += _md_table(["metric", "value", "95% CI"], rows)
    lines += ["", "Counts: " + " · ".join(f"{label} {v}" for label, v in _counts(report))]
    if report.task in _NOTES:
        lines += ["", _NOTES[report.task]]
    if report.confusion is not None:
        c = report.confusion
        lines += ["", "## Confusion matrix", ""]
        lines += _md_table(
            ["true \\ predicted", "liked", "disliked", "unparseable"],
            [
                ["liked", str(c.liked_as_liked), str(c.liked_as_disliked), str(c.liked_unparsed)],
                [
                    "disliked",
                    str(c.disliked_as_liked),
                    str(c.disliked_as_disliked),
                    str(c.disliked_unparsed),
                ],
            ],
        )
    for key, rows_ in _breakdowns(report):
        columns = _columns(rows_)
        lines += ["", f"## By {_BREAKDOWN_TITLES.get(key, key)}", ""]
        lines += _md_table(
            [key, *(_column_label(report, c) for c in columns)],
            [[str(r["group"]), *(_value(c, r.get(c)) for c in columns)] for r in rows_],
        )
    if any(b.count for b in report.reliability):
        lines += ["", "## Reliability", ""]
        lines += _md_table(
            ["P(satisfied)", "items", "mean score", "share liked"],
            [
                [
                    f"{b.low:.1f}–{b.high:.1f}",
                    str(b.count),
                    _value("score", b.mean_score),
                    _value("rate", b.frac_liked),
                ]
                for b in report.reliability
            ],
        )
    header, wrong = _misjudged_rows(report, texts)
    if wrong:
        lines += ["", "## Most confidently wrong", "", _MISJUDGED_NOTE, ""]
        lines += _md_table(header, wrong)
    lines += ["", "## Scorer failures", ""]
    failures = _failures(report)
    lines += (
        _md_table(["kind", "count"], [[k, str(v)] for k, v in failures])
        if failures
        else ["None: every item that had a reply got a valid score."]
    )
    lines += ["", "## Data", "", f"- {report.source.description}"]
    lines += [f"- `{f.path}`: sha256 `{f.sha256}` ({f.bytes} bytes)" for f in report.source.files]
    if report.source.responses is not None:
        r = report.source.responses
        lines.append(
            f"- responses `{r.path}`: sha256 `{r.sha256}` ({r.bytes} bytes); "
            f"{report.source.unmatched_responses} responses match no item"
        )
    lines.append(f"- items sha256 `{report.source.items_sha256}`")
    return "\n".join(lines) + "\n"


# --- HTML ---

_CSS = """
:root{--ink:#2b2f33;--muted:#6b7280;--line:#e3e6ea;--bg:#f6f7f9;--accent:#1f5fa8}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:1100px;margin:0 auto;padding:28px 20px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}
.sub{color:var(--muted);margin:0 0 22px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;
margin-bottom:18px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card.headline{border:2px solid var(--accent)}
.card .v{font-size:26px;font-weight:650}.card .ci{color:var(--muted);font-size:12px}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:14px;
margin-bottom:14px}
.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;
margin-bottom:14px}
.panel p.note{color:var(--muted);font-size:12px;margin:6px 0 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right}
th:first-child,td:first-child{text-align:left}th{color:var(--muted);font-weight:600}
table.items th,table.items td{text-align:left;vertical-align:top}
table.items td:first-child{white-space:nowrap}table.items td:nth-child(n+7){min-width:14em}
.scroll{overflow-x:auto}
.chips span{display:inline-block;background:#fff;border:1px solid var(--line);
border-radius:12px;padding:2px 10px;margin:0 6px 6px 0;font-size:12px}
details summary{cursor:pointer;font-weight:600;margin-bottom:8px}
code{font-size:12px;word-break:break-all}
footer{color:var(--muted);font-size:12px}
"""


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    attribute = f" class='{css}'" if css else ""
    return f"<table{attribute}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _panel(title: str, content: str, note: str = "") -> str:
    extra = f"<p class='note'>{escape(note)}</p>" if note else ""
    return f"<section class='panel'><h2>{escape(title)}</h2>{content}{extra}</section>"


def _cards(report: Report) -> str:
    out = []
    for key in _shown_metrics(report):
        css = "card headline" if key == report.headline else "card"
        ci = _interval(report, key)
        out.append(
            f"<div class='{css}'><div class='k'>{escape(_LABELS.get(key, key))}</div>"
            f"<div class='v'>{escape(_value(key, report.metrics[key]))}</div>"
            f"<div class='ci'>{escape(f'95% CI {ci}' if ci else chr(160))}</div></div>"
        )
    return f"<section class='cards'>{''.join(out)}</section>"


def _bar_colour(report: Report, row: dict[str, Any]) -> str:
    if report.task != "task1":
        return charts.NEUTRAL_COLOUR
    liked, disliked = int(row.get("n_liked", 0)), int(row.get("n_disliked", 0))
    if liked and not disliked:
        return charts.LIKED_COLOUR
    if disliked and not liked:
        return charts.DISLIKED_COLOUR
    return charts.NEUTRAL_COLOUR


def _breakdown_chart(report: Report, key: str) -> str:
    rows = report.breakdowns[key]
    chart_rows = [
        charts.Bar(
            str(r["group"]),
            float("nan") if r.get("rate") is None else float(r["rate"]),
            int(r["n"]),
            _bar_colour(report, r),
        )
        for r in rows
    ]
    overall = _overall_rate(report)
    return charts.bars(chart_rows, reference=overall)


def _overall_rate(report: Report) -> float | None:
    """The rate the breakdown bars show, over all items (the dashed reference line)."""
    outcomes = [i.outcome for i in report.items if i.outcome is not None]
    return sum(outcomes) / len(outcomes) if outcomes else None


def _histogram(report: Report) -> str:
    scored = [i for i in report.items if i.score is not None]
    if report.task == "task1":
        series = {
            "liked": ([i.score or 0.0 for i in scored if i.label == LIKED], charts.LIKED_COLOUR),
            "disliked": (
                [i.score or 0.0 for i in scored if i.label != LIKED],
                charts.DISLIKED_COLOUR,
            ),
        }
    else:
        series = {"replies": ([i.score or 0.0 for i in scored], charts.NEUTRAL_COLOUR)}
    return charts.histogram(series)


def html(report: Report, texts: Texts | None = None) -> str:
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>{escape('UXBench ' + _title(report))}</title><style>{_CSS}</style></head>",
        "<body><main>",
        f"<h1>{escape('UXBench ' + _title(report))}</h1>",
        f"<p class='sub'>{escape(_subtitle(report))}</p>",
        _cards(report),
        "<div class='chips'>"
        + "".join(f"<span>{escape(f'{label}: {v}')}</span>" for label, v in _counts(report))
        + "</div>",
    ]
    figures = []
    if any(b.count for b in report.reliability):
        figures.append(
            _panel(
                "Reliability",
                charts.reliability_diagram(report.reliability),
                "Dots on the dashed diagonal are calibrated; dot area is the bin's item count.",
            )
        )
    figures.append(
        _panel(
            "Scores by label" if report.task == "task1" else "Scores",
            _histogram(report),
            "Each series as a share of its own items; the dashed line is 0.5.",
        )
    )
    parts.append(f"<div class='grid'>{''.join(figures)}</div>")
    rate = _RATE_LABEL.get(report.task, "rate")
    colour_note = (
        " Green: success dimensions (liked turns), red: failure dimensions (disliked)."
        if report.task == "task1"
        else ""
    )
    for key, _ in _breakdowns(report):
        title = f"{rate.capitalize()} by {_BREAKDOWN_TITLES.get(key, key)}"
        note = f"Dashed line: overall {rate}.{colour_note if key == 'dimension' else ''}"
        parts.append(_panel(title, _breakdown_chart(report, key), note))
    header, wrong = _misjudged_rows(report, texts)
    if wrong:
        # Scrolls sideways inside its panel where the window is too narrow for the texts.
        table = f"<div class='scroll'>{_html_table(header, wrong, css='items')}</div>"
        parts.append(_panel("Most confidently wrong", table, _MISJUDGED_NOTE))
    parts.append(_details_html(report))
    parts.append(_footer_html(report))
    parts.append("</main></body></html>")
    return "".join(parts) + "\n"


def _subtitle(report: Report) -> str:
    return (
        f"task version {report.task_version} · {report.n} items · created {report.created} · "
        f"{report.elapsed_s:.1f} s · {_NOTES.get(report.task, '')}"
    )


def _details_html(report: Report) -> str:
    out = []
    if report.confusion is not None:
        c = report.confusion
        out.append(
            _panel(
                "Confusion matrix",
                _html_table(
                    ["true \\ predicted", "liked", "disliked", "unparseable"],
                    [
                        [
                            "liked",
                            *map(str, (c.liked_as_liked, c.liked_as_disliked, c.liked_unparsed)),
                        ],
                        [
                            "disliked",
                            *map(
                                str,
                                (c.disliked_as_liked, c.disliked_as_disliked, c.disliked_unparsed),
                            ),
                        ],
                    ],
                ),
            )
        )
    failures = _failures(report)
    out.append(
        _panel(
            "Scorer failures",
            _html_table(["kind", "count"], [[k, str(v)] for k, v in failures])
            if failures
            else "<p>None: every item that had a reply got a valid score.</p>",
        )
    )
    tables = []
    for key, rows in _breakdowns(report):
        columns = _columns(rows)
        tables.append(
            f"<h2>By {escape(_BREAKDOWN_TITLES.get(key, key))}</h2>"
            + _html_table(
                [key, *(_column_label(report, c) for c in columns)],
                [[str(r["group"]), *(_value(c, r.get(c)) for c in columns)] for r in rows],
            )
        )
    out.append(
        "<section class='panel'><details><summary>Breakdown tables</summary>"
        + "".join(tables)
        + "</details></section>"
    )
    return "".join(out)


def _footer_html(report: Report) -> str:
    s = report.source
    rows = [f"<li>{escape(s.description)}</li>"]
    rows += [
        f"<li><code>{escape(f.path)}</code> sha256 <code>{f.sha256}</code> ({f.bytes} bytes)</li>"
        for f in s.files
    ]
    if s.responses is not None:
        rows.append(
            f"<li>responses <code>{escape(s.responses.path)}</code> sha256 "
            f"<code>{s.responses.sha256}</code>; {s.unmatched_responses} match no item</li>"
        )
    rows.append(f"<li>items sha256 <code>{s.items_sha256}</code></li>")
    return f"<footer><h2>Data</h2><ul>{''.join(rows)}</ul></footer>"
