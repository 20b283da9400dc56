// .npy header parity with NumPy: thousands of header variants — hand-written
// oddities and random mutations of valid headers (seed printed) — are judged
// by NumPy itself (numpy.lib.format's reader, then np.load, all in one Python
// process), and momenta must agree on every one: accept with the same dtype
// and shape, or refuse with a one-line message naming the file. The one
// documented exception: headers NumPy reads but momenta does not store
// (other dtypes, big-endian, Fortran order, descrs that are not one of the
// plain spellings of NpyDescrDType) are refused by momenta.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "storage/array/array_file.h"
#include "storage/npy/npy_format.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::RunPython;
using testing::ScratchDir;
using testing::TestSeed;
using testing::WriteFileBytes;

// The preamble of `major`.0 and `dict` padded per `pad`:
//   0: NumPy's padding (spaces, then '\n', to a multiple of 64 bytes)
//   1: none; 2: '\n' then spaces; 3: tabs then '\n'; 4: spaces only.
std::string Header(const std::string& dict, int major, int pad) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string body = dict;
  auto fill = [&](char c) {
    while ((prefix + body.size() + 1) % 64 != 0) body += c;
  };
  switch (pad) {
    case 0:
      fill(' ');
      body += '\n';
      break;
    case 1:
      break;
    case 2:
      body += '\n';
      fill(' ');
      body += ' ';
      break;
    case 3:
      fill('\t');
      body += '\n';
      break;
    default:
      fill(' ');
      body += ' ';
      break;
  }
  std::string out(kNpyMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const size_t n = body.size() & (major == 1 ? 0xffff : 0xffffffff);
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + body;
}

