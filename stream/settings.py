"""The one frozen settings object of the service. Every field reads `UXMON_<NAME>` from the env.

The CLI only overrides fields; nothing else reads the environment. Settings are never
logged whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from benchmark.taxonomy import SCENARIOS


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
    conversation_ttl_s: float = Field(
        3600.0, gt=0, description="Idle conversations are evicted from state after this long."
    )
    eviction_interval_s: float = Field(60.0, gt=0, description="How often eviction runs.")
    include_text: bool = Field(
        False, description="Copy turn text into scored records (off: no user text leaves state)."
    )

    # --- Limits on events ----------------------------------------------------------------
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
    model_cache: Path | None = Field(None, description="Where prepared models are cached.")
    threads: int = Field(0, ge=0, description="Torch threads for local models (0 = all cores).")
    dtype: str = Field("auto", description="auto | bfloat16 | float32 for local models.")

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
    datadir: Path = Field(Path("/tmp/uxmon"), description="faust's local data directory.")
    log_level: str = Field("INFO", description="DEBUG | INFO | WARNING | ERROR.")

    @field_validator("scorers", "scenarios", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _split_csv(value)

    @field_validator("scorers")
    @classmethod
    def _some_scorer(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one scorer is required")
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

    def broker_urls(self) -> list[str]:
        return [f"kafka://{server.strip()}" for server in self.broker.split(",")]
