/* TF_TString: one element of a TF_STRING tensor, in TensorFlow's 24-byte layout, so bindings
 * that read and write string tensors in place see the bytes they expect.
 *
 *   TF_TString s;
 *   TF_TString_Init(&s);
 *   TF_TString_Copy(&s, "hello", 5);                   (fits inline: SMALL)
 *   printf("%.*s\n", (int)TF_TString_GetSize(&s), TF_TString_GetDataPointer(&s));
 *   TF_TString_Dealloc(&s);                           (frees a LARGE string's heap copy)
 *
 * A string is in one of four representations, told apart by the low two bits of its first
 * byte (the layout assumes a little-endian host, as Sluice does):
 * - SMALL:  up to TF_TString_SmallCapacity (22) bytes inline, NUL-terminated; the first byte
 *           is size << 2.
 * - LARGE:  a heap buffer of capacity `cap` (+1 for the NUL) owned by the string, freed by
 *           TF_TString_Dealloc; `size` holds size << 2 | 1.
 * - OFFSET: `size` bytes found `offset` bytes after the TF_TString itself (buffers that carry
 *           their strings after the elements); read-only, not owned.
 * - VIEW:   a pointer to bytes the string does not own; read-only. The caller keeps them
 *           alive.
 * Writing through a mutable pointer turns OFFSET and VIEW strings into owned SMALL or LARGE
 * ones first.
 *
 * The helpers are static inline, as in TensorFlow; TF_String* below are the same operations
 * exported from the library, for bindings that can only call exported functions. */
#ifndef SLUICE_TENSORFLOW_C_TF_TSTRING_H_
#define SLUICE_TENSORFLOW_C_TF_TSTRING_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c_api_macros.h"
#include "tf_tensor.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "TF_TString's layout is only defined here for little-endian hosts"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TF_TString_Type {
  TF_TSTR_SMALL = 0x00,
  TF_TSTR_LARGE = 0x01,
  TF_TSTR_OFFSET = 0x02,
  TF_TSTR_VIEW = 0x03,
  TF_TSTR_TYPE_MASK = 0x03
} TF_TString_Type;

typedef struct TF_TString_Large {
  size_t size; /* size << 2 | TF_TSTR_LARGE */
  size_t cap;  /* bytes usable before the terminating NUL */
  char* ptr;
} TF_TString_Large;

typedef struct TF_TString_Offset {
  uint32_t size; /* size << 2 | TF_TSTR_OFFSET */
  uint32_t offset; /* from the address of the TF_TString */
  uint32_t count;
} TF_TString_Offset;

typedef struct TF_TString_View {
  size_t size; /* size << 2 | TF_TSTR_VIEW */
  const char* ptr;
} TF_TString_View;

typedef struct TF_TString_Raw {
  uint8_t raw[24];
} TF_TString_Raw;

typedef union TF_TString_Union {
  TF_TString_Large large;
  TF_TString_Offset offset;
  TF_TString_View view;
  TF_TString_Raw raw;
} TF_TString_Union;

/* Inline bytes of a SMALL string: the union less the size byte and the NUL. */
enum { TF_TString_SmallCapacity = sizeof(TF_TString_Union) - 2 };

typedef struct TF_TString_Small {
  uint8_t size; /* size << 2 | TF_TSTR_SMALL */
  char str[TF_TString_SmallCapacity + 1];
} TF_TString_Small;

typedef struct TF_TString {
  union {
    TF_TString_Small smll; /* not `small`: MSVC's RpcNdr.h defines that as a macro */
    TF_TString_Large large;
    TF_TString_Offset offset;
    TF_TString_View view;
    TF_TString_Raw raw;
  } u;
} TF_TString;

#ifdef __cplusplus
static_assert(sizeof(TF_TString) == 24, "TF_TString must be 24 bytes");
#else
_Static_assert(sizeof(TF_TString) == 24, "TF_TString must be 24 bytes");
#endif

/* Capacity rounded so that capacity + 1 (the NUL) is a multiple of 16. */
static inline size_t TF_TString_RoundCapacity_(size_t min_capacity) {
  return ((min_capacity + 1 + 15) & ~(size_t)15) - 1;
}

static inline TF_TString_Type TF_TString_GetType(const TF_TString* str) {
  return (TF_TString_Type)(str->u.raw.raw[0] & TF_TSTR_TYPE_MASK);
}

/* A LARGE or VIEW size field to the size it stores, and back. */
static inline size_t TF_TString_ToActualSizeT(size_t size) { return size >> 2; }

static inline size_t TF_TString_ToInternalSizeT(size_t size, TF_TString_Type type) {
  return (size << 2) | (size_t)type;
}

/* An empty SMALL string. Call before any other helper on fresh memory. */
static inline void TF_TString_Init(TF_TString* str) { memset(str, 0, sizeof(*str)); }

/* Frees a LARGE string's buffer and leaves it empty; other representations are kept. */
static inline void TF_TString_Dealloc(TF_TString* str) {
  if (TF_TString_GetType(str) == TF_TSTR_LARGE && str->u.large.ptr != NULL) {
    free(str->u.large.ptr);
    TF_TString_Init(str);
  }
}

