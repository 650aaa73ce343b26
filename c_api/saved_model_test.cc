// TF_LoadSessionFromSavedModel on SavedModels written here from TensorFlow's message layout:
// tag sets, the init op, the MetaGraphDef handed back, and damaged or missing files.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "c_api/c_api.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/saved_model.pb.h"

namespace sluice {
namespace {

// y = x * 3, a counter variable-free init op, and a serving signature.
constexpr char kMetaGraph[] = R"pb(
  meta_info_def { tags: "serve" tensorflow_version: "2.15.0" }
  graph_def {
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node {
      name: "three"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } }
    }
    node { name: "y" op: "Mul" input: "x" input: "three" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "init" op: "NoOp" }
  }
  signature_def {
    key: "serving_default"
    value {
      inputs { key: "x" value { name: "x:0" dtype: DT_FLOAT } }
      outputs { key: "y" value { name: "y:0" dtype: DT_FLOAT } }
      method_name: "tensorflow/serving/predict"
    }
  }
  signature_def {
    key: "__saved_model_init_op"
    value { outputs { key: "__saved_model_init_op" value { name: "init" } } }
  }
)pb";

class SavedModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(std::system(("mkdir -p " + dir_).c_str()), 0);
  }
  void Write(const std::string& bytes) {
    std::ofstream(dir_ + "/saved_model.pb", std::ios::binary) << bytes;
  }
  std::string ModelBytes(const char* meta_graph_text) {
    SavedModel model;
    model.set_saved_model_schema_version(1);
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(meta_graph_text, model.add_meta_graphs()));
    return model.SerializeAsString();
  }
  TF_Session* Load(const char* tag, TF_Graph* graph, TF_Buffer* meta, TF_Status* s) {
    const char* tags[] = {tag};
    TF_SessionOptions* opts = TF_NewSessionOptions();
    TF_Session* session = TF_LoadSessionFromSavedModel(opts, nullptr, dir_.c_str(), tags, 1, graph, meta, s);
    TF_DeleteSessionOptions(opts);
    return session;
  }
  std::string dir_;
};

TEST_F(SavedModelTest, LoadsTheTaggedGraphAndRunsIt) {
  Write(ModelBytes(kMetaGraph));
  TF_Status* s = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_Buffer* meta = TF_NewBuffer();
  TF_Session* session = Load("serve", graph, meta, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  // The MetaGraphDef comes back with its signatures.
  MetaGraphDef mg;
  ASSERT_TRUE(mg.ParseFromArray(meta->data, static_cast<int>(meta->length)));
  EXPECT_EQ(mg.signature_def().at("serving_default").outputs().at("y").name(), "y:0");

  const int64_t dims[] = {2};
  TF_Tensor* x = TF_AllocateTensor(TF_FLOAT, dims, 1, 2 * sizeof(float));
  static_cast<float*>(TF_TensorData(x))[0] = 1.5f;
  static_cast<float*>(TF_TensorData(x))[1] = -2.0f;
  TF_Output in{TF_GraphOperationByName(graph, "x"), 0};
  TF_Output out{TF_GraphOperationByName(graph, "y"), 0};
  TF_Tensor* y = nullptr;
  TF_SessionRun(session, nullptr, &in, &x, 1, &out, &y, 1, nullptr, 0, nullptr, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(y))[0], 4.5f);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(y))[1], -6.0f);
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_CloseSession(session, s);
  TF_DeleteSession(session, s);
  TF_DeleteBuffer(meta);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(s);
}

TEST_F(SavedModelTest, OtherTagsAreNotFoundAndNamed) {
  Write(ModelBytes(kMetaGraph));
  TF_Status* s = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  EXPECT_EQ(Load("train", graph, nullptr, s), nullptr);
  EXPECT_EQ(TF_GetCode(s), TF_NOT_FOUND);
  EXPECT_NE(std::string(TF_Message(s)).find("{ serve }"), std::string::npos) << TF_Message(s);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(s);
}

