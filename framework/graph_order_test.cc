// Graph's orders, on two hand-written ops (the op registry lives above framework/).
#include "framework/graph.h"

#include <algorithm>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// "Source" has one float output; "Join" takes two floats and gives one.
class TwoOps : public OpDefLookup {
 public:
  TwoOps() {
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"(name: "Source" output_arg { name: "y" type: DT_FLOAT })", &source_));
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"(name: "Join" input_arg { name: "a" type: DT_FLOAT }
           input_arg { name: "b" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT })",
        &join_));
  }
  absl::StatusOr<const OpDef*> LookUpOpDef(absl::string_view op) const override {
    if (op == "Source") return &source_;
    if (op == "Join") return &join_;
    return absl::NotFoundError(std::string(op));
  }

 private:
  OpDef source_, join_;
};

std::vector<std::string> Names(const std::vector<Node*>& nodes) {
  std::vector<std::string> names;
  for (const Node* n : nodes) names.push_back(n->name());
  return names;
}

absl::StatusOr<std::unique_ptr<Graph>> Build(const TwoOps& ops, const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  return Graph::FromGraphDef(def, ops);
}

// j1 is listed before its inputs; j2 needs j1 and a source listed last.
constexpr char kGraph[] = R"(
  node { name: "j1" op: "Join" input: "a" input: "b" }
  node { name: "a" op: "Source" }
  node { name: "j2" op: "Join" input: "j1" input: "c" }
  node { name: "b" op: "Source" }
  node { name: "c" op: "Source" }
)";

TEST(GraphTest, BreadthFirstOrderFollowsIdsAndEdgeOrder) {
  TwoOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Build(ops, kGraph));
  SL_ASSERT_OK_AND_ASSIGN(std::vector<Node*> order, g->BreadthFirstTopologicalOrder());
  EXPECT_THAT(Names(order), ElementsAre("a", "b", "c", "j1", "j2"));
}

TEST(GraphTest, BothOrdersPutInputsFirstAndSkipRemovedNodes) {
  TwoOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Build(ops, kGraph));
  g->RemoveNode(g->FindNode("j2"));
  for (const auto& order : {g->TopologicalOrder(), g->BreadthFirstTopologicalOrder()}) {
    ASSERT_OK(order);
    std::vector<std::string> names = Names(*order);
    ASSERT_EQ(names.size(), 4u);
    auto position = [&](const std::string& name) {
      return std::find(names.begin(), names.end(), name) - names.begin();
    };
    EXPECT_LT(position("a"), position("j1"));
    EXPECT_LT(position("b"), position("j1"));
  }
}

TEST(GraphTest, BreadthFirstOrderNamesANodeOnACycle) {
  TwoOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Build(ops, kGraph));
  g->AddControlEdge(g->FindNode("j2"), g->FindNode("a"));
  absl::Status s = g->BreadthFirstTopologicalOrder().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cycle through node 'j1'"));
  EXPECT_EQ(g->TopologicalOrder().status(), s);
}

}  // namespace
}  // namespace sluice
