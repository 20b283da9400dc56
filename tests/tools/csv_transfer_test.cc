// `momenta import` / `export` of tables, as processes: CSV rows of K values
// are an (N, K) array both ways (numpy.loadtxt / numpy.savetxt are the
// reference), ragged rows and bad options are refused naming the file and
// line, a header is skipped, and raw input can start at a byte offset.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::CommandResult;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::RunPython;
using testing::ScratchDir;
using testing::WriteFileBytes;

// The "shape:" line of `momenta info`, e.g. "(3, 2)".
std::string ShapeOf(const std::string& array) {
  const std::string out = RunCli({"info", array}).out;
  const size_t at = out.find("shape:");
  if (at == std::string::npos) return "no shape in: " + out;
  const size_t open = out.find('(', at);
  return out.substr(open, out.find(')', open) - open + 1);
}

std::string Values(const std::string& array, int count) {
  return RunCli({"get", array, "0", "--count", std::to_string(count)}).out;
}

void ExpectError(const CommandResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind("momenta: ", 0), 0u) << r.err;
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in: " << r.err;
}

TEST(CsvTransferTest, RowsOfKValuesImportAsShapeNK) {
  ScratchDir dir;
  const std::string csv = dir.File("t.csv");
  WriteFileBytes(csv, "0,1.5\n1,2.5\n# a comment\n\n2;-3e2\r\n");
  const std::string a = dir.File("a.npy");
  auto imp = RunCli({"import", csv, a});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(ShapeOf(a), "(3, 2)");
  EXPECT_EQ(Values(a, 6), "0\n1.5\n1\n2.5\n2\n-300\n");
  // The same from stdin, and one row only: (K,), as numpy.loadtxt squeezes it.
  auto in = RunCli({"import", "-", dir.File("s.npy"), "--dtype", "i4"}, "7 8 9\n10 11 12\n");
  ASSERT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(ShapeOf(dir.File("s.npy")), "(2, 3)");
  ASSERT_EQ(RunCli({"import", "-", dir.File("r.npy")}, "1,2,3\n").exit_code, 0);
  EXPECT_EQ(ShapeOf(dir.File("r.npy")), "(3,)");
  // One column, by index: (N,) of exactly that column.
  ASSERT_EQ(RunCli({"import", csv, dir.File("c.npy"), "--column", "1"}).exit_code, 0);
  EXPECT_EQ(ShapeOf(dir.File("c.npy")), "(3,)");
  EXPECT_EQ(Values(dir.File("c.npy"), 3), "1.5\n2.5\n-300\n");
  ASSERT_EQ(RunCli({"import", csv, dir.File("l.npy"), "--column", "-2"}).exit_code, 0);
  EXPECT_EQ(Values(dir.File("l.npy"), 3), "0\n1\n2\n");
  ExpectError(RunCli({"import", csv, dir.File("x.npy"), "--column", "2"}), 1, {csv, "--column 2", "columns 0 to 1"});
  if (!testing::HaveNumpy()) GTEST_SKIP() << "no NumPy for /usr/bin/python3: loadtxt comparison skipped";
  const std::string plain = dir.File("p.csv");
  WriteFileBytes(plain, "0,1.5\n1,2.5\n2,-300\n");
  ASSERT_EQ(RunCli({"import", plain, dir.File("p.npy")}).exit_code, 0);
  auto same = RunPython("import numpy as np\nw = np.loadtxt('" + plain + "', delimiter=',')\ng = np.load('" +
                        dir.File("p.npy") +
                        "')\nassert g.shape == w.shape == (3, 2), (g.shape, w.shape)\n"
                        "assert g.dtype == w.dtype and (g == w).all(), (g, w)\nprint('same')");
  EXPECT_EQ(same.out, "same\n") << same.err;
}

TEST(CsvTransferTest, RaggedRowsAreRefusedNamingTheLine) {
  ScratchDir dir;
  const std::string csv = dir.File("ragged.csv");
  WriteFileBytes(csv, "1,2\n3,4\n\n5\n6,7\n");
  ExpectError(RunCli({"import", csv, dir.File("d.npy")}), 1, {csv, "line 4 has 1 value", "line 1"});
  ExpectError(RunCli({"import", "-", dir.File("d.npy")}, "1\n2\n3 4\n"), 1, {"stdin", "line 3 has 2 values"});
  // Taking one column does not make a ragged file whole.
  ExpectError(RunCli({"import", csv, dir.File("d.npy"), "--column", "0"}), 1, {"line 4"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("d.npy")));
}

