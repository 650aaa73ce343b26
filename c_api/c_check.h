/* The checks of the C API's C test programs (c_api_test.c, tf_layout_test.c, tf_ops_test.c,
 * tf_nn_ops_test.c, custom_op_test.c), each one program of one .c file:
 *
 *   CHECK(x == 2, "x is 2 (got %d)", x);       counts a check, prints "ok" or "FAIL file:line"
 *   CHECK_OK(status, "TF_SessionRun");         the status is TF_OK (else its message shows)
 *   CHECK_CODE(status, TF_NOT_FOUND, "load");  exactly that error code, with a message
 *   CHECK_ERROR(status, "a null graph");       any error code, with a message
 *   return CheckSummary();                      prints "N checks, M failures"; main's exit code
 *
 * Include after the C API header. */
#ifndef SLUICE_C_API_C_CHECK_H_
#define SLUICE_C_API_C_CHECK_H_

#include <stdio.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond, ...)                          \
  do {                                            \
    ++g_checks;                                   \
    if (cond) {                                   \
      printf("ok   ");                            \
    } else {                                      \
      ++g_failures;                               \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    }                                             \
    printf(__VA_ARGS__);                          \
    printf("\n");                                 \
  } while (0)

#define CHECK_OK(status, what)                                         \
  CHECK(TF_GetCode(status) == TF_OK, "%s%s%s", what,                  \
        TF_GetCode(status) == TF_OK ? "" : ": ", TF_Message(status))

#define CHECK_CODE(status, code, what)                                               \
  CHECK(TF_GetCode(status) == (code) && strlen(TF_Message(status)) > 0,              \
        "%s: code %d (want %d), \"%s\"", what, (int)TF_GetCode(status), (int)(code), \
        TF_Message(status))

#define CHECK_ERROR(status, what)                                           \
  CHECK(TF_GetCode(status) != TF_OK && strlen(TF_Message(status)) > 0,     \
        "%s is rejected: code %d, \"%s\"", what, (int)TF_GetCode(status), \
        TF_Message(status))

static int CheckSummary(void) {
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}

#endif /* SLUICE_C_API_C_CHECK_H_ */
