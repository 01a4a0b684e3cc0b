"""The README's quick start on a machine as a new user finds it.

`make demo` runs in a copy of this checkout, for a new user (an empty HOME), with the
distribution's own Python first on PATH: a Python that is no virtual environment and
carries PEP 668's EXTERNALLY-MANAGED marker, as on stock Debian 12 and Ubuntu 24.04, so
pip refuses to install into it. The test leans on such a Python being installed (Debian's
/usr/bin/python3 on this project's machines) rather than faking one: faking it would mean
writing into a system Python's standard library.

`make test`, the second command, cannot run inside the suite it runs; CI (`.ci/run`) runs
it as written on a fresh clone, which takes the same path (it builds .venv there).

The models are not assembled again (that is ~2 GB of work, tested elsewhere): the copy
uses this machine's prepared model cache through UXMON_MODEL_CACHE.

Nor are the packages downloaded again when CI hands over its wheelhouse (QUICKSTART_WHEELHOUSE,
filled by `make wheels` in the same run, resolved against the index as the new user's
install resolves): the new user's pip then installs from it with pip's own settings
(PIP_NO_INDEX, PIP_FIND_LINKS), and `make demo` runs as it is. Without one the test
downloads from the index like any new user.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.models.cache import cache_dir

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHONS = ("/usr/bin/python3",)


def _externally_managed_python() -> Path:
    """A system Python >= 3.11 that is no venv, has ensurepip and refuses pip (PEP 668)."""
    probe = (
        "import sys, sysconfig, pathlib, ensurepip; "
        "print(sys.version_info >= (3, 11) and sys.prefix == sys.base_prefix and "
        "(pathlib.Path(sysconfig.get_path('stdlib')) / 'EXTERNALLY-MANAGED').is_file())"
    )
    for candidate in SYSTEM_PYTHONS:
        if not Path(candidate).is_file():
            continue
        found = subprocess.run([candidate, "-c", probe], capture_output=True, text=True)
        if found.stdout.strip() == "True":
            return Path(candidate)
    pytest.skip(f"no externally managed Python >= 3.11 with ensurepip among {SYSTEM_PYTHONS}")


def _copy_checkout(target: Path) -> Path:
    """This working tree as git would clone it with the uncommitted work: tracked and
    untracked files, none that .gitignore excludes (so no .venv, caches or egg-info)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not listed
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _new_user_env(home: Path, python: Path) -> dict[str, str]:
    """The machine's environment without anything of this session's Python or make."""
    dropped = ("VIRTUAL_ENV", "PYTHON", "PYENV", "CONDA", "UXMON_", "XDG_", "MAKE", "MFLAGS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    home.mkdir()
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(python.parent), "/usr/bin", "/bin"]),
        UXMON_MODEL_CACHE=str(cache_dir()),
    )
    wheelhouse = os.environ.get("QUICKSTART_WHEELHOUSE")
    if wheelhouse:
        # Only with no index does pip take the local file: with one it downloads the same
        # version again from the index (pip >= 21).
        links = [wheelhouse, *env.get("PIP_FIND_LINKS", "").split()]
        env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=" ".join(links))
    return env


def test_make_demo_as_a_new_user_on_an_externally_managed_python(tmp_path: Path) -> None:
    python = _externally_managed_python()
    checkout = _copy_checkout(tmp_path / "uxmon")
    env = _new_user_env(tmp_path / "home", python)

    refused = subprocess.run(
        [str(python), "-m", "pip", "install", "uxmon"], env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr, (
        refused.stderr[-2000:]
    )

    demo = subprocess.run(
        ["make", "demo", "DEMO_ARGS=--headless --duration 20 --metrics-port 0"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    venv_python = checkout / ".venv" / "bin" / "python"
    assert f"{venv_python} -m stream.cli demo" in demo.stdout
    final = re.search(r"final: .*scored=(\d+)", demo.stdout)
    assert final and int(final.group(1)) > 0, demo.stdout[-3000:]

    # The demo installs what it runs, not the dev tools.
    dev_tool = subprocess.run([str(venv_python), "-c", "import pytest"], capture_output=True)
    assert dev_tool.returncode != 0

    # `make test` takes the same environment (a dry run: the real one is CI's).
    plan = subprocess.run(
        ["make", "-n", "test"], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert plan.returncode == 0, plan.stderr
    assert f"{venv_python} -m pytest" in plan.stdout


def test_a_python_without_ensurepip_gets_the_package_to_install(tmp_path: Path) -> None:
    """Debian's python3 lacks ensurepip until python3-venv is installed."""
    (tmp_path / "project").mkdir()
    shutil.copy2(ROOT / "Makefile", tmp_path / "project" / "Makefile")
    shadow = tmp_path / "shadow" / "ensurepip"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no ensurepip (as on Debian)')\n")
    base_python = getattr(sys, "_base_executable", sys.executable)  # no venv, as make sees it
    dropped = ("VIRTUAL_ENV", "MAKE", "MFLAGS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env["PYTHONPATH"] = str(shadow.parent)  # ahead of the standard library

    made = subprocess.run(
        ["make", "venv", f"PYTHON={base_python}"],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode != 0
    minor = sys.version_info[1]
    assert "apt install python3-venv" in made.stderr, made.stderr
    assert f"python3.{minor}-venv" in made.stderr, made.stderr
    assert not (tmp_path / "project" / ".venv").exists()
