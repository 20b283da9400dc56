#include "storage/npy/npy_format.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string_view>

#include "storage/npy/py_literal.h"

namespace momenta {
namespace {

// Header text quoted inside a one-line message: at most 40 bytes, control
// and non-ASCII bytes shown as '?'.
std::string Quote(std::string_view text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out.push_back(c < 0x20 || c >= 0x7f ? '?' : static_cast<char>(c));
  }
  if (text.size() > 40) out += "...";
  return out + "'";
}

// "(3, 4)" / "(5,)" / "()" as Python writes a tuple; long shapes are cut.
std::string ShapeText(std::span<const uint64_t> shape, size_t max_dims = 8) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i == max_dims) {
      out += "...";
      break;
    }
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// ---------------------------------------------------------------------------
// From the parsed dict to an NpyHeader.

// The descr spellings NumPy's numpy.dtype() reads as a dtype momenta stores:
// the type code with its size and the one-letter codes, each with or without
// a byte order ('<', '=', '|' little-endian here; '>' big-endian), and the
// type names (no byte order). Other spellings NumPy understands (comma
// strings such as 'f8,' or '1f8', a space inside 'f 8', tuple or list descrs)
// are refused: momenta reads the plain spellings only.
struct PlainType {
  std::string_view code;  // descr without its byte-order character
  DType dtype;
};
constexpr PlainType kPlainTypes[] = {
    {"f8", DType::kF8}, {"d", DType::kF8}, {"f4", DType::kF4}, {"f", DType::kF4}, {"i8", DType::kI8}, {"l", DType::kI8},
    {"q", DType::kI8},  {"p", DType::kI8}, {"i4", DType::kI4}, {"i", DType::kI4}, {"i2", DType::kI2}, {"h", DType::kI2},
    {"i1", DType::kI1}, {"b", DType::kI1}, {"u8", DType::kU8}, {"L", DType::kU8}, {"Q", DType::kU8},  {"P", DType::kU8},
    {"u4", DType::kU4}, {"I", DType::kU4}, {"u2", DType::kU2}, {"H", DType::kU2}, {"u1", DType::kU1}, {"B", DType::kU1},
};
constexpr PlainType kTypeNames[] = {
    {"float64", DType::kF8},   {"double", DType::kF8}, {"float", DType::kF8}, {"float_", DType::kF8},
    {"float32", DType::kF4},   {"single", DType::kF4}, {"int64", DType::kI8}, {"int", DType::kI8},
    {"int_", DType::kI8},      {"int0", DType::kI8},   {"intp", DType::kI8},  {"long", DType::kI8},
    {"longlong", DType::kI8},  {"int32", DType::kI4},  {"intc", DType::kI4},  {"int16", DType::kI2},
    {"short", DType::kI2},     {"int8", DType::kI1},   {"byte", DType::kI1},  {"uint64", DType::kU8},
    {"uint", DType::kU8},      {"uint0", DType::kU8},  {"uintp", DType::kU8}, {"ulong", DType::kU8},
    {"ulonglong", DType::kU8}, {"uint32", DType::kU4}, {"uintc", DType::kU4}, {"uint16", DType::kU2},
    {"ushort", DType::kU2},    {"uint8", DType::kU1},  {"ubyte", DType::kU1},
};

// What a NumPy type code letter means, for the message about an unsupported one.
std::string_view KindWord(char kind) {
  switch (kind) {
    case 'b':
    case '?':
      return " (bool)";
    case 'c':
      return " (complex)";
    case 'M':
      return " (datetime)";
    case 'm':
      return " (timedelta)";
    case 'U':
    case 'S':
    case 'a':
      return " (string)";
    case 'V':
      return " (raw bytes)";
    case 'f':
      return " (a float size momenta does not store)";
    case 'i':
    case 'u':
      return " (an integer size momenta does not store)";
    default:
      return "";
  }
}

Result<DType> DTypeFromDescr(const PyLiteral& descr, const std::string& file) {
  if (descr.kind == PyLiteral::Kind::kList)
    return Status::NotSupported(file,
                                "structured dtype (descr is a list of fields) is not "
                                "supported; momenta stores one plain numeric dtype per file");
  if (descr.kind == PyLiteral::Kind::kTuple)
    return Status::NotSupported(file,
                                "a tuple descr (a subarray dtype) is not supported; momenta "
                                "reads descr as a plain string such as '<f8'");
  if (descr.kind != PyLiteral::Kind::kStr) return Status::Corruption(file, ".npy header: 'descr' is not a string");
  const std::string& s = descr.text;
  auto known = NpyDescrDType(s);
  if (known.has_value()) return *known;
  std::string_view code = s;
  char order = '=';
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    order = code[0];
    code.remove_prefix(1);
  }
  if (!code.empty() && code[0] == 'O')
    return Status::NotSupported(
        file, "object dtype " + Quote(s) + " is not supported (it holds Python objects, not numbers)");
  for (const PlainType& p : kPlainTypes) {
    if (code != p.code || order != '>') continue;
    const std::string le(DTypeName(p.dtype));
    return Status::NotSupported(file, "big-endian dtype " + Quote(s) +
                                          " is not supported; convert it with NumPy: "
                                          "np.save(path, arr.astype('<" +
                                          le + "'))");
  }
  return Status::NotSupported(file, "dtype " + Quote(s) + std::string(KindWord(code.empty() ? ' ' : code[0])) +
                                        " is not supported (momenta stores f8, f4, i8, i4, i2, i1, u8, u4, u2, u1)");
}

