/* TF_DataType: element types, numbered as TensorFlow's DataType (and sluice::DataType). */
#ifndef SLUICE_TENSORFLOW_C_TF_DATATYPE_H_
#define SLUICE_TENSORFLOW_C_TF_DATATYPE_H_

#include <stddef.h>

#include "c_api_macros.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Booleans across the C API (attr getters of kernels.h). */
typedef unsigned char TF_Bool;

typedef enum TF_DataType {
  TF_FLOAT = 1,
  TF_DOUBLE = 2,
  TF_INT32 = 3, /* int32_t */
  TF_UINT8 = 4,
  TF_INT16 = 5,
  TF_INT8 = 6,
  TF_STRING = 7, /* elements are TF_TString (tf_tstring.h); see c_api.h's limitations */
  TF_COMPLEX64 = 8,
  TF_COMPLEX = 8, /* old name for TF_COMPLEX64 */
  TF_INT64 = 9,
  TF_BOOL = 10,
  TF_QINT8 = 11,
  TF_QUINT8 = 12,
  TF_QINT32 = 13,
  TF_BFLOAT16 = 14,
  TF_QINT16 = 15,
  TF_QUINT16 = 16,
  TF_UINT16 = 17,
  TF_COMPLEX128 = 18,
  TF_HALF = 19,
  TF_RESOURCE = 20,
  TF_VARIANT = 21,
  TF_UINT32 = 22,
  TF_UINT64 = 23,
  TF_FLOAT8_E5M2 = 24,      /* 5 exponent, 2 mantissa bits */
  TF_FLOAT8_E4M3FN = 25,    /* 4 exponent, 3 mantissa bits, finite only */
  TF_FLOAT8_E4M3FNUZ = 26,  /* 4 exponent, 3 mantissa bits, finite, unsigned zero */
  TF_FLOAT8_E4M3B11FNUZ = 27, /* numbered as TensorFlow's; Sluice holds no such tensors */
  TF_FLOAT8_E5M2FNUZ = 28,  /* 5 exponent, 2 mantissa bits, finite, unsigned zero */
  TF_INT4 = 29,             /* one value per byte */
  TF_UINT4 = 30             /* one value per byte */
} TF_DataType;

/* Bytes per element; 0 for types without a fixed size (TF_STRING, TF_RESOURCE, ...) and for
 * values that are not a TF_DataType. */
TF_CAPI_EXPORT extern size_t TF_DataTypeSize(TF_DataType dt);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_DATATYPE_H_ */
