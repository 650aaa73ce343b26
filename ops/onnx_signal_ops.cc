// Signal processing ops with ONNX semantics (opset 17): DFT, STFT, MelWeightMatrix. Complex
// values are a trailing dim of 2 (real, imaginary); real inputs have a trailing dim of 1.
// Optional ONNX inputs are list(type) args holding zero or one tensor.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Onnx>DFT")
    .Input("input: T1")
    .Input("dft_length: T2")
    .Input("axis_tensor: Taxis")
    .Output("output: T1")
    .Attr(absl::StrCat("T1: ", kFloatTypes))
    .Attr("T2: list(type) >= 0")
    .Attr("Taxis: list(type) >= 0")
    .Attr("axis: int = 1")
    .Attr("inverse: int = 0")
    .Attr("onesided: int = 0")
    .Doc("Discrete Fourier transform along `axis` (or the scalar axis_tensor, DFT-20's axis input, "
         "when given) of [batch, signal..., 1 or 2]; dft_length "
         "zero-pads or truncates the signal; onesided keeps the first n/2 + 1 frequencies; "
         "inverse scales by 1/n.");

REGISTER_OP("Onnx>STFT")
    .Input("signal: T1")
    .Input("frame_step: T2")
    .Input("window: Twindow")
    .Input("frame_length: Tlength")
    .Output("output: T1")
    .Attr(absl::StrCat("T1: ", kFloatTypes))
    .Attr("T2: {int32, int64}")
    .Attr("Twindow: list(type) >= 0")
    .Attr("Tlength: list(type) >= 0")
    .Attr("onesided: int = 1")
    .Doc("Short-time Fourier transform of [batch, length, 1 or 2]: frames of frame_length "
         "every frame_step samples, each times the window, to [batch, frames, bins, 2].");

REGISTER_OP("Onnx>MelWeightMatrix")
    .Input("num_mel_bins: T1")
    .Input("dft_length: T1")
    .Input("sample_rate: T1")
    .Input("lower_edge_hertz: T2")
    .Input("upper_edge_hertz: T2")
    .Output("output: output_datatype")
    .Attr("T1: {int32, int64}")
    .Attr(absl::StrCat("T2: ", kFloatTypes))
    .Attr("output_datatype: {uint8, uint16, uint32, uint64, int8, int16, int32, int64, half, "
          "bfloat16, float, double} = DT_FLOAT")
    .Doc("Triangular mel filters as a [dft_length / 2 + 1, num_mel_bins] matrix that maps "
         "a onesided magnitude spectrum to mel bands.");

}  // namespace sluice
