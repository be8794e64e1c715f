// hetplan's ONNX library (scripts/setup_onnx.sh) is built in the namespace
// and protobuf package `hetplan_onnx` (ONNX_NAMESPACE), so that it never
// meets another ONNX in one process: torch's libtorch links Debian's libonnx,
// and two copies of onnx/onnx-ml.proto in one libprotobuf abort the process.
// hetplan's code says `onnx::`: this alias, which CMake includes first in
// every file that links hetplan (-include, CMakeLists.txt).
#pragma once

#ifndef ONNX_NAMESPACE
#error "ONNX_NAMESPACE must be defined (it is hetplan_onnx, from the ONNX CMake targets)"
#endif

namespace ONNX_NAMESPACE {}
namespace onnx = ONNX_NAMESPACE;
