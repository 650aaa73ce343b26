// TensorFlow's registration macros for custom-op libraries, REGISTER_OP and
// REGISTER_KERNEL_BUILDER, spelled as in TensorFlow's C++ but built on the C API of
// tensorflow/c/ops.h and kernels.h, so a library needs only Sluice's headers (-I c_api/include)
// and no Sluice C++ ABI. TF_LoadLibrary dlopens the library; these registrations run as its
// static initializers, and a failed one fails the TF_LoadLibrary call with its message.
//
//   REGISTER_OP("Scale").Input("x: T").Output("y: T").Attr("T: {float, double}")
//       .Attr("factor: float").SetShapeFn(sluice_op_library::UnchangedShape);
//
//   template <typename T> class ScaleKernel {
//    public:
//     explicit ScaleKernel(TF_OpKernelConstruction* ctx) { ... read attrs ... }
//     void Compute(TF_OpKernelContext* ctx) { ... TF_GetInput / TF_AllocateOutput ... }
//   };
//   REGISTER_KERNEL_BUILDER(Name("Scale").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                           ScaleKernel<float>);
//
// The kernel class is constructed once per node (report bad attrs with
// TF_OpKernelConstruction_Failure), Compute runs each step (possibly concurrently for
// different steps) and the destructor runs when the graph goes away.
#ifndef SLUICE_OP_LIBRARY_H_
#define SLUICE_OP_LIBRARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"

namespace sluice_op_library {

inline constexpr char DEVICE_CPU[] = "CPU";

// Output 0 has input 0's shape.
inline void UnchangedShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, shape, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, shape, status);
  TF_DeleteShapeHandle(shape);
}

template <typename T> constexpr TF_DataType DataTypeOf();
template <> constexpr TF_DataType DataTypeOf<float>() { return TF_FLOAT; }
template <> constexpr TF_DataType DataTypeOf<double>() { return TF_DOUBLE; }
template <> constexpr TF_DataType DataTypeOf<int32_t>() { return TF_INT32; }
template <> constexpr TF_DataType DataTypeOf<int64_t>() { return TF_INT64; }
template <> constexpr TF_DataType DataTypeOf<uint8_t>() { return TF_UINT8; }
template <> constexpr TF_DataType DataTypeOf<bool>() { return TF_BOOL; }

// REGISTER_OP's builder chain.
class OpDefBuilder {
 public:
  explicit OpDefBuilder(const char* name) : builder_(TF_NewOpDefinitionBuilder(name)) {}
  OpDefBuilder(OpDefBuilder&& other) noexcept : builder_(std::exchange(other.builder_, nullptr)) {}
  OpDefBuilder(const OpDefBuilder&) = delete;
  OpDefBuilder& operator=(const OpDefBuilder&) = delete;
  ~OpDefBuilder() { TF_DeleteOpDefinitionBuilder(builder_); }

  OpDefBuilder&& Input(const char* spec) && {
    TF_OpDefinitionBuilderAddInput(builder_, spec);
    return std::move(*this);
  }
  OpDefBuilder&& Output(const char* spec) && {
    TF_OpDefinitionBuilderAddOutput(builder_, spec);
    return std::move(*this);
  }
  OpDefBuilder&& Attr(const char* spec) && {
    TF_OpDefinitionBuilderAddAttr(builder_, spec);
    return std::move(*this);
  }
  OpDefBuilder&& SetIsStateful() && {
    TF_OpDefinitionBuilderSetIsStateful(builder_, true);
    return std::move(*this);
  }
  OpDefBuilder&& SetIsCommutative() && {
    TF_OpDefinitionBuilderSetIsCommutative(builder_, true);
    return std::move(*this);
  }
  OpDefBuilder&& SetShapeFn(void (*fn)(TF_ShapeInferenceContext*, TF_Status*)) && {
    TF_OpDefinitionBuilderSetShapeInferenceFunction(builder_, fn);
    return std::move(*this);
  }
  TF_OpDefinitionBuilder* Release() { return std::exchange(builder_, nullptr); }

 private:
  TF_OpDefinitionBuilder* builder_;
};

// Registers at static initialization; TF_LoadLibrary reports a failure.
struct OpRegistrar {
  OpRegistrar(OpDefBuilder&& builder) {  // NOLINT: implicit, for the macro's chain.
    TF_Status* status = TF_NewStatus();
    TF_RegisterOpDefinition(builder.Release(), status);
    TF_DeleteStatus(status);
  }
};

// REGISTER_KERNEL_BUILDER's Name("Op").Device(DEVICE_CPU).TypeConstraint<T>("T").
class Name {
 public:
  explicit Name(const char* op) : op_(op) {}
  Name& Device(const char* device) {
    device_ = device;
    return *this;
  }
  template <typename T>
  Name& TypeConstraint(const char* attr) {
    constraints_.emplace_back(attr, DataTypeOf<T>());
    return *this;
  }
  Name& TypeConstraint(const char* attr, TF_DataType type) {
    constraints_.emplace_back(attr, type);
    return *this;
  }

  const std::string& op() const { return op_; }
  const std::string& device() const { return device_; }
  const std::vector<std::pair<std::string, TF_DataType>>& constraints() const {
    return constraints_;
  }

 private:
  std::string op_;
  std::string device_ = DEVICE_CPU;
  std::vector<std::pair<std::string, TF_DataType>> constraints_;
};

template <typename Kernel>
struct KernelRegistrar {
  static void* Create(TF_OpKernelConstruction* ctx) { return new Kernel(ctx); }
  static void Compute(void* kernel, TF_OpKernelContext* ctx) {
    static_cast<Kernel*>(kernel)->Compute(ctx);
  }
  static void Delete(void* kernel) { delete static_cast<Kernel*>(kernel); }

  KernelRegistrar(const Name& name, const char* kernel_name) {
    TF_Status* status = TF_NewStatus();
    TF_KernelBuilder* builder = TF_NewKernelBuilder(name.op().c_str(), name.device().c_str(),
                                                    &Create, &Compute, &Delete);
    for (const auto& [attr, type] : name.constraints()) {
      TF_KernelBuilder_TypeConstraint(builder, attr.c_str(), type, status);
    }
    TF_RegisterKernelBuilder(kernel_name, builder, status);
    TF_DeleteStatus(status);
  }
};

}  // namespace sluice_op_library

#define SL_OP_LIBRARY_CONCAT_(a, b) a##b
#define SL_OP_LIBRARY_UNIQ_(a, b) SL_OP_LIBRARY_CONCAT_(a, b)

#define REGISTER_OP(name)                                                              \
  static ::sluice_op_library::OpRegistrar SL_OP_LIBRARY_UNIQ_(sl_op_registrar_, __COUNTER__) \
      [[maybe_unused]] = ::sluice_op_library::OpDefBuilder(name)

#define REGISTER_KERNEL_BUILDER(name, ...)                                  \
  static ::sluice_op_library::KernelRegistrar<__VA_ARGS__> SL_OP_LIBRARY_UNIQ_( \
      sl_kernel_registrar_, __COUNTER__)[[maybe_unused]](::sluice_op_library::name, #__VA_ARGS__)

#endif  // SLUICE_OP_LIBRARY_H_
