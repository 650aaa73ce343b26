/* TF_Tensor: an n-dimensional array of one element type, in row-major order.
 *
 *   int64_t dims[] = {2, 3};
 *   TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 2, 6 * sizeof(float));
 *   float* v = (float*)TF_TensorData(t);   (write 6 floats)
 *   ...                                    (feed it to TF_SessionRun, or TF_SetAttrTensor)
 *   TF_DeleteTensor(t);
 *
 * TF_STRING tensors hold, as in TensorFlow 2.x, one TF_TString (tf_tstring.h) per element:
 *
 *   TF_Tensor* s = TF_AllocateTensor(TF_STRING, dims, 2, 6 * sizeof(TF_TString));
 *   TF_TString* e = (TF_TString*)TF_TensorData(s);   (6 empty strings)
 *   TF_TString_Copy(&e[0], "bytes", 5);             (any bytes, NULs included)
 *   printf("%.*s", (int)TF_TString_GetSize(&e[0]), TF_TString_GetDataPointer(&e[0]));
 *   TF_DeleteTensor(s);                              (frees what every element owns)
 *
 * Who frees a TF_STRING tensor's elements (what TF_TString_Dealloc frees: LARGE strings' bytes):
 * - TF_AllocateTensor, and every tensor the library hands out (session outputs,
 *   TF_OperationGetAttrTensor, SL_TrainerOutput): the library, in TF_DeleteTensor, which calls
 *   TF_TString_Dealloc on each element. VIEW and OFFSET elements stay the caller's.
 * - TF_NewTensor: the caller. TF_DeleteTensor calls only the deallocator, which must
 *   TF_TString_Dealloc the elements it made own memory before freeing the array, as with
 *   TensorFlow.
 * The runtime keeps strings in its own form, so feeding a TF_STRING tensor (TF_SessionRun,
 * TF_SetAttrTensor) copies its bytes, and fetched strings are copies too: unlike numbers,
 * string tensors never share memory with the runtime, and may be changed or deleted as soon as
 * the call that takes them returns. */
#ifndef SLUICE_TENSORFLOW_C_TF_TENSOR_H_
#define SLUICE_TENSORFLOW_C_TF_TENSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "c_api_macros.h"
#include "tf_datatype.h"
#include "tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_Tensor TF_Tensor;

/* Wraps `data` (len bytes) without copying; `deallocator(data, len, deallocator_arg)` runs once
 * the tensor and every value shared with it (for example session outputs that forward it) are
 * gone. For TF_STRING, `data` is the caller's array of TF_TString, one per element, aligned for
 * TF_TString (8 bytes), each initialized (TF_TString_Init and the setters); the elements stay
 * the caller's (see above). Returns NULL, without calling the deallocator, for types the C API
 * cannot hold (TF_RESOURCE, TF_VARIANT), negative dims, or len smaller than the shape needs
 * (elements times TF_DataTypeSize, or times sizeof(TF_TString) for TF_STRING). */
TF_CAPI_EXPORT extern TF_Tensor* TF_NewTensor(TF_DataType, const int64_t* dims, int num_dims,
                                              void* data, size_t len,
                                              void (*deallocator)(void* data, size_t len,
                                                                  void* arg),
                                              void* deallocator_arg);
/* A tensor with uninitialized, 64-byte-aligned contents. `len` must equal the element count
 * times TF_DataTypeSize; NULL otherwise. For TF_STRING, `len` must equal the element count times
 * sizeof(TF_TString), and every element starts as an empty string (TensorFlow leaves them
 * uninitialized; calling TF_TString_Init on them again is harmless); TF_DeleteTensor frees what
 * they own. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTensor(TF_DataType, const int64_t* dims, int num_dims,
                                                   size_t len);
/* When nothing else shares `tensor`'s contents (no session value, no other TF_Tensor), deletes
 * `tensor` and returns a new tensor that owns them; otherwise returns NULL and leaves `tensor`
 * as it was. TF_STRING contents are never shared, so string tensors always move (their data
 * pointer, elements and deallocator with them). */
TF_CAPI_EXPORT extern TF_Tensor* TF_TensorMaybeMove(TF_Tensor* tensor);
/* NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeleteTensor(TF_Tensor*);
TF_CAPI_EXPORT extern TF_DataType TF_TensorType(const TF_Tensor*);
TF_CAPI_EXPORT extern int TF_NumDims(const TF_Tensor*);
/* Size of dimension dim_index; -1 when the index is out of range. */
TF_CAPI_EXPORT extern int64_t TF_Dim(const TF_Tensor* tensor, int dim_index);
/* For TF_STRING: the bytes of the TF_TString array (len as given to TF_NewTensor), not of the
 * strings. */
TF_CAPI_EXPORT extern size_t TF_TensorByteSize(const TF_Tensor*);
/* The contents, in row-major order (for TF_STRING, the TF_TString array). May be NULL for
 * tensors with no elements. */
TF_CAPI_EXPORT extern void* TF_TensorData(const TF_Tensor*);
TF_CAPI_EXPORT extern int64_t TF_TensorElementCount(const TF_Tensor* tensor);

/* Makes `to` share the bytes of `from`, read as `type` in the shape new_dims[0, num_new_dims).
 * Both types must have a fixed size (not TF_STRING, as in TensorFlow) and the new shape must
 * cover exactly the bytes `from` holds; otherwise INVALID_ARGUMENT and `to` is unchanged. */
TF_CAPI_EXPORT extern void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type,
                                                TF_Tensor* to, const int64_t* new_dims,
                                                int num_new_dims, TF_Status* status);

/* Whether the contents start at a 64-byte boundary (what Sluice's kernels prefer). */
TF_CAPI_EXPORT extern bool TF_TensorIsAligned(const TF_Tensor*);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_TENSOR_H_ */
