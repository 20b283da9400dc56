// The .npy header: encode/parse round trips, hand-written dicts in every
// spelling NumPy (old and new) produces, each rejection, the golden files
// NumPy wrote (tests/data/make_fixtures.py), and a fuzz loop.
#include "storage/npy/npy_format.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr DType kAll[] = {DType::kF8, DType::kF4, DType::kI8, DType::kI4, DType::kI2,
                          DType::kI1, DType::kU8, DType::kU4, DType::kU2, DType::kU1};

std::string DataFile(const std::string& name) { return std::string(MOMENTA_TEST_DATA_DIR) + "/" + name; }

// A complete header around `dict`: the preamble of `major`.0, the dict, and
// spaces and '\n' up to a multiple of 64 bytes, as NumPy pads it.
std::string MakeHeader(const std::string& dict, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string body = dict;
  while ((prefix + body.size() + 1) % 64 != 0) body += ' ';
  body += '\n';
  std::string out(kNpyMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((body.size() >> (8 * i)) & 0xff));
  return out + body;
}

Result<NpyHeader> Parse(const std::string& bytes) { return ParseNpyHeader(bytes, "data.npy"); }

NpyHeader ParseOk(const std::string& dict, int major = 1) {
  auto h = Parse(MakeHeader(dict, major));
  EXPECT_OK(h) << dict << ": " << h.status().ToString();
  return h.ok() ? *h : NpyHeader();
}

// The message of a header that must be rejected with `code`.
std::string Rejected(const std::string& bytes, Status::Code code) {
  auto h = Parse(bytes);
  EXPECT_FALSE(h.ok()) << "accepted: " << bytes;
  if (h.ok()) return "";
  EXPECT_EQ(h.status().code(), code) << h.status().ToString();
  const std::string msg = h.status().ToString();
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("data.npy"), std::string::npos) << msg;
  return msg;
}

std::string RejectedDict(const std::string& dict, Status::Code code) { return Rejected(MakeHeader(dict), code); }

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST(NpyFormatTest, EncodeParseRoundTrip) {
  std::vector<std::vector<uint64_t>> shapes = {{}, {0}, {1}, {5}, {3, 4}, {2, 3, 4}, {7, 0, 9}};
  shapes.push_back({uint64_t{1} << 40});
  shapes.push_back(std::vector<uint64_t>(kMaxNpyDims, 1));
  for (DType t : kAll) {
    for (const auto& shape : shapes) {
      const std::string bytes = EncodeNpyHeader(t, shape);
      ASSERT_EQ(bytes.size(), kMomentaDataOffset);
      EXPECT_EQ(bytes.back(), '\n');
      EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\xf6\x0f", 10));  // 4086
      auto size = NpyHeaderSize(std::span<const char>(bytes.data(), 12), "x.npy");
      ASSERT_OK(size);
      EXPECT_EQ(*size, kMomentaDataOffset);
      auto h = Parse(bytes);
      ASSERT_OK(h);
      EXPECT_EQ(h->dtype, t);
      EXPECT_EQ(h->shape, shape);
      EXPECT_EQ(h->data_offset, kMomentaDataOffset);
      EXPECT_EQ(h->major_version, 1);
      EXPECT_EQ(h->minor_version, 0);
      uint64_t n = 1;
      for (uint64_t d : shape) n *= d;
      EXPECT_EQ(h->length(), n);
      EXPECT_EQ(h->data_bytes(), n * DTypeSize(t));
    }
  }
}

TEST(NpyFormatTest, MinDataOffsetIsTheShortestHeader) {
  const uint64_t big = 9223372036854775807;
  std::vector<std::vector<uint64_t>> shapes = {{}, {0}, {5}, {0, big, big}};
  shapes.push_back(std::vector<uint64_t>(kMaxNpyDims, 0));
  shapes.push_back(std::vector<uint64_t>(kMaxNpyDims, 1));
  for (DType t : kAll) {
    for (const auto& shape : shapes) {
      const uint64_t offset = NpyMinDataOffset(t, shape);
      EXPECT_EQ(offset % 64, 0u);
      EXPECT_NE(offset % 4096, 0u);
      const std::string h = EncodeNpyHeader(t, shape, offset);
      auto parsed = Parse(h);
      ASSERT_OK(parsed);
      EXPECT_EQ(parsed->data_offset, offset);
      EXPECT_EQ(parsed->shape, shape);
      // 64 bytes less would not hold the dict and its '\n'.
      const size_t dict_end = h.rfind('}') + 1;
      EXPECT_GT(dict_end + 1, offset - 64);
    }
  }
  const uint64_t empty[] = {0};
  EXPECT_EQ(NpyMinDataOffset(DType::kF8, empty), 128u);  // 10 + 58-byte dict + '\n' = 69
}

