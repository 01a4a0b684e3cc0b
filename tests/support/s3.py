"""S3 storage for the embedded broker (moto on loopback): topics, records and committed
offsets survive a broker restart, and retention can be played by deleting old batches."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from stream.broker import EmbeddedBroker, free_port

BUCKET = "tansu"
CLUSTER = "tansu_cluster"  # tansu's default cluster id


class S3:
    """`with S3(workdir) as s3:` runs moto; `s3.broker()` is a tansu storing there."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> S3:
        binary = shutil.which("moto_server")
        if binary is None:
            raise RuntimeError("moto_server not found: pip install 'moto[server]'")
        with (self.workdir / "moto.log").open("ab") as log:
            self.process = subprocess.Popen(
                [binary, "-H", "127.0.0.1", "-p", str(self.port)], stdout=log, stderr=log
            )
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(self.url, timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    where = self.workdir / "moto.log"
                    raise RuntimeError(f"moto did not start; see {where}") from None
                time.sleep(0.1)
        self.client().create_bucket(Bucket=BUCKET)
        return self

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )

    def broker(self, port: int | None = None, advertised_port: int | None = None) -> EmbeddedBroker:
        """A tansu on this storage (not started); the same `port` again after a restart.
        `advertised_port`: where clients are told to connect (a proxy in front of it)."""
        return EmbeddedBroker(
            port=port,
            storage=f"s3://{BUCKET}/",
            env=self.tansu_env(),
            log_path=self.workdir / "tansu-s3.log",
            advertised_port=advertised_port,
        )

    def tansu_env(self) -> dict[str, str]:
        """What tansu's S3 engine reads (STACK.md); moto accepts any credentials."""
        return {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_ENDPOINT": self.url,
            "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1",
        }

    def delete_below(self, topic: str, partition: int, offset: int) -> int:
        """What retention does: the batches that start below `offset` are deleted and the
        log starts at `offset` (a batch boundary). Returns how many batches went."""
        client = self.client()
        base = f"clusters/{CLUSTER}/topics/{topic}/partitions/{partition:010d}/"
        listing = client.list_objects_v2(Bucket=BUCKET, Prefix=base + "records/")
        doomed = [
            item["Key"]
            for item in listing.get("Contents", [])
            if int(Path(item["Key"]).stem) < offset
        ]
        for key in doomed:
            client.delete_object(Bucket=BUCKET, Key=key)
        watermark = json.loads(
            client.get_object(Bucket=BUCKET, Key=base + "watermark.json")["Body"].read()
        )
        watermark["low"] = offset
        client.put_object(
            Bucket=BUCKET, Key=base + "watermark.json", Body=json.dumps(watermark).encode()
        )
        return len(doomed)
