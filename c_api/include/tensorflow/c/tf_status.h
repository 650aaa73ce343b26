/* TF_Status: the outcome of a call, an error code (TensorFlow's numbers, identical to
 * absl::StatusCode) and a message. */
#ifndef SLUICE_TENSORFLOW_C_TF_STATUS_H_
#define SLUICE_TENSORFLOW_C_TF_STATUS_H_

#include "c_api_macros.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_UNAUTHENTICATED = 16,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15
} TF_Code;

typedef struct TF_Status TF_Status;

/* A new status, initially TF_OK. */
TF_CAPI_EXPORT extern TF_Status* TF_NewStatus(void);
/* NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeleteStatus(TF_Status*);
/* Sets code and message (msg is copied; NULL means empty). TF_OK clears the message. */
TF_CAPI_EXPORT extern void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg);
TF_CAPI_EXPORT extern TF_Code TF_GetCode(const TF_Status* s);
/* The message, "" when OK. Valid until the status is next modified or deleted. */
TF_CAPI_EXPORT extern const char* TF_Message(const TF_Status* s);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_STATUS_H_ */