TEST(NpyFormatTest, EncodeMatchesNumpyByteForByte) {
  // NumPy 1.24 wrote these with their data at 128; momenta's encoder with the
  // same offset must produce the very same header bytes.
  const struct {
    const char* file;
    DType t;
    uint64_t n;
  } kCases[] = {
      {"f8.npy", DType::kF8, 10}, {"f4.npy", DType::kF4, 10}, {"i8.npy", DType::kI8, 6}, {"i4.npy", DType::kI4, 6},
      {"i2.npy", DType::kI2, 6},  {"i1.npy", DType::kI1, 6},  {"u8.npy", DType::kU8, 5}, {"u4.npy", DType::kU4, 5},
      {"u2.npy", DType::kU2, 5},  {"u1.npy", DType::kU1, 5},
  };
  for (const auto& c : kCases) {
    const std::string golden = testing::ReadFileBytes(DataFile(c.file));
    ASSERT_GE(golden.size(), 128u) << c.file;
    const uint64_t shape[] = {c.n};
    EXPECT_EQ(EncodeNpyHeader(c.t, shape, 128), golden.substr(0, 128)) << c.file;
  }
  const std::string golden = testing::ReadFileBytes(DataFile("c_order_i4_3x4.npy"));
  const uint64_t shape[] = {3, 4};
  EXPECT_EQ(EncodeNpyHeader(DType::kI4, shape, 128), golden.substr(0, 128));
  EXPECT_EQ(EncodeNpyHeader(DType::kF8, {}, 128), testing::ReadFileBytes(DataFile("scalar_f8.npy")).substr(0, 128));
}

TEST(NpyFormatTest, AcceptsEverySpellingOfTheDict) {
  NpyHeader h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(h.dtype, DType::kF8);
  EXPECT_EQ(h.shape, std::vector<uint64_t>{3});
  EXPECT_EQ(h.data_offset, 128u);

  h = ParseOk("{\"shape\": (3, 4), \"descr\": \"<i2\", \"fortran_order\": False}");
  EXPECT_EQ(h.dtype, DType::kI2);
  EXPECT_EQ(h.shape, (std::vector<uint64_t>{3, 4}));

  h = ParseOk("{ 'fortran_order' :False ,\n 'shape':( 3L ,4L , ) ,'descr':'<u4',}");  // Python 2
  EXPECT_EQ(h.dtype, DType::kU4);
  EXPECT_EQ(h.shape, (std::vector<uint64_t>{3, 4}));

  h = ParseOk("{u'descr': u'<f4', u'fortran_order': False, u'shape': (2,)}");
  EXPECT_EQ(h.dtype, DType::kF4);

  h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
  EXPECT_TRUE(h.shape.empty());
  EXPECT_EQ(h.length(), 1u);

  h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }");
  EXPECT_EQ(h.length(), 0u);
  h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807), }");
  EXPECT_EQ(h.length(), 0u);
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775808), }",
                          Status::Code::kCorruption),
             "too large");

  const struct {
    const char* descr;
    DType t;
  } kDescrs[] = {
      {"<f8", DType::kF8}, {"<f4", DType::kF4}, {"<i8", DType::kI8}, {"<i4", DType::kI4},
      {"<i2", DType::kI2}, {"|i1", DType::kI1}, {"<i1", DType::kI1}, {">i1", DType::kI1},
      {"<u8", DType::kU8}, {"<u4", DType::kU4}, {"<u2", DType::kU2}, {"|u1", DType::kU1},
      {"<u1", DType::kU1}, {"=f8", DType::kF8}, {"f8", DType::kF8},  {"|f8", DType::kF8},
  };
  for (const auto& d : kDescrs) {
    h = ParseOk(std::string("{'descr': '") + d.descr + "', 'fortran_order': False, 'shape': (1,)}");
    EXPECT_EQ(h.dtype, d.t) << d.descr;
  }

  // Versions 2.0 and 3.0 carry a 4-byte length.
  h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 2);
  EXPECT_EQ(h.major_version, 2);
  EXPECT_EQ(h.data_offset, 128u);
  h = ParseOk("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 3);
  EXPECT_EQ(h.major_version, 3);

  // Bytes after the header are not looked at.
  auto more = Parse(MakeHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}") + "xxxxxxxx");
  ASSERT_OK(more);
  EXPECT_EQ(more->data_offset, 128u);
}

