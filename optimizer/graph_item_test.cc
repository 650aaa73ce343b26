// SortTopologically keeps a sorted graph as it is, moves a node that came too early (a feed's
// _Recv the master appends) to just before its first reader, and ends on a cycle; InferItemShapes
// merges _output_shapes hints with the ops' shape functions and drops a contradicting hint.
#include "optimizer/graph_item.h"

#include <string>
#include <vector>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

std::vector<std::string> Names(const GraphDef& g) {
  std::vector<std::string> names;
  for (const NodeDef& n : g.node()) names.push_back(n.name());
  return names;
}

GraphDef Parse(const char* text) {
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g));
  return g;
}

TEST(SortTopologicallyTest, KeepsOrderAndMovesOnlyWhatMust) {
  GraphDef sorted = Parse(R"(
    node { name: "a" op: "NoOp" } node { name: "b" op: "NoOp" input: "^a" }
    node { name: "c" op: "NoOp" } node { name: "d" op: "NoOp" input: "^b" input: "^c" })");
  SortTopologically(&sorted);
  EXPECT_EQ(Names(sorted), (std::vector<std::string>{"a", "b", "c", "d"}));

  GraphDef late_feed = Parse(R"(
    node { name: "w" op: "NoOp" } node { name: "conv" op: "NoOp" input: "^recv" input: "^w" }
    node { name: "relu" op: "NoOp" input: "^conv" } node { name: "other" op: "NoOp" }
    node { name: "recv" op: "NoOp" })");
  SortTopologically(&late_feed);
  EXPECT_EQ(Names(late_feed), (std::vector<std::string>{"w", "other", "recv", "conv", "relu"}));

  GraphDef cycle = Parse(R"(
    node { name: "x" op: "NoOp" input: "^y" } node { name: "y" op: "NoOp" input: "^x" }
    node { name: "z" op: "NoOp" input: "^y" })");
  SortTopologically(&cycle);
  EXPECT_EQ(cycle.node_size(), 3);
  EXPECT_EQ(Names(cycle).back(), "z");
}

TEST(InferItemShapesTest, HintsRefineShapeFunctionsAndContradictionsAreDropped) {
  GraphItem item;
  item.graph = Parse(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
    node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "_output_shapes" value { list { shape { dim { size: 2 } dim { size: -1 } } } } } }
    node { name: "z" op: "Relu" input: "y" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "_output_shapes" value { list { shape { dim { size: 5 } dim { size: 3 } } } } } })");
  InferItemShapes(&item);
  ASSERT_TRUE(item.shapes.contains("x"));
  EXPECT_EQ(item.shapes.at("x").DebugString(), "[?,3]");
  EXPECT_EQ(item.shapes.at("y").DebugString(), "[2,3]");  // The hint's 2, the function's 3.
  EXPECT_FALSE(item.shapes.contains("z"));                 // 5 contradicts y's 2: neither is kept.

  item.feed_shapes["x"] = PartialShape(std::vector<int64_t>{2, 3});
  InferItemShapes(&item);
  EXPECT_EQ(item.shapes.at("x").DebugString(), "[2,3]");
}

// A GraphDef's hints are a client's claims: a 2^62 dim that contradicts the shape function goes,
// a negative dim other than -1 counts as unknown, a list of the wrong length is ignored, and
// none of it crashes or makes a shape fully known.
TEST(InferItemShapesTest, HostileHintsAreDroppedNotTrusted) {
  GraphItem item;
  item.graph = Parse(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
    node { name: "huge" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "_output_shapes" value { list { shape { dim { size: 4611686018427387904 } dim { size: 3 } } } } } }
    node { name: "negative" op: "Onnx>Flatten" input: "x" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "_output_shapes" value { list { shape { dim { size: -7 } dim { size: -7 } } } } } }
    node { name: "too_many" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "_output_shapes" value { list { shape { dim { size: 9 } } shape { dim { size: 9 } } } } } })");
  InferItemShapes(&item);
  EXPECT_FALSE(item.shapes.contains("huge"));                       // Contradicts [2,3]: dropped.
  EXPECT_EQ(item.shapes.at("negative").DebugString(), "[2,3]");     // The function's, -7 unknown.
  EXPECT_EQ(item.shapes.at("too_many").DebugString(), "[2,3]");     // Two shapes for one output.
}

}  // namespace
}  // namespace sluice