std::string Dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// Hand-written dicts: what NumPy and old writers produce, and the oddities
// Python's literal syntax allows (or nearly allows).
std::vector<std::string> HandWritten() {
  std::vector<std::string> d = {
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 0)}",
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}",
      "{'descr': \"<i4\", \"fortran_order\": False, 'shape': (2,)}",
      "{  'descr'  :  '<f8'  ,  'fortran_order'  :  False  ,  'shape'  :  ( 3 , )  ,  }",
      "{'descr':'<f8','fortran_order':False,'shape':(3,)}",
      "{'descr': '<f8',,'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,),,}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (,)}",
      "{,}",
      "{}",
      "{'descr': '<f8', 'fortran_order': True, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': 'False', 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': false, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': None, 'shape': (3,)}",
      // A key given twice: the last value counts.
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'shape': (5,)}",
      "{'descr': '<i2', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': 1.5, 'fortran_order': False, 'shape': (3,), 'descr': '<u2'}",
      "{'descr': [[1]], 'fortran_order': ..., 'shape': {1, 2}, 'descr': '<u4', "
      "'fortran_order': False, 'shape': (1,)}",
      "{'descr': 1+2j, 'fortran_order': set(), 'shape': b'x', 'descr': '<i8', "
      "'fortran_order': False, 'shape': (2,)}",
      "{'descr': -1-2.5j, 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': 2j+1, 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': -(-1), 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': {[1]: 2}, 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': {(1, 2): {3}}, 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': {{1}}, 'fortran_order': False, 'shape': (3,), 'descr': '<f4'}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
      "{'descr': '<f8', 'fortran_order': False}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), b'shape': (3,)}",
      "{b'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': b'<f8', 'fortran_order': False, 'shape': (3,)}",
      "{u'descr': u'<f8', u'fortran_order': False, u'shape': (3,)}",
      "{r'descr': R'<f8', U'fortran_order': False, 'shape': (3,)}",
      "{'de' 'scr': '<' \"f8\", 'fortran_order': False, 'shape': (3,)}",
      "{'de' b'scr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'''descr''': \"\"\"<f8\"\"\", 'fortran_order': False, 'shape': (3,)}",
      "{'\\x64escr': '\\x3cf8', 'fortran_order': False, 'shape': (3,)}",
      "{'\\144escr': '\\u003cf8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '\\U0000003cf8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f\\\n8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '\\<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': r'\\<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '\\x3', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': f'<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': rb'<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': ur'<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3 L,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3l,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3LL,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0x3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0o3, 0b11)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1_0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1__0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (03,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (00,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (+3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (-0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (- 3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3.0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3j,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (True, 3)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (False,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ((3),)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ((3,),)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': [3]}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': 3}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} # a comment",
      "# a comment\n{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', # the dtype\n 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8',\n 'fortran_order': False,\n 'shape': (3,)\n}",
      "{'descr': '<f8',\r\n 'fortran_order': False,\r 'shape': (3,)}",
      "{'descr': '<f8', \\\n'fortran_order': False, 'shape': (3,)}",
      "\\\n{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "\n{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "\n  {'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "  {'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "\t{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n  ",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n  \n",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n\n\n",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n# end",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\nx",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)};",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)},",
      "({'descr': '<f8', 'fortran_order': False, 'shape': (3,)})",
      "[{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}]",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\\",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\v",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\f",
      "\f{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\x00",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x\xe9': 1}",
      "{'descr': '\xe9', 'fortran_order': False, 'shape': (3,), 'descr': '<f8'}",
      "{'descr': '\xc3\xa9', 'fortran_order': False, 'shape': (3,), 'descr': '<f8'}",
      "{'descr': b'\xe9', 'fortran_order': False, 'shape': (3,), 'descr': '<f8'}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\xa0",
      "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,)}",
      "{'descr': ('<f8', ()), 'fortran_order': False, 'shape': (3,)}",
      "{'descr': ('<f8', (2,)), 'fortran_order': False, 'shape': (3,)}",
      "['descr', '<f8']",
      "",
      "{",
  };
  const std::string plain = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}";
  d.push_back("\r" + plain);
  d.push_back(plain + "\r  ");
  d.push_back(plain + "\r");
  d.push_back(plain + "\n\r");
  d.push_back(plain + std::string(9900, ' '));  // NumPy reads up to 10000 characters
  d.push_back(plain + std::string(10000, ' '));
  d.push_back("{'descr': '\xff\xfe', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}");
  for (int depth : {20, 150, 198, 199, 200, 201, 250})
    d.push_back("{'descr': " + std::string(static_cast<size_t>(depth), '[') +
                std::string(static_cast<size_t>(depth), ']') +
                ", 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}");
  // Every dtype spelling momenta knows, and ones it does not.
  for (const char* descr :
       {"<f8",      "f8",      "=f8",    "|f8",   ">f8",    "d",         "<d",       "float64",  "double",
        "float",    "float_",  "<f4",    "f",     "single", "float32",   "<i8",      "l",        "q",
        "p",        "<q",      "int",    "int64", "int_",   "intp",      "long",     "longlong", "int0",
        "<i4",      "i",       "intc",   "int32", "<i2",    "h",         "short",    "int16",    "|i1",
        "<i1",      ">i1",     "b",      ">b",    "byte",   "int8",      "<u8",      "L",        "Q",
        "P",        "uint",    "uint64", "uintp", "ulong",  "ulonglong", "uint0",    "<u4",      "I",
        "uintc",    "uint32",  "<u2",    "H",     "ushort", "uint16",    "|u1",      "u1",       ">u1",
        "B",        "ubyte",   "uint8",  ">i8",   ">u2",    ">l",        "<f2",      "e",        "<f16",
        "g",        "<c16",    "|b1",    "?",     "bool",   "|O",        "O",        "<U5",      "|S3",
        "|V8",      "<M8[ns]", "<m8[s]", "<i16",  "",       " <f8",      "<f8 ",     "F8",       "f8,",
        "1f8",      "()f8",    "(2,)f8", "f 8",   "<f08",   "f8,i4",     "float64,", "Float64",  ">float64",
        "<float64", "<int",    "i8\\x00"}) {
    d.push_back(Dict(std::string("'") + descr + "'", "False", "(2,)"));
  }
  return d;
}

// Small random edits of a valid dict: characters inserted, deleted, replaced,
// pieces duplicated or cut, blanks/comments/continuations put between tokens,
// quotes swapped.
std::string Mutate(std::string s, std::mt19937_64& rng) {
  static const std::string kAlphabet = " \t\n\r,:()[]{}'\"#\\L0123456789-+_.jxobeflirsuTFNdcpa<>|=";
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    char c = kAlphabet[rng() % kAlphabet.size()];
    if (rng() % 40 == 0) c = static_cast<char>(rng() % 256);
    static const char* kGaps[] = {" ", "\n", "\t", "  # c\n", "\\\n", "\r\n", "\r", "\f", ",", "L"};
    switch (rng() % 7) {
      case 0:
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
        break;
      case 5:
        s.insert(at, kGaps[rng() % std::size(kGaps)]);
        break;  // mostly between tokens
      case 6:   // the other quote character throughout
        for (char& q : s) q = q == '\'' ? '"' : q == '"' ? '\'' : q;
        break;
      case 1:
        if (at < s.size()) s.erase(at, 1);
        break;
      case 2:
        if (at < s.size()) s[at] = c;
        break;
      case 3: {  // duplicate a piece (often a whole "'key': value," item)
        const size_t len = 1 + rng() % 24;
        if (at < s.size()) s.insert(rng() % (s.size() + 1), s.substr(at, len));
        break;
      }
      default:
        if (at < s.size()) s.erase(at, 1 + rng() % 6);
        break;
    }
  }
  return s;
}

