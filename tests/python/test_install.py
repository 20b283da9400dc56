"""`cmake --install` puts the package where the interpreter finds it: installed (component
python) into a scratch prefix, it imports from <prefix>/<MOMENTA_PYTHON_INSTALL_DIR> — with
the default prefix /usr/local, Debian's site-packages — and answers."""

import os
import subprocess
import sys

import pytest


def test_installed_package_imports_and_answers(tmp_path):
    build = os.environ.get("MOMENTA_BUILD_DIR")
    site = os.environ.get("MOMENTA_PYTHON_INSTALL_DIR")
    if not build or not site:
        pytest.skip("run by ctest (MOMENTA_BUILD_DIR and MOMENTA_PYTHON_INSTALL_DIR name the build)")
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", build, "--prefix", str(prefix), "--component", "python"], check=True,
                   capture_output=True)
    where = prefix / site
    assert (where / "momenta" / "__init__.py").exists()
    code = ("import momenta, numpy as np\n"
            "assert momenta.__file__.startswith(%r), momenta.__file__\n"
            "with momenta.create('x.npy', 100) as a:\n"
            "    a[10:13] = [1, 2, 3]\n"
            "    assert a.sum() == 6 and a.mean(10, 13) == 2\n"
            "print('ok')\n") % str(where)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(where)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
