/* TensorFlow's nn ops and variables through TensorFlow's C API: Conv2D (SAME, VALID, EXPLICIT,
 * NCHW, dilations, groups), DepthwiseConv2dNative, Conv2DBackpropInput/Filter, BiasAdd(Grad),
 * FusedBatchNormV3, MaxPool, AvgPool, ResizeBilinear, ResizeNearestNeighbor, resource and ref
 * variables across TF_SessionRun calls, and bad input that must fail with an error naming the
 * node. The expected values below come from c_api/tf_nn_ops_test_values.py, which computes them
 * with numpy from TensorFlow's definitions (direct loops); the small ones are also worked out by
 * hand in the comments. Built like tf_layout_test.c: `-I c_api/include -ltensorflow` only. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensorflow/c/c_api.h"
#include "c_check.h"




#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* From tf_nn_ops_test_values.py. */
static const float kConvValid[] = {37, 47, 67, 77};
static const float kConvSameStride2[] = {181.96875, 189, 196.03125, 121.6875, 127.5, 133.3125, 94.875, 104.0625, 113.25, 47.75, 54.625, 61.5};
static const float kConvExplicitNchw[] = {-62, -65.5, -69, -25, -26.25, -80, -83, -86, -24, -24.5, -95, -98, -101, -26.5, -27, -70, -74, -78, -29.5, -31, -96, -100, -104, -33, -34, -116, -120, -124, -38, -39};
static const float kConvGrouped[] = {112.5, 141, 144.5, 177, 208.5, 249, 240.5, 285};
static const float kDepthwise[] = {-68, -78, -100, -112, -84, -98, -124, -140, -28, -36, -48, -57, -116, -138, -172, -196, -132, -158, -196, -224, -40, -54, -72, -87, -2, -16, -32, -47, -2, -18, -36, -53, 17, 8.5, 0, -9};
static const float kBackpropInput[] = {2, 3.5, 9.5, 8, 6.5, 8, 24.5, 18.5, 18, 25, 67, 46, 23.5, 29, 66.5, 39.5};
static const float kBackpropFilter[] = {74, 88, 82, 98, 32, 40, 106, 128, 114, 138, 44, 56, 23, 34, 25, 37, 6, 12};
static const float kBnInference[] = {-1.62079021, -2.62118777, -0.206930071, -1.20706259, 1.20693007, 0.207062591, 2.62079021, 1.62118777};
static const float kBnTrainingY[] = {-0.841506643, -3.18301329, 0.0528311192, -1.39433776, 0.947168881, 0.394337762, 1.84150664, 2.18301329};
static const float kBnTrainingMean[] = {4, 5};
static const float kBnTrainingVar[] = {4.33333333, 7.33333333};
static const float kBnTrainingSaved[] = {4, 5, 5, 5};
static const float kMaxPoolSame[] = {5, 6, 8, 9};
static const float kAvgPoolSame[] = {3, 4.5, 7.5, 9};
static const float kAvgPoolValid[] = {-3.5, -4, -5.5, -6, -7.5, -8, -9.5, -10};
static const float kBilinearLegacy[] = {1, 1.66666675, 2, 2.33333349, 3, 3.33333349, 3, 3.66666675, 4};
static const float kBilinearAlign[] = {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4};
static const float kBilinearHalf[] = {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4};
static const float kBilinearHalfDown[] = {1.33333325, 3, 4.66666651};
static const float kNearestLegacy[] = {1, 1, 2, 1, 1, 2, 3, 3, 4};
static const float kNearestAlign[] = {1, 2, 2, 3, 4, 4, 3, 4, 4};
static const float kNearestHalf[] = {1, 2, 2, 3, 4, 4, 3, 4, 4};
static const float kNearestHalfDown[] = {1, 3, 5};
static const float kNearestAlignUp[] = {1, 2, 2, 3, 4, 4, 5};
static const float kConvGradInput[] = {1, 3, 2, 4, 10, 6, 3, 7, 4};
static const float kConvGradFilter[] = {12, 16, 24, 28};

static TF_Output Out(TF_Operation* op, int i) {
  TF_Output o = {op, i};
  return o;
}

static TF_Operation* Finish(TF_OperationDescription* d, TF_Status* s, const char* what) {
  TF_Operation* op = TF_FinishOperation(d, s);
  CHECK_OK(s, what);
  return op;
}

static TF_Tensor* FloatTensor(const float* v, const int64_t* dims, int ndims) {
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, ndims, (size_t)n * sizeof(float));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(float));
  return t;
}

static TF_Tensor* Int32Tensor(const int32_t* v, const int64_t* dims, int ndims) {
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  TF_Tensor* t = TF_AllocateTensor(TF_INT32, dims, ndims, (size_t)n * sizeof(int32_t));
  memcpy(TF_TensorData(t), v, (size_t)n * sizeof(int32_t));
  return t;
}

static TF_Operation* ConstTensor(TF_Graph* g, const char* name, TF_Tensor* t, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t, s);
  TF_SetAttrType(d, "dtype", TF_TensorType(t));
  TF_DeleteTensor(t);
  return Finish(d, s, name);
}

static TF_Operation* FloatConst(TF_Graph* g, const char* name, const float* v, const int64_t* dims, int ndims,
                                TF_Status* s) {
  return ConstTensor(g, name, FloatTensor(v, dims, ndims), s);
}

static TF_Operation* Int32Const(TF_Graph* g, const char* name, const int32_t* v, const int64_t* dims, int ndims,
                                TF_Status* s) {
  return ConstTensor(g, name, Int32Tensor(v, dims, ndims), s);
}

/* start, start + step, ... : the ramps tf_nn_ops_test_values.py uses. */
static TF_Operation* Ramp(TF_Graph* g, const char* name, const int64_t* dims, int ndims, float start, float step,
                          TF_Status* s) {
  float v[256];
  int64_t n = 1;
  int i;
  for (i = 0; i < ndims; ++i) n *= dims[i];
  for (i = 0; i < n; ++i) v[i] = start + step * (float)i;
  return FloatConst(g, name, v, dims, ndims, s);
}

static TF_Operation* Unary(TF_Graph* g, const char* op, const char* name, TF_Output x, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  if (strcmp(op, "Cast") == 0) TF_SetAttrType(d, "DstT", TF_OperationOutputType(x) == TF_FLOAT ? TF_DOUBLE : TF_FLOAT);
  return Finish(d, s, name);
}

static TF_Operation* Placeholder(TF_Graph* g, const char* name, TF_DataType dtype, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", dtype);
  return Finish(d, s, name);
}

/* A conv-like op: inputs, then strides (4), padding, data_format, and optional dilations (4) and
 * explicit_paddings (8). */
static TF_Operation* ConvOp(TF_Graph* g, const char* op, const char* name, TF_Output* in, int nin,
                            const int64_t* strides, const char* padding, const char* format,
                            const int64_t* dilations, const int64_t* explicit_pads, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  int i;
  for (i = 0; i < nin; ++i) TF_AddInput(d, in[i]);
  TF_SetAttrIntList(d, "strides", strides, 4);
  TF_SetAttrString(d, "padding", padding, strlen(padding));
  TF_SetAttrString(d, "data_format", format, strlen(format));
  if (dilations != NULL) TF_SetAttrIntList(d, "dilations", dilations, 4);
  if (explicit_pads != NULL) TF_SetAttrIntList(d, "explicit_paddings", explicit_pads, 8);
  return Finish(d, s, name);
}

