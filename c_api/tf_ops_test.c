/* TensorFlow's ops through TensorFlow's C API: graphs built with TensorFlow's op names,
 * inputs and attrs (ConcatV2 with its axis input, Cast with SrcT/DstT, Sum with
 * reduction_indices, ...) run and give the values TensorFlow documents; and TF_AddGradients.
 * Every expected value is worked out by hand in the comments. Built like tf_layout_test.c:
 * `-I c_api/include -ltensorflow` only. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensorflow/c/c_api.h"
#include "c_check.h"




static TF_Output Out(TF_Operation* op, int i) {
  TF_Output o = {op, i};
  return o;
}

static TF_Operation* Finish(TF_OperationDescription* d, TF_Status* s, const char* what) {
  TF_Operation* op = TF_FinishOperation(d, s);
  CHECK_OK(s, what);
  return op;
}

static TF_Operation* ConstTensor(TF_Graph* g, const char* name, TF_Tensor* t, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t, s);
  TF_SetAttrType(d, "dtype", TF_TensorType(t));
  TF_DeleteTensor(t);
  return Finish(d, s, name);
}

static TF_Operation* FloatConst(TF_Graph* g, const char* name, const float* v, const int64_t* dims,
                                int ndims, TF_Status* s) {
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, ndims, (size_t)n * sizeof(float));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(float));
  return ConstTensor(g, name, t, s);
}

static TF_Operation* Int32Const(TF_Graph* g, const char* name, const int32_t* v, const int64_t* dims,
                                int ndims, TF_Status* s) {
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_INT32, dims, ndims, (size_t)n * sizeof(int32_t));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(int32_t));
  return ConstTensor(g, name, t, s);
}

static TF_Operation* Unary(TF_Graph* g, const char* op, const char* name, TF_Output x, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  return Finish(d, s, name);
}

static TF_Operation* Binary(TF_Graph* g, const char* op, const char* name, TF_Output x, TF_Output y,
                            TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  TF_AddInput(d, y);
  return Finish(d, s, name);
}

/* Runs the graph for `n` fetches (no feeds); outs must be freed by the caller. */
static int Run(TF_Graph* g, TF_Output* fetches, TF_Tensor** outs, int n, TF_Status* s) {
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  int ok = TF_GetCode(s) == TF_OK;
  if (ok) {
    TF_SessionRun(sess, NULL, NULL, NULL, 0, fetches, outs, n, NULL, 0, NULL, s);
    ok = TF_GetCode(s) == TF_OK;
    CHECK(ok, "TF_SessionRun: %s", TF_Message(s));
    TF_Status* close = TF_NewStatus();
    TF_DeleteSession(sess, close);
    TF_DeleteStatus(close);
  }
  TF_DeleteSessionOptions(opts);
  return ok;
}

static int FloatsAre(const TF_Tensor* t, const float* want, int n) {
  int i;
  if (t == NULL || TF_TensorType(t) != TF_FLOAT || TF_TensorElementCount(t) != n) return 0;
  for (i = 0; i < n; ++i) {
    if (fabsf(((const float*)TF_TensorData(t))[i] - want[i]) > 1e-5f) return 0;
  }
  return 1;
}

static int ShapeIs(const TF_Tensor* t, const int64_t* dims, int ndims) {
  int i;
  if (t == NULL || TF_NumDims(t) != ndims) return 0;
  for (i = 0; i < ndims; ++i) {
    if (TF_Dim(t, i) != dims[i]) return 0;
  }
  return 1;
}

/* ConcatV2, Concat, Pack, Transpose, Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size, Rank,
 * Fill, ZerosLike, OnesLike, Cast, Range and SelectV2, with TensorFlow's signatures. */