TEST(NpyFormatTest, RejectsUnsupportedDTypes) {
  auto dict = [](const std::string& descr) {
    return "{'descr': " + descr + ", 'fortran_order': False, 'shape': (2,), }";
  };
  const auto kNS = Status::Code::kNotSupported;
  std::string m = RejectedDict(dict("'>f8'"), kNS);
  EXPECT_HAS(m, "big-endian dtype '>f8'");
  EXPECT_HAS(m, "astype('<f8')");
  EXPECT_HAS(RejectedDict(dict("'>u2'"), kNS), "astype('<u2')");
  EXPECT_HAS(RejectedDict(dict("'|O'"), kNS), "object dtype '|O'");
  EXPECT_HAS(RejectedDict(dict("[('a', '<i4'), ('b', '<f8')]"), kNS), "structured dtype");
  EXPECT_HAS(RejectedDict(dict("'|b1'"), kNS), "dtype '|b1' (bool) is not supported");
  EXPECT_HAS(RejectedDict(dict("'<c16'"), kNS), "dtype '<c16' (complex)");
  EXPECT_HAS(RejectedDict(dict("'<M8[ns]'"), kNS), "dtype '<M8[ns]' (datetime)");
  EXPECT_HAS(RejectedDict(dict("'<U5'"), kNS), "dtype '<U5' (string)");
  EXPECT_HAS(RejectedDict(dict("'<f2'"), kNS), "dtype '<f2'");
  EXPECT_HAS(RejectedDict(dict("'<f16'"), kNS), "dtype '<f16'");
  EXPECT_HAS(RejectedDict(dict("'<i16'"), kNS), "dtype '<i16'");
  EXPECT_HAS(RejectedDict(dict("''"), kNS), "dtype ''");
  EXPECT_HAS(RejectedDict(dict("3"), Status::Code::kCorruption), "'descr' is not a string");
}

TEST(NpyFormatTest, RejectsBadDicts) {
  const auto kC = Status::Code::kCorruption;
  EXPECT_HAS(
      Rejected(MakeHeader("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }"), Status::Code::kNotSupported),
      "Fortran-order");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", kC),
             "'fortran_order' is not True or False");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False}", kC), "lacks the key 'shape'");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'shape': (1,), 'fortran_order': False, 'x': 1}", kC), "unexpected key 'x'");
  // A key given twice keeps its last value, as in a Python dict (and NumPy).
  EXPECT_EQ(ParseOk("{'descr': '<f8', 'shape': (1,), 'fortran_order': False, 'shape': (4, 2)}").shape,
            (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(ParseOk("{'descr': [[1]], 'shape': (1,), 'fortran_order': False, 'descr': 'u1'}").dtype, DType::kU1);
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (5)}", kC),
             "'shape' is not a tuple");  // (5) is 5 in Python
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': [5]}", kC), "'shape' is not a tuple");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}", kC), "negative dimension");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': ('a',)}", kC), "other than integers");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,)}", kC),
             "2^64 or more");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", kC),
             "too large");
  EXPECT_HAS(RejectedDict("{'descr': '<u1', 'fortran_order': False, 'shape': (9223372036854775807,)}", kC),
             "too large");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,)}", kC),
             "too large");  // 2^60 elements of 8 bytes = 2^63 bytes
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1,";
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': " + many + ")}", kC), "65 dimensions");
  EXPECT_HAS(RejectedDict("['descr', '<f8']", kC), "not a dict");

  // Unparsable dicts say what went wrong where.
  for (const char* bad : {"{'descr': <f8, 'fortran_order': False, 'shape': (3,), }",
                          "{'descr': '<f8' 'fortran_order': False, 'shape': (3,)}",
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)",
                          "{'descr': '<f8, 'fortran_order': False, 'shape': (3,)}",
                          "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (3,)}",
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (3x,)}",
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} junk",
                          "",
                          "   ",
                          "{",
                          "}",
                          "{:}",
                          "{'descr': '<f8', 'fortran_order': False, "
                          "'shape': (3,)}\n  {}",
                          "{'a': 01}",
                          "{'a': 1__0}",
                          "{'a': 2j+1}",
                          "{'a': -(-1)}",
                          "{'a': f'x'}",
                          "{'a': 'x\\x4'}",
                          "{'a': 'x' b'y'}",
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\v"}) {
    EXPECT_HAS(RejectedDict(bad, kC), "does not parse");
  }
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (3.0,)}", kC), "other than integers");
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (True,)}", kC), "other than integers");
  EXPECT_HAS(RejectedDict("{'descr'}", kC), "not a dict");  // a set
  EXPECT_HAS(RejectedDict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), [1]: 2}", kC),
             "unhashable dict key");
  std::string deep(250, '[');
  EXPECT_HAS(RejectedDict("{'descr': " + deep + "}", kC), "nesting deeper");
}

