// Exact integer sums for integer dtypes: Σ a_i as a 128-bit integer and
// Σ a_i² as a 192-bit one, both kept per tree node and summed exactly.
//
// Why 192 bits: a cell of an integer dtype has |a| <= 2^64 − 1, so a² < 2^128,
// and a run has fewer than 2^62 cells (the tree's length limit): Σ a² < 2^190.
// Every run's sum of squares therefore fits, for every integer dtype, and so
// does every difference of two of them (updates, total minus complement):
// the arithmetic below is two's complement modulo 2^192, exact whenever the
// true result lies in [−2^191, 2^191).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

namespace momenta {

// Exact sums of integer elements: 2^64 elements of 2^63 still fit.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// A 192-bit two's-complement integer: low 128 bits and high 64 bits.
class Int192 {
 public:
  constexpr Int192() = default;
  // `v` sign-extended.
  static constexpr Int192 Of(Int128 v) { return Int192(static_cast<UInt128>(v), v < 0 ? ~uint64_t{0} : 0); }
  // v², exact. REQUIRES: |v| < 2^64 (every integer cell value)
  static constexpr Int192 Square(Int128 v) {
    const UInt128 m = v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
    return Int192(m * m, 0);
  }

  constexpr Int192& operator+=(const Int192& o) {
    const UInt128 low = low_ + o.low_;
    high_ += o.high_ + (low < low_ ? 1 : 0);
    low_ = low;
    return *this;
  }
  constexpr Int192 operator-() const {
    Int192 r(~low_, ~high_);
    return r += Int192(1, 0);
  }
  constexpr Int192& operator-=(const Int192& o) { return *this += -o; }
  friend constexpr Int192 operator+(Int192 a, const Int192& b) { return a += b; }
  friend constexpr Int192 operator-(Int192 a, const Int192& b) { return a -= b; }
  constexpr bool operator==(const Int192&) const = default;

  constexpr bool negative() const { return (high_ >> 63) != 0; }
  constexpr bool is_zero() const { return low_ == 0 && high_ == 0; }
  // The value when it lies in Int128's range, else nothing.
  constexpr std::optional<Int128> ToInt128() const {
    const bool low_negative = static_cast<Int128>(low_) < 0;
    if (high_ != (low_negative ? ~uint64_t{0} : 0)) return std::nullopt;
    return static_cast<Int128>(low_);
  }
  // The value rounded to long double (within one ulp: the two halves round once each).
  long double ToLongDouble() const {
    if (negative()) return -(-*this).ToLongDouble();
    return std::ldexp(static_cast<long double>(high_), 128) + static_cast<long double>(low_);
  }

  // The stored form: 24 bytes, little-endian (low 128 bits first).
  static constexpr size_t kBytes = 24;
  void Store(void* at) const {
    std::memcpy(at, &low_, sizeof low_);
    std::memcpy(static_cast<char*>(at) + sizeof low_, &high_, sizeof high_);
  }
  static Int192 Load(const void* at) {
    Int192 v;
    std::memcpy(&v.low_, at, sizeof v.low_);
    std::memcpy(&v.high_, static_cast<const char*>(at) + sizeof v.low_, sizeof v.high_);
    return v;
  }

 private:
  constexpr Int192(UInt128 low, uint64_t high) : low_(low), high_(high) {}

  UInt128 low_ = 0;
  uint64_t high_ = 0;
};
static_assert(sizeof(UInt128) == 16);

// The exact change of a cell of an integer dtype as the nodes keep it:
// new − old and new² − old² (both 0 for float dtypes).
struct ExactChange {
  Int128 sum = 0;
  Int192 squares;
  bool is_zero() const { return sum == 0 && squares.is_zero(); }
  ExactChange& operator+=(const ExactChange& o) {
    sum += o.sum;
    squares += o.squares;
    return *this;
  }
};

// From the two values as integers. REQUIRES: |old_value|, |new_value| < 2^64
inline ExactChange ExactChangeOf(Int128 old_value, Int128 new_value) {
  return ExactChange{new_value - old_value, Int192::Square(new_value) - Int192::Square(old_value)};
}

}  // namespace momenta