static void CheckArrayOps(TF_Status* s) {
  printf("-- TensorFlow array ops\n");
  TF_Graph* g = TF_NewGraph();
  const float av[] = {1, 2, 3, 4, 5, 6};
  const int64_t d23[] = {2, 3};
  TF_Operation* a = FloatConst(g, "a", av, d23, 2, s);
  const float bv[] = {7, 8};
  const int64_t d21[] = {2, 1};
  TF_Operation* b = FloatConst(g, "b", bv, d21, 2, s);
  const int32_t one = 1;
  TF_Operation* axis1 = Int32Const(g, "axis1", &one, NULL, 0, s);
  const int32_t zero = 0;
  TF_Operation* axis0 = Int32Const(g, "axis0", &zero, NULL, 0, s);

  /* ConcatV2([a, b], axis=1): rows [1 2 3 7], [4 5 6 8]. */
  TF_OperationDescription* d = TF_NewOperation(g, "ConcatV2", "concat_v2");
  TF_Output ab[] = {Out(a, 0), Out(b, 0)};
  TF_AddInputList(d, ab, 2);
  TF_AddInput(d, Out(axis1, 0));
  TF_Operation* concat_v2 = Finish(d, s, "ConcatV2");
  /* Concat(concat_dim=1, [a, b]): the same, with the axis first. */
  d = TF_NewOperation(g, "Concat", "concat");
  TF_AddInput(d, Out(axis1, 0));
  TF_AddInputList(d, ab, 2);
  TF_Operation* concat = Finish(d, s, "Concat");
  /* Pack([a, a], axis=1): shape [2, 2, 3]; [0][1] is a's row 0. */
  d = TF_NewOperation(g, "Pack", "pack");
  TF_Output aa[] = {Out(a, 0), Out(a, 0)};
  TF_AddInputList(d, aa, 2);
  TF_SetAttrInt(d, "axis", 1);
  TF_Operation* pack = Finish(d, s, "Pack");
  /* Transpose(a, perm=[1, 0]): [[1 4] [2 5] [3 6]]. */
  const int32_t perm[] = {1, 0};
  const int64_t d2[] = {2};
  TF_Operation* perm_op = Int32Const(g, "perm", perm, d2, 1, s);
  TF_Operation* transpose = Binary(g, "Transpose", "transpose", Out(a, 0), Out(perm_op, 0), s);
  /* Reshape(a, [3, -1]) with int32 shape: [3, 2]. */
  const int32_t shape32[] = {3, -1};
  TF_Operation* shape_op = Int32Const(g, "shape", shape32, d2, 1, s);
  TF_Operation* reshape = Binary(g, "Reshape", "reshape", Out(a, 0), Out(shape_op, 0), s);
  /* ExpandDims(a, 0): [1, 2, 3]; then Squeeze with squeeze_dims=[0]: back to [2, 3]. */
  TF_Operation* expand = Binary(g, "ExpandDims", "expand", Out(a, 0), Out(axis0, 0), s);
  d = TF_NewOperation(g, "Squeeze", "squeeze");
  TF_AddInput(d, Out(expand, 0));
  const int64_t sq[] = {0};
  TF_SetAttrIntList(d, "squeeze_dims", sq, 1);
  TF_Operation* squeeze = Finish(d, s, "Squeeze");
  /* Shape (int32 by default), ShapeN, Size, Rank. */
  TF_Operation* shape = Unary(g, "Shape", "shape_of_a", Out(a, 0), s);
  d = TF_NewOperation(g, "ShapeN", "shape_n");
  TF_AddInputList(d, ab, 2);
  TF_SetAttrType(d, "out_type", TF_INT64);
  TF_Operation* shape_n = Finish(d, s, "ShapeN");
  TF_Operation* size = Unary(g, "Size", "size", Out(a, 0), s);
  TF_Operation* rank = Unary(g, "Rank", "rank", Out(a, 0), s);
  /* Fill([2, 2], 0.5); ZerosLike(b); OnesLike(b). */
  const int32_t dims22[] = {2, 2};
  TF_Operation* dims_op = Int32Const(g, "dims", dims22, d2, 1, s);
  const float half = 0.5f;
  TF_Operation* half_op = FloatConst(g, "half", &half, NULL, 0, s);
  TF_Operation* fill = Binary(g, "Fill", "fill", Out(dims_op, 0), Out(half_op, 0), s);
  TF_Operation* zeros = Unary(g, "ZerosLike", "zeros", Out(b, 0), s);
  TF_Operation* ones = Unary(g, "OnesLike", "ones", Out(b, 0), s);
  /* Cast(a) float -> int32 with TensorFlow's SrcT/DstT attrs (SrcT inferred). */
  d = TF_NewOperation(g, "Cast", "cast");
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrType(d, "DstT", TF_INT32);
  TF_Operation* cast = Finish(d, s, "Cast");
  /* Range(1, 10, 3): [1 4 7]. */
  const int32_t r1 = 1, r10 = 10, r3 = 3;
  TF_Operation* start = Int32Const(g, "start", &r1, NULL, 0, s);
  TF_Operation* limit = Int32Const(g, "limit", &r10, NULL, 0, s);
  TF_Operation* delta = Int32Const(g, "delta", &r3, NULL, 0, s);
  d = TF_NewOperation(g, "Range", "range");
  TF_AddInput(d, Out(start, 0));
  TF_AddInput(d, Out(limit, 0));
  TF_AddInput(d, Out(delta, 0));
  TF_Operation* range = Finish(d, s, "Range");

  TF_Output fetches[] = {Out(concat_v2, 0), Out(concat, 0), Out(pack, 0),     Out(transpose, 0),
                         Out(reshape, 0),   Out(squeeze, 0), Out(shape, 0),   Out(shape_n, 0),
                         Out(shape_n, 1),   Out(size, 0),    Out(rank, 0),    Out(fill, 0),
                         Out(zeros, 0),     Out(ones, 0),    Out(cast, 0),    Out(range, 0)};
  enum { kN = sizeof(fetches) / sizeof(fetches[0]) };
  TF_Tensor* out[kN] = {0};
  if (Run(g, fetches, out, kN, s)) {
    const float cat[] = {1, 2, 3, 7, 4, 5, 6, 8};
    const int64_t d24[] = {2, 4};
    CHECK(FloatsAre(out[0], cat, 8) && ShapeIs(out[0], d24, 2), "ConcatV2 joins along its axis input");
    CHECK(FloatsAre(out[1], cat, 8) && ShapeIs(out[1], d24, 2), "Concat reads concat_dim first");
    const float packed[] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
    const int64_t d223[] = {2, 2, 3};
    CHECK(FloatsAre(out[2], packed, 12) && ShapeIs(out[2], d223, 3), "Pack stacks on a new axis 1");
    const float tr[] = {1, 4, 2, 5, 3, 6};
    const int64_t d32[] = {3, 2};
    CHECK(FloatsAre(out[3], tr, 6) && ShapeIs(out[3], d32, 2), "Transpose reads perm as an input");
    CHECK(FloatsAre(out[4], av, 6) && ShapeIs(out[4], d32, 2), "Reshape with an int32 shape and -1");
    CHECK(FloatsAre(out[5], av, 6) && ShapeIs(out[5], d23, 2), "ExpandDims then Squeeze(squeeze_dims=[0])");
    CHECK(out[6] != NULL && TF_TensorType(out[6]) == TF_INT32 && ((int32_t*)TF_TensorData(out[6]))[0] == 2 &&
              ((int32_t*)TF_TensorData(out[6]))[1] == 3,
          "Shape is int32 [2 3]");
    CHECK(out[7] != NULL && TF_TensorType(out[7]) == TF_INT64 && ((int64_t*)TF_TensorData(out[7]))[1] == 3 &&
              out[8] != NULL && ((int64_t*)TF_TensorData(out[8]))[0] == 2 && ((int64_t*)TF_TensorData(out[8]))[1] == 1,
          "ShapeN(out_type=int64) gives [2 3] and [2 1]");
    CHECK(out[9] != NULL && TF_NumDims(out[9]) == 0 && *(int32_t*)TF_TensorData(out[9]) == 6, "Size is 6");
    CHECK(out[10] != NULL && *(int32_t*)TF_TensorData(out[10]) == 2, "Rank is 2");
    const float filled[] = {0.5f, 0.5f, 0.5f, 0.5f};
    CHECK(FloatsAre(out[11], filled, 4), "Fill([2 2], 0.5)");
    const float z[] = {0, 0}, o[] = {1, 1};
    CHECK(FloatsAre(out[12], z, 2) && FloatsAre(out[13], o, 2), "ZerosLike and OnesLike");
    CHECK(out[14] != NULL && TF_TensorType(out[14]) == TF_INT32 && ((int32_t*)TF_TensorData(out[14]))[5] == 6,
          "Cast(DstT=int32)");
    CHECK(out[15] != NULL && TF_TensorElementCount(out[15]) == 3 && ((int32_t*)TF_TensorData(out[15]))[2] == 7,
          "Range(1, 10, 3) is [1 4 7]");
  }
  int i;
  for (i = 0; i < kN; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

/* Math with TensorFlow's forms: reductions with reduction_indices and keep_dims, ArgMax with
 * a dimension input, FloorDiv/FloorMod on negative ints, Maximum, SquaredDifference, Square,
 * Relu6, comparisons and logical ops, Softmax over the last axis. */
static void CheckMathOps(TF_Status* s) {
  printf("-- TensorFlow math ops\n");
  TF_Graph* g = TF_NewGraph();
  const float av[] = {1, 5, 3, 4, 2, 6};
  const int64_t d23[] = {2, 3};
  TF_Operation* a = FloatConst(g, "a", av, d23, 2, s);
  const int32_t one = 1;
  TF_Operation* axis1 = Int32Const(g, "axis1", &one, NULL, 0, s);
  TF_OperationDescription* d = TF_NewOperation(g, "Sum", "sum");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(axis1, 0));
  TF_SetAttrBool(d, "keep_dims", 1);
  TF_Operation* sum = Finish(d, s, "Sum");
  TF_Operation* mean = Binary(g, "Mean", "mean", Out(a, 0), Out(axis1, 0), s);
  TF_Operation* max = Binary(g, "Max", "max", Out(a, 0), Out(axis1, 0), s);
  TF_Operation* argmax = Binary(g, "ArgMax", "argmax", Out(a, 0), Out(axis1, 0), s);
  const int32_t xv[] = {-7, 7, -7, 7};
  const int32_t yv[] = {2, -2, -2, 2};
  const int64_t d4[] = {4};
  TF_Operation* x = Int32Const(g, "x", xv, d4, 1, s);
  TF_Operation* y = Int32Const(g, "y", yv, d4, 1, s);
  TF_Operation* floordiv = Binary(g, "FloorDiv", "floordiv", Out(x, 0), Out(y, 0), s);
  TF_Operation* floormod = Binary(g, "FloorMod", "floormod", Out(x, 0), Out(y, 0), s);
  TF_Operation* maximum = Binary(g, "Maximum", "maximum", Out(x, 0), Out(y, 0), s);
  TF_Operation* sqdiff = Binary(g, "SquaredDifference", "sqdiff", Out(x, 0), Out(y, 0), s);
  TF_Operation* square = Unary(g, "Square", "square", Out(x, 0), s);
  TF_Operation* less = Binary(g, "Less", "less", Out(x, 0), Out(y, 0), s);
  TF_Operation* not_equal = Binary(g, "NotEqual", "not_equal", Out(x, 0), Out(y, 0), s);
  TF_Operation* both = Binary(g, "LogicalAnd", "both", Out(less, 0), Out(not_equal, 0), s);
  const float rv[] = {-1, 3, 9};
  const int64_t d3[] = {3};
  TF_Operation* r = FloatConst(g, "r", rv, d3, 1, s);
  TF_Operation* relu6 = Unary(g, "Relu6", "relu6", Out(r, 0), s);
  const float lv[] = {0, 0, 0, 1, 2, 3};
  TF_Operation* logits = FloatConst(g, "logits", lv, d23, 2, s);
  TF_Operation* softmax = Unary(g, "Softmax", "softmax", Out(logits, 0), s);

  TF_Output fetches[] = {Out(sum, 0),      Out(mean, 0),   Out(max, 0),  Out(argmax, 0),
                         Out(floordiv, 0), Out(floormod, 0), Out(maximum, 0), Out(sqdiff, 0),
                         Out(square, 0),   Out(both, 0),   Out(relu6, 0), Out(softmax, 0)};
  enum { kN = sizeof(fetches) / sizeof(fetches[0]) };
  TF_Tensor* out[kN] = {0};
  if (Run(g, fetches, out, kN, s)) {
    const float sums[] = {9, 12};
    const int64_t d21[] = {2, 1};
    CHECK(FloatsAre(out[0], sums, 2) && ShapeIs(out[0], d21, 2), "Sum(keep_dims) over axis 1: [[9] [12]]");
    const float means[] = {3, 4};
    const int64_t d2[] = {2};
    CHECK(FloatsAre(out[1], means, 2) && ShapeIs(out[1], d2, 1), "Mean drops the axis by default");
    const float maxes[] = {5, 6};
    CHECK(FloatsAre(out[2], maxes, 2), "Max over axis 1");
    CHECK(out[3] != NULL && TF_TensorType(out[3]) == TF_INT64 && ((int64_t*)TF_TensorData(out[3]))[0] == 1 &&
              ((int64_t*)TF_TensorData(out[3]))[1] == 2,
          "ArgMax(dimension=1) is int64 [1 2]");
    /* -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3, 7 // 2 = 3; remainders -7 - 2*-4 = 1, 7 - (-2)(-4) = -1, -1, 1. */
    const int32_t* fd = out[4] ? (const int32_t*)TF_TensorData(out[4]) : NULL;
    CHECK(fd && fd[0] == -4 && fd[1] == -4 && fd[2] == 3 && fd[3] == 3, "FloorDiv rounds toward -inf");
    const int32_t* fm = out[5] ? (const int32_t*)TF_TensorData(out[5]) : NULL;
    CHECK(fm && fm[0] == 1 && fm[1] == -1 && fm[2] == -1 && fm[3] == 1, "FloorMod takes the divisor's sign");
    const int32_t* mx = out[6] ? (const int32_t*)TF_TensorData(out[6]) : NULL;
    CHECK(mx && mx[0] == 2 && mx[1] == 7 && mx[2] == -2 && mx[3] == 7, "Maximum");
    const int32_t* sd = out[7] ? (const int32_t*)TF_TensorData(out[7]) : NULL;
    CHECK(sd && sd[0] == 81 && sd[1] == 81 && sd[2] == 25 && sd[3] == 25, "SquaredDifference");
    const int32_t* sq = out[8] ? (const int32_t*)TF_TensorData(out[8]) : NULL;
    CHECK(sq && sq[0] == 49 && sq[3] == 49, "Square");
    /* Less: T F T F; NotEqual: T T T T. */
    const unsigned char* bo = out[9] ? (const unsigned char*)TF_TensorData(out[9]) : NULL;
    CHECK(bo && TF_TensorType(out[9]) == TF_BOOL && bo[0] == 1 && bo[1] == 0 && bo[2] == 1 && bo[3] == 0,
          "Less, NotEqual and LogicalAnd");
    const float r6[] = {0, 3, 6};
    CHECK(FloatsAre(out[10], r6, 3), "Relu6 clips to [0, 6]");
    /* Row 0: 1/3 each; row 1: e^k / (1 + e + e^2). */
    const float e1 = 2.718281828f, e2 = 7.389056099f, z = 1 + 2.718281828f + 7.389056099f;
    const float sm[] = {1.f / 3, 1.f / 3, 1.f / 3, 1 / z, e1 / z, e2 / z};
    CHECK(FloatsAre(out[11], sm, 6), "Softmax over the last axis");
  }
  int i;
  for (i = 0; i < kN; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

/* TF_AddGradients as TensorFlow's Go binding uses it: y0 = Square(x), y1 = Square(y0).
 * At x = 3: dy0/dx = 2x = 6; dy1/dy0 = 2 y0 = 18; dy1/dx = 18 * 6 = 108; d(y0 + y1)/dx = 114. */
static void CheckGradients(TF_Status* s) {
  printf("-- TF_AddGradients\n");
  TF_Graph* g = TF_NewGraph();
  const float three = 3;
  TF_Operation* x = FloatConst(g, "x", &three, NULL, 0, s);
  TF_Operation* y0 = Unary(g, "Square", "y0", Out(x, 0), s);
  TF_Operation* y1 = Unary(g, "Square", "y1", Out(y0, 0), s);
  TF_Output xs[] = {Out(x, 0)};
  TF_Output ys[] = {Out(y0, 0), Out(y1, 0)};
  TF_Output d_x[1], d_sum[1], d_y0[1], d_chain[1];
  TF_AddGradients(g, &ys[0], 1, xs, 1, NULL, s, d_x);
  CHECK_OK(s, "TF_AddGradients(y0, x)");
  TF_AddGradients(g, ys, 2, xs, 1, NULL, s, d_sum);
  CHECK_OK(s, "TF_AddGradients([y0, y1], x): the ys' gradients are summed");
  /* Seeded: dy1/dy0 first, then d y0 / dx with that as y0's initial gradient. */
  TF_AddGradients(g, &ys[1], 1, &ys[0], 1, NULL, s, d_y0);
  CHECK_OK(s, "TF_AddGradients(y1, y0)");
  TF_AddGradients(g, &ys[0], 1, xs, 1, d_y0, s, d_chain);
  CHECK_OK(s, "TF_AddGradients(y0, x, dx = dy1/dy0)");
  CHECK(TF_OperationOutputType(d_x[0]) == TF_FLOAT, "the gradient is float");
  CHECK(strncmp(TF_OperationName(d_x[0].oper), "gradients", 9) == 0,
        "backward nodes go under \"gradients\": %s", TF_OperationName(d_x[0].oper));
  TF_Output named[1];
  TF_AddGradientsWithPrefix(g, "mine", &ys[0], 1, xs, 1, NULL, s, named);
  CHECK_OK(s, "TF_AddGradientsWithPrefix(\"mine\")");
  CHECK(strncmp(TF_OperationName(named[0].oper), "mine/", 5) == 0, "under the prefix: %s",
        TF_OperationName(named[0].oper));
  TF_AddGradientsWithPrefix(g, "mine", &ys[0], 1, xs, 1, NULL, s, named);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT, "a prefix already in use is refused: %s", TF_Message(s));

  TF_Output fetches[] = {d_x[0], d_sum[0], d_y0[0], d_chain[0]};
  TF_Tensor* out[4] = {0};
  if (Run(g, fetches, out, 4, s)) {
    const float six = 6, sum = 114, eighteen = 18, chain = 108;
    CHECK(FloatsAre(out[0], &six, 1), "d Square(x) / dx = 2x = 6");
    CHECK(FloatsAre(out[1], &sum, 1), "d (y0 + y1) / dx = 6 + 108");
    CHECK(FloatsAre(out[2], &eighteen, 1), "d y1 / d y0 = 18");
    CHECK(FloatsAre(out[3], &chain, 1), "seeded with dy1/dy0: 18 * 6 = 108");
  }
  int i;
  for (i = 0; i < 4; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

/* A reduction `op` of x over the int32 axes, keep_dims as given. */
static TF_Operation* Reduce(TF_Graph* g, const char* op, const char* name, TF_Output x, TF_Output axes, int keep,
                            TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  TF_AddInput(d, axes);
  TF_SetAttrBool(d, "keep_dims", (unsigned char)keep);
  return Finish(d, s, name);
}

/* The gradient of y (seeded with ones) with respect to each of xs, run; outs freed by the caller. */
static int GradientsOf(TF_Graph* g, TF_Operation* y, TF_Output* xs, int n, TF_Tensor** outs, const char* what,
                       TF_Status* s) {
  TF_Output yo = Out(y, 0);
  TF_Output dxs[4];
  TF_AddGradients(g, &yo, 1, xs, n, NULL, s, dxs);
  CHECK_OK(s, what);
  if (TF_GetCode(s) != TF_OK) return 0;
  return Run(g, dxs, outs, n, s);
}

static int CountOperations(TF_Graph* g) {
  size_t pos = 0;
  int n = 0;
  while (TF_GraphNextOperation(g, &pos) != NULL) ++n;
  return n;
}

/* TF_AddGradients through TensorFlow's reductions, array ops and MatMul, seeded with ones.
 * x = [[1 3 3] [2 0 2]]. */
static void CheckOpGradients(TF_Status* s) {
  printf("-- TF_AddGradients through TensorFlow's ops\n");
  TF_Graph* g = TF_NewGraph();
  const float xv[] = {1, 3, 3, 2, 0, 2};
  const int64_t d23[] = {2, 3};
  TF_Operation* x = FloatConst(g, "x", xv, d23, 2, s);
  TF_Output xo = Out(x, 0);
  const int32_t one = 1, minus1_0[] = {-1, 0}, zero = 0;
  const int64_t d2[] = {2};
  TF_Operation* axis1 = Int32Const(g, "axis1", &one, NULL, 0, s);
  TF_Operation* both = Int32Const(g, "both", minus1_0, d2, 1, s);
  TF_Operation* axis0 = Int32Const(g, "axis0", &zero, NULL, 0, s);
  TF_Tensor* out[4] = {0};
  int i;

  /* Max over axis 1 picks 3 in row 0 (twice: half the gradient each) and 2 in row 1 (twice). */
  TF_Operation* max = Reduce(g, "Max", "max", xo, Out(axis1, 0), 0, s);
  if (GradientsOf(g, max, &xo, 1, out, "TF_AddGradients through Max", s)) {
    const float want[] = {0, 0.5f, 0.5f, 0.5f, 0, 0.5f};
    CHECK(FloatsAre(out[0], want, 6), "d Max(x, 1) / dx splits ties: [[0 .5 .5] [.5 0 .5]]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;
  /* Mean over axes [-1, 0] of 6 elements: 1/6 each. */
  TF_Operation* mean = Reduce(g, "Mean", "mean", xo, Out(both, 0), 0, s);
  if (GradientsOf(g, mean, &xo, 1, out, "TF_AddGradients through Mean", s)) {
    const float want[] = {1.f / 6, 1.f / 6, 1.f / 6, 1.f / 6, 1.f / 6, 1.f / 6};
    CHECK(FloatsAre(out[0], want, 6), "d Mean(x, [-1 0]) / dx = 1/6");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;
  /* Prod over axis 0, dims kept: each element's gradient is the other row's element
   * ([2 0 2] for row 0, [1 3 3] for row 1), the zero's included. */
  TF_Operation* prod = Reduce(g, "Prod", "prod", xo, Out(axis0, 0), 1, s);
  if (GradientsOf(g, prod, &xo, 1, out, "TF_AddGradients through Prod(keep_dims)", s)) {
    const float want[] = {2, 0, 2, 1, 3, 3};
    CHECK(FloatsAre(out[0], want, 6), "d Prod(x, 0) / dx = the other row");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* Transpose(x, [1 0]) * w with w = [[1 2] [3 4] [5 6]]: dx[i][j] = w[j][i]. */
  const int32_t perm[] = {1, 0};
  TF_Operation* p = Int32Const(g, "perm", perm, d2, 1, s);
  TF_Operation* t = Binary(g, "Transpose", "t", xo, Out(p, 0), s);
  const float wv[] = {1, 2, 3, 4, 5, 6};
  const int64_t d32[] = {3, 2};
  TF_Operation* w = FloatConst(g, "w", wv, d32, 2, s);
  TF_Operation* tw = Binary(g, "Mul", "tw", Out(t, 0), Out(w, 0), s);
  if (GradientsOf(g, tw, &xo, 1, out, "TF_AddGradients through Transpose", s)) {
    const float want[] = {1, 3, 5, 2, 4, 6};
    CHECK(FloatsAre(out[0], want, 6), "d (Transpose(x) * w) / dx = w^T");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* ConcatV2([x, z], -1) * v, z = [[7] [8]], v = [[1 2 3 4] [5 6 7 8]]: x gets v's first three
   * columns, z the last. */
  const float zv[] = {7, 8};
  const int64_t d21[] = {2, 1};
  TF_Operation* z = FloatConst(g, "z", zv, d21, 2, s);
  const int32_t minus1 = -1;
  TF_Operation* last = Int32Const(g, "last", &minus1, NULL, 0, s);
  TF_OperationDescription* d = TF_NewOperation(g, "ConcatV2", "xz");
  TF_Output xz_in[] = {xo, Out(z, 0)};
  TF_AddInputList(d, xz_in, 2);
  TF_AddInput(d, Out(last, 0));
  TF_Operation* xz = Finish(d, s, "ConcatV2");
  const float vv[] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t d24[] = {2, 4};
  TF_Operation* v = FloatConst(g, "v", vv, d24, 2, s);
  TF_Operation* xzv = Binary(g, "Mul", "xzv", Out(xz, 0), Out(v, 0), s);
  if (GradientsOf(g, xzv, xz_in, 2, out, "TF_AddGradients through ConcatV2", s)) {
    const float want_x[] = {1, 2, 3, 5, 6, 7}, want_z[] = {4, 8};
    CHECK(FloatsAre(out[0], want_x, 6), "ConcatV2: x gets columns 0-2 of v");
    CHECK(FloatsAre(out[1], want_z, 2), "ConcatV2: z gets column 3 of v");
  }
  for (i = 0; i < 2; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
    out[i] = NULL;
  }

  /* Pack([a, b], axis=1) * u, a = [1 2], b = [3 4], u = [[1 2] [3 4]]: a gets u's column 0
   * [1 3], b column 1 [2 4]. */
  const float av[] = {1, 2}, bv[] = {3, 4}, uv[] = {1, 2, 3, 4};
  const int64_t d22[] = {2, 2};
  TF_Operation* a = FloatConst(g, "a", av, d2, 1, s);
  TF_Operation* b = FloatConst(g, "b", bv, d2, 1, s);
  TF_Operation* u = FloatConst(g, "u", uv, d22, 2, s);
  d = TF_NewOperation(g, "Pack", "ab");
  TF_Output ab_in[] = {Out(a, 0), Out(b, 0)};
  TF_AddInputList(d, ab_in, 2);
  TF_SetAttrInt(d, "axis", 1);
  TF_Operation* ab = Finish(d, s, "Pack");
  TF_Operation* abu = Binary(g, "Mul", "abu", Out(ab, 0), Out(u, 0), s);
  if (GradientsOf(g, abu, ab_in, 2, out, "TF_AddGradients through Pack", s)) {
    const float want_a[] = {1, 3}, want_b[] = {2, 4};
    CHECK(FloatsAre(out[0], want_a, 2) && FloatsAre(out[1], want_b, 2), "Pack(axis=1): columns of u");
  }
  for (i = 0; i < 2; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
    out[i] = NULL;
  }

  /* MatMul(A, B, transpose_b) with A = [[1 2]], B = [[3 4]]: y = 11, dA = B, dB = A. */
  const int64_t d12[] = {1, 2};
  TF_Operation* ma = FloatConst(g, "ma", av, d12, 2, s);
  TF_Operation* mb = FloatConst(g, "mb", bv, d12, 2, s);
  d = TF_NewOperation(g, "MatMul", "mm");
  TF_AddInput(d, Out(ma, 0));
  TF_AddInput(d, Out(mb, 0));
  TF_SetAttrBool(d, "transpose_b", 1);
  TF_Operation* mm = Finish(d, s, "MatMul(transpose_b)");
  TF_Output mm_in[] = {Out(ma, 0), Out(mb, 0)};
  if (GradientsOf(g, mm, mm_in, 2, out, "TF_AddGradients through MatMul(transpose_b)", s)) {
    CHECK(FloatsAre(out[0], bv, 2) && FloatsAre(out[1], av, 2), "MatMul(transpose_b): dA = B, dB = A");
  }
  for (i = 0; i < 2; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
    out[i] = NULL;
  }

  /* SquaredDifference(a, b): da = 2 (a - b) = [-4 -4], db = [4 4]. */
  TF_Operation* sd = Binary(g, "SquaredDifference", "sd", Out(a, 0), Out(b, 0), s);
  if (GradientsOf(g, sd, ab_in, 2, out, "TF_AddGradients through SquaredDifference", s)) {
    const float want_a[] = {-4, -4}, want_b[] = {4, 4};
    CHECK(FloatsAre(out[0], want_a, 2) && FloatsAre(out[1], want_b, 2), "SquaredDifference: +-2 (a - b)");
  }
  for (i = 0; i < 2; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
    out[i] = NULL;
  }

  /* Through an integer Cast nothing flows: d Cast(Cast(a, int32), float) / da = 0. */
  d = TF_NewOperation(g, "Cast", "a_int");
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrType(d, "DstT", TF_INT32);
  TF_Operation* a_int = Finish(d, s, "Cast to int32");
  d = TF_NewOperation(g, "Cast", "a_back");
  TF_AddInput(d, Out(a_int, 0));
  TF_SetAttrType(d, "DstT", TF_FLOAT);
  TF_Operation* a_back = Finish(d, s, "Cast to float");
  if (GradientsOf(g, a_back, ab_in, 1, out, "TF_AddGradients through an integer Cast", s)) {
    const float want[] = {0, 0};
    CHECK(FloatsAre(out[0], want, 2), "no gradient through int32: zeros");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* An op without a gradient (TensorFlow registers none for TruncateMod): UNIMPLEMENTED naming
   * it, and the graph keeps no half-built backward nodes. */
  const float three = 3;
  TF_Operation* c3 = FloatConst(g, "c3", &three, NULL, 0, s);
  TF_Operation* tm = Binary(g, "TruncateMod", "tm", Out(a, 0), Out(c3, 0), s);
  TF_Operation* sq = Unary(g, "Square", "sq", Out(tm, 0), s);
  const int before = CountOperations(g);
  TF_Output sq_out = Out(sq, 0), dnone[1];
  TF_AddGradients(g, &sq_out, 1, ab_in, 1, NULL, s, dnone);
  CHECK(TF_GetCode(s) == TF_UNIMPLEMENTED && strstr(TF_Message(s), "TruncateMod") != NULL,
        "a gradient through TruncateMod fails naming it: code %d, \"%s\"", (int)TF_GetCode(s), TF_Message(s));
  CHECK(CountOperations(g) == before, "and adds no operations (%d, was %d)", CountOperations(g), before);
  TF_DeleteGraph(g);
}

/* A 1-D TF_STRING Const of `n` strings. */
static TF_Operation* StringConst(TF_Graph* g, const char* name, const char** v, int n, TF_Status* s) {
  const int64_t dims[] = {n};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, (size_t)n * sizeof(TF_TString));
  TF_TString* p = (TF_TString*)TF_TensorData(t);
  int i;
  for (i = 0; i < n; ++i) {
    TF_TString_Init(&p[i]);
    TF_TString_Copy(&p[i], v[i], strlen(v[i]));
  }
  return ConstTensor(g, name, t, s);
}

static int StringAt(const TF_Tensor* t, int i, const char* want) {
  const TF_TString* p = (const TF_TString*)TF_TensorData(t);
  return TF_TString_GetSize(&p[i]) == strlen(want) && memcmp(TF_TString_GetDataPointer(&p[i]), want, strlen(want)) == 0;
}

/* The hash buckets TensorFlow documents: to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3)
 * is [0 2 2]; to_hash_bucket_strong(["Hello", "TF"], 3, key=[1, 2]) is [2 0]; and
 * AsString(StringToHashBucketFast("PleaseHashMe", 2^32)) is "1027741475" (the Go binding's
 * test). */
static void CheckStringOps(TF_Status* s) {
  printf("-- TensorFlow string ops\n");
  TF_Graph* g = TF_NewGraph();
  const char* words[] = {"Hello", "TensorFlow", "2.x"};
  TF_Operation* w = StringConst(g, "words", words, 3, s);
  TF_OperationDescription* d = TF_NewOperation(g, "StringToHashBucketFast", "fast");
  TF_AddInput(d, Out(w, 0));
  TF_SetAttrInt(d, "num_buckets", 3);
  TF_Operation* fast = Finish(d, s, "StringToHashBucketFast");
  const char* tf_words[] = {"Hello", "TF"};
  TF_Operation* tw = StringConst(g, "tf_words", tf_words, 2, s);
  d = TF_NewOperation(g, "StringToHashBucketStrong", "strong");
  TF_AddInput(d, Out(tw, 0));
  TF_SetAttrInt(d, "num_buckets", 3);
  const int64_t key[] = {1, 2};
  TF_SetAttrIntList(d, "key", key, 2);
  TF_Operation* strong = Finish(d, s, "StringToHashBucketStrong");
  const char* please[] = {"PleaseHashMe"};
  TF_Operation* p = StringConst(g, "please", please, 1, s);
  d = TF_NewOperation(g, "StringToHashBucketFast", "please_hash");
  TF_AddInput(d, Out(p, 0));
  TF_SetAttrInt(d, "num_buckets", (int64_t)1 << 32);
  TF_Operation* please_hash = Finish(d, s, "StringToHashBucketFast(2^32)");
  TF_Operation* as_string = Unary(g, "AsString", "as_string", Out(please_hash, 0), s);
  const float fv[] = {1.5f, -2.25f};
  const int64_t d2[] = {2};
  TF_Operation* f = FloatConst(g, "f", fv, d2, 1, s);
  d = TF_NewOperation(g, "AsString", "float_string");
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrInt(d, "precision", 2);
  TF_Operation* float_string = Finish(d, s, "AsString(precision=2)");
  TF_Output fetches[] = {Out(fast, 0), Out(strong, 0), Out(as_string, 0), Out(float_string, 0)};
  TF_Tensor* out[4] = {0};
  if (Run(g, fetches, out, 4, s)) {
    const int64_t* b = out[0] ? (const int64_t*)TF_TensorData(out[0]) : NULL;
    CHECK(b && b[0] == 0 && b[1] == 2 && b[2] == 2, "StringToHashBucketFast: [%lld %lld %lld], want [0 2 2]",
          b ? (long long)b[0] : -1LL, b ? (long long)b[1] : -1LL, b ? (long long)b[2] : -1LL);
    const int64_t* k = out[1] ? (const int64_t*)TF_TensorData(out[1]) : NULL;
    CHECK(k && k[0] == 2 && k[1] == 0, "StringToHashBucketStrong: [%lld %lld], want [2 0]",
          k ? (long long)k[0] : -1LL, k ? (long long)k[1] : -1LL);
    CHECK(out[2] != NULL && TF_TensorType(out[2]) == TF_STRING && StringAt(out[2], 0, "1027741475"),
          "AsString(StringToHashBucketFast(\"PleaseHashMe\", 2^32)) is \"1027741475\"");
    CHECK(out[3] != NULL && StringAt(out[3], 0, "1.50") && StringAt(out[3], 1, "-2.25"), "AsString(precision=2)");
  }
  int i;
  for (i = 0; i < 4; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

/* Runs `fetch` expecting an error: INVALID_ARGUMENT whose message holds `needle`. */
static void CheckRunFails(TF_Graph* g, TF_Output fetch, const char* needle, const char* what, TF_Status* s) {
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  TF_Tensor* out = NULL;
  if (TF_GetCode(s) == TF_OK) TF_SessionRun(sess, NULL, NULL, NULL, 0, &fetch, &out, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), needle) != NULL && out == NULL,
        "%s: code %d, \"%s\"", what, (int)TF_GetCode(s), TF_Message(s));
  if (out != NULL) TF_DeleteTensor(out);
  if (sess != NULL) {
    TF_Status* close = TF_NewStatus();
    TF_DeleteSession(sess, close);
    TF_DeleteStatus(close);
  }
  TF_DeleteSessionOptions(opts);
}

/* Bad input gets INVALID_ARGUMENT naming the problem: sizes past int64, negative dims, axes out
 * of range, bad attrs, no ys. */
static void CheckBadInput(TF_Status* s) {
  printf("-- bad input\n");
  TF_Graph* g = TF_NewGraph();
  const int64_t d3[] = {3};
  TF_Tensor* t = TF_AllocateTensor(TF_INT64, d3, 1, 3 * sizeof(int64_t));
  int64_t* huge = (int64_t*)TF_TensorData(t);
  huge[0] = (int64_t)1 << 62;
  huge[1] = 4;
  huge[2] = 1;
  TF_Operation* huge_dims = ConstTensor(g, "huge_dims", t, s);
  t = TF_AllocateTensor(TF_INT64, d3, 1, 3 * sizeof(int64_t));
  int64_t* neg = (int64_t*)TF_TensorData(t);
  neg[0] = 2;
  neg[1] = -1;
  neg[2] = 2;
  TF_Operation* neg_dims = ConstTensor(g, "neg_dims", t, s);
  const float one = 1;
  TF_Operation* v = FloatConst(g, "v", &one, NULL, 0, s);
  TF_Operation* fill_huge = Binary(g, "Fill", "fill_huge", Out(huge_dims, 0), Out(v, 0), s);
  CheckRunFails(g, Out(fill_huge, 0), "more elements than fit in int64", "Fill with dims [2^62 4 1]", s);
  TF_Operation* fill_neg = Binary(g, "Fill", "fill_neg", Out(neg_dims, 0), Out(v, 0), s);
  CheckRunFails(g, Out(fill_neg, 0), "negative dim", "Fill with a negative dim", s);
  TF_Operation* reshape = Binary(g, "Reshape", "reshape_huge", Out(v, 0), Out(huge_dims, 0), s);
  CheckRunFails(g, Out(reshape, 0), "int64", "Reshape to [2^62 4 1]", s);
  const int32_t five = 5;
  TF_Operation* axis5 = Int32Const(g, "axis5", &five, NULL, 0, s);
  TF_Operation* expand = Binary(g, "ExpandDims", "expand_far", Out(v, 0), Out(axis5, 0), s);
  CheckRunFails(g, Out(expand, 0), "ExpandDims", "ExpandDims past the rank", s);
  TF_OperationDescription* d = TF_NewOperation(g, "Bucketize", "unsorted");
  TF_AddInput(d, Out(v, 0));
  const float bounds[] = {3, 1, 2};
  TF_SetAttrFloatList(d, "boundaries", bounds, 3);
  TF_Operation* unsorted = Finish(d, s, "Bucketize with unsorted boundaries (made)");
  CheckRunFails(g, Out(unsorted, 0), "sorted", "Bucketize with unsorted boundaries", s);
  d = TF_NewOperation(g, "AsString", "wide");
  TF_AddInput(d, Out(v, 0));
  TF_SetAttrInt(d, "width", (int64_t)1 << 40);
  TF_Operation* wide = Finish(d, s, "AsString with width 2^40 (made)");
  CheckRunFails(g, Out(wide, 0), "at most 1000", "AsString with width 2^40", s);
  TF_Output none[1];
  TF_Output x = Out(v, 0);
  TF_AddGradients(g, &x, 0, &x, 1, NULL, s, none);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT, "TF_AddGradients with no ys: %s", TF_Message(s));
  TF_AddGradients(g, &x, -1, &x, 1, NULL, s, none);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT, "TF_AddGradients with ny = -1: %s", TF_Message(s));
  TF_DeleteGraph(g);
}

static TF_Operation* Int64Const(TF_Graph* g, const char* name, const int64_t* v, const int64_t* dims, int ndims,
                                TF_Status* s) {
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_INT64, dims, ndims, (size_t)n * sizeof(int64_t));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(int64_t));
  return ConstTensor(g, name, t, s);
}

static TF_Operation* Ternary(TF_Graph* g, const char* op, const char* name, TF_Output a, TF_Output b, TF_Output c,
                             TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, a);
  TF_AddInput(d, b);
  TF_AddInput(d, c);
  return Finish(d, s, name);
}

static TF_Operation* StridedSlice(TF_Graph* g, const char* name, TF_Output x, const int32_t* b, const int32_t* e,
                                  const int32_t* st, int n, int begin_mask, int end_mask, int shrink, TF_Status* s) {
  char bn[64], en[64], sn[64];
  const int64_t dn[] = {n};
  snprintf(bn, sizeof bn, "%s_begin", name);
  snprintf(en, sizeof en, "%s_end", name);
  snprintf(sn, sizeof sn, "%s_strides", name);
  TF_OperationDescription* d = TF_NewOperation(g, "StridedSlice", name);
  TF_AddInput(d, x);
  TF_AddInput(d, Out(Int32Const(g, bn, b, dn, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, en, e, dn, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, sn, st, dn, 1, s), 0));
  TF_SetAttrInt(d, "begin_mask", begin_mask);
  TF_SetAttrInt(d, "end_mask", end_mask);
  TF_SetAttrInt(d, "shrink_axis_mask", shrink);
  return Finish(d, s, name);
}

static int Int32sAre(const TF_Tensor* t, const int32_t* want, int n) {
  if (t == NULL || TF_TensorType(t) != TF_INT32 || TF_TensorElementCount(t) != n) return 0;
  return memcmp(TF_TensorData(t), want, (size_t)n * sizeof(int32_t)) == 0;
}

static int Int64sAre(const TF_Tensor* t, const int64_t* want, int n) {
  if (t == NULL || TF_TensorType(t) != TF_INT64 || TF_TensorElementCount(t) != n) return 0;
  return memcmp(TF_TensorData(t), want, (size_t)n * sizeof(int64_t)) == 0;
}

/* The slicing, padding, indexing and scan ops, on a = [[1 2 3] [4 5 6]]; every value by hand. */
static void CheckSliceAndIndexOps(TF_Status* s) {
  printf("-- TensorFlow slicing and indexing ops\n");
  TF_Graph* g = TF_NewGraph();
  const float av[] = {1, 2, 3, 4, 5, 6};
  const int64_t d23[] = {2, 3}, d2[] = {2}, d22[] = {2, 2}, d3[] = {3};
  TF_Operation* a = FloatConst(g, "a", av, d23, 2, s);
  /* Slice(a, begin [0 1], size [-1 2]): [[2 3] [5 6]]. */
  const int32_t sb[] = {0, 1}, ssz[] = {-1, 2};
  TF_Operation* slice = Ternary(g, "Slice", "slice", Out(a, 0), Out(Int32Const(g, "sb", sb, d2, 1, s), 0),
                                Out(Int32Const(g, "ssz", ssz, d2, 1, s), 0), s);
  /* a[:, ::-1]: [[3 2 1] [6 5 4]]; a[1] (shrink_axis_mask 1): [4 5 6]. */
  const int32_t z2[] = {0, 0}, rev[] = {1, -1}, one[] = {1}, two[] = {2};
  TF_Operation* reversed = StridedSlice(g, "reversed", Out(a, 0), z2, z2, rev, 2, 3, 3, 0, s);
  TF_Operation* row1 = StridedSlice(g, "row1", Out(a, 0), one, two, one, 1, 0, 0, 1, s);
  /* Split(1, a, num_split=3): piece 1 is [[2] [5]]. */
  const int32_t i1 = 1;
  TF_Operation* dim1 = Int32Const(g, "dim1", &i1, NULL, 0, s);
  TF_OperationDescription* d = TF_NewOperation(g, "Split", "split");
  TF_AddInput(d, Out(dim1, 0));
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrInt(d, "num_split", 3);
  TF_Operation* split = Finish(d, s, "Split");
  /* SplitV(a, [1 -1], 1): piece 1 is [[2 3] [5 6]]. */
  const int64_t sizes[] = {1, -1};
  d = TF_NewOperation(g, "SplitV", "splitv");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int64Const(g, "sizes", sizes, d2, 1, s), 0));
  TF_AddInput(d, Out(dim1, 0));
  TF_SetAttrInt(d, "num_split", 2);
  TF_Operation* splitv = Finish(d, s, "SplitV");
  /* Unpack(a, num=2): output 1 is [4 5 6]. */
  d = TF_NewOperation(g, "Unpack", "unpack");
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrInt(d, "num", 2);
  TF_Operation* unpack = Finish(d, s, "Unpack");
  /* Tile(a, [1 2]): rows [1 2 3 1 2 3], [4 5 6 4 5 6]. */
  const int32_t mult[] = {1, 2};
  TF_Operation* tile = Binary(g, "Tile", "tile", Out(a, 0), Out(Int32Const(g, "mult", mult, d2, 1, s), 0), s);
  /* Pad(a, [[1 0] [0 1]]) and PadV2 with 9. */
  const int32_t pads[] = {1, 0, 0, 1};
  TF_Operation* pads_op = Int32Const(g, "pads", pads, d22, 2, s);
  TF_Operation* pad = Binary(g, "Pad", "pad", Out(a, 0), Out(pads_op, 0), s);
  const float nine = 9;
  TF_Operation* padv2 = Ternary(g, "PadV2", "padv2", Out(a, 0), Out(pads_op, 0),
                                Out(FloatConst(g, "nine", &nine, NULL, 0, s), 0), s);
  /* MirrorPad by [[0 0] [2 2]] REFLECT: row 0 is [3 2 1 2 3 2 1]; by [[0 0] [1 1]] SYMMETRIC: [1 1 2 3 3]. */
  const int32_t mp2[] = {0, 0, 2, 2}, mp1[] = {0, 0, 1, 1};
  d = TF_NewOperation(g, "MirrorPad", "reflect");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "mp2", mp2, d22, 2, s), 0));
  TF_SetAttrString(d, "mode", "REFLECT", 7);
  TF_Operation* reflect = Finish(d, s, "MirrorPad(REFLECT)");
  d = TF_NewOperation(g, "MirrorPad", "symmetric");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "mp1", mp1, d22, 2, s), 0));
  TF_SetAttrString(d, "mode", "SYMMETRIC", 9);
  TF_Operation* symmetric = Finish(d, s, "MirrorPad(SYMMETRIC)");
  /* GatherV2(a, [2 0], axis 1): [[3 1] [6 4]]; GatherNd(a, [[1 2] [0 0]]): [6 1]. */
  const int32_t gi[] = {2, 0}, ndi[] = {1, 2, 0, 0};
  TF_Operation* gather = Ternary(g, "GatherV2", "gather", Out(a, 0), Out(Int32Const(g, "gi", gi, d2, 1, s), 0),
                                 Out(dim1, 0), s);
  TF_Operation* gather_nd = Binary(g, "GatherNd", "gather_nd", Out(a, 0), Out(Int32Const(g, "ndi", ndi, d22, 2, s), 0), s);
  /* Where(a > 3.5): [[1 0] [1 1] [1 2]] as int64. */
  const float t35 = 3.5f;
  TF_Operation* gt = Binary(g, "Greater", "gt", Out(a, 0), Out(FloatConst(g, "t35", &t35, NULL, 0, s), 0), s);
  TF_Operation* where = Unary(g, "Where", "where", Out(gt, 0), s);
  /* OneHot([0 2 -1], 3, 1, 0): [[1 0 0] [0 0 1] [0 0 0]]. */
  const int32_t ohi[] = {0, 2, -1}, three = 3;
  const float on = 1, off = 0;
  d = TF_NewOperation(g, "OneHot", "one_hot");
  TF_AddInput(d, Out(Int32Const(g, "ohi", ohi, d3, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "depth", &three, NULL, 0, s), 0));
  TF_AddInput(d, Out(FloatConst(g, "on", &on, NULL, 0, s), 0));
  TF_AddInput(d, Out(FloatConst(g, "off", &off, NULL, 0, s), 0));
  TF_Operation* one_hot = Finish(d, s, "OneHot");
  /* TopKV2(a, 2): values [[3 2] [6 5]], int32 indices [[2 1] [2 1]]. */
  const int32_t k2 = 2;
  TF_Operation* topk = Binary(g, "TopKV2", "topk", Out(a, 0), Out(Int32Const(g, "k2", &k2, NULL, 0, s), 0), s);
  /* Cumsum(a, 1, exclusive): [[0 1 3] [0 4 9]]. */
  d = TF_NewOperation(g, "Cumsum", "cumsum");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(dim1, 0));
  TF_SetAttrBool(d, "exclusive", 1);
  TF_Operation* cumsum = Finish(d, s, "Cumsum(exclusive)");
  /* StringJoin(["a" "b"], "c", separator "-"): ["a-c" "b-c"]. */
  const char* ab[] = {"a", "b"};
  const char* c[] = {"c"};
  TF_Operation* strs = StringConst(g, "ab", ab, 2, s);
  TF_Tensor* ct = TF_AllocateTensor(TF_STRING, NULL, 0, sizeof(TF_TString));
  TF_TString_Init((TF_TString*)TF_TensorData(ct));
  TF_TString_Copy((TF_TString*)TF_TensorData(ct), c[0], 1);
  TF_Operation* cs = ConstTensor(g, "c", ct, s);
  d = TF_NewOperation(g, "StringJoin", "join");
  TF_Output parts[] = {Out(strs, 0), Out(cs, 0)};
  TF_AddInputList(d, parts, 2);
  TF_SetAttrString(d, "separator", "-", 1);
  TF_Operation* join = Finish(d, s, "StringJoin");

  TF_Output fetches[] = {Out(slice, 0),   Out(reversed, 0), Out(row1, 0),     Out(split, 1),   Out(splitv, 1),
                         Out(unpack, 1),  Out(tile, 0),     Out(pad, 0),      Out(padv2, 0),   Out(reflect, 0),
                         Out(symmetric, 0), Out(gather, 0), Out(gather_nd, 0), Out(where, 0),  Out(one_hot, 0),
                         Out(topk, 0),    Out(topk, 1),     Out(cumsum, 0),   Out(join, 0)};
  enum { kN = sizeof(fetches) / sizeof(fetches[0]) };
  TF_Tensor* out[kN] = {0};
  if (Run(g, fetches, out, kN, s)) {
    const float sl[] = {2, 3, 5, 6};
    CHECK(FloatsAre(out[0], sl, 4) && ShapeIs(out[0], d22, 2), "Slice with size -1 takes the rest");
    const float rv[] = {3, 2, 1, 6, 5, 4};
    CHECK(FloatsAre(out[1], rv, 6) && ShapeIs(out[1], d23, 2), "StridedSlice a[:, ::-1] (masks, stride -1)");
    const float r1[] = {4, 5, 6};
    CHECK(FloatsAre(out[2], r1, 3) && ShapeIs(out[2], d3, 1), "StridedSlice a[1] drops the shrunk axis");
    const float s1[] = {2, 5};
    const int64_t d21[] = {2, 1};
    CHECK(FloatsAre(out[3], s1, 2) && ShapeIs(out[3], d21, 2), "Split(split_dim=1, num_split=3) piece 1");
    CHECK(FloatsAre(out[4], sl, 4), "SplitV infers the -1 size");
    CHECK(FloatsAre(out[5], r1, 3) && ShapeIs(out[5], d3, 1), "Unpack output 1 is row 1");
    const float ti[] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
    CHECK(FloatsAre(out[6], ti, 12), "Tile(a, [1 2])");
    const float pd[] = {0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0};
    const int64_t d34[] = {3, 4};
    CHECK(FloatsAre(out[7], pd, 12) && ShapeIs(out[7], d34, 2), "Pad by [[1 0] [0 1]]");
    const float p9[] = {9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9};
    CHECK(FloatsAre(out[8], p9, 12), "PadV2 with constant_values 9");
    const float re[] = {3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4};
    CHECK(FloatsAre(out[9], re, 14), "MirrorPad REFLECT: row 0 is [3 2 1 2 3 2 1]");
    const float sy[] = {1, 1, 2, 3, 3, 4, 4, 5, 6, 6};
    CHECK(FloatsAre(out[10], sy, 10), "MirrorPad SYMMETRIC");
    const float ga[] = {3, 1, 6, 4};
    CHECK(FloatsAre(out[11], ga, 4), "GatherV2 along axis 1");
    const float gn[] = {6, 1};
    CHECK(FloatsAre(out[12], gn, 2), "GatherNd picks (1,2) and (0,0)");
    const int64_t wh[] = {1, 0, 1, 1, 1, 2};
    const int64_t d32[] = {3, 2};
    CHECK(Int64sAre(out[13], wh, 6) && ShapeIs(out[13], d32, 2), "Where gives int64 [num_true, rank] coordinates");
    const float oh[] = {1, 0, 0, 0, 0, 1, 0, 0, 0};
    CHECK(FloatsAre(out[14], oh, 9), "OneHot: index -1 is all off");
    const float tv[] = {3, 2, 6, 5};
    const int32_t tix[] = {2, 1, 2, 1};
    CHECK(FloatsAre(out[15], tv, 4) && Int32sAre(out[16], tix, 4), "TopKV2 values and int32 indices");
    const float cu[] = {0, 1, 3, 0, 4, 9};
    CHECK(FloatsAre(out[17], cu, 6), "Cumsum(exclusive)");
    CHECK(out[18] != NULL && TF_TensorElementCount(out[18]) == 2 && StringAt(out[18], 0, "a-c") &&
              StringAt(out[18], 1, "b-c"),
          "StringJoin broadcasts the scalar");
  }
  int i;
  for (i = 0; i < kN; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

/* Finishes `d` and runs its output 0: either step may refuse the bad input (shape inference
 * sees constant inputs, as TensorFlow's does), with INVALID_ARGUMENT holding `needle`. */
/* TF_AddGradients through the slicing and indexing ops, against values worked out by hand. */
static void CheckSliceGradients(TF_Status* s) {
  printf("-- TF_AddGradients through slicing and indexing\n");
  TF_Graph* g = TF_NewGraph();
  TF_Tensor* out[2] = {0};
  int i;
  const int64_t d1[] = {1}, d4[] = {4}, d2[] = {2}, d23[] = {2, 3}, d3[] = {3}, d12[] = {1, 2};

  /* StridedSlice x[3:0:-2] of x = [1 2 3 4] picks x3 and x1; times w = [10 20]: dx = [0 20 0 10]. */
  const float xv[] = {1, 2, 3, 4}, wv[] = {10, 20};
  TF_Operation* x = FloatConst(g, "x", xv, d4, 1, s);
  TF_Output xo = Out(x, 0);
  const int32_t b3 = 3, e0 = 0, st = -2;
  TF_Operation* ss = StridedSlice(g, "ss", xo, &b3, &e0, &st, 1, 0, 0, 0, s);
  TF_Operation* w = FloatConst(g, "w", wv, d2, 1, s);
  TF_Operation* ssw = Binary(g, "Mul", "ssw", Out(ss, 0), Out(w, 0), s);
  if (GradientsOf(g, ssw, &xo, 1, out, "TF_AddGradients through StridedSlice (negative stride)", s)) {
    const float want[] = {0, 20, 0, 10};
    CHECK(FloatsAre(out[0], want, 4), "d (x[3:0:-2] * w) / dx = [0 20 0 10]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* GatherV2(a, [2 2 0], axis 1) of a 2x3 a: column 2 is taken twice, column 0 once, column 1
   * never; seeded with ones, da = [[1 0 2] [1 0 2]]. */
  const float av[] = {1, 2, 3, 4, 5, 6};
  TF_Operation* a = FloatConst(g, "a", av, d23, 2, s);
  TF_Output ao = Out(a, 0);
  const int32_t idx[] = {2, 2, 0}, one = 1;
  TF_Operation* gather = Ternary(g, "GatherV2", "gather", ao, Out(Int32Const(g, "idx", idx, d3, 1, s), 0),
                                 Out(Int32Const(g, "gaxis", &one, NULL, 0, s), 0), s);
  if (GradientsOf(g, gather, &ao, 1, out, "TF_AddGradients through GatherV2 (axis 1, repeated)", s)) {
    const float want[] = {1, 0, 2, 1, 0, 2};
    CHECK(FloatsAre(out[0], want, 6), "GatherV2: repeated indices add up: [[1 0 2] [1 0 2]]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* Tile([1 2], [3]) is six elements, each x three times: dx = [3 3]. */
  const int32_t three = 3;
  TF_Operation* small = FloatConst(g, "small", xv, d2, 1, s);
  TF_Output so = Out(small, 0);
  TF_Operation* tile = Binary(g, "Tile", "tile", so, Out(Int32Const(g, "mult", &three, d1, 1, s), 0), s);
  if (GradientsOf(g, tile, &so, 1, out, "TF_AddGradients through Tile", s)) {
    const float want[] = {3, 3};
    CHECK(FloatsAre(out[0], want, 2), "Tile x3: dx = [3 3]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* MirrorPad([1 2 3], [[2 1]], REFLECT) = [3 2 1 2 3 2]: x0 appears once, x1 three times, x2
   * twice; seeded with ones, dx = [1 3 2]. */
  const int32_t pads[] = {2, 1};
  TF_Operation* x3 = FloatConst(g, "x3", xv, d3, 1, s);
  TF_Output x3o = Out(x3, 0);
  TF_OperationDescription* d = TF_NewOperation(g, "MirrorPad", "mirror");
  TF_AddInput(d, x3o);
  TF_AddInput(d, Out(Int32Const(g, "pads", pads, d12, 2, s), 0));
  TF_SetAttrString(d, "mode", "REFLECT", 7);
  TF_Operation* mirror = Finish(d, s, "MirrorPad");
  if (GradientsOf(g, mirror, &x3o, 1, out, "TF_AddGradients through MirrorPad", s)) {
    const float want[] = {1, 3, 2};
    CHECK(FloatsAre(out[0], want, 3), "MirrorPad REFLECT folds back: [1 3 2]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* Split(0, x, 2) of x = [1 2 3 4], only the second piece times w: dx = [0 0 10 20]. */
  const int32_t zero = 0;
  d = TF_NewOperation(g, "Split", "split");
  TF_AddInput(d, Out(Int32Const(g, "split_dim", &zero, NULL, 0, s), 0));
  TF_AddInput(d, xo);
  TF_SetAttrInt(d, "num_split", 2);
  TF_Operation* split = Finish(d, s, "Split");
  TF_Operation* sw = Binary(g, "Mul", "sw", Out(split, 1), Out(w, 0), s);
  if (GradientsOf(g, sw, &xo, 1, out, "TF_AddGradients through Split (one piece unused)", s)) {
    const float want[] = {0, 0, 10, 20};
    CHECK(FloatsAre(out[0], want, 4), "Split: the unused piece gets zeros: [0 0 10 20]");
  }
  if (out[0] != NULL) TF_DeleteTensor(out[0]);
  out[0] = NULL;

  /* TruncateDiv passes nothing back, as in TensorFlow: d (TruncateDiv(x, 3) + x) / dx = 1. */
  const float threef = 3;
  TF_Operation* c3 = FloatConst(g, "c3", &threef, NULL, 0, s);
  TF_Operation* td = Binary(g, "TruncateDiv", "td", xo, Out(c3, 0), s);
  TF_Operation* tdx = Binary(g, "AddV2", "tdx", Out(td, 0), xo, s);
  if (GradientsOf(g, tdx, &xo, 1, out, "TF_AddGradients through TruncateDiv", s)) {
    const float want[] = {1, 1, 1, 1};
    CHECK(FloatsAre(out[0], want, 4), "TruncateDiv has no gradient: only the direct 1");
  }
  for (i = 0; i < 2; ++i) {
    if (out[i] != NULL) TF_DeleteTensor(out[i]);
  }
  TF_DeleteGraph(g);
}

static void CheckOpFails(TF_Graph* g, TF_OperationDescription* d, const char* needle, const char* what,
                         TF_Status* s) {
  TF_Operation* op = TF_FinishOperation(d, s);
  if (op == NULL) {
    CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), needle) != NULL,
          "%s (at TF_FinishOperation): code %d, \"%s\"", what, (int)TF_GetCode(s), TF_Message(s));
    return;
  }
  CheckRunFails(g, Out(op, 0), needle, what, s);
}

/* Bad input to the slicing and indexing ops: each an INVALID_ARGUMENT naming the problem. */
static void CheckBadSliceAndIndexInput(TF_Status* s) {
  printf("-- bad input to slicing and indexing\n");
  TF_Graph* g = TF_NewGraph();
  const float av[] = {1, 2, 3, 4, 5, 6};
  const int64_t d23[] = {2, 3}, d1[] = {1}, d2[] = {2}, d22[] = {2, 2};
  TF_Operation* a = FloatConst(g, "a", av, d23, 2, s);
  const int32_t i0 = 0, i1 = 1, i2 = 2, i3 = 3, i5 = 5, im1 = -1;
  TF_Operation* zero = Int32Const(g, "zero", &i0, NULL, 0, s);
  TF_Operation* one = Int32Const(g, "one", &i1, NULL, 0, s);
  TF_OperationDescription* d = TF_NewOperation(g, "GatherV2", "gather_far");
  const int32_t far[] = {0, 3};
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "far", far, d2, 1, s), 0));
  TF_AddInput(d, Out(one, 0));
  CheckOpFails(g, d, "is not in [0, 3)", "GatherV2 with index 3 into a dim of 3", s);
  d = TF_NewOperation(g, "GatherV2", "gather_negative");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "neg_index", &im1, d1, 1, s), 0));
  TF_AddInput(d, Out(zero, 0));
  CheckOpFails(g, d, "is not in [0, 2)", "GatherV2 with index -1 (TensorFlow does not wrap)", s);
  const int32_t nd_far[] = {1, 5};
  d = TF_NewOperation(g, "GatherNd", "gather_nd_far");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "nd_far", nd_far, d2, 1, s), 0));
  CheckOpFails(g, d, "out of range", "GatherNd with index (1, 5)", s);
  d = TF_NewOperation(g, "Split", "split_uneven");
  TF_AddInput(d, Out(one, 0));
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrInt(d, "num_split", 2);
  CheckOpFails(g, d, "split evenly", "Split of 3 into 2", s);
  const int64_t bad_sizes[] = {1, 1};
  d = TF_NewOperation(g, "SplitV", "splitv_short");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int64Const(g, "bad_sizes", bad_sizes, d2, 1, s), 0));
  TF_AddInput(d, Out(one, 0));
  TF_SetAttrInt(d, "num_split", 2);
  CheckOpFails(g, d, "do not add up", "SplitV sizes [1 1] of a dim of 3", s);
  const int32_t neg_mult[] = {1, -2};
  d = TF_NewOperation(g, "Tile", "tile_negative");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "neg_mult", neg_mult, d2, 1, s), 0));
  CheckOpFails(g, d, "negative", "Tile with multiples [1 -2]", s);
  const int32_t big_mult[] = {1 << 30, 1 << 30};
  d = TF_NewOperation(g, "Tile", "tile_huge");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "big_mult", big_mult, d2, 1, s), 0));
  TF_Operation* tile_huge = TF_FinishOperation(d, s);
  if (tile_huge != NULL) {
    /* [2^31, 3 * 2^30] floats: past any tensor, refused before allocating. */
    TF_Output fetch = Out(tile_huge, 0);
    TF_SessionOptions* opts = TF_NewSessionOptions();
    TF_Session* sess = TF_NewSession(g, opts, s);
    TF_Tensor* out = NULL;
    TF_SessionRun(sess, NULL, NULL, NULL, 0, &fetch, &out, 1, NULL, 0, NULL, s);
    CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT || TF_GetCode(s) == TF_RESOURCE_EXHAUSTED,
          "Tile to [2^31 3 * 2^30]: code %d, \"%s\"", (int)TF_GetCode(s), TF_Message(s));
    TF_Status* close = TF_NewStatus();
    TF_DeleteSession(sess, close);
    TF_DeleteStatus(close);
    TF_DeleteSessionOptions(opts);
  }
  const int32_t zb[] = {0}, ze[] = {2}, zs[] = {0};
  d = TF_NewOperation(g, "StridedSlice", "stride_zero");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "zb", zb, d1, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "ze", ze, d1, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "zs", zs, d1, 1, s), 0));
  CheckOpFails(g, d, "strides[0] is 0", "StridedSlice with stride 0", s);
  const int32_t eb[] = {0, 0}, es[] = {1, 1};
  d = TF_NewOperation(g, "StridedSlice", "two_ellipses");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "eb", eb, d2, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "ee", eb, d2, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "es", es, d2, 1, s), 0));
  TF_SetAttrInt(d, "ellipsis_mask", 3);
  CheckOpFails(g, d, "more than one ellipsis", "StridedSlice with two ellipses", s);
  const int32_t sb5[] = {5}, se6[] = {6};
  d = TF_NewOperation(g, "StridedSlice", "shrink_far");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "sb5", sb5, d1, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "se6", se6, d1, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "s1", es, d1, 1, s), 0));
  TF_SetAttrInt(d, "shrink_axis_mask", 1);
  CheckOpFails(g, d, "out of bounds", "StridedSlice a[5] on a dim of 2", s);
  const int32_t slb[] = {1, 1}, sls[] = {1, 3};
  d = TF_NewOperation(g, "Slice", "slice_past");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "slb", slb, d2, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "sls", sls, d2, 1, s), 0));
  CheckOpFails(g, d, "Slice", "Slice past the end of dim 1", s);
  const int32_t negpad[] = {0, 0, -1, 0};
  d = TF_NewOperation(g, "Pad", "pad_negative");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "negpad", negpad, d22, 2, s), 0));
  CheckOpFails(g, d, "negative", "Pad with a negative padding", s);
  const int32_t widepad[] = {0, 0, 3, 0};
  d = TF_NewOperation(g, "MirrorPad", "reflect_wide");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "widepad", widepad, d22, 2, s), 0));
  TF_SetAttrString(d, "mode", "REFLECT", 7);
  CheckOpFails(g, d, "at most 2", "MirrorPad REFLECT by 3 on a dim of 3", s);
  const float on = 1, off = 0;
  d = TF_NewOperation(g, "OneHot", "one_hot_negative");
  TF_AddInput(d, Out(Int32Const(g, "ohi", &i2, d1, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "neg_depth", &im1, NULL, 0, s), 0));
  TF_AddInput(d, Out(FloatConst(g, "on", &on, NULL, 0, s), 0));
  TF_AddInput(d, Out(FloatConst(g, "off", &off, NULL, 0, s), 0));
  CheckOpFails(g, d, "negative", "OneHot with depth -1", s);
  d = TF_NewOperation(g, "TopKV2", "topk_big");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "k5", &i5, NULL, 0, s), 0));
  CheckOpFails(g, d, "TopKV2", "TopKV2 with k 5 over a dim of 3", s);
  d = TF_NewOperation(g, "Unpack", "unpack_wrong");
  TF_AddInput(d, Out(a, 0));
  TF_SetAttrInt(d, "num", 3);
  CheckOpFails(g, d, "num = 3", "Unpack with num 3 of a dim of 2", s);
  d = TF_NewOperation(g, "Cumsum", "cumsum_far");
  TF_AddInput(d, Out(a, 0));
  TF_AddInput(d, Out(Int32Const(g, "ax3", &i3, NULL, 0, s), 0));
  CheckOpFails(g, d, "out of range", "Cumsum along axis 3 of a matrix", s);
  const char* two[] = {"x", "y"};
  const char* three_s[] = {"x", "y", "z"};
  d = TF_NewOperation(g, "StringJoin", "join_mismatch");
  TF_Output parts[] = {Out(StringConst(g, "two", two, 2, s), 0), Out(StringConst(g, "three", three_s, 3, s), 0)};
  TF_AddInputList(d, parts, 2);
  CheckOpFails(g, d, "StringJoin", "StringJoin of shapes [2] and [3]", s);
  TF_DeleteGraph(g);
}

