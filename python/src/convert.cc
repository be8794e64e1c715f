#include "convert.h"

#include <cmath>

namespace hetplan::python {

py::object ToPython(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out(j.size());
      size_t i = 0;
      for (const auto& v : j) out[i++] = ToPython(v);
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = ToPython(it.value());
      return out;
    }
    default:
      return py::none();  // binary and discarded values: never produced here
  }
}

namespace {

Result<nlohmann::json> FromPythonAt(py::handle v, const std::string& what, const std::string& at, int depth) {
  if (depth > 200) {
    return Error(ErrorCode::kInvalidArgument, "{}{}: nested more than 200 levels deep", what, at);
  }
  if (v.is_none()) return nlohmann::json(nullptr);
  if (py::isinstance<py::bool_>(v)) return nlohmann::json(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) {
    try {
      return nlohmann::json(v.cast<int64_t>());
    } catch (const py::cast_error&) {
      return Error(ErrorCode::kInvalidArgument, "{}{}: integer out of range", what, at);
    }
  }
  if (py::isinstance<py::float_>(v)) {
    const double d = v.cast<double>();
    if (!std::isfinite(d)) {
      return Error(ErrorCode::kInvalidArgument, "{}{}: {} is not a finite number; JSON has no NaN or infinity",
                   what, at, d);
    }
    return nlohmann::json(d);
  }
  if (py::isinstance<py::str>(v)) return nlohmann::json(v.cast<std::string>());
  if (py::isinstance<py::dict>(v)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto item : v.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) {
        return Error(ErrorCode::kInvalidArgument, "{}{}: key {} is not a string", what, at,
                     py::repr(item.first).cast<std::string>());
      }
      const std::string key = item.first.cast<std::string>();
      HETPLAN_ASSIGN_OR_RETURN(out[key], FromPythonAt(item.second, what, at + "/" + key, depth + 1));
    }
    return out;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    nlohmann::json out = nlohmann::json::array();
    size_t i = 0;
    for (auto item : v) {
      HETPLAN_ASSIGN_OR_RETURN(nlohmann::json e, FromPythonAt(item, what, at + "/" + std::to_string(i++), depth + 1));
      out.push_back(std::move(e));
    }
    return out;
  }
  return Error(ErrorCode::kInvalidArgument, "{}{}: a {} cannot go into JSON; use dict, list, str, int, float, bool "
               "or None", what, at, py::str(v.get_type().attr("__name__")).cast<std::string>());
}

}  // namespace

Result<nlohmann::json> FromPython(py::handle value, const std::string& what) {
  return FromPythonAt(value, what, "", 0);
}

const char* CodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kParseError:
      return "parse_error";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kInfeasible:
      return "infeasible";
    case ErrorCode::kLimitExceeded:
      return "limit_exceeded";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kIoError:
      return "io_error";
  }
  return "internal";
}

void RegisterErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      // hetplan._errors is pure Python and imported before _core is used.
      py::object by_code = py::module_::import("hetplan._errors").attr("BY_CODE");
      py::object cls = by_code.attr("get")(CodeName(e.status().code()), by_code["internal"]);
      py::object error = cls(e.status().message());
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });
}

}  // namespace hetplan::python