std::vector<std::string> Bases(std::mt19937_64& rng) {
  static const char* kDescrs[] = {"'<f8'", "'<i4'", "'|u1'", "'<u2'", "\"<f4\"", "'<i8'", "'>f8'"};
  static const char* kShapes[] = {"(3,)", "(2, 3)", "()", "(0,)", "(4L,)", "(1, 2, 1)", "(7,)"};
  std::vector<std::string> out;
  for (int k = 0; k < 8; ++k) {
    const std::string descr = kDescrs[rng() % std::size(kDescrs)];
    const std::string shape = kShapes[rng() % std::size(kShapes)];
    const std::string fortran = rng() % 6 == 0 ? "True" : "False";
    switch (rng() % 3) {
      case 0:
        out.push_back(Dict(descr, fortran, shape));
        break;
      case 1:
        out.push_back("{'shape': " + shape + ", 'descr': " + descr + ", 'fortran_order': " + fortran + "}");
        break;
      default:
        out.push_back("{\"fortran_order\":" + fortran + ",\"shape\":" + shape + ",\"descr\":" + descr + ",}");
        break;
    }
  }
  return out;
}

std::string Unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

// Judges every file listed in DIR/manifest as NumPy reads it; one line per
// file: "REFUSE" or "ACCEPT <dtype.str> <shape dims, comma-separated> <fortran
// 0/1> <descr: hex of the str, or '-' when it is not a str>". Each file gets
// the data bytes its header asks for (up to 1 MiB; else 16 bytes).
constexpr char kJudge[] = R"PY(
import ast, sys, warnings
import numpy as np
import numpy.lib.format as fmt
warnings.simplefilter('ignore')
out = []
for path in open(sys.argv[1]).read().split('\n'):
    if not path:
        continue
    verdict = 'REFUSE'
    try:
        with open(path, 'rb') as f:
            version = fmt.read_magic(f)
            fmt._check_version(version)
            shape, fortran, dtype = fmt._read_array_header(f, version)
            hlen = f.tell()
        n = 1
        for d in shape:
            n *= d
        nbytes = n * dtype.itemsize
        ok_size = all(d >= 0 for d in shape) and 0 <= nbytes <= (1 << 20)
        with open(path, 'ab') as f:
            f.write(b'\0' * (nbytes if ok_size else 16))
        if all(d >= 0 for d in shape) and n == 0:
            a = np.load(path)  # mmap cannot map zero bytes; the header is what counts
        else:
            a = np.load(path, mmap_mode='r')
        with open(path, 'rb') as f:
            raw = f.read(hlen)
        text = raw[12 if version[0] > 1 else 10:].decode('utf8' if version[0] >= 3 else 'latin1')
        if version <= (2, 0):
            text = fmt._filter_header(text)
        descr = ast.literal_eval(text)['descr']
        dh = descr.encode('utf8', 'surrogatepass').hex() if isinstance(descr, str) else '-'
        verdict = 'ACCEPT %s %s %d %s' % (a.dtype.str, ','.join(str(int(d)) for d in a.shape) or '.',
                                        int(bool(fortran)), dh or '=')
    except Exception:
        with open(path, 'ab') as f:
            f.write(b'\0' * 16)
    out.append(verdict)
print('\n'.join(out))
)PY";

const std::map<std::string, DType> kNumpyStr = {
    {"<f8", DType::kF8}, {"<f4", DType::kF4}, {"<i8", DType::kI8}, {"<i4", DType::kI4}, {"<i2", DType::kI2},
    {"|i1", DType::kI1}, {"<u8", DType::kU8}, {"<u4", DType::kU4}, {"<u2", DType::kU2}, {"|u1", DType::kU1},
};