/* ONNX's ops live under "Onnx>": the TensorFlow name never reaches the ONNX op. */
static void CheckNamespaces(TF_Status* s) {
  printf("-- op namespaces\n");
  TF_Graph* g = TF_NewGraph();
  const float v[] = {1, 2};
  const int64_t d2[] = {2};
  TF_Operation* a = FloatConst(g, "a", v, d2, 1, s);
  /* TensorFlow's Concat has no `axis` attr: setting one is an error. */
  TF_OperationDescription* d = TF_NewOperation(g, "Concat", "tf_concat_with_axis");
  const int32_t zero = 0;
  TF_Operation* axis = Int32Const(g, "axis", &zero, NULL, 0, s);
  TF_Output aa[] = {Out(a, 0), Out(a, 0)};
  TF_AddInput(d, Out(axis, 0));
  TF_AddInputList(d, aa, 2);
  TF_SetAttrInt(d, "axis", 0);
  TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) != TF_OK, "Concat with ONNX's axis attr is refused: %s", TF_Message(s));
  /* ONNX's Concat, by its namespaced name. */
  d = TF_NewOperation(g, "Onnx>Concat", "onnx_concat");
  TF_AddInputList(d, aa, 2);
  TF_SetAttrInt(d, "axis", 0);
  TF_Operation* onnx_concat = Finish(d, s, "Onnx>Concat");
  TF_Output fetch = Out(onnx_concat, 0);
  TF_Tensor* out = NULL;
  if (Run(g, &fetch, &out, 1, s)) {
    const float want[] = {1, 2, 1, 2};
    CHECK(FloatsAre(out, want, 4), "Onnx>Concat runs");
  }
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteGraph(g);
}

