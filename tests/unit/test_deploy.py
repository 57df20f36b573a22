"""The deploy files agree with the code they deploy.

Docker, Compose and Kubernetes do not run here. What can be checked without them: every
YAML file parses; every variable the files set is a setting of ``bot.settings`` (a typo
fails); every command they run is a real ``trendbot`` command; health checks and probes
ask ``/healthz`` on the port the HTTP server listens on; the pieces refer to each other by
the right names.
"""

from __future__ import annotations

import http.server
import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from bot.__main__ import HANDLERS
from bot.channels.slack import client as slack
from bot.cli.parser import build_parser
from bot.commands import registry
from tests.conftest import ROOT, Settings

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "docker-compose.yml"
UNIT = DEPLOY / "trendbot.service"
SLACK_MANIFEST = DEPLOY / "slack-app-manifest.yml"

SETTINGS = frozenset(name.upper() for name in Settings.model_fields)
# Variables of the Python runtime and of pip that the deploy files may set beside settings.
RUNTIME_VARIABLES = frozenset(
    {
        "PATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PIP_NO_CACHE_DIR",
        "PIP_DISABLE_PIP_VERSION_CHECK",
    }
)
HTTP_PORT = Settings.model_fields["http_port"].default
SLACK_COMMAND = Settings.model_fields["slack_command"].default
HEALTH_PATH = "/healthz"
VM_EXECUTABLE = "/opt/trendbot/.venv/bin/trendbot"
# Every bot event needs the scope Slack names on its page (https://api.slack.com/events/…).
SLACK_EVENT_SCOPES = {
    "app_uninstalled": None,
    "tokens_revoked": None,
    "member_joined_channel": "channels:read",
    "channel_archive": "channels:read",
    "channel_deleted": "channels:read",
    "channel_unarchive": "channels:read",
    "group_archive": "groups:read",
    "group_deleted": "groups:read",
    "group_unarchive": "groups:read",
    "app_home_opened": None,  # https://api.slack.com/events/app_home_opened: no scope
}

YAML_FILES = sorted(DEPLOY.rglob("*.yml")) + sorted(DEPLOY.rglob("*.yaml"))


# ------------------------------------------------------------------------------ helpers


def _unknown_variables(names: set[str]) -> set[str]:
    """The names that are neither a setting nor a runtime variable: typos."""
    return names - SETTINGS - RUNTIME_VARIABLES


def _assert_cli(argv: list[str]) -> None:
    """``argv`` (after ``trendbot``) is accepted by the real command-line parser."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"`trendbot {shlex.join(argv)}` is not a trendbot command")
    assert args.command in HANDLERS, argv


@cache
def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order; continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    current = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1].rstrip() + " "
            continue
        current += stripped
        keyword, _, rest = current.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        current = ""
    assert not current, "the Dockerfile ends inside a continuation line"
    return instructions


@cache
def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in _dockerfile():
        if keyword == "FROM":
            stages.append([])
        assert stages, "an instruction before the first FROM"
        stages[-1].append((keyword, rest))
    return stages


def _last(stage: list[tuple[str, str]], keyword: str) -> str:
    found = [rest for kw, rest in stage if kw == keyword]
    assert found, f"no {keyword} in the runtime stage"
    return found[-1]


def _env_names(stage_env: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for token in shlex.split(stage_env):
        name, sep, value = token.partition("=")
        assert sep, f"ENV {stage_env!r}: use the NAME=value form"
        pairs[name] = value
    return pairs


def _referenced(text: str) -> set[str]:
    """Variables a shell or Python snippet reads: ``$NAME``, ``${NAME}``, ``environ...``."""
    shell = re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", text)
    python = re.findall(r"environ(?:\.get\(|\[)\s*['\"]([A-Z_][A-Z0-9_]*)", text)
    return set(shell) | set(python)


def _copies(stage: list[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY from the build context (not ``--from``)."""
    copies = []
    for keyword, rest in stage:
        if keyword != "COPY":
            continue
        tokens = shlex.split(rest)
        if any(token.startswith("--from") for token in tokens):
            continue
        paths = [token for token in tokens if not token.startswith("--")]
        copies.append((paths[:-1], paths[-1]))
    return copies


