// The .npy reader (hetplan/util/npy.h): what numpy.save writes reads back;
// hostile or unsupported headers are one-line errors, never a crash.
#include "hetplan/util/npy.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// A version-1 .npy file with `header` (padded as numpy pads it) and `data`.
std::string WriteNpy(const std::string& name, std::string header, const std::string& data) {
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header + data;
  const fs::path path = fs::temp_directory_path() / ("hetplan_npy_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << file;
  return path.string();
}

TEST(Npy, ReadsWhatNumpySaveWrites) {
  std::string data(6 * 8, '\0');
  const int64_t values[6] = {3, 7, 1, 12, 5, 9};
  std::memcpy(data.data(), values, sizeof values);
  auto t = ReadNpy(WriteNpy("ok.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 6), }", data));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->elem_type, 7);  // int64
  EXPECT_EQ(t->shape, (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(t->bytes, data);
  auto scalar = ReadNpy(WriteNpy("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                                 std::string(4, '\0')));
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_TRUE(scalar->shape.empty());
}

TEST(Npy, BadFilesAreOneLineErrors) {
  const std::string f4 = "'descr': '<f4', ";
  const struct {
    const char* name;
    std::string header, data, expect;
  } cases[] = {
      {"fortran.npy", "{" + f4 + "'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0'), "Fortran order"},
      {"big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'), "big-endian"},
      {"object.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0'),
       "not a number or bool type"},
      {"short.npy", "{" + f4 + "'fortran_order': False, 'shape': (3,), }", std::string(8, '\0'),
       "fewer than its shape needs"},
      {"long.npy", "{" + f4 + "'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'), "need 4"},
      // 2^61 doubles wrap a 64-bit byte count to 0: refused, not read as empty.
      {"wrap.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", "",
       "a dim of its shape is too large"},
      {"wrap2.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 2097152), }", "",
       "fewer than its shape needs"},
      {"nokeys.npy", "{'shape': (1,), }", std::string(4, '\0'), "lacks 'descr'"},
      {"gap.npy", "{" + f4 + "'fortran_order': False, 'shape': (1 2,), }", std::string(48, '\0'), "not a tuple"},
  };
  for (const auto& c : cases) {
    auto t = ReadNpy(WriteNpy(c.name, c.header, c.data));
    ASSERT_FALSE(t.ok()) << c.name;
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << c.name << ": " << t.status().message();
    EXPECT_EQ(t.status().message().find('\n'), std::string::npos) << c.name;
  }
  auto missing = ReadNpy("/nonexistent/x.npy");
  EXPECT_NE(missing.status().message().find("cannot open the sample input"), std::string::npos);
}

}  // namespace
}  // namespace hetplan
