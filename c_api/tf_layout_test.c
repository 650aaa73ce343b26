/* TensorFlow's C API as a TensorFlow user compiles it: this file includes only
 * "tensorflow/c/c_api.h", is built with `cc -I c_api/include` and linked with `-ltensorflow`
 * (tf_layout_test.sh). One check function per family of the API: attr getters, input and
 * output list lengths, consumers and control edges, every GraphDef import option, setting
 * tensor shapes, the op registry, bitcasts, TF_TString, TF_STRING tensors through a session and
 * attrs, library loading and partial runs. It prints each check and exits non-zero if any
 * fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/c_api.h"
#include "c_check.h"





/* ---- helpers ---------------------------------------------------------------------------- */

static TF_Operation* Finish(TF_OperationDescription* d, TF_Status* s, const char* what) {
  TF_Operation* op = TF_FinishOperation(d, s);
  CHECK_OK(s, what);
  return op;
}

static TF_Operation* Placeholder(TF_Graph* g, const char* name, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  return Finish(d, s, name);
}

static TF_Operation* Identity(TF_Graph* g, const char* name, TF_Output in, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Identity", name);
  TF_AddInput(d, in);
  return Finish(d, s, name);
}

static TF_Operation* NoOp(TF_Graph* g, const char* name, TF_Operation** control, int n,
                          TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "NoOp", name);
  int i;
  for (i = 0; i < n; ++i) TF_AddControlInput(d, control[i]);
  return Finish(d, s, name);
}

/* True when needle[0, n) occurs in the buffer's bytes. */
static int BufferContains(const TF_Buffer* b, const char* needle) {
  size_t n = strlen(needle), i;
  const char* data = (const char*)b->data;
  if (data == NULL || b->length < n) return 0;
  for (i = 0; i + n <= b->length; ++i) {
    if (memcmp(data + i, needle, n) == 0) return 1;
  }
  return 0;
}

static int HasControlInput(TF_Operation* op, TF_Operation* control) {
  TF_Operation* inputs[8];
  int n = TF_OperationGetControlInputs(op, inputs, 8), i;
  for (i = 0; i < n && i < 8; ++i) {
    if (inputs[i] == control) return 1;
  }
  return 0;
}

/* ---- attr getters ----------------------------------------------------------------------- */