Result<std::vector<uint64_t>> ShapeFromLiteral(const PyLiteral& shape, const std::string& file) {
  if (shape.kind != PyLiteral::Kind::kTuple) return Status::Corruption(file, ".npy header: 'shape' is not a tuple");
  std::vector<uint64_t> dims;
  for (const PyLiteral& d : shape.items) {
    if (d.kind != PyLiteral::Kind::kInt)
      return Status::Corruption(file, ".npy header: 'shape' holds something other than integers");
    if (d.negative) return Status::Corruption(file, ".npy header: 'shape' has a negative dimension");
    if (d.huge) return Status::Corruption(file, ".npy header: 'shape' has a dimension of 2^64 or more");
    dims.push_back(d.magnitude);
  }
  return dims;
}

// The dict's three values. Keys must be exactly these three, as in NumPy;
// a key given twice keeps its last value (a Python dict does).
struct HeaderFields {
  const PyLiteral* descr = nullptr;
  const PyLiteral* fortran_order = nullptr;
  const PyLiteral* shape = nullptr;
};

Result<HeaderFields> FindFields(const PyLiteral& dict, const std::string& file) {
  if (dict.kind != PyLiteral::Kind::kDict) return Status::Corruption(file, ".npy header is not a dict");
  HeaderFields f;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyLiteral& key = dict.items[i];
    if (key.kind != PyLiteral::Kind::kStr)
      return Status::Corruption(file, ".npy header dict has a key that is not a string");
    const PyLiteral** slot = key.text == "descr"           ? &f.descr
                             : key.text == "fortran_order" ? &f.fortran_order
                             : key.text == "shape"         ? &f.shape
                                                           : nullptr;
    if (slot == nullptr) return Status::Corruption(file, ".npy header dict has an unexpected key " + Quote(key.text));
    *slot = &dict.items[i + 1];
  }
  for (auto [value, name] : {std::pair{f.descr, "descr"}, {f.fortran_order, "fortran_order"}, {f.shape, "shape"}})
    if (value == nullptr) return Status::Corruption(file, std::string(".npy header dict lacks the key '") + name + "'");
  return f;
}

// Characters of the dict text as NumPy counts them (latin-1: bytes; UTF-8:
// code points, the text being valid UTF-8 or refused anyway).
uint64_t TextChars(std::string_view text, bool utf8) {
  if (!utf8) return text.size();
  uint64_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

constexpr size_t kPrefix = 10;  // a v1.0 preamble: magic, version, u16 length

// The dict momenta writes, as NumPy spells it (before padding).
std::string HeaderDict(DType dtype, std::span<const uint64_t> shape) {
  return "{'descr': '" + DTypeDescr(dtype) + "', 'fortran_order': False, 'shape': " + ShapeText(shape, shape.size()) +
         ", }";
}

// Why `shape` cannot be stored, or "" when it can (see ValidateNpyShape).
std::string ShapeProblem(DType dtype, std::span<const uint64_t> shape) {
  if (shape.size() > kMaxNpyDims)
    return "shape has " + std::to_string(shape.size()) + " dimensions (at most " + std::to_string(kMaxNpyDims) + ")";
  // Bytes of data plus the largest header must stay below 2^63 (off_t).
  constexpr uint64_t kLimit = (uint64_t{1} << 63) - kMaxNpyHeaderBytes;
  const bool empty = std::find(shape.begin(), shape.end(), uint64_t{0}) != shape.end();
  uint64_t bytes = DTypeSize(dtype);
  for (uint64_t d : shape) {
    const bool over =
        d >= (uint64_t{1} << 63) || (!empty && (__builtin_mul_overflow(bytes, d, &bytes) || bytes >= kLimit));
    if (over)
      return "shape " + ShapeText(shape) + " of " + std::string(DTypeName(dtype)) +
             " is too large (2^63 bytes or more)";
  }
  return "";
}

// Bytes 8.. of the preamble hold the dict length in `width` bytes, little-endian.
uint64_t ReadLength(std::span<const char> bytes, size_t width) {
  uint64_t n = 0;
  for (size_t i = 0; i < width; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  return n;
}

}  // namespace

std::optional<DType> NpyDescrDType(std::string_view descr) {
  for (const PlainType& p : kTypeNames)
    if (descr == p.code) return p.dtype;
  char order = '=';
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    order = descr[0];
    descr.remove_prefix(1);
  }
  for (const PlainType& p : kPlainTypes) {
    if (descr != p.code) continue;
    if (order == '>' && DTypeSize(p.dtype) > 1) return std::nullopt;
    return p.dtype;
  }
  return std::nullopt;
}

uint64_t NpyHeader::length() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;  // cannot wrap: ValidateNpyShape ran at parse time
  return n;
}

