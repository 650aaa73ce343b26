// TensorFlow's collective ops (collective_ops.cc's V2 signatures): members of a group, one per
// device, meet by (group_key, instance_key) and reduce, gather or broadcast a tensor. Sluice
// runs them inside one master step: the master resolves each group's devices and ranks when it
// builds the step (master/collectives.h) and the kernels exchange chunks over the step's
// rendezvous, so they work on one machine's devices and across a cluster's tasks alike.
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("CollectiveReduceV2")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {bfloat16, float, half, double, int32, int64}")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("ordering_token: Nordering_token * resource")
    .Attr("merge_op: {'Min', 'Max', 'Mul', 'Add'}")
    .Attr("final_op: {'Id', 'Div'}")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .Attr("is_stateless: bool = false")
    .Attr("Nordering_token: int >= 0 = 0")
    .Attr("max_subdivs_per_device: int = -1")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("CollectiveGatherV2")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, half, double, int32, int64}")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("ordering_token: Nordering_token * resource")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .Attr("is_stateless: bool = false")
    .Attr("Nordering_token: int >= 0 = 0")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::Unknown);

REGISTER_OP("CollectiveBcastSendV2")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("CollectiveBcastRecvV2")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("shape: Tshape")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::Unknown);

}  // namespace sluice
