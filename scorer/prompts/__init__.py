"""GRM prompt templates: find, parse, validate and fill them.

A template file has a `[system]` and a `[user]` section; the user section carries
`$placeholders` (string.Template syntax, `$$` for a literal dollar). Reply-mode templates use
$context, $user_message and $reply; recovery-mode templates use $context, $failed_reply,
$complaint and $reply. Every template must name both verdict words of its language, since
the score is read from exactly those two tokens.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scorer.errors import ScorerError

Mode = Literal["reply", "recovery"]

TEMPLATE_DIR = Path(__file__).parent
PLACEHOLDERS: dict[Mode, tuple[str, ...]] = {
    "reply": ("context", "user_message", "reply"),
    "recovery": ("context", "failed_reply", "complaint", "reply"),
}


class TemplateError(ScorerError):
    """A prompt template that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Language:
    """Words a prompt needs besides the template: verdicts, speaker labels, stand-ins."""

    code: str
    good: str
    bad: str
    user_label: str
    assistant_label: str
    no_context: str  # stands in for an empty history
    empty_text: str  # stands in for an empty message or reply
    elided: str  # marks where a too-long text was cut


LANGUAGES: dict[str, Language] = {
    "zh": Language("zh", "好", "差", "用户", "助手", "（无）", "（空）", "……（中间省略）……"),
    "en": Language("en", "GOOD", "BAD", "User", "Assistant", "(none)", "(empty)", " [...] "),
}


def language(code: str) -> Language:
    try:
        return LANGUAGES[code]
    except KeyError:
        raise TemplateError(
            f"unknown GRM language {code!r}; known: {', '.join(sorted(LANGUAGES))}"
        ) from None


@dataclass(frozen=True, slots=True)
class ChatPrompt:
    """A filled template: the two chat messages a backend sends to the model."""

    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@dataclass(frozen=True, slots=True)
class Template:
    mode: Mode
    language: Language
    system: str
    user: str
    source: str  # file it came from, for error messages
    digest: str  # sha256 of the file's text; part of the scorer's version

    def render(self, values: Mapping[str, str]) -> ChatPrompt:
        """Fill the placeholders; `values` must hold exactly this mode's placeholders."""
        missing = set(PLACEHOLDERS[self.mode]) - set(values)
        if missing:
            raise TemplateError(f"{self.source}: no value for {sorted(missing)}")
        return ChatPrompt(self.system, string.Template(self.user).substitute(values))


def default_template_path(mode: Mode, lang: str) -> Path:
    return TEMPLATE_DIR / f"grm_{mode}.{lang}.tmpl"


def _sections(text: str, source: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = line.strip()
        if header in ("[system]", "[user]"):
            current = sections.setdefault(header[1:-1], [])
        elif current is not None:
            current.append(line)
        elif header:
            raise TemplateError(f"{source}: text before the first [system] or [user] header")
    if "user" not in sections:
        raise TemplateError(f"{source}: expected a [user] section")
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def parse_template(text: str, mode: Mode, lang: Language, source: str) -> Template:
    """Parse and validate a template's text; errors say which rule it broke."""
    parts = _sections(text, source)
    user = parts["user"]
    system = parts.get("system", "")
    tmpl = string.Template(user)
    if not tmpl.is_valid():
        raise TemplateError(f"{source}: malformed $placeholder (write $$ for a literal $)")
    found = set(tmpl.get_identifiers())
    expected = set(PLACEHOLDERS[mode])
    if found != expected:
        raise TemplateError(
            f"{source}: a {mode} template must use exactly {sorted(expected)}; "
            f"missing {sorted(expected - found)}, unknown {sorted(found - expected)}"
        )
    whole = system + "\n" + user
    for word in (lang.good, lang.bad):
        if word not in whole:
            raise TemplateError(
                f"{source}: never names the verdict {word!r} of language {lang.code}"
            )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Template(mode, lang, system, user, source, digest)


def load_template(mode: Mode, lang: str, path: str | Path | None = None) -> Template:
    """The template for `mode` in `lang`: the file at `path`, else the packaged default."""
    lang_words = language(lang)
    file = Path(path) if path is not None else default_template_path(mode, lang)
    try:
        text = file.read_text("utf-8")
    except OSError as exc:
        raise TemplateError(f"cannot read {mode} template {file}: {exc.strerror}") from None
    return parse_template(text, mode, lang_words, str(file))