TEST(NpyNumpyParityTest, MomentaAcceptsExactlyWhatNumpyAccepts) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "no NumPy for /usr/bin/python3";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);

  std::vector<std::string> headers;
  for (const std::string& dict : HandWritten())
    for (int major = 1; major <= 3; ++major)
      headers.push_back(Header(dict, major, major == 1 ? 0 : static_cast<int>(rng() % 5)));
  for (int round = 0; round < 150; ++round) {
    for (const std::string& base : Bases(rng)) {
      const int major = 1 + static_cast<int>(rng() % 3);
      headers.push_back(Header(Mutate(base, rng), major, static_cast<int>(rng() % 5)));
    }
  }
  // Damaged preambles too: version bytes and length fields.
  for (int k = 0; k < 200; ++k) {
    std::string h = Header(Bases(rng)[0], 1 + static_cast<int>(rng() % 3), 0);
    h[6 + rng() % 6] = static_cast<char>(rng() % 256);
    headers.push_back(h);
  }

  ScratchDir dir;
  std::string manifest;
  std::vector<std::string> paths;
  for (size_t i = 0; i < headers.size(); ++i) {
    paths.push_back(dir.File("h" + std::to_string(i) + ".npy"));
    WriteFileBytes(paths.back(), headers[i]);
    manifest += paths.back() + "\n";
  }
  WriteFileBytes(dir.File("manifest"), manifest);
  const std::string code = std::string("import sys\nsys.argv = ['judge', '") + dir.File("manifest") + "']\n" + kJudge;
  auto py = RunPython(code);
  ASSERT_EQ(py.exit_code, 0) << py.err;
  std::vector<std::string> verdicts;
  std::istringstream lines(py.out);
  for (std::string line; std::getline(lines, line);) verdicts.push_back(line);
  ASSERT_EQ(verdicts.size(), headers.size()) << py.err;

  size_t accepted = 0, refused = 0, exceptions = 0, disagreements = 0;
  for (size_t i = 0; i < headers.size(); ++i) {
    const std::string& header = headers[i];
    auto file = ArrayFile::Open(paths[i], IoOptions{.kind = IoKind::kPread});
    std::istringstream v(verdicts[i]);
    std::string word, dtype_str, dims, fortran, descr_hex;
    v >> word >> dtype_str >> dims >> fortran >> descr_hex;
    std::string why;
    if (word == "REFUSE") {
      ++refused;
      if (file.ok()) why = "NumPy refuses it, momenta accepts it";
    } else {
      const auto known = kNumpyStr.find(dtype_str);
      const bool is_str = descr_hex != "-";
      std::optional<DType> spelled;
      if (is_str) spelled = NpyDescrDType(Unhex(descr_hex == "=" ? "" : descr_hex));
      const bool supported = known != kNumpyStr.end() && fortran == "0" && spelled.has_value();
      if (!supported) {
        ++exceptions;
        if (file.ok()) why = "NumPy reads " + dtype_str + " fortran=" + fortran + ", which momenta must refuse";
      } else {
        ++accepted;
        std::vector<uint64_t> want;
        if (dims != ".") {
          std::istringstream ds(dims);
          for (std::string d; std::getline(ds, d, ',');) want.push_back(std::stoull(d));
        }
        if (*spelled != known->second) {
          why = "NpyDescrDType says " + std::string(DTypeName(*spelled)) + ", NumPy " + dtype_str;
        } else if (!file.ok()) {
          why = "NumPy accepts it (" + dtype_str + " " + dims + "), momenta refuses: " + file.status().ToString();
        } else if ((*file)->dtype() != known->second || (*file)->header().shape != want) {
          why = "NumPy reads " + dtype_str + " " + dims + ", momenta another dtype or shape";
        }
      }
    }
    if (why.empty() && !file.ok()) {
      const std::string msg = file.status().ToString();
      if (msg.find('\n') != std::string::npos || msg.find(paths[i]) == std::string::npos)
        why = "refusal is not one line naming the file: " + msg;
    }
    if (!why.empty()) {
      ++disagreements;
      if (disagreements <= 30)
        ADD_FAILURE() << "header #" << i << " " << ::testing::PrintToString(header) << ": " << why;
    }
  }
  std::cout << "[ parity   ] " << headers.size() << " headers: " << accepted << " accepted by both, " << refused
            << " refused by both, " << exceptions
            << " read by NumPy but refused by momenta (dtype/order/spelling not stored)\n";
  EXPECT_EQ(disagreements, 0u);
  EXPECT_GT(accepted, 300u);  // the generator keeps producing valid headers
  EXPECT_GT(refused, 1000u);
}

}  // namespace
}  // namespace momenta