TEST_F(SavedModelTest, MissingDamagedAndBrokenModelsAreErrors) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  EXPECT_EQ(Load("serve", graph, nullptr, s), nullptr);  // No saved_model.pb yet.
  EXPECT_EQ(TF_GetCode(s), TF_NOT_FOUND) << TF_Message(s);

  std::string bytes = ModelBytes(kMetaGraph);
  Write(bytes.substr(0, bytes.size() / 2));  // Truncated.
  EXPECT_EQ(Load("serve", graph, nullptr, s), nullptr);
  EXPECT_EQ(TF_GetCode(s), TF_DATA_LOSS) << TF_Message(s);
  EXPECT_NE(std::string(TF_Message(s)).find("saved_model.pb"), std::string::npos);

  // A graph whose node reads a tensor that does not exist.
  std::string broken = kMetaGraph;
  broken.replace(broken.find("input: \"three\""), 14, "input: \"four\"");
  Write(ModelBytes(broken.c_str()));
  EXPECT_EQ(Load("serve", graph, nullptr, s), nullptr);
  EXPECT_NE(TF_GetCode(s), TF_OK);
  EXPECT_NE(std::string(TF_Message(s)).find("four"), std::string::npos) << TF_Message(s);

  // An init op the graph does not have.
  std::string no_init = kMetaGraph;
  no_init.replace(no_init.find("name: \"init\" }"), 15, "name: \"gone\" }");
  Write(ModelBytes(no_init.c_str()));
  TF_Graph* graph2 = TF_NewGraph();
  EXPECT_EQ(Load("serve", graph2, nullptr, s), nullptr);
  EXPECT_NE(std::string(TF_Message(s)).find("gone"), std::string::npos) << TF_Message(s);
  TF_DeleteGraph(graph2);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(s);
}