/* A graph of TensorFlow ops exported with TF_GraphToGraphDef, imported into a new graph under
 * a prefix and run there gives the same values: x = [[1 2] [3 4]],
 * ConcatV2([x, x], axis 1) = [[1 2 1 2] [3 4 3 4]], Sum over axis 1 = [6 14],
 * Cast to int32 = [6 14], StridedSlice [::-1] of that = [14 6]. */
static void CheckGraphDefRoundTrip(TF_Status* s) {
  printf("-- GraphDef round trip of TensorFlow ops\n");
  TF_Graph* g = TF_NewGraph();
  const float xv[] = {1, 2, 3, 4};
  const int64_t dims2[] = {2, 2}, one[] = {1};
  const int32_t axis1[] = {1}, axis_scalar = 1, begin[] = {-1}, end[] = {0}, stride[] = {-1};
  TF_Operation* x = FloatConst(g, "x", xv, dims2, 2, s);
  TF_Operation* axis = Int32Const(g, "axis", &axis_scalar, NULL, 0, s);
  TF_OperationDescription* d = TF_NewOperation(g, "ConcatV2", "concat");
  TF_Output parts[] = {Out(x, 0), Out(x, 0)};
  TF_AddInputList(d, parts, 2);
  TF_AddInput(d, Out(axis, 0));
  TF_Operation* concat = Finish(d, s, "ConcatV2");
  TF_Operation* sum =
      Binary(g, "Sum", "sum", Out(concat, 0), Out(Int32Const(g, "axes", axis1, one, 1, s), 0), s);
  d = TF_NewOperation(g, "Cast", "cast");
  TF_AddInput(d, Out(sum, 0));
  TF_SetAttrType(d, "DstT", TF_INT32);
  TF_Operation* cast = Finish(d, s, "Cast");
  d = TF_NewOperation(g, "StridedSlice", "reversed");
  TF_AddInput(d, Out(cast, 0));
  TF_AddInput(d, Out(Int32Const(g, "begin", begin, one, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "end", end, one, 1, s), 0));
  TF_AddInput(d, Out(Int32Const(g, "stride", stride, one, 1, s), 0));
  TF_SetAttrInt(d, "end_mask", 1);
  TF_Operation* reversed = Finish(d, s, "StridedSlice");

  TF_Buffer* def = TF_NewBuffer();
  TF_GraphToGraphDef(g, def, s);
  CHECK_OK(s, "TF_GraphToGraphDef");
  TF_Graph* copy = TF_NewGraph();
  TF_ImportGraphDefOptions* o = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(o, "copy");
  TF_GraphImportGraphDef(copy, def, o, s);
  CHECK_OK(s, "TF_GraphImportGraphDef of the exported GraphDef");
  TF_DeleteImportGraphDefOptions(o);
  TF_Buffer* again = TF_NewBuffer();
  TF_GraphToGraphDef(copy, again, s);
  CHECK(TF_GetCode(s) == TF_OK && again->length > def->length,
        "the copy exports again (%zu bytes, the original %zu, with its prefix)", again->length,
        def->length);
  TF_DeleteBuffer(again);
  TF_DeleteBuffer(def);

  TF_Operation* copied = TF_GraphOperationByName(copy, "copy/reversed");
  CHECK(copied != NULL && strcmp(TF_OperationOpType(copied), "StridedSlice") == 0,
        "copy/reversed is a StridedSlice");
  TF_Output fetch = Out(reversed, 0);
  TF_Tensor* out[1] = {NULL};
  if (Run(g, &fetch, out, 1, s)) {
    const int32_t* v = TF_TensorData(out[0]);
    CHECK(TF_TensorType(out[0]) == TF_INT32 && v[0] == 14 && v[1] == 6,
          "the original gives [14 6] (got %d %d)", v[0], v[1]);
    TF_DeleteTensor(out[0]);
  }
  if (copied != NULL) {
    fetch = Out(copied, 0);
    if (Run(copy, &fetch, out, 1, s)) {
      const int32_t* v = TF_TensorData(out[0]);
      CHECK(TF_TensorType(out[0]) == TF_INT32 && v[0] == 14 && v[1] == 6,
            "the imported copy gives [14 6] too (got %d %d)", v[0], v[1]);
      TF_DeleteTensor(out[0]);
    }
  }
  TF_DeleteGraph(copy);
  TF_DeleteGraph(g);
}

