/* TF_TString under the path TensorFlow gives its public string header; Sluice's definition is
 * tensorflow/c/tf_tstring.h. */
#ifndef SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_H_
#define SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_H_

#include "../../c/tf_tstring.h"

#endif /* SLUICE_TENSORFLOW_CORE_PLATFORM_CTSTRING_H_ */
