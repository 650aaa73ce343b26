/* TF_AttrType: the kind of value an operation's attribute holds (TensorFlow's numbering). A
 * list attribute reports the kind of its elements; TF_AttrMetadata (c_api.h) says whether it
 * is a list. */
#ifndef SLUICE_TENSORFLOW_C_TF_ATTRTYPE_H_
#define SLUICE_TENSORFLOW_C_TF_ATTRTYPE_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TF_AttrType {
  TF_ATTR_STRING = 0,
  TF_ATTR_INT = 1,
  TF_ATTR_FLOAT = 2,
  TF_ATTR_BOOL = 3,
  TF_ATTR_TYPE = 4,
  TF_ATTR_SHAPE = 5,
  TF_ATTR_TENSOR = 6,
  TF_ATTR_PLACEHOLDER = 7, /* a function body's reference to an attr of the function */
  TF_ATTR_FUNC = 8
} TF_AttrType;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_ATTRTYPE_H_ */
