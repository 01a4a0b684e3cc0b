"""UX-Judge: predicts whether the user liked an assistant reply, on every live turn.

Design (v4). A frozen multilingual E5 encoder reads the context (history + user message,
with the "query: " prefix) and the reply ("passage: ") as two separate inputs; their
mean-pooled, L2-normalised embeddings c and r become the feature row [c, r, c*r, |c-r|]
(4 x 384 numbers), and a linear head (an ensemble of L2-penalised logistic regressions,
cross-fitted and temperature-calibrated, see scorer.training) maps it to P(liked).

Why this design: leave-one-writer-out on the multi-writer corpus (benchmark/data/writers,
`uxmon crossval`) is the only evidence that counts, since records by one writer teach
their writer's habits. On the six writers used to choose the method (550 records at the
time), the v3 design (24 hand-made relation and text-check features + an MLP) reached
AUROC 0.60: its features had been tuned on one generator's records and did not transfer.
The embedding row with a logistic head reached 0.79, an MLP on the same row 0.76 (it
overfits more), adding the v3 features to the row gained 0.008 (within noise), and
distilling the trained GRM's scores into the row 0.004 (1,250 records): both left out.
On all eight writers the shipped recipe reaches 0.83 (README, docs/validation.md).

- Frozen encoder: the trained artefact is a head of a few KB that we can commit, version
  and retrain in minutes on a CPU.
- Separate inputs: the context and the reply each get the encoder's full 512-token
  window, so a long history can never crowd out the reply. The context is cut from its
  oldest end; the reply keeps its beginning (what the user read first).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.encoder import PASSAGE, QUERY, E5Encoder, progress_bar
from scorer.errors import InvalidDialogueError, ScorerError
from scorer.heads import DEFAULT_HEAD, Head, load_head, read_meta
from scorer.runtime import Runtime
from scorer.types import Dialogue, Score, Turn, Verdict

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

NAME = "ux_judge"
ROLE_LABELS = {"user": "user: ", "assistant": "assistant: "}
# Changing anything that alters feature values for the same dialogue must change this name,
# so a head trained on the old features is refused instead of silently mis-scoring.
FEATURE_SPEC: dict[str, Any] = {
    "name": "uxj-embed-v4",
    "context_prefix": QUERY,
    "reply_prefix": PASSAGE,
    "role_labels": ROLE_LABELS,
    "features": "[c, r, c*r, |c-r|] of mean-pooled L2-normalised embeddings",
    "context_truncation": "oldest tokens first",
    "reply_truncation": "keep beginning",
}
_CHUNK = 256  # dialogues featurized together: bounds memory held at once


class HeadMismatchError(ScorerError):
    """The head was trained on a different encoder or feature spec than the one in use."""


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """Token ids the encoder will embed for one dialogue, after truncation.

    `user_start` / `reply_start` index the first token of the user's message in
    `context_ids` and of the reply text in `reply_ids` (after labels and prefixes).
    """

    context_ids: list[int]
    reply_ids: list[int]
    user_start: int
    reply_start: int
    context_truncated: bool
    reply_truncated: bool


def _clean(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidDialogueError(f"{what}: expected str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a broken decoder upstream
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _validate(dialogue: object) -> Dialogue:
    if not isinstance(dialogue, Dialogue):
        raise InvalidDialogueError(f"expected a Dialogue, got {type(dialogue).__name__}")
    for i, turn in enumerate(dialogue.history):
        if not isinstance(turn, Turn) or turn.role not in ROLE_LABELS:
            raise InvalidDialogueError(
                f"history[{i}]: expected a Turn with role user or assistant, "
                f"got {type(turn).__name__}"
                + (f" with role {turn.role!r}" if isinstance(turn, Turn) else "")
            )
    return dialogue


def context_turns(dialogue: Dialogue) -> list[tuple[str, str]]:
    """(role, text) oldest first, ending with the user's message; in recovery mode the
    failed reply is the assistant turn just before the complaint."""
    turns: list[tuple[str, str]] = [
        (t.role, _clean(t.text, "history turn")) for t in dialogue.history
    ]
    failed = dialogue.failed_reply
    if failed is not None and (not turns or turns[-1] != ("assistant", failed)):
        turns.append(("assistant", _clean(failed, "failed_reply")))
    turns.append(("user", _clean(dialogue.user_message, "user_message")))
    return turns


def represent(dialogues: Sequence[Dialogue], encoder: E5Encoder) -> list[JudgeInput]:
    """Truncate each dialogue to what the encoder sees: the newest context, the reply's start.

    Labels, prefixes and texts are tokenized apiece and joined as ids: every piece starts
    a new word, so this equals tokenizing the joined text, and the spans stay known.
    """
    budget = encoder.max_content_tokens
    query_ids, *label_ids = encoder.tokenize([QUERY.rstrip(), *ROLE_LABELS.values()])
    labels = dict(zip(ROLE_LABELS, label_ids, strict=True))
    turns = [context_turns(_validate(d)) for d in dialogues]
    texts = iter(encoder.tokenize([text for ts in turns for _, text in ts], keep="tail"))
    passage_ids, reply_room, replies = _reply_tokens([d.reply for d in dialogues], encoder)
    out: list[JudgeInput] = []
    for ts, reply in zip(turns, replies, strict=True):
        segments = [labels[role] + next(texts) for role, _ in ts]
        room = budget - len(query_ids)
        kept: list[int] = []
        truncated = False
        for seg in reversed(segments):  # newest first; the user's message is the newest
            if len(seg) <= room:
                kept = seg + kept
                room -= len(seg)
                continue
            kept = seg[len(seg) - room :] + kept if room > 0 else kept
            truncated = True
            break
        context = query_ids + kept
        user_len = len(segments[-1]) - len(labels["user"])
        out.append(
            JudgeInput(
                context_ids=context,
                reply_ids=passage_ids + reply[:reply_room],
                user_start=max(len(query_ids), len(context) - user_len),
                reply_start=len(passage_ids),
                context_truncated=truncated,
                reply_truncated=len(reply) > reply_room or len(reply) >= budget,
            )
        )
    return out


def reply_input_ids(replies: Sequence[str], encoder: E5Encoder) -> list[list[int]]:
    """The encoder input `represent` makes of each reply ("passage: " and the reply's
    start), for others that read the judge's reply embedding (the encoder caches it)."""
    passage_ids, room, tokens = _reply_tokens(replies, encoder)
    return [passage_ids + ids[:room] for ids in tokens]