def _entry_commands(cmd: list[str] | None = None) -> list[list[str]]:
    """The ``trendbot`` argument lists the image's entry point runs, in order.

    ``cmd`` replaces the image's CMD (as Kubernetes ``args`` does); ``"$@"`` in the script
    expands to it.
    """
    runtime = _stages()[-1]
    entrypoint = json.loads(_last(runtime, "ENTRYPOINT"))
    if cmd is None:
        cmd = json.loads(_last(runtime, "CMD"))
    script = next(
        (ROOT / sources[0] for sources, dest in _copies(runtime) if dest == entrypoint[0]),
        None,
    )
    assert script is not None, f"no COPY puts the entry point script at {entrypoint[0]}"
    commands: list[list[str]] = []
    for line in script.read_text().splitlines():
        match = re.match(r"^\s*(?:exec\s+)?trendbot\s+(.*)$", line)
        if match:
            words = shlex.split(match[1])
            commands.append([arg for word in words for arg in (cmd if word == "$@" else [word])])
    return commands


@cache
def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {str(k): str(v) for k, v in env.items()}


@cache
def _unit() -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in UNIT.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("["):
            current = sections.setdefault(stripped.strip("[]"), [])
            continue
        assert current is not None, f"{line!r} is outside a section"
        key, sep, value = stripped.partition("=")
        assert sep, f"{line!r} is not KEY=value"
        current.append((key.strip(), value.strip()))
    return sections


def _unit_value(section: str, key: str) -> str:
    values = [v for k, v in _unit()[section] if k == key]
    assert len(values) == 1, f"[{section}] {key}= appears {len(values)} times"
    return values[0]


@cache
def _k8s(name: str) -> dict[str, Any]:
    documents = [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]
    assert len(documents) == 1, f"{name}: one object expected"
    doc: dict[str, Any] = documents[0]
    return doc


def _pod() -> dict[str, Any]:
    spec: dict[str, Any] = _k8s("deployment.yaml")["spec"]["template"]["spec"]
    return spec


def _container() -> dict[str, Any]:
    containers = _pod()["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _container_port(port: int | str) -> int:
    """A probe's or the Service's port, by number or by the container port's name."""
    ports = {p["name"]: p["containerPort"] for p in _container()["ports"]}
    if isinstance(port, str):
        assert port in ports, f"no container port named {port!r}"
        return int(ports[port])
    return port


def _secret_data() -> dict[str, str]:
    secret = _k8s("secret.example.yaml")
    return {**secret.get("data", {}), **secret.get("stringData", {})}


@pytest.fixture
def health_server() -> Iterator[tuple[int, list[int]]]:
    """A local server answering ``/healthz`` with the status at the head of the list."""
    status = [200]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status[0] if self.path == HEALTH_PATH else 404)
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1], status
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------------- YAML