TEST(NpyFormatTest, RejectsBadPreambles) {
  const std::string good = MakeHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  const auto kC = Status::Code::kCorruption;
  EXPECT_HAS(Rejected("PK\x03\x04 not an array at all", kC), "not a NumPy .npy file");
  EXPECT_HAS(Rejected("", kC), "not a NumPy .npy file");
  EXPECT_HAS(Rejected(std::string(kNpyMagic), kC), "preamble truncated");
  EXPECT_HAS(Rejected(good.substr(0, 9), kC), "preamble truncated");
  EXPECT_HAS(Rejected(good.substr(0, 40), kC), "header truncated: it says 128 bytes, only 40 are there");

  std::string v4 = good;
  v4[6] = 4;
  EXPECT_HAS(Rejected(v4, Status::Code::kNotSupported), "unsupported .npy format version 4.0");
  std::string v11 = good;
  v11[7] = 1;
  EXPECT_HAS(Rejected(v11, Status::Code::kNotSupported), "version 1.1");

  // A v2 header claiming 4 GiB of dict.
  std::string huge(kNpyMagic);
  huge += std::string("\x02\x00\xff\xff\xff\xff", 6);
  EXPECT_HAS(Rejected(huge, kC), "exceeds the limit");
  auto size = NpyHeaderSize(std::span<const char>(huge.data(), 12), "data.npy");
  ASSERT_FALSE(size.ok());
  EXPECT_HAS(size.status().ToString(), "exceeds the limit");
}

// Every golden file NumPy wrote opens with its dtype, shape and values.
template <typename T>
void ExpectValues(const std::string& name, DType t, const std::vector<T>& want, std::vector<uint64_t> shape = {}) {
  SCOPED_TRACE(name);
  if (shape.empty()) shape = {want.size()};
  auto f = ArrayFile::Open(DataFile(name), IoOptions{.kind = IoKind::kPread});
  ASSERT_OK(f);
  const ArrayFile& a = **f;
  EXPECT_EQ(a.dtype(), t);
  EXPECT_EQ(a.header().shape, shape);
  EXPECT_EQ(a.header().data_offset, 128u);
  ASSERT_EQ(a.length(), want.size());
  std::vector<Value> got;
  ASSERT_OK((*f)->ReadValues(0, want.size(), &got));
  for (size_t k = 0; k < want.size(); ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      ASSERT_EQ(got[k].kind, Value::Kind::kFloat);
      const double w = static_cast<double>(want[k]);
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(got[k].f)) << "#" << k;
      } else {
        EXPECT_EQ(got[k].f, w) << "#" << k;
        EXPECT_EQ(std::signbit(got[k].f), std::signbit(w)) << "#" << k;
      }
    } else if constexpr (std::is_signed_v<T>) {
      ASSERT_EQ(got[k].kind, Value::Kind::kInt);
      EXPECT_EQ(got[k].i, static_cast<int64_t>(want[k])) << "#" << k;
    } else {
      ASSERT_EQ(got[k].kind, Value::Kind::kUInt);
      EXPECT_EQ(got[k].u, static_cast<uint64_t>(want[k])) << "#" << k;
    }
  }
}

