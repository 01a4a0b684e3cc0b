"""The generative reward model (GRM) scorer: a judge LM's good/bad verdict, read as a score.

Pointwise, as UXBench defines it: the model sees the context, the user's message and the
reply, and the score is P(good) / (P(good) + P(bad)) over the two verdict tokens at the
first answer position. In recovery mode the failed reply and the user's complaint take
the place of the context and the message. The verdict applies a threshold calibrated on
labelled data (see scorer.grm_threshold); the raw margin travels in Score.extras.

Long inputs are fitted into a prompt budget: the context loses its oldest part first;
the user's message is capped at a quarter of the budget; the reply is cut (in the middle,
keeping its start and end) only when it alone would overflow what is left.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scorer.backends import (
    BackendConfig,
    TokenMeter,
    VerdictBackend,
    VerdictLogprobs,
    create_backend,
)
from scorer.errors import InvalidDialogueError, ScorerError
from scorer.grm_threshold import DEFAULT_THRESHOLD_PATH, Threshold, load_threshold, sigmoid
from scorer.prompts import (
    PLACEHOLDERS,
    ChatPrompt,
    Language,
    Mode,
    Template,
    load_template,
)
from scorer.prompts import language as language_words
from scorer.runtime import Runtime
from scorer.types import Dialogue, Score, Turn, Verdict
from scorer.verdict_head import (
    DEFAULT_VERDICT_HEAD,
    THRESHOLD_FILE,
    VerdictHead,
    read_head_meta,
)

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)


class GRM:
    """Scorer protocol implementation. Score.extras carries `margin` (log P(good) - log
    P(bad)), `raw_score` (the uncalibrated ratio), `verdict_mass` (P(good) + P(bad): how
    much the model actually answered with a verdict) and `unparseable`. An unparseable
    verdict (possible only over HTTP, when neither token is among the returned candidates)
    gets p_satisfied = NaN and extras["unparseable"] = 1; benchmarks must count it wrong.
    """

    name = "grm"

    def __init__(
        self,
        *,
        backend: str = "local",
        model: str | None = None,
        template: str | Path | None = None,
        recovery_template: str | Path | None = None,
        language: str = "zh",
        threshold: float | None = None,
        runtime: Runtime | None = None,
        cache_dir: str | Path | None = None,
        max_prompt: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        model_name: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        concurrency: int = 8,
        slow_call_s: float = 5.0,
        breaker_cooldown_s: float = 30.0,
        verdict_head: str | Path | bool = True,
    ) -> None:
        """`template` / `recovery_template` override the packaged template files;
        `threshold` (a cut on the score in (0, 1)) overrides the calibrated default;
        `max_prompt` is the prompt budget in the backend's units (tokens locally, characters
        over HTTP). Over HTTP an answer slower than `slow_call_s` counts as a failure toward
        the circuit breaker, which then rests `breaker_cooldown_s`. `verdict_head`: True =
        the trained head shipped with uxmon (local backend only), False = the base model's
        own verdict rows, or a head directory."""
        self._language: Language = language_words(language)
        self._head_dir = _verdict_head_dir(verdict_head, backend, model)
        self._head_required = verdict_head is not True  # the default is best effort
        self._templates: dict[Mode, Template] = {
            "reply": load_template("reply", language, template),
            "recovery": load_template("recovery", language, recovery_template),
        }
        default_threshold = DEFAULT_THRESHOLD_PATH
        if self._head_dir is not None:
            default_threshold = self._head_dir / THRESHOLD_FILE
        self.threshold = (
            Threshold.from_score(threshold)
            if threshold is not None
            else load_threshold(default_threshold)
        )
        self._head: VerdictHead | None = None
        self._backend: VerdictBackend = create_backend(
            backend,
            BackendConfig(
                language=self._language,
                model=model,
                runtime=runtime,
                cache_dir=Path(cache_dir) if cache_dir is not None else None,
                base_url=base_url,
                api_key=api_key,
                model_name=model_name,
                timeout_s=timeout_s,
                max_retries=max_retries,
                concurrency=concurrency,
                slow_call_s=slow_call_s,
                breaker_cooldown_s=breaker_cooldown_s,
            ),
        )
        self._max_prompt = max_prompt or self._backend.default_max_prompt
        self._overhead: dict[Mode, int] = {}
        self._loaded = False
        self._warn_if_threshold_foreign(threshold is not None)

    @property
    def base_version(self) -> str:
        """The base model, templates and prompt budget: what a verdict head is trained on."""
        prompts = hashlib.sha256(
            "".join(t.digest for t in self._templates.values()).encode()
        ).hexdigest()[:8]
        return f"{self._backend.model_id}+p{prompts}.{self._max_prompt}"

    @property
    def version(self) -> str:
        """Changes whenever the weights, the verdict head, a template, the language, the
        prompt budget or the cut change; short and fixed per deployment, so it can be a
        metric label."""
        head = f"+h{self._head_version()}" if self._head_dir is not None else ""
        return f"{self.base_version}{head}+t{self.threshold.score:.4g}"

    def _head_version(self) -> str:
        if self._head is not None:
            return self._head.version
        return str(read_head_meta(self._head_dir).get("version", "?"))[:8] if self._head_dir else ""

    def _warn_if_threshold_foreign(self, explicit: bool) -> None:
        """A calibrated cut is only valid for the setup it was fitted on."""
        fitted_for = self.threshold.meta.get("version_without_threshold")
        if explicit or fitted_for is None:
            return
        if fitted_for not in (self.version.rsplit("+t", 1)[0], self.base_version):
            log.warning(
                "GRM threshold in %s was calibrated for %s, not this setup; recalibrate",
                DEFAULT_THRESHOLD_PATH,
                fitted_for,
            )

    def load(self) -> None:
        self._backend.load()
        if self._head_dir is not None:
            use = getattr(self._backend, "use_verdict_head", None)
            if use is not None:
                self._head = use(self._head_dir)
            elif self._head_required:
                raise ScorerError("a verdict head needs the local backend")
            else:  # a stand-in backend: the shipped head has nothing to adapt
                self._head_dir = None
        meter = self._backend.meter()
        for mode, tmpl in self._templates.items():
            empty = tmpl.render(dict.fromkeys(PLACEHOLDERS[mode], ""))
            self._overhead[mode] = meter.count_prompt(empty)
            if self._overhead[mode] >= self._max_prompt // 2:
                raise ScorerError(
                    f"the {mode} template takes {self._overhead[mode]} of a prompt budget of "
                    f"{self._max_prompt}; raise max_prompt or shorten the template"
                )
        self._loaded = True

    def health(self) -> dict[str, str | float]:
        """The backend's state (for HTTP: the circuit breaker), for a health check or gauge."""
        return self._backend.health()

    def close(self) -> None:
        closer = getattr(self._backend, "close", None)
        if closer is not None:
            closer()

    def prompt(self, dialogue: Dialogue) -> ChatPrompt:
        """The chat prompt the model sees for `dialogue` (fitted into the budget)."""
        if not self._loaded:
            raise ScorerError("GRM is not loaded; call load() first")
        _validate(dialogue)
        mode: Mode = "recovery" if dialogue.is_recovery else "reply"
        values = _fit(
            dialogue,
            mode,
            self._language,
            self._backend.meter(),
            self._max_prompt - self._overhead[mode],
        )
        return self._templates[mode].render(values)

    def answer_states(self, batch: Sequence[Dialogue]) -> tuple[np.ndarray, np.ndarray]:
        """(last hidden state at the answer position, the base model's margin) per dialogue:
        what a verdict head trains on. Local backend only."""
        states = getattr(self._backend, "answer_states", None)
        direction = getattr(self._backend, "base_direction", None)
        if states is None or direction is None:
            raise ScorerError("training a verdict head needs the local backend")
        rows = states([self.prompt(d) for d in batch])
        return rows, rows @ direction()

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        if not batch:
            return []
        started = time.perf_counter()
        prompts = [self.prompt(d) for d in batch]
        logprobs = self._backend.verdict_logprobs(prompts)
        elapsed = time.perf_counter() - started
        version = self.version
        return [self._to_score(lp, elapsed, version) for lp in logprobs]

    def _to_score(self, lp: VerdictLogprobs, elapsed: float, version: str) -> Score:
        good = lp.good if lp.good is not None else lp.floor
        bad = lp.bad if lp.bad is not None else lp.floor
        if (lp.good is None and lp.bad is None) or good is None or bad is None:
            # Neither verdict among the candidates: there is no score to give. The verdict
            # field cannot be empty, so callers must check extras["unparseable"].
            return Score(
                math.nan,
                Verdict.BAD,
                self.name,
                version,
                elapsed,
                {"unparseable": 1.0},
            )
        margin = good - bad
        extras = {"margin": margin, "raw_score": sigmoid(margin), "unparseable": 0.0}
        if lp.good is not None and lp.bad is not None:
            extras["verdict_mass"] = math.exp(lp.good) + math.exp(lp.bad)
        else:
            extras["bounded"] = 1.0  # one verdict missing: the margin is a bound
        verdict = Verdict.GOOD if margin >= self.threshold.margin else Verdict.BAD
        return Score(self.threshold.p_good(margin), verdict, self.name, version, elapsed, extras)


