#include "framework/graph.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A few ops written out as OpDefs, so that these tests need no op registry.
class TestOps : public OpDefLookup {
 public:
  TestOps() {
    Add(R"(name: "Source" output_arg { name: "y" type_attr: "T" }
           attr { name: "T" type: "type" default_value { type: DT_FLOAT } })");
    Add(R"(name: "Add" input_arg { name: "x" type_attr: "T" } input_arg { name: "y" type_attr: "T" }
           output_arg { name: "z" type_attr: "T" } attr { name: "T" type: "type" })");
    Add(R"(name: "Neg" input_arg { name: "x" type_attr: "T" } output_arg { name: "y" type_attr: "T" }
           attr { name: "T" type: "type" })");
    Add(R"(name: "NoOp")");
  }
  absl::StatusOr<const OpDef*> LookUpOpDef(absl::string_view op) const override {
    auto it = ops_.find(std::string(op));
    if (it == ops_.end()) return absl::NotFoundError(absl::StrCat("op '", op, "' is not registered"));
    return &it->second;
  }

 private:
  void Add(const std::string& text) {
    OpDef def;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
    ops_[def.name()] = def;
  }
  std::map<std::string, OpDef> ops_;
};

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

// a, b: sources; c = a + b after ^n; d = -c.
constexpr char kDiamond[] = R"(
  node { name: "a" op: "Source" }
  node { name: "b" op: "Source" }
  node { name: "n" op: "NoOp" }
  node { name: "c" op: "Add" input: "a" input: "b:0" input: "^n" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "d" op: "Neg" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
)";

std::vector<std::string> Names(const std::vector<Node*>& nodes) {
  std::vector<std::string> names;
  for (const Node* n : nodes) names.push_back(n->name());
  return names;
}

TEST(GraphTest, FromGraphDefWiresDataAndControlEdges) {
  TestOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Graph::FromGraphDef(Parse(kDiamond), ops));
  EXPECT_EQ(g->num_nodes(), 5);
  Node* c = g->FindNode("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->input_types(), (DataTypeVector{DT_FLOAT, DT_FLOAT}));
  ASSERT_EQ(c->in_edges().size(), 3u);
  const Edge* x = c->input_edge(0);
  const Edge* y = c->input_edge(1);
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(x->src->name(), "a");
  EXPECT_EQ(y->src->name(), "b");
  EXPECT_EQ(y->dst_input, 1);
  int control = 0;
  for (const Edge* e : c->in_edges()) {
    if (!e->IsControl()) continue;
    ++control;
    EXPECT_EQ(e->src->name(), "n");
    EXPECT_EQ(e->dst_input, kControlSlot);
  }
  EXPECT_EQ(control, 1);
  ASSERT_EQ(g->FindNode("n")->out_edges().size(), 1u);
  EXPECT_TRUE(g->FindNode("n")->out_edges()[0]->IsControl());
  EXPECT_EQ(g->FindNode("nope"), nullptr);
}

TEST(GraphTest, DefaultsAreFilledAndToGraphDefRebuildsInputs) {
  TestOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Graph::FromGraphDef(Parse(kDiamond), ops));
  EXPECT_EQ(g->FindNode("a")->def().attr().at("T").type(), DT_FLOAT);  // From the default.
  g->FindNode("d")->set_assigned_device("/job:w/replica:0/task:0/device:CPU:0");
  GraphDef back;
  g->ToGraphDef(&back);
  ASSERT_EQ(back.node_size(), 5);
  EXPECT_THAT(back.node(3).input(), ElementsAre("a", "b", "^n"));
  EXPECT_EQ(back.node(4).device(), "/job:w/replica:0/task:0/device:CPU:0");
}

