// Assertions the test files share.
#pragma once

#include <gtest/gtest.h>

#include <string>

// `text` (anything a std::string is made from) contains `part`; prints text when not.
#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
