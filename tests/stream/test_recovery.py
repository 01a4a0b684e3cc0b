"""Recovery episodes: the pure fold from messages, feedback, verdicts and time."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from scorer.types import Score, Verdict
from stream.accounting import pairs
from stream.conversation import (
    Bounds,
    ConversationState,
    Opened,
    Position,
    ReactionSeen,
    Tracking,
    apply_event,
    expire,
)
from stream.events import FeedbackEvent, TurnEvent
from stream.pipeline import BatchPlan, ToScore, settle
from stream.reactions import Patterns, Reaction
from stream.recovery import Closed, Outcome, Pending, Trigger

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TRACKING = Tracking(Patterns.load(), episode_max_turns=3)


class Chat:
    """Folds a scripted conversation and keeps every signal it produced."""

    def __init__(self) -> None:
        self.state = ConversationState()
        self.signals: list = []
        self.dialogues: dict = {}
        self.offset = 0
        self.clock = 0.0

    def _apply(self, event: TurnEvent | FeedbackEvent) -> None:
        applied = apply_event(
            self.state,
            event,
            Position("t", 0, self.offset),
            now_s=0,
            bounds=Bounds(8, 64),
            tracking=TRACKING,
        )
        self.offset += 1
        self.state = applied.state
        self.signals += applied.signals
        if applied.dialogue is not None:
            self.dialogues[event.turn_id] = applied.dialogue

    def say(self, role: str, tid: str, text: str, after_s: float = 40) -> Chat:
        self.clock += after_s
        self._apply(
            TurnEvent(
                schema_version=1,
                type="turn",
                conversation_id="c",
                turn_id=tid,
                role=role,  # type: ignore[arg-type]
                text=text,
                ts=T0 + timedelta(seconds=self.clock),
            )
        )
        return self

    def feedback(self, tid: str, kind: str) -> Chat:
        self.clock += 1
        self._apply(
            FeedbackEvent(
                schema_version=1,
                type="feedback",
                conversation_id="c",
                turn_id=tid,
                kind=kind,  # type: ignore[arg-type]
                ts=T0 + timedelta(seconds=self.clock),
            )
        )
        return self

    def judged(self, tid: str, verdict: str, p: float = 0.5) -> list:
        """Settle one scored turn as the worker does after a batch; returns the signals."""
        plan = BatchPlan(states={"c": self.state}, signals=[("c", s) for s in self.signals])
        event = TurnEvent(
            schema_version=1,
            type="turn",
            conversation_id="c",
            turn_id=tid,
            role="assistant",
            text="x",
            ts=T0 + timedelta(seconds=self.clock),
        )
        score = Score(p, Verdict(verdict), "grm", "v", 0.0)
        item = ToScore(event, self.dialogues[tid], None)  # type: ignore[arg-type]
        settled = settle(plan, [(item, [score])], grm_name="grm", open_below=None)
        self.state = plan.states["c"]
        new = [s for _, s in settled if s not in self.signals]
        self.signals = []
        return new

    def closed(self) -> list[Closed]:
        return [s for s in self.signals if isinstance(s, Closed)]


def opened_by_complaint() -> Chat:
    return (
        Chat()
        .say("user", "u1", "明天北京天气怎么样？")
        .say("assistant", "a1", "上海明天多云，气温12到18度。")
        .say("user", "u2", "不对，我问的是北京")
    )


def test_a_complaint_opens_an_episode_and_the_next_reply_is_scored_in_recovery_mode() -> None:
    chat = opened_by_complaint()
    reaction, opened = chat.signals
    assert isinstance(reaction, ReactionSeen) and reaction.reaction is Reaction.COMPLAINT
    assert isinstance(opened, Opened) and opened.episode.trigger is Trigger.REACTION
    assert opened.episode.id == "a1"
    chat.say("assistant", "a2", "抱歉，北京明天晴，气温3到10度。")
    recovery = chat.dialogues["a2"]
    assert recovery.is_recovery
    assert recovery.failed_reply == "上海明天多云，气温12到18度。"
    assert recovery.complaint == "不对，我问的是北京"
    assert chat.state.episode is not None and chat.state.episode.attempt == "a2"


def test_a_good_attempt_the_user_takes_well_is_recovered_in_either_order() -> None:
    # verdict first, then the user's reaction
    chat = opened_by_complaint().say("assistant", "a2", "抱歉，北京明天晴，3到10度。")
    assert chat.judged("a2", "good") == []
    chat.say("user", "u3", "好的谢谢！那后天呢？")
    [closed] = chat.closed()
    assert closed.outcome is Outcome.RECOVERED and closed.episode.attempts == 1
    assert closed.seconds == 80  # complaint at 120 s, reaction at 200 s
    # reaction first (same batch), then the verdict settles it
    chat = opened_by_complaint().say("assistant", "a2", "抱歉，北京明天晴，3到10度。")
    chat.say("user", "u3", "好的谢谢！那后天呢？")
    assert [type(s) for s in chat.signals][-1] is Pending
    [*_, closed] = chat.judged("a2", "good")
    assert isinstance(closed, Closed) and closed.outcome is Outcome.RECOVERED


def test_a_bad_verdict_or_another_complaint_fails_the_episode() -> None:
    chat = opened_by_complaint().say("assistant", "a2", "上海明天也可能下雨。")
    [closed] = chat.judged("a2", "bad")
    assert isinstance(closed, Closed) and closed.outcome is Outcome.FAILED
    assert closed.cause == "verdict" and chat.state.episode is None

    chat = opened_by_complaint().say("assistant", "a2", "上海明天也可能下雨。")
    chat.judged("a2", "good")
    chat.say("user", "u3", "还是不对！我说的是北京！")
    [closed] = chat.closed()
    assert closed.outcome is Outcome.FAILED and closed.cause == "complaint"
    # the same complaint does not open a second episode on the failed attempt
    assert chat.state.episode is None
    assert not any(isinstance(s, Opened) for s in chat.signals)


def test_abandon_and_dismiss_end_as_gave_up_unless_the_attempt_was_judged_bad() -> None:
    chat = opened_by_complaint().say("assistant", "a2", "上海明天也可能下雨。")
    chat.say("user", "u3", "算了")  # in the same batch as the attempt: its verdict decides
    [pending] = [s for s in chat.signals if isinstance(s, Pending)]
    assert pending.unless_bad is Outcome.GAVE_UP
    [*_, closed] = chat.judged("a2", "good")
    assert closed.outcome is Outcome.GAVE_UP and closed.cause == "dismiss"

    # A bad verdict judges the attempt, which came before the reaction: failed, in
    # whichever order the worker learns the two.
    chat = opened_by_complaint().say("assistant", "a2", "上海明天也可能下雨。")
    chat.say("user", "u3", "算了")
    [*_, closed] = chat.judged("a2", "bad")
    assert closed.outcome is Outcome.FAILED and closed.cause == "verdict"


def test_thumbs_down_opens_an_episode_and_a_thumbs_down_on_the_attempt_fails_it() -> None:
    chat = (
        Chat()
        .say("user", "u1", "Summarise this article in two lines")
        .say("assistant", "a1", "Here is a summary in ten bullet points ...")
        .feedback("a1", "thumbs_down")
    )
    [opened] = [s for s in chat.signals if isinstance(s, Opened)]
    assert opened.episode.trigger is Trigger.FEEDBACK
    chat.say("assistant", "a2", "Sorry: two lines. ...")
    chat.judged("a2", "good")
    chat.feedback("a2", "regenerate")
    [closed] = chat.closed()
    assert closed.outcome is Outcome.FAILED and closed.cause == "feedback"


def test_the_turn_limit_ends_an_episode_as_gave_up() -> None:
    chat = opened_by_complaint()
    for i in range(2, 6):  # limit 3: the 4th reply after the complaint is past it
        chat.say("assistant", f"a{i}", f"第{i}次回答")
    [closed] = chat.closed()
    assert closed.outcome is Outcome.GAVE_UP and closed.cause == "limit"
    assert closed.episode.attempts == 3


def test_time_gives_no_follow_up_and_ends_episodes() -> None:
    chat = Chat().say("user", "u1", "你好").say("assistant", "a1", "你好！")
    reply_ts = T0 + timedelta(seconds=chat.clock)
    same, signals = expire(
        chat.state, reply_ts + timedelta(seconds=59), follow_up_s=60, episode_s=600
    )
    assert signals == () and same is chat.state
    later, [seen] = expire(
        chat.state, reply_ts + timedelta(seconds=60), follow_up_s=60, episode_s=600
    )
    assert isinstance(seen, ReactionSeen) and seen.reaction is Reaction.NO_FOLLOW_UP
    assert later.awaiting is None and later.episode is None  # silence is not dissatisfaction

    # after a complaint and a good attempt, silence means recovered
    chat = opened_by_complaint().say("assistant", "a2", "北京明天晴。")
    chat.judged("a2", "good")
    t = T0 + timedelta(seconds=chat.clock + 60)
    _, signals = expire(chat.state, t, follow_up_s=60, episode_s=600)
    assert [s.outcome for s in signals if isinstance(s, Closed)] == [Outcome.RECOVERED]

    # a thumbs-down and then nothing: the user gave up (their silence about the failed turn)
    chat = (
        Chat().say("user", "u1", "hi").say("assistant", "a1", "...").feedback("a1", "thumbs_down")
    )
    t = T0 + timedelta(seconds=chat.clock + 60)
    state, signals = expire(chat.state, t, follow_up_s=60, episode_s=600)
    [closed] = [s for s in signals if isinstance(s, Closed)]
    assert closed.outcome is Outcome.GAVE_UP and state.episode is None

    # the episode time limit on its own
    chat = opened_by_complaint()
    t = T0 + timedelta(seconds=chat.clock + 600)
    state, signals = expire(replace(chat.state, awaiting=None), t, follow_up_s=60, episode_s=600)
    [closed] = signals
    assert isinstance(closed, Closed) and closed.cause == "timeout"


def test_episode_state_round_trips_through_json() -> None:
    chat = opened_by_complaint().say("assistant", "a2", "北京明天晴。")
    chat.judged("a2", "good")
    again = ConversationState.from_json(chat.state.to_json())
    assert again == chat.state and again.episode is not None and again.episode.verdict == "good"


def test_verdicts_pair_with_reactions_and_can_open_episodes_when_asked() -> None:
    chat = Chat().say("user", "u1", "推荐一本书").say("assistant", "a1", "《三体》。")
    plan = BatchPlan(states={"c": chat.state})
    event = TurnEvent(
        schema_version=1,
        type="turn",
        conversation_id="c",
        turn_id="a1",
        role="assistant",
        text="x",
        ts=T0 + timedelta(seconds=chat.clock),
    )
    judge = Score(0.1, Verdict.BAD, "ux_judge", "v", 0.0)
    item = ToScore(event, chat.dialogues["a1"], None)  # type: ignore[arg-type]
    settled = settle(plan, [(item, [judge])], grm_name="grm", open_below=0.2)
    [(_, opened)] = settled
    assert isinstance(opened, Opened) and opened.episode.trigger is Trigger.VERDICT
    state = plan.states["c"]
    assert state.awaiting is not None and state.awaiting.verdicts == (("ux_judge", "bad"),)

    # the user's complaint later pairs with the stored verdict (agreement), and does not
    # open a second episode
    chat.state = state
    chat.say("user", "u2", "不是这个，我要推理小说")
    [seen] = [s for s in chat.signals if isinstance(s, ReactionSeen)]
    assert seen.verdicts == (("ux_judge", "bad"),)
    assert not any(isinstance(s, Opened) for s in chat.signals)
    plan = BatchPlan(states={"c": chat.state}, signals=[("c", s) for s in chat.signals])
    paired = pairs(settle(plan, [], grm_name="grm", open_below=0.2))
    assert [(p.scorer, p.verdict, p.dissatisfied) for p in paired] == [("ux_judge", "bad", True)]
