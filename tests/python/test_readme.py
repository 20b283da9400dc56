"""The documents' examples run as written (found by doc_sections in README.md and docs/*.md):
README.md's two tours (the CLI's lines, the Python block) and the Python reference's ```python
blocks, in order, in one namespace, in a scratch folder. The one that asks a root
("127.0.0.1:7070") gets a root started here on a free port, whose address replaces that one."""

import os
import pathlib
import re
import subprocess
import time

import pytest

from doc_sections import blocks, section


def test_python_reference_says_the_name_on_the_index_is_not_ours():
    _, text = section("Python")
    assert "unrelated project" in text and "no distribution" in text


def test_python_reference_examples_run_as_written(cli, monkeypatch):
    where, text = section("Python")
    examples = blocks(text, "python")
    assert len(examples) >= 3, f"{where}: the Python reference has fewer examples than it should"
    root = subprocess.Popen([cli.path, "root", "--listen", "127.0.0.1:0", "--eps", "0.01", "--window", "1m",
                             "--port-file", "root.port"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists("root.port") and open("root.port").read().strip():
                break
            time.sleep(0.01)
        address = "127.0.0.1:" + open("root.port").read().strip()
        monkeypatch.setenv("PATH", os.path.dirname(cli.path) + os.pathsep + os.environ["PATH"])
        namespace = {"__name__": "__readme__"}
        for k, block in enumerate(examples):
            code = block.replace("127.0.0.1:7070", address)
            try:
                exec(compile(code, f"{where} Python example {k + 1}", "exec"), namespace)
            except Exception as e:
                pytest.fail(f"{where}'s Python example {k + 1} failed: {type(e).__name__}: {e}\n{block}")
    finally:
        root.terminate()
        root.wait(timeout=30)


def test_readme_python_tour_prints_what_its_comments_say(capsys):
    where, text = section("A tour of Python")
    (tour,) = blocks(text, "python")
    exec(compile(tour, f"{where} Python tour", "exec"), {"__name__": "__readme__"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "15.5 2.5 1.0", printed
    assert len(printed) == len(re.findall(r"^print\(", tour, re.M))


def test_readme_cli_tour_runs_as_written(cli, monkeypatch):
    where, text = section("A tour of the CLI")
    (tour,) = blocks(text, "sh")
    monkeypatch.setenv("PATH", os.path.dirname(cli.path) + os.pathsep + os.environ["PATH"])
    lines = [line for line in tour.splitlines() if line.strip()]
    assert 5 <= len(lines) <= 12, f"{where}: the CLI tour should be about ten lines, is {len(lines)}"
    for k, line in enumerate(lines):
        r = subprocess.run(["bash", "-o", "pipefail", "-c", line], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{where} CLI tour line {k + 1} failed ({r.returncode}): {line}\n{r.stderr}"
    assert pathlib.Path("big.npy").exists()
