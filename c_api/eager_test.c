/* TensorFlow's eager C API as a binding uses it (TensorFlow.js's Node backend, for one): only
 * "tensorflow/c/eager/c_api.h", built with the system's cc and -ltensorflow by
 * tf_layout_test.sh. Expected values are worked out by hand. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "tensorflow/c/eager/c_api.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"

static TFE_TensorHandle* FloatHandle(const float* values, const int64_t* dims, int rank, TF_Status* s) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, rank, (size_t)n * sizeof(float));
  memcpy(TF_TensorData(t), values, (size_t)n * sizeof(float));
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, s);
  TF_DeleteTensor(t); /* The handle keeps its own reference. */
  return h;
}

static TFE_TensorHandle* IntHandle(const int32_t* values, const int64_t* dims, int rank, TF_Status* s) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_INT32, dims, rank, (size_t)n * sizeof(int32_t));
  memcpy(TF_TensorData(t), values, (size_t)n * sizeof(int32_t));
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, s);
  TF_DeleteTensor(t);
  return h;
}

/* Runs a one-output op over `inputs` (added one by one); NULL on error (in `s`). */
static TFE_TensorHandle* Run(TFE_Context* ctx, const char* name, TFE_TensorHandle** inputs, int n, TF_Status* s) {
  TFE_Op* op = TFE_NewOp(ctx, name, s);
  if (TF_GetCode(s) != TF_OK) return NULL;
  for (int i = 0; i < n; ++i) TFE_OpAddInput(op, inputs[i], s);
  TFE_TensorHandle* out = NULL;
  int num = 1;
  TFE_Execute(op, &out, &num, s);
  TFE_DeleteOp(op);
  return TF_GetCode(s) == TF_OK ? out : NULL;
}

static int FloatsEqual(TFE_TensorHandle* h, const float* want, int n, TF_Status* s) {
  TF_Tensor* t = TFE_TensorHandleResolve(h, s);
  if (t == NULL) return 0;
  int ok = TF_TensorType(t) == TF_FLOAT && TF_TensorElementCount(t) == n &&
           memcmp(TF_TensorData(t), want, (size_t)n * sizeof(float)) == 0;
  TF_DeleteTensor(t);
  return ok;
}

static TFE_TensorHandle* StringHandle(const char* text, TF_Status* s) {
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, NULL, 0, sizeof(TF_TString));
  TF_TString* ts = (TF_TString*)TF_TensorData(t);
  TF_TString_Init(ts);
  TF_TString_Copy(ts, text, strlen(text));
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, s);
  TF_DeleteTensor(t);
  return h;
}

static TFE_TensorHandle* ScalarHandle(TF_DataType dt, const void* value, size_t bytes, TF_Status* s) {
  TF_Tensor* t = TF_AllocateTensor(dt, NULL, 0, bytes);
  memcpy(TF_TensorData(t), value, bytes);
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, s);
  TF_DeleteTensor(t);
  return h;
}

/* Runs an op without outputs; returns the status code. */
static TF_Code RunNoOutput(TFE_Context* ctx, const char* name, TFE_TensorHandle** inputs, int n, int float_t_attr,
                           TF_Status* s) {
  TFE_Op* op = TFE_NewOp(ctx, name, s);
  if (TF_GetCode(s) != TF_OK) return TF_GetCode(s);
  if (float_t_attr) TFE_OpSetAttrType(op, "T", TF_FLOAT);
  for (int i = 0; i < n; ++i) TFE_OpAddInput(op, inputs[i], s);
  int num = 0;
  TFE_Execute(op, NULL, &num, s);
  TFE_DeleteOp(op);
  return TF_GetCode(s);
}

/* The size of the one file in `dir` (-1 unless there is exactly one). */
static long OnlyFileSize(const char* dir) {
  DIR* d = opendir(dir);
  if (d == NULL) return -1;
  struct dirent* e;
  char path[4096] = "";
  int files = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    ++files;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
  }
  closedir(d);
  struct stat st;
  if (files != 1 || stat(path, &st) != 0) return -1;
  return (long)st.st_size;
}