static inline size_t TF_TString_GetSize(const TF_TString* str) {
  switch (TF_TString_GetType(str)) {
    case TF_TSTR_SMALL:
      return (size_t)(str->u.smll.size >> 2);
    case TF_TSTR_LARGE:
      return TF_TString_ToActualSizeT(str->u.large.size);
    case TF_TSTR_OFFSET:
      return (size_t)(str->u.offset.size >> 2);
    case TF_TSTR_VIEW:
      return TF_TString_ToActualSizeT(str->u.view.size);
    default:
      return 0;
  }
}

/* Bytes writable without reallocating: 0 for the read-only OFFSET and VIEW strings. */
static inline size_t TF_TString_GetCapacity(const TF_TString* str) {
  switch (TF_TString_GetType(str)) {
    case TF_TSTR_SMALL:
      return TF_TString_SmallCapacity;
    case TF_TSTR_LARGE:
      return str->u.large.cap;
    default:
      return 0;
  }
}

/* The first byte; not NUL-terminated for OFFSET and VIEW strings. */
static inline const char* TF_TString_GetDataPointer(const TF_TString* str) {
  switch (TF_TString_GetType(str)) {
    case TF_TSTR_SMALL:
      return str->u.smll.str;
    case TF_TSTR_LARGE:
      return str->u.large.ptr;
    case TF_TSTR_OFFSET:
      return (const char*)str + str->u.offset.offset;
    case TF_TSTR_VIEW:
      return str->u.view.ptr;
    default:
      return NULL;
  }
}

/* Sets the size to new_size, keeping the first min(old, new) bytes and leaving any new bytes
 * uninitialized; the result is owned (SMALL or LARGE) and NUL-terminated. Returns the writable
 * bytes, or NULL (string unchanged) when memory runs out. */
static inline char* TF_TString_ResizeUninitialized(TF_TString* str, size_t new_size) {
  const size_t old_size = TF_TString_GetSize(str);
  const size_t keep = new_size < old_size ? new_size : old_size;
  const TF_TString_Type type = TF_TString_GetType(str);
  const char* old_data = TF_TString_GetDataPointer(str);

  if (new_size <= (size_t)TF_TString_SmallCapacity) {
    char* owned = type == TF_TSTR_LARGE ? str->u.large.ptr : NULL;
    /* The bytes come from outside the struct unless it is already SMALL. */
    if (type != TF_TSTR_SMALL && keep > 0) memmove(str->u.smll.str, old_data, keep);
    str->u.smll.size = (uint8_t)((new_size << 2) | TF_TSTR_SMALL);
    str->u.smll.str[new_size] = '\0';
    free(owned);
    return str->u.smll.str;
  }

  const size_t old_cap = TF_TString_GetCapacity(str);
  size_t new_cap = old_cap;
  if (new_size < old_size && new_size < old_cap / 2) {
    new_cap = TF_TString_RoundCapacity_(old_cap / 2 + 1); /* give back half */
  } else if (new_size > old_cap) {
    new_cap = TF_TString_RoundCapacity_(new_size);
  }
  char* data;
  if (type == TF_TSTR_LARGE) {
    data = new_cap == old_cap ? str->u.large.ptr : (char*)realloc(str->u.large.ptr, new_cap + 1);
    if (data == NULL) return NULL;
  } else {
    data = (char*)malloc(new_cap + 1);
    if (data == NULL) return NULL;
    if (keep > 0) memcpy(data, old_data, keep); /* before the fields below overwrite SMALL */
  }
  str->u.large.size = TF_TString_ToInternalSizeT(new_size, TF_TSTR_LARGE);
  str->u.large.cap = new_cap;
  str->u.large.ptr = data;
  data[new_size] = '\0';
  return data;
}

/* Writable bytes; OFFSET and VIEW strings are first copied into owned storage. */
static inline char* TF_TString_GetMutableDataPointer(TF_TString* str) {
  switch (TF_TString_GetType(str)) {
    case TF_TSTR_SMALL:
      return str->u.smll.str;
    case TF_TSTR_LARGE:
      return str->u.large.ptr;
    case TF_TSTR_OFFSET:
    case TF_TSTR_VIEW:
      return TF_TString_ResizeUninitialized(str, TF_TString_GetSize(str));
    default:
      return NULL;
  }
}

/* Makes room for at least new_cap bytes (a no-op when they fit inline or already fit). */
static inline void TF_TString_Reserve(TF_TString* str, size_t new_cap) {
  const TF_TString_Type type = TF_TString_GetType(str);
  if (new_cap <= (size_t)TF_TString_SmallCapacity) return;
  if (type == TF_TSTR_LARGE && new_cap <= str->u.large.cap) return;
  const size_t size = TF_TString_GetSize(str);
  new_cap = TF_TString_RoundCapacity_(new_cap > size ? new_cap : size);
  if (type == TF_TSTR_LARGE) {
    char* data = (char*)realloc(str->u.large.ptr, new_cap + 1);
    if (data == NULL) return;
    str->u.large.ptr = data;
  } else {
    char* data = (char*)malloc(new_cap + 1);
    if (data == NULL) return;
    memcpy(data, TF_TString_GetDataPointer(str), size);
    data[size] = '\0';
    str->u.large.size = TF_TString_ToInternalSizeT(size, TF_TSTR_LARGE);
    str->u.large.ptr = data;
  }
  str->u.large.cap = new_cap;
}

