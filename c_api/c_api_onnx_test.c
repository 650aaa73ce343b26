/* SL_GraphImportONNX from C: import ONNX models into a TF_Graph, run them with TF_SessionRun,
 * and check that bad models are refused with a status. Expected values are worked by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/sluice_c_api.h"

static int failures = 0;
#define CHECK(cond, what)                                   \
  do {                                                      \
    if (cond) {                                             \
      printf("ok   %s\n", what);                            \
    } else {                                                \
      printf("FAIL %s (%s:%d)\n", what, __FILE__, __LINE__); \
      ++failures;                                           \
    }                                                       \
  } while (0)

static TF_Tensor* Floats(const int64_t* dims, int nd, const float* v, size_t n) {
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, nd, n * sizeof(float));
  memcpy(TF_TensorData(t), v, n * sizeof(float));
  return t;
}

static void TestMlp(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  SL_ONNXImport* m = SL_GraphImportONNX(g, "tests/testdata/onnx/mlp.onnx", NULL, 0, "", s);
  CHECK(m != NULL && TF_GetCode(s) == TF_OK, "mlp.onnx imports");
  if (m == NULL) {
    printf("     %s\n", TF_Message(s));
    return;
  }
  CHECK(SL_ONNXImportNumInputs(m) == 1 && strcmp(SL_ONNXImportInputName(m, 0), "x") == 0, "input x");
  CHECK(SL_ONNXImportNumOutputs(m) == 1 && strcmp(SL_ONNXImportOutputName(m, 0), "y") == 0, "output y");
  CHECK(SL_ONNXImportInput(m, 5).oper == NULL, "input index out of range gives NULL");
  /* x and y are declared tensor(float) of shape [N, 2]. */
  CHECK(SL_ONNXImportValueType(m, 0, 0) == TF_FLOAT && SL_ONNXImportValueType(m, 1, 0) == TF_FLOAT,
        "declared element types");
  CHECK(strcmp(SL_ONNXImportValueTypeString(m, 0, 0), "tensor(float)") == 0, "ONNX type string");
  CHECK(SL_ONNXImportValueNumDims(m, 0, 0) == 2 && SL_ONNXImportValueDim(m, 0, 0, 0) == -1 &&
            SL_ONNXImportValueDim(m, 0, 0, 1) == 2 && SL_ONNXImportValueNumDims(m, 1, 0) == 2,
        "declared shape [N, 2]");
  CHECK(strcmp(SL_ONNXImportValueDimName(m, 0, 0, 0), "N") == 0 &&
            strcmp(SL_ONNXImportValueDimName(m, 0, 0, 1), "") == 0,
        "symbolic dim names");
  CHECK(SL_ONNXImportValueHasDefault(m, 0, 0) == 0, "x has no initializer");
  CHECK(SL_ONNXImportValueNumDims(m, 0, 3) == -1 && SL_ONNXImportValueTypeString(m, 1, 9) == NULL &&
            SL_ONNXImportValueDimName(m, 0, 0, 2) == NULL && SL_ONNXImportValueDim(m, 0, 0, -1) == -1 &&
            SL_ONNXImportValueType(NULL, 0, 0) == 0,
        "out-of-range indices and a NULL model are answered, not crashed on");
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  TF_Output x = SL_ONNXImportInput(m, 0), y = SL_ONNXImportOutput(m, 0);
  /* relu([1, 2] @ [[1, -1], [2, 1]] + [0.5, -10]) = [5.5, 0]; [3, 4] gives [11.5, 0]. */
  int64_t dims[2] = {2, 2};
  float xv[4] = {1, 2, 3, 4};
  TF_Tensor* in = Floats(dims, 2, xv, 4);
  TF_Tensor* out = NULL;
  TF_SessionRun(sess, NULL, &x, &in, 1, &y, &out, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_OK, "run mlp");
  if (out != NULL) {
    const float* r = (const float*)TF_TensorData(out);
    CHECK(fabsf(r[0] - 5.5f) < 1e-6f && r[1] == 0 && fabsf(r[2] - 11.5f) < 1e-6f && r[3] == 0, "mlp values");
    TF_DeleteTensor(out);
  }
  TF_DeleteTensor(in);
  SL_DeleteONNXImport(m);

  /* The same model again under a prefix, from bytes. */
  FILE* f = fopen("tests/testdata/onnx/mlp.onnx", "rb");
  char buf[4096];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  m = SL_GraphImportONNX(g, NULL, buf, n, "copy", s);
  CHECK(m != NULL && strncmp(TF_OperationName(SL_ONNXImportOutput(m, 0).oper), "copy/", 5) == 0,
        "second import from bytes under a prefix");
  SL_DeleteONNXImport(m);
  m = SL_GraphImportONNX(g, NULL, buf, n, "", s);
  CHECK(m == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT, "importing the same names twice is refused");

  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteSessionOptions(opts);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