/* ArgMax and ArgMin over bool, as TensorFlow allows: [false true true false] has its first
 * true at 1 and its first false at 0. */
static void CheckArgMaxBool(TF_Status* s) {
  printf("-- ArgMax / ArgMin of bool\n");
  TF_Graph* g = TF_NewGraph();
  const int64_t four = 4;
  TF_Tensor* t = TF_AllocateTensor(TF_BOOL, &four, 1, 4);
  unsigned char* b = TF_TensorData(t);
  b[0] = 0;
  b[1] = 1;
  b[2] = 1;
  b[3] = 0;
  TF_Operation* x = ConstTensor(g, "x", t, s);
  const int32_t zero = 0;
  TF_Operation* axis = Int32Const(g, "axis", &zero, NULL, 0, s);
  TF_Output fetch[2] = {Out(Binary(g, "ArgMax", "argmax", Out(x, 0), Out(axis, 0), s), 0),
                        Out(Binary(g, "ArgMin", "argmin", Out(x, 0), Out(axis, 0), s), 0)};
  TF_Tensor* out[2] = {NULL, NULL};
  if (Run(g, fetch, out, 2, s)) {
    CHECK(*(int64_t*)TF_TensorData(out[0]) == 1 && *(int64_t*)TF_TensorData(out[1]) == 0,
          "ArgMax = 1, ArgMin = 0 (got %lld %lld)", (long long)*(int64_t*)TF_TensorData(out[0]),
          (long long)*(int64_t*)TF_TensorData(out[1]));
    TF_DeleteTensor(out[0]);
    TF_DeleteTensor(out[1]);
  }
  TF_DeleteGraph(g);
}

