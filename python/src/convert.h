// Between the library's values and Python's: JSON documents as dicts and
// lists, and error Statuses as hetplan.Error subclasses carrying the same
// one-line message the CLI prints after "hetplan: error: ".
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "hetplan/util/status.h"

namespace hetplan::python {

namespace py = pybind11;

// JSON → dict/list/str/int/float/bool/None (object key order kept).
py::object ToPython(const nlohmann::json& j);
// dict/list/str/int/float/bool/None → JSON; other types are kInvalidArgument
// naming `what` and the path inside it.
Result<nlohmann::json> FromPython(py::handle value, const std::string& what);

// A Status on its way to Python; translated by RegisterErrors' translator.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  const char* what() const noexcept override { return status_.message().c_str(); }
  const Status& status() const { return status_; }

 private:
  Status status_;
};

[[noreturn]] inline void Throw(const Status& status) { throw StatusError(status); }
inline void Check(const Status& status) {
  if (!status.ok()) Throw(status);
}
template <typename T>
T Unwrap(Result<T>&& r) {
  if (!r.ok()) Throw(r.status());
  return std::move(r).value();
}

// "invalid_argument", "not_found", ...: the key of hetplan._errors.BY_CODE.
const char* CodeName(ErrorCode code);

// Registers the translator StatusError → hetplan._errors.BY_CODE[code](message).
void RegisterErrors(py::module_& m);

}  // namespace hetplan::python
