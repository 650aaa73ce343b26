/* The C API acceptance test: a plain C program written as one for TensorFlow's C session API
 * would be, linked against libsluice_c.so. It builds y = Relu(MatMul(x, W) + b) op by op, runs
 * it with several feeds, round-trips the graph through a GraphDef, and checks that misuse is
 * reported through TF_Status. It prints each check and exits non-zero if any fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "c_api/c_check.h"

/* Buffers handed to TF_NewTensor and released by FreeFloats: they must match at the end. */
static int g_allocated = 0;
static int g_deallocated = 0;




static void FreeFloats(void* data, size_t len, void* arg) {
  (void)len;
  (void)arg;
  free(data);
  ++g_deallocated;
}

/* A tensor over freshly malloc'd memory, released by FreeFloats (no copy into the library). */
static TF_Tensor* NewFloatTensor(const float* values, const int64_t* dims, int num_dims) {
  int64_t n = 1;
  int i;
  for (i = 0; i < num_dims; ++i) n *= dims[i];
  size_t bytes = (size_t)n * sizeof(float);
  float* data = (float*)malloc(bytes > 0 ? bytes : 1);
  memcpy(data, values, bytes);
  ++g_allocated;
  return TF_NewTensor(TF_FLOAT, dims, num_dims, data, bytes, FreeFloats, NULL);
}

static TF_Operation* Placeholder(TF_Graph* g, const char* name, const int64_t* dims, int num_dims,
                                 TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  if (dims != NULL) TF_SetAttrShape(d, "shape", dims, num_dims);
  return TF_FinishOperation(d, s);
}

static TF_Operation* Const(TF_Graph* g, const char* name, const float* values,
                           const int64_t* dims, int num_dims, TF_Status* s) {
  TF_Tensor* t = NewFloatTensor(values, dims, num_dims);
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t, s);
  TF_DeleteTensor(t); /* The attr holds a copy. */
  if (TF_GetCode(s) != TF_OK) return NULL;
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  return TF_FinishOperation(d, s);
}

static TF_Operation* Binary(TF_Graph* g, const char* op_type, const char* name, TF_Output a,
                            TF_Output b, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op_type, name);
  TF_AddInput(d, a);
  TF_AddInput(d, b);
  return TF_FinishOperation(d, s);
}

static TF_Operation* Unary(TF_Graph* g, const char* op_type, const char* name, TF_Output x,
                           TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op_type, name);
  TF_AddInput(d, x);
  return TF_FinishOperation(d, s);
}

/* Checks a fetched float tensor against its expected shape and values. */
static void ExpectFloats(const char* what, const TF_Tensor* t, const int64_t* dims, int num_dims,
                         const float* expected) {
  int i, shape_ok;
  int64_t n = 1;
  if (t == NULL) {
    CHECK(0, "%s: no tensor", what);
    return;
  }
  shape_ok = TF_TensorType(t) == TF_FLOAT && TF_NumDims(t) == num_dims;
  for (i = 0; shape_ok && i < num_dims; ++i) {
    shape_ok = TF_Dim(t, i) == dims[i];
    n *= dims[i];
  }
  CHECK(shape_ok && TF_TensorElementCount(t) == n && TF_TensorByteSize(t) == n * sizeof(float),
        "%s: float tensor of %d dims, %lld elements", what, num_dims, (long long)n);
  if (!shape_ok) return;
  {
    const float* v = (const float*)TF_TensorData(t);
    int values_ok = 1;
    for (i = 0; i < n; ++i) {
      if (fabsf(v[i] - expected[i]) > 1e-5f) {
        printf("     %s[%d] = %g, expected %g\n", what, i, v[i], expected[i]);
        values_ok = 0;
      }
    }
    CHECK(values_ok, "%s: values match the hand-computed result", what);
  }
}

/* Feeds `x`, fetches `y`; returns the output (or NULL, with `s` set). */
static TF_Tensor* RunOne(TF_Session* sess, TF_Output x, TF_Tensor* value, TF_Output y,
                         TF_Status* s) {
  TF_Tensor* out = NULL;
  TF_SessionRun(sess, NULL, &x, &value, 1, &y, &out, 1, NULL, 0, NULL, s);
  return out;
}

