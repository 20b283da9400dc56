"""README.md's "## Python" section runs as written: its ```python blocks, in order, in one
namespace, in a scratch folder. The one that asks a root ("127.0.0.1:7070") gets a root
started here on a free port, whose address replaces that one."""

import os
import pathlib
import re
import subprocess
import time

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_section():
    text = README.read_text()
    start = text.find("\n## Python\n")
    assert start >= 0, "README.md has no '## Python' section"
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_section_says_the_name_on_the_index_is_not_ours():
    section = python_section()
    assert "unrelated project" in section and "no distribution" in section


def test_examples_run_as_written(cli, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", python_section(), re.S)
    assert len(blocks) >= 3, "the Python section has fewer examples than it should"
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
        for k, block in enumerate(blocks):
            code = block.replace("127.0.0.1:7070", address)
            try:
                exec(compile(code, f"README.md Python example {k + 1}", "exec"), namespace)
            except Exception as e:
                pytest.fail(f"README.md's Python example {k + 1} failed: {type(e).__name__}: {e}\n{block}")
    finally:
        root.terminate()
        root.wait(timeout=30)