TEST(GraphTest, TopologicalOrderPutsEveryNodeAfterItsInputs) {
  TestOps ops;
  // Listed consumers first.
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Graph::FromGraphDef(Parse(R"(
    node { name: "d" op: "Neg" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Neg" input: "a" input: "^n" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "n" op: "NoOp" input: "^a" }
    node { name: "a" op: "Source" })"), ops));
  SL_ASSERT_OK_AND_ASSIGN(std::vector<Node*> order, g->TopologicalOrder());
  std::vector<std::string> names = Names(order);
  auto pos = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  ASSERT_EQ(names.size(), 4u);
  EXPECT_LT(pos("a"), pos("n"));
  EXPECT_LT(pos("n"), pos("c"));
  EXPECT_LT(pos("c"), pos("d"));
}

TEST(GraphTest, RemoveNodeRemovesItsEdgesFromItsNeighbours) {
  TestOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Graph::FromGraphDef(Parse(kDiamond), ops));
  Node* c = g->FindNode("c");
  const int c_id = c->id();
  g->RemoveNode(c);
  EXPECT_EQ(g->num_nodes(), 4);
  EXPECT_EQ(g->FindNode("c"), nullptr);
  EXPECT_EQ(g->node(c_id), nullptr);
  EXPECT_THAT(Names(g->nodes()), ElementsAre("a", "b", "n", "d"));
  EXPECT_TRUE(g->FindNode("a")->out_edges().empty());
  EXPECT_TRUE(g->FindNode("n")->out_edges().empty());
  EXPECT_TRUE(g->FindNode("d")->in_edges().empty());
  EXPECT_EQ(g->FindNode("d")->input_edge(0), nullptr);
  GraphDef back;
  g->ToGraphDef(&back);
  ASSERT_EQ(back.node_size(), 4);
  EXPECT_EQ(back.node(3).input_size(), 0);
}

TEST(GraphTest, RemoveEdgeAndAddEdgeRewire) {
  TestOps ops;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Graph> g, Graph::FromGraphDef(Parse(kDiamond), ops));
  Node* c = g->FindNode("c");
  g->RemoveEdge(c->input_edge(1));
  EXPECT_EQ(c->input_edge(1), nullptr);
  EXPECT_TRUE(g->FindNode("b")->out_edges().empty());
  ASSERT_OK(g->AddEdge(g->FindNode("a"), 0, c, 1));
  EXPECT_EQ(c->input_edge(1)->src->name(), "a");
  EXPECT_EQ(g->FindNode("a")->out_edges().size(), 2u);
}

TEST(GraphTest, AddEdgeRefusesBadSlotsAndTypes) {
  TestOps ops;
  Graph g(&ops);
  NodeDef src, neg;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(name: "s" op: "Source" attr { key: "T" value { type: DT_INT32 } })", &src));
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(name: "m" op: "Neg" attr { key: "T" value { type: DT_FLOAT } })", &neg));
  SL_ASSERT_OK_AND_ASSIGN(Node * s, g.AddNode(src));
  SL_ASSERT_OK_AND_ASSIGN(Node * m, g.AddNode(neg));
  absl::Status st = g.AddEdge(s, 0, m, 0);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("node 'm' was passed int32"));
  EXPECT_THAT(g.AddEdge(s, 1, m, 0).message(), HasSubstr("refers to output 1 of node 's', which has 1 outputs"));
  EXPECT_THAT(g.AddEdge(s, 0, m, 1).message(), HasSubstr("node 'm' has no input 1"));
  EXPECT_TRUE(m->in_edges().empty());
}

// Each broken GraphDef fails with INVALID_ARGUMENT (NOT_FOUND for an unknown op) naming the
// node at fault.
TEST(GraphTest, FromGraphDefErrorsNameTheNode) {
  TestOps ops;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(node { name: "x" op: "Frobnicate" })", "node 'x'"},
      {R"(node { name: "x" op: "Source" } node { name: "x" op: "Source" })", "duplicate node name 'x'"},
      {R"(node { name: "y" op: "Neg" input: "ghost" attr { key: "T" value { type: DT_FLOAT } } })",
       "node 'y' has input 'ghost' from a node that does not exist"},
      {R"(node { name: "a" op: "Source" }
          node { name: "y" op: "Neg" input: "a:3" attr { key: "T" value { type: DT_FLOAT } } })",
       "node 'y' input 0 refers to output 3 of node 'a'"},
      {R"(node { name: "y" op: "Neg" attr { key: "T" value { type: DT_FLOAT } } })", "'y'"},
      {R"(node { name: "a" op: "Source" attr { key: "T" value { type: DT_INT64 } } }
          node { name: "y" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } })",
       "input 0 of node 'y' was passed int64"},
      {R"(node { name: "p" op: "Neg" input: "q" attr { key: "T" value { type: DT_FLOAT } } }
          node { name: "q" op: "Neg" input: "p" attr { key: "T" value { type: DT_FLOAT } } })",
       "cycle through node"},
  };
  for (const auto& [text, want] : cases) {
    auto g = Graph::FromGraphDef(Parse(text), ops);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_THAT(g.status().message(), HasSubstr(want)) << text;
    if (absl::StrContains(text, "Frobnicate")) {
      EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound) << g.status();
    } else {
      EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    }
  }
}

}  // namespace
}  // namespace sluice