static TF_Operation* PoolOp(TF_Graph* g, const char* op, const char* name, TF_Output x, const int64_t* ksize,
                            const int64_t* strides, const char* padding, const char* format, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  TF_SetAttrIntList(d, "ksize", ksize, 4);
  TF_SetAttrIntList(d, "strides", strides, 4);
  TF_SetAttrString(d, "padding", padding, strlen(padding));
  TF_SetAttrString(d, "data_format", format, strlen(format));
  return Finish(d, s, name);
}

static TF_Operation* Resize(TF_Graph* g, const char* op, const char* name, TF_Output x, TF_Output size,
                            int align_corners, int half_pixel, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, x);
  TF_AddInput(d, size);
  TF_SetAttrBool(d, "align_corners", (unsigned char)align_corners);
  TF_SetAttrBool(d, "half_pixel_centers", (unsigned char)half_pixel);
  return Finish(d, s, name);
}

static int FloatsNear(const TF_Tensor* t, const float* want, int n, float tol) {
  int i;
  if (t == NULL || TF_TensorType(t) != TF_FLOAT || TF_TensorElementCount(t) != n) return 0;
  for (i = 0; i < n; ++i) {
    const float got = ((const float*)TF_TensorData(t))[i];
    if (!(fabsf(got - want[i]) <= tol * (1.0f + fabsf(want[i])))) {
      printf("     [%d]: got %.7g, want %.7g\n", i, got, want[i]);
      return 0;
    }
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

/* Runs one session step; returns the status code. */
static TF_Code Step(TF_Session* sess, TF_Output* feeds, TF_Tensor** feed_values, int nfeeds, TF_Output* fetches,
                    TF_Tensor** outs, int nfetches, const TF_Operation* const* targets, int ntargets, TF_Status* s) {
  TF_SessionRun(sess, NULL, feeds, feed_values, nfeeds, fetches, outs, nfetches, targets, ntargets, NULL, s);
  return TF_GetCode(s);
}

static TF_Session* NewSession(TF_Graph* g, TF_Status* s) {
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* sess = TF_NewSession(g, opts, s);
  TF_DeleteSessionOptions(opts);
  CHECK_OK(s, "TF_NewSession");
  return sess;
}

static void CloseSession(TF_Session* sess) {
  TF_Status* close = TF_NewStatus();
  TF_CloseSession(sess, close);
  TF_DeleteSession(sess, close);
  TF_DeleteStatus(close);
}

/* Fetches `n` outputs of `g` in a fresh session (no feeds); outs must be freed by the caller. */
static int Run(TF_Graph* g, TF_Output* fetches, TF_Tensor** outs, int n, TF_Status* s) {
  TF_Session* sess = NewSession(g, s);
  int ok = 0, i;
  for (i = 0; i < n; ++i) outs[i] = NULL;
  if (sess != NULL) {
    ok = Step(sess, NULL, NULL, 0, fetches, outs, n, NULL, 0, s) == TF_OK;
    CHECK(ok, "TF_SessionRun: %s", TF_Message(s));
    CloseSession(sess);
  }
  return ok;
}

static void FreeAll(TF_Tensor** t, int n) {
  int i;
  for (i = 0; i < n; ++i) {
    if (t[i] != NULL) TF_DeleteTensor(t[i]);
  }
}

/* Runs `fetch` with one feed and checks the step fails with `code` and a message that holds both
 * `node` and `needle`. Takes ownership of `value`. */
static void CheckFails(TF_Graph* g, TF_Output feed, TF_Tensor* value, TF_Output fetch, TF_Code code,
                       const char* node, const char* needle, const char* what, TF_Status* s) {
  TF_Session* sess = NewSession(g, s);
  TF_Tensor* out = NULL;
  if (sess != NULL) {
    Step(sess, value != NULL ? &feed : NULL, value != NULL ? &value : NULL, value != NULL ? 1 : 0, &fetch, &out, 1,
         NULL, 0, s);
    CloseSession(sess);
  }
  CHECK(TF_GetCode(s) == code && strstr(TF_Message(s), node) != NULL && strstr(TF_Message(s), needle) != NULL &&
            out == NULL,
        "%s: code %d, \"%s\"", what, (int)TF_GetCode(s), TF_Message(s));
  if (out != NULL) TF_DeleteTensor(out);
  if (value != NULL) TF_DeleteTensor(value);
}

static void CheckConvolutions(TF_Status* s) {
  printf("-- Conv2D, DepthwiseConv2dNative and the Conv2D backprops\n");
  TF_Graph* g = TF_NewGraph();
  const int64_t ones[] = {1, 1, 1, 1};
  /* x = [[1 2 3] [4 5 6] [7 8 9]], filter [[1 2] [3 4]] (HWIO [2,2,1,1]), VALID:
   * y[0][0] = 1*1 + 2*2 + 4*3 + 5*4 = 37, then 47, 67, 77. */
  const int64_t x33[] = {1, 3, 3, 1}, f22[] = {2, 2, 1, 1};
  TF_Output in[3];
  in[0] = Out(Ramp(g, "x33", x33, 4, 1, 1, s), 0);
  in[1] = Out(Ramp(g, "f22", f22, 4, 1, 1, s), 0);
  TF_Operation* valid = ConvOp(g, "Conv2D", "conv_valid", in, 2, ones, "VALID", "NHWC", NULL, NULL, s);
  /* The same in double: the im2col path. */
  TF_Operation* x33d = Unary(g, "Cast", "x33d", in[0], s);
  TF_Operation* f22d = Unary(g, "Cast", "f22d", in[1], s);
  TF_Output ind[] = {Out(x33d, 0), Out(f22d, 0)};
  TF_Operation* valid_d = ConvOp(g, "Conv2D", "conv_valid_double", ind, 2, ones, "VALID", "NHWC", NULL, NULL, s);
  TF_Operation* valid_back = Unary(g, "Cast", "conv_valid_double_as_float", Out(valid_d, 0), s);
  /* SAME, stride 2, 2 -> 3 channels. */
  const int64_t x442[] = {1, 4, 4, 2}, f3323[] = {3, 3, 2, 3}, s2[] = {1, 2, 2, 1};
  in[0] = Out(Ramp(g, "x442", x442, 4, 0.5f, 0.25f, s), 0);
  in[1] = Out(Ramp(g, "f3323", f3323, 4, -1, 0.125f, s), 0);
  TF_Operation* same = ConvOp(g, "Conv2D", "conv_same", in, 2, s2, "SAME", "NHWC", NULL, NULL, s);
  /* NCHW, EXPLICIT padding (top 1, right 2), dilation 2. */
  const int64_t xn[] = {1, 2, 4, 5}, f2222[] = {2, 2, 2, 2}, dil[] = {1, 1, 2, 2};
  const int64_t pads[] = {0, 0, 0, 0, 1, 0, 0, 2};
  in[0] = Out(Ramp(g, "x_nchw", xn, 4, 0, 0.5f, s), 0);
  in[1] = Out(Ramp(g, "f2222", f2222, 4, 1, -0.25f, s), 0);
  TF_Operation* expl = ConvOp(g, "Conv2D", "conv_explicit", in, 2, ones, "EXPLICIT", "NCHW", dil, pads, s);
  /* 4 input channels, filter input depth 2: two groups. */
  const int64_t x3[] = {1, 3, 3, 4};
  in[0] = Out(Ramp(g, "x3", x3, 4, 1, 0.5f, s), 0);
  in[1] = Out(Ramp(g, "fg", f2222, 4, 0.25f, 0.25f, s), 0);
  TF_Operation* grouped = ConvOp(g, "Conv2D", "conv_grouped", in, 2, ones, "VALID", "NHWC", NULL, NULL, s);
  /* Depthwise, multiplier 2, SAME. */
  const int64_t xd[] = {1, 3, 3, 2};
  in[0] = Out(Ramp(g, "xd", xd, 4, 1, 1, s), 0);
  in[1] = Out(Ramp(g, "fd", f2222, 4, 1, -0.5f, s), 0);
  TF_Operation* depthwise =
      ConvOp(g, "DepthwiseConv2dNative", "depthwise", in, 2, ones, "SAME", "NHWC", NULL, NULL, s);
  /* Backprops of a stride-2 SAME convolution of x [1,4,4,1] with f [3,3,1,2]. */
  const int64_t xb[] = {1, 4, 4, 1}, fb[] = {3, 3, 1, 2}, dyb[] = {1, 2, 2, 2}, d4[] = {4};
  const int32_t xb32[] = {1, 4, 4, 1}, fb32[] = {3, 3, 1, 2};
  TF_Operation* x_b = Ramp(g, "xb", xb, 4, 1, 0.5f, s);
  TF_Operation* f_b = Ramp(g, "fb", fb, 4, 0.5f, 0.25f, s);
  TF_Operation* dy_b = Ramp(g, "dyb", dyb, 4, 1, 1, s);
  in[0] = Out(Int32Const(g, "input_sizes", xb32, d4, 1, s), 0);
  in[1] = Out(f_b, 0);
  in[2] = Out(dy_b, 0);
  TF_Operation* bp_input = ConvOp(g, "Conv2DBackpropInput", "bp_input", in, 3, s2, "SAME", "NHWC", NULL, NULL, s);
  in[0] = Out(x_b, 0);
  in[1] = Out(Int32Const(g, "filter_sizes", fb32, d4, 1, s), 0);
  TF_Operation* bp_filter = ConvOp(g, "Conv2DBackpropFilter", "bp_filter", in, 3, s2, "SAME", "NHWC", NULL, NULL, s);

  TF_Output fetches[] = {Out(valid, 0),   Out(valid_back, 0), Out(same, 0),     Out(expl, 0),
                         Out(grouped, 0), Out(depthwise, 0),  Out(bp_input, 0), Out(bp_filter, 0)};
  TF_Tensor* outs[8];
  if (Run(g, fetches, outs, 8, s)) {
    const int64_t y_valid[] = {1, 2, 2, 1}, y_same[] = {1, 2, 2, 3}, y_expl[] = {1, 2, 3, 5};
    const int64_t y_dw[] = {1, 3, 3, 4};
    CHECK(ShapeIs(outs[0], y_valid, 4) && FloatsNear(outs[0], kConvValid, 4, 1e-6f), "Conv2D VALID: 37 47 67 77");
    CHECK(FloatsNear(outs[1], kConvValid, 4, 1e-6f), "Conv2D in double");
    CHECK(ShapeIs(outs[2], y_same, 4) && FloatsNear(outs[2], kConvSameStride2, COUNT(kConvSameStride2), 1e-5f),
          "Conv2D SAME stride 2");
    CHECK(ShapeIs(outs[3], y_expl, 4) && FloatsNear(outs[3], kConvExplicitNchw, COUNT(kConvExplicitNchw), 1e-5f),
          "Conv2D NCHW, EXPLICIT padding, dilation 2");
    CHECK(FloatsNear(outs[4], kConvGrouped, COUNT(kConvGrouped), 1e-5f), "Conv2D with 2 groups");
    CHECK(ShapeIs(outs[5], y_dw, 4) && FloatsNear(outs[5], kDepthwise, COUNT(kDepthwise), 1e-5f),
          "DepthwiseConv2dNative, multiplier 2, SAME");
    CHECK(ShapeIs(outs[6], xb, 4) && FloatsNear(outs[6], kBackpropInput, COUNT(kBackpropInput), 1e-5f),
          "Conv2DBackpropInput");
    CHECK(ShapeIs(outs[7], fb, 4) && FloatsNear(outs[7], kBackpropFilter, COUNT(kBackpropFilter), 1e-5f),
          "Conv2DBackpropFilter");
  }
  FreeAll(outs, 8);
  TF_DeleteGraph(g);
}

static void CheckBiasAndBatchNorm(TF_Status* s) {
  printf("-- BiasAdd, BiasAddGrad and FusedBatchNormV3\n");
  TF_Graph* g = TF_NewGraph();
  /* NHWC: [[1 2 3] [4 5 6]] + [10 20 30] = [[11 22 33] [14 25 36]]; the gradient sums rows:
   * [5 7 9]. NCHW [1,2,2]: channel 0 is [1 2], channel 1 [3 4]; + [10 20] = [11 12 23 24];
   * sums [3 7]. */
  const int64_t d23[] = {2, 3}, d3[] = {3}, d122[] = {1, 2, 2}, d2[] = {2};
  const float b3[] = {10, 20, 30}, b2[] = {10, 20};
  TF_Operation* v = Ramp(g, "v", d23, 2, 1, 1, s);
  TF_Operation* bias = FloatConst(g, "bias", b3, d3, 1, s);
  TF_OperationDescription* d = TF_NewOperation(g, "BiasAdd", "bias_add");
  TF_AddInput(d, Out(v, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_Operation* add = Finish(d, s, "BiasAdd");
  TF_Operation* v_nchw = Ramp(g, "v_nchw", d122, 3, 1, 1, s);
  TF_Operation* bias2 = FloatConst(g, "bias2", b2, d2, 1, s);
  d = TF_NewOperation(g, "BiasAdd", "bias_add_nchw");
  TF_AddInput(d, Out(v_nchw, 0));
  TF_AddInput(d, Out(bias2, 0));
  TF_SetAttrString(d, "data_format", "NCHW", 4);
  TF_Operation* add_nchw = Finish(d, s, "BiasAdd NCHW");
  TF_Operation* grad = Unary(g, "BiasAddGrad", "bias_grad", Out(v, 0), s);
  d = TF_NewOperation(g, "BiasAddGrad", "bias_grad_nchw");
  TF_AddInput(d, Out(v_nchw, 0));
  TF_SetAttrString(d, "data_format", "NCHW", 4);
  TF_Operation* grad_nchw = Finish(d, s, "BiasAddGrad NCHW");

  /* FusedBatchNormV3 of x [1,2,2,2] = 1..8 (channel 0: 1 3 5 7, channel 1: 2 4 6 8). */
  const int64_t dx[] = {1, 2, 2, 2};
  const float scale[] = {1, 2}, offset[] = {0.5f, -0.5f}, mean[] = {4, 5}, var[] = {2, 8};
  TF_Output bn_in[5];
  bn_in[0] = Out(Ramp(g, "bn_x", dx, 4, 1, 1, s), 0);
  bn_in[1] = Out(FloatConst(g, "bn_scale", scale, d2, 1, s), 0);
  bn_in[2] = Out(FloatConst(g, "bn_offset", offset, d2, 1, s), 0);
  bn_in[3] = Out(FloatConst(g, "bn_mean", mean, d2, 1, s), 0);
  bn_in[4] = Out(FloatConst(g, "bn_var", var, d2, 1, s), 0);
  int i;
  d = TF_NewOperation(g, "FusedBatchNormV3", "bn_inference");
  for (i = 0; i < 5; ++i) TF_AddInput(d, bn_in[i]);
  TF_SetAttrBool(d, "is_training", 0);
  TF_SetAttrFloat(d, "epsilon", 0.001f);
  TF_Operation* bn_inf = Finish(d, s, "FusedBatchNormV3 inference");
  /* Training (the default), exponential_avg_factor 0.5: batch mean [4 5], biased variance
   * [5 5], unbiased [20/3 20/3]; running mean 0.5 * [4 5] + 0.5 * [4 5] = [4 5], running
   * variance 0.5 * [2 8] + 0.5 * 20/3 = [13/3 22/3]. */
  d = TF_NewOperation(g, "FusedBatchNormV3", "bn_training");
  for (i = 0; i < 5; ++i) TF_AddInput(d, bn_in[i]);
  TF_SetAttrFloat(d, "epsilon", 0.001f);
  TF_SetAttrFloat(d, "exponential_avg_factor", 0.5f);
  TF_Operation* bn_train = Finish(d, s, "FusedBatchNormV3 training");

  TF_Output fetches[] = {Out(add, 0),      Out(add_nchw, 0),  Out(grad, 0),      Out(grad_nchw, 0),
                         Out(bn_inf, 0),   Out(bn_inf, 1),    Out(bn_inf, 2),    Out(bn_train, 0),
                         Out(bn_train, 1), Out(bn_train, 2),  Out(bn_train, 3),  Out(bn_train, 4),
                         Out(bn_train, 5)};
  TF_Tensor* outs[13];
  if (Run(g, fetches, outs, 13, s)) {
    const float want_add[] = {11, 22, 33, 14, 25, 36}, want_nchw[] = {11, 12, 23, 24};
    const float want_grad[] = {5, 7, 9}, want_grad_nchw[] = {3, 7};
    CHECK(ShapeIs(outs[0], d23, 2) && FloatsNear(outs[0], want_add, 6, 0), "BiasAdd NHWC");
    CHECK(ShapeIs(outs[1], d122, 3) && FloatsNear(outs[1], want_nchw, 4, 0), "BiasAdd NCHW");
    CHECK(FloatsNear(outs[2], want_grad, 3, 0), "BiasAddGrad NHWC: [5 7 9]");
    CHECK(FloatsNear(outs[3], want_grad_nchw, 2, 0), "BiasAddGrad NCHW: [3 7]");
    CHECK(ShapeIs(outs[4], dx, 4) && FloatsNear(outs[4], kBnInference, 8, 1e-5f), "FusedBatchNormV3 inference y");
    CHECK(FloatsNear(outs[5], mean, 2, 0) && FloatsNear(outs[6], var, 2, 0),
          "FusedBatchNormV3 inference passes mean and variance through");
    CHECK(FloatsNear(outs[7], kBnTrainingY, 8, 1e-5f), "FusedBatchNormV3 training y (batch statistics)");
    CHECK(FloatsNear(outs[8], kBnTrainingMean, 2, 1e-6f), "FusedBatchNormV3 running mean");
    CHECK(FloatsNear(outs[9], kBnTrainingVar, 2, 1e-6f), "FusedBatchNormV3 running variance (unbiased batch's)");
    CHECK(FloatsNear(outs[10], kBnTrainingSaved, 2, 1e-6f) && FloatsNear(outs[11], kBnTrainingSaved + 2, 2, 1e-6f),
          "FusedBatchNormV3 reserve spaces: batch mean, biased variance");
    CHECK(outs[12] != NULL && TF_NumDims(outs[12]) == 0, "FusedBatchNormV3 reserve_space_3 is a scalar");
  }
  FreeAll(outs, 13);
  TF_DeleteGraph(g);
}

static void CheckPooling(TF_Status* s) {
  printf("-- MaxPool and AvgPool\n");
  TF_Graph* g = TF_NewGraph();
  /* x = [[1 2 3] [4 5 6] [7 8 9]], 2x2 windows, stride 2, SAME (one row and column of padding
   * at the end): max [5 6 8 9]; mean over the values inside only: [3 4.5 7.5 9]. */
  const int64_t x33[] = {1, 3, 3, 1}, x133[] = {1, 1, 3, 3}, k2[] = {1, 2, 2, 1}, k2c[] = {1, 1, 2, 2};
  TF_Operation* x = Ramp(g, "x", x33, 4, 1, 1, s);
  TF_Operation* x_nchw = Ramp(g, "x_nchw", x133, 4, 1, 1, s);
  TF_Operation* max = PoolOp(g, "MaxPool", "max_same", Out(x, 0), k2, k2, "SAME", "NHWC", s);
  TF_Operation* avg = PoolOp(g, "AvgPool", "avg_same", Out(x, 0), k2, k2, "SAME", "NHWC", s);
  TF_Operation* max_nchw = PoolOp(g, "MaxPool", "max_same_nchw", Out(x_nchw, 0), k2c, k2c, "SAME", "NCHW", s);
  const int64_t x442[] = {1, 4, 4, 2}, k32[] = {1, 3, 2, 1}, s12[] = {1, 1, 2, 1};
  TF_Operation* x2 = Ramp(g, "x2", x442, 4, 1, -0.5f, s);
  TF_Operation* avg_valid = PoolOp(g, "AvgPool", "avg_valid", Out(x2, 0), k32, s12, "VALID", "NHWC", s);
  TF_Output fetches[] = {Out(max, 0), Out(avg, 0), Out(max_nchw, 0), Out(avg_valid, 0)};
  TF_Tensor* outs[4];
  if (Run(g, fetches, outs, 4, s)) {
    const int64_t y22[] = {1, 2, 2, 1}, y122[] = {1, 1, 2, 2}, y222[] = {1, 2, 2, 2};
    CHECK(ShapeIs(outs[0], y22, 4) && FloatsNear(outs[0], kMaxPoolSame, 4, 0), "MaxPool SAME: 5 6 8 9");
    CHECK(FloatsNear(outs[1], kAvgPoolSame, 4, 1e-6f), "AvgPool SAME leaves padding out: 3 4.5 7.5 9");
    CHECK(ShapeIs(outs[2], y122, 4) && FloatsNear(outs[2], kMaxPoolSame, 4, 0), "MaxPool NCHW");
    CHECK(ShapeIs(outs[3], y222, 4) && FloatsNear(outs[3], kAvgPoolValid, 8, 1e-6f), "AvgPool VALID 3x2, stride 1x2");
  }
  FreeAll(outs, 4);
  TF_DeleteGraph(g);
}

static void CheckResize(TF_Status* s) {
  printf("-- ResizeBilinear and ResizeNearestNeighbor\n");
  TF_Graph* g = TF_NewGraph();
  /* [[1 2] [3 4]] to 3x3. Legacy bilinear: source x * 2/3, so column 1 reads 0.667 of the way
   * from 1 to 2 (1.667) and column 2 clamps to 2. Nearest, align_corners: scale 1/2, column 1
   * is round(0.5) = 1 (half away from zero), so [1 2 2]. */
  const int64_t x22[] = {1, 2, 2, 1}, x15[] = {1, 1, 5, 1}, d2[] = {2};
  const int32_t s33[] = {3, 3}, s13[] = {1, 3}, s17[] = {1, 7};
  TF_Operation* x = Ramp(g, "x", x22, 4, 1, 1, s);
  TF_Operation* x5 = Ramp(g, "x5", x15, 4, 1, 1, s);
  TF_Output size33 = Out(Int32Const(g, "size33", s33, d2, 1, s), 0);
  TF_Output size13 = Out(Int32Const(g, "size13", s13, d2, 1, s), 0);
  TF_Output size17 = Out(Int32Const(g, "size17", s17, d2, 1, s), 0);
  TF_Operation* ops[9];
  ops[0] = Resize(g, "ResizeBilinear", "bilinear", Out(x, 0), size33, 0, 0, s);
  ops[1] = Resize(g, "ResizeBilinear", "bilinear_align", Out(x, 0), size33, 1, 0, s);
  ops[2] = Resize(g, "ResizeBilinear", "bilinear_half", Out(x, 0), size33, 0, 1, s);
  ops[3] = Resize(g, "ResizeBilinear", "bilinear_half_down", Out(x5, 0), size13, 0, 1, s);
  ops[4] = Resize(g, "ResizeNearestNeighbor", "nearest", Out(x, 0), size33, 0, 0, s);
  ops[5] = Resize(g, "ResizeNearestNeighbor", "nearest_align", Out(x, 0), size33, 1, 0, s);
  ops[6] = Resize(g, "ResizeNearestNeighbor", "nearest_half", Out(x, 0), size33, 0, 1, s);
  ops[7] = Resize(g, "ResizeNearestNeighbor", "nearest_half_down", Out(x5, 0), size13, 0, 1, s);
  ops[8] = Resize(g, "ResizeNearestNeighbor", "nearest_align_up", Out(x5, 0), size17, 1, 0, s);
  TF_Output fetches[9];
  TF_Tensor* outs[9];
  int i;
  for (i = 0; i < 9; ++i) fetches[i] = Out(ops[i], 0);
  if (Run(g, fetches, outs, 9, s)) {
    const int64_t y33[] = {1, 3, 3, 1};
    CHECK(ShapeIs(outs[0], y33, 4) && FloatsNear(outs[0], kBilinearLegacy, 9, 1e-6f), "ResizeBilinear legacy");
    CHECK(FloatsNear(outs[1], kBilinearAlign, 9, 1e-6f), "ResizeBilinear align_corners");
    CHECK(FloatsNear(outs[2], kBilinearHalf, 9, 1e-6f), "ResizeBilinear half_pixel_centers");
    CHECK(FloatsNear(outs[3], kBilinearHalfDown, 3, 1e-6f), "ResizeBilinear half_pixel_centers, 5 -> 3");
    CHECK(FloatsNear(outs[4], kNearestLegacy, 9, 0), "ResizeNearestNeighbor legacy (floor)");
    CHECK(FloatsNear(outs[5], kNearestAlign, 9, 0), "ResizeNearestNeighbor align_corners (round half away)");
    CHECK(FloatsNear(outs[6], kNearestHalf, 9, 0), "ResizeNearestNeighbor half_pixel_centers");
    CHECK(FloatsNear(outs[7], kNearestHalfDown, 3, 0), "ResizeNearestNeighbor half_pixel_centers, 5 -> 3");
    CHECK(FloatsNear(outs[8], kNearestAlignUp, 7, 0), "ResizeNearestNeighbor align_corners, 5 -> 7");
  }
  FreeAll(outs, 9);
  TF_DeleteGraph(g);
}

static void CheckGradients(TF_Status* s) {
  printf("-- gradients (TF_AddGradients)\n");
  TF_Graph* g = TF_NewGraph();
  /* z = BiasAdd(Conv2D(x, f), [0.5]) with x = 1..9 [1,3,3,1], f = 1..4 [2,2,1,1], VALID.
   * d sum(z) / d bias = 4 (four outputs); d / d f[a][b] = the sum of the x values it meets
   * (f[0][0]: 1 + 2 + 4 + 5 = 12); d / d x = how often each x meets each filter value. */
  const int64_t x33[] = {1, 3, 3, 1}, f22[] = {2, 2, 1, 1}, ones[] = {1, 1, 1, 1}, d1[] = {1};
  const float half = 0.5f;
  TF_Output in[2];
  in[0] = Out(Ramp(g, "x", x33, 4, 1, 1, s), 0);
  in[1] = Out(Ramp(g, "f", f22, 4, 1, 1, s), 0);
  TF_Operation* conv = ConvOp(g, "Conv2D", "conv", in, 2, ones, "VALID", "NHWC", NULL, NULL, s);
  TF_Operation* bias = FloatConst(g, "bias", &half, d1, 1, s);
  TF_OperationDescription* d = TF_NewOperation(g, "BiasAdd", "z");
  TF_AddInput(d, Out(conv, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_Operation* z = Finish(d, s, "BiasAdd");
  TF_Output z_out = Out(z, 0);
  TF_Output xs[] = {in[0], in[1], Out(bias, 0)};
  TF_Output dz[3];
  TF_AddGradients(g, &z_out, 1, xs, 3, NULL, s, dz);
  CHECK_OK(s, "TF_AddGradients through BiasAdd and Conv2D");
  /* Pools of x = 1..9, 2x2 windows, stride 2, SAME: MaxPool sends each window's 1 to its max
   * (5, 6, 8, 9); AvgPool spreads it over the window's in-bounds values (4, 2, 2 and 1 of
   * them). The NCHW MaxPool is the same numbers. */
  const int64_t k2[] = {1, 2, 2, 1}, k2c[] = {1, 1, 2, 2}, x133[] = {1, 1, 3, 3};
  TF_Operation* max = PoolOp(g, "MaxPool", "max", in[0], k2, k2, "SAME", "NHWC", s);
  TF_Operation* avg = PoolOp(g, "AvgPool", "avg", in[0], k2, k2, "SAME", "NHWC", s);
  TF_Output x_nchw = Out(Ramp(g, "x_nchw", x133, 4, 1, 1, s), 0);
  TF_Operation* max_nchw = PoolOp(g, "MaxPool", "max_nchw", x_nchw, k2c, k2c, "SAME", "NCHW", s);
  TF_Output pools[] = {Out(max, 0), Out(avg, 0), Out(max_nchw, 0)};
  TF_Output dpool[3];
  TF_AddGradients(g, &pools[0], 1, &in[0], 1, NULL, s, &dpool[0]);
  CHECK_OK(s, "TF_AddGradients through MaxPool");
  TF_AddGradients(g, &pools[1], 1, &in[0], 1, NULL, s, &dpool[1]);
  CHECK_OK(s, "TF_AddGradients through AvgPool");
  TF_AddGradients(g, &pools[2], 1, &x_nchw, 1, NULL, s, &dpool[2]);
  CHECK_OK(s, "TF_AddGradients through MaxPool NCHW");
  TF_Output fetches[] = {dz[0], dz[1], dz[2], dpool[0], dpool[1], dpool[2]};
  TF_Tensor* outs[6];
  if (TF_GetCode(s) == TF_OK && Run(g, fetches, outs, 6, s)) {
    const float four = 4, want_max[] = {0, 0, 0, 0, 1, 1, 0, 1, 1};
    const float want_avg[] = {0.25f, 0.25f, 0.5f, 0.25f, 0.25f, 0.5f, 0.5f, 0.5f, 1};
    CHECK(ShapeIs(outs[0], x33, 4) && FloatsNear(outs[0], kConvGradInput, 9, 1e-6f), "d/dx through Conv2D");
    CHECK(ShapeIs(outs[1], f22, 4) && FloatsNear(outs[1], kConvGradFilter, 4, 1e-6f), "d/dfilter: 12 16 24 28");
    CHECK(FloatsNear(outs[2], &four, 1, 0), "d/dbias through BiasAdd: 4");
    CHECK(FloatsNear(outs[3], want_max, 9, 0), "d/dx through MaxPool: to the maxima");
    CHECK(FloatsNear(outs[4], want_avg, 9, 1e-6f), "d/dx through AvgPool: over in-bounds values only");
    CHECK(ShapeIs(outs[5], x133, 4) && FloatsNear(outs[5], want_max, 9, 0), "d/dx through MaxPool NCHW");
    FreeAll(outs, 6);
  }
  TF_DeleteGraph(g);
}

/* TF_AddGradients through DepthwiseConv2dNative, ResizeBilinear and FusedBatchNormV3, seeded
 * with ones; every value by hand. */
static void CheckMoreGradients(TF_Status* s) {
  printf("-- gradients of DepthwiseConv2dNative, ResizeBilinear, FusedBatchNormV3\n");
  TF_Graph* g = TF_NewGraph();
  /* Depthwise with a 1x1 filter [2 3] (multiplier 2) over x = 1..4 [1,2,2,1]: y = (2x, 3x), so
   * dx = 2 + 3 = 5 everywhere and df = (sum x, sum x) = (10, 10). */
  const int64_t x2221[] = {1, 2, 2, 1}, f1112[] = {1, 1, 1, 2}, ones[] = {1, 1, 1, 1};
  const float fv[] = {2, 3};
  TF_Output in[2];
  in[0] = Out(Ramp(g, "x", x2221, 4, 1, 1, s), 0);
  in[1] = Out(FloatConst(g, "f", fv, f1112, 4, s), 0);
  TF_Operation* dw = ConvOp(g, "DepthwiseConv2dNative", "dw", in, 2, ones, "VALID", "NHWC", NULL, NULL, s);
  TF_Output dw_out = Out(dw, 0), ddw[2];
  TF_OperationDescription* d;
  TF_AddGradients(g, &dw_out, 1, in, 2, NULL, s, ddw);
  CHECK_OK(s, "TF_AddGradients through DepthwiseConv2dNative");
  /* ResizeBilinear of a 2x2 image to 3x3 (legacy): per axis the source coordinates are 0, 2/3
   * and 4/3 (clamped to 1 above), so index 0 collects weights 1 + 1/3 = 4/3 and index 1
   * 2/3 + 1 = 5/3; pixel (i, j) gets the product: [16 20 20 25] / 9. */
  const int32_t size33[] = {3, 3};
  const int64_t d2[] = {2};
  d = TF_NewOperation(g, "ResizeBilinear", "rs");
  TF_AddInput(d, in[0]);
  TF_AddInput(d, Out(Int32Const(g, "size33", size33, d2, 1, s), 0));
  TF_Operation* rs = Finish(d, s, "ResizeBilinear");
  TF_Output rs_out = Out(rs, 0), drs;
  TF_AddGradients(g, &rs_out, 1, &in[0], 1, NULL, s, &drs);
  CHECK_OK(s, "TF_AddGradients through ResizeBilinear");
  /* FusedBatchNormV3 in inference mode, one channel: y = (x - mean) scale / sqrt(var + eps),
   * scale 2, var + eps = 4: dx = 2 / 2 = 1 per element; dscale = sum (x - mean) / 2 =
   * (1 + 2 + 3 + 4 - 4 * 1) / 2 = 3 with mean 1; doffset = 4. */
  const float scale = 2, offset = 0.5f, mean = 1, var = 3.5f;
  const int64_t d1[] = {1};
  d = TF_NewOperation(g, "FusedBatchNormV3", "bn");
  TF_Output bn_in[5] = {in[0], Out(FloatConst(g, "bn_scale", &scale, d1, 1, s), 0),
                        Out(FloatConst(g, "bn_offset", &offset, d1, 1, s), 0),
                        Out(FloatConst(g, "bn_mean", &mean, d1, 1, s), 0),
                        Out(FloatConst(g, "bn_var", &var, d1, 1, s), 0)};
  int i;
  for (i = 0; i < 5; ++i) TF_AddInput(d, bn_in[i]);
  TF_SetAttrFloat(d, "epsilon", 0.5f);
  TF_SetAttrBool(d, "is_training", 0);
  TF_Operation* bn = Finish(d, s, "FusedBatchNormV3");
  TF_Output bn_out = Out(bn, 0), dbn[3];
  TF_AddGradients(g, &bn_out, 1, bn_in, 3, NULL, s, dbn);
  CHECK_OK(s, "TF_AddGradients through FusedBatchNormV3 (inference)");
  TF_Output fetches[] = {ddw[0], ddw[1], drs, dbn[0], dbn[1], dbn[2]};
  TF_Tensor* outs[6];
  if (TF_GetCode(s) == TF_OK && Run(g, fetches, outs, 6, s)) {
    const float fives[] = {5, 5, 5, 5}, tens[] = {10, 10};
    const float bilinear[] = {16.f / 9, 20.f / 9, 20.f / 9, 25.f / 9};
    const float bn_dx[] = {1, 1, 1, 1}, three = 3, four = 4;
    CHECK(ShapeIs(outs[0], x2221, 4) && FloatsNear(outs[0], fives, 4, 1e-6f), "Depthwise d/dx = 2 + 3");
    CHECK(ShapeIs(outs[1], f1112, 4) && FloatsNear(outs[1], tens, 2, 1e-6f), "Depthwise d/df = sum x");
    CHECK(ShapeIs(outs[2], x2221, 4) && FloatsNear(outs[2], bilinear, 4, 1e-5f), "ResizeBilinear d/dx = [16 20 20 25] / 9");
    CHECK(FloatsNear(outs[3], bn_dx, 4, 1e-6f), "FusedBatchNormV3 inference d/dx = scale / sqrt(var + eps) = 1");
    CHECK(FloatsNear(outs[4], &three, 1, 1e-6f), "FusedBatchNormV3 d/dscale = 3");
    CHECK(FloatsNear(outs[5], &four, 1, 1e-6f), "FusedBatchNormV3 d/doffset = 4");
    FreeAll(outs, 6);
  }
  TF_DeleteGraph(g);
}

static TF_Operation* VarHandle(TF_Graph* g, const char* name, const char* shared_name, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "VarHandleOp", name);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  const int64_t dims[] = {2};
  TF_SetAttrShape(d, "shape", dims, 1);
  TF_SetAttrString(d, "shared_name", shared_name, strlen(shared_name));
  return Finish(d, s, name);
}

static TF_Operation* VarUpdate(TF_Graph* g, const char* op, const char* name, TF_Output handle, TF_Output value,
                               TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, op, name);
  TF_AddInput(d, handle);
  TF_AddInput(d, value);
  return Finish(d, s, name);
}

static TF_Operation* ReadVar(TF_Graph* g, const char* name, TF_Output handle, TF_DataType dtype, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "ReadVariableOp", name);
  TF_AddInput(d, handle);
  TF_SetAttrType(d, "dtype", dtype);
  return Finish(d, s, name);
}

/* Reads `fetch` in `sess` and checks it holds want[0..1]. */
static void CheckValue(TF_Session* sess, TF_Output fetch, const float* want, const char* what, TF_Status* s) {
  TF_Tensor* out = NULL;
  Step(sess, NULL, NULL, 0, &fetch, &out, 1, NULL, 0, s);
  CHECK(TF_GetCode(s) == TF_OK && FloatsNear(out, want, 2, 0), "%s: %s", what, TF_Message(s));
  if (out != NULL) TF_DeleteTensor(out);
}

static void CheckUninitialized(TF_Session* sess, TF_Output fetch, const char* name, const char* what, TF_Status* s) {
  TF_Tensor* out = NULL;
  Step(sess, NULL, NULL, 0, &fetch, &out, 1, NULL, 0, s);
  CHECK(TF_GetCode(s) == TF_FAILED_PRECONDITION && strstr(TF_Message(s), name) != NULL && out == NULL,
        "%s: code %d, \"%s\"", what, (int)TF_GetCode(s), TF_Message(s));
  if (out != NULL) TF_DeleteTensor(out);
}

static void CheckVariables(TF_Status* s) {
  printf("-- resource variables and VariableV2\n");
  TF_Graph* g = TF_NewGraph();
  const int64_t d2[] = {2};
  const float init[] = {1, 2}, delta[] = {10, 20}, ones[] = {1, 1};
  TF_Output w = Out(VarHandle(g, "w", "weights", s), 0);
  TF_Operation* assign = VarUpdate(g, "AssignVariableOp", "assign", w, Out(FloatConst(g, "init", init, d2, 1, s), 0), s);
  TF_Operation* add = VarUpdate(g, "AssignAddVariableOp", "add", w, Out(FloatConst(g, "delta", delta, d2, 1, s), 0), s);
  TF_Operation* sub = VarUpdate(g, "AssignSubVariableOp", "sub", w, Out(FloatConst(g, "ones", ones, d2, 1, s), 0), s);
  TF_Output read = Out(ReadVar(g, "read", w, TF_FLOAT, s), 0);
  /* A second handle with the same shared_name is the same variable. */
  TF_Output read_again = Out(ReadVar(g, "read_again", Out(VarHandle(g, "w_again", "weights", s), 0), TF_FLOAT, s), 0);
  TF_Output read_int = Out(ReadVar(g, "read_int", w, TF_INT32, s), 0);
  /* Ref variables: v = VariableV2, Assign(v, init), and a read through Identity. */
  TF_OperationDescription* d = TF_NewOperation(g, "VariableV2", "v");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrShape(d, "shape", d2, 1);
  TF_Operation* v = Finish(d, s, "VariableV2");
  TF_Operation* v_assign = VarUpdate(g, "Assign", "v_assign", Out(v, 0), Out(FloatConst(g, "v_init", delta, d2, 1, s), 0), s);
  const float three[] = {1, 2, 3};
  const int64_t d3[] = {3};
  TF_Operation* v_assign3 =
      VarUpdate(g, "Assign", "v_assign3", Out(v, 0), Out(FloatConst(g, "v_init3", three, d3, 1, s), 0), s);
  TF_Output v_read = Out(Unary(g, "Identity", "v_read", Out(v, 0), s), 0);

  TF_Session* sess = NewSession(g, s);
  if (sess != NULL) {
    CheckUninitialized(sess, read, "weights", "ReadVariableOp before any assign is FAILED_PRECONDITION naming it", s);
    CheckUninitialized(sess, v_read, "uninitialized value v", "reading VariableV2 before Assign", s);
    Step(sess, NULL, NULL, 0, NULL, NULL, 0, (const TF_Operation* const*)&assign, 1, s);
    CHECK_OK(s, "AssignVariableOp [1 2] (first run)");
    CheckValue(sess, read, init, "the value persists into the next TF_SessionRun", s);
    CheckValue(sess, read_again, init, "a second VarHandleOp of shared_name 'weights' reads it too", s);
    Step(sess, NULL, NULL, 0, NULL, NULL, 0, (const TF_Operation* const*)&add, 1, s);
    CHECK_OK(s, "AssignAddVariableOp [10 20]");
    const float after_add[] = {11, 22}, after_sub[] = {10, 21};
    CheckValue(sess, read, after_add, "after AssignAdd: [11 22]", s);
    Step(sess, NULL, NULL, 0, NULL, NULL, 0, (const TF_Operation* const*)&sub, 1, s);
    CHECK_OK(s, "AssignSubVariableOp [1 1]");
    CheckValue(sess, read, after_sub, "after AssignSub: [10 21]", s);
    TF_Tensor* out = NULL;
    Step(sess, NULL, NULL, 0, &read_int, &out, 1, NULL, 0, s);
    CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), "read_int") != NULL &&
              strstr(TF_Message(s), "wrong dtype") != NULL,
          "ReadVariableOp of int32 from a float variable: \"%s\"", TF_Message(s));
    if (out != NULL) TF_DeleteTensor(out);
    /* Assign outputs the new value; VariableV2 then reads it in later runs. */
    TF_Output assigned = Out(v_assign, 0);
    out = NULL;
    Step(sess, NULL, NULL, 0, &assigned, &out, 1, NULL, 0, s);
    CHECK(TF_GetCode(s) == TF_OK && FloatsNear(out, delta, 2, 0), "Assign(v, [10 20]) outputs the new value: %s",
          TF_Message(s));
    if (out != NULL) TF_DeleteTensor(out);
    CheckValue(sess, v_read, delta, "VariableV2 holds [10 20] in the next run", s);
    TF_Output assigned3 = Out(v_assign3, 0);
    out = NULL;
    Step(sess, NULL, NULL, 0, &assigned3, &out, 1, NULL, 0, s);
    CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), "v_assign3") != NULL &&
              strstr(TF_Message(s), "shapes") != NULL,
          "Assign of a [3] value to a [2] variable with validate_shape: \"%s\"", TF_Message(s));
    if (out != NULL) TF_DeleteTensor(out);
    CloseSession(sess);
  }
  /* Variables belong to their session: a new one starts without values. */
  sess = NewSession(g, s);
  if (sess != NULL) {
    CheckUninitialized(sess, read, "weights", "a new session has its own, uninitialized variables", s);
    CloseSession(sess);
  }
  TF_DeleteGraph(g);
}

