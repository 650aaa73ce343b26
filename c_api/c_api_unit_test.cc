// Edge cases of the C API that the C acceptance test leaves out: tensor ownership and sharing,
// malformed protos, import corner cases, attr inference for list args, strings, and
// concurrent runs and extensions.
#include "c_api/c_api.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "c_api/sluice_c_api.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "proto/attr_value.pb.h"
#include "proto/config.pb.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/kernel_def.pb.h"
#include "proto/op_def.pb.h"
#include "proto/tensorflow_server.pb.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Owning wrappers, so a failing assertion does not leak.
struct StatusDeleter {
  void operator()(TF_Status* s) const { TF_DeleteStatus(s); }
};
struct GraphDeleter {
  void operator()(TF_Graph* g) const { TF_DeleteGraph(g); }
};
struct TensorDeleter {
  void operator()(TF_Tensor* t) const { TF_DeleteTensor(t); }
};
struct BufferDeleter {
  void operator()(TF_Buffer* b) const { TF_DeleteBuffer(b); }
};
using StatusPtr = std::unique_ptr<TF_Status, StatusDeleter>;
using GraphPtr = std::unique_ptr<TF_Graph, GraphDeleter>;
using TensorPtr = std::unique_ptr<TF_Tensor, TensorDeleter>;
using BufferPtr = std::unique_ptr<TF_Buffer, BufferDeleter>;

class SessionPtr {
 public:
  SessionPtr(TF_Graph* g, const TF_SessionOptions* opts, TF_Status* s)
      : session_(TF_NewSession(g, opts, s)) {}
  ~SessionPtr() {
    StatusPtr s(TF_NewStatus());
    TF_DeleteSession(session_, s.get());
  }
  TF_Session* get() const { return session_; }

 private:
  TF_Session* session_;
};

std::string Message(const TF_Status* s) { return TF_Message(s); }

// Counts deallocator calls for TF_NewTensor.
void CountingFree(void* data, size_t, void* counter) {
  delete[] static_cast<float*>(data);
  ++*static_cast<std::atomic<int>*>(counter);
}

TensorPtr FloatTensor(std::vector<int64_t> dims, std::vector<float> values,
                      std::atomic<int>* released = nullptr) {
  float* data = new float[values.size() > 0 ? values.size() : 1];
  std::copy(values.begin(), values.end(), data);
  static std::atomic<int> ignored{0};
  return TensorPtr(TF_NewTensor(TF_FLOAT, dims.data(), static_cast<int>(dims.size()), data,
                                values.size() * sizeof(float), CountingFree,
                                released != nullptr ? released : &ignored));
}

std::vector<float> Floats(const TF_Tensor* t) {
  const float* p = static_cast<const float*>(TF_TensorData(t));
  return std::vector<float>(p, p + TF_TensorElementCount(t));
}

class CApiTest : public ::testing::Test {
 protected:
  TF_Operation* Placeholder(const char* name, TF_DataType dt = TF_FLOAT) {
    TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Placeholder", name);
    TF_SetAttrType(d, "dtype", dt);
    TF_Operation* op = TF_FinishOperation(d, status_.get());
    EXPECT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    return op;
  }
  TF_Operation* Op(const char* type, const char* name, std::vector<TF_Output> inputs) {
    TF_OperationDescription* d = TF_NewOperation(graph_.get(), type, name);
    for (const TF_Output& in : inputs) TF_AddInput(d, in);
    return TF_FinishOperation(d, status_.get());
  }
  BufferPtr GraphDefBuffer(const GraphDef& def) {
    std::string bytes = def.SerializeAsString();
    return BufferPtr(TF_NewBufferFromString(bytes.data(), bytes.size()));
  }
  size_t NumOps(TF_Graph* g) {
    size_t pos = 0, n = 0;
    while (TF_GraphNextOperation(g, &pos) != nullptr) ++n;
    return n;
  }

  StatusPtr status_{TF_NewStatus()};
  GraphPtr graph_{TF_NewGraph()};
};

TEST_F(CApiTest, StatusCodesMatchTensorFlow) {
  TF_SetStatus(status_.get(), TF_DATA_LOSS, "lost");
  EXPECT_EQ(TF_GetCode(status_.get()), 15);
  EXPECT_STREQ(TF_Message(status_.get()), "lost");
  TF_SetStatus(status_.get(), static_cast<TF_Code>(99), "odd");
  EXPECT_EQ(TF_GetCode(status_.get()), TF_UNKNOWN);
  TF_SetStatus(status_.get(), TF_OK, "ignored");
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);
  EXPECT_STREQ(TF_Message(status_.get()), "");
  EXPECT_EQ(static_cast<int>(TF_UNAUTHENTICATED), static_cast<int>(absl::StatusCode::kUnauthenticated));
}

TEST_F(CApiTest, NewTensorRejectsWhatItCannotHold) {
  float data[4] = {};
  int64_t dims[] = {2, 2};
  int64_t negative[] = {2, -2};
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, dims, 2, data, 15, nullptr, nullptr), nullptr);  // Too short.
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, negative, 2, data, 16, nullptr, nullptr), nullptr);
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, nullptr, 2, data, 16, nullptr, nullptr), nullptr);
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, dims, 2, nullptr, 16, nullptr, nullptr), nullptr);
  // TF_STRING: one TF_TString (24 bytes) per element, so 16 bytes are too few for [2, 2].
  EXPECT_EQ(TF_NewTensor(TF_STRING, dims, 2, data, 16, nullptr, nullptr), nullptr);
  EXPECT_EQ(TF_NewTensor(TF_RESOURCE, dims, 2, data, 16, nullptr, nullptr), nullptr);
  EXPECT_EQ(TF_NewTensor(static_cast<TF_DataType>(77), dims, 2, data, 16, nullptr, nullptr), nullptr);
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, dims, 2, 17), nullptr);
  EXPECT_EQ(TF_AllocateTensor(TF_STRING, dims, 2, 0), nullptr);
  EXPECT_EQ(TF_AllocateTensor(TF_STRING, dims, 2, 4 * sizeof(TF_TString) + 1), nullptr);
  int64_t huge[] = {int64_t{1} << 62};
  EXPECT_EQ(TF_AllocateTensor(TF_STRING, huge, 1, 0), nullptr);  // Overflows size_t.

  // No elements: fine, even without data.
  int64_t empty[] = {0, 3};
  TensorPtr t(TF_NewTensor(TF_FLOAT, empty, 2, nullptr, 0, nullptr, nullptr));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(TF_TensorElementCount(t.get()), 0);
  EXPECT_EQ(TF_Dim(t.get(), 1), 3);
  EXPECT_EQ(TF_Dim(t.get(), 2), -1);

  TensorPtr a(TF_AllocateTensor(TF_DOUBLE, dims, 2, 32));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(TF_TensorData(a.get())) % 64, 0u);
  EXPECT_EQ(TF_TensorByteSize(a.get()), 32u);
  EXPECT_EQ(TF_TensorType(a.get()), TF_DOUBLE);
}

TEST_F(CApiTest, BuffersCopyAndFree) {
  const char bytes[] = "abc";
  BufferPtr b(TF_NewBufferFromString(bytes, 3));
  TF_Buffer view = TF_GetBuffer(b.get());
  EXPECT_NE(view.data, static_cast<const void*>(bytes));
  EXPECT_EQ(view.length, 3u);
  EXPECT_EQ(std::memcmp(view.data, "abc", 3), 0);

  // TF_GraphToGraphDef refuses to overwrite a buffer that holds data.
  TF_GraphToGraphDef(graph_.get(), b.get(), status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("empty"));
}

TEST_F(CApiTest, FedTensorIsSharedNotCopied) {
  TF_Operation* x = Placeholder("x");
  TF_Operation* id = Op("Identity", "id", {{x, 0}});
  ASSERT_NE(id, nullptr) << Message(status_.get());
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());

  std::atomic<int> released{0};
  TensorPtr in = FloatTensor({3}, {1, 2, 3}, &released);
  TF_Output feed{x, 0}, fetch{id, 0};
  TF_Tensor* value = in.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr out_owner(out);
  EXPECT_EQ(TF_TensorData(out), TF_TensorData(in.get()));  // The caller's memory, forwarded.
  EXPECT_THAT(Floats(out), ::testing::ElementsAre(1, 2, 3));

  // The caller's memory lives until the last tensor sharing it is gone.
  in.reset();
  EXPECT_EQ(released.load(), 0);
  out_owner.reset();
  EXPECT_EQ(released.load(), 1);
}

