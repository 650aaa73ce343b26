// Registering one kernel template for a list of element types, without macro stacks.
//
//   RegisterCpuKernels("Abs", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
//     return std::make_unique<UnaryOp<typename decltype(t)::type, AbsFn>>();
//   });
//
// Call it from a file's static initializer (see unary_ops.cc).
#ifndef SLUICE_KERNELS_TYPED_REGISTRATION_H_
#define SLUICE_KERNELS_TYPED_REGISTRATION_H_

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {

template <typename... Ts>
struct TypeList {};

template <typename... A, typename... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

using FloatTypes = TypeList<half, bfloat16, float, double>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = decltype(SignedIntTypes{} + UnsignedIntTypes{});
using SignedTypes = decltype(FloatTypes{} + SignedIntTypes{});
using NumericTypes = decltype(FloatTypes{} + IntTypes{});

// Registers `make(TypeTag<T>{})` as the CPU kernel of `op` for each T in the list, with the
// type attr `type_attr` constrained to T.
template <typename... Ts, typename Make>
void RegisterCpuKernels(const char* op, const char* type_attr, TypeList<Ts...>, Make make) {
  (KernelRegistry::Global()->Register(
       Name(op).Device(DEVICE_CPU).TypeConstraint<Ts>(type_attr).Build(),
       absl::StrCat(op, "<", DataTypeString(DataTypeToEnum<Ts>::value), ">"),
       [make]() -> std::unique_ptr<OpKernel> { return make(TypeTag<Ts>{}); }),
   ...);
}

// The same for a kernel class template: K<T> for each T in the list.
//
//   RegisterCpuKernelTemplate<MatMulOp>("MatMul", TypeList<float, double>{});
template <template <typename> class K, typename... Ts>
void RegisterCpuKernelTemplate(const char* op, TypeList<Ts...> types, const char* type_attr = "T") {
  RegisterCpuKernels(op, type_attr, types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<K<typename decltype(t)::type>>();
  });
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_TYPED_REGISTRATION_H_
