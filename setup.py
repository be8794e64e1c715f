"""Builds the hetplan package's C++ extension with the project's CMake (pyproject.toml has the metadata).

`pip install --no-build-isolation .` configures $HETPLAN_BUILD_DIR (default:
build/) with Ninja if it is not configured yet, builds the target
hetplan_python there (incrementally: an existing build is reused) and puts
the extension, ONNX Runtime's library and the platform presets into the
package. Nothing is downloaded.
"""

import glob
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def build_dir():
    d = os.environ.get("HETPLAN_BUILD_DIR", "build")
    return d if os.path.isabs(d) else os.path.join(ROOT, d)


class CMakeExtension(build_ext):
    def run(self):
        out = build_dir()
        if not os.path.exists(os.path.join(out, "build.ninja")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", out, "-G", "Ninja"])
        subprocess.check_call(["cmake", "--build", out, "--target", "hetplan_python"])
        built = glob.glob(os.path.join(out, "python", "hetplan", "_core*.so"))
        if not built:
            raise RuntimeError(f"{out}: the build made no hetplan/_core*.so; is pybind11-dev installed? "
                               "(scripts/setup.sh installs it)")
        for ext in self.extensions:
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(built[0], target)
            # The extension finds ONNX Runtime next to itself ($ORIGIN) once installed.
            ort = os.path.join(ROOT, "third_party", "onnxruntime", "lib", "libonnxruntime.so.1")
            if os.path.exists(ort):
                shutil.copyfile(os.path.realpath(ort), os.path.join(os.path.dirname(target), "libonnxruntime.so.1"))


class WithPresets(build_py):
    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "hetplan", "platforms")
        os.makedirs(dest, exist_ok=True)
        for f in glob.glob(os.path.join(ROOT, "platforms", "*.yaml")):
            shutil.copy2(f, dest)


setup(ext_modules=[Extension("hetplan._core", sources=[])],
      cmdclass={"build_ext": CMakeExtension, "build_py": WithPresets},
      # setuptools' own build folder, out of the way of CMake's build/.
      options={"build": {"build_base": os.path.join("build", "setuptools")}})
