/* Custom-op libraries through TF_LoadLibrary: the example libraries of examples/custom_op (one
 * C++ with REGISTER_OP / REGISTER_KERNEL_BUILDER, one plain C) load, their ops appear in
 * TF_GetOpList and TF_GetAllOpList, infer shapes, check their type constraints and attrs, and
 * run; a library whose registrations fail, and a missing file, fail to load with a status.
 * Expected values are worked out by hand in the comments.
 * Usage: custom_op_test SCALE_LIB COUNT_LIB BAD_LIB */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensorflow/c/c_api.h"
#include "c_check.h"




/* Whether `needle` occurs in the buffer's bytes (an OpList names its ops as plain strings). */
static int BufferHas(const void* data, size_t length, const char* needle) {
  size_t n = strlen(needle);
  const char* p = data;
  for (size_t i = 0; i + n <= length; ++i) {
    if (memcmp(p + i, needle, n) == 0) return 1;
  }
  return 0;
}

static TF_Operation* Placeholder(TF_Graph* g, const char* name, TF_DataType dt, int64_t n,
                                 TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", dt);
  TF_SetAttrShape(d, "shape", &n, 1);
  return TF_FinishOperation(d, s);
}

static TF_Operation* ScaleAndShift(TF_Graph* g, const char* name, TF_Operation* x, float scale,
                                   TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "ScaleAndShift", name);
  TF_Output in = {x, 0};
  TF_AddInput(d, in);
  TF_SetAttrFloat(d, "scale", scale);
  TF_SetAttrFloat(d, "shift", 1.0f);
  return TF_FinishOperation(d, s);
}

/* Runs feeding x with `values` and fetches y; NULL on failure (status says why). */
static TF_Tensor* Run(TF_Graph* g, TF_Operation* x, TF_Tensor* value, TF_Operation* y,
                      TF_Status* s) {
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  TF_DeleteSessionOptions(opts);
  TF_Output feed = {x, 0}, fetch = {y, 0};
  TF_Tensor* out = NULL;
  if (TF_GetCode(s) == TF_OK) {
    TF_SessionRun(sess, NULL, &feed, &value, 1, &fetch, &out, 1, NULL, 0, NULL, s);
  }
  TF_Status* close = TF_NewStatus();
  TF_CloseSession(sess, close);
  TF_DeleteSession(sess, close);
  TF_DeleteStatus(close);
  return out;
}

static TF_Tensor* FloatTensor(const float* v, int64_t n) {
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, &n, 1, (size_t)n * sizeof(float));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(float));
  return t;
}

static void CheckScaleAndShift(const char* path, TF_Status* s) {
  printf("-- ScaleAndShift (C++, REGISTER_OP / REGISTER_KERNEL_BUILDER)\n");
  TF_Library* lib = TF_LoadLibrary(path, s);
  CHECK_OK(s, "TF_LoadLibrary of the C++ example");
  if (lib == NULL) return;
  TF_Buffer ops = TF_GetOpList(lib);
  CHECK(ops.length > 0 && BufferHas(ops.data, ops.length, "ScaleAndShift"),
        "its TF_GetOpList names ScaleAndShift (%zu bytes)", ops.length);
  CHECK(!BufferHas(ops.data, ops.length, "CountAbove"), "and not the other library's op");
  TF_Buffer* all = TF_GetAllOpList();
  CHECK(BufferHas(all->data, all->length, "ScaleAndShift"), "TF_GetAllOpList has it too");
  TF_DeleteBuffer(all);

  /* Loading again answers from what the first load registered. */
  TF_Library* again = TF_LoadLibrary(path, s);
  CHECK_OK(s, "loading the same library again");
  if (again != NULL) {
    TF_Buffer ops2 = TF_GetOpList(again);
    CHECK(ops2.length == ops.length, "with the same op list (%zu bytes)", ops2.length);
    TF_DeleteLibraryHandle(again);
  }
  TF_DeleteLibraryHandle(lib);

  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", TF_FLOAT, 4, s);
  TF_Operation* y = ScaleAndShift(g, "y", x, 2.0f, s);
  CHECK_OK(s, "a ScaleAndShift node");
  TF_Output yo = {y, 0};
  int64_t dim = -2;
  TF_GraphGetTensorShape(g, yo, &dim, 1, s);
  CHECK(TF_GetCode(s) == TF_OK && dim == 4, "its shape function gives [4] (dim %lld)",
        (long long)dim);
  /* y = x * 2 + 1 */
  const float xv[] = {0, 1, -2, 0.5f};
  TF_Tensor* out = Run(g, x, FloatTensor(xv, 4), y, s);
  CHECK_OK(s, "running ScaleAndShift on float");
  if (out != NULL) {
    const float* v = TF_TensorData(out);
    CHECK(TF_TensorType(out) == TF_FLOAT && v[0] == 1 && v[1] == 3 && v[2] == -3 && v[3] == 2,
          "[0 1 -2 0.5] * 2 + 1 = [1 3 -3 2] (got %g %g %g %g)", v[0], v[1], v[2], v[3]);
    TF_DeleteTensor(out);
  }

  /* The double kernel: [1.5 -1] * -3 + 1 = [-3.5 4]. */
  TF_Operation* xd = Placeholder(g, "xd", TF_DOUBLE, 2, s);
  TF_Operation* yd = ScaleAndShift(g, "yd", xd, -3.0f, s);
  CHECK_OK(s, "a double ScaleAndShift node");
  int64_t two = 2;
  TF_Tensor* dval = TF_AllocateTensor(TF_DOUBLE, &two, 1, 2 * sizeof(double));
  ((double*)TF_TensorData(dval))[0] = 1.5;
  ((double*)TF_TensorData(dval))[1] = -1;
  out = Run(g, xd, dval, yd, s);
  CHECK_OK(s, "running ScaleAndShift on double");
  if (out != NULL) {
    const double* v = TF_TensorData(out);
    CHECK(v[0] == -3.5 && v[1] == 4, "[1.5 -1] * -3 + 1 = [-3.5 4] (got %g %g)", v[0], v[1]);
    TF_DeleteTensor(out);
  }
  TF_DeleteTensor(dval);

  /* int32 is outside T's allowed types: refused while building. */
  TF_Operation* xi = Placeholder(g, "xi", TF_INT32, 2, s);
  ScaleAndShift(g, "yi", xi, 2.0f, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT, "ScaleAndShift on int32 is refused: %s",
        TF_Message(s));
  /* A missing required attr. */
  TF_OperationDescription* d = TF_NewOperation(g, "ScaleAndShift", "no_scale");
  TF_Output xo = {x, 0};
  TF_AddInput(d, xo);
  TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), "scale") != NULL,
        "ScaleAndShift without scale is refused: %s", TF_Message(s));
  /* The kernel's own check (scale must be finite) fails the run, naming the node. */
  TF_Operation* ynan = ScaleAndShift(g, "y_nan", x, NAN, s);
  CHECK_OK(s, "a node with scale NaN builds");
  out = Run(g, x, FloatTensor(xv, 4), ynan, s);
  CHECK(out == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT &&
            strstr(TF_Message(s), "must be finite") != NULL &&
            strstr(TF_Message(s), "y_nan") != NULL,
        "the kernel's construction failure reaches the run: %s", TF_Message(s));
  TF_DeleteGraph(g);
}

