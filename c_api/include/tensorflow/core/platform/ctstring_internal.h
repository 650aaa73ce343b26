/* TensorFlow keeps TF_TString's definition in this internal header, and some bindings
 * (TensorFlow.js's Node backend) include it by this path; Sluice's definition is
 * tensorflow/c/tf_tstring.h. */
#ifndef SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_
#define SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_

#include "../../c/tf_tstring.h"

#endif /* SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_ */