def _reply_tokens(
    replies: Sequence[object], encoder: E5Encoder
) -> tuple[list[int], int, list[list[int]]]:
    """The passage prefix's ids, the room a reply has after it, and each reply's ids (at
    most the encoder's budget: the caller cuts them to the room)."""
    (passage_ids,) = encoder.tokenize([PASSAGE.rstrip()])
    room = encoder.max_content_tokens - len(passage_ids)
    cleaned = [_clean(reply, "reply") for reply in replies]
    return passage_ids, room, encoder.tokenize(cleaned, keep="head")


def featurize(
    dialogues: Sequence[Dialogue], encoder: E5Encoder, progress: bool = False
) -> np.ndarray:
    """Feature rows (float32, 4 x the encoder's dim) for the head."""
    import numpy as np

    rows = np.zeros((len(dialogues), feature_dim(encoder.dim)), dtype=np.float32)
    bar = progress_bar(len(dialogues), "featurizing") if progress else None
    for lo in range(0, len(dialogues), _CHUNK):
        inputs = represent(dialogues[lo : lo + _CHUNK], encoder)
        n = len(inputs)
        pooled = encoder.embed_ids([x.context_ids for x in inputs] + [x.reply_ids for x in inputs])
        c, r = pooled[:n], pooled[n:]
        rows[lo : lo + n] = np.concatenate([c, r, c * r, np.abs(c - r)], axis=1)
        if bar is not None:
            bar.update(n)
    if bar is not None:
        bar.close()
    return rows


def feature_dim(encoder_dim: int) -> int:
    return 4 * encoder_dim


class UXJudge:
    """Scorer "ux_judge": calibrated P(user liked the reply) from a frozen encoder + linear head.

    `model`: encoder folder or model id (default: the bundled multilingual-e5-small);
    `head`: head directory (default: the head shipped in scorer/heads/ux_judge_default).
    """

    name = NAME

    def __init__(
        self,
        model: str | None = None,
        head: str | None = None,
        cache_dir: str | Path | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        self.head_dir = Path(head) if head else DEFAULT_HEAD
        meta = read_meta(self.head_dir)
        if meta.get("feature_spec", {}).get("name") != FEATURE_SPEC["name"]:
            raise HeadMismatchError(
                f"head {self.head_dir} expects features "
                f"{meta.get('feature_spec', {}).get('name')!r}; this uxmon computes "
                f"{FEATURE_SPEC['name']!r}; retrain the head"
            )
        self._expected_encoder = str(meta["encoder"]["fingerprint"])
        family = str(meta["encoder"].get("family", "enc"))
        self.version = f"{family}-{self._expected_encoder[:8]}+head-{str(meta['version'])[:8]}"
        self.runtime = runtime or Runtime()
        self.encoder = E5Encoder(
            model, cache_dir=Path(cache_dir) if cache_dir else None, runtime=self.runtime
        )
        self._head: Head | None = None

    def load(self) -> None:
        if self._head is not None:
            return
        self.encoder.load()
        if self.encoder.fingerprint != self._expected_encoder:
            raise HeadMismatchError(
                f"head {self.head_dir} was trained on encoder {self._expected_encoder[:8]} "
                f"but the loaded encoder is {self.encoder.fingerprint[:8]}; "
                "use the encoder the head names or retrain the head"
            )
        head = load_head(self.head_dir)
        if head.mean.numel() != feature_dim(self.encoder.dim):
            raise HeadMismatchError(
                f"head {self.head_dir} reads {head.mean.numel()} features; the encoder "
                f"produces {feature_dim(self.encoder.dim)}"
            )
        self._head = head
        log.info("ux_judge loaded: version %s, threshold %.3f", self.version, head.threshold)

    @property
    def threshold(self) -> float:
        """The calibrated P(liked) at and above which the verdict is GOOD."""
        if self._head is None:
            raise ScorerError("ux_judge.threshold read before load()")
        return self._head.threshold

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        import torch

        if self._head is None:
            raise ScorerError("ux_judge.score() called before load()")
        if not batch:
            return []
        start = time.perf_counter()
        features = featurize(batch, self.encoder)
        head = self._head
        with torch.inference_mode():
            logits = head.logits(torch.from_numpy(features)).to(torch.float64)
            probs = torch.sigmoid(logits / head.temperature).tolist()
        elapsed = time.perf_counter() - start
        return [
            Score(
                p_satisfied=float(p),
                verdict=Verdict.GOOD if p >= head.threshold else Verdict.BAD,
                scorer=self.name,
                version=self.version,
                latency_s=elapsed,  # every turn of the batch waited for the whole batch
                extras={"logit": float(z), "threshold": head.threshold},
            )
            for p, z in zip(probs, logits.tolist(), strict=True)
        ]