static void TestIf(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  SL_ONNXImport* m = SL_GraphImportONNX(g, "tests/testdata/onnx/if.onnx", NULL, 0, "", s);
  CHECK(m != NULL, "if.onnx (a model with subgraphs) imports");
  if (m == NULL) {
    printf("     %s\n", TF_Message(s));
    return;
  }
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  TF_Output in[2] = {SL_ONNXImportInput(m, 0), SL_ONNXImportInput(m, 1)};
  TF_Output y = SL_ONNXImportOutput(m, 0);
  int64_t dims[1] = {2};
  float xv[2] = {3, -4};
  for (int c = 0; c < 2; ++c) {
    TF_Tensor* cond = TF_AllocateTensor(TF_BOOL, NULL, 0, 1);
    *(unsigned char*)TF_TensorData(cond) = (unsigned char)c;
    TF_Tensor* vals[2] = {cond, Floats(dims, 1, xv, 2)};
    TF_Tensor* out = NULL;
    TF_SessionRun(sess, NULL, in, vals, 2, &y, &out, 1, NULL, 0, NULL, s);
    CHECK(TF_GetCode(s) == TF_OK, c ? "run if (then)" : "run if (else)");
    if (out != NULL) {
      const float* r = (const float*)TF_TensorData(out);
      /* then: x + 1 = [4, -3]; else: x * 2 = [6, -8]. */
      CHECK(c ? (r[0] == 4 && r[1] == -3) : (r[0] == 6 && r[1] == -8), c ? "then value" : "else value");
      TF_DeleteTensor(out);
    }
    TF_DeleteTensor(vals[0]);
    TF_DeleteTensor(vals[1]);
  }
  SL_DeleteONNXImport(m);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteSessionOptions(opts);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

static void TestBadModels(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const char* garbage = "this is not an onnx model";
  SL_ONNXImport* m = SL_GraphImportONNX(g, NULL, garbage, strlen(garbage), "", s);
  CHECK(m == NULL && TF_GetCode(s) != TF_OK && strlen(TF_Message(s)) > 0, "garbage bytes are refused");
  m = SL_GraphImportONNX(g, "tests/testdata/onnx/bad_unknown_op.onnx", NULL, 0, "", s);
  CHECK(m == NULL && strstr(TF_Message(s), "mystery") != NULL, "unknown op refused, naming the node");
  m = SL_GraphImportONNX(g, "no/such/file.onnx", NULL, 0, "", s);
  CHECK(m == NULL && TF_GetCode(s) == TF_NOT_FOUND, "missing file is NOT_FOUND");
  m = SL_GraphImportONNX(NULL, "tests/testdata/onnx/mlp.onnx", NULL, 0, "", s);
  CHECK(m == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT, "NULL graph is refused");
  CHECK(TF_GraphNextOperation(g, &(size_t){0}) == NULL, "failed imports leave the graph empty");
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

int main(void) {
  TestMlp();
  TestIf();
  TestBadModels();
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
