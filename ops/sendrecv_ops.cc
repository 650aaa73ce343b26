// _Send/_Recv: the ends of a cut edge, inserted by the partitioner. They meet in a rendezvous
// under the key "send_device;incarnation;recv_device;tensor_name;frame:iter".
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("_Send")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::NoOutputs);

REGISTER_OP("_Recv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetIsDistributedCommunication()
    .SetShapeFn(shape_fn::Unknown);

}  // namespace sluice
