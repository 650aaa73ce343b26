/* The export annotation every header of Sluice's TensorFlow-layout C API uses. */
#ifndef SLUICE_TENSORFLOW_C_C_API_MACROS_H_
#define SLUICE_TENSORFLOW_C_C_API_MACROS_H_

#ifndef TF_CAPI_EXPORT
#if defined(__GNUC__)
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define TF_CAPI_EXPORT
#endif
#endif

/* Bytes from the start of TYPE to the end of MEMBER: the size of a versioned struct that ends
 * at MEMBER. */
#ifndef TF_OFFSET_OF_END
#define TF_OFFSET_OF_END(TYPE, MEMBER) (offsetof(TYPE, MEMBER) + sizeof(((TYPE*)0)->MEMBER))
#endif

#endif /* SLUICE_TENSORFLOW_C_C_API_MACROS_H_ */