/* Runs y = Relu(x W + b) on `sess` for the three feeds of the test and checks the numbers. */
static void CheckModel(const char* label, TF_Session* sess, TF_Output x, TF_Output mm,
                       TF_Output y, TF_Status* s) {
  char what[128];
  /* W = [[1, 2], [3, 4]], b = [0.5, -10]. */
  static const float x1[] = {1, 0, 0, 1};
  static const float y1[] = {1.5f, 0, 3.5f, 0};
  static const int64_t d1[] = {2, 2};
  static const float x2[] = {1, 1};
  static const float y2[] = {4.5f, 0};
  static const int64_t d2[] = {1, 2};
  static const float x3[] = {2, 3, -1, 0, 0, 5};
  static const float mm3[] = {11, 16, -1, -2, 15, 20};
  static const float y3[] = {11.5f, 6, 0, 0, 15.5f, 10};
  static const int64_t d3[] = {3, 2};
  TF_Tensor* in;
  TF_Tensor* out;

  in = NewFloatTensor(x1, d1, 2);
  out = RunOne(sess, x, in, y, s);
  snprintf(what, sizeof what, "%s run 1 (x = identity)", label);
  CHECK_OK(s, what);
  ExpectFloats(what, out, d1, 2, y1);
  TF_DeleteTensor(in);
  TF_DeleteTensor(out);

  in = NewFloatTensor(x2, d2, 2);
  out = RunOne(sess, x, in, y, s);
  snprintf(what, sizeof what, "%s run 2 (x = [[1, 1]])", label);
  CHECK_OK(s, what);
  ExpectFloats(what, out, d2, 2, y2);
  TF_DeleteTensor(in);
  TF_DeleteTensor(out);

  {
    TF_Output fetches[2];
    TF_Tensor* outs[2] = {NULL, NULL};
    fetches[0] = y;
    fetches[1] = mm;
    in = NewFloatTensor(x3, d3, 2);
    TF_SessionRun(sess, NULL, &x, &in, 1, fetches, outs, 2, NULL, 0, NULL, s);
    snprintf(what, sizeof what, "%s run 3 (3x2 feed, two fetches)", label);
    CHECK_OK(s, what);
    snprintf(what, sizeof what, "%s run 3 y", label);
    ExpectFloats(what, outs[0], d3, 2, y3);
    snprintf(what, sizeof what, "%s run 3 MatMul", label);
    ExpectFloats(what, outs[1], d3, 2, mm3);
    TF_DeleteTensor(in);
    TF_DeleteTensor(outs[0]);
    TF_DeleteTensor(outs[1]);
  }
}

static void CheckShape(TF_Graph* g, TF_Output out, const char* name, int rank,
                       const int64_t* expected, TF_Status* s) {
  int64_t dims[8];
  int i, same = 1;
  int r = TF_GraphGetTensorNumDims(g, out, s);
  CHECK(TF_GetCode(s) == TF_OK && r == rank, "TF_GraphGetTensorNumDims(%s) = %d (expected %d)",
        name, r, rank);
  if (r != rank || rank < 0) return;
  TF_GraphGetTensorShape(g, out, dims, rank, s);
  for (i = 0; i < rank; ++i) same = same && dims[i] == expected[i];
  CHECK(TF_GetCode(s) == TF_OK && same, "TF_GraphGetTensorShape(%s) matches", name);
}