// A TensorFlow 2 SavedModel's variable plumbing: a resource variable, a saver whose restore op
// is a StatefulPartitionedCall of a function that runs RestoreV2 and AssignVariableOp (as
// tf.saved_model.save writes it), a serving output reading the variable, and (for this test
// to make the checkpoint) a SaveV2 of constant values under the variable's checkpoint key.
constexpr char kVariablesMetaGraph[] = R"pb(
  meta_info_def { tags: "serve" tensorflow_version: "2.15.0" }
  graph_def {
    node { name: "saver_filename" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
    node {
      name: "w"
      op: "VarHandleOp"
      attr { key: "shared_name" value { s: "w" } }
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } }
    }
    node {
      name: "read"
      op: "ReadVariableOp"
      input: "w"
      attr { key: "dtype" value { type: DT_FLOAT } }
    }
    node {
      name: "StatefulPartitionedCall_2"
      op: "StatefulPartitionedCall"
      input: "saver_filename"
      input: "w"
      attr { key: "Tin" value { list { type: DT_STRING type: DT_RESOURCE } } }
      attr { key: "Tout" value { list { type: DT_STRING } } }
      attr { key: "f" value { func { name: "__inference__traced_restore_7" } } }
    }
    node {
      name: "serving_default_x"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } }
    }
    node {
      name: "StatefulPartitionedCall"
      op: "StatefulPartitionedCall"
      input: "serving_default_x"
      input: "w"
      attr { key: "Tin" value { list { type: DT_FLOAT type: DT_RESOURCE } } }
      attr { key: "Tout" value { list { type: DT_FLOAT } } }
      attr { key: "_read_only_resource_inputs" value { list { i: 1 } } }
      attr { key: "config_proto" value { s: "" } }
      attr { key: "executor_type" value { s: "" } }
      attr { key: "f" value { func { name: "__inference_signature_wrapper_20" } } }
    }
    node {
      name: "save/names"
      op: "Const"
      attr { key: "dtype" value { type: DT_STRING } }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_STRING
            tensor_shape { dim { size: 1 } }
            string_val: "w/.ATTRIBUTES/VARIABLE_VALUE"
          }
        }
      }
    }
    node {
      name: "save/slices"
      op: "Const"
      attr { key: "dtype" value { type: DT_STRING } }
      attr {
        key: "value"
        value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "" } }
      }
    }
    node {
      name: "save/value"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 4 float_val: -5 } }
      }
    }
    node {
      name: "save/SaveV2"
      op: "SaveV2"
      input: "saver_filename"
      input: "save/names"
      input: "save/slices"
      input: "save/value"
      attr { key: "dtypes" value { list { type: DT_FLOAT } } }
    }
    library {
      function {
        signature {
          name: "__inference_signature_wrapper_20"
          input_arg { name: "x" type: DT_FLOAT }
          input_arg { name: "unknown" type: DT_RESOURCE }
          output_arg { name: "identity" type: DT_FLOAT }
          is_stateful: true
        }
        node_def {
          name: "ReadVariableOp"
          op: "ReadVariableOp"
          input: "unknown"
          attr { key: "dtype" value { type: DT_FLOAT } }
        }
        node_def {
          name: "mul"
          op: "Mul"
          input: "x"
          input: "ReadVariableOp:value:0"
          attr { key: "T" value { type: DT_FLOAT } }
        }
        node_def {
          name: "Identity"
          op: "Identity"
          input: "mul:z:0"
          input: "^ReadVariableOp"
          attr { key: "T" value { type: DT_FLOAT } }
        }
        ret { key: "identity" value: "Identity:output:0" }
        arg_attr {
          key: 0
          value { attr { key: "_user_specified_name" value { s: "x" } } }
        }
      }
      function {
        signature {
          name: "__inference__traced_restore_7"
          input_arg { name: "file_prefix" type: DT_STRING }
          input_arg { name: "assignvariableop_resource" type: DT_RESOURCE }
          output_arg { name: "identity_1" type: DT_STRING }
          is_stateful: true
        }
        node_def {
          name: "RestoreV2/tensor_names"
          op: "Const"
          attr { key: "dtype" value { type: DT_STRING } }
          attr {
            key: "value"
            value {
              tensor {
                dtype: DT_STRING
                tensor_shape { dim { size: 1 } }
                string_val: "w/.ATTRIBUTES/VARIABLE_VALUE"
              }
            }
          }
        }
        node_def {
          name: "RestoreV2/shape_and_slices"
          op: "Const"
          attr { key: "dtype" value { type: DT_STRING } }
          attr {
            key: "value"
            value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "" } }
          }
        }
        node_def {
          name: "RestoreV2"
          op: "RestoreV2"
          input: "file_prefix"
          input: "RestoreV2/tensor_names:output:0"
          input: "RestoreV2/shape_and_slices:output:0"
          attr { key: "dtypes" value { list { type: DT_FLOAT } } }
        }
        node_def {
          name: "Identity"
          op: "Identity"
          input: "RestoreV2:tensors:0"
          attr { key: "T" value { type: DT_FLOAT } }
        }
        node_def {
          name: "AssignVariableOp"
          op: "AssignVariableOp"
          input: "assignvariableop_resource"
          input: "Identity:output:0"
          attr { key: "dtype" value { type: DT_FLOAT } }
        }
        node_def { name: "NoOp" op: "NoOp" input: "^AssignVariableOp" }
        node_def {
          name: "Identity_1"
          op: "Identity"
          input: "file_prefix"
          input: "^NoOp"
          attr { key: "T" value { type: DT_STRING } }
        }
        ret { key: "identity_1" value: "Identity_1:output:0" }
      }
    }
  }
  saver_def {
    filename_tensor_name: "saver_filename:0"
    save_tensor_name: "StatefulPartitionedCall_1:0"
    restore_op_name: "StatefulPartitionedCall_2"
    version: 2
  }
  signature_def {
    key: "serving_default"
    value {
      inputs { key: "x" value { name: "serving_default_x:0" dtype: DT_FLOAT } }
      outputs { key: "output_0" value { name: "StatefulPartitionedCall:0" dtype: DT_FLOAT } }
      method_name: "tensorflow/serving/predict"
    }
  }
)pb";