def _verdict_head_dir(choice: str | Path | bool, backend: str, model: str | None) -> Path | None:
    if choice is False:
        return None
    if choice is True:
        # The shipped head adapts the bundled local model only; another local model or a
        # served one keeps its own verdict rows.
        shipped = DEFAULT_VERDICT_HEAD.is_dir() and backend == "local" and model is None
        return DEFAULT_VERDICT_HEAD if shipped else None
    return Path(choice)


def _validate(d: Dialogue) -> None:
    texts: list[object] = [d.user_message, d.reply, *(t.text for t in d.history)]
    if d.failed_reply is not None:
        texts.append(d.failed_reply)
    if d.complaint is not None:
        texts.append(d.complaint)
    if not all(isinstance(t, str) for t in texts):
        raise InvalidDialogueError(f"dialogue {d.id!r}: every message and reply must be a str")


def _render_history(history: Sequence[Turn], lang: Language) -> str:
    labels = {"user": lang.user_label, "assistant": lang.assistant_label}
    sep = "：" if lang.code == "zh" else ": "
    return "\n".join(f"{labels[t.role]}{sep}{t.text.strip()}" for t in history)


def _middle_cut(text: str, budget: int, meter: TokenMeter, lang: Language) -> str:
    """Keep the start and the end of a too-long text, marking the cut."""
    if meter.count(text) <= budget:
        return text
    marker = meter.count(lang.elided)
    if budget <= marker + 2:
        return meter.head(text, max(budget, 0))
    keep = budget - marker
    head = meter.head(text, keep - keep // 2)
    tail = meter.tail(text, keep // 2)
    return head + lang.elided + tail


def _oldest_cut(text: str, budget: int, meter: TokenMeter, lang: Language) -> str:
    """Drop the oldest part of the context; the most recent turns matter most."""
    if meter.count(text) <= budget:
        return text
    marker = meter.count(lang.elided)
    if budget <= marker + 2:
        return lang.elided.strip()
    return lang.elided.lstrip() + meter.tail(text, budget - marker)


def _fit(d: Dialogue, mode: Mode, lang: Language, meter: TokenMeter, room: int) -> dict[str, str]:
    """Placeholder values for `d` whose total size stays within `room` (approximately:
    token counts of parts and of their concatenation can differ by a few tokens)."""

    def size(text: str) -> int:
        return meter.count(text)

    room = max(room, 8)
    context = _render_history(d.history, lang)
    reply = d.reply if d.reply.strip() else lang.empty_text
    if mode == "recovery":
        complaint: str = d.user_message if d.complaint is None else d.complaint
        message = complaint if complaint.strip() else lang.empty_text
        failed_text: str = d.failed_reply or ""
        failed = failed_text if failed_text.strip() else lang.empty_text
        message_room = min(size(message), room // 4)
        failed_reserve = min(size(failed), room // 4)
        reply_room = min(size(reply), room - message_room - failed_reserve)
        failed_room = min(size(failed), room - message_room - reply_room)
        context_room = room - message_room - reply_room - failed_room
        return {
            "context": _oldest_cut(context, context_room, meter, lang) or lang.no_context,
            "failed_reply": _middle_cut(failed, failed_room, meter, lang),
            "complaint": _middle_cut(message, message_room, meter, lang),
            "reply": _middle_cut(reply, reply_room, meter, lang),
        }
    message = d.user_message if d.user_message.strip() else lang.empty_text
    message_room = min(size(message), room // 4)
    reply_room = min(size(reply), room - message_room)
    context_room = room - message_room - reply_room
    return {
        "context": _oldest_cut(context, context_room, meter, lang) or lang.no_context,
        "user_message": _middle_cut(message, message_room, meter, lang),
        "reply": _middle_cut(reply, reply_room, meter, lang),
    }