TEST(NpyFormatTest, GoldenFilesFromNumpyOpen) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  ExpectValues<double>("f8.npy", DType::kF8, {0.0, -0.0, 1.5, -2.25, 1e308, 5e-324, nan, inf, -inf, 0.1});
  ExpectValues<float>("f4.npy", DType::kF4,
                      {0.0f, -0.0f, 1.5f, -2.25f, FLT_MAX, 1e-45f, static_cast<float>(nan), static_cast<float>(inf),
                       -static_cast<float>(inf), 0.1f});
  ExpectValues<int64_t>("i8.npy", DType::kI8,
                        {0, 1, -1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 42});
  ExpectValues<int32_t>("i4.npy", DType::kI4, {0, 1, -1, INT32_MIN, INT32_MAX, 42});
  ExpectValues<int16_t>("i2.npy", DType::kI2, {0, 1, -1, INT16_MIN, INT16_MAX, 42});
  ExpectValues<int8_t>("i1.npy", DType::kI1, {0, 1, -1, INT8_MIN, INT8_MAX, 42});
  ExpectValues<uint64_t>("u8.npy", DType::kU8, {0, 1, std::numeric_limits<uint64_t>::max(), uint64_t{1} << 63, 42});
  ExpectValues<uint32_t>("u4.npy", DType::kU4, {0, 1, UINT32_MAX, uint32_t{1} << 31, 42});
  ExpectValues<uint16_t>("u2.npy", DType::kU2, {0, 1, UINT16_MAX, 1u << 15, 42});
  ExpectValues<uint8_t>("u1.npy", DType::kU1, {0, 1, 255, 128, 42});
  ExpectValues<int32_t>("c_order_i4_3x4.npy", DType::kI4, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  ExpectValues<double>("v2_f8.npy", DType::kF8, {1.0, 2.0, 3.0});
  ExpectValues<uint16_t>("v3_u2.npy", DType::kU2, {1, 2, 65535});
}

TEST(NpyFormatTest, GoldenScalarAndEmpty) {
  auto scalar = ArrayFile::Open(DataFile("scalar_f8.npy"), IoOptions{.kind = IoKind::kPread});
  ASSERT_OK(scalar);
  EXPECT_TRUE((*scalar)->header().shape.empty());
  ASSERT_EQ((*scalar)->length(), 1u);
  double d = 0;
  ASSERT_OK((*scalar)->ReadDoubles(0, 1, &d));
  EXPECT_EQ(d, 3.5);

  auto empty = ArrayFile::Open(DataFile("empty_f8.npy"), IoOptions{.kind = IoKind::kPread});
  ASSERT_OK(empty);
  EXPECT_EQ((*empty)->header().shape, std::vector<uint64_t>{0});
  EXPECT_EQ((*empty)->length(), 0u);
  EXPECT_OK((*empty)->ReadDoubles(0, 0, &d));
  EXPECT_EQ((*empty)->ReadDoubles(0, 1, &d).code(), Status::Code::kOutOfRange);
}