/* TF_NewWhile: x = 1; while x < 100: x = x * 3, so x = 243. */
static void CheckWhileLoop(TF_Status* s) {
  printf("-- while loops\n");
  TF_Graph* g = TF_NewGraph();
  const float start = 1, limit = 100, three = 3;
  TF_Operation* x = FloatConst(g, "x", &start, NULL, 0, s);
  TF_Output in = Out(x, 0);
  TF_WhileParams params = TF_NewWhile(g, &in, 1, s);
  CHECK_OK(s, "TF_NewWhile");
  if (TF_GetCode(s) != TF_OK) {
    TF_DeleteGraph(g);
    return;
  }
  TF_Operation* lim = FloatConst(params.cond_graph, "limit", &limit, NULL, 0, s);
  params.cond_output =
      Out(Binary(params.cond_graph, "Less", "less", params.cond_inputs[0], Out(lim, 0), s), 0);
  TF_Operation* k = FloatConst(params.body_graph, "three", &three, NULL, 0, s);
  params.body_outputs[0] =
      Out(Binary(params.body_graph, "Mul", "times3", params.body_inputs[0], Out(k, 0), s), 0);
  params.name = "triple";
  TF_Output result;
  TF_FinishWhile(&params, s, &result);
  CHECK_OK(s, "TF_FinishWhile");
  if (TF_GetCode(s) == TF_OK) {
    TF_Tensor* out[1] = {NULL};
    if (Run(g, &result, out, 1, s)) {
      CHECK(*(float*)TF_TensorData(out[0]) == 243.0f, "the loop ends at 243 (got %g)",
            *(float*)TF_TensorData(out[0]));
      TF_DeleteTensor(out[0]);
    }
  }
  TF_DeleteGraph(g);
}