/* Errors at graph construction (shape functions and attr checks) must name the node. */
static void CheckBuildFails(TF_OperationDescription* d, const char* node, const char* needle, const char* what,
                            TF_Status* s) {
  TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), node) != NULL &&
            strstr(TF_Message(s), needle) != NULL,
        "%s: code %d, \"%s\"", what, (int)TF_GetCode(s), TF_Message(s));
}

static void CheckBadInput(TF_Status* s) {
  printf("-- bad input\n");
  TF_Graph* g = TF_NewGraph();
  TF_Operation* x = Placeholder(g, "x", TF_FLOAT, s);
  TF_Operation* f = Placeholder(g, "f", TF_FLOAT, s);
  TF_Operation* sizes = Placeholder(g, "sizes", TF_INT32, s);
  const int64_t ones[] = {1, 1, 1, 1}, batch2[] = {2, 1, 1, 1}, zero_stride[] = {1, 0, 1, 1};
  /* Attrs: three strides, a stride in the batch dim, a zero stride, an unknown data_format,
   * explicit_paddings without EXPLICIT, a pooling window over the batch. */
  TF_OperationDescription* d = TF_NewOperation(g, "Conv2D", "conv_3_strides");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrIntList(d, "strides", ones, 3);
  TF_SetAttrString(d, "padding", "SAME", 4);
  CheckBuildFails(d, "conv_3_strides", "strides must have 4 values", "Conv2D with 3 strides", s);
  d = TF_NewOperation(g, "Conv2D", "conv_batch_stride");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrIntList(d, "strides", batch2, 4);
  TF_SetAttrString(d, "padding", "SAME", 4);
  CheckBuildFails(d, "conv_batch_stride", "batch and depth", "Conv2D with a batch stride", s);
  d = TF_NewOperation(g, "Conv2D", "conv_zero_stride");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrIntList(d, "strides", zero_stride, 4);
  TF_SetAttrString(d, "padding", "VALID", 5);
  CheckBuildFails(d, "conv_zero_stride", "positive", "Conv2D with a zero stride", s);
  d = TF_NewOperation(g, "Conv2D", "conv_bad_format");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrIntList(d, "strides", ones, 4);
  TF_SetAttrString(d, "padding", "SAME", 4);
  TF_SetAttrString(d, "data_format", "NCWH", 4);
  CheckBuildFails(d, "conv_bad_format", "NCWH", "Conv2D with data_format NCWH", s);
  d = TF_NewOperation(g, "Conv2D", "conv_stray_pads");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(f, 0));
  TF_SetAttrIntList(d, "strides", ones, 4);
  TF_SetAttrString(d, "padding", "SAME", 4);
  const int64_t pads8[] = {0, 0, 1, 1, 1, 1, 0, 0};
  TF_SetAttrIntList(d, "explicit_paddings", pads8, 8);
  CheckBuildFails(d, "conv_stray_pads", "EXPLICIT", "Conv2D with explicit_paddings and SAME", s);
  d = TF_NewOperation(g, "MaxPool", "pool_over_batch");
  TF_AddInput(d, Out(x, 0));
  TF_SetAttrIntList(d, "ksize", batch2, 4);
  TF_SetAttrIntList(d, "strides", ones, 4);
  TF_SetAttrString(d, "padding", "VALID", 5);
  CheckBuildFails(d, "pool_over_batch", "batch and depth", "MaxPool with a window over the batch", s);

  /* Values fed at run time reach the kernels' checks. */
  TF_Output in[3] = {Out(x, 0), Out(f, 0), Out(sizes, 0)};
  TF_Operation* conv = ConvOp(g, "Conv2D", "conv", in, 2, ones, "SAME", "NHWC", NULL, NULL, s);
  const int64_t x1333[] = {1, 3, 3, 3}, x33[] = {3, 3}, f2221[] = {2, 2, 2, 1};
  float zeros[64];
  memset(zeros, 0, sizeof(zeros));
  TF_Operation* f_const = FloatConst(g, "f_const", zeros, f2221, 4, s);
  TF_Output conv_in[] = {Out(x, 0), Out(f_const, 0)};
  TF_Operation* conv_c = ConvOp(g, "Conv2D", "conv_mismatch", conv_in, 2, ones, "SAME", "NHWC", NULL, NULL, s);
  CheckFails(g, Out(x, 0), FloatTensor(zeros, x1333, 4), Out(conv_c, 0), TF_INVALID_ARGUMENT, "conv_mismatch",
             "multiple of the filter's input depth", "Conv2D of 3 channels with a filter of input depth 2", s);
  CheckFails(g, Out(x, 0), FloatTensor(zeros, x33, 2), Out(conv_c, 0), TF_INVALID_ARGUMENT, "conv_mismatch", "4-D",
             "Conv2D of a 2-D input", s);
  (void)conv;
  /* Conv2DBackpropInput with input_sizes [2^30 2^30 2^30 1]: more elements than int64 holds. */
  const int64_t dy[] = {1, 1, 1, 1}, f1111[] = {1, 1, 1, 1}, d4[] = {4};
  TF_Output bp_in[] = {Out(sizes, 0), Out(FloatConst(g, "f1", zeros, f1111, 4, s), 0),
                       Out(FloatConst(g, "dy1", zeros, dy, 4, s), 0)};
  TF_Operation* bp = ConvOp(g, "Conv2DBackpropInput", "bp_huge", bp_in, 3, ones, "VALID", "NHWC", NULL, NULL, s);
  const int32_t huge[] = {1 << 30, 1 << 30, 1 << 30, 1};
  CheckFails(g, Out(sizes, 0), Int32Tensor(huge, d4, 1), Out(bp, 0), TF_INVALID_ARGUMENT, "bp_huge", "int64",
             "Conv2DBackpropInput with input_sizes [2^30 2^30 2^30 1]", s);
  const int32_t neg[] = {1, -3, 3, 1};
  CheckFails(g, Out(sizes, 0), Int32Tensor(neg, d4, 1), Out(bp, 0), TF_INVALID_ARGUMENT, "bp_huge", "negative",
             "Conv2DBackpropInput with a negative input size", s);
  /* Resize to [2^31 - 1, 2^31 - 1]: an output past int64 bytes. Then a negative size. */
  const int64_t x1221[] = {1, 2, 2, 1}, d2[] = {2};
  TF_Operation* rs_size = Placeholder(g, "rs_size", TF_INT32, s);
  TF_Operation* rs = Resize(g, "ResizeBilinear", "resize_huge", Out(FloatConst(g, "img", zeros, x1221, 4, s), 0),
                            Out(rs_size, 0), 0, 0, s);
  const int32_t big[] = {2147483647, 2147483647}, neg2[] = {-1, 3};
  TF_Session* sess = NewSession(g, s);
  TF_Tensor* size_value = Int32Tensor(big, d2, 1);
  TF_Output feed = Out(rs_size, 0), fetch = Out(rs, 0);
  TF_Tensor* out = NULL;
  Step(sess, &feed, &size_value, 1, &fetch, &out, 1, NULL, 0, s);
  CHECK(TF_GetCode(s) != TF_OK && strstr(TF_Message(s), "resize_huge") != NULL && out == NULL,
        "ResizeBilinear to 2^31-1 x 2^31-1: code %d, \"%s\"", (int)TF_GetCode(s), TF_Message(s));
  TF_DeleteTensor(size_value);
  CloseSession(sess);
  CheckFails(g, Out(rs_size, 0), Int32Tensor(neg2, d2, 1), Out(rs, 0), TF_INVALID_ARGUMENT, "resize_huge", "positive",
             "ResizeBilinear to a negative size", s);
  /* BiasAdd with a bias of the wrong length; FusedBatchNormV3 with a short scale; AvgPool of a
   * 2-D value. */
  const float b2[] = {1, 2};
  TF_Operation* bias = FloatConst(g, "b2", b2, d2, 1, s);
  d = TF_NewOperation(g, "BiasAdd", "bias_mismatch");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_Operation* bias_add = Finish(d, s, "BiasAdd (made)");
  CheckFails(g, Out(x, 0), FloatTensor(zeros, x1333, 4), Out(bias_add, 0), TF_INVALID_ARGUMENT, "bias_mismatch",
             "bias must be a vector of 3", "BiasAdd of 2 biases to 3 channels", s);
  d = TF_NewOperation(g, "FusedBatchNormV3", "bn_short_scale");
  TF_AddInput(d, Out(x, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_AddInput(d, Out(bias, 0));
  TF_SetAttrBool(d, "is_training", 0);
  TF_Operation* bn = Finish(d, s, "FusedBatchNormV3 (made)");
  CheckFails(g, Out(x, 0), FloatTensor(zeros, x1333, 4), Out(bn, 0), TF_INVALID_ARGUMENT, "bn_short_scale",
             "scale must have as many values as x has channels (3)", "FusedBatchNormV3 with 2 scales for 3 channels", s);
  const int64_t k2[] = {1, 2, 2, 1};
  TF_Operation* avg = PoolOp(g, "AvgPool", "avg_2d", Out(x, 0), k2, k2, "VALID", "NHWC", s);
  CheckFails(g, Out(x, 0), FloatTensor(zeros, x33, 2), Out(avg, 0), TF_INVALID_ARGUMENT, "avg_2d", "4-D",
             "AvgPool of a 2-D value", s);
  TF_DeleteGraph(g);
}

int main(void) {
  TF_Status* s = TF_NewStatus();
  CheckConvolutions(s);
  CheckBiasAndBatchNorm(s);
  CheckPooling(s);
  CheckResize(s);
  CheckGradients(s);
  CheckMoreGradients(s);
  CheckVariables(s);
  CheckBadInput(s);
  TF_DeleteStatus(s);
  return CheckSummary();
}