TEST(NpyFormatTest, GoldenRejects) {
  const struct {
    const char* file;
    Status::Code code;
    const char* fragment;
  } kCases[] = {
      {"reject_big_endian_f8.npy", Status::Code::kNotSupported, "astype('<f8')"},
      {"reject_fortran_f8.npy", Status::Code::kNotSupported, "Fortran-order"},
      {"reject_structured.npy", Status::Code::kNotSupported, "structured dtype"},
      {"reject_object.npy", Status::Code::kNotSupported, "object dtype '|O'"},
      {"reject_bool.npy", Status::Code::kNotSupported, "dtype '|b1' (bool)"},
      {"reject_complex128.npy", Status::Code::kNotSupported, "dtype '<c16' (complex)"},
      {"reject_truncated_f8.npy", Status::Code::kCorruption,
       "file is 152 bytes, shorter than the 208 bytes its header promises"},
      {"reject_garbage_header.npy", Status::Code::kCorruption, "header dict does not parse"},
      {"reject_bad_magic.npy", Status::Code::kCorruption, "not a NumPy .npy file"},
  };
  for (const auto& c : kCases) {
    const std::string path = DataFile(c.file);
    auto f = ArrayFile::Open(path, IoOptions{.kind = IoKind::kPread});
    ASSERT_FALSE(f.ok()) << c.file;
    const std::string msg = f.status().ToString();
    EXPECT_EQ(f.status().code(), c.code) << msg;
    EXPECT_HAS(msg, c.fragment);
    EXPECT_HAS(msg, path);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// Random damage to valid headers: the parser returns a Status, never crashes,
// never reads outside its span, and what it accepts is self-consistent.
TEST(NpyFormatTest, FuzzedHeadersNeverCrash) {
  const uint64_t seed = testing::TestSeed();
  std::cout << "[ seed     ] " << seed << " (MOMENTA_SEED=" << seed << " reproduces)\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);

  std::vector<std::string> seeds;
  for (const char* name : {"f8.npy", "c_order_i4_3x4.npy", "v2_f8.npy", "v3_u2.npy", "reject_structured.npy",
                           "reject_object.npy", "scalar_f8.npy"}) {
    const std::string bytes = testing::ReadFileBytes(DataFile(name));
    seeds.push_back(bytes.substr(0, std::min<size_t>(bytes.size(), 128)));
  }
  const uint64_t shape[] = {3, 4, 5};
  seeds.push_back(EncodeNpyHeader(DType::kU2, shape, 128));
  seeds.push_back(MakeHeader("{ 'fortran_order' :False ,'shape':( 3L ,4L , ) ,'descr':'<u4',}"));

  const std::string kSpecial = "(){}[],:'\"-+0123456789LTFNu \n\\\x00\xff";
  int accepted = 0;
  for (int iter = 0; iter < 30000; ++iter) {
    std::string h = seeds[rng() % seeds.size()];
    const int edits = rng() % 2 ? 1 : 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !h.empty(); ++e) {
      // Mostly inside the dict, sometimes in the preamble.
      const size_t at = h.size() > 10 && rng() % 4 != 0 ? 10 + rng() % (h.size() - 10) : rng() % h.size();
      switch (rng() % 6) {
        case 0:
          h[at] = static_cast<char>(h[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          h[at] = static_cast<char>(rng());
          break;
        case 2:
          h[at] = kSpecial[rng() % kSpecial.size()];
          break;
        case 3:
          h.resize(at);
          break;
        case 4:
          h.insert(at, 1, kSpecial[rng() % kSpecial.size()]);
          break;
        case 5:
          h.erase(at, 1 + rng() % 8);
          break;
      }
    }
    // An exact-size copy so any read past the end is a heap overflow that
    // sanitizers catch.
    std::unique_ptr<char[]> exact(new char[h.size() + 1]);
    std::memcpy(exact.get(), h.data(), h.size());
    const std::span<const char> span(exact.get(), h.size());
    auto size = NpyHeaderSize(span.first(std::min<size_t>(span.size(), 12)), "fuzz.npy");
    auto parsed = ParseNpyHeader(span, "fuzz.npy");
    if (!parsed.ok()) {
      const std::string msg = parsed.status().ToString();
      ASSERT_EQ(msg.find('\n'), std::string::npos) << msg;
      ASSERT_NE(msg.find("fuzz.npy"), std::string::npos) << msg;
      continue;
    }
    ++accepted;
    ASSERT_OK(size);
    ASSERT_EQ(parsed->data_offset, *size);
    ASSERT_LE(parsed->data_offset, h.size());
    ASSERT_LE(parsed->shape.size(), kMaxNpyDims);
    // length() and data_bytes() must not have wrapped.
    long double n = 1;
    for (uint64_t d : parsed->shape) n *= static_cast<long double>(d);
    ASSERT_EQ(static_cast<long double>(parsed->length()), n);
    ASSERT_LT(static_cast<long double>(parsed->data_bytes()), 0x1p63L);
  }
  std::cout << "[ fuzz     ] " << accepted << " of 30000 damaged headers still parsed\n";
}

}  // namespace
}  // namespace momenta
