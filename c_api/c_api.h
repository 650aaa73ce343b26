/* Sluice's C API under its original path. The declarations live in TensorFlow's header layout,
 * c_api/include/tensorflow/c/ (start with c_api.h there, which says what is provided); this
 * header includes them by a path relative to itself, so programs that build with `-I <repo>`
 * and `#include "c_api/c_api.h"` keep compiling. Sluice's extensions (SL_*) are in
 * c_api/sluice_c_api.h. */
#ifndef SLUICE_C_API_C_API_H_
#define SLUICE_C_API_C_API_H_

#include "include/tensorflow/c/c_api.h"

#endif /* SLUICE_C_API_C_API_H_ */
