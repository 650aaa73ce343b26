/* Sluice's extensions of TensorFlow's C API (SL_*): importing ONNX models into a TF_Graph and
 * training ONNX models through their TrainingInfoProto. Same conventions as c_api.h, which this
 * header includes; libsluice_c.so exports both. Each section below opens with its call
 * sequence. */
#ifndef SLUICE_C_API_SLUICE_C_API_H_
#define SLUICE_C_API_SLUICE_C_API_H_

#include <stddef.h>

#include "c_api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Sluice extension: ONNX models -------------------------------------------------------
 *
 *   SL_ONNXImport* m = SL_GraphImportONNX(graph, "model.onnx", NULL, 0, "", status);
 *   TF_Output x = SL_ONNXImportInput(m, 0), y = SL_ONNXImportOutput(m, 0);
 *   TF_SessionRun(session, NULL, &x, &x_value, 1, &y, &y_value, 1, NULL, 0, NULL, status);
 *   SL_DeleteONNXImport(m);
 */
typedef struct SL_ONNXImport SL_ONNXImport;

/* Imports an ONNX model into `graph`: from the file at `path`, or, when `path` is NULL, from
 * the `length` bytes at `buffer` (a model whose tensors live in external files must come from
 * a path). The model is checked and converted as `sluice run` does; operation names get
 * `prefix` + "/" when prefix is non-empty. Returns the model's inputs and outputs, or NULL with
 * `status` set (the graph is then unchanged). */
TF_CAPI_EXPORT extern SL_ONNXImport* SL_GraphImportONNX(TF_Graph* graph, const char* path,
                                                        const void* buffer, size_t length,
                                                        const char* prefix, TF_Status* status);
TF_CAPI_EXPORT extern void SL_DeleteONNXImport(SL_ONNXImport* model);
/* Graph inputs in model order, including those with an initializer as default. */
TF_CAPI_EXPORT extern int SL_ONNXImportNumInputs(const SL_ONNXImport* model);
/* The ONNX name; owned by `model`. NULL for an index out of range. */
TF_CAPI_EXPORT extern const char* SL_ONNXImportInputName(const SL_ONNXImport* model, int index);
/* What to feed; {NULL, -1} for an index out of range. */
TF_CAPI_EXPORT extern TF_Output SL_ONNXImportInput(const SL_ONNXImport* model, int index);
TF_CAPI_EXPORT extern int SL_ONNXImportNumOutputs(const SL_ONNXImport* model);
TF_CAPI_EXPORT extern const char* SL_ONNXImportOutputName(const SL_ONNXImport* model, int index);
/* What to fetch; {NULL, -1} for an index out of range. */
TF_CAPI_EXPORT extern TF_Output SL_ONNXImportOutput(const SL_ONNXImport* model, int index);

/* Writes the ONNX model at `path` (or, when `path` is NULL, the `length` bytes at `buffer`) to
 * `out_path` as a session configured by `config` (a serialized ConfigProto, NULL for defaults;
 * its graph_options.rewrite_options choose the passes) optimizes it on one CPU device: an ONNX
 * model of one "GraphDef" node of domain "ai.sluice" holding the optimized graph, with the
 * original's inputs, outputs and metadata (ONNX Runtime's optimized_model_filepath; like ONNX
 * Runtime's optimized models at its extended levels, it loads only in its own runtime). The file
 * is written whole or not at all. */
TF_CAPI_EXPORT extern void SL_ONNXWriteOptimizedModel(const char* path, const void* buffer, size_t length,
                                                      const void* config, size_t config_length,
                                                      const char* out_path, TF_Status* status);

/* What the model declares for input (`is_output` 0) or output (`is_output` 1) `index`, as ONNX
 * Runtime's NodeArg reports it:
 *
 *   int rank = SL_ONNXImportValueNumDims(m, 0, 0);            // -1: rank unknown
 *   for (int d = 0; d < rank; ++d)
 *     printf("%lld %s\n", (long long)SL_ONNXImportValueDim(m, 0, 0, d),   // -1: unknown
 *            SL_ONNXImportValueDimName(m, 0, 0, d));          // "batch", or "" if unnamed
 *
 * For an index out of range: type 0, type string NULL, rank -1, dim -1, dim name NULL.
 * Strings are owned by `model`. Sequences and optionals have type TF_VARIANT and rank 0. */
TF_CAPI_EXPORT extern TF_DataType SL_ONNXImportValueType(const SL_ONNXImport* model,
                                                         int is_output, int index);
/* ONNX's spelling of the type: "tensor(float)", "seq(tensor(int64))", "optional(...)". */
TF_CAPI_EXPORT extern const char* SL_ONNXImportValueTypeString(const SL_ONNXImport* model,
                                                               int is_output, int index);
