"""Shared fixtures of the Python suite (tests/python/README.md).

Randomized tests draw from `rng`, seeded from MOMENTA_SEED (random when unset) and the
test's name; the seed is printed in the report header and in each failing test's output,
so `MOMENTA_SEED=N /usr/bin/python3 -m pytest tests/python -k NAME` replays it."""

import os
import pathlib
import random
import subprocess
import sys
import zlib

import numpy as np
import pytest

SEED = int(os.environ.get("MOMENTA_SEED") or random.SystemRandom().randrange(1 << 32))
# Resolved now: every test runs in a scratch folder of its own (below).
_CLI = os.path.abspath(os.environ["MOMENTA_CLI"]) if os.environ.get("MOMENTA_CLI") else None


def pytest_report_header(config):
    return f"MOMENTA_SEED={SEED}"


@pytest.fixture
def rng(request):
    seed = (SEED + zlib.crc32(request.node.nodeid.encode())) % (1 << 32)
    print(f"MOMENTA_SEED={SEED} (this test's generator: {seed})")
    return np.random.default_rng(seed)


def cli_path():
    """The momenta CLI of the build whose package is imported (MOMENTA_CLI overrides)."""
    if _CLI:
        return _CLI
    import momenta
    return str(pathlib.Path(momenta.__file__).resolve().parents[2] / "tools" / "momenta")


@pytest.fixture
def cli():
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"the momenta CLI is not at {path} (build the target momenta_cli, or set MOMENTA_CLI)")

    def run(*args, check=True, input=None):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True, input=input, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"momenta {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
        return r
    run.path = path
    return run


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Every test runs in a scratch folder of its own, with no sidecar root from outside."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MOMENTA_SIDECAR_DIR", raising=False)
    yield


def python():
    return sys.executable
