"""The alert and recording rules for someone else's cluster: the shipped rule files with the
job, the scorer names and the runbook location a team configures (a mixin-style config).

The files in deploy/prometheus/ are written for the defaults (`RulesConfig()`: job "uxmon",
scorers "ux_judge" and "grm", runbooks in the repository's docs/alerts.md, the correction's
accuracy from the benchmark) and are what promtool checks and tests. Rendering replaces
exactly those label matchers, the runbook prefix and the correction's source, in the rule
files and in their promtool tests alike, so the same tests check the rendered rules. With
the defaults, rendering gives the shipped files back byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from dashboards.errors import DashboardsError

# The repository's deploy/prometheus (rules/ and tests/), when uxmon runs from a checkout.
DEFAULT_SOURCE = Path(__file__).resolve().parents[1] / "deploy" / "prometheus"
# Label values that need no quoting anywhere they appear (PromQL strings, YAML scalars).
_LABEL_VALUE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")
# Where the Rogan–Gladen correction takes the scorer's accuracy from (docs/alerts.md).
CORRECTIONS = ("benchmark", "live")


class RulesConfigError(DashboardsError):
    """A rules config that cannot be rendered: the message names the field."""


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """What differs between clusters. Field names are the config file's keys."""

    job: str = "uxmon"  # the scrape job of the workers
    scorer: str = "ux_judge"  # the scorer the dissatisfaction rate and its SLO read
    grm: str = "grm"  # the cascade scorer the GRM alerts watch
    runbook_base: str = "docs/alerts.md"  # URL of the runbook page; anchors are appended
    # the correction's accuracy: "benchmark" (the validation's), or "live" (explicit
    # thumbs where each class has enough of them, the benchmark's where not)
    correction: str = "benchmark"

    def __post_init__(self) -> None:
        for name in ("job", "scorer", "grm"):
            value = getattr(self, name)
            if not _LABEL_VALUE.fullmatch(value):
                raise RulesConfigError(
                    f"{name}: expected a label value of letters, digits and _.:- (starting with a "
                    f"letter, digit or _), got {value!r}"
                )
        if not self.runbook_base or any(c in self.runbook_base for c in "\"'#\n \\"):
            raise RulesConfigError(
                "runbook_base: expected a URL or path without quotes, spaces or '#' (the "
                f"alert's anchor is appended), got {self.runbook_base!r}"
            )
        if self.correction not in CORRECTIONS:
            raise RulesConfigError(
                f"correction: expected one of {', '.join(CORRECTIONS)}, got {self.correction!r}"
            )

    @classmethod
    def load(cls, path: Path) -> RulesConfig:
        """A YAML mapping with any of the fields; a key that is not one is an error."""
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise RulesConfigError(f"cannot read rules config {path}: {exc}") from None
        if not isinstance(loaded, dict):
            raise RulesConfigError(f"{path}: expected a mapping of settings, got {loaded!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(loaded) - known)
        if unknown:
            raise RulesConfigError(
                f"{path}: unknown key {unknown[0]!r}; expected any of {', '.join(sorted(known))}"
            )
        wrong = [k for k, v in loaded.items() if not isinstance(v, str)]
        if wrong:
            raise RulesConfigError(f"{path}: {wrong[0]}: expected a string")
        return cls(**loaded)

    def replacements(self, *, in_tests: bool = False) -> dict[str, str]:
        """Each default's spelling (a regex) -> this config's: label matchers in PromQL,
        labels as YAML mappings (promtool's expected alerts; a whole line), the runbook
        prefix. In promtool tests a scorer's name is replaced wherever it is a word: the
        expected annotations spell it out as the rules' templates will."""
        default = RulesConfig()
        out = {
            re.escape(f'runbook_url: "{default.runbook_base}#'): (
                f'runbook_url: "{self.runbook_base}#'
            )
        }
        for label, old, new in (
            ("job", default.job, self.job),
            ("scorer", default.scorer, self.scorer),
            ("scorer", default.grm, self.grm),
        ):
            out[re.escape(f'{label}="{old}"')] = f'{label}="{new}"'
            out[re.escape(f'{label}=\\"{old}\\"')] = f'{label}=\\"{new}\\"'  # in "..."
            out[re.escape(f"{label}: {old}") + "$"] = f"{label}: {new}"
            if in_tests and label == "scorer":
                out[rf"(?<![\w.-]){re.escape(old)}(?![\w.-])"] = new
        if self.correction == "live":  # both live figures, or neither: never a mix
            for quantity, other in (("sensitivity", "specificity"), ("specificity", "sensitivity")):
                shipped = f"uxmon:benchmark_{quantity}:task1"
                out[re.escape(f"expr: {shipped}") + "$"] = (
                    f"expr: (uxmon:live_{quantity}:ratio7d and on (scorer) "
                    f"uxmon:live_{other}:ratio7d) or {shipped}"
                )
        return out


def render_text(text: str, config: RulesConfig, *, in_tests: bool = False) -> str:
    """One rule (or, `in_tests`, promtool test) file with the config's selectors and
    runbook base, in one pass, so swapped names cannot chain."""
    table = list(config.replacements(in_tests=in_tests).items())
    pattern = re.compile("|".join(f"({old})" for old, _ in table), re.MULTILINE)
    return pattern.sub(lambda m: table[(m.lastindex or 1) - 1][1], text)


def render(config: RulesConfig, source: Path = DEFAULT_SOURCE) -> dict[str, str]:
    """relative path ("rules/alerts.yml", "tests/grm_test.yml", ...) -> rendered text."""
    rules = source / "rules"
    if not rules.is_dir():
        raise RulesConfigError(
            f"no rule files in {rules}: pass the uxmon repository's deploy/prometheus "
            "directory as the source"
        )
    out: dict[str, str] = {}
    for folder in ("rules", "tests"):
        for path in sorted((source / folder).glob("*.yml")):
            text = path.read_text(encoding="utf-8")
            out[f"{folder}/{path.name}"] = render_text(text, config, in_tests=folder == "tests")
    return out


def write(config: RulesConfig, out_dir: Path, source: Path = DEFAULT_SOURCE) -> list[Path]:
    """Write the rendered rules/ and tests/ under `out_dir` (the tests find the rules at
    ../rules, as in the source); returns the paths written."""
    written = []
    for relative, text in render(config, source).items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
