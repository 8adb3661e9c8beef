"""`pip install -e python` in a fresh venv works without network, with Debian's setuptools and wheel."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)


class EditableInstall(unittest.TestCase):
    def test_pip_install_editable_in_a_venv_offline(self):
        tmp = tempfile.mkdtemp(prefix="dirsched-py-venv-")
        self.addCleanup(shutil.rmtree, tmp)
        # A copy, so that the install's metadata (dirsched.egg-info) lands in the copy, not the checkout.
        src = os.path.join(tmp, "python")
        shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "tests"))
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
        env["PIP_NO_INDEX"] = "1"  # no package index: what a machine without network sees
        pip = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-build-isolation", "-e", src],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env, cwd=tmp,
        )  # fmt: skip
        self.assertEqual(pip.returncode, 0, pip.stdout)
        probe = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-c",
             "import dirsched, dirsched.simpler; print(dirsched.__file__); print(dirsched.Testbed.__name__)"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env, cwd=tmp,
        )  # fmt: skip
        self.assertEqual(probe.returncode, 0, probe.stdout)
        self.assertEqual(probe.stdout.split(), [os.path.join(src, "dirsched", "__init__.py"), "Testbed"])


if __name__ == "__main__":
    unittest.main()
