/* TF_Buffer: bytes (usually a serialized protocol buffer) passed into and out of the API. */
#ifndef SLUICE_TENSORFLOW_C_TF_BUFFER_H_
#define SLUICE_TENSORFLOW_C_TF_BUFFER_H_

#include <stddef.h>

#include "c_api_macros.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_Buffer {
  const void* data;
  size_t length;
  /* Called by TF_DeleteBuffer with (data, length) when not NULL. */
  void (*data_deallocator)(void* data, size_t length);
} TF_Buffer;

/* A buffer holding a copy of proto[0, proto_len). */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len);
/* An empty buffer, to be filled by calls such as TF_GraphToGraphDef. */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBuffer(void);
/* Runs the deallocator, if any, and frees the struct. NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeleteBuffer(TF_Buffer*);
/* A copy of the struct (not of the bytes). */
TF_CAPI_EXPORT extern TF_Buffer TF_GetBuffer(TF_Buffer* buffer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_BUFFER_H_ */