Status ValidateNpyShape(DType dtype, std::span<const uint64_t> shape, const std::string& file) {
  const std::string problem = ShapeProblem(dtype, shape);
  if (problem.empty()) return Status::OK();
  return Status::InvalidArgument(file, problem);
}

Result<uint64_t> NpyHeaderSize(std::span<const char> first12, const std::string& file) {
  const size_t have = first12.size();
  if (have == 0 || std::memcmp(first12.data(), kNpyMagic.data(), std::min(have, kNpyMagic.size())) != 0)
    return Status::Corruption(file, "not a NumPy .npy file (it does not start with \\x93NUMPY)");
  if (have < 8) return Status::Corruption(file, ".npy preamble truncated (" + std::to_string(have) + " bytes)");
  const int major = static_cast<unsigned char>(first12[6]);
  const int minor = static_cast<unsigned char>(first12[7]);
  if (minor != 0 || major < 1 || major > 3)
    return Status::NotSupported(file, "unsupported .npy format version " + std::to_string(major) + "." +
                                          std::to_string(minor) + " (momenta reads 1.0, 2.0 and 3.0)");
  const size_t width = major == 1 ? 2 : 4;
  const size_t prefix = 8 + width;
  if (have < prefix) return Status::Corruption(file, ".npy preamble truncated (" + std::to_string(have) + " bytes)");
  const uint64_t total = prefix + ReadLength(first12, width);
  if (total > kMaxNpyHeaderBytes)
    return Status::Corruption(file, ".npy header length " + std::to_string(total) + " bytes exceeds the limit of " +
                                        std::to_string(kMaxNpyHeaderBytes));
  return total;
}

Result<NpyHeader> ParseNpyHeader(std::span<const char> header, const std::string& file) {
  auto size = NpyHeaderSize(header.first(std::min<size_t>(header.size(), 12)), file);
  if (!size.ok()) return size.status();
  const uint64_t total = *size;
  if (header.size() < total)
    return Status::Corruption(file, ".npy header truncated: it says " + std::to_string(total) + " bytes, only " +
                                        std::to_string(header.size()) + " are there");
  NpyHeader h;
  h.major_version = static_cast<unsigned char>(header[6]);
  h.minor_version = static_cast<unsigned char>(header[7]);
  h.data_offset = total;
  const size_t prefix = h.major_version == 1 ? 10 : 12;
  const std::string_view dict_text(header.data() + prefix, total - prefix);

  const bool utf8 = h.major_version >= 3;
  if (const uint64_t chars = TextChars(dict_text, utf8); chars > kMaxNpyDictChars)
    return Status::Corruption(file, ".npy header dict of " + std::to_string(chars) +
                                        " characters is longer than NumPy reads (" + std::to_string(kMaxNpyDictChars) +
                                        ")");
  PyLiteral dict;
  std::string error;
  if (!ParsePyLiteral(dict_text, utf8 ? PyHeaderText::kUtf8 : PyHeaderText::kLatin1Python2, &dict, &error))
    return Status::Corruption(file, ".npy header dict does not parse: " + error);
  auto fields = FindFields(dict, file);
  if (!fields.ok()) return fields.status();

  auto dtype = DTypeFromDescr(*fields->descr, file);
  if (!dtype.ok()) return dtype.status();
  h.dtype = *dtype;

  const PyLiteral& fortran = *fields->fortran_order;
  if (fortran.kind != PyLiteral::Kind::kBool)
    return Status::Corruption(file, ".npy header: 'fortran_order' is not True or False");
  if (fortran.flag)
    return Status::NotSupported(file,
                                "Fortran-order arrays are not supported; rewrite it in "
                                "C order with np.save(path, np.ascontiguousarray(arr))");

  auto shape = ShapeFromLiteral(*fields->shape, file);
  if (!shape.ok()) return shape.status();
  h.shape = std::move(shape).value();
  if (std::string problem = ShapeProblem(h.dtype, h.shape); !problem.empty())
    return Status::Corruption(file, ".npy header: " + problem);
  return h;
}

std::string EncodeNpyHeader(DType dtype, std::span<const uint64_t> shape, uint64_t data_offset) {
  assert(data_offset % 64 == 0 && data_offset <= 65536);
  assert(ValidateNpyShape(dtype, shape, "").ok());
  const std::string dict = HeaderDict(dtype, shape);
  assert(kPrefix + dict.size() + 1 <= data_offset);
  const uint64_t dict_len = data_offset - kPrefix;  // dict + padding + '\n'
  std::string out(kNpyMagic);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(dict_len & 0xff));
  out.push_back(static_cast<char>((dict_len >> 8) & 0xff));
  out += dict;
  out.append(data_offset - 1 - out.size(), ' ');
  out.push_back('\n');
  assert(out.size() == data_offset);
  return out;
}

uint64_t NpyMinDataOffset(DType dtype, std::span<const uint64_t> shape) {
  const uint64_t need = kPrefix + HeaderDict(dtype, shape).size() + 1;  // + '\n'
  return (need + 63) / 64 * 64;
}

}  // namespace momenta
