# Finds the ONNX Runtime C/C++ API installed by scripts/setup_ort.sh into
# third_party/onnxruntime (headers + libonnxruntime.so.1). Defines
# OnnxRuntime::OnnxRuntime and OnnxRuntime_VERSION_API.
set(_ort_root "${OnnxRuntime_ROOT}")
if(NOT _ort_root)
  set(_ort_root "${CMAKE_CURRENT_SOURCE_DIR}/third_party/onnxruntime")
endif()
find_path(OnnxRuntime_INCLUDE_DIR onnxruntime_cxx_api.h PATHS "${_ort_root}/include" NO_DEFAULT_PATH)
find_library(OnnxRuntime_LIBRARY NAMES onnxruntime PATHS "${_ort_root}/lib" NO_DEFAULT_PATH)
if(OnnxRuntime_INCLUDE_DIR)
  file(STRINGS "${OnnxRuntime_INCLUDE_DIR}/onnxruntime_c_api.h" _ort_api REGEX "^#define ORT_API_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" OnnxRuntime_VERSION_API "${_ort_api}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OnnxRuntime
  REQUIRED_VARS OnnxRuntime_LIBRARY OnnxRuntime_INCLUDE_DIR
  FAIL_MESSAGE "ONNX Runtime not found in ${_ort_root}: run scripts/setup_ort.sh")
if(OnnxRuntime_FOUND AND NOT TARGET OnnxRuntime::OnnxRuntime)
  add_library(OnnxRuntime::OnnxRuntime SHARED IMPORTED)
  set_target_properties(OnnxRuntime::OnnxRuntime PROPERTIES
    IMPORTED_LOCATION "${OnnxRuntime_LIBRARY}"
    IMPORTED_SONAME "libonnxruntime.so.1"
    INTERFACE_INCLUDE_DIRECTORIES "${OnnxRuntime_INCLUDE_DIR}")
endif()