/* As Reserve, but at least doubles the capacity when it grows (for repeated appends). */
static inline void TF_TString_ReserveAmortized(TF_TString* str, size_t new_cap) {
  const size_t cap = TF_TString_GetCapacity(str);
  if (new_cap > cap) TF_TString_Reserve(str, new_cap > 2 * cap ? new_cap : 2 * cap);
}

/* As ResizeUninitialized, filling new bytes with `c`. */
static inline char* TF_TString_Resize(TF_TString* str, size_t new_size, char c) {
  const size_t old_size = TF_TString_GetSize(str);
  char* data = TF_TString_ResizeUninitialized(str, new_size);
  if (data != NULL && new_size > old_size) memset(data + old_size, c, new_size - old_size);
  return data;
}

/* Makes `dst` a VIEW of src[0, size), freeing what it owned. */
static inline void TF_TString_AssignView(TF_TString* dst, const char* src, size_t size) {
  TF_TString_Dealloc(dst);
  dst->u.view.size = TF_TString_ToInternalSizeT(size, TF_TSTR_VIEW);
  dst->u.view.ptr = src;
}

static inline void TF_TString_AppendN(TF_TString* dst, const char* src, size_t src_size) {
  if (src_size == 0) return;
  const size_t size = TF_TString_GetSize(dst);
  TF_TString_ReserveAmortized(dst, size + src_size);
  char* data = TF_TString_ResizeUninitialized(dst, size + src_size);
  if (data != NULL) memcpy(data + size, src, src_size);
}

static inline void TF_TString_Append(TF_TString* dst, const TF_TString* src) {
  TF_TString_AppendN(dst, TF_TString_GetDataPointer(src), TF_TString_GetSize(src));
}

/* Sets `dst` to an owned copy of src[0, size). */
static inline void TF_TString_Copy(TF_TString* dst, const char* src, size_t size) {
  char* data = TF_TString_ResizeUninitialized(dst, size);
  if (data != NULL && size > 0) memcpy(data, src, size);
}

/* Sets `dst` to the value of `src`: SMALL and VIEW strings are copied as they are, a LARGE
 * string's bytes are duplicated, and an OFFSET string becomes a VIEW of the same bytes. */
static inline void TF_TString_Assign(TF_TString* dst, const TF_TString* src) {
  if (dst == src) return;
  TF_TString_Dealloc(dst);
  switch (TF_TString_GetType(src)) {
    case TF_TSTR_SMALL:
    case TF_TSTR_VIEW:
      *dst = *src;
      return;
    case TF_TSTR_LARGE:
      TF_TString_Init(dst);
      TF_TString_Copy(dst, TF_TString_GetDataPointer(src), TF_TString_GetSize(src));
      return;
    case TF_TSTR_OFFSET:
      TF_TString_AssignView(dst, TF_TString_GetDataPointer(src), TF_TString_GetSize(src));
      return;
    default:
      return;
  }
}

/* As Assign, but a LARGE string's buffer moves to `dst` and `src` is left empty. */
static inline void TF_TString_Move(TF_TString* dst, TF_TString* src) {
  if (dst == src) return;
  TF_TString_Dealloc(dst);
  switch (TF_TString_GetType(src)) {
    case TF_TSTR_SMALL:
    case TF_TSTR_VIEW:
      *dst = *src;
      return;
    case TF_TSTR_LARGE:
      *dst = *src;
      TF_TString_Init(src);
      return;
    case TF_TSTR_OFFSET:
      TF_TString_AssignView(dst, TF_TString_GetDataPointer(src), TF_TString_GetSize(src));
      return;
    default:
      return;
  }
}

/* The same operations, exported by the library. */
TF_CAPI_EXPORT extern void TF_StringInit(TF_TString* t);
TF_CAPI_EXPORT extern void TF_StringCopy(TF_TString* dst, const char* src, size_t size);
TF_CAPI_EXPORT extern void TF_StringAssignView(TF_TString* dst, const char* src, size_t size);
TF_CAPI_EXPORT extern const char* TF_StringGetDataPointer(const TF_TString* tstr);
TF_CAPI_EXPORT extern TF_TString_Type TF_StringGetType(const TF_TString* str);
TF_CAPI_EXPORT extern size_t TF_StringGetSize(const TF_TString* tstr);
TF_CAPI_EXPORT extern size_t TF_StringGetCapacity(const TF_TString* str);
TF_CAPI_EXPORT extern void TF_StringDealloc(TF_TString* tstr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_TF_TSTRING_H_ */
