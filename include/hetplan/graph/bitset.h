// A fixed-size bitset sized at run time, for reachability (E⁺) rows.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace hetplan {

class DynamicBitset {
 public:
  DynamicBitset() = default;
  explicit DynamicBitset(int size) : size_(size), words_((size + 63) / 64, 0) {}

  int size() const { return size_; }
  bool test(int i) const { return (words_[i >> 6] >> (i & 63)) & 1U; }
  void set(int i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  void reset(int i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
  DynamicBitset& operator|=(const DynamicBitset& o) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
    return *this;
  }
  int count() const {
    int c = 0;
    for (uint64_t w : words_) c += std::popcount(w);
    return c;
  }
  const std::vector<uint64_t>& words() const { return words_; }
  bool operator==(const DynamicBitset&) const = default;

 private:
  int size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace hetplan