static void CheckCountAbove(const char* path, TF_Status* s) {
  printf("-- CountAbove (plain C, ops.h and kernels.h)\n");
  TF_Library* lib = TF_LoadLibrary(path, s);
  CHECK_OK(s, "TF_LoadLibrary of the C example");
  if (lib == NULL) return;
  TF_Buffer ops = TF_GetOpList(lib);
  CHECK(BufferHas(ops.data, ops.length, "CountAbove"), "its TF_GetOpList names CountAbove");
  TF_DeleteLibraryHandle(lib);

  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", TF_FLOAT, 5, s);
  TF_OperationDescription* d = TF_NewOperation(g, "CountAbove", "count");
  TF_Output xo = {x, 0};
  TF_AddInput(d, xo);
  TF_SetAttrFloat(d, "threshold", 2.5f);
  TF_Operation* count = TF_FinishOperation(d, s);
  CHECK_OK(s, "a CountAbove node");
  TF_Output co = {count, 0};
  CHECK(TF_GraphGetTensorNumDims(g, co, s) == 0, "its shape function gives a scalar");
  /* Above 2.5 in [1 5 3 -7 2.5]: 5 and 3. */
  const float xv[] = {1, 5, 3, -7, 2.5f};
  TF_Tensor* out = Run(g, x, FloatTensor(xv, 5), count, s);
  CHECK_OK(s, "running CountAbove");
  if (out != NULL) {
    CHECK(TF_TensorType(out) == TF_INT64 && TF_NumDims(out) == 0 &&
              *(int64_t*)TF_TensorData(out) == 2,
          "two elements of [1 5 3 -7 2.5] are above 2.5 (got %lld)",
          (long long)*(int64_t*)TF_TensorData(out));
    TF_DeleteTensor(out);
  }
  TF_DeleteGraph(g);
}

static void CheckBadLibraries(const char* bad, TF_Status* s) {
  printf("-- libraries that fail\n");
  TF_Library* lib = TF_LoadLibrary(bad, s);
  CHECK(lib == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT &&
            strstr(TF_Message(s), "NoSuchOp") != NULL &&
            strstr(TF_Message(s), "BadSpec") != NULL,
        "a library registering a kernel for an unknown op and a bad spec: %s", TF_Message(s));
  lib = TF_LoadLibrary("/nonexistent/libno_such_ops.so", s);
  CHECK(lib == NULL && TF_GetCode(s) == TF_NOT_FOUND, "a missing file: %s", TF_Message(s));
  lib = TF_LoadLibrary(NULL, s);
  CHECK(lib == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT, "a NULL name: %s", TF_Message(s));
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s SCALE_LIB COUNT_LIB BAD_LIB\n", argv[0]);
    return 2;
  }
  TF_Status* s = TF_NewStatus();
  CheckScaleAndShift(argv[1], s);
  CheckCountAbove(argv[2], s);
  CheckBadLibraries(argv[3], s);
  TF_DeleteStatus(s);
  return CheckSummary();
}