TF_CAPI_EXPORT extern int SL_ONNXImportValueNumDims(const SL_ONNXImport* model, int is_output,
                                                    int index);
TF_CAPI_EXPORT extern int64_t SL_ONNXImportValueDim(const SL_ONNXImport* model, int is_output,
                                                    int index, int dim);
TF_CAPI_EXPORT extern const char* SL_ONNXImportValueDimName(const SL_ONNXImport* model,
                                                            int is_output, int index, int dim);
/* 1 for an input with an initializer (feeding it is optional), else 0. */
TF_CAPI_EXPORT extern unsigned char SL_ONNXImportValueHasDefault(const SL_ONNXImport* model,
                                                                 int is_output, int index);

/* --- Sluice extension: training ONNX models through their TrainingInfoProto -------------
 *
 *   SL_Trainer* t = SL_NewTrainer("model.onnx", opts, status);
 *   SL_TrainerInitialize(t, status);
 *   const char* names[] = {"x", "t"};  TF_Tensor* values[] = {x, target};
 *   for (int i = 0; i < 100; ++i) SL_TrainerStep(t, names, values, 2, status);
 *   float loss = *(float*)TF_TensorData(SL_TrainerOutput(t, 0));
 *   SL_TrainerSave(t, "trained.onnx", status);  SL_DeleteTrainer(t);
 */
typedef struct SL_Trainer SL_Trainer;

/* Loads a model with training_info; NULL with `status` set when it has none or is invalid. */
TF_CAPI_EXPORT extern SL_Trainer* SL_NewTrainer(const char* path, const TF_SessionOptions* opts,
                                                TF_Status* status);
TF_CAPI_EXPORT extern void SL_DeleteTrainer(SL_Trainer* trainer);
/* Runs every initialization graph once. */
TF_CAPI_EXPORT extern void SL_TrainerInitialize(SL_Trainer* trainer, TF_Status* status);
/* One step: feeds by ONNX input name (tensors stay owned by the caller). Afterwards the
 * algorithm's outputs that no update_binding consumes (the loss) are available below. */
TF_CAPI_EXPORT extern void SL_TrainerStep(SL_Trainer* trainer, const char* const* names,
                                          TF_Tensor* const* values, int num_values,
                                          TF_Status* status);
TF_CAPI_EXPORT extern int SL_TrainerNumOutputs(const SL_Trainer* trainer);
/* Owned by the trainer, valid until the next step. NULL for an index out of range. */
TF_CAPI_EXPORT extern const char* SL_TrainerOutputName(const SL_Trainer* trainer, int index);
TF_CAPI_EXPORT extern TF_Tensor* SL_TrainerOutput(const SL_Trainer* trainer, int index);
/* Writes the model with its initializers set to their current values. */
TF_CAPI_EXPORT extern void SL_TrainerSave(const SL_Trainer* trainer, const char* path,
                                          TF_Status* status);

/* --- Sluice extension: runs another thread can stop ----------------------------------------
 *
 *   SL_RunCancellation* c = SL_NewRunCancellation();
 *   // thread A:
 *   SL_SessionRunCancellable(session, NULL, &x, &x_value, 1, &y, &y_value, 1, NULL, 0, NULL, c,
 *                            status);           // CANCELLED once thread B has called:
 *   // thread B:
 *   SL_CancelRun(c, "stopped by the user");
 *   SL_DeleteRunCancellation(c);               // after the run has returned
 *
 * TF_SessionRun's arguments and results, plus `cancellation` (NULL: none). Cancelling stops the
 * step between nodes (and between the bands of a long convolution) on every device and task,
 * and the run fails with TF_CANCELLED and the message given. A cancellation stays cancelled:
 * later runs with it fail at once. One cancellation may serve several runs at once. */
typedef struct SL_RunCancellation SL_RunCancellation;
TF_CAPI_EXPORT extern SL_RunCancellation* SL_NewRunCancellation(void);
TF_CAPI_EXPORT extern void SL_CancelRun(SL_RunCancellation* cancellation, const char* message);
TF_CAPI_EXPORT extern unsigned char SL_RunIsCancelled(const SL_RunCancellation* cancellation);
TF_CAPI_EXPORT extern void SL_DeleteRunCancellation(SL_RunCancellation* cancellation);
TF_CAPI_EXPORT extern void SL_SessionRunCancellable(
    TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
    TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs, TF_Tensor** output_values,
    int noutputs, const TF_Operation* const* target_opers, int ntargets, TF_Buffer* run_metadata,
    SL_RunCancellation* cancellation, TF_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_C_API_SLUICE_C_API_H_ */