def test_every_deploy_yaml_file_is_found() -> None:
    names = {path.relative_to(DEPLOY).as_posix() for path in YAML_FILES}
    assert {
        "docker-compose.yml",
        "slack-app-manifest.yml",
        "k8s/deployment.yaml",
        "k8s/service.yaml",
        "k8s/configmap.yaml",
        "k8s/secret.example.yaml",
        "k8s/kustomization.yaml",
    } <= names


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_yaml_parses(path: Path) -> None:
    documents = [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    assert documents, f"{path.name} holds no YAML document"
    assert all(isinstance(doc, dict) for doc in documents)


def test_the_variable_check_catches_a_typo() -> None:
    assert _unknown_variables({"HTTP_HOTS", "HTTP_HOST", "PATH"}) == {"HTTP_HOTS"}


# --------------------------------------------------------------------------- Dockerfile


def test_dockerfile_builds_in_a_builder_stage_and_runs_slim() -> None:
    stages = _stages()
    assert len(stages) >= 2, "multi-stage: a builder and the runtime"
    builder, runtime = stages[0], stages[-1]
    assert _last(builder, "FROM").split()[0].startswith("python:3.11")
    assert _last(runtime, "FROM").split()[0] == "python:3.11-slim"
    build = " ".join(rest for kw, rest in builder if kw == "RUN")
    assert "pip wheel" in build or "pip install" in build
    assert any("--from=builder" in rest for kw, rest in runtime if kw == "COPY")
    assert _last(runtime, "WORKDIR") == "/app"
    user = _last(runtime, "USER").split(":")[0]
    assert user not in ("root", "0"), "the runtime runs as the unprivileged trendbot user"
    assert "useradd" in " ".join(rest for kw, rest in runtime if kw == "RUN")
    assert "/app/data" in _last(runtime, "VOLUME")


def test_dockerfile_variables_are_settings() -> None:
    stages = _stages()
    names: set[str] = set()
    for stage in stages:
        for keyword, rest in stage:
            if keyword == "ENV":
                names |= set(_env_names(rest))
            names |= _referenced(rest)
    runtime_env: dict[str, str] = {}
    for keyword, rest in stages[-1]:
        if keyword == "ENV":
            runtime_env.update(_env_names(rest))
    assert runtime_env.get("HTTP_HOST") == "0.0.0.0", "listen beyond the container's loopback"
    assert _unknown_variables(names) == set()


def test_dockerfile_copies_what_exists_and_is_not_ignored() -> None:
    ignored = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", "data", ".git", ".env"} <= ignored
    assert {".pytest_cache", ".mypy_cache", ".ruff_cache"} <= ignored
    sources = [src for stage in _stages() for srcs, _ in _copies(stage) for src in srcs]
    assert "bot/" in sources or "bot" in sources, "the package, with the sample wiki inside"
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: not in the build context"
        top = PurePosixPath(source).parts[0]
        assert top not in ignored, f"COPY {source}: excluded by .dockerignore"


def test_image_entry_point_runs_real_commands() -> None:
    commands = _entry_commands()
    assert commands == [["db", "upgrade"], ["run"]]
    for argv in commands:
        _assert_cli(argv)
    # `docker run IMAGE poll` goes through the same script.
    assert _entry_commands(["poll", "--backfill", "7"])[-1] == ["poll", "--backfill", "7"]


def test_entry_point_script_hands_over_with_exec() -> None:
    runtime = _stages()[-1]
    entrypoint = json.loads(_last(runtime, "ENTRYPOINT"))
    script = next(ROOT / srcs[0] for srcs, dest in _copies(runtime) if dest == entrypoint[0])
    lines = [
        line.strip()
        for line in script.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert script.read_text().startswith("#!/bin/sh")
    assert "set -eu" in lines
    assert lines[-1] == 'exec trendbot "$@"', "the bot must be PID 1 to get SIGTERM"
    assert _unknown_variables(_referenced(script.read_text())) == set()


def test_dockerfile_health_check_and_port() -> None:
    runtime = _stages()[-1]
    assert [int(p.split("/")[0]) for p in _last(runtime, "EXPOSE").split()] == [HTTP_PORT]
    check = _last(runtime, "HEALTHCHECK")
    assert "curl" not in check and "wget" not in check, "the slim image has neither"
    assert HEALTH_PATH in check
    assert f"'{HTTP_PORT}'" in check, "falls back to the default HTTP_PORT"


def test_dockerfile_health_check_command_works(
    health_server: tuple[int, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    check = _last(_stages()[-1], "HEALTHCHECK")
    argv = json.loads(check[check.index("CMD") + len("CMD") :].strip())
    assert argv[:2] == ["python", "-c"]
    port, status = health_server
    monkeypatch.setenv("HTTP_PORT", str(port))
    # A proxy configured for the feeds must not swallow the health check.
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    exec(argv[2], {})  # healthy: no exception, exit code 0
    status[0] = 503
    with pytest.raises(OSError):  # urllib's HTTPError: a non-zero exit, unhealthy
        exec(argv[2], {})


# ----------------------------------------------------------------------- docker compose


def test_compose_bot_service() -> None:
    compose = _yaml(COMPOSE)
    bot = compose["services"]["bot"]
    build = bot["build"]
    context = (COMPOSE.parent / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE
    assert bot["depends_on"]["db"]["condition"] == "service_healthy"
    assert bot["restart"] == "unless-stopped"
    env_files = bot["env_file"]
    assert any(
        isinstance(item, dict) and item["path"] == "../.env" and item["required"] is False
        for item in env_files
    ), "the .env beside pyproject.toml, optional"


def test_compose_variables_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _environment(_yaml(COMPOSE)["services"]["bot"])
    assert _unknown_variables(set(env)) == set()
    assert env["HTTP_HOST"] == "0.0.0.0"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    Settings(_env_file=None)  # type: ignore[call-arg]  # every value is valid


def test_compose_database_url_reaches_the_db_service() -> None:
    services = _yaml(COMPOSE)["services"]
    url = make_url(_environment(services["bot"])["DATABASE_URL"])
    db = _environment(services["db"])
    assert url.drivername == "postgresql+asyncpg"
    assert url.host == "db"
    assert url.port == 5432
    assert (url.username, url.password, url.database) == (
        db["POSTGRES_USER"],
        db["POSTGRES_PASSWORD"],
        db["POSTGRES_DB"],
    )
    assert services["db"]["image"].startswith("postgres:16")
    assert "pg_isready" in json.dumps(services["db"]["healthcheck"]["test"])
    assert any(str(v).startswith("pgdata:") for v in services["db"]["volumes"])
    assert "pgdata" in _yaml(COMPOSE)["volumes"]


def test_compose_port_and_health_check() -> None:
    bot = _yaml(COMPOSE)["services"]["bot"]
    env = _environment(bot)
    assert int(env.get("HTTP_PORT", HTTP_PORT)) == HTTP_PORT
    published = [str(port).rsplit(":", 1)[-1] for port in bot["ports"]]
    assert str(HTTP_PORT) in published
    test = bot["healthcheck"]["test"]
    text = " ".join(test) if isinstance(test, list) else test
    assert f"127.0.0.1:{HTTP_PORT}{HEALTH_PATH}" in text
    assert "curl" not in text and "wget" not in text
    if isinstance(test, list) and test[1:3] == ["python", "-c"]:
        compile(test[3], "healthcheck", "exec")


# ---------------------------------------------------------------------------- systemd


def test_systemd_unit_runs_real_commands() -> None:
    pre = shlex.split(_unit_value("Service", "ExecStartPre"))
    start = shlex.split(_unit_value("Service", "ExecStart"))
    assert pre[0] == start[0] == VM_EXECUTABLE
    assert pre[1:] == ["db", "upgrade"]
    assert start[1:] == ["run"]
    _assert_cli(pre[1:])
    _assert_cli(start[1:])


def test_systemd_unit_settings() -> None:
    expected = {
        "User": "trendbot",
        "WorkingDirectory": "/opt/trendbot",
        "EnvironmentFile": "/etc/trendbot/trendbot.env",
        "Restart": "on-failure",
        "RestartSec": "5",
        "KillSignal": "SIGTERM",
        "TimeoutStopSec": "30",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ReadWritePaths": "/opt/trendbot/data",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
    }
    for key, value in expected.items():
        assert _unit_value("Service", key) == value, key
    # The default SQLite file (./data/trendbot.db) is in the one writable directory.
    database = make_url(Settings.model_fields["database_url"].default).database or ""
    data_dir = PurePosixPath(_unit_value("Service", "WorkingDirectory")) / database
    assert str(data_dir.parent) == _unit_value("Service", "ReadWritePaths")
    names = {
        value.partition("=")[0]
        for key, value in _unit()["Service"]
        if key == "Environment"
        for value in shlex.split(value)
    }
    assert _unknown_variables(names) == set()
    assert _unit_value("Install", "WantedBy") == "multi-user.target"


def test_systemd_unit_leaves_room_for_every_http_connection() -> None:
    # The HTTP server holds its whole connection cap only with twice as many open files.
    from bot.ops.web import MAX_CONNECTIONS, connection_limit

    files = int(_unit_value("Service", "LimitNOFILE"))
    assert connection_limit(files) == MAX_CONNECTIONS


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here; the unit is checked by parsing only")
    # verify insists that ExecStart's program exists, and /opt/trendbot is not installed
    # here: a copy of the unit points at this checkout's trendbot (any executable will do).
    candidates = [shutil.which("trendbot"), str(ROOT / ".venv" / "bin" / "trendbot")]
    installed = next((c for c in candidates if c and Path(c).is_file()), sys.executable)
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace(VM_EXECUTABLE, installed))
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, output
    assert output == "", output  # unknown keys and bad values are warnings with exit 0


# ------------------------------------------------------------------------- Kubernetes


def test_kustomization_lists_every_manifest_but_the_secret_example() -> None:
    resources = _k8s("kustomization.yaml")["resources"]
    for name in resources:
        assert (K8S / name).is_file(), name
    assert "secret.example.yaml" not in resources, "placeholders must never be applied"
    others = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert set(resources) == others


def test_k8s_variables_are_settings() -> None:
    configmap = _k8s("configmap.yaml")
    assert configmap["kind"] == "ConfigMap"
    assert _k8s("secret.example.yaml")["kind"] == "Secret"
    env_names = {item["name"] for item in _container().get("env", [])}
    for names in (set(configmap["data"]), set(_secret_data()), env_names):
        assert names
        assert _unknown_variables(names) == set()
    secrets = {
        "DATABASE_URL",
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_SECRET",
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
    }
    assert set(_secret_data()) == secrets
    assert not secrets & set(configmap["data"]), "secrets belong in the Secret"


def test_k8s_secret_example_is_placeholders_that_pass_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _secret_data()
    for name, value in data.items():
        assert "REPLACE" in value, f"{name} does not look like a placeholder"
    env = {**_k8s("configmap.yaml")["data"], **data}
    env.update({item["name"]: item["value"] for item in _container().get("env", [])})
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert not settings.is_sqlite
    assert settings.http_host == "0.0.0.0"


def test_k8s_replicas_need_postgres_and_a_telegram_webhook() -> None:
    deployment = _k8s("deployment.yaml")
    replicas = deployment["spec"]["replicas"]
    assert replicas == 2
    configmap = _k8s("configmap.yaml")["data"]
    assert make_url(_secret_data()["DATABASE_URL"]).drivername == "postgresql+asyncpg"
    if "TELEGRAM_BOT_TOKEN" in _secret_data():
        # Only one client may long-poll a bot; several replicas take the webhook.
        assert configmap["TELEGRAM_WEBHOOK_URL"].endswith("/telegram/webhook")
        assert "TELEGRAM_WEBHOOK_SECRET" in _secret_data()


def test_k8s_deployment_wiring() -> None:
    deployment = _k8s("deployment.yaml")
    assert deployment["kind"] == "Deployment"
    pod = _pod()
    container = _container()
    refs = {
        kind: source[kind]["name"]
        for source in container["envFrom"]
        for kind in ("configMapRef", "secretRef")
        if kind in source
    }
    assert refs == {
        "configMapRef": _k8s("configmap.yaml")["metadata"]["name"],
        "secretRef": _k8s("secret.example.yaml")["metadata"]["name"],
    }
    assert refs["secretRef"] == "trendbot"
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pod["terminationGracePeriodSeconds"] == 30
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert {"requests", "limits"} <= set(container["resources"])
    service = _k8s("service.yaml")
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_k8s_container_runs_real_commands() -> None:
    container = _container()
    assert "command" not in container, "the image's entry point migrates, then runs"
    commands = _entry_commands(container.get("args"))
    assert commands[0] == ["db", "upgrade"]
    assert commands[-1] == ["run"]
    for argv in commands:
        _assert_cli(argv)
    for init in _pod().get("initContainers", []):
        argv = [*init.get("command", []), *init.get("args", [])]
        if argv and argv[0] == "trendbot":
            _assert_cli(argv[1:])


def test_k8s_probes_and_ports() -> None:
    container = _container()
    assert {p["containerPort"] for p in container["ports"]} == {HTTP_PORT}
    assert int(_k8s("configmap.yaml")["data"].get("HTTP_PORT", HTTP_PORT)) == HTTP_PORT
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == HEALTH_PATH, probe
        assert _container_port(get["port"]) == HTTP_PORT, probe
    ports = _k8s("service.yaml")["spec"]["ports"]
    assert [(p["port"], _container_port(p["targetPort"])) for p in ports] == [(80, HTTP_PORT)]


# ---------------------------------------------------------------------- Slack manifest


def _urls(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("url", "request_url"):
                yield value
            yield from _urls(value)
    elif isinstance(node, list):
        for item in node:
            yield from _urls(item)


def test_slack_manifest() -> None:
    manifest = _yaml(SLACK_MANIFEST)
    assert manifest["_metadata"]["major_version"] == 1
    assert manifest["display_information"]["name"]
    assert manifest["features"]["bot_user"]["display_name"]
    commands = manifest["features"]["slash_commands"]
    assert [c["command"] for c in commands] == [SLACK_COMMAND]
    assert commands[0]["should_escape"] is False
    assert commands[0]["usage_hint"] == registry.usage_hint()
    settings = manifest["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is False
    assert settings["token_rotation_enabled"] is False
    urls = list(_urls(manifest))
    assert len(urls) == 3, "the slash command's, the events' and interactivity's"
    for url in urls:
        assert url.startswith("https://") and url.endswith("/slack/events"), url


def test_slack_manifest_lets_users_type_the_command_in_the_apps_messages_tab() -> None:
    app_home = _yaml(SLACK_MANIFEST)["features"]["app_home"]
    assert app_home["messages_tab_enabled"] is True
    assert app_home["messages_tab_read_only_enabled"] is False


# slack-sdk helpers that call several Web API methods: files_upload_v2 is
# files.getUploadURLExternal, the upload, then files.completeUploadExternal.
_SDK_HELPERS = {"files.upload.v2": {"files.getUploadURLExternal", "files.completeUploadExternal"}}


def _web_api_methods_called() -> set[str]:
    """The Web API methods the bot calls: ``client.chat_postMessage(`` is chat.postMessage."""
    called: set[str] = set()
    for path in (ROOT / "bot").rglob("*.py"):
        for name in re.findall(r"_client\.([a-z]+_[A-Za-z_0-9]+)\(", path.read_text()):
            method = name.replace("_", ".")
            called.update(_SDK_HELPERS.get(method, {method}))
    return called


def test_slack_manifest_asks_for_exactly_the_scopes_the_code_needs() -> None:
    manifest = _yaml(SLACK_MANIFEST)
    assert _web_api_methods_called() == set(slack.METHOD_SCOPES)
    needed = {"commands"}.union(*slack.METHOD_SCOPES.values())
    listed = manifest["oauth_config"]["scopes"]["bot"]
    assert len(listed) == len(set(listed))
    assert set(listed) == needed
    assert "im:write" not in listed  # the bot never opens a DM: it posts to the user's id


def test_slack_manifest_subscribes_to_the_events_the_bot_handles() -> None:
    manifest = _yaml(SLACK_MANIFEST)
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert events == list(slack.BOT_EVENTS)
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert set(SLACK_EVENT_SCOPES) == set(events)
    assert {scope for scope in SLACK_EVENT_SCOPES.values() if scope} <= scopes


def test_slack_manifest_explains_socket_mode() -> None:
    text = SLACK_MANIFEST.read_text()
    assert "socket_mode_enabled: true" in text
    assert "connections:write" in text
    assert "SLACK_APP_TOKEN" in text


def test_slack_manifest_can_be_distributed_by_oauth() -> None:
    """Public distribution needs a redirect URL on the bot's host; the app asks for bot
    scopes only (no user token is ever stored)."""
    from bot.channels.slack import oauth as slack_oauth

    manifest = _yaml(SLACK_MANIFEST)
    redirects = manifest["oauth_config"]["redirect_urls"]
    events = manifest["settings"]["event_subscriptions"]["request_url"]
    assert redirects == [events.removesuffix("/slack/events") + slack_oauth.REDIRECT_PATH]
    assert set(manifest["oauth_config"]["scopes"]) == {"bot"}
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == slack.BOT_SCOPES
    text = SLACK_MANIFEST.read_text()
    for name in ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET", "SLACK_TOKEN_KEY"):
        assert name in text
    assert slack_oauth.INSTALL_PATH in text
