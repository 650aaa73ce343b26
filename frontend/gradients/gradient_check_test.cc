// Checks the standard gradient functions against central finite differences in double
// precision (the harness is gradient_check_util.h).
#include "frontend/gradients/gradient_check_util.h"
#include "frontend/onnx/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using gradient_check::Case;
using gradient_check::Check;
using gradient_check::Model;
using gradient_check::Node;

TEST(GradientCheckTest, ElementwiseWithBroadcasting) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    Check({std::string(op) + "_broadcast", {Node(op, {"a", "b"}, "y")}, {{2, 3}, {3}}});
    Check({std::string(op) + "_scalar", {Node(op, {"a", "b"}, "y")}, {{}, {2, 2}}});
  }
}

TEST(GradientCheckTest, Unary) {
  for (const char* op : {"Neg", "Relu", "Sigmoid", "Tanh", "Exp"}) Check({op, {Node(op, {"a"}, "y")}, {{2, 3}}});
  Check({"Log", {Node("Log", {"a"}, "y")}, {{4}}, 0.5, 3});
  Check({"Sqrt", {Node("Sqrt", {"a"}, "y")}, {{4}}, 0.5, 3});
  Check({"Identity", {Node("Identity", {"a"}, "y")}, {{3}}});
}

TEST(GradientCheckTest, MatMulBatchedAndBroadcast) {
  Check({"matmul_2d", {Node("MatMul", {"a", "b"}, "y")}, {{2, 3}, {3, 4}}});
  Check({"matmul_batched", {Node("MatMul", {"a", "b"}, "y")}, {{2, 2, 3}, {3, 2}}});
}

TEST(GradientCheckTest, SharedSubexpressionsAndComposition) {
  // y = tanh(a @ b + c) * sigmoid(a @ b): the product is used twice.
  Check({"mlp", {Node("MatMul", {"a", "b"}, "ab"), Node("Add", {"ab", "c"}, "h"), Node("Tanh", {"h"}, "t"),
                 Node("Sigmoid", {"ab"}, "s"), Node("Mul", {"t", "s"}, "y")},
         {{2, 3}, {3, 2}, {2}}});
}

TEST(GradientCheckTest, OpsWithoutGradientsNameThePath) {
  // Floor has a gradient now (none, TensorFlow's); Mod has none registered.
  Case c{"mod", {Node("Mod", {"a", "a"}, "f", {gradient_check::IntAttr("fmod", 1)}), Node("Neg", {"f"}, "y")}, {{2}}};
  OnnxImportOptions options;
  options.check = false;
  auto g = ImportOnnxModel(Model(c), options);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), ::testing::HasSubstr("op 'Onnx>Mod'"));
  EXPECT_THAT(g.status().message(), ::testing::HasSubstr("path from y"));
}

}  // namespace
}  // namespace sluice
