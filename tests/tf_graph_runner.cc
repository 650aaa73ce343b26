// Runs one case of tests/tf_graphs/ through TensorFlow's C API: parses NAME.pbtxt (a GraphDef
// in TensorFlow's text format) with protobuf's TextFormat, imports it with
// TF_GraphImportGraphDef, feeds and fetches what CASE_DIR/case.txt names (tests/tf_graphs/
// expected.py writes it and the .npy files), and compares every fetch with numpy's value.
// Prints "PASS NAME" or "FAIL NAME: why" and exits 0 or 1.
//
//   tf_graph_runner tests/tf_graphs/pad.pbtxt OUT/pad
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "google/protobuf/text_format.h"
#include "proto/graph.pb.h"

namespace {

// A .npy array: numpy's format 1.0-3.0, C order, little-endian; strings ("S<n>") as bytes.
struct Array {
  TF_DataType dtype = TF_FLOAT;
  std::vector<int64_t> shape;
  std::vector<char> data;          // Fixed-size elements.
  std::vector<std::string> strings;  // For TF_STRING.

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

// The value of `key` in the header dict ("'descr': '<f4', ..."): the text after "'key':".
std::string HeaderField(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) return "";
  size_t b = at + key.size() + 3;
  while (b < header.size() && header[b] == ' ') ++b;
  size_t e = b;
  if (header[b] == '(') {
    e = header.find(')', b) + 1;
  } else if (header[b] == '\'') {
    e = header.find('\'', b + 1) + 1;
  } else {
    while (e < header.size() && header[e] != ',' && header[e] != '}') ++e;
  }
  return header.substr(b, e - b);
}

bool ReadNpy(const std::string& path, Array* a, std::string* error) {
  std::string bytes;
  if (!ReadFile(path, &bytes)) return *error = "cannot read " + path, false;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return *error = path + " is not a .npy file", false;
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    start = 10;
  } else {
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    start = 12;
  }
  const std::string header = bytes.substr(start, header_len);
  const std::string descr = HeaderField(header, "descr");
  if (HeaderField(header, "fortran_order") != "False") return *error = path + ": Fortran order", false;
  std::string shape = HeaderField(header, "shape");
  a->shape.clear();
  for (size_t i = 1; i < shape.size();) {
    if (!isdigit(static_cast<unsigned char>(shape[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < shape.size() && isdigit(static_cast<unsigned char>(shape[j]))) ++j;
    a->shape.push_back(std::stoll(shape.substr(i, j - i)));
    i = j;
  }
  struct Kind {
    const char* descr;
    TF_DataType dtype;
    int size;
  };
  static const Kind kKinds[] = {{"'<f4'", TF_FLOAT, 4}, {"'<f8'", TF_DOUBLE, 8}, {"'<f2'", TF_HALF, 2},
                                {"'<i4'", TF_INT32, 4}, {"'<i8'", TF_INT64, 8}, {"'<i2'", TF_INT16, 2},
                                {"'|i1'", TF_INT8, 1},  {"'|u1'", TF_UINT8, 1}, {"'|b1'", TF_BOOL, 1}};
  const char* body = bytes.data() + start + header_len;
  const size_t body_size = bytes.size() - start - header_len;
  const int64_t n = a->NumElements();
  if (descr.rfind("'|S", 0) == 0) {
    const size_t width = std::stoul(descr.substr(3));
    if (body_size < width * n) return *error = path + " is short", false;
    a->dtype = TF_STRING;
    for (int64_t i = 0; i < n; ++i) {
      std::string s(body + i * width, width);
      s.erase(s.find_last_not_of('\0') + 1);  // numpy pads with NULs.
      a->strings.push_back(s);
    }
    return true;
  }
  for (const Kind& k : kKinds) {
    if (descr == k.descr) {
      if (body_size != static_cast<size_t>(k.size) * n) return *error = path + " has the wrong size", false;
      a->dtype = k.dtype;
      a->data.assign(body, body + body_size);
      return true;
    }
  }
  return *error = path + ": dtype " + descr + " is not supported here", false;
}

TF_Tensor* ToTensor(const Array& a) {
  if (a.dtype == TF_STRING) {
    TF_Tensor* t = TF_AllocateTensor(TF_STRING, a.shape.data(), static_cast<int>(a.shape.size()),
                                     a.strings.size() * sizeof(TF_TString));
    TF_TString* p = static_cast<TF_TString*>(TF_TensorData(t));
    for (size_t i = 0; i < a.strings.size(); ++i) {
      TF_TString_Init(&p[i]);
      TF_TString_Copy(&p[i], a.strings[i].data(), a.strings[i].size());
    }
    return t;
  }
  TF_Tensor* t = TF_AllocateTensor(a.dtype, a.shape.data(), static_cast<int>(a.shape.size()), a.data.size());
  if (!a.data.empty()) memcpy(TF_TensorData(t), a.data.data(), a.data.size());
  return t;
}

double ValueAt(const void* p, TF_DataType dt, int64_t i) {
  switch (dt) {
    case TF_FLOAT: return static_cast<const float*>(p)[i];
    case TF_DOUBLE: return static_cast<const double*>(p)[i];
    case TF_INT32: return static_cast<const int32_t*>(p)[i];
    case TF_INT64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case TF_INT16: return static_cast<const int16_t*>(p)[i];
    case TF_INT8: return static_cast<const int8_t*>(p)[i];
    case TF_UINT8:
    case TF_BOOL: return static_cast<const uint8_t*>(p)[i];
    default: return NAN;
  }
}

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// Empty when `got` matches `want`: dtype, shape, and values (floats to 1e-5 relative plus
// 1e-5 absolute, NaN matching NaN; the rest exactly).
std::string Compare(const TF_Tensor* got, const Array& want) {
  if (TF_TensorType(got) != want.dtype) {
    return "dtype " + std::to_string(TF_TensorType(got)) + ", want " + std::to_string(want.dtype);
  }
  std::vector<int64_t> shape;
  for (int i = 0; i < TF_NumDims(got); ++i) shape.push_back(TF_Dim(got, i));
  if (shape != want.shape) return "shape " + ShapeString(shape) + ", want " + ShapeString(want.shape);
  const int64_t n = want.NumElements();
  if (want.dtype == TF_STRING) {
    const TF_TString* p = static_cast<const TF_TString*>(TF_TensorData(got));
    for (int64_t i = 0; i < n; ++i) {
      std::string s(TF_TString_GetDataPointer(&p[i]), TF_TString_GetSize(&p[i]));
      if (s != want.strings[i]) return "element " + std::to_string(i) + " is \"" + s + "\", want \"" + want.strings[i] + "\"";
    }
    return "";
  }
  const bool is_float = want.dtype == TF_FLOAT || want.dtype == TF_DOUBLE;
  for (int64_t i = 0; i < n; ++i) {
    const double g = ValueAt(TF_TensorData(got), want.dtype, i), w = ValueAt(want.data.data(), want.dtype, i);
    const bool ok = is_float ? ((std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= 1e-5 + 1e-5 * std::fabs(w))
                             : g == w;
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g) + ", want " + std::to_string(w);
  }
  return "";
}

// "node:index" (index 0 when absent) as an output of `graph`.
bool FindOutput(TF_Graph* graph, const std::string& name, TF_Output* out) {
  const size_t colon = name.rfind(':');
  const std::string node = colon == std::string::npos ? name : name.substr(0, colon);
  out->oper = TF_GraphOperationByName(graph, node.c_str());
  out->index = colon == std::string::npos ? 0 : std::stoi(name.substr(colon + 1));
  return out->oper != nullptr;
}

struct Deleter {
  void operator()(TF_Status* s) const { TF_DeleteStatus(s); }
  void operator()(TF_Graph* g) const { TF_DeleteGraph(g); }
  void operator()(TF_Buffer* b) const { TF_DeleteBuffer(b); }
  void operator()(TF_ImportGraphDefOptions* o) const { TF_DeleteImportGraphDefOptions(o); }
  void operator()(TF_SessionOptions* o) const { TF_DeleteSessionOptions(o); }
};

// Runs the case; empty on success, else why it failed.
std::string RunCase(const std::string& pbtxt, const std::string& dir) {
  std::string text;
  if (!ReadFile(pbtxt, &text)) return "cannot read " + pbtxt;
  sluice::GraphDef graph_def;
  if (!google::protobuf::TextFormat::ParseFromString(text, &graph_def)) return pbtxt + " is not a GraphDef in text format";
  const std::string binary = graph_def.SerializeAsString();
  std::string manifest;
  if (!ReadFile(dir + "/case.txt", &manifest)) return "no " + dir + "/case.txt (no case of that name in expected.py?)";

  std::unique_ptr<TF_Status, Deleter> status(TF_NewStatus());
  std::unique_ptr<TF_Graph, Deleter> graph(TF_NewGraph());
  std::unique_ptr<TF_Buffer, Deleter> buffer(TF_NewBufferFromString(binary.data(), binary.size()));
  std::unique_ptr<TF_ImportGraphDefOptions, Deleter> options(TF_NewImportGraphDefOptions());
  std::string want_error;
  {
    std::istringstream lines(manifest);
    std::string kind;
    while (lines >> kind) {
      if (kind == "error") {
        std::getline(lines, want_error);
        want_error.erase(0, want_error.find_first_not_of(' '));
      } else {
        std::string skip;
        lines >> skip >> skip;
      }
    }
  }
  TF_GraphImportGraphDef(graph.get(), buffer.get(), options.get(), status.get());
  if (TF_GetCode(status.get()) != TF_OK) {
    // Shape inference at import may already see the bad input of an error case.
    if (!want_error.empty() && TF_GetCode(status.get()) == TF_INVALID_ARGUMENT &&
        strstr(TF_Message(status.get()), want_error.c_str()) != nullptr) {
      return "";
    }
    return std::string("import: ") + TF_Message(status.get());
  }

  std::vector<TF_Output> inputs, outputs;
  std::vector<TF_Tensor*> input_values;
  std::vector<Array> expected;
  std::vector<std::string> fetch_names;
  std::istringstream lines(manifest);
  std::string kind, name, file, error;
  std::string failure;
  while (failure.empty() && lines >> kind) {
    if (kind == "error") {
      std::getline(lines, name);
      continue;
    }
    lines >> name >> file;
    Array a;
    TF_Output o;
    if (file != "-" && !ReadNpy(dir + "/" + file, &a, &error)) {
      failure = error;
    } else if (!FindOutput(graph.get(), name, &o)) {
      failure = "the graph has no " + name;
    } else if (kind == "feed") {
      inputs.push_back(o);
      input_values.push_back(ToTensor(a));
    } else if (kind == "fetch") {
      outputs.push_back(o);
      expected.push_back(std::move(a));
      fetch_names.push_back(name);
    } else {
      failure = "case.txt: unknown line kind " + kind;
    }
  }
  std::vector<TF_Tensor*> results(outputs.size(), nullptr);
  if (failure.empty()) {
    std::unique_ptr<TF_SessionOptions, Deleter> session_options(TF_NewSessionOptions());
    TF_Session* session = TF_NewSession(graph.get(), session_options.get(), status.get());
    if (TF_GetCode(status.get()) != TF_OK) return std::string("session: ") + TF_Message(status.get());
    TF_SessionRun(session, nullptr, inputs.data(), input_values.data(), static_cast<int>(inputs.size()),
                  outputs.data(), results.data(), static_cast<int>(outputs.size()), nullptr, 0, nullptr, status.get());
    const TF_Code code = TF_GetCode(status.get());
    const std::string message = TF_Message(status.get());
    std::unique_ptr<TF_Status, Deleter> close(TF_NewStatus());
    TF_CloseSession(session, close.get());
    TF_DeleteSession(session, close.get());
    if (!want_error.empty()) {
      if (code != TF_INVALID_ARGUMENT || message.find(want_error) == std::string::npos) {
        failure = "want INVALID_ARGUMENT with \"" + want_error + "\", got code " + std::to_string(code) + ": " + message;
      }
    } else if (code != TF_OK) {
      failure = "run: " + message;
    }
    for (size_t i = 0; failure.empty() && want_error.empty() && i < results.size(); ++i) {
      const std::string why = Compare(results[i], expected[i]);
      if (!why.empty()) failure = fetch_names[i] + ": " + why;
    }
  }
  for (TF_Tensor* t : input_values) TF_DeleteTensor(t);
  for (TF_Tensor* t : results) {
    if (t != nullptr) TF_DeleteTensor(t);
  }
  return failure;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s CASE.pbtxt CASE_DIR\n", argv[0]);
    return 2;
  }
  std::string name = argv[1];
  name = name.substr(name.rfind('/') + 1);
  name = name.substr(0, name.rfind(".pbtxt"));
  const std::string failure = RunCase(argv[1], argv[2]);
  if (failure.empty()) {
    printf("PASS %s\n", name.c_str());
    return 0;
  }
  printf("FAIL %s: %s\n", name.c_str(), failure.c_str());
  return 1;
}
