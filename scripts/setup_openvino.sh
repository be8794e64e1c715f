#!/usr/bin/env bash
# Installs OpenVINO 2026.4.1 from its PyPI wheel, pinned by version and sha256
# (scripts/openvino-requirements.txt), into third_party/openvino: a virtual
# environment whose site-packages/openvino holds the C++ runtime hetplan links
# (find_package(OpenVINO) through openvino/cmake; CMake finds it there, option
# HETPLAN_OPENVINO) and the Python API the tests apply exports with. A
# download, no build. Reused while the requirements file is unchanged.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/scripts/setup_venv.sh" openvino "$ROOT/scripts/openvino-requirements.txt" \
  "openvino" "OpenVINO 2026.4.1's runtime (C++ and Python)"