TEST_F(CApiTest, ConfigAndTarget) {
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_SetConfig(opts, "\xff\xff\xff", 3, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);

  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  std::string bytes = config.SerializeAsString();
  TF_SetConfig(opts, bytes.data(), bytes.size(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  {
    SessionPtr sess(graph_.get(), opts, status_.get());
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    TF_DeviceList* devices = TF_SessionListDevices(sess.get(), status_.get());
    ASSERT_NE(devices, nullptr) << Message(status_.get());
    EXPECT_EQ(TF_DeviceListCount(devices), 2);
    EXPECT_EQ(TF_DeviceListMemoryBytes(devices, -1, status_.get()), -1);
    EXPECT_NE(TF_GetCode(status_.get()), TF_OK);
    TF_DeleteDeviceList(devices);
  }

  TF_SetTarget(opts, "nowhere://x");
  EXPECT_EQ(TF_NewSession(graph_.get(), opts, status_.get()), nullptr);
  EXPECT_NE(TF_GetCode(status_.get()), TF_OK);
  EXPECT_THAT(Message(status_.get()), HasSubstr("nowhere://x"));
  TF_DeleteSessionOptions(opts);
}

TEST_F(CApiTest, FinishOperationErrorsNameTheNode) {
  TF_Operation* x = Placeholder("x");

  // Too few inputs.
  EXPECT_EQ(Op("MatMul", "one_input", {{x, 0}}), nullptr);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'one_input'"));

  // An output index the producer does not have.
  EXPECT_EQ(Op("Relu", "bad_index", {{x, 3}}), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'bad_index'"));
  EXPECT_THAT(Message(status_.get()), HasSubstr("out of range"));

  // Null input and an input from another graph.
  EXPECT_EQ(Op("Relu", "null_input", {{nullptr, 0}}), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'null_input'"));
  GraphPtr other(TF_NewGraph());
  TF_OperationDescription* d = TF_NewOperation(other.get(), "Relu", "foreign");
  TF_AddInput(d, {x, 0});
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("not in this graph"));

  // Missing required attr, unknown attr, attr of the wrong type.
  d = TF_NewOperation(graph_.get(), "Placeholder", "no_dtype");
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'no_dtype'"));
  EXPECT_THAT(Message(status_.get()), HasSubstr("dtype"));
  d = TF_NewOperation(graph_.get(), "Placeholder", "extra_attr");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrInt(d, "bogus", 1);
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("bogus"));
  d = TF_NewOperation(graph_.get(), "Placeholder", "wrong_type");
  TF_SetAttrInt(d, "dtype", 1);
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("dtype"));

  // A type outside the op's allowed list (Relu has no bool kernel type).
  TF_Operation* flag = Placeholder("flag", TF_BOOL);
  EXPECT_EQ(Op("Relu", "bool_relu", {{flag, 0}}), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'bool_relu'"));

  // Misuse of the description calls is reported at finish.
  d = TF_NewOperation(graph_.get(), "Placeholder", "null_attr_name");
  TF_SetAttrType(d, nullptr, TF_FLOAT);
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("attr name is null"));
  d = TF_NewOperation(graph_.get(), "Placeholder", "bad_proto");
  TF_SetAttrValueProto(d, "dtype", "\xff\xff", 2, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_DeleteStatus(nullptr);  // Harmless.
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);  // dtype was never set.
  d = TF_NewOperation(nullptr, "Placeholder", "no_graph");
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("graph"));
  d = TF_NewOperation(graph_.get(), "Placeholder", "");
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("empty name"));
  EXPECT_EQ(TF_FinishOperation(nullptr, status_.get()), nullptr);
  EXPECT_NE(TF_GetCode(status_.get()), TF_OK);

  // Nothing but the two placeholders made it into the graph.
  EXPECT_EQ(NumOps(graph_.get()), 2u);
}

TEST_F(CApiTest, ListArgsInferNAndTypeLists) {
  TF_Operation* x = Placeholder("x");
  TF_Operation* n = Placeholder("n", TF_INT32);
  TF_OperationDescription* d = TF_NewOperation(graph_.get(), "IdentityN", "pair");
  TF_Output list[] = {{x, 0}, {n, 0}};
  TF_AddInputList(d, list, 2);
  TF_Operation* pair = TF_FinishOperation(d, status_.get());
  ASSERT_NE(pair, nullptr) << Message(status_.get());
  ASSERT_EQ(TF_OperationNumOutputs(pair), 2);
  EXPECT_EQ(TF_OperationOutputType({pair, 0}), TF_FLOAT);
  EXPECT_EQ(TF_OperationOutputType({pair, 1}), TF_INT32);
  EXPECT_EQ(TF_OperationInputType({pair, 1}), TF_INT32);
  EXPECT_EQ(TF_OperationOutputType({pair, 2}), 0);

  d = TF_NewOperation(graph_.get(), "NoOp", "barrier");
  TF_Operation* barrier = TF_FinishOperation(d, status_.get());
  ASSERT_NE(barrier, nullptr) << Message(status_.get());
  EXPECT_EQ(TF_OperationNumOutputs(barrier), 0);
  d = TF_NewOperation(graph_.get(), "AddN", "sum3");
  TF_Output same[] = {{x, 0}, {x, 0}, {x, 0}};
  TF_AddInputList(d, same, 3);
  TF_AddControlInput(d, barrier);
  TF_Operation* sum = TF_FinishOperation(d, status_.get());
  ASSERT_NE(sum, nullptr) << Message(status_.get());
  EXPECT_EQ(TF_OperationNumInputs(sum), 3);
  EXPECT_EQ(TF_OperationNumControlInputs(sum), 1);

  BufferPtr node(TF_NewBuffer());
  TF_OperationToNodeDef(sum, node.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK);
  NodeDef def;
  ASSERT_TRUE(def.ParseFromArray(node->data, static_cast<int>(node->length)));
  EXPECT_EQ(def.attr().at("N").i(), 3);
  EXPECT_EQ(def.attr().at("T").type(), DT_FLOAT);
  EXPECT_THAT(def.input(), ::testing::ElementsAre("x", "x", "x", "^barrier"));

  // Mixed types in an N * T list.
  d = TF_NewOperation(graph_.get(), "AddN", "mixed");
  TF_AddInputList(d, list, 2);
  EXPECT_EQ(TF_FinishOperation(d, status_.get()), nullptr);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'mixed'"));

  // Run the multi-output op and a target.
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr xv = FloatTensor({2}, {1, 2});
  int32_t nv_data[] = {7};
  int64_t scalar_dims[1];
  TensorPtr nv(TF_NewTensor(TF_INT32, scalar_dims, 0, nv_data, sizeof nv_data, nullptr, nullptr));
  TF_Output feeds[] = {{x, 0}, {n, 0}};
  TF_Tensor* values[] = {xv.get(), nv.get()};
  TF_Output fetches[] = {{pair, 1}, {sum, 0}};
  TF_Tensor* outs[2] = {};
  const TF_Operation* targets[] = {pair, barrier};
  TF_SessionRun(sess.get(), nullptr, feeds, values, 2, fetches, outs, 2, targets, 2, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr o0(outs[0]), o1(outs[1]);
  EXPECT_EQ(TF_TensorType(o0.get()), TF_INT32);
  EXPECT_EQ(*static_cast<int32_t*>(TF_TensorData(o0.get())), 7);
  EXPECT_THAT(Floats(o1.get()), ::testing::ElementsAre(3, 6));
}

// As in TensorFlow, control edges out of a fed Placeholder wait for the value fed in instead
// of running the Placeholder.
TEST_F(CApiTest, ControlEdgeFromFedPlaceholder) {
  TF_Operation* x = Placeholder("x");
  TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Relu", "y");
  TF_AddInput(d, {x, 0});
  TF_AddControlInput(d, x);
  TF_Operation* y = TF_FinishOperation(d, status_.get());
  ASSERT_NE(y, nullptr) << Message(status_.get());
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr xv = FloatTensor({1}, {2});
  TF_Output feed{x, 0}, fetch{y, 0};
  TF_Tensor* value = xv.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_DeleteTensor(out);
}

TEST_F(CApiTest, ShapesOfUnknownRankAndConstants) {
  TF_Operation* x = Placeholder("x");  // No shape attr: unknown rank.
  EXPECT_EQ(TF_GraphGetTensorNumDims(graph_.get(), {x, 0}, status_.get()), -1);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);
  int64_t dims[2] = {5, 5};
  TF_GraphGetTensorShape(graph_.get(), {x, 0}, dims, 2, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(TF_GraphGetTensorNumDims(graph_.get(), {x, 1}, status_.get()), -1);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_EQ(TF_GraphGetTensorNumDims(nullptr, {x, 0}, status_.get()), -1);
  EXPECT_NE(TF_GetCode(status_.get()), TF_OK);

  TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Placeholder", "known");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  int64_t shape[] = {3, -1};
  TF_SetAttrShape(d, "shape", shape, 2);
  TF_Operation* known = TF_FinishOperation(d, status_.get());
  ASSERT_NE(known, nullptr) << Message(status_.get());
  TF_Operation* sum = Op("Add", "sum", {{known, 0}, {x, 0}});  // Known + unknown rank.
  ASSERT_NE(sum, nullptr) << Message(status_.get());
  EXPECT_EQ(TF_GraphGetTensorNumDims(graph_.get(), {sum, 0}, status_.get()), -1);
  TF_Operation* relu = Op("Relu", "relu", {{known, 0}});
  TF_GraphGetTensorShape(graph_.get(), {relu, 0}, dims, 2, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], -1);
}

