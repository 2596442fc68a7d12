"""The deployment files: docker-compose.yml must be a valid Compose file with the services the docs name."""

import shutil
import subprocess
from pathlib import Path

import pytest

COMPOSE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def compose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker-compose", "-f", str(COMPOSE), *args], capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="make test installs Debian's docker-compose")
def test_docker_compose_file_validates_and_runs_web_workers_redis_and_postgres():
    # `config` parses, interpolates and validates the file against the Compose schema; no Docker
    # engine is needed for it.
    checked = compose("config", "-q")
    assert checked.returncode == 0, checked.stderr
    services = compose("config", "--services").stdout.split()
    assert {"migrate", "web", "worker", "recover", "redis", "postgres"} == set(services)