int main(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Operation *x, *w, *b, *mm, *add, *y;
  TF_Session* sess;
  TF_Buffer* graph_def = TF_NewBuffer();

  printf("Sluice C API test, TF_Version() = %s\n", TF_Version());
  CHECK(strlen(TF_Version()) > 0, "TF_Version is not empty");
  CHECK(TF_DataTypeSize(TF_FLOAT) == 4 && TF_DataTypeSize(TF_INT64) == 8 &&
            TF_DataTypeSize(TF_BOOL) == 1,
        "TF_DataTypeSize");
  CHECK(TF_GetCode(s) == TF_OK && strcmp(TF_Message(s), "") == 0, "a new status is OK");
  TF_SetStatus(s, TF_NOT_FOUND, "missing");
  CHECK(TF_GetCode(s) == TF_NOT_FOUND && strcmp(TF_Message(s), "missing") == 0,
        "TF_SetStatus / TF_GetCode / TF_Message");
  TF_SetStatus(s, TF_OK, "");

  /* ---- Build y = Relu(MatMul(x, W) + b) op by op. ---- */
  {
    static const int64_t x_shape[] = {-1, 2};
    static const float w_values[] = {1, 2, 3, 4};
    static const int64_t w_dims[] = {2, 2};
    static const float b_values[] = {0.5f, -10};
    static const int64_t b_dims[] = {2};
    TF_Output o;

    x = Placeholder(g, "x", x_shape, 2, s);
    CHECK_OK(s, "Placeholder x (float, shape [?, 2])");
    w = Const(g, "W", w_values, w_dims, 2, s);
    CHECK_OK(s, "Const W");
    b = Const(g, "b", b_values, b_dims, 1, s);
    CHECK_OK(s, "Const b");
    {
      TF_Output xo = {x, 0}, wo = {w, 0};
      mm = Binary(g, "MatMul", "mm", xo, wo, s);
      CHECK_OK(s, "MatMul mm (T inferred from inputs)");
    }
    {
      TF_Output mo = {mm, 0}, bo = {b, 0};
      add = Binary(g, "Add", "add", mo, bo, s);
      CHECK_OK(s, "Add add");
    }
    o.oper = add;
    o.index = 0;
    y = Unary(g, "Relu", "y", o, s);
    CHECK_OK(s, "Relu y");
    if (y == NULL) {
      printf("cannot go on without the graph\n");
      return 1;
    }
    CHECK(strcmp(TF_OperationName(y), "y") == 0 && strcmp(TF_OperationOpType(y), "Relu") == 0,
          "TF_OperationName / TF_OperationOpType");
    CHECK(TF_OperationNumInputs(mm) == 2 && TF_OperationNumOutputs(mm) == 1,
          "MatMul has 2 inputs and 1 output");
    o.oper = mm;
    CHECK(TF_OperationOutputType(o) == TF_FLOAT, "MatMul output type is float");
    CHECK(TF_GraphOperationByName(g, "add") == add && TF_GraphOperationByName(g, "nope") == NULL,
          "TF_GraphOperationByName");
    {
      size_t pos = 0;
      int n = 0;
      TF_Operation* op;
      const char* order[] = {"x", "W", "b", "mm", "add", "y"};
      int in_order = 1;
      while ((op = TF_GraphNextOperation(g, &pos)) != NULL) {
        if (n < 6) in_order = in_order && strcmp(TF_OperationName(op), order[n]) == 0;
        ++n;
      }
      CHECK(n == 6 && in_order, "TF_GraphNextOperation visits 6 operations in insertion order");
    }
  }

  /* ---- Shapes from the ops' shape functions. ---- */
  {
    static const int64_t xy[] = {-1, 2};
    static const int64_t wd[] = {2, 2};
    static const int64_t bd[] = {2};
    TF_Output o = {x, 0};
    CheckShape(g, o, "x", 2, xy, s);
    o.oper = w;
    CheckShape(g, o, "W", 2, wd, s);
    o.oper = b;
    CheckShape(g, o, "b", 1, bd, s);
    o.oper = mm;
    CheckShape(g, o, "mm", 2, xy, s);
    o.oper = y;
    CheckShape(g, o, "y", 2, xy, s);
    {
      int64_t dims[3];
      TF_GraphGetTensorShape(g, o, dims, 3, s);
      CHECK_ERROR(s, "TF_GraphGetTensorShape with the wrong num_dims");
    }
  }

  /* ---- Three runs in one session. ---- */
  sess = TF_NewSession(g, opts, s);
  CHECK_OK(s, "TF_NewSession");
  {
    TF_Output xo = {x, 0}, mo = {mm, 0}, yo = {y, 0};
    CheckModel("session 1", sess, xo, mo, yo, s);
  }

  /* ---- Devices. ---- */
  {
    TF_DeviceList* devices = TF_SessionListDevices(sess, s);
    CHECK_OK(s, "TF_SessionListDevices");
    if (devices != NULL) {
      int i, n = TF_DeviceListCount(devices), has_cpu = 0;
      CHECK(n >= 1, "%d device(s)", n);
      for (i = 0; i < n; ++i) {
        const char* name = TF_DeviceListName(devices, i, s);
        const char* type = TF_DeviceListType(devices, i, s);
        int64_t mem = TF_DeviceListMemoryBytes(devices, i, s);
        uint64_t inc = TF_DeviceListIncarnation(devices, i, s);
        printf("     device %d: %s (%s), memory %lld, incarnation %llu\n", i, name, type,
               (long long)mem, (unsigned long long)inc);
        if (type != NULL && strcmp(type, "CPU") == 0 && strstr(name, "CPU:") != NULL) has_cpu = 1;
      }
      CHECK(has_cpu, "a CPU device is listed");
      TF_DeviceListName(devices, n, s);
      CHECK_ERROR(s, "TF_DeviceListName with an index out of range");
      TF_DeleteDeviceList(devices);
    }
  }

  /* ---- Operations added after the first run are sent with Extend. ---- */
  {
    TF_Output ys[2];
    TF_Operation* z;
    TF_OperationDescription* d = TF_NewOperation(g, "AddN", "z");
    ys[0].oper = y;
    ys[0].index = 0;
    ys[1] = ys[0];
    TF_AddInputList(d, ys, 2);
    z = TF_FinishOperation(d, s);
    CHECK_OK(s, "AddN z = y + y (N and T inferred from an input list)");
    if (z != NULL) {
      static const float xv[] = {1, 1};
      static const int64_t xd[] = {1, 2};
      static const float zv[] = {9, 0};
      TF_Output xo = {x, 0}, zo = {z, 0};
      TF_Tensor* in = NewFloatTensor(xv, xd, 2);
      TF_Tensor* out = RunOne(sess, xo, in, zo, s);
      CHECK_OK(s, "run of z in the same session (graph extended)");
      ExpectFloats("z", out, xd, 2, zv);
      TF_DeleteTensor(in);
      TF_DeleteTensor(out);
    }
  }

  /* ---- Misuse is reported, not fatal. ---- */
  {
    static const float xv[] = {1, 2, 3, 4, 5, 6};
    static const int64_t wrong_dims[] = {2, 3};
    static const int32_t iv[] = {1, 2, 3, 4};
    static const int64_t id[] = {2, 2};
    TF_Output xo = {x, 0}, yo = {y, 0}, bad = {y, 1};
    TF_Tensor* in;
    TF_Tensor* out;
    int32_t* ints = (int32_t*)malloc(sizeof iv);

    memcpy(ints, iv, sizeof iv);
    ++g_allocated;
    in = TF_NewTensor(TF_INT32, id, 2, ints, sizeof iv, FreeFloats, NULL);
    out = RunOne(sess, xo, in, yo, s);
    CHECK_ERROR(s, "an int32 feed for float placeholder x");
    CHECK(out == NULL, "no output after a failed run");
    TF_DeleteTensor(in);

    in = NewFloatTensor(xv, wrong_dims, 2);
    out = RunOne(sess, xo, in, yo, s);
    CHECK_ERROR(s, "a [2, 3] feed for x of shape [?, 2]");
    CHECK(out == NULL, "no output after a failed run");

    out = RunOne(sess, xo, in, bad, s);
    CHECK_ERROR(s, "fetching output 1 of y (Relu has one output)");
    CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), "'y'") != NULL,
          "  ... as INVALID_ARGUMENT naming the operation");
    TF_DeleteTensor(in);

    TF_SessionRun(sess, NULL, NULL, NULL, 0, &yo, &out, 1, NULL, 0, NULL, s);
    CHECK_ERROR(s, "running y without feeding placeholder x");

    TF_SessionRun(NULL, NULL, NULL, NULL, 0, &yo, &out, 1, NULL, 0, NULL, s);
    CHECK_ERROR(s, "TF_SessionRun with a null session");
  }
  {
    TF_OperationDescription* d = TF_NewOperation(g, "NoSuchOp", "bad");
    TF_Operation* op = TF_FinishOperation(d, s);
    CHECK_ERROR(s, "TF_FinishOperation of unknown op NoSuchOp");
    CHECK(op == NULL && strstr(TF_Message(s), "NoSuchOp") != NULL,
          "  ... returns NULL and names the op");
    CHECK(TF_GraphOperationByName(g, "bad") == NULL, "  ... and adds nothing to the graph");
  }
  {
    TF_Output wo = {w, 0}, bo = {b, 0};
    TF_Operation* op = Binary(g, "MatMul", "mm_bad", wo, bo, s);
    CHECK_ERROR(s, "MatMul of a matrix and a vector (shape function)");
    CHECK(op == NULL, "  ... returns NULL");
  }
  {
    static const int32_t one = 1;
    int32_t* data = (int32_t*)malloc(sizeof one);
    TF_Tensor* t;
    TF_OperationDescription* d = TF_NewOperation(g, "Const", "int_one");
    TF_Operation* c;
    memcpy(data, &one, sizeof one);
    ++g_allocated;
    t = TF_NewTensor(TF_INT32, NULL, 0, data, sizeof one, FreeFloats, NULL);
    TF_SetAttrTensor(d, "value", t, s);
    TF_SetAttrType(d, "dtype", TF_INT32);
    TF_DeleteTensor(t);
    c = TF_FinishOperation(d, s);
    CHECK_OK(s, "Const int_one (int32 scalar)");
    if (c != NULL) {
      TF_Output xo = {x, 0}, co = {c, 0};
      TF_Operation* op = Binary(g, "Add", "mixed", xo, co, s);
      CHECK_ERROR(s, "Add of float x and int32 int_one");
      CHECK(op == NULL, "  ... returns NULL");
    }
  }
  {
    TF_Output xo = {x, 0};
    TF_Operation* op = Unary(g, "Relu", "y", xo, s);
    CHECK_ERROR(s, "a second operation named y");
    CHECK(op == NULL, "  ... returns NULL");
  }
  {
    static const char garbage[] = "\xff\xff\xff\xff\xff\xff\xff\xff this is not a GraphDef";
    TF_Buffer* buf = TF_NewBufferFromString(garbage, sizeof garbage);
    TF_Graph* g2 = TF_NewGraph();
    size_t pos = 0;
    TF_GraphImportGraphDef(g2, buf, NULL, s);
    CHECK_ERROR(s, "TF_GraphImportGraphDef of garbage bytes");
    CHECK(TF_GraphNextOperation(g2, &pos) == NULL, "  ... leaves the graph empty");
    TF_DeleteBuffer(buf);
    TF_DeleteGraph(g2);
  }

  /* ---- GraphDef round trip into new graphs and sessions. ---- */
  TF_GraphToGraphDef(g, graph_def, s);
  CHECK_OK(s, "TF_GraphToGraphDef");
  CHECK(graph_def->length > 0, "the GraphDef has %zu bytes", graph_def->length);
  {
    TF_Graph* g2 = TF_NewGraph();
    TF_Session* sess2;
    TF_ImportGraphDefOptions* import_opts = TF_NewImportGraphDefOptions();
    TF_GraphImportGraphDef(g2, graph_def, import_opts, s);
    CHECK_OK(s, "TF_GraphImportGraphDef into a new graph");
    sess2 = TF_NewSession(g2, opts, s);
    CHECK_OK(s, "TF_NewSession on the imported graph");
    {
      TF_Output xo = {TF_GraphOperationByName(g2, "x"), 0};
      TF_Output mo = {TF_GraphOperationByName(g2, "mm"), 0};
      TF_Output yo = {TF_GraphOperationByName(g2, "y"), 0};
      CHECK(xo.oper != NULL && mo.oper != NULL && yo.oper != NULL && yo.oper != y,
            "imported operations are found by name");
      if (xo.oper && mo.oper && yo.oper) CheckModel("imported", sess2, xo, mo, yo, s);
    }

    TF_GraphImportGraphDef(g2, graph_def, import_opts, s);
    CHECK_ERROR(s, "importing the same GraphDef again without a prefix");

    /* A prefixed copy in the same graph, run by the same session (Extend). */
    TF_ImportGraphDefOptionsSetPrefix(import_opts, "copy");
    TF_GraphImportGraphDef(g2, graph_def, import_opts, s);
    CHECK_OK(s, "TF_GraphImportGraphDef with prefix \"copy\"");
    {
      TF_Output xo = {TF_GraphOperationByName(g2, "copy/x"), 0};
      TF_Output mo = {TF_GraphOperationByName(g2, "copy/mm"), 0};
      TF_Output yo = {TF_GraphOperationByName(g2, "copy/y"), 0};
      TF_Input in0 = {yo.oper, 0};
      CHECK(xo.oper != NULL && mo.oper != NULL && yo.oper != NULL,
            "prefixed operations copy/x, copy/mm, copy/y exist");
      if (xo.oper && mo.oper && yo.oper) {
        TF_Output src = TF_OperationInput(in0);
        CHECK(src.oper != NULL && strcmp(TF_OperationName(src.oper), "copy/add") == 0,
              "copy/y reads copy/add (inputs renamed)");
        CheckModel("prefixed", sess2, xo, mo, yo, s);
      }
    }
    TF_DeleteImportGraphDefOptions(import_opts);
    TF_CloseSession(sess2, s);
    CHECK_OK(s, "TF_CloseSession");
    {
      TF_Output yo = {TF_GraphOperationByName(g2, "y"), 0};
      TF_Tensor* out = NULL;
      TF_SessionRun(sess2, NULL, NULL, NULL, 0, &yo, &out, 1, NULL, 0, NULL, s);
      CHECK_ERROR(s, "running a closed session");
    }
    /* Deleting the graph first is allowed: it goes once its session is deleted. */
    TF_DeleteGraph(g2);
    TF_DeleteSession(sess2, s);
    CHECK_OK(s, "TF_DeleteSession");
  }

  TF_DeleteBuffer(graph_def);
  TF_CloseSession(sess, s);
  CHECK_OK(s, "TF_CloseSession");
  TF_DeleteSession(sess, s);
  CHECK_OK(s, "TF_DeleteSession");
  TF_DeleteGraph(g);
  TF_DeleteSessionOptions(opts);
  TF_DeleteStatus(s);

  CHECK(g_allocated > 0 && g_deallocated == g_allocated,
        "every buffer given to TF_NewTensor was released once (%d of %d)", g_deallocated,
        g_allocated);

  return CheckSummary();
}