TEST_F(CApiTest, ImportIsAllOrNothing) {
  GraphDef def;
  NodeDef* relu = def.add_node();  // Listed before its input: import orders nodes itself.
  relu->set_name("r");
  relu->set_op("Relu");
  relu->add_input("p");
  (*relu->mutable_attr())["T"].set_type(DT_FLOAT);
  NodeDef* p = def.add_node();
  p->set_name("p");
  p->set_op("Placeholder");
  (*p->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(opts, "a/");  // A trailing '/' is not doubled.
  TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(def).get(), opts, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_Operation* r = TF_GraphOperationByName(graph_.get(), "a/r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(TF_OperationInput({r, 0}).oper, TF_GraphOperationByName(graph_.get(), "a/p"));

  struct Case {
    const char* what;
    std::function<void(GraphDef*)> edit;
    const char* message;
  };
  std::vector<Case> cases = {
      {"missing input", [](GraphDef* g) { g->mutable_node(0)->set_input(0, "nope"); }, "nope"},
      {"bad index", [](GraphDef* g) { g->mutable_node(0)->set_input(0, "p:4"); }, "out of range"},
      {"cycle", [](GraphDef* g) { g->mutable_node(1)->add_input("^r"); }, "cycle"},
      {"unknown op", [](GraphDef* g) { g->mutable_node(0)->set_op("Frobnicate"); }, "Frobnicate"},
      {"duplicate", [](GraphDef* g) { g->mutable_node(0)->set_name("p"); }, "two nodes named"},
      {"no name", [](GraphDef* g) { g->mutable_node(0)->set_name(""); }, "no name"},
      {"missing attr", [](GraphDef* g) { g->mutable_node(1)->clear_attr(); }, "dtype"},
      {"wrong type", [](GraphDef* g) { (*g->mutable_node(0)->mutable_attr())["T"].set_type(DT_INT32); },
       "expects int32"},
  };
  for (const Case& c : cases) {
    GraphDef bad = def;
    c.edit(&bad);
    TF_ImportGraphDefOptionsSetPrefix(opts, "b");
    TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(bad).get(), opts, status_.get());
    EXPECT_NE(TF_GetCode(status_.get()), TF_OK) << c.what;
    EXPECT_THAT(Message(status_.get()), HasSubstr(c.message)) << c.what;
    EXPECT_EQ(NumOps(graph_.get()), 2u) << c.what;  // Nothing from the failed import.
  }
  TF_DeleteImportGraphDefOptions(opts);

  TF_GraphImportGraphDef(graph_.get(), nullptr, nullptr, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  // Empty bytes are an empty GraphDef.
  BufferPtr empty(TF_NewBuffer());
  TF_GraphImportGraphDef(graph_.get(), empty.get(), nullptr, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
}

// Imported nodes join the graph breadth first from the GraphDef's sources, in its order, so
// TF_GraphNextOperation and TF_GraphToGraphDef list them the same way every time.
TEST_F(CApiTest, ImportOrderFollowsTheGraphDef) {
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "r" op: "Relu" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "s" op: "Add" input: "r" input: "q" input: "^p"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "q" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  )", &def));
  TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(def).get(), nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());

  std::vector<std::string> names;
  size_t pos = 0;
  while (TF_Operation* op = TF_GraphNextOperation(graph_.get(), &pos)) {
    names.push_back(TF_OperationName(op));
  }
  EXPECT_THAT(names, ::testing::ElementsAre("p", "q", "r", "s"));
  BufferPtr out(TF_NewBuffer());
  TF_GraphToGraphDef(graph_.get(), out.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  GraphDef exported;
  ASSERT_TRUE(exported.ParseFromArray(out->data, static_cast<int>(out->length)));
  ASSERT_EQ(exported.node_size(), 4);
  EXPECT_EQ(exported.node(3).name(), "s");
  EXPECT_THAT(exported.node(3).input(), ::testing::ElementsAre("r", "q", "^p"));

  TF_Operation* s = TF_GraphOperationByName(graph_.get(), "s");
  EXPECT_EQ(TF_OperationInput({s, 0}).oper, TF_GraphOperationByName(graph_.get(), "r"));
  EXPECT_EQ(TF_OperationInput({s, 1}).oper, TF_GraphOperationByName(graph_.get(), "q"));
  EXPECT_EQ(TF_OperationInput({s, 2}).oper, nullptr);
  EXPECT_EQ(TF_OperationNumControlInputs(s), 1);
}

// A node that fails late (here its shape function, after its inputs were added) takes back
// the whole import, names included, so the same names can be imported again.
TEST_F(CApiTest, FailedImportTakesBackWhatItAdded) {
  TF_Operation* x = Placeholder("x");
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
    node { name: "m" op: "MatMul" input: "a" input: "b"
           attr { key: "T" value { type: DT_FLOAT } } }
  )", &def));
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(opts, "mm");
  TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(def).get(), opts, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'mm/m'"));
  EXPECT_EQ(NumOps(graph_.get()), 1u);
  EXPECT_EQ(TF_GraphOperationByName(graph_.get(), "mm/a"), nullptr);

  def.mutable_node(1)->mutable_attr()->at("shape").mutable_shape()->mutable_dim(0)->set_size(3);
  TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(def).get(), opts, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_DeleteImportGraphDefOptions(opts);
  TF_Operation* m = TF_GraphOperationByName(graph_.get(), "mm/m");
  ASSERT_NE(m, nullptr);
  int64_t dims[2];
  TF_GraphGetTensorShape(graph_.get(), {m, 0}, dims, 2, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_EQ(dims[0], 2);  // [2, 3] x [3, 3].
  EXPECT_EQ(dims[1], 3);
  size_t pos = 0;
  EXPECT_EQ(TF_GraphNextOperation(graph_.get(), &pos), x);
  EXPECT_EQ(NumOps(graph_.get()), 4u);
}

TEST_F(CApiTest, SessionRunArgumentChecks) {
  TF_Operation* x = Placeholder("x");
  TF_Operation* y = Op("Relu", "y", {{x, 0}});
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr xv = FloatTensor({2}, {-1, 1});
  TF_Output feed{x, 0}, fetch{y, 0};
  TF_Tensor* value = xv.get();
  TF_Tensor* out = reinterpret_cast<TF_Tensor*>(0x1);  // Must be reset to NULL on failure.

  TF_SessionRun(sess.get(), nullptr, &feed, &value, -1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);

  TF_Tensor* null_value = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &null_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("input_values[0]"));

  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, nullptr, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("output_values"));

  BufferPtr garbage(TF_NewBufferFromString("\xff\xff\xff", 3));
  TF_SessionRun(sess.get(), garbage.get(), &feed, &value, 1, &fetch, &out, 1, nullptr, 0,
                nullptr, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("RunOptions"));

  BufferPtr full(TF_NewBufferFromString("x", 1));
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0, full.get(),
                status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("run_metadata"));

  const TF_Operation* null_target = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, nullptr, nullptr, 0, &null_target, 1,
                nullptr, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("target 0"));

  // A feed from another graph.
  GraphPtr other(TF_NewGraph());
  TF_OperationDescription* d = TF_NewOperation(other.get(), "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* foreign = TF_FinishOperation(d, status_.get());
  TF_Output foreign_feed{foreign, 0};
  TF_SessionRun(sess.get(), nullptr, &foreign_feed, &value, 1, &fetch, &out, 1, nullptr, 0,
                nullptr, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("not in this graph"));

  // And a good run, with metadata requested.
  BufferPtr metadata(TF_NewBuffer());
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0,
                metadata.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr owner(out);
  EXPECT_THAT(Floats(out), ::testing::ElementsAre(0, 1));
  EXPECT_NE(metadata->data_deallocator, nullptr);
}