TEST(CsvTransferTest, HeaderIsSkipped) {
  ScratchDir dir;
  const std::string csv = dir.File("h.csv");
  WriteFileBytes(csv, "time (s),\"value\"\n0,1.5\n1,2.5\n");
  auto imp = RunCli({"import", csv, dir.File("a.npy")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.err.find("line 1 holds no number: skipped as a header (time (s), value)"), std::string::npos)
      << imp.err;
  EXPECT_EQ(ShapeOf(dir.File("a.npy")), "(2, 2)");
  EXPECT_EQ(Values(dir.File("a.npy"), 4), "0\n1.5\n1\n2.5\n");
  // A column by the header's name, from stdin too.
  auto by_name = RunCli({"import", "-", dir.File("v.npy"), "--column", "value"}, ReadFileBytes(csv));
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_EQ(Values(dir.File("v.npy"), 2), "1.5\n2.5\n");
  ExpectError(RunCli({"import", csv, dir.File("x.npy"), "--column", "speed"}), 1,
              {csv, "no such name in the header on line 1 (time (s), value)"});
  // --skip-rows: lines that hold numbers too; the last one skipped names the columns.
  const std::string two = dir.File("two.csv");
  WriteFileBytes(two, "sensor 7, run 3\nt v\n10 20\n30 40\n");
  auto skip = RunCli({"import", two, dir.File("s.npy"), "--skip-rows", "2", "--column", "v"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(skip.err.find("header"), std::string::npos) << skip.err;
  EXPECT_EQ(Values(dir.File("s.npy"), 2), "20\n40\n");
  ExpectError(RunCli({"import", two, dir.File("x.npy")}), 1, {two, "line 1"});
  ExpectError(RunCli({"import", two, dir.File("x.npy"), "--skip-rows", "x"}), 2, {"--skip-rows"});
}

TEST(CsvTransferTest, ExportWritesKColumnsAndRoundTrips) {
  ScratchDir dir;
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1e3);
  std::string csv;
  for (int r = 0; r < 40; ++r) {
    for (int c = 0; c < 3; ++c) csv += std::to_string(normal(rng)) + (c < 2 ? "," : "\n");
  }
  WriteFileBytes(dir.File("in.csv"), csv);
  const std::string a = dir.File("a.npy");
  ASSERT_EQ(RunCli({"import", dir.File("in.csv"), a}).exit_code, 0);
  ASSERT_EQ(ShapeOf(a), "(40, 3)");
  auto exp = RunCli({"export", a, dir.File("out.csv")});
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  const std::vector<std::string> lines = testing::Lines(ReadFileBytes(dir.File("out.csv")));
  ASSERT_EQ(lines.size(), 40u);
  for (const auto& l : lines) EXPECT_EQ(std::count(l.begin(), l.end(), ','), 2) << l;
  // Round trip: the same shape and the same bytes of data.
  ASSERT_EQ(RunCli({"import", dir.File("out.csv"), dir.File("b.npy")}).exit_code, 0);
  EXPECT_EQ(ShapeOf(dir.File("b.npy")), "(40, 3)");
  EXPECT_EQ(ReadFileBytes(dir.File("b.npy")), ReadFileBytes(a));
  ASSERT_EQ(RunCli({"export", a, dir.File("out.tsv"), "--range", ":3"}).exit_code, 0);
  EXPECT_EQ(ReadFileBytes(dir.File("out.tsv")), std::regex_replace(lines[0], std::regex(","), "\t") + "\n");
  // Whole rows of a range; a range that cuts a row is refused.
  EXPECT_EQ(RunCli({"export", a, "-", "--format", "csv", "--range", "3:6"}).out, lines[1] + "\n");
  auto cut = RunCli({"export", a, dir.File("cut.csv"), "--range", "1:5"});
  ExpectError(cut, 1, {a, "cuts a CSV row", "multiples of 3"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("cut.csv")));
  if (!testing::HaveNumpy()) GTEST_SKIP() << "no NumPy for /usr/bin/python3: savetxt/loadtxt comparison skipped";
  // NumPy reads what export wrote as the array; (N, A, B) writes A*B values per line.
  const std::string n3 = dir.File("n3.npy");
  auto made = RunPython("import numpy as np\nw = np.loadtxt('" + dir.File("out.csv") +
                        "', delimiter=',')\n"
                        "assert (w == np.load('" +
                        a +
                        "')).all()\n"
                        "np.save('" +
                        n3 + "', np.arange(24, dtype='i2').reshape(4, 2, 3) - 5)\nprint('ok')");
  ASSERT_EQ(made.out, "ok\n") << made.err;
  ASSERT_EQ(RunCli({"export", n3, dir.File("n3.csv")}).exit_code, 0);
  auto same = RunPython("import numpy as np\ng = np.loadtxt('" + dir.File("n3.csv") +
                        "', delimiter=',', dtype='i2')\n"
                        "print(g.shape, (g == np.load('" +
                        n3 + "').reshape(4, -1)).all())");
  EXPECT_EQ(same.out, "(4, 6) True\n") << same.err;
}

// A WAV file's 44 header bytes, then int16 samples.
TEST(CsvTransferTest, RawImportStartsAtAByteOffset) {
  ScratchDir dir;
  std::string wav = "RIFF" + std::string(36, '\x11') + "data";
  ASSERT_EQ(wav.size(), 44u);
  const std::vector<int16_t> samples{0, 1, -1, 32767, -32768, 1234};
  for (int16_t s : samples) wav.append(reinterpret_cast<const char*>(&s), 2);
  const std::string path = dir.File("rec.wav");
  WriteFileBytes(path, wav);
  const std::string a = dir.File("a.npy");
  auto imp = RunCli({"import", path, a, "--dtype", "i2", "--offset", "44"});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(ShapeOf(a), "(6,)");
  EXPECT_EQ(Values(a, 6), "0\n1\n-1\n32767\n-32768\n1234\n");
  // Past the end, and a rest that is not whole elements: errors naming the file.
  ExpectError(RunCli({"import", path, dir.File("x.npy"), "--dtype", "i2", "--offset", "45"}), 1,
              {path, "size 11 bytes after --offset 45 is not a multiple of the itemsize 2"});
  ExpectError(RunCli({"import", path, dir.File("x.npy"), "--dtype", "i2", "--offset", "100"}), 1,
              {path, "--offset 100 is past the end of the file (56 bytes)"});
  ExpectError(RunCli({"import", path, dir.File("x.npy"), "--dtype", "i2", "--offset", "-4"}), 2, {"--offset"});
  ExpectError(RunCli({"import", "-", dir.File("x.npy"), "--offset", "4"}, "1\n"), 2, {"--offset", "raw"});
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.npy")));
}

}  // namespace
}  // namespace momenta