TEST_F(SavedModelTest, VariablesAreRestoredFromTheCheckpoint) {
  Write(ModelBytes(kVariablesMetaGraph));
  ASSERT_EQ(std::system(("mkdir -p " + dir_ + "/variables").c_str()), 0);
  TF_Status* s = TF_NewStatus();
  const std::string prefix = dir_ + "/variables/variables";
  {
    // No checkpoint yet: the model loads without restoring, and its SaveV2 writes one.
    TF_Graph* graph = TF_NewGraph();
    TF_Session* session = Load("serve", graph, nullptr, s);
    ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
    TF_Tensor* name = TF_AllocateTensor(TF_STRING, nullptr, 0, sizeof(TF_TString));
    TF_StringInit(static_cast<TF_TString*>(TF_TensorData(name)));
    TF_StringCopy(static_cast<TF_TString*>(TF_TensorData(name)), prefix.data(), prefix.size());
    TF_Output feed{TF_GraphOperationByName(graph, "saver_filename"), 0};
    TF_Operation* save = TF_GraphOperationByName(graph, "save/SaveV2");
    TF_SessionRun(session, nullptr, &feed, &name, 1, nullptr, nullptr, 0, &save, 1, nullptr, s);
    ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
    TF_DeleteTensor(name);
    TF_CloseSession(session, s);
    TF_DeleteSession(session, s);
    TF_DeleteGraph(graph);
  }
  TF_Graph* graph = TF_NewGraph();
  TF_Session* session = Load("serve", graph, nullptr, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  TF_Output out{TF_GraphOperationByName(graph, "read"), 0};
  TF_Tensor* w = nullptr;
  TF_SessionRun(session, nullptr, nullptr, nullptr, 0, &out, &w, 1, nullptr, 0, nullptr, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(w))[0], 4.0f);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(w))[1], -5.0f);
  TF_DeleteTensor(w);
  // The serving signature, as TensorFlow 2 writes it: a StatefulPartitionedCall of a function
  // that reads the variable through its resource argument.
  const int64_t dims[] = {1, 2};
  TF_Tensor* x = TF_AllocateTensor(TF_FLOAT, dims, 2, 2 * sizeof(float));
  static_cast<float*>(TF_TensorData(x))[0] = 2.0f;
  static_cast<float*>(TF_TensorData(x))[1] = 3.0f;
  TF_Output in{TF_GraphOperationByName(graph, "serving_default_x"), 0};
  TF_Output serve{TF_GraphOperationByName(graph, "StatefulPartitionedCall"), 0};
  TF_Tensor* y = nullptr;
  TF_SessionRun(session, nullptr, &in, &x, 1, &serve, &y, 1, nullptr, 0, nullptr, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(y))[0], 8.0f);
  EXPECT_EQ(static_cast<float*>(TF_TensorData(y))[1], -15.0f);
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_CloseSession(session, s);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(graph);

  // A damaged checkpoint fails the load, naming the tensor.
  std::string data;
  {
    std::ifstream in(prefix + ".data-00000-of-00001", std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(data.empty());
  data[0] ^= 1;
  std::ofstream(prefix + ".data-00000-of-00001", std::ios::binary) << data;
  graph = TF_NewGraph();
  EXPECT_EQ(Load("serve", graph, nullptr, s), nullptr);
  EXPECT_EQ(TF_GetCode(s), TF_DATA_LOSS) << TF_Message(s);
  EXPECT_NE(std::string(TF_Message(s)).find("w/.ATTRIBUTES/VARIABLE_VALUE"), std::string::npos) << TF_Message(s);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(s);
}

}  // namespace
}  // namespace sluice
