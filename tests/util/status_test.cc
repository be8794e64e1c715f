// Status and Result: errors as values.
#include "hetplan/util/status.h"

#include <gtest/gtest.h>

#include <string>

namespace hetplan {
namespace {

TEST(Result, HoldsAValueOrAnError) {
  Result<int> v = 3;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
  EXPECT_TRUE(v.status().ok());
  Result<int> e = Error(ErrorCode::kNotFound, "{}: missing", "x.onnx");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(e.status().message(), "x.onnx: missing");
}

// A Result made from an OK status has no value; it must not look like a
// success to a caller that returns its status.
TEST(Result, FromAnOkStatusIsAnInternalError) {
  Result<int> r = Status::Ok();
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.status().ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
  EXPECT_NE(r.status().message().find("OK status"), std::string::npos);
}

Status Propagates(bool fail) {
  auto inner = [&]() -> Result<int> {
    if (fail) return Error(ErrorCode::kInvalidArgument, "bad");
    return 1;
  };
  HETPLAN_ASSIGN_OR_RETURN(int x, inner());
  return x == 1 ? Status::Ok() : Error(ErrorCode::kInternal, "wrong value");
}

TEST(Result, AssignOrReturnPropagates) {
  EXPECT_TRUE(Propagates(false).ok());
  EXPECT_EQ(Propagates(true).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hetplan
