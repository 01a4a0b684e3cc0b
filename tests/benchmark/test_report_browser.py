"""The HTML report as a browser lays it out: headless Chromium renders it, measures it and
takes the screenshots a person looks at (UXMON_SCREENSHOT_DIR keeps them).

The page is probed by a script appended to a copy of it (the report itself has none): the
misjudged-items table is laid out and inside the page, nothing overflows the page's width,
and no chart text overlaps other chart text."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmark.report import html, misjudged
from benchmark.result import Report
from benchmark.runner import run
from benchmark.tasks import Prepared, get_task
from tests.support.scorers import Keyword

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"
WIDTHS = (1280, 820)  # a laptop, and a window narrower than the two-figure grid

# Measures the laid-out page and writes the findings, as JSON, into <pre id="probe">.
PROBE = """
<script>
(() => {
  const box = (e) => e.getBoundingClientRect();
  const table = document.querySelector("table.items");
  const cells = table ? [...table.querySelectorAll("td:first-child")].map((td) => {
    const r = box(td);
    return {text: td.textContent, width: r.width, height: r.height};
  }) : [];
  const overlaps = [];
  document.querySelectorAll("svg").forEach((svg, figure) => {
    const texts = [...svg.querySelectorAll("text")].map((t) => [t.textContent, box(t)]);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const [a, ra] = texts[i], [b, rb] = texts[j];
        const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        // A text's box is its font's line box, a quarter taller than the glyphs: boxes of
        // neighbouring axis labels may touch without their letters meeting.
        if (x > 1 && y > 0.25 * Math.min(ra.height, rb.height)) overlaps.push({figure, a, b});
      }
    }
  });
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({
    table: table ? {
      width: box(table).width, height: box(table).height, visible: table.checkVisibility(),
      panel_right: box(table.closest("section")).right,
    } : null,
    cells,
    viewport: window.innerWidth,
    scroll_width: document.documentElement.scrollWidth,
    scroll_height: document.documentElement.scrollHeight,
    overlaps,
  });
  document.body.appendChild(pre);
})();
</script>
"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise RuntimeError("Chromium is not installed; run `make services` (apt chromium)")


def _headless(
    page: Path, width: int, *args: str, height: int = 2400
) -> subprocess.CompletedProcess[str]:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def _probe(page: Path, width: int) -> dict[str, Any]:
    dom = _headless(page, width, "--dump-dom").stdout
    found: dict[str, Any] = json.loads(dom.split('<pre id="probe">', 1)[1].split("</pre>", 1)[0])
    return found


@pytest.fixture(scope="module")
def task1() -> Prepared:
    return get_task("task1").prepare(str(DATA))


@pytest.fixture(scope="module")
def report(task1: Prepared) -> Report:
    return run(get_task("task1"), task1.cases, Keyword(), source=task1.source)


@pytest.fixture(scope="module")
def pages(
    report: Report, task1: Prepared, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The report as `uxmon bench` writes it (ids only) and with `--show-text`, each also
    with the probe appended."""
    texts = {c.cid: (c.dialogue.user_message, c.dialogue.reply) for c in task1.cases if c.dialogue}
    where = tmp_path_factory.mktemp("report")
    out = {}
    for variant, page in (("ids", html(report)), ("text", html(report, texts))):
        for suffix, text in (("", page), ("-probed", page.replace("</body>", PROBE + "</body>"))):
            out[variant + suffix] = where / f"report-{variant}{suffix}.html"
            out[variant + suffix].write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize("variant", ["ids", "text"])
@pytest.mark.parametrize("width", WIDTHS)
def test_misjudged_items_are_laid_out_and_nothing_overlaps(
    report: Report, pages: dict[str, Path], width: int, variant: str
) -> None:
    found = _probe(pages[f"{variant}-probed"], width)
    table = found["table"]
    assert table is not None and table["visible"], "the misjudged-items table is not shown"
    assert table["width"] > 200 and table["height"] > 20 * len(misjudged(report))
    assert table["panel_right"] <= found["viewport"], "the misjudged items' panel runs off the page"
    assert [c["text"] for c in found["cells"]] == [i.cid for i in misjudged(report)]
    assert all(c["width"] > 0 and c["height"] > 0 for c in found["cells"])
    assert found["scroll_width"] <= found["viewport"], "the page scrolls sideways"
    assert found["overlaps"] == [], f"chart texts overlap: {found['overlaps']}"


@pytest.mark.parametrize("variant", ["ids", "text"])
@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots(pages: dict[str, Path], width: int, variant: str, tmp_path: Path) -> None:
    where = Path(os.environ.get("UXMON_SCREENSHOT_DIR") or tmp_path)
    shot = where / f"report-{variant}-{width}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    height = _probe(pages[f"{variant}-probed"], width)["scroll_height"]  # the whole page
    _headless(pages[variant], width, f"--screenshot={shot}", height=height)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (width, height)  # the IHDR chunk
    assert len(png) > 50_000, "the screenshot is nearly blank"
