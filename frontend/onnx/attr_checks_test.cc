#include "frontend/onnx/attr_checks.h"

#include <limits>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "frontend/onnx/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

void AddInts(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// x [1,1,4,4] -> `op` (node "bad") -> y; Conv-like ops get a 1x1 weight "w".
onnx::ModelProto WindowModel(const std::string& op) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  auto* xt = x->mutable_type()->mutable_tensor_type();
  xt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 1, 4, 4}) xt->mutable_shape()->add_dim()->set_dim_value(d);
  auto* node = g->add_node();
  node->set_name("bad");
  node->set_op_type(op);
  node->add_input("x");
  if (op == "Conv" || op == "ConvTranspose") {
    node->add_input("w");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 1, 1, 1}) w->add_dims(d);
    w->add_float_data(1.0f);
  } else {
    AddInts(node, "kernel_shape", {1, 1});
  }
  node->add_output("y");
  auto* y = g->add_output();
  y->set_name("y");
  auto* yt = y->mutable_type()->mutable_tensor_type();
  yt->set_elem_type(onnx::TensorProto::FLOAT);
  // Symbolic dims: the checker wants a shape; shape inference is what must not see the attrs.
  for (const char* d : {"n", "c", "h", "w"}) yt->mutable_shape()->add_dim()->set_dim_param(d);
  return m;
}

// Each of these killed the process with SIGFPE inside the ONNX library's shape inference
// (strides of 0), or overflowed window arithmetic (pads near 2^62).
TEST(AttrChecksTest, WindowAttrsAreCheckedBeforeTheOnnxLibrary) {
  for (const std::string op : {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"}) {
    onnx::ModelProto m = WindowModel(op);
    AddInts(m.mutable_graph()->mutable_node(0), "strides", {0, 0});
    absl::Status s = ImportOnnxModel(m).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << ": " << s;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("'bad'"), HasSubstr(op), HasSubstr("strides"))) << s;
  }
  onnx::ModelProto m = WindowModel("Conv");
  AddInts(m.mutable_graph()->mutable_node(0), "pads", {int64_t{1} << 62, 0, 0, 0});
  absl::Status s = ImportOnnxModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'bad'"), HasSubstr("pads"))) << s;

  m = WindowModel("MaxPool");
  AddInts(m.mutable_graph()->mutable_node(0), "dilations", {1, -1});
  EXPECT_EQ(CheckAttrsBeforeOnnx(m).code(), absl::StatusCode::kInvalidArgument);

  m = WindowModel("MaxPool");
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_ints(0, 0);  // kernel_shape
  EXPECT_EQ(CheckAttrsBeforeOnnx(m).code(), absl::StatusCode::kInvalidArgument);
}

TEST(AttrChecksTest, SubgraphsAndOtherDivisorsAreChecked) {
  onnx::ModelProto inner = WindowModel("AveragePool");
  AddInts(inner.mutable_graph()->mutable_node(0), "strides", {1, 0});
  onnx::ModelProto m = WindowModel("MaxPool");
  auto* branch = m.mutable_graph()->mutable_node(0)->add_attribute();
  branch->set_name("then_branch");
  branch->set_type(onnx::AttributeProto::GRAPH);
  *branch->mutable_g() = inner.graph();
  EXPECT_EQ(CheckAttrsBeforeOnnx(m).code(), absl::StatusCode::kInvalidArgument);

  m = WindowModel("SpaceToDepth");
  auto* block = m.mutable_graph()->mutable_node(0)->add_attribute();
  block->set_name("blocksize");
  block->set_type(onnx::AttributeProto::INT);
  block->set_i(0);
  absl::Status s = CheckAttrsBeforeOnnx(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("blocksize"));

  EXPECT_OK(CheckAttrsBeforeOnnx(WindowModel("Conv")));
}

// Found by fuzzing: ONNX's ConvTranspose inference read the weight's dim 1 past a rank-1
// weight's dims and crashed (SIGSEGV); Conv indexes the weight the same way.
TEST(AttrChecksTest, ConvWeightOfTooLowRankIsRefusedBeforeInference) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    onnx::ModelProto m = WindowModel(op);
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_dims();
    w->add_dims(1);
    absl::Status s = ImportOnnxModel(m).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << ": " << s;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("'bad'"), HasSubstr("weight has rank 1"))) << s;
  }
}

// Found by fuzzing: ONNX's RNN inference read dims of an X of rank 1 (SIGSEGV).
TEST(AttrChecksTest, RecurrentInputsOfTheWrongRankAreRefusedBeforeInference) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(6);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (auto [name, rank] : {std::pair<const char*, int>{"x", 1}, {"w", 3}, {"r", 3}}) {
    auto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d = 0; d < rank; ++d) v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto* n = g->add_node();
  n->set_op_type("RNN");
  n->set_name("rnn");
  for (const char* in : {"x", "w", "r"}) n->add_input(in);
  n->add_output("y");
  auto* hidden = n->add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(2);
  g->add_output()->set_name("y");
  absl::Status s = ImportOnnxModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'rnn'"), HasSubstr("input X has rank 1"))) << s;
  // STFT's signal, declared by an initializer of rank 1.
  n->set_op_type("STFT");
  n->set_name("stft");
  n->clear_attribute();
  m.mutable_opset_import(0)->set_version(17);
  g->clear_input();
  auto* sig = g->add_initializer();
  sig->set_name("x");
  sig->set_data_type(onnx::TensorProto::FLOAT);
  sig->add_dims(1);
  sig->add_float_data(1);
  n->clear_input();
  n->add_input("x");
  n->add_input("w");
  auto* step = g->add_initializer();
  step->set_name("w");
  step->set_data_type(onnx::TensorProto::INT64);
  step->add_int64_data(1);
  s = ImportOnnxModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'stft'"), HasSubstr("input signal has rank 1"))) << s;
}

