// TensorFlow-form FunctionDefs rewritten for the executor, and run.
#include "worker/function_body.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "worker/executor.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// f(x: float [4]) -> (first, last, middle_sum): an Unpack's list output indexed by arg name
// and position, as TensorFlow writes bodies.
constexpr char kUnpackFunction[] = R"pb(
  signature {
    name: "f"
    input_arg { name: "x" type: DT_FLOAT }
    output_arg { name: "first" type: DT_FLOAT }
    output_arg { name: "last" type: DT_FLOAT }
    output_arg { name: "middle_sum" type: DT_FLOAT }
  }
  node_def {
    name: "u"
    op: "Unpack"
    input: "x"
    attr { key: "num" value { i: 4 } }
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node_def {
    name: "sum"
    op: "AddV2"
    input: "u:output:1"
    input: "u:output:2"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  ret { key: "first" value: "u:output:0" }
  ret { key: "last" value: "u:output:3" }
  ret { key: "middle_sum" value: "sum:z:0" }
)pb";

FunctionDef Parse(const char* text) {
  FunctionDef f;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &f));
  return f;
}

TEST(FunctionBodyTest, TensorFlowFormIsRewrittenAndRuns) {
  const FunctionDef f = Parse(kUnpackFunction);
  SL_ASSERT_OK_AND_ASSIGN(GraphDef body, FunctionBodyGraph(f, FunctionDefLibrary()));
  // _Arg x first, the two nodes with flat names, three _Retvals.
  ASSERT_EQ(body.node_size(), 6);
  EXPECT_EQ(body.node(0).op(), "_Arg");
  EXPECT_EQ(body.node(0).name(), "x");
  EXPECT_EQ(body.node(2).input(0), "u:1");
  EXPECT_EQ(body.node(2).input(1), "u:2");
  EXPECT_EQ(body.node(3).op(), "_Retval");
  EXPECT_EQ(body.node(4).input(0), "u:3");
  EXPECT_EQ(body.node(5).input(0), "sum:0");

  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type("CPU");
  Device device(attrs, nullptr);
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, Executor::Create(body, &device));
  std::vector<Tensor> args = {Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({4}))};
  CallFrame frame(args, 3);
  Executor::Args run;
  run.call_frame = &frame;
  ASSERT_OK(exec->Run(run));
  EXPECT_EQ(frame.rets()[0].flat<float>()[0], 1);
  EXPECT_EQ(frame.rets()[1].flat<float>()[0], 4);
  EXPECT_EQ(frame.rets()[2].flat<float>()[0], 5);
}

TEST(FunctionBodyTest, SluiceFormPassesThrough) {
  FunctionDef f;
  f.mutable_signature()->set_name("g");
  NodeDef* a = f.add_node_def();
  a->set_name("a");
  a->set_op("_Arg");
  NodeDef* r = f.add_node_def();
  r->set_name("r");
  r->set_op("_Retval");
  r->add_input("a:0");
  SL_ASSERT_OK_AND_ASSIGN(GraphDef body, FunctionBodyGraph(f, FunctionDefLibrary()));
  ASSERT_EQ(body.node_size(), 2);
  EXPECT_EQ(body.node(1).input(0), "a:0");
}

TEST(FunctionBodyTest, BadReferencesNameTheFunctionAndNode) {
  struct Case {
    std::string from, to, want;
  } cases[] = {
      {"u:output:0", "nope:output:0", "names no node"},
      {"u:output:0", "u:bogus:0", "has no output 'bogus'"},
      {"u:output:0", "u:output:x", "not of the form"},
      {"\"x\"", "\"ghost\"", "neither an input arg nor a node"},
  };
  for (const Case& c : cases) {
    std::string text = kUnpackFunction;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    absl::Status s = FunctionBodyGraph(Parse(text.c_str()), FunctionDefLibrary()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.to << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("function 'f'")) << c.to;
    EXPECT_THAT(s.message(), HasSubstr(c.want)) << c.to;
  }
  FunctionDef no_ret = Parse(kUnpackFunction);
  no_ret.mutable_ret()->erase("last");
  EXPECT_THAT(FunctionBodyGraph(no_ret, FunctionDefLibrary()).status().message(),
              HasSubstr("output arg 'last' has no entry in ret"));
  FunctionDef generic = Parse(kUnpackFunction);
  generic.mutable_signature()->mutable_input_arg(0)->set_type(DT_INVALID);
  generic.mutable_signature()->mutable_input_arg(0)->set_type_attr("T");
  EXPECT_EQ(FunctionBodyGraph(generic, FunctionDefLibrary()).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace sluice