/* The deprecated session API: TF_ExtendGraph with a GraphDef, TF_Run by names.
 * y = Square(x) = [4 9] for x = [-2 3]. */
static void CheckDeprecatedSession(TF_Status* s) {
  printf("-- the deprecated session API\n");
  TF_Graph* g = TF_NewGraph();
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* x = Finish(d, s, "x");
  Unary(g, "Square", "y", Out(x, 0), s);
  TF_Buffer* def = TF_NewBuffer();
  TF_GraphToGraphDef(g, def, s);
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_DeprecatedSession* sess = TF_NewDeprecatedSession(opts, s);
  CHECK_OK(s, "TF_NewDeprecatedSession");
  TF_ExtendGraph(sess, def->data, def->length, s);
  CHECK_OK(s, "TF_ExtendGraph");
  const float xv[] = {-2, 3};
  const int64_t two = 2;
  TF_Tensor* in = TF_AllocateTensor(TF_FLOAT, &two, 1, sizeof(xv));
  memcpy(TF_TensorData(in), xv, sizeof(xv));
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y:0"};
  TF_Tensor* out = NULL;
  TF_Run(sess, NULL, in_names, &in, 1, out_names, &out, 1, NULL, 0, NULL, s); /* takes `in` */
  CHECK_OK(s, "TF_Run");
  if (out != NULL) {
    const float want[] = {4, 9};
    CHECK(FloatsAre(out, want, 2), "Square([-2 3]) = [4 9] by names");
    TF_DeleteTensor(out);
  }
  TF_CloseDeprecatedSession(sess, s);
  TF_DeleteDeprecatedSession(sess, s);
  CHECK_OK(s, "TF_DeleteDeprecatedSession");
  TF_DeleteSessionOptions(opts);
  TF_DeleteBuffer(def);
  TF_DeleteGraph(g);
}

int main(void) {
  TF_Status* s = TF_NewStatus();
  CheckArrayOps(s);
  CheckMathOps(s);
  CheckGradients(s);
  CheckOpGradients(s);
  CheckStringOps(s);
  CheckBadInput(s);
  CheckSliceAndIndexOps(s);
  CheckBadSliceAndIndexInput(s);
  CheckSliceGradients(s);
  CheckNamespaces(s);
  CheckGraphDefRoundTrip(s);
  CheckWhileLoop(s);
  CheckArgMaxBool(s);
  CheckDeprecatedSession(s);
  TF_DeleteStatus(s);
  return CheckSummary();
}