// Found by fuzzing: GatherND's inference took an initializer's dim of -7 as its shape and read
// past the data's dims (SIGSEGV inside the ONNX library).
TEST(AttrChecksTest, NegativeInitializerDimsAreRefusedBeforeInference) {
  onnx::ModelProto m = WindowModel("Conv");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, -7);
  absl::Status s = ImportOnnxModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("initializer 'w'"), HasSubstr("negative"))) << s;
}

// Found by fuzzing: ONNX's inference copied 11 bytes of raw_data into a vector of two int64s
// (a heap overflow reading Slice's starts).
TEST(AttrChecksTest, RawDataOfTheWrongSizeIsRefusedBeforeInference) {
  onnx::ModelProto m = WindowModel("Conv");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(11, '\1'));
  absl::Status s = ImportOnnxModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("initializer 'w'"), HasSubstr("needs 4 bytes of raw_data but has 11"))) << s;
}

// Found by fuzzing: LpPool-1's float p was cast to an integer unchecked (3.4e38 is undefined
// behaviour). Fractional, infinite, NaN and huge values are refused, naming the node.
TEST(AttrChecksTest, LpPoolVersionOneRefusesAPThatIsNoWholeNumber) {
  for (float p : {3.4e38f, 2.5f, 0.0f, -2.0f, std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()}) {
    onnx::ModelProto m = WindowModel("LpPool");
    m.mutable_opset_import(0)->set_version(1);
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("p");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(p);
    absl::Status s = ImportOnnxModel(m).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << p << ": " << s;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("'bad'"), HasSubstr("p must be a whole number"))) << s;
  }
  onnx::ModelProto m = WindowModel("LpPool");
  m.mutable_opset_import(0)->set_version(1);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("p");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(3.0f);
  EXPECT_OK(ImportOnnxModel(m).status());
}

// Found by the structured fuzzer: a ConstantOfShape whose shape input declared 2^31 elements
// made ONNX's inference build an output of rank 2^31 (10 GB in 10 s before the child's
// memory budget existed). Refused up front, naming the node and the input, as are other
// per-dim inputs of that length, declared as a graph input or an initializer.
TEST(AttrChecksTest, PerDimInputsOfHugeDeclaredLengthAreRefusedBeforeInference) {
  struct Case {
    const char* op;
    int input;  // Which input is the long one; the others are "x".
  };
  for (const Case& c : {Case{"ConstantOfShape", 0}, Case{"Expand", 1}, Case{"Reshape", 1},
                        Case{"Tile", 1}, Case{"Slice", 2}}) {
    for (bool as_initializer : {false, true}) {
      onnx::ModelProto m = WindowModel("Relu");
      auto* g = m.mutable_graph();
      onnx::NodeProto* node = g->mutable_node(0);
      node->set_op_type(c.op);
      node->clear_attribute();
      node->clear_input();
      for (int i = 0; i <= c.input; ++i) node->add_input(i == c.input ? "long" : "x");
      const int64_t length = int64_t{1} << 31;
      if (as_initializer) {
        auto* t = g->add_initializer();  // Its data is never read: the dims are refused first.
        t->set_name("long");
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(length);
      } else {
        auto* in = g->add_input();
        in->set_name("long");
        auto* type = in->mutable_type()->mutable_tensor_type();
        type->set_elem_type(onnx::TensorProto::INT64);
        type->mutable_shape()->add_dim()->set_dim_value(length);
      }
      absl::Status s = CheckAttrsBeforeOnnx(m);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.op << ": " << s;
      EXPECT_THAT(s.message(), AllOf(HasSubstr("'bad'"), HasSubstr("'long'"), HasSubstr("2147483648")))
          << c.op << ": " << s;
    }
  }
  // A subgraph's node reading a long value of the graph around it.
  {
    onnx::ModelProto inner = WindowModel("Relu");
    onnx::NodeProto* node = inner.mutable_graph()->mutable_node(0);
    node->set_op_type("ConstantOfShape");
    node->clear_attribute();
    node->set_input(0, "outer_long");
    inner.mutable_graph()->clear_input();
    onnx::ModelProto m = WindowModel("If");
    m.mutable_graph()->mutable_node(0)->clear_attribute();
    auto* branch = m.mutable_graph()->mutable_node(0)->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    *branch->mutable_g() = inner.graph();
    auto* in = m.mutable_graph()->add_input();
    in->set_name("outer_long");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(int64_t{1} << 31);
    absl::Status s = CheckAttrsBeforeOnnx(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("'outer_long'")) << s;
  }
  // At the bound, the check lets the model through to the library.
  onnx::ModelProto m = WindowModel("Relu");
  onnx::NodeProto* node = m.mutable_graph()->mutable_node(0);
  node->set_op_type("Expand");
  node->clear_attribute();
  node->add_input("shape");
  auto* in = m.mutable_graph()->add_input();
  in->set_name("shape");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(kMaxPerDimInputLength);
  EXPECT_OK(CheckAttrsBeforeOnnx(m));
}

}  // namespace
}  // namespace sluice
