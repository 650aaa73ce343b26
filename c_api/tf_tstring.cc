// The TF_TString helpers of tf_tstring.h as exported functions (TF_String*), for bindings that
// call into the library by symbol name rather than compiling the header's inline functions.
#include "c_api/c_api.h"

extern "C" {

void TF_StringInit(TF_TString* t) {
  if (t != nullptr) TF_TString_Init(t);
}

void TF_StringCopy(TF_TString* dst, const char* src, size_t size) {
  if (dst != nullptr && (src != nullptr || size == 0)) TF_TString_Copy(dst, src, size);
}

void TF_StringAssignView(TF_TString* dst, const char* src, size_t size) {
  if (dst != nullptr) TF_TString_AssignView(dst, src, size);
}

const char* TF_StringGetDataPointer(const TF_TString* tstr) {
  return tstr == nullptr ? nullptr : TF_TString_GetDataPointer(tstr);
}

TF_TString_Type TF_StringGetType(const TF_TString* str) {
  return str == nullptr ? TF_TSTR_SMALL : TF_TString_GetType(str);
}

size_t TF_StringGetSize(const TF_TString* tstr) {
  return tstr == nullptr ? 0 : TF_TString_GetSize(tstr);
}

size_t TF_StringGetCapacity(const TF_TString* str) {
  return str == nullptr ? 0 : TF_TString_GetCapacity(str);
}

void TF_StringDealloc(TF_TString* tstr) {
  if (tstr != nullptr) TF_TString_Dealloc(tstr);
}

}  // extern "C"