// A step fed and fetched in two calls, as TensorFlow's partial runs: a target runs as soon as
// its feeds have arrived, and a finished run's handle is refused.
TEST_F(CApiTest, PartialRunFeedsAndFetchesInSteps) {
  TF_Operation* a = Placeholder("a");
  TF_Operation* b = Placeholder("b");
  TF_Operation* twice = Op("Add", "twice", {{a, 0}, {a, 0}});        // 2a
  TF_Operation* square = Op("Mul", "square", {{twice, 0}, {a, 0}});  // 2a*a
  TF_Operation* sum = Op("Add", "sum", {{square, 0}, {b, 0}});       // 2a*a + b
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  SessionPtr sess(graph_.get(), nullptr, status_.get());

  TF_Output feeds[] = {{a, 0}, {b, 0}};
  TF_Output fetches[] = {{twice, 0}, {sum, 0}};
  const TF_Operation* targets[] = {square};
  const char* handle = nullptr;
  TF_SessionPRunSetup(sess.get(), feeds, 2, fetches, 2, targets, 1, &handle, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  ASSERT_NE(handle, nullptr);

  // sum needs b, which has not been fed.
  TensorPtr av = FloatTensor({2}, {3, -1});
  TF_Tensor* a_value = av.get();
  TF_Tensor* out = nullptr;
  TF_SessionPRun(sess.get(), handle, &feeds[0], &a_value, 1, &fetches[1], &out, 1, nullptr, 0,
                 status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'sum:0' needs a declared feed"));

  TF_SessionPRun(sess.get(), handle, &feeds[0], &a_value, 1, &fetches[0], &out, 1, nullptr, 0,
                 status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr first(out);
  EXPECT_THAT(Floats(out), ::testing::ElementsAre(6, -2));

  // Neither a nor twice again.
  TF_SessionPRun(sess.get(), handle, &feeds[0], &a_value, 1, nullptr, nullptr, 0, nullptr, 0,
                 status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("'a:0' has already been fed"));
  TF_SessionPRun(sess.get(), handle, nullptr, nullptr, 0, &fetches[0], &out, 1, nullptr, 0,
                 status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("'twice:0' has already been fetched"));
  // Nor anything setup did not declare.
  TF_Output undeclared{square, 0};
  TF_SessionPRun(sess.get(), handle, nullptr, nullptr, 0, &undeclared, &out, 1, nullptr, 0,
                 status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("did not declare it as a fetch"));
  EXPECT_EQ(out, nullptr);

  TensorPtr bv = FloatTensor({2}, {1, 10});
  TF_Tensor* b_value = bv.get();
  TF_SessionPRun(sess.get(), handle, &feeds[1], &b_value, 1, &fetches[1], &out, 1, nullptr, 0,
                 status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr second(out);
  EXPECT_THAT(Floats(out), ::testing::ElementsAre(19, 12));

  // Everything declared is done: the run is over.
  TF_SessionPRun(sess.get(), handle, nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, 0,
                 status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("is not a partial run of this session"));
  TF_DeletePRunHandle(handle);
}

TEST_F(CApiTest, PartialRunSetupChecksItsDeclarations) {
  TF_Operation* a = Placeholder("a");
  TF_Operation* y = Op("Relu", "y", {{a, 0}});
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  const char* handle = reinterpret_cast<const char*>(0x1);  // Reset to NULL on failure.
  TF_Output twice[] = {{a, 0}, {a, 0}};
  TF_SessionPRunSetup(sess.get(), twice, 2, nullptr, 0, nullptr, 0, &handle, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("'a:0' is declared as a feed twice"));
  EXPECT_EQ(handle, nullptr);

  TF_Output both[] = {{a, 0}};
  TF_SessionPRunSetup(sess.get(), both, 1, both, 1, nullptr, 0, &handle, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("both a feed and a fetch"));
  TF_Output bad_index{y, 3};
  TF_SessionPRunSetup(sess.get(), nullptr, 0, &bad_index, 1, nullptr, 0, &handle,
                      status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("output index 3 is out of range"));
  TF_SessionPRunSetup(sess.get(), both, -1, nullptr, 0, nullptr, 0, &handle, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("negative count"));
  TF_SessionPRunSetup(sess.get(), both, 1, nullptr, 0, nullptr, 0, nullptr, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("handle"));

  TF_SessionPRun(sess.get(), "prun:99", nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, 0,
                 status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("'prun:99' is not a partial run"));
  TF_SessionPRun(sess.get(), nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, 0,
                 status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_DeletePRunHandle(nullptr);
}

// TF_NewWhile/TF_FinishWhile: i, x = 0, 1; while i < 5: i, x = i + 1, x * 2.
TEST_F(CApiTest, WhileLoopRunsAsAFunctionalWhile) {
  TF_Operation* i0 = Placeholder("i0", TF_INT32);
  TF_Operation* x0 = Placeholder("x0");
  TF_Output inputs[] = {{i0, 0}, {x0, 0}};
  TF_WhileParams params = TF_NewWhile(graph_.get(), inputs, 2, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  auto scalar_const = [](TF_Graph* g, const char* name, TF_DataType dt, double v, TF_Status* s) {
    TF_Tensor* t = TF_AllocateTensor(dt, nullptr, 0, TF_DataTypeSize(dt));
    if (dt == TF_INT32) *static_cast<int32_t*>(TF_TensorData(t)) = static_cast<int32_t>(v);
    if (dt == TF_FLOAT) *static_cast<float*>(TF_TensorData(t)) = static_cast<float>(v);
    TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
    TF_SetAttrTensor(d, "value", t, s);
    TF_SetAttrType(d, "dtype", dt);
    TF_DeleteTensor(t);
    return TF_FinishOperation(d, s);
  };
  auto binary = [](TF_Graph* g, const char* op, const char* name, TF_Output a, TF_Output b,
                   TF_Status* s) {
    TF_OperationDescription* d = TF_NewOperation(g, op, name);
    TF_AddInput(d, a);
    TF_AddInput(d, b);
    return TF_FinishOperation(d, s);
  };
  TF_Operation* five = scalar_const(params.cond_graph, "five", TF_INT32, 5, status_.get());
  TF_Operation* less = binary(params.cond_graph, "Less", "less", params.cond_inputs[0],
                              {five, 0}, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  params.cond_output = {less, 0};
  TF_Operation* one = scalar_const(params.body_graph, "one", TF_INT32, 1, status_.get());
  TF_Operation* two = scalar_const(params.body_graph, "two", TF_FLOAT, 2, status_.get());
  TF_Operation* next_i = binary(params.body_graph, "AddV2", "next_i", params.body_inputs[0],
                                {one, 0}, status_.get());
  TF_Operation* next_x = binary(params.body_graph, "Mul", "next_x", params.body_inputs[1],
                                {two, 0}, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  params.body_outputs[0] = {next_i, 0};
  params.body_outputs[1] = {next_x, 0};
  params.name = "doubling";
  TF_Output outputs[2];
  TF_FinishWhile(&params, status_.get(), outputs);
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_STREQ(TF_OperationOpType(outputs[0].oper), "While");
  EXPECT_STREQ(TF_OperationName(outputs[0].oper), "doubling");
  EXPECT_EQ(TF_GraphNumFunctions(graph_.get()), 2);

  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr iv(TF_AllocateTensor(TF_INT32, nullptr, 0, sizeof(int32_t)));
  *static_cast<int32_t*>(TF_TensorData(iv.get())) = 0;
  TensorPtr xv = FloatTensor({}, {1});
  TF_Tensor* values[] = {iv.get(), xv.get()};
  TF_Tensor* out[2] = {nullptr, nullptr};
  TF_SessionRun(sess.get(), nullptr, inputs, values, 2, outputs, out, 2, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr i_out(out[0]), x_out(out[1]);
  EXPECT_EQ(*static_cast<int32_t*>(TF_TensorData(out[0])), 5);
  EXPECT_EQ(*static_cast<float*>(TF_TensorData(out[1])), 32.0f);  // 1 * 2^5

  // Starting past the bound runs no iteration.
  *static_cast<int32_t*>(TF_TensorData(iv.get())) = 7;
  TF_SessionRun(sess.get(), nullptr, inputs, values, 2, outputs, out, 2, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr i_out2(out[0]), x_out2(out[1]);
  EXPECT_EQ(*static_cast<int32_t*>(TF_TensorData(out[0])), 7);
  EXPECT_EQ(*static_cast<float*>(TF_TensorData(out[1])), 1.0f);
}

TEST_F(CApiTest, WhileLoopChecksItsGraphs) {
  TF_Operation* x0 = Placeholder("x0");
  TF_Output input{x0, 0};
  // No inputs, and inputs from another graph.
  TF_WhileParams empty = TF_NewWhile(graph_.get(), &input, 0, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_EQ(empty.cond_graph, nullptr);

  // The cond output must be set and bool.
  TF_Output out;
  {
    TF_WhileParams params = TF_NewWhile(graph_.get(), &input, 1, status_.get());
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    TF_FinishWhile(&params, status_.get(), &out);
    EXPECT_THAT(Message(status_.get()), HasSubstr("cond_output is not set"));
  }
  {
    TF_WhileParams params = TF_NewWhile(graph_.get(), &input, 1, status_.get());
    params.cond_output = params.cond_inputs[0];  // float, not bool
    TF_FinishWhile(&params, status_.get(), &out);
    EXPECT_THAT(Message(status_.get()), HasSubstr("must be bool"));
  }
  {
    // A body output of the wrong type.
    TF_WhileParams params = TF_NewWhile(graph_.get(), &input, 1, status_.get());
    TF_OperationDescription* d = TF_NewOperation(params.cond_graph, "IsNan", "nan");
    TF_AddInput(d, params.cond_inputs[0]);
    params.cond_output = {TF_FinishOperation(d, status_.get()), 0};
    d = TF_NewOperation(params.body_graph, "IsFinite", "finite");
    TF_AddInput(d, params.body_inputs[0]);
    params.body_outputs[0] = {TF_FinishOperation(d, status_.get()), 0};
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    TF_FinishWhile(&params, status_.get(), &out);
    EXPECT_THAT(Message(status_.get()), HasSubstr("body_outputs[0] ('finite:0') is bool"));
  }
  {
    // A cond output from the body graph.
    TF_WhileParams params = TF_NewWhile(graph_.get(), &input, 1, status_.get());
    params.cond_output = params.body_inputs[0];
    TF_FinishWhile(&params, status_.get(), &out);
    EXPECT_THAT(Message(status_.get()), HasSubstr("not in its graph"));
  }
  {
    TF_WhileParams params = TF_NewWhile(graph_.get(), &input, 1, status_.get());
    TF_AbortWhile(&params);
  }
  EXPECT_EQ(NumOps(graph_.get()), 1u);  // Nothing was added.
}

// A library function called by TensorFlow's functional ops, named with TF_SetAttrFuncName.
TEST_F(CApiTest, FunctionalOpsCallLibraryFunctions) {
  // f(a) = a * a, from its own graph.
  GraphPtr body(TF_NewGraph());
  TF_OperationDescription* d = TF_NewOperation(body.get(), "Placeholder", "a");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* a = TF_FinishOperation(d, status_.get());
  d = TF_NewOperation(body.get(), "Mul", "sq");
  TF_AddInput(d, {a, 0});
  TF_AddInput(d, {a, 0});
  TF_Operation* sq = TF_FinishOperation(d, status_.get());
  TF_Output fin{a, 0}, fout{sq, 0};
  TF_Function* fn = TF_GraphToFunction(body.get(), "square", 0, -1, nullptr, 1, &fin, 1, &fout,
                                       nullptr, nullptr, nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_GraphCopyFunction(graph_.get(), fn, nullptr, status_.get());
  TF_DeleteFunction(fn);
  // g(a) = -a
  GraphPtr neg_body(TF_NewGraph());
  d = TF_NewOperation(neg_body.get(), "Placeholder", "a");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* na = TF_FinishOperation(d, status_.get());
  d = TF_NewOperation(neg_body.get(), "Neg", "neg");
  TF_AddInput(d, {na, 0});
  TF_Operation* neg = TF_FinishOperation(d, status_.get());
  TF_Output gin{na, 0}, gout{neg, 0};
  fn = TF_GraphToFunction(neg_body.get(), "negate", 0, -1, nullptr, 1, &gin, 1, &gout, nullptr,
                          nullptr, nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_GraphCopyFunction(graph_.get(), fn, nullptr, status_.get());
  TF_DeleteFunction(fn);

  TF_Operation* x = Placeholder("x");
  TF_Operation* p = Placeholder("p", TF_BOOL);
  d = TF_NewOperation(graph_.get(), "StatefulPartitionedCall", "call");
  TF_Output xin{x, 0};
  TF_AddInputList(d, &xin, 1);
  TF_DataType f32 = TF_FLOAT;
  TF_SetAttrTypeList(d, "Tout", &f32, 1);
  TF_SetAttrFuncName(d, "f", "square", 6);
  TF_Operation* call = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  d = TF_NewOperation(graph_.get(), "StatelessIf", "branch");
  TF_AddInput(d, {p, 0});
  TF_AddInputList(d, &xin, 1);
  TF_SetAttrTypeList(d, "Tout", &f32, 1);
  TF_SetAttrFuncName(d, "then_branch", "square", 6);
  TF_SetAttrFuncName(d, "else_branch", "negate", 6);
  const int64_t dims[] = {2};
  const int64_t* shapes[] = {dims};
  const int ranks[] = {1};
  TF_SetAttrShapeList(d, "output_shapes", shapes, ranks, 1);
  TF_Operation* branch = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  int64_t dim = -2;
  TF_GraphGetTensorShape(graph_.get(), {branch, 0}, &dim, 1, status_.get());
  EXPECT_EQ(dim, 2);  // From output_shapes.

  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr xv = FloatTensor({2}, {3, -1});
  TensorPtr pv(TF_AllocateTensor(TF_BOOL, nullptr, 0, 1));
  *static_cast<bool*>(TF_TensorData(pv.get())) = false;
  TF_Output feeds[] = {{x, 0}, {p, 0}};
  TF_Tensor* values[] = {xv.get(), pv.get()};
  TF_Output fetches[] = {{call, 0}, {branch, 0}};
  TF_Tensor* out[2] = {nullptr, nullptr};
  TF_SessionRun(sess.get(), nullptr, feeds, values, 2, fetches, out, 2, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr call_out(out[0]), branch_out(out[1]);
  EXPECT_THAT(Floats(out[0]), ::testing::ElementsAre(9, 1));
  EXPECT_THAT(Floats(out[1]), ::testing::ElementsAre(-3, 1));  // p false: negate

  // A function name the library lacks fails the run, naming it.
  d = TF_NewOperation(graph_.get(), "PartitionedCall", "missing");
  TF_AddInputList(d, &xin, 1);
  TF_SetAttrTypeList(d, "Tout", &f32, 1);
  TF_SetAttrFuncName(d, "f", "no_such_function", 16);
  TF_Operation* missing = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_Output mout{missing, 0};
  TF_Tensor* m = nullptr;
  TF_SessionRun(sess.get(), nullptr, feeds, values, 1, &mout, &m, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_NE(TF_GetCode(status_.get()), TF_OK);
  EXPECT_THAT(Message(status_.get()), HasSubstr("no_such_function"));
}

// The deprecated session API: a GraphDef extends the session's own graph, runs name tensors,
// and inputs become the session's.
TEST_F(CApiTest, DeprecatedSessionRunsByName) {
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", &def));
  std::string bytes = def.SerializeAsString();
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_DeprecatedSession* sess = TF_NewDeprecatedSession(opts, status_.get());
  TF_DeleteSessionOptions(opts);
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_ExtendGraph(sess, bytes.data(), bytes.size(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  // The same names again are refused.
  TF_ExtendGraph(sess, bytes.data(), bytes.size(), status_.get());
  EXPECT_NE(TF_GetCode(status_.get()), TF_OK);

  std::atomic<int> released{0};
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y:0", "z"};
  TF_Tensor* inputs[] = {FloatTensor({3}, {-1, 2, -3}, &released).release()};
  TF_Tensor* outputs[2] = {nullptr, nullptr};
  TF_Run(sess, nullptr, in_names, inputs, 1, out_names, outputs, 2, nullptr, 0, nullptr,
         status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr y(outputs[0]), z(outputs[1]);
  EXPECT_THAT(Floats(outputs[0]), ::testing::ElementsAre(0, 2, 0));
  EXPECT_THAT(Floats(outputs[1]), ::testing::ElementsAre(0, -2, 0));
  EXPECT_EQ(released.load(), 1);  // TF_Run took the input.

  // A bad name still takes the input, and names the problem.
  const char* bad_names[] = {"nope:0"};
  inputs[0] = FloatTensor({1}, {1}, &released).release();
  TF_Run(sess, nullptr, bad_names, inputs, 1, out_names, outputs, 1, nullptr, 0, nullptr,
         status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_NOT_FOUND);
  EXPECT_THAT(Message(status_.get()), HasSubstr("no operation 'nope'"));
  EXPECT_EQ(outputs[0], nullptr);
  EXPECT_EQ(released.load(), 2);

  // A partial run by names.
  const char* handle = nullptr;
  TF_PRunSetup(sess, in_names, 1, out_names + 1, 1, nullptr, 0, &handle, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  inputs[0] = FloatTensor({1}, {5}, &released).release();
  TF_PRun(sess, handle, in_names, inputs, 1, out_names + 1, outputs, 1, nullptr, 0,
          status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr pz(outputs[0]);
  EXPECT_THAT(Floats(outputs[0]), ::testing::ElementsAre(-5));
  TF_DeletePRunHandle(handle);

  TF_DeviceList* devices = TF_DeprecatedSessionListDevices(sess, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_GE(TF_DeviceListCount(devices), 1);
  TF_DeleteDeviceList(devices);
  TF_Reset(nullptr, nullptr, 0, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);
  TF_CloseDeprecatedSession(sess, status_.get());
  TF_DeleteDeprecatedSession(sess, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
}

TEST_F(CApiTest, TryEvaluateConstantFoldsOnlyConstants) {
  auto float_const = [&](const char* name, std::vector<int64_t> dims, std::vector<float> v) {
    TensorPtr t = FloatTensor(dims, v);
    TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Const", name);
    TF_SetAttrTensor(d, "value", t.get(), status_.get());
    TF_SetAttrType(d, "dtype", TF_FLOAT);
    return TF_FinishOperation(d, status_.get());
  };
  TF_Operation* a = float_const("a", {2}, {1, -2});
  TF_Operation* b = float_const("b", {2}, {3, 4});
  TF_Operation* sum = Op("AddV2", "sum", {{a, 0}, {b, 0}});
  TF_Operation* x = Placeholder("x");
  TF_Operation* fed = Op("AddV2", "fed", {{sum, 0}, {x, 0}});
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());

  TF_Tensor* result = nullptr;
  EXPECT_EQ(TF_TryEvaluateConstant(graph_.get(), {sum, 0}, &result, status_.get()), 1);
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  ASSERT_NE(result, nullptr);
  TensorPtr owner(result);
  EXPECT_THAT(Floats(result), ::testing::ElementsAre(4, 2));

  TF_Tensor* none = reinterpret_cast<TF_Tensor*>(0x1);
  EXPECT_EQ(TF_TryEvaluateConstant(graph_.get(), {fed, 0}, &none, status_.get()), 0);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);  // Not constant is not an error.
  EXPECT_EQ(none, nullptr);
  TF_Output bad{sum, 5};
  EXPECT_EQ(TF_TryEvaluateConstant(graph_.get(), bad, &none, status_.get()), 0);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
}

TEST_F(CApiTest, UpdateEdgeRewiresAndChecks) {
  TF_Operation* x = Placeholder("x");
  TF_Operation* y = Placeholder("y");
  TF_Operation* i = Placeholder("i", TF_INT32);
  TF_Operation* relu = Op("Relu", "relu", {{x, 0}});
  TF_Operation* neg = Op("Neg", "neg", {{relu, 0}});
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());

  TF_UpdateEdge(graph_.get(), {i, 0}, {relu, 0}, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("expects float"));
  TF_UpdateEdge(graph_.get(), {neg, 0}, {relu, 0}, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("would make a cycle"));
  TF_UpdateEdge(graph_.get(), {y, 0}, {relu, 1}, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OUT_OF_RANGE);

  TF_UpdateEdge(graph_.get(), {y, 0}, {relu, 0}, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_Output in = TF_OperationInput({relu, 0});
  EXPECT_EQ(in.oper, y);
  EXPECT_EQ(TF_OperationOutputNumConsumers({x, 0}), 0);

  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TensorPtr yv = FloatTensor({2}, {-4, 4});
  TF_Output feed{y, 0}, fetch{neg, 0};
  TF_Tensor* value = yv.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr owner(out);
  EXPECT_THAT(Floats(out), ::testing::ElementsAre(0, -4));
  // Once a session holds the graph, edges stay.
  TF_UpdateEdge(graph_.get(), {x, 0}, {relu, 0}, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_FAILED_PRECONDITION);
}

TEST_F(CApiTest, KernelListsAndMoreAttrSetters) {
  BufferPtr all(TF_GetAllRegisteredKernels(status_.get()));
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  KernelList kernels;
  ASSERT_TRUE(kernels.ParseFromArray(all->data, static_cast<int>(all->length)));
  EXPECT_GT(kernels.kernel_size(), 100);
  BufferPtr relu(TF_GetRegisteredKernelsForOp("Relu", status_.get()));
  ASSERT_TRUE(kernels.ParseFromArray(relu->data, static_cast<int>(relu->length)));
  ASSERT_GT(kernels.kernel_size(), 0);
  for (const KernelDef& k : kernels.kernel()) EXPECT_EQ(k.op(), "Relu");
  BufferPtr none(TF_GetRegisteredKernelsForOp("NoSuchOp", status_.get()));
  EXPECT_EQ(none->length, 0u);

  // A shape proto for Placeholder's shape, and colocation.
  TensorShapeProto shape;
  shape.add_dim()->set_size(3);
  shape.add_dim()->set_size(-1);
  std::string bytes = shape.SerializeAsString();
  TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Placeholder", "p");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrTensorShapeProto(d, "shape", bytes.data(), bytes.size(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_Operation* p = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  int64_t dims[2] = {0, 0};
  TF_GraphGetTensorShape(graph_.get(), {p, 0}, dims, 2, status_.get());
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], -1);
  d = TF_NewOperation(graph_.get(), "Placeholder", "q");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrTensorShapeProto(d, "shape", "\xff\xff", 2, status_.get());
  EXPECT_THAT(Message(status_.get()), HasSubstr("not a valid serialized TensorShapeProto"));
  TF_ColocateWith(d, p);
  TF_Operation* q = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  BufferPtr node(TF_NewBuffer());
  TF_OperationToNodeDef(q, node.get(), status_.get());
  NodeDef nd;
  ASSERT_TRUE(nd.ParseFromArray(node->data, static_cast<int>(node->length)));
  ASSERT_TRUE(nd.attr().contains("_class"));
  EXPECT_EQ(nd.attr().at("_class").list().s(0), "loc:@p");
}

// The bytes of a TF_STRING tensor's elements.
std::vector<std::string> Strings(const TF_Tensor* t) {
  const auto* e = static_cast<const TF_TString*>(TF_TensorData(t));
  std::vector<std::string> out;
  for (int64_t i = 0; i < TF_TensorElementCount(t); ++i) {
    out.emplace_back(TF_TString_GetDataPointer(&e[i]), TF_TString_GetSize(&e[i]));
  }
  return out;
}

TEST_F(CApiTest, StringConstCrossesTheApi) {
  AttrValue value;
  TensorProto* t = value.mutable_tensor();
  t->set_dtype(DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(2);
  t->add_string_val("hello");
  t->add_string_val(std::string("a\0b", 3));
  std::string bytes = value.SerializeAsString();
  TF_OperationDescription* d = TF_NewOperation(graph_.get(), "Const", "s");
  TF_SetAttrValueProto(d, "value", bytes.data(), bytes.size(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK);
  TF_SetAttrType(d, "dtype", TF_STRING);
  TF_Operation* s = TF_FinishOperation(d, status_.get());
  ASSERT_NE(s, nullptr) << Message(status_.get());
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TF_Output fetch{s, 0};
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, nullptr, nullptr, 0, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr owner(out);
  EXPECT_EQ(TF_TensorType(out), TF_STRING);
  EXPECT_EQ(TF_TensorByteSize(out), 2 * sizeof(TF_TString));
  EXPECT_THAT(Strings(out), ::testing::ElementsAre("hello", std::string("a\0b", 3)));

  TF_Tensor* attr = nullptr;
  TF_OperationGetAttrTensor(s, "value", &attr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr attr_owner(attr);
  EXPECT_THAT(Strings(attr), ::testing::ElementsAre("hello", std::string("a\0b", 3)));
}

TEST_F(CApiTest, StringFeedsAreCopiedAndChecked) {
  TF_Operation* x = Placeholder("x", TF_STRING);
  TF_Operation* id = Op("Identity", "id", {{x, 0}});
  ASSERT_NE(id, nullptr) << Message(status_.get());
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TF_Output feed{x, 0}, fetch{id, 0};

  // A TF_NewTensor array whose elements are SMALL, LARGE, VIEW and OFFSET strings.
  struct Array {
    TF_TString e[4];
    char tail[8];  // What the OFFSET element points at.
  };
  auto* array = new Array;
  for (TF_TString& e : array->e) TF_TString_Init(&e);
  TF_TString_Copy(&array->e[0], "small", 5);
  std::string large(300, 'L');
  TF_TString_Copy(&array->e[1], large.data(), large.size());
  const char* viewed = "viewed";
  TF_TString_AssignView(&array->e[2], viewed, 6);
  std::memcpy(array->tail, "tail", 4);
  array->e[3].u.offset.size = (4 << 2) | TF_TSTR_OFFSET;
  array->e[3].u.offset.offset = static_cast<uint32_t>(offsetof(Array, tail) - 3 * sizeof(TF_TString));
  array->e[3].u.offset.count = 1;
  std::atomic<int> released{0};
  int64_t dims[] = {4};
  // The caller frees its elements in its deallocator.
  auto free_array = [](void* data, size_t, void* counter) {
    auto* a = static_cast<Array*>(data);
    for (TF_TString& e : a->e) TF_TString_Dealloc(&e);
    delete a;
    ++*static_cast<std::atomic<int>*>(counter);
  };
  TensorPtr in(TF_NewTensor(TF_STRING, dims, 1, array, sizeof(Array), free_array, &released));
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(TF_TensorData(in.get()), static_cast<void*>(array));
  EXPECT_EQ(TF_TensorByteSize(in.get()), sizeof(Array));

  TF_Tensor* in_value = in.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &in_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr out_owner(out);
  EXPECT_THAT(Strings(out), ::testing::ElementsAre("small", large, "viewed", "tail"));
  // Fetched strings are the library's own copies: LARGE where they do not fit inline.
  const auto* fetched = static_cast<const TF_TString*>(TF_TensorData(out));
  EXPECT_EQ(TF_TString_GetType(&fetched[0]), TF_TSTR_SMALL);
  EXPECT_EQ(TF_TString_GetType(&fetched[1]), TF_TSTR_LARGE);
  EXPECT_NE(TF_TString_GetDataPointer(&fetched[1]), TF_TString_GetDataPointer(&array->e[1]));

  // Malformed elements are refused, with the element named.
  TF_TString saved = array->e[3];
  array->e[3].u.offset.offset = 1000;
  TF_SessionRun(sess.get(), nullptr, &feed, &in_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("string 3"));
  EXPECT_EQ(out, nullptr);
  array->e[3] = saved;
  TF_TString small_saved = array->e[0];
  array->e[0].u.smll.size = (30 << 2) | TF_TSTR_SMALL;  // SMALL holds at most 22 bytes.
  TF_SessionRun(sess.get(), nullptr, &feed, &in_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("string 0"));
  array->e[0] = small_saved;
  TF_TString view_saved = array->e[2];
  TF_TString_AssignView(&array->e[2], nullptr, 3);
  TF_SessionRun(sess.get(), nullptr, &feed, &in_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("null"));
  array->e[2] = view_saved;

  // Feeds are copies: the caller's tensor goes now, and its deallocator runs exactly once.
  EXPECT_EQ(released.load(), 0);
  in.reset();
  EXPECT_EQ(released.load(), 1);
  EXPECT_THAT(Strings(out_owner.get()), ::testing::ElementsAre("small", large, "viewed", "tail"));

  // A misaligned array is refused.
  alignas(8) char raw[2 * sizeof(TF_TString)] = {};
  int64_t one[] = {1};
  EXPECT_EQ(TF_NewTensor(TF_STRING, one, 1, raw + 1, sizeof(TF_TString), nullptr, nullptr),
            nullptr);
}

// An ONNX model with a string input and output (Identity), through SL_GraphImportONNX and
// TF_SessionRun.
TEST_F(CApiTest, OnnxModelWithStringsRuns) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("strings");
  auto string_vector = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* type = v->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::STRING);
    type->mutable_shape()->add_dim()->set_dim_param("n");
  };
  string_vector(g->add_input(), "words");
  string_vector(g->add_output(), "same");
  onnx::NodeProto* id = g->add_node();
  id->set_op_type("Identity");
  id->add_input("words");
  id->add_output("same");
  std::string bytes = model.SerializeAsString();

  SL_ONNXImport* m =
      SL_GraphImportONNX(graph_.get(), nullptr, bytes.data(), bytes.size(), "m", status_.get());
  ASSERT_NE(m, nullptr) << Message(status_.get());
  std::unique_ptr<SL_ONNXImport, void (*)(SL_ONNXImport*)> owner(m, SL_DeleteONNXImport);
  EXPECT_EQ(SL_ONNXImportValueType(m, 0, 0), TF_STRING);
  EXPECT_STREQ(SL_ONNXImportValueTypeString(m, 1, 0), "tensor(string)");

  int64_t dims[] = {2};
  TensorPtr in(TF_AllocateTensor(TF_STRING, dims, 1, 2 * sizeof(TF_TString)));
  ASSERT_NE(in, nullptr);
  auto* e = static_cast<TF_TString*>(TF_TensorData(in.get()));
  std::string large(64, 'w');
  TF_TString_Copy(&e[0], "word", 4);
  TF_TString_Copy(&e[1], large.data(), large.size());
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  TF_Output feed = SL_ONNXImportInput(m, 0), fetch = SL_ONNXImportOutput(m, 0);
  TF_Tensor* in_value = in.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess.get(), nullptr, &feed, &in_value, 1, &fetch, &out, 1, nullptr, 0, nullptr,
                status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TensorPtr out_owner(out);
  EXPECT_THAT(Strings(out), ::testing::ElementsAre("word", large));
}

TEST_F(CApiTest, StringTensorsAllocateMoveAndRefuseBitcasts) {
  int64_t dims[] = {3};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, 3 * sizeof(TF_TString));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(TF_TensorIsAligned(t));
  EXPECT_EQ(TF_TensorElementCount(t), 3);
  EXPECT_EQ(TF_DataTypeSize(TF_STRING), 0u);  // As in TensorFlow.
  auto* e = static_cast<TF_TString*>(TF_TensorData(t));
  EXPECT_THAT(Strings(t), ::testing::ElementsAre("", "", ""));
  std::string large(100, 'x');
  TF_TString_Copy(&e[1], large.data(), large.size());  // Freed by TF_DeleteTensor.

  TF_Tensor* moved = TF_TensorMaybeMove(t);
  ASSERT_NE(moved, nullptr);
  TensorPtr owner(moved);
  EXPECT_EQ(TF_TensorData(moved), static_cast<void*>(e));
  EXPECT_THAT(Strings(moved), ::testing::ElementsAre("", large, ""));

  TensorPtr floats(TF_AllocateTensor(TF_FLOAT, dims, 1, 3 * sizeof(float)));
  TF_TensorBitcastFrom(moved, TF_FLOAT, floats.get(), dims, 1, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_TensorBitcastFrom(floats.get(), TF_STRING, moved, dims, 1, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_EQ(TF_TensorType(moved), TF_STRING);

  // No elements: no data, nothing to free.
  int64_t empty[] = {0, 2};
  TensorPtr none(TF_AllocateTensor(TF_STRING, empty, 2, 0));
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(TF_TensorElementCount(none.get()), 0);
  EXPECT_EQ(TF_Dim(none.get(), 1), 2);
}

TEST_F(CApiTest, GraphOutlivesItsDeletionUntilSessionsEnd) {
  TF_Graph* g = graph_.release();
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* x = TF_FinishOperation(d, status_.get());
  TF_Session* sess = TF_NewSession(g, nullptr, status_.get());
  TF_DeleteGraph(g);  // Deferred: the session still uses it.
  TensorPtr xv = FloatTensor({1}, {4});
  TF_Output io{x, 0};
  TF_Tensor* value = xv.get();
  TF_Tensor* out = nullptr;
  TF_SessionRun(sess, nullptr, &io, &value, 1, &io, &out, 1, nullptr, 0, nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_DeleteTensor(out);
  TF_DeleteSession(sess, status_.get());  // Frees the graph too (checked under ASan/valgrind).
  EXPECT_EQ(TF_GetCode(status_.get()), TF_OK);
}

// Several threads extend the graph and run it at once; each checks its own numbers.
TEST_F(CApiTest, ConcurrentExtendAndRun) {
  TF_Operation* x = Placeholder("x");
  SessionPtr sess(graph_.get(), nullptr, status_.get());
  constexpr int kThreads = 4;
  constexpr int kRuns = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StatusPtr s(TF_NewStatus());
      // Each thread adds x + x ... (t + 2 terms) under its own name.
      std::vector<TF_Output> terms(t + 2, TF_Output{x, 0});
      std::string name = "sum" + std::to_string(t);
      TF_OperationDescription* d = TF_NewOperation(graph_.get(), "AddN", name.c_str());
      TF_AddInputList(d, terms.data(), static_cast<int>(terms.size()));
      TF_Operation* sum = TF_FinishOperation(d, s.get());
      if (sum == nullptr) {
        ++failures;
        return;
      }
      for (int i = 0; i < kRuns; ++i) {
        TensorPtr xv = FloatTensor({1}, {static_cast<float>(i)});
        TF_Output feed{x, 0}, fetch{sum, 0};
        TF_Tensor* value = xv.get();
        TF_Tensor* out = nullptr;
        TF_SessionRun(sess.get(), nullptr, &feed, &value, 1, &fetch, &out, 1, nullptr, 0,
                      nullptr, s.get());
        if (TF_GetCode(s.get()) != TF_OK || Floats(out)[0] != static_cast<float>(i * (t + 2))) {
          ADD_FAILURE() << name << " run " << i << ": " << TF_Message(s.get());
          ++failures;
        }
        TF_DeleteTensor(out);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Import options that name operations of another graph, or nothing, are rejected by the import
// (their setters have no status), and a mapped input of the wrong type takes the import back.
TEST_F(CApiTest, ImportOptionsMisuse) {
  TF_Operation* feed = Placeholder("feed", TF_INT32);
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )", &def));
  GraphPtr other(TF_NewGraph());
  TF_OperationDescription* d = TF_NewOperation(other.get(), "Placeholder", "elsewhere");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* elsewhere = TF_FinishOperation(d, status_.get());
  ASSERT_NE(elsewhere, nullptr) << Message(status_.get());

  struct Case {
    const char* what;
    std::function<void(TF_ImportGraphDefOptions*)> set;
    const char* message;
  };
  std::vector<Case> cases = {
      {"another graph's output",
       [&](TF_ImportGraphDefOptions* o) {
         TF_ImportGraphDefOptionsAddInputMapping(o, "x", 0, TF_Output{elsewhere, 0});
       },
       "not in this graph"},
      {"an output that does not exist",
       [&](TF_ImportGraphDefOptions* o) {
         TF_ImportGraphDefOptionsAddInputMapping(o, "x", 0, TF_Output{feed, 3});
       },
       "out of range"},
      {"a null source name",
       [](TF_ImportGraphDefOptions* o) {
         TF_ImportGraphDefOptionsAddInputMapping(o, nullptr, 0, TF_Output{nullptr, 0});
       },
       "src_name"},
      {"another graph's control dependency",
       [&](TF_ImportGraphDefOptions* o) {
         TF_ImportGraphDefOptionsAddControlDependency(o, elsewhere);
       },
       "not an operation of this graph"},
      {"a mapped input of the wrong type",
       [&](TF_ImportGraphDefOptions* o) {
         TF_ImportGraphDefOptionsAddInputMapping(o, "x", 0, TF_Output{feed, 0});
       },
       "expects float"},
      {"a return operation the GraphDef lacks",
       [](TF_ImportGraphDefOptions* o) { TF_ImportGraphDefOptionsAddReturnOperation(o, "q"); },
       "'q'"},
      {"a return output out of range",
       [](TF_ImportGraphDefOptions* o) { TF_ImportGraphDefOptionsAddReturnOutput(o, "y", 1); },
       "out of range"},
  };
  for (const Case& c : cases) {
    TF_ImportGraphDefOptions* o = TF_NewImportGraphDefOptions();
    TF_ImportGraphDefOptionsSetPrefix(o, "i");
    c.set(o);
    TF_ImportGraphDefResults* r =
        TF_GraphImportGraphDefWithResults(graph_.get(), GraphDefBuffer(def).get(), o,
                                          status_.get());
    EXPECT_EQ(r, nullptr) << c.what;
    EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT) << c.what;
    EXPECT_THAT(Message(status_.get()), HasSubstr(c.message)) << c.what;
    EXPECT_EQ(NumOps(graph_.get()), 1u) << c.what;
    EXPECT_EQ(TF_OperationOutputNumConsumers(TF_Output{feed, 0}), 0) << c.what;
    TF_DeleteImportGraphDefResults(r);
    TF_DeleteImportGraphDefOptions(o);
  }
  // Results of nothing read as empty.
  int n = -1;
  TF_Output* outputs = nullptr;
  TF_ImportGraphDefResultsReturnOutputs(nullptr, &n, &outputs);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(outputs, nullptr);
}

// A function imported with a GraphDef has an OpDef: its signature.
TEST_F(CApiTest, GraphGetOpDefFindsFunctions) {
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    library { function { signature { name: "Twice" input_arg { name: "a" type: DT_FLOAT }
                                      output_arg { name: "b" type: DT_FLOAT } }
                         node_def { name: "s" op: "AddN" input: "a" input: "a"
                                    attr { key: "N" value { i: 2 } }
                                    attr { key: "T" value { type: DT_FLOAT } } }
                         ret { key: "b" value: "s:sum:0" } } }
  )", &def));
  TF_GraphImportGraphDef(graph_.get(), GraphDefBuffer(def).get(), nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  BufferPtr out(TF_NewBuffer());
  TF_GraphGetOpDef(graph_.get(), "Twice", out.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  OpDef op_def;
  ASSERT_TRUE(op_def.ParseFromArray(out->data, static_cast<int>(out->length)));
  EXPECT_EQ(op_def.name(), "Twice");
  ASSERT_EQ(op_def.input_arg_size(), 1);
  EXPECT_EQ(op_def.input_arg(0).name(), "a");
}

// A library that registers no ops loads, twice, with an empty OpList each time.
TEST_F(CApiTest, LoadLibraryWithoutOps) {
  for (int i = 0; i < 2; ++i) {
    TF_Library* lib = TF_LoadLibrary("libm.so.6", status_.get());
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    ASSERT_NE(lib, nullptr);
    TF_Buffer ops = TF_GetOpList(lib);
    OpList list;
    EXPECT_TRUE(list.ParseFromArray(ops.data, static_cast<int>(ops.length)));
    EXPECT_EQ(list.op_size(), 0);
    TF_DeleteLibraryHandle(lib);
  }
  TF_LoadLibrary(nullptr, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
}

// Attr getters reject null operations and names through the status.
TEST_F(CApiTest, AttrGettersCheckArguments) {
  TF_Operation* x = Placeholder("x");
  int64_t v = 0;
  TF_OperationGetAttrInt(nullptr, "dtype", &v, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_OperationGetAttrInt(x, nullptr, &v, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_OperationGetAttrTensor(x, "dtype", nullptr, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);  // Not a tensor.
  TF_AttrMetadata m = TF_OperationGetAttrMetadata(x, "nope", status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_NOT_FOUND);
  EXPECT_EQ(m.list_size, -1);
  EXPECT_EQ(m.total_size, -1);
  EXPECT_EQ(TF_OperationOutputListLength(nullptr, "output", status_.get()), -1);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
}

// ---- Functions and servers ----

TF_Operation* AddOp(TF_Graph* g, const char* type, const char* name, std::vector<TF_Output> inputs,
                    TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, type, name);
  for (const TF_Output& in : inputs) TF_AddInput(d, in);
  return TF_FinishOperation(d, s);
}

TF_Operation* AddPlaceholder(TF_Graph* g, const char* name, TF_DataType dt, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", dt);
  return TF_FinishOperation(d, s);
}

TF_Operation* AddFloatConst(TF_Graph* g, const char* name, float value, TF_Status* s) {
  TensorPtr t = FloatTensor({1}, {value});
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t.get(), s);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  return TF_FinishOperation(d, s);
}

// y = x * 2 + 1 in `g`; *x is the placeholder.
TF_Operation* XTimesTwoPlusOne(TF_Graph* g, TF_Operation** x, TF_Status* s) {
  *x = AddPlaceholder(g, "x", TF_FLOAT, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << Message(s);
  TF_Operation* two = AddFloatConst(g, "two", 2, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << Message(s);
  TF_Operation* mul = AddOp(g, "Mul", "mul", {{*x, 0}, {two, 0}}, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << Message(s);
  TF_Operation* one = AddFloatConst(g, "one", 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << Message(s);
  TF_Operation* y = AddOp(g, "AddV2", "y", {{mul, 0}, {one, 0}}, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << Message(s);
  return y;
}

struct FunctionDeleter {
  void operator()(TF_Function* f) const { TF_DeleteFunction(f); }
};
using FunctionPtr = std::unique_ptr<TF_Function, FunctionDeleter>;

// A graph made into a function: its FunctionDef round-trips, joins another graph's library
// (and its GraphDef), and runs there as the branch of an If.
TEST_F(CApiTest, GraphToFunctionRoundTripsAndRuns) {
  TF_Operation* x = nullptr;
  TF_Operation* y = XTimesTwoPlusOne(graph_.get(), &x, status_.get());
  TF_Output in{x, 0}, out{y, 0};
  const char* out_names[] = {"y"};
  FunctionPtr f(TF_GraphToFunction(graph_.get(), "XTimesTwoPlusOne", 0, -1, nullptr, 1, &in, 1,
                                   &out, out_names, nullptr, "y = x * 2 + 1", status_.get()));
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_STREQ(TF_FunctionName(f.get()), "XTimesTwoPlusOne");

  BufferPtr bytes(TF_NewBuffer());
  TF_FunctionToFunctionDef(f.get(), bytes.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  FunctionDef fdef;
  ASSERT_TRUE(fdef.ParseFromArray(bytes->data, static_cast<int>(bytes->length)));
  EXPECT_EQ(fdef.signature().name(), "XTimesTwoPlusOne");
  ASSERT_EQ(fdef.signature().input_arg_size(), 1);
  ASSERT_EQ(fdef.signature().output_arg_size(), 1);
  EXPECT_EQ(fdef.signature().input_arg(0).type(), DT_FLOAT);
  EXPECT_EQ(fdef.signature().output_arg(0).name(), "y");
  int args = 0, retvals = 0;
  for (const NodeDef& n : fdef.node_def()) {
    EXPECT_NE(n.op(), "Placeholder");  // Replaced by the argument.
    args += n.op() == "_Arg";
    retvals += n.op() == "_Retval";
  }
  EXPECT_EQ(args, 1);
  EXPECT_EQ(retvals, 1);

  // A hash makes a name of the contents.
  FunctionPtr hashed(TF_GraphToFunction(graph_.get(), "F", 1, -1, nullptr, 1, &in, 1, &out,
                                        nullptr, nullptr, nullptr, status_.get()));
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_THAT(std::string(TF_FunctionName(hashed.get())), ::testing::StartsWith("F_"));

  FunctionPtr imported(TF_FunctionImportFunctionDef(bytes->data, bytes->length, status_.get()));
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_STREQ(TF_FunctionName(imported.get()), "XTimesTwoPlusOne");
  EXPECT_EQ(TF_FunctionImportFunctionDef("\xff\xff", 2, status_.get()), nullptr);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);

  // Attrs round-trip.
  AttrValue attr;
  attr.set_b(true);
  const std::string attr_bytes = attr.SerializeAsString();
  TF_FunctionSetAttrValueProto(imported.get(), "_noinline", attr_bytes.data(), attr_bytes.size(),
                               status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  BufferPtr attr_out(TF_NewBuffer());
  TF_FunctionGetAttrValueProto(imported.get(), "_noinline", attr_out.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_FunctionGetAttrValueProto(imported.get(), "missing", attr_out.get(), status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);

  GraphPtr other(TF_NewGraph());
  TF_GraphCopyFunction(other.get(), f.get(), nullptr, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_GraphCopyFunction(other.get(), f.get(), nullptr, status_.get());  // The same: no change.
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_EQ(TF_GraphNumFunctions(other.get()), 1);
  // Another function of the same name is refused.
  TF_GraphCopyFunction(other.get(), imported.get(), nullptr, status_.get());
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  TF_Function* got[2] = {nullptr, nullptr};
  EXPECT_EQ(TF_GraphGetFunctions(other.get(), got, 2, status_.get()), 1);
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  EXPECT_STREQ(TF_FunctionName(got[0]), "XTimesTwoPlusOne");
  TF_DeleteFunction(got[0]);
  BufferPtr graph_def_bytes(TF_NewBuffer());
  TF_GraphToGraphDef(other.get(), graph_def_bytes.get(), status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  GraphDef graph_def;
  ASSERT_TRUE(graph_def.ParseFromArray(graph_def_bytes->data, static_cast<int>(graph_def_bytes->length)));
  ASSERT_EQ(graph_def.library().function_size(), 1);
  EXPECT_EQ(graph_def.library().function(0).signature().name(), "XTimesTwoPlusOne");

  // Run as both branches of an If.
  TF_Operation* cond = AddPlaceholder(other.get(), "cond", TF_BOOL, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_Operation* v = AddPlaceholder(other.get(), "v", TF_FLOAT, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_OperationDescription* d = TF_NewOperation(other.get(), "Onnx>If", "call");
  TF_AddInput(d, {cond, 0});
  TF_Output vin{v, 0};
  TF_AddInputList(d, &vin, 1);
  const TF_DataType floats[] = {TF_FLOAT};
  TF_SetAttrTypeList(d, "Tout", floats, 1);
  AttrValue fn;
  fn.mutable_func()->set_name("XTimesTwoPlusOne");
  const std::string fn_bytes = fn.SerializeAsString();
  TF_SetAttrValueProto(d, "then_branch", fn_bytes.data(), fn_bytes.size(), status_.get());
  TF_SetAttrValueProto(d, "else_branch", fn_bytes.data(), fn_bytes.size(), status_.get());
  TF_Operation* call = TF_FinishOperation(d, status_.get());
  ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
  TF_SessionOptions* opts = TF_NewSessionOptions();
  {
    SessionPtr sess(other.get(), opts, status_.get());
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    TensorPtr c(TF_AllocateTensor(TF_BOOL, nullptr, 0, 1));
    *static_cast<bool*>(TF_TensorData(c.get())) = true;
    TensorPtr value = FloatTensor({2}, {3, 4});
    TF_Output feeds[] = {{cond, 0}, {v, 0}};
    TF_Tensor* values[] = {c.get(), value.get()};
    TF_Output fetch{call, 0};
    TF_Tensor* result = nullptr;
    TF_SessionRun(sess.get(), nullptr, feeds, values, 2, &fetch, &result, 1, nullptr, 0, nullptr,
                  status_.get());
    ASSERT_EQ(TF_GetCode(status_.get()), TF_OK) << Message(status_.get());
    TensorPtr owned(result);
    EXPECT_EQ(Floats(result), (std::vector<float>{7, 9}));
  }
  TF_DeleteSessionOptions(opts);
}

// Bodies must be closed: a tensor read from outside is neither an input nor a body output.
TEST_F(CApiTest, GraphToFunctionRefusesOpenBodies) {
  TF_Operation* x = nullptr;
  TF_Operation* y = XTimesTwoPlusOne(graph_.get(), &x, status_.get());
  TF_Output out{y, 0};
  const TF_Operation* only_y[] = {y};
  EXPECT_EQ(TF_GraphToFunction(graph_.get(), "Open", 0, 1, only_y, 0, nullptr, 1, &out, nullptr,
                               nullptr, nullptr, status_.get()),
            nullptr);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
  EXPECT_THAT(Message(status_.get()), HasSubstr("neither a function input"));
  EXPECT_EQ(TF_GraphToFunction(graph_.get(), "", 0, -1, nullptr, 0, nullptr, 1, &out, nullptr,
                               nullptr, nullptr, status_.get()),
            nullptr);
  EXPECT_EQ(TF_GetCode(status_.get()), TF_INVALID_ARGUMENT);
}

// Sets (and on destruction restores the absence of) the server's environment.
class ServerEnvironment {
 public:
  explicit ServerEnvironment(const char* secret) {
    for (const char* v : {"SLUICE_CLUSTER_SECRET", "SLUICE_CLUSTER_SECRET_FILE", "SLUICE_TLS_CERT",
                          "SLUICE_TLS_KEY", "SLUICE_TLS_CA", "SLUICE_INSECURE"}) {
      unsetenv(v);
    }
    if (secret != nullptr) setenv("SLUICE_CLUSTER_SECRET", secret, 1);
  }
  ~ServerEnvironment() { unsetenv("SLUICE_CLUSTER_SECRET"); }
};

std::string OneTaskServerDef(const std::string& address) {
  ServerDef def;
  JobDef* job = def.mutable_cluster()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = address;
  def.set_job_name("worker");
  def.set_task_index(0);
  def.set_protocol("grpc");
  return def.SerializeAsString();
}

// A one-task server with a cluster secret serves a session of this process (whose channels
// present the same secret), and stops.
TEST(CApiServerTest, ServesASession) {
  ServerEnvironment env("c-api-server-test-secret-0123456789");
  StatusPtr status(TF_NewStatus());
  const std::string def = OneTaskServerDef("127.0.0.1:0");
  TF_Server* server = TF_NewServer(def.data(), def.size(), status.get());
  ASSERT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
  TF_ServerStart(server, status.get());
  ASSERT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
  const std::string target = TF_ServerTarget(server);
  EXPECT_THAT(target, ::testing::StartsWith("grpc://127.0.0.1:"));
  EXPECT_THAT(target, ::testing::Not(::testing::EndsWith(":0")));
  TF_ServerStart(server, status.get());  // Twice.
  EXPECT_EQ(TF_GetCode(status.get()), TF_FAILED_PRECONDITION);

  GraphPtr graph(TF_NewGraph());
  TF_Operation* x = nullptr;
  TF_Operation* y = XTimesTwoPlusOne(graph.get(), &x, status.get());
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_SetTarget(opts, target.c_str());
  {
    SessionPtr sess(graph.get(), opts, status.get());
    ASSERT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
    TensorPtr value = FloatTensor({2}, {1, 5});
    TF_Output feed{x, 0}, fetch{y, 0};
    TF_Tensor* in = value.get();
    TF_Tensor* result = nullptr;
    TF_SessionRun(sess.get(), nullptr, &feed, &in, 1, &fetch, &result, 1, nullptr, 0, nullptr,
                  status.get());
    ASSERT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
    TensorPtr owned(result);
    EXPECT_EQ(Floats(result), (std::vector<float>{3, 11}));
    TF_CloseSession(sess.get(), status.get());
  }
  TF_DeleteSessionOptions(opts);

  StatusPtr join_status(TF_NewStatus());
  std::thread joiner([&] { TF_ServerJoin(server, join_status.get()); });
  TF_ServerStop(server, status.get());
  joiner.join();
  EXPECT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
  EXPECT_EQ(TF_GetCode(join_status.get()), TF_OK) << Message(join_status.get());
  TF_ServerStop(server, status.get());  // Idempotent.
  EXPECT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
  TF_DeleteServer(server);
}

TEST(CApiServerTest, RefusesMalformedDefsAndMissingCredentials) {
  StatusPtr status(TF_NewStatus());
  {
    ServerEnvironment env("c-api-server-test-secret-0123456789");
    EXPECT_EQ(TF_NewServer("\xff\xff\xff", 3, status.get()), nullptr);
    EXPECT_EQ(TF_GetCode(status.get()), TF_INVALID_ARGUMENT);
    ServerDef other_task;
    other_task.mutable_cluster()->add_job()->set_name("ps");
    other_task.set_job_name("worker");
    const std::string bytes = other_task.SerializeAsString();
    EXPECT_EQ(TF_NewServer(bytes.data(), bytes.size(), status.get()), nullptr);
    EXPECT_EQ(TF_GetCode(status.get()), TF_INVALID_ARGUMENT) << Message(status.get());
  }
  ServerEnvironment env(nullptr);
  const std::string def = OneTaskServerDef("127.0.0.1:0");
  EXPECT_EQ(TF_NewServer(def.data(), def.size(), status.get()), nullptr);
  EXPECT_EQ(TF_GetCode(status.get()), TF_FAILED_PRECONDITION);
  EXPECT_THAT(Message(status.get()), HasSubstr("SLUICE_INSECURE=1"));
  setenv("SLUICE_INSECURE", "1", 1);
  TF_Server* server = TF_NewServer(def.data(), def.size(), status.get());
  EXPECT_EQ(TF_GetCode(status.get()), TF_OK) << Message(status.get());
  TF_DeleteServer(server);  // Never started.
  unsetenv("SLUICE_INSECURE");
}

}  // namespace
}  // namespace sluice