/* Summary writers as tfjs-node's tensorBoard() drives them: a resource handle from
 * SummaryWriter, passed back to the writing ops, resolvable to bytes and back; the events
 * queued when the context is deleted reach the file. */
static void SummaryWriters(TF_Status* s) {
  char dir[4096];
  const char* tmp = getenv("TEST_TMPDIR"); /* Bazel's per-test scratch space, removed after. */
  snprintf(dir, sizeof(dir), "%s/sluice_eager_summary_XXXXXX", tmp != NULL ? tmp : "/tmp");
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  TFE_ContextOptions* opts = TFE_NewContextOptions();
  TFE_Context* ctx = TFE_NewContext(opts, s);
  TFE_DeleteContextOptions(opts);
  TFE_Op* make = TFE_NewOp(ctx, "SummaryWriter", s);
  char shared[4200];
  snprintf(shared, sizeof(shared), "logdir:%s", dir);
  TFE_OpSetAttrString(make, "shared_name", shared, strlen(shared));
  TFE_OpSetAttrString(make, "container", "", 0);
  TFE_TensorHandle* writer = NULL;
  int num = 1;
  TFE_Execute(make, &writer, &num, s);
  CHECK_OK(s, "SummaryWriter");
  TFE_DeleteOp(make);
  CHECK(writer != NULL && TFE_TensorHandleDataType(writer) == TF_RESOURCE, "the writer is a resource handle");

  /* Writing before CreateSummaryFileWriter is NOT_FOUND. */
  CHECK(RunNoOutput(ctx, "FlushSummaryWriter", &writer, 1, 0, s) == TF_NOT_FOUND, "flush before create: %s",
        TF_Message(s));

  const int32_t max_queue = 10, flush_millis = 120000;
  TFE_TensorHandle* create_in[5] = {writer, StringHandle(dir, s), ScalarHandle(TF_INT32, &max_queue, 4, s),
                                    ScalarHandle(TF_INT32, &flush_millis, 4, s), StringHandle(".v2", s)};
  CHECK(RunNoOutput(ctx, "CreateSummaryFileWriter", create_in, 5, 0, s) == TF_OK, "CreateSummaryFileWriter: %s",
        TF_Message(s));
  const long empty = OnlyFileSize(dir);
  CHECK(empty > 0, "one event file holding the version event (size %ld)", empty);

  const int64_t step = 1;
  const float value = 42;
  TFE_TensorHandle* write_in[4] = {writer, ScalarHandle(TF_INT64, &step, 8, s), StringHandle("loss", s),
                                   ScalarHandle(TF_FLOAT, &value, 4, s)};
  CHECK(RunNoOutput(ctx, "WriteScalarSummary", write_in, 4, 1, s) == TF_OK, "WriteScalarSummary: %s", TF_Message(s));
  CHECK(OnlyFileSize(dir) == empty, "the event waits in the queue");

  /* The handle resolves to a serialized ResourceHandleProto; a handle made from those bytes
   * names the same writer. */
  TF_Tensor* bytes = TFE_TensorHandleResolve(writer, s);
  CHECK_OK(s, "resolving a resource handle");
  CHECK(bytes != NULL && TF_TensorType(bytes) == TF_RESOURCE && TF_NumDims(bytes) == 0 &&
            TF_TensorByteSize(bytes) > strlen(dir),
        "a scalar TF_RESOURCE of %zu bytes", bytes == NULL ? (size_t)0 : TF_TensorByteSize(bytes));
  TFE_TensorHandle* again = bytes == NULL ? NULL : TFE_NewTensorHandle(bytes, s);
  CHECK_OK(s, "a handle from the resolved bytes");
  TF_DeleteTensor(bytes);
  CHECK(again != NULL && RunNoOutput(ctx, "FlushSummaryWriter", &again, 1, 0, s) == TF_OK, "flush through it: %s",
        TF_Message(s));
  const long one = OnlyFileSize(dir);
  CHECK(one > empty, "the flushed event is in the file (%ld > %ld)", one, empty);

  /* Queued again, then the context ends: the file gets it. */
  CHECK(RunNoOutput(ctx, "WriteScalarSummary", write_in, 4, 1, s) == TF_OK, "second WriteScalarSummary");
  for (int i = 1; i < 5; ++i) TFE_DeleteTensorHandle(create_in[i]);
  for (int i = 1; i < 4; ++i) TFE_DeleteTensorHandle(write_in[i]);
  TFE_DeleteTensorHandle(again);
  TFE_DeleteTensorHandle(writer);
  TFE_DeleteContext(ctx);
  CHECK(OnlyFileSize(dir) == one + (one - empty), "deleting the context flushed the queued event");
}