static void CheckAttrs(TF_Status* s) {
  printf("-- attrs\n");
  TF_Graph* g = TF_NewGraph();
  /* Every kind of value, on attrs a Placeholder has ("dtype", "shape") and on internal ("_")
   * attrs, which any operation may carry. */
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "p");
  int64_t shape[] = {2, -1};
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrShape(d, "shape", shape, 2);
  TF_SetAttrString(d, "_s", "hello", 5);
  const void* strings[] = {"a", "bcd", ""};
  size_t lengths[] = {1, 3, 0};
  TF_SetAttrStringList(d, "_sl", strings, lengths, 3);
  TF_SetAttrInt(d, "_i", 7);
  int64_t ints[] = {1, 2, 3};
  TF_SetAttrIntList(d, "_il", ints, 3);
  TF_SetAttrIntList(d, "_empty", NULL, 0);
  TF_SetAttrFloat(d, "_f", 1.5f);
  float floats[] = {0.5f, -2.0f};
  TF_SetAttrFloatList(d, "_fl", floats, 2);
  TF_SetAttrBool(d, "_b", 1);
  unsigned char bools[] = {1, 0, 1};
  TF_SetAttrBoolList(d, "_bl", bools, 3);
  TF_SetAttrType(d, "_t", TF_INT64);
  TF_DataType types[] = {TF_FLOAT, TF_INT32};
  TF_SetAttrTypeList(d, "_tl", types, 2);
  TF_SetAttrShape(d, "_unknown_shape", NULL, -1);
  int64_t s0[] = {1, 2};
  const int64_t* shapes[] = {s0, NULL, NULL};
  int ranks[] = {2, -1, 0};
  TF_SetAttrShapeList(d, "_shl", shapes, ranks, 3);
  int64_t tdims[] = {2};
  TF_Tensor* t0 = TF_AllocateTensor(TF_INT32, tdims, 1, 2 * sizeof(int32_t));
  ((int32_t*)TF_TensorData(t0))[0] = 3;
  ((int32_t*)TF_TensorData(t0))[1] = 4;
  TF_Tensor* t1 = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  *(float*)TF_TensorData(t1) = 9.5f;
  TF_SetAttrTensor(d, "_tensor", t0, s);
  CHECK_OK(s, "TF_SetAttrTensor");
  TF_Tensor* list[] = {t0, t1};
  TF_SetAttrTensorList(d, "_tensors", list, 2, s);
  CHECK_OK(s, "TF_SetAttrTensorList");
  TF_Operation* p = Finish(d, s, "a Placeholder with an attr of every kind");
  TF_DeleteTensor(t0);
  TF_DeleteTensor(t1);
  if (p == NULL) {
    TF_DeleteGraph(g);
    return;
  }

  TF_AttrMetadata m = TF_OperationGetAttrMetadata(p, "_s", s);
  CHECK_OK(s, "metadata of a string");
  CHECK(m.is_list == 0 && m.list_size == -1 && m.type == TF_ATTR_STRING && m.total_size == 5,
        "string metadata: is_list %d list_size %lld type %d total_size %lld", m.is_list,
        (long long)m.list_size, (int)m.type, (long long)m.total_size);
  m = TF_OperationGetAttrMetadata(p, "_sl", s);
  CHECK(m.is_list == 1 && m.list_size == 3 && m.type == TF_ATTR_STRING && m.total_size == 4,
        "string list metadata: list_size %lld total_size %lld", (long long)m.list_size,
        (long long)m.total_size);
  m = TF_OperationGetAttrMetadata(p, "_il", s);
  CHECK(m.is_list == 1 && m.list_size == 3 && m.type == TF_ATTR_INT, "int list metadata");
  m = TF_OperationGetAttrMetadata(p, "_empty", s);
  CHECK_OK(s, "metadata of an empty list");
  CHECK(m.is_list == 1 && m.list_size == 0, "empty list metadata: list_size %lld",
        (long long)m.list_size);
  m = TF_OperationGetAttrMetadata(p, "_f", s);
  CHECK(m.is_list == 0 && m.type == TF_ATTR_FLOAT, "float metadata");
  m = TF_OperationGetAttrMetadata(p, "_bl", s);
  CHECK(m.is_list == 1 && m.list_size == 3 && m.type == TF_ATTR_BOOL, "bool list metadata");
  m = TF_OperationGetAttrMetadata(p, "dtype", s);
  CHECK(m.is_list == 0 && m.type == TF_ATTR_TYPE, "type metadata");
  m = TF_OperationGetAttrMetadata(p, "_tl", s);
  CHECK(m.is_list == 1 && m.list_size == 2 && m.type == TF_ATTR_TYPE, "type list metadata");
  m = TF_OperationGetAttrMetadata(p, "shape", s);
  CHECK(m.is_list == 0 && m.type == TF_ATTR_SHAPE && m.total_size == 2,
        "shape metadata: total_size (rank) %lld", (long long)m.total_size);
  m = TF_OperationGetAttrMetadata(p, "_unknown_shape", s);
  CHECK(m.type == TF_ATTR_SHAPE && m.total_size == -1, "unknown-rank shape: total_size %lld",
        (long long)m.total_size);
  m = TF_OperationGetAttrMetadata(p, "_shl", s);
  CHECK(m.is_list == 1 && m.list_size == 3 && m.type == TF_ATTR_SHAPE && m.total_size == 2,
        "shape list metadata: list_size %lld total_size %lld", (long long)m.list_size,
        (long long)m.total_size);
  m = TF_OperationGetAttrMetadata(p, "_tensor", s);
  CHECK(m.is_list == 0 && m.type == TF_ATTR_TENSOR, "tensor metadata");
  m = TF_OperationGetAttrMetadata(p, "_tensors", s);
  CHECK(m.is_list == 1 && m.list_size == 2 && m.type == TF_ATTR_TENSOR, "tensor list metadata");
  TF_OperationGetAttrMetadata(p, "no_such_attr", s);
  CHECK_CODE(s, TF_NOT_FOUND, "metadata of a missing attr");

  char str[8] = {0};
  TF_OperationGetAttrString(p, "_s", str, sizeof(str), s);
  CHECK_OK(s, "TF_OperationGetAttrString");
  CHECK(memcmp(str, "hello", 5) == 0, "string value \"%.5s\"", str);
  memset(str, 0, sizeof(str));
  TF_OperationGetAttrString(p, "_s", str, 3, s);
  CHECK(TF_GetCode(s) == TF_OK && memcmp(str, "hel\0", 4) == 0,
        "a short buffer gets the first max_length bytes: \"%s\"", str);
  TF_OperationGetAttrString(p, "_i", str, sizeof(str), s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an int read as a string");

  void* values[3];
  size_t lens[3];
  char storage[4];
  TF_OperationGetAttrStringList(p, "_sl", values, lens, 3, storage, sizeof(storage), s);
  CHECK_OK(s, "TF_OperationGetAttrStringList");
  CHECK(lens[0] == 1 && lens[1] == 3 && lens[2] == 0 && memcmp(values[0], "a", 1) == 0 &&
            memcmp(values[1], "bcd", 3) == 0 && (char*)values[0] == storage,
        "string list values in storage");
  TF_OperationGetAttrStringList(p, "_sl", values, lens, 3, storage, 2, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a string list into too little storage");

  int64_t i64 = 0;
  TF_OperationGetAttrInt(p, "_i", &i64, s);
  CHECK(TF_GetCode(s) == TF_OK && i64 == 7, "int value %lld", (long long)i64);
  TF_OperationGetAttrInt(p, "_s", &i64, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a string read as an int");
  TF_OperationGetAttrInt(p, "missing", &i64, s);
  CHECK_CODE(s, TF_NOT_FOUND, "a missing int");
  int64_t il[3] = {-1, -1, -1};
  TF_OperationGetAttrIntList(p, "_il", il, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && il[0] == 1 && il[1] == 2 && il[2] == -1,
        "int list: the first max_values values only");
  TF_OperationGetAttrIntList(p, "_fl", il, 3, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a float list read as an int list");
  TF_OperationGetAttrIntList(p, "_i", il, 3, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an int read as an int list");

  float f = 0;
  TF_OperationGetAttrFloat(p, "_f", &f, s);
  CHECK(TF_GetCode(s) == TF_OK && f == 1.5f, "float value %g", f);
  float fl[2] = {0, 0};
  TF_OperationGetAttrFloatList(p, "_fl", fl, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && fl[0] == 0.5f && fl[1] == -2.0f, "float list values");
  unsigned char b = 0;
  TF_OperationGetAttrBool(p, "_b", &b, s);
  CHECK(TF_GetCode(s) == TF_OK && b == 1, "bool value %d", b);
  unsigned char bl[3] = {9, 9, 9};
  TF_OperationGetAttrBoolList(p, "_bl", bl, 3, s);
  CHECK(TF_GetCode(s) == TF_OK && bl[0] == 1 && bl[1] == 0 && bl[2] == 1, "bool list values");
  TF_DataType dt = (TF_DataType)0;
  TF_OperationGetAttrType(p, "_t", &dt, s);
  CHECK(TF_GetCode(s) == TF_OK && dt == TF_INT64, "type value %d", (int)dt);
  TF_OperationGetAttrType(p, "dtype", &dt, s);
  CHECK(TF_GetCode(s) == TF_OK && dt == TF_FLOAT, "the op's own type attr %d", (int)dt);
  TF_DataType tl[2];
  TF_OperationGetAttrTypeList(p, "_tl", tl, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && tl[0] == TF_FLOAT && tl[1] == TF_INT32, "type list values");

  int64_t dims[2] = {0, 0};
  TF_OperationGetAttrShape(p, "shape", dims, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && dims[0] == 2 && dims[1] == -1, "shape value [%lld, %lld]",
        (long long)dims[0], (long long)dims[1]);
  int64_t* shape_dims[3];
  int shape_ranks[3];
  int64_t shape_storage[2];
  TF_OperationGetAttrShapeList(p, "_shl", shape_dims, shape_ranks, 3, shape_storage, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && shape_ranks[0] == 2 && shape_ranks[1] == -1 &&
            shape_ranks[2] == 0 && shape_dims[0][0] == 1 && shape_dims[0][1] == 2,
        "shape list values: ranks %d %d %d", shape_ranks[0], shape_ranks[1], shape_ranks[2]);
  TF_OperationGetAttrShapeList(p, "_shl", shape_dims, shape_ranks, 3, shape_storage, 1, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a shape list into too little storage");
  TF_Buffer* shape_proto = TF_NewBuffer();
  TF_OperationGetAttrTensorShapeProto(p, "shape", shape_proto, s);
  CHECK(TF_GetCode(s) == TF_OK && shape_proto->length > 0, "shape as a TensorShapeProto");
  TF_DeleteBuffer(shape_proto);

  TF_Tensor* t = NULL;
  TF_OperationGetAttrTensor(p, "_tensor", &t, s);
  CHECK(TF_GetCode(s) == TF_OK && t != NULL && TF_TensorType(t) == TF_INT32 &&
            TF_NumDims(t) == 1 && TF_Dim(t, 0) == 2 && ((int32_t*)TF_TensorData(t))[1] == 4,
        "tensor value");
  TF_DeleteTensor(t);
  TF_Tensor* tensors[2] = {NULL, NULL};
  TF_OperationGetAttrTensorList(p, "_tensors", tensors, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && tensors[0] != NULL && tensors[1] != NULL &&
            TF_TensorType(tensors[1]) == TF_FLOAT && *(float*)TF_TensorData(tensors[1]) == 9.5f,
        "tensor list values");
  TF_DeleteTensor(tensors[0]);
  TF_DeleteTensor(tensors[1]);

  TF_Buffer* proto = TF_NewBuffer();
  TF_OperationGetAttrValueProto(p, "_s", proto, s);
  CHECK(TF_GetCode(s) == TF_OK && BufferContains(proto, "hello"), "AttrValue proto of a string");
  TF_DeleteBuffer(proto);
  proto = TF_NewBuffer();
  TF_OperationGetAttrValueProto(p, "missing", proto, s);
  CHECK_CODE(s, TF_NOT_FOUND, "AttrValue proto of a missing attr");
  TF_DeleteBuffer(proto);

  int num_attrs = TF_OperationGetNumAttrs(p);
  CHECK(num_attrs == 17, "17 attrs (%d)", num_attrs);
  char name[32] = {0};
  int len = TF_OperationGetAttrNameLength(p, 0);
  TF_OperationGetAttrName(p, 0, name, s);
  CHECK(TF_GetCode(s) == TF_OK && len == 2 && memcmp(name, "_b", 2) == 0,
        "attr names in order: the first is \"%s\"", name);
  CHECK(TF_OperationGetAttrNameLength(p, num_attrs) == -1, "attr name length out of range");
  TF_DeleteGraph(g);
}

/* ---- input and output list lengths ------------------------------------------------------ */

static void CheckListLengths(TF_Status* s) {
  printf("-- list lengths\n");
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", s);
  TF_Operation* y = Placeholder(g, "y", s);
  TF_Output three[] = {{x, 0}, {y, 0}, {x, 0}};
  TF_OperationDescription* d = TF_NewOperation(g, "AddN", "sum");
  TF_AddInputList(d, three, 3);
  TF_Operation* sum = Finish(d, s, "AddN of three");
  d = TF_NewOperation(g, "IdentityN", "ids");
  TF_AddInputList(d, three, 2);
  TF_Operation* ids = Finish(d, s, "IdentityN of two");
  if (sum == NULL || ids == NULL) {
    TF_DeleteGraph(g);
    return;
  }
  CHECK(TF_OperationInputListLength(sum, "inputs", s) == 3 && TF_GetCode(s) == TF_OK,
        "AddN's N * T input list has 3");
  CHECK(TF_OperationOutputListLength(sum, "sum", s) == 1 && TF_GetCode(s) == TF_OK,
        "AddN's single output has 1");
  CHECK(TF_OperationOutputListLength(ids, "output", s) == 2 && TF_GetCode(s) == TF_OK,
        "IdentityN's type-list output has 2");
  CHECK(TF_OperationInputListLength(ids, "input", s) == 2, "IdentityN's type-list input has 2");
  CHECK(TF_OperationOutputListLength(sum, "nope", s) == -1, "an unknown arg gives -1");
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an unknown output arg");
  TF_OperationInputListLength(sum, "sum", s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "an output arg asked as an input arg");
  TF_DeleteGraph(g);
}

/* ---- consumers, inputs and control edges ------------------------------------------------ */

static void CheckEdges(TF_Status* s) {
  printf("-- consumers and control edges\n");
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", s);
  TF_Operation* y = Placeholder(g, "y", s);
  TF_Output xyx[] = {{x, 0}, {y, 0}, {x, 0}};
  TF_OperationDescription* d = TF_NewOperation(g, "AddN", "sum");
  TF_AddInputList(d, xyx, 3);
  TF_AddControlInput(d, y);
  TF_Operation* sum = Finish(d, s, "AddN");
  TF_Operation* both[] = {x, y};
  TF_Operation* n = NoOp(g, "n", both, 2, s);
  if (sum == NULL || n == NULL) {
    TF_DeleteGraph(g);
    return;
  }
  TF_Output x0 = {x, 0};
  CHECK(TF_OperationOutputNumConsumers(x0) == 2, "x:0 has 2 consumers (%d)",
        TF_OperationOutputNumConsumers(x0));
  TF_Input consumers[4];
  int num = TF_OperationOutputConsumers(x0, consumers, 4);
  CHECK(num == 2 && consumers[0].oper == sum && consumers[1].oper == sum &&
            consumers[0].index + consumers[1].index == 2,
        "x:0 feeds inputs 0 and 2 of sum");
  CHECK(TF_OperationOutputConsumers(x0, consumers, 1) == 2, "a short array still counts all");
  TF_Output bad = {x, 5};
  CHECK(TF_OperationOutputNumConsumers(bad) == 0, "an output that does not exist has none");

  CHECK(TF_OperationNumInputs(sum) == 3, "sum has 3 data inputs");
  TF_Input in1 = {sum, 1};
  CHECK(TF_OperationInput(in1).oper == y && TF_OperationInputType(in1) == TF_FLOAT,
        "TF_OperationInput and TF_OperationInputType");
  TF_Output all[3];
  TF_OperationAllInputs(sum, all, 3);
  CHECK(all[0].oper == x && all[1].oper == y && all[2].oper == x, "TF_OperationAllInputs");

  CHECK(TF_OperationNumControlInputs(n) == 2, "n has 2 control inputs");
  TF_Operation* controls[4];
  int nc = TF_OperationGetControlInputs(n, controls, 4);
  CHECK(nc == 2 && ((controls[0] == x && controls[1] == y) || (controls[0] == y && controls[1] == x)),
        "n's control inputs are x and y");
  CHECK(TF_OperationNumControlOutputs(y) == 2, "y is a control input of sum and n (%d)",
        TF_OperationNumControlOutputs(y));
  nc = TF_OperationGetControlOutputs(x, controls, 4);
  CHECK(nc == 1 && controls[0] == n, "x's only control output is n");
  CHECK(TF_OperationNumControlInputs(x) == 0 && TF_OperationNumControlOutputs(n) == 0,
        "no control edges where none were added");
  TF_DeleteGraph(g);
}

/* ---- GraphDef import options ------------------------------------------------------------ */

/* x (Placeholder) -> y (Identity); z (NoOp) after ^x. */
static TF_Buffer* SourceGraphDef(TF_Status* s) {
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", s);
  TF_Output x0 = {x, 0};
  Identity(g, "y", x0, s);
  NoOp(g, "z", &x, 1, s);
  TF_Buffer* def = TF_NewBuffer();
  TF_GraphToGraphDef(g, def, s);
  CHECK_OK(s, "the GraphDef to import");
  TF_DeleteGraph(g);
  return def;
}

static void CheckImport(TF_Status* s) {
  printf("-- GraphDef import options\n");
  TF_Buffer* def = SourceGraphDef(s);
  TF_Graph* g = TF_NewGraph();
  TF_Operation* feed = Placeholder(g, "feed", s);
  TF_Operation* dep = NoOp(g, "dep", NULL, 0, s);
  TF_Operation* ctl = NoOp(g, "ctl", NULL, 0, s);
  TF_Output feed0 = {feed, 0};

  TF_ImportGraphDefOptions* o = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(o, "imp");
  TF_ImportGraphDefOptionsSetDefaultDevice(o, "/device:CPU:0");
  TF_ImportGraphDefOptionsAddInputMapping(o, "x", 0, feed0);
  TF_ImportGraphDefOptionsAddInputMapping(o, "missing", 0, feed0);
  TF_ImportGraphDefOptionsRemapControlDependency(o, "x", ctl);
  TF_ImportGraphDefOptionsAddControlDependency(o, dep);
  TF_ImportGraphDefOptionsAddReturnOutput(o, "y", 0);
  TF_ImportGraphDefOptionsAddReturnOutput(o, "x", 0);
  TF_ImportGraphDefOptionsAddReturnOperation(o, "z");
  CHECK(TF_ImportGraphDefOptionsNumReturnOutputs(o) == 2 &&
            TF_ImportGraphDefOptionsNumReturnOperations(o) == 1,
        "the options count their return values");
  TF_ImportGraphDefResults* r = TF_GraphImportGraphDefWithResults(g, def, o, s);
  CHECK_OK(s, "TF_GraphImportGraphDefWithResults with every option");
  TF_Operation* ix = TF_GraphOperationByName(g, "imp/x");
  TF_Operation* iy = TF_GraphOperationByName(g, "imp/y");
  TF_Operation* iz = TF_GraphOperationByName(g, "imp/z");
  CHECK(ix != NULL && iy != NULL && iz != NULL, "prefixed names imp/x, imp/y, imp/z");
  if (r != NULL && ix != NULL && iy != NULL && iz != NULL) {
    CHECK(strcmp(TF_OperationDevice(ix), "/device:CPU:0") == 0, "default device: \"%s\"",
          TF_OperationDevice(ix));
    TF_Input y_in = {iy, 0};
    CHECK(TF_OperationInput(y_in).oper == feed, "input mapping: imp/y reads feed:0");
    CHECK(HasControlInput(iz, ctl) && !HasControlInput(iz, ix),
          "control remapping: imp/z runs after ctl instead of imp/x");
    CHECK(HasControlInput(ix, dep) && HasControlInput(iy, dep) && HasControlInput(iz, dep),
          "control dependency on every operation without imported inputs");
    int n = 0;
    TF_Output* outs = NULL;
    TF_ImportGraphDefResultsReturnOutputs(r, &n, &outs);
    CHECK(n == 2 && outs[0].oper == iy && outs[0].index == 0 && outs[1].oper == feed,
          "return outputs: imp/y:0 and the mapped x:0 (feed:0)");
    TF_Operation** opers = NULL;
    TF_ImportGraphDefResultsReturnOperations(r, &n, &opers);
    CHECK(n == 1 && opers[0] == iz, "return operations: imp/z");
    const char** names = NULL;
    int* indexes = NULL;
    TF_ImportGraphDefResultsMissingUnusedInputMappings(r, &n, &names, &indexes);
    CHECK(n == 1 && strcmp(names[0], "missing") == 0 && indexes[0] == 0,
          "missing unused input mappings: missing:0");
  }
  TF_DeleteImportGraphDefResults(r);

  /* The same prefix again fails (the names exist) unless the prefix may be made unique. */
  TF_DeleteImportGraphDefOptions(o);
  o = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(o, "imp");
  TF_GraphImportGraphDef(g, def, o, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a prefix already used");
  TF_ImportGraphDefOptionsSetUniquifyPrefix(o, 1);
  TF_GraphImportGraphDef(g, def, o, s);
  CHECK_OK(s, "the same prefix, made unique");
  CHECK(TF_GraphOperationByName(g, "imp_1/y") != NULL, "uniquified prefix: imp_1/y");

  /* Without a prefix, clashing names fail unless they may be made unique. */
  TF_DeleteImportGraphDefOptions(o);
  o = TF_NewImportGraphDefOptions();
  TF_GraphImportGraphDef(g, def, o, s);
  CHECK_OK(s, "a first import without a prefix");
  TF_GraphImportGraphDef(g, def, o, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "names already in the graph");
  TF_ImportGraphDefOptionsSetUniquifyNames(o, 1);
  TF_Output ret[1];
  TF_ImportGraphDefOptionsAddReturnOutput(o, "y", 0);
  TF_GraphImportGraphDefWithReturnOutputs(g, def, o, ret, 1, s);
  CHECK_OK(s, "TF_GraphImportGraphDefWithReturnOutputs with unique names");
  TF_Operation* y1 = TF_GraphOperationByName(g, "y_1");
  CHECK(y1 != NULL && ret[0].oper == y1, "uniquified names: y_1, returned");
  if (y1 != NULL) {
    TF_Input y1_in = {y1, 0};
    CHECK(TF_OperationInput(y1_in).oper == TF_GraphOperationByName(g, "x_1"),
          "y_1 reads the renamed x_1");
  }
  TF_GraphImportGraphDefWithReturnOutputs(g, def, o, ret, 2, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a return-output count that does not match");

  TF_DeleteImportGraphDefOptions(o);
  o = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(o, "bad");
  TF_ImportGraphDefOptionsAddReturnOutput(o, "nope", 0);
  TF_GraphImportGraphDefWithResults(g, def, o, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a return output the GraphDef lacks");
  CHECK(TF_GraphOperationByName(g, "bad/x") == NULL, "a failed import adds nothing");
  TF_DeleteImportGraphDefOptions(o);
  TF_DeleteBuffer(def);
  TF_DeleteGraph(g);
}

/* ---- tensor shapes ---------------------------------------------------------------------- */

static void CheckSetTensorShape(TF_Status* s) {
  printf("-- TF_GraphSetTensorShape\n");
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", s);
  TF_Output x0 = {x, 0};
  CHECK(TF_GraphGetTensorNumDims(g, x0, s) == -1, "a Placeholder without shape: unknown rank");
  int64_t partial[] = {-1, 3};
  TF_GraphSetTensorShape(g, x0, partial, 2, s);
  CHECK_OK(s, "set [-1, 3]");
  int64_t other[] = {2, -1};
  TF_GraphSetTensorShape(g, x0, other, 2, s);
  CHECK_OK(s, "set [2, -1]: merged");
  int64_t dims[2] = {0, 0};
  TF_GraphGetTensorShape(g, x0, dims, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && TF_GraphGetTensorNumDims(g, x0, s) == 2 && dims[0] == 2 &&
            dims[1] == 3,
        "the merged shape is [2, 3]: [%lld, %lld]", (long long)dims[0], (long long)dims[1]);
  int64_t clash[] = {4, 3};
  TF_GraphSetTensorShape(g, x0, clash, 2, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a dim that disagrees");
  int64_t rank3[] = {2, 3, 1};
  TF_GraphSetTensorShape(g, x0, rank3, 3, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a rank that disagrees");
  TF_GraphSetTensorShape(g, x0, NULL, -1, s);
  CHECK_OK(s, "an unknown rank changes nothing");
  TF_Operation* y = Identity(g, "y", x0, s);
  TF_Output y0 = {y, 0};
  dims[0] = dims[1] = 0;
  TF_GraphGetTensorShape(g, y0, dims, 2, s);
  CHECK(TF_GetCode(s) == TF_OK && dims[0] == 2 && dims[1] == 3,
        "a later consumer's shape function sees [2, 3]");
  TF_DeleteGraph(g);
}

/* ---- the op registry -------------------------------------------------------------------- */

static void CheckOpList(TF_Status* s) {
  printf("-- op registry\n");
  TF_Buffer* ops = TF_GetAllOpList();
  CHECK(ops != NULL && ops->length > 0 && BufferContains(ops, "MatMul") &&
            BufferContains(ops, "Placeholder"),
        "TF_GetAllOpList has MatMul and Placeholder (%zu bytes)", ops ? ops->length : 0);
  TF_DeleteBuffer(ops);
  TF_Graph* g = TF_NewGraph();
  TF_Buffer* op_def = TF_NewBuffer();
  TF_GraphGetOpDef(g, "MatMul", op_def, s);
  CHECK(TF_GetCode(s) == TF_OK && BufferContains(op_def, "transpose_a"),
        "TF_GraphGetOpDef(MatMul) names its attrs");
  TF_DeleteBuffer(op_def);
  op_def = TF_NewBuffer();
  TF_GraphGetOpDef(g, "NoSuchOp", op_def, s);
  CHECK_CODE(s, TF_NOT_FOUND, "TF_GraphGetOpDef of an unknown op");
  TF_DeleteBuffer(op_def);
  TF_DeleteGraph(g);
}

/* ---- tensors ---------------------------------------------------------------------------- */

static void CheckBitcast(TF_Status* s) {
  printf("-- TF_TensorBitcastFrom\n");
  int64_t dims[] = {2, 2};
  TF_Tensor* from = TF_AllocateTensor(TF_FLOAT, dims, 2, 4 * sizeof(float));
  float* v = (float*)TF_TensorData(from);
  v[0] = 1.0f;
  v[1] = 2.0f;
  v[2] = 3.0f;
  v[3] = 4.0f;
  CHECK(TF_TensorIsAligned(from), "allocated tensors are aligned");
  CHECK(TF_TensorElementCount(from) == 4, "4 elements");
  int64_t one[] = {1};
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, one, 1, 1);
  int64_t flat[] = {4};
  TF_TensorBitcastFrom(from, TF_INT32, to, flat, 1, s);
  CHECK_OK(s, "float [2, 2] as int32 [4]");
  CHECK(TF_TensorType(to) == TF_INT32 && TF_NumDims(to) == 1 && TF_Dim(to, 0) == 4 &&
            TF_TensorData(to) == TF_TensorData(from) && TF_TensorByteSize(to) == 16,
        "the bitcast shares the bytes");
  int32_t bits;
  memcpy(&bits, &v[0], sizeof(bits));
  CHECK(((int32_t*)TF_TensorData(to))[0] == bits, "the same bits");
  int64_t three[] = {3};
  TF_TensorBitcastFrom(from, TF_INT64, to, three, 1, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a shape of another byte size");
  TF_TensorBitcastFrom(from, TF_STRING, to, flat, 1, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "a type without a fixed size");
  CHECK(TF_TensorType(to) == TF_INT32, "a failed bitcast leaves `to` as it was");
  CHECK(TF_TensorMaybeMove(from) == NULL, "a shared tensor is not moved");
  TF_DeleteTensor(to);
  TF_Tensor* moved = TF_TensorMaybeMove(from);
  CHECK(moved != NULL && TF_TensorData(moved) == (void*)v, "an unshared tensor is moved");
  TF_DeleteTensor(moved != NULL ? moved : from);
}

/* ---- TF_TString ------------------------------------------------------------------------- */

static void CheckTString(void) {
  printf("-- TF_TString\n");
  CHECK(sizeof(TF_TString) == 24, "TF_TString is 24 bytes");
  TF_TString a, b;
  TF_TString_Init(&a);
  CHECK(TF_TString_GetType(&a) == TF_TSTR_SMALL && TF_TString_GetSize(&a) == 0,
        "Init: an empty SMALL string");
  TF_TString_Copy(&a, "hello", 5);
  CHECK(TF_TString_GetType(&a) == TF_TSTR_SMALL && TF_TString_GetSize(&a) == 5 &&
            strcmp(TF_TString_GetDataPointer(&a), "hello") == 0,
        "a short copy is SMALL and NUL-terminated");
  char large[100];
  memset(large, 'x', sizeof(large));
  large[99] = 'y';
  TF_TString_Copy(&a, large, sizeof(large));
  CHECK(TF_TString_GetType(&a) == TF_TSTR_LARGE && TF_TString_GetSize(&a) == 100 &&
            TF_TString_GetCapacity(&a) >= 100 &&
            memcmp(TF_TString_GetDataPointer(&a), large, 100) == 0,
        "a long copy is LARGE (capacity %zu)", TF_TString_GetCapacity(&a));
  TF_TString_Init(&b);
  TF_TString_Assign(&b, &a);
  CHECK(TF_TString_GetType(&b) == TF_TSTR_LARGE &&
            TF_TString_GetDataPointer(&b) != TF_TString_GetDataPointer(&a) &&
            memcmp(TF_TString_GetDataPointer(&b), large, 100) == 0,
        "Assign duplicates a LARGE string");
  TF_TString_AppendN(&b, "!", 1);
  CHECK(TF_TString_GetSize(&b) == 101 && TF_TString_GetDataPointer(&b)[100] == '!',
        "AppendN grows it");
  TF_TString_Dealloc(&b);
  CHECK(TF_TString_GetSize(&b) == 0, "Dealloc leaves it empty");
  const char* text = "a view over caller memory";
  TF_TString_AssignView(&b, text, strlen(text));
  CHECK(TF_TString_GetType(&b) == TF_TSTR_VIEW && TF_TString_GetDataPointer(&b) == text &&
            TF_TString_GetSize(&b) == strlen(text) && TF_TString_GetCapacity(&b) == 0,
        "AssignView: a VIEW of the caller's bytes");
  char* w = TF_TString_GetMutableDataPointer(&b);
  CHECK(w != text && TF_TString_GetType(&b) == TF_TSTR_LARGE && memcmp(w, text, strlen(text)) == 0,
        "writing a VIEW copies it first");
  TF_TString_Move(&a, &b);
  CHECK(TF_TString_GetSize(&a) == strlen(text) && TF_TString_GetSize(&b) == 0,
        "Move takes the buffer and empties the source");
  TF_TString_Resize(&a, 3, 'z');
  CHECK(TF_TString_GetType(&a) == TF_TSTR_SMALL && strcmp(TF_TString_GetDataPointer(&a), "a v") == 0,
        "shrinking below 23 bytes goes back to SMALL");
  TF_TString_Dealloc(&a);
  TF_TString_Dealloc(&b);

  /* The exported functions, for bindings that call by symbol. */
  TF_TString c;
  TF_StringInit(&c);
  TF_StringCopy(&c, large, sizeof(large));
  CHECK(TF_StringGetType(&c) == TF_TSTR_LARGE && TF_StringGetSize(&c) == 100 &&
            TF_StringGetCapacity(&c) >= 100 && TF_StringGetDataPointer(&c)[99] == 'y',
        "TF_StringCopy / TF_StringGet*");
  TF_StringDealloc(&c);
  TF_StringAssignView(&c, text, 4);
  CHECK(TF_StringGetType(&c) == TF_TSTR_VIEW && TF_StringGetSize(&c) == 4,
        "TF_StringAssignView");
  TF_StringDealloc(&c);
}

/* ---- TF_STRING tensors ------------------------------------------------------------------ */

/* Element i of a TF_STRING tensor has exactly `size` bytes equal to want[0, size). */
static int StringIs(const TF_Tensor* t, int i, const char* want, size_t size) {
  const TF_TString* e = (const TF_TString*)TF_TensorData(t);
  return e != NULL && TF_TString_GetSize(&e[i]) == size &&
         (size == 0 || memcmp(TF_TString_GetDataPointer(&e[i]), want, size) == 0);
}

/* A TF_NewTensor deallocator: the elements are the caller's to free, then the array. */
static void FreeStrings(void* data, size_t len, void* arg) {
  TF_TString* e = (TF_TString*)data;
  size_t i;
  for (i = 0; i < len / sizeof(TF_TString); ++i) TF_TString_Dealloc(&e[i]);
  free(data);
  ++*(int*)arg;
}

static void CheckStringTensors(TF_Status* s) {
  printf("-- TF_STRING tensors\n");
  int64_t dims[] = {2, 2};
  const size_t len = 4 * sizeof(TF_TString);
  CHECK(TF_DataTypeSize(TF_STRING) == 0, "TF_DataTypeSize(TF_STRING) is 0, as in TensorFlow");
  CHECK(TF_AllocateTensor(TF_STRING, dims, 2, len - 1) == NULL &&
            TF_AllocateTensor(TF_STRING, dims, 2, 4) == NULL &&
            TF_AllocateTensor(TF_STRING, dims, 2, len + sizeof(TF_TString)) == NULL,
        "TF_AllocateTensor refuses a len other than 4 * sizeof(TF_TString)");
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 2, len);
  CHECK(t != NULL, "TF_AllocateTensor(TF_STRING, [2, 2])");
  if (t == NULL) return;
  CHECK(TF_TensorType(t) == TF_STRING && TF_NumDims(t) == 2 && TF_Dim(t, 0) == 2 &&
            TF_Dim(t, 1) == 2 && TF_TensorElementCount(t) == 4 && TF_TensorByteSize(t) == len &&
            TF_TensorIsAligned(t),
        "type, shape, %zu bytes of TF_TString, aligned", TF_TensorByteSize(t));
  TF_TString* e = (TF_TString*)TF_TensorData(t);
  CHECK(StringIs(t, 0, "", 0) && StringIs(t, 3, "", 0) && TF_TString_GetType(&e[3]) == TF_TSTR_SMALL,
        "the elements start empty");
  char large[1000];
  size_t i;
  for (i = 0; i < sizeof(large); ++i) large[i] = (char)('a' + i % 26);
  const char nul[] = {'n', '\0', 'u', '\0', 'l'};
  const char fits[] = "exactly 22 bytes long.";  /* TF_TString_SmallCapacity */
  TF_TString_Copy(&e[0], "small", 5);
  TF_TString_Copy(&e[1], large, sizeof(large));
  TF_TString_Copy(&e[2], nul, sizeof(nul));
  TF_TString_Copy(&e[3], fits, 22);
  CHECK(TF_TString_GetType(&e[1]) == TF_TSTR_LARGE && TF_TString_GetType(&e[3]) == TF_TSTR_SMALL,
        "filled: SMALL, LARGE (1000 bytes), embedded NULs, 22 bytes inline");

  /* Through a TF_STRING Placeholder and an Identity, and back. */
  TF_Graph* g = TF_NewGraph();
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "sx");
  TF_SetAttrType(d, "dtype", TF_STRING);
  TF_Operation* x = Finish(d, s, "a TF_STRING Placeholder");
  TF_Output x0 = {x, 0};
  TF_Operation* y = Identity(g, "sy", x0, s);
  TF_Output y0 = {y, 0};
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  CHECK_OK(s, "TF_NewSession");
  TF_Tensor* out = NULL;
  TF_SessionRun(sess, NULL, &x0, &t, 1, &y0, &out, 1, NULL, 0, NULL, s);
  CHECK_OK(s, "feed [2, 2] strings, fetch their Identity");
  if (out != NULL) {
    CHECK(TF_TensorType(out) == TF_STRING && TF_NumDims(out) == 2 && TF_Dim(out, 0) == 2 &&
              TF_Dim(out, 1) == 2 && TF_TensorByteSize(out) == len,
          "the fetched tensor: TF_STRING [2, 2] of TF_TString");
    CHECK(StringIs(out, 0, "small", 5), "element 0: \"small\"");
    CHECK(StringIs(out, 1, large, sizeof(large)), "element 1: the 1000 bytes");
    CHECK(StringIs(out, 2, nul, sizeof(nul)), "element 2: 5 bytes with NULs in them");
    CHECK(StringIs(out, 3, fits, 22), "element 3: 22 bytes");
    CHECK(TF_TString_GetDataPointer(&((TF_TString*)TF_TensorData(out))[1]) !=
              TF_TString_GetDataPointer(&e[1]),
          "the fetched strings are copies");
    /* Fetched strings are the library's: TF_TensorMaybeMove takes them, TF_DeleteTensor frees. */
    void* data = TF_TensorData(out);
    TF_Tensor* moved = TF_TensorMaybeMove(out);
    CHECK(moved != NULL && TF_TensorData(moved) == data && StringIs(moved, 1, large, sizeof(large)),
          "TF_TensorMaybeMove of a fetched string tensor");
    out = moved;
    TF_Tensor* to = TF_AllocateTensor(TF_INT8, dims, 2, 4);
    int64_t flat[] = {4 * (int64_t)sizeof(TF_TString)};
    TF_TensorBitcastFrom(out, TF_UINT8, to, flat, 1, s);
    CHECK_CODE(s, TF_INVALID_ARGUMENT, "TF_TensorBitcastFrom of a string tensor");
    TF_DeleteTensor(to);
    TF_DeleteTensor(out);
  }

  /* The caller's TF_TString array: its deallocator runs once, and frees the elements. */
  int frees = 0;
  TF_TString* mine = (TF_TString*)malloc(2 * sizeof(TF_TString));
  TF_TString_Init(&mine[0]);
  TF_TString_Init(&mine[1]);
  TF_TString_Copy(&mine[0], large, 200);
  TF_TString_AssignView(&mine[1], "view", 4);
  int64_t two[] = {2};
  CHECK(TF_NewTensor(TF_STRING, two, 1, mine, 2 * sizeof(TF_TString) - 1, FreeStrings, &frees) ==
                NULL && frees == 0,
        "TF_NewTensor refuses too short a len, without calling the deallocator");
  TF_Tensor* wrapped = TF_NewTensor(TF_STRING, two, 1, mine, 2 * sizeof(TF_TString), FreeStrings,
                                    &frees);
  CHECK(wrapped != NULL && TF_TensorData(wrapped) == (void*)mine, "TF_NewTensor wraps the array");
  TF_Tensor* wrapped_out = NULL;
  TF_SessionRun(sess, NULL, &x0, &wrapped, 1, &y0, &wrapped_out, 1, NULL, 0, NULL, s);
  CHECK_OK(s, "feed a TF_NewTensor string tensor");
  TF_DeleteTensor(wrapped);
  CHECK(frees == 1, "deleting it calls the deallocator once (%d)", frees);
  if (wrapped_out != NULL) {
    CHECK(StringIs(wrapped_out, 0, large, 200) && StringIs(wrapped_out, 1, "view", 4),
          "its strings came back, the caller's memory gone");
    TF_DeleteTensor(wrapped_out);
  }

  /* A Const of strings: TF_SetAttrTensor, fetched, and read back from the attr. */
  d = TF_NewOperation(g, "Const", "sc");
  TF_SetAttrType(d, "dtype", TF_STRING);
  TF_SetAttrTensor(d, "value", t, s);
  CHECK_OK(s, "TF_SetAttrTensor of a string tensor");
  TF_Tensor* list[] = {t, t};
  TF_SetAttrTensorList(d, "_strings", list, 2, s);
  CHECK_OK(s, "TF_SetAttrTensorList of string tensors");
  TF_Operation* c = Finish(d, s, "a Const of strings");
  if (c != NULL) {
    TF_Output c0 = {c, 0};
    TF_SessionRun(sess, NULL, NULL, NULL, 0, &c0, &out, 1, NULL, 0, NULL, s);
    CHECK_OK(s, "fetch the Const");
    if (out != NULL) {
      CHECK(TF_NumDims(out) == 2 && StringIs(out, 0, "small", 5) &&
                StringIs(out, 1, large, sizeof(large)) && StringIs(out, 2, nul, sizeof(nul)) &&
                StringIs(out, 3, fits, 22),
            "the Const's strings");
      TF_DeleteTensor(out);
    }
    TF_Tensor* attr = NULL;
    TF_OperationGetAttrTensor(c, "value", &attr, s);
    CHECK_OK(s, "TF_OperationGetAttrTensor of the Const");
    if (attr != NULL) {
      CHECK(TF_TensorType(attr) == TF_STRING && TF_Dim(attr, 1) == 2 &&
                StringIs(attr, 1, large, sizeof(large)) && StringIs(attr, 2, nul, sizeof(nul)),
            "the attr's strings");
      TF_DeleteTensor(attr);
    }
    TF_Tensor* attrs[2] = {NULL, NULL};
    TF_OperationGetAttrTensorList(c, "_strings", attrs, 2, s);
    CHECK(TF_GetCode(s) == TF_OK && attrs[0] != NULL && attrs[1] != NULL &&
              StringIs(attrs[1], 0, "small", 5),
          "TF_OperationGetAttrTensorList of string tensors");
    TF_DeleteTensor(attrs[0]);
    TF_DeleteTensor(attrs[1]);
  }

  /* A malformed element (a SMALL size over 22) is refused where it crosses. */
  e[0].u.smll.size = (uint8_t)((30 << 2) | TF_TSTR_SMALL);
  TF_SessionRun(sess, NULL, &x0, &t, 1, &y0, &out, 1, NULL, 0, NULL, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "feeding a malformed TF_TString");
  d = TF_NewOperation(g, "Const", "bad");
  TF_SetAttrType(d, "dtype", TF_STRING);
  TF_SetAttrTensor(d, "value", t, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "TF_SetAttrTensor of a malformed TF_TString");
  TF_FinishOperation(d, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "and TF_FinishOperation after it");
  TF_TString_Init(&e[0]);

  TF_DeleteTensor(t); /* Frees the 1000-byte element. */
  TF_DeleteSession(sess, s);
  CHECK_OK(s, "TF_DeleteSession");
  TF_DeleteSessionOptions(opts);
  TF_DeleteGraph(g);
}

/* ---- libraries and partial runs --------------------------------------------------------- */

static void CheckLoadLibrary(TF_Status* s) {
  printf("-- TF_LoadLibrary\n");
  TF_Library* lib = TF_LoadLibrary("/nonexistent/libno_such_ops.so", s);
  CHECK(lib == NULL, "a missing file gives no handle");
  CHECK_CODE(s, TF_NOT_FOUND, "a missing library");
  TF_DeleteLibraryHandle(NULL);
}

static void CheckPartialRun(TF_Status* s) {
  printf("-- partial runs and a full run\n");
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", s);
  TF_Output x0 = {x, 0};
  TF_Operation* y = Identity(g, "y", x0, s);
  TF_Output y0 = {y, 0};
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  CHECK_OK(s, "TF_NewSession");
  const char* handle = NULL;
  TF_SessionPRunSetup(sess, &x0, 1, &y0, 1, NULL, 0, &handle, s);
  CHECK_OK(s, "TF_SessionPRunSetup");
  CHECK(handle != NULL, "a partial-run handle");
  /* y needs x: fetching it first is refused, and the outputs read NULL. */
  TF_Tensor* out = (TF_Tensor*)1;
  TF_SessionPRun(sess, handle, NULL, NULL, 0, &y0, &out, 1, NULL, 0, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "TF_SessionPRun fetching y before x is fed");
  CHECK(out == NULL, "TF_SessionPRun's outputs read NULL");
  TF_Tensor* xv = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  *(float*)TF_TensorData(xv) = -4.0f;
  TF_SessionPRun(sess, handle, &x0, &xv, 1, NULL, NULL, 0, NULL, 0, s);
  CHECK_OK(s, "TF_SessionPRun feeding x = -4");
  TF_SessionPRun(sess, handle, NULL, NULL, 0, &y0, &out, 1, NULL, 0, s);
  CHECK(TF_GetCode(s) == TF_OK && out != NULL && *(float*)TF_TensorData(out) == -4.0f,
        "a second TF_SessionPRun fetches y = -4: %s", TF_Message(s));
  if (TF_GetCode(s) == TF_OK) TF_DeleteTensor(out);
  TF_SessionPRun(sess, handle, NULL, NULL, 0, &y0, &out, 1, NULL, 0, s);
  CHECK_CODE(s, TF_INVALID_ARGUMENT, "the finished partial run's handle");
  TF_DeleteTensor(xv);
  TF_DeletePRunHandle(handle);

  TF_Tensor* in = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  *(float*)TF_TensorData(in) = 2.5f;
  TF_SessionRun(sess, NULL, &x0, &in, 1, &y0, &out, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_OK && out != NULL && *(float*)TF_TensorData(out) == 2.5f,
        "TF_SessionRun through the TensorFlow-layout headers: %s", TF_Message(s));
  TF_DeleteTensor(in);
  if (TF_GetCode(s) == TF_OK) TF_DeleteTensor(out);
  TF_DeleteSession(sess, s);
  CHECK_OK(s, "TF_DeleteSession");
  TF_DeleteSessionOptions(opts);
  TF_DeleteGraph(g);
}

int main(void) {
  TF_Status* s = TF_NewStatus();
  CHECK(strlen(TF_Version()) > 0 && strstr(TF_Version(), "sluice") == NULL,
        "TF_Version is the bare version: \"%s\"", TF_Version());
  CheckAttrs(s);
  CheckListLengths(s);
  CheckEdges(s);
  CheckImport(s);
  CheckSetTensorShape(s);
  CheckOpList(s);
  CheckBitcast(s);
  CheckTString();
  CheckStringTensors(s);
  CheckLoadLibrary(s);
  CheckPartialRun(s);
  TF_DeleteStatus(s);
  return CheckSummary();
}