int main(void) {
  TF_Status* s = TF_NewStatus();
  TFE_ContextOptions* opts = TFE_NewContextOptions();
  TFE_ContextOptionsSetAsync(opts, 0);
  TFE_Context* ctx = TFE_NewContext(opts, s);
  CHECK_OK(s, "TFE_NewContext");
  TFE_DeleteContextOptions(opts);

  TF_DeviceList* devices = TFE_ContextListDevices(ctx, s);
  CHECK_OK(s, "TFE_ContextListDevices");
  CHECK(TF_DeviceListCount(devices) == 1, "one device (got %d)", TF_DeviceListCount(devices));
  CHECK(strcmp(TF_DeviceListType(devices, 0, s), "CPU") == 0, "its type is CPU");
  CHECK(strstr(TF_DeviceListName(devices, 0, s), "device:CPU:0") != NULL, "named %s",
        TF_DeviceListName(devices, 0, s));
  TF_DeleteDeviceList(devices);

  /* AddV2 with "T" from the inputs; the handles' TF_Tensors are already deleted. */
  const int64_t dims2[] = {2};
  const float a_values[] = {1.5f, -2.0f};
  const float b_values[] = {0.25f, 8.0f};
  TFE_TensorHandle* a = FloatHandle(a_values, dims2, 1, s);
  TFE_TensorHandle* b = FloatHandle(b_values, dims2, 1, s);
  CHECK(TFE_TensorHandleDataType(a) == TF_FLOAT, "handle dtype");
  CHECK(TFE_TensorHandleNumDims(a, s) == 1 && TFE_TensorHandleDim(a, 0, s) == 2, "handle shape [2]");
  CHECK(TFE_TensorHandleNumElements(a, s) == 2, "handle elements");
  TFE_TensorHandleDim(a, 1, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a dimension past the rank");
  TFE_TensorHandle* ab[] = {a, b};
  TFE_TensorHandle* sum = Run(ctx, "AddV2", ab, 2, s);
  CHECK_OK(s, "AddV2");
  const float sum_want[] = {1.75f, 6.0f};
  CHECK(sum != NULL && FloatsEqual(sum, sum_want, 2, s), "AddV2 values");
  /* Again: the same signature runs the kernel prepared the first time. */
  TFE_TensorHandle* sum2 = Run(ctx, "AddV2", ab, 2, s);
  CHECK(sum2 != NULL && FloatsEqual(sum2, sum_want, 2, s), "AddV2 a second time");
  CHECK(strstr(TFE_TensorHandleDeviceName(sum, s), "CPU:0") != NULL, "the result's device");
  TFE_DeleteTensorHandle(sum2);

  /* An op keeps its inputs: the handle is deleted before TFE_Execute. */
  TFE_TensorHandle* a_copy = TFE_TensorHandleCopySharingTensor(a, s);
  TFE_Op* neg = TFE_NewOp(ctx, "Neg", s);
  TFE_OpAddInput(neg, a_copy, s);
  TFE_DeleteTensorHandle(a_copy);
  TFE_TensorHandle* negated = NULL;
  int num = 1;
  TFE_Execute(neg, &negated, &num, s);
  CHECK_OK(s, "Neg after its input's handle was deleted");
  const float neg_want[] = {-1.5f, 2.0f};
  CHECK(num == 1 && FloatsEqual(negated, neg_want, 2, s), "Neg values");
  TFE_DeleteOp(neg);
  TFE_DeleteTensorHandle(negated);

  /* ConcatV2 as TensorFlow.js calls it: the list's tensors added one by one, N set. */
  const int32_t axis_value[] = {0};
  TFE_TensorHandle* axis = IntHandle(axis_value, NULL, 0, s);
  TFE_Op* concat = TFE_NewOp(ctx, "ConcatV2", s);
  TFE_OpSetAttrInt(concat, "N", 2);
  TFE_OpSetAttrType(concat, "T", TF_FLOAT);
  TFE_OpSetAttrType(concat, "Tidx", TF_INT32);
  TFE_OpAddInput(concat, a, s);
  TFE_OpAddInput(concat, b, s);
  TFE_OpAddInput(concat, axis, s);
  TFE_TensorHandle* joined = NULL;
  num = 1;
  TFE_Execute(concat, &joined, &num, s);
  CHECK_OK(s, "ConcatV2 with inputs added one by one");
  const float joined_want[] = {1.5f, -2.0f, 0.25f, 8.0f};
  CHECK(joined != NULL && FloatsEqual(joined, joined_want, 4, s), "ConcatV2 values");
  TFE_DeleteOp(concat);
  TFE_DeleteTensorHandle(joined);
  /* And through TFE_OpAddInputList, with N and T inferred. */
  concat = TFE_NewOp(ctx, "ConcatV2", s);
  TFE_TensorHandle* list[] = {b, a, b};
  TFE_OpAddInputList(concat, list, 3, s);
  TFE_OpAddInput(concat, axis, s);
  CHECK(TFE_OpGetFlatInputCount(concat, s) == 4, "4 flat inputs");
  CHECK(TFE_OpGetFlatInput(concat, 3, s) != NULL && TF_GetCode(s) == TF_OK, "flat input 3");
  TFE_OpGetFlatInput(concat, 4, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "flat input 4 of 4");
  num = 1;
  TFE_Execute(concat, &joined, &num, s);
  CHECK_OK(s, "ConcatV2 with an input list");
  CHECK(TFE_TensorHandleDim(joined, 0, s) == 6, "6 values");
  TFE_DeleteOp(concat);
  TFE_DeleteTensorHandle(joined);

  /* Two outputs. */
  const float top_values[] = {3.0f, 9.0f, 1.0f, 7.0f};
  const int64_t dims4[] = {4};
  TFE_TensorHandle* x4 = FloatHandle(top_values, dims4, 1, s);
  const int32_t k_value[] = {2};
  TFE_TensorHandle* k = IntHandle(k_value, NULL, 0, s);
  TFE_Op* topk = TFE_NewOp(ctx, "TopKV2", s);
  TFE_OpAddInput(topk, x4, s);
  TFE_OpAddInput(topk, k, s);
  TFE_TensorHandle* top[2] = {NULL, NULL};
  num = 1;
  TFE_Execute(topk, top, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "room for 1 of TopKV2's 2 outputs");
  num = 2;
  TFE_Execute(topk, top, &num, s);
  CHECK_OK(s, "TopKV2");
  const float top_want[] = {9.0f, 7.0f};
  CHECK(num == 2 && FloatsEqual(top[0], top_want, 2, s), "TopKV2 values");
  TF_Tensor* idx = TFE_TensorHandleResolve(top[1], s);
  CHECK(idx != NULL && TF_TensorType(idx) == TF_INT32 && ((int32_t*)TF_TensorData(idx))[0] == 1 &&
            ((int32_t*)TF_TensorData(idx))[1] == 3,
        "TopKV2 indices 1, 3");
  TF_DeleteTensor(idx);
  TFE_DeleteTensorHandle(top[0]);
  TFE_DeleteTensorHandle(top[1]);
  TFE_DeleteOp(topk);

  /* Strings cross in TF_TStrings. */
  TF_Tensor* str = TF_AllocateTensor(TF_STRING, NULL, 0, sizeof(TF_TString));
  TF_TString* ts = (TF_TString*)TF_TensorData(str);
  TF_TString_Init(ts);
  const char* long_text = "a string longer than the twenty-two bytes kept inline";
  TF_TString_Copy(ts, long_text, strlen(long_text));
  TFE_TensorHandle* sh = TFE_NewTensorHandle(str, s);
  TF_DeleteTensor(str);
  TFE_TensorHandle* sid = Run(ctx, "Identity", &sh, 1, s);
  CHECK_OK(s, "Identity of a string");
  TF_Tensor* sout = TFE_TensorHandleResolve(sid, s);
  CHECK(sout != NULL && TF_TensorType(sout) == TF_STRING &&
            TF_TString_GetSize((TF_TString*)TF_TensorData(sout)) == strlen(long_text) &&
            memcmp(TF_TString_GetDataPointer((TF_TString*)TF_TensorData(sout)), long_text, strlen(long_text)) == 0,
        "the string comes back");
  TF_DeleteTensor(sout);
  TFE_DeleteTensorHandle(sh);
  TFE_DeleteTensorHandle(sid);

  /* Attr metadata. */
  unsigned char is_list = 9;
  CHECK(TFE_OpNameGetAttrType(ctx, "ConcatV2", "N", &is_list, s) == TF_ATTR_INT && is_list == 0, "N is an int");
  TFE_OpNameGetAttrType(ctx, "ConcatV2", "nope", &is_list, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an attr the op does not have");

  /* A function added to the context runs as an op of its name. */
  TF_Graph* g = TF_NewGraph();
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Output x = {TF_FinishOperation(d, s), 0};
  d = TF_NewOperation(g, "AddV2", "twice");
  TF_AddInput(d, x);
  TF_AddInput(d, x);
  TF_Output y = {TF_FinishOperation(d, s), 0};
  CHECK_OK(s, "the function's body");
  TF_Function* fn = TF_GraphToFunction(g, "Twice", 0, -1, NULL, 1, &x, 1, &y, NULL, NULL, NULL, s);
  CHECK_OK(s, "TF_GraphToFunction");
  TFE_ContextAddFunction(ctx, fn, s);
  CHECK_OK(s, "TFE_ContextAddFunction");
  CHECK(TFE_ContextHasFunction(ctx, "Twice") == 1, "the context has it");
  TFE_TensorHandle* twice = Run(ctx, "Twice", &a, 1, s);
  CHECK_OK(s, "calling Twice");
  const float twice_want[] = {3.0f, -4.0f};
  CHECK(twice != NULL && FloatsEqual(twice, twice_want, 2, s), "Twice values");
  TFE_DeleteTensorHandle(twice);
  TFE_ContextRemoveFunction(ctx, "Twice", s);
  CHECK_OK(s, "TFE_ContextRemoveFunction");
  TFE_NewOp(ctx, "Twice", s);
  CHECK_CODE(s, TF_NOT_FOUND, "a removed function");
  TF_DeleteFunction(fn);
  TF_DeleteGraph(g);

  /* Misuse: each a status, never a crash. */
  CHECK(TFE_NewOp(ctx, "NoSuchOp", s) == NULL, "an unknown op makes no op");
  CHECK_CODE(s, TF_NOT_FOUND, "an unknown op");
  CHECK(strstr(TF_Message(s), "NoSuchOp") != NULL, "the error names it");

  TFE_Op* op = TFE_NewOp(ctx, "AddV2", s);
  TFE_OpAddInput(op, a, s);
  TFE_TensorHandle* out = NULL;
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "AddV2 with one input");
  TFE_DeleteOp(op);

  const int32_t ints[] = {1, 2};
  TFE_TensorHandle* i2 = IntHandle(ints, dims2, 1, s);
  TFE_TensorHandle* mixed[] = {a, i2};
  Run(ctx, "AddV2", mixed, 2, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "float + int32");
  CHECK(strstr(TF_Message(s), "input #1") != NULL && strstr(TF_Message(s), "[Op:AddV2]") != NULL,
        "names the input and the op: %s", TF_Message(s));

  op = TFE_NewOp(ctx, "AddV2", s);
  TFE_OpSetAttrInt(op, "T", 3); /* T is a type. */
  TFE_OpAddInput(op, a, s);
  TFE_OpAddInput(op, b, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an int for the type attr T");
  TFE_DeleteOp(op);

  /* A type attr that disagrees with the inputs takes their dtype (TensorFlow.js sets T from a
   * tensor it then casts); inputs that disagree with each other are still refused above. */
  op = TFE_NewOp(ctx, "AddV2", s);
  TFE_OpAddInput(op, a, s);
  TFE_OpAddInput(op, b, s);
  TFE_OpSetAttrType(op, "T", TF_BOOL);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_OK(s, "T = bool set after two float inputs");
  CHECK(num == 1 && FloatsEqual(out, sum_want, 2, s), "runs on the floats");
  TFE_DeleteTensorHandle(out);
  TFE_DeleteOp(op);
  op = TFE_NewOp(ctx, "AddV2", s);
  TFE_OpSetAttrType(op, "T", TF_FLOAT);
  TFE_OpAddInput(op, i2, s);
  TFE_OpAddInput(op, a, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "int32 + float with T = float");
  TFE_DeleteOp(op);

  op = TFE_NewOp(ctx, "ConcatV2", s);
  TFE_OpSetAttrInt(op, "N", -1); /* No list has -1 tensors. */
  TFE_OpAddInput(op, a, s);
  TFE_OpAddInput(op, axis, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "ConcatV2 with N = -1");
  TFE_DeleteOp(op);

  op = TFE_NewOp(ctx, "ConcatV2", s);
  TFE_OpSetAttrInt(op, "N", (int64_t)1 << 62); /* A length no list has, nor fits an int. */
  TFE_OpAddInput(op, a, s);
  TFE_OpAddInput(op, axis, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "ConcatV2 with N = 2^62");
  TFE_DeleteOp(op);

  /* A shape attr with a negative rank means unknown rank; null dims with a rank are refused. */
  op = TFE_NewOp(ctx, "Neg", s);
  TFE_OpSetAttrShape(op, "shape", NULL, 3, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "null dims with rank 3");
  TFE_DeleteOp(op);

  op = TFE_NewOp(ctx, "ConcatV2", s);
  TFE_OpSetAttrInt(op, "N", 3); /* Three values and an axis wanted, two tensors given. */
  TFE_OpAddInput(op, a, s);
  TFE_OpAddInput(op, axis, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "ConcatV2 with N = 3 and two inputs");
  TFE_DeleteOp(op);

  op = TFE_NewOp(ctx, "Neg", s);
  TFE_OpSetAttrBool(op, "no_such_attr", 1);
  TFE_OpAddInput(op, a, s);
  num = 1;
  TFE_Execute(op, &out, &num, s);
  CHECK_ERROR(s, "an attr Neg does not have");
  TFE_DeleteOp(op);

  const float three[] = {1.0f, 2.0f, 3.0f};
  const int64_t dims3[] = {3};
  TFE_TensorHandle* c3 = FloatHandle(three, dims3, 1, s);
  TFE_TensorHandle* shapes[] = {a, c3};
  Run(ctx, "AddV2", shapes, 2, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "shapes [2] and [3] do not broadcast");

  op = TFE_NewOp(ctx, "AddV2", s);
  TFE_OpAddInput(op, NULL, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a null input handle");
  TFE_OpSetDevice(op, "/job:localhost/replica:0/task:0/device:GPU:0", s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a GPU device");
  TFE_DeleteOp(op);
  TFE_TensorHandleNumDims(NULL, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a null handle");
  CHECK(TFE_TensorHandleResolve(NULL, s) == NULL, "resolving a null handle gives NULL");
  TFE_DeleteTensorHandle(NULL);
  TFE_DeleteOp(NULL);

  TFE_DeleteTensorHandle(c3);
  TFE_DeleteTensorHandle(i2);
  TFE_DeleteTensorHandle(x4);
  TFE_DeleteTensorHandle(k);
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
  TFE_DeleteContext(ctx);
  SummaryWriters(s);
  TF_DeleteStatus(s);
  return CheckSummary();
}
