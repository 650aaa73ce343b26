// Same-host RecvTensor: when the receiving task runs on the sender's machine, in its pid
// namespace, the sender answers a big tensor with where the tensor's bytes lie in its own
// memory (rpc::SameHostSource), and the receiver copies them into its tensor with
// process_vm_readv (Linux cross-memory attach): one copy, by the kernel, where the TCP path
// makes three (into the socket, out of it, into the tensor). This is how MPI and UCX move
// large messages between processes of one node.
//
// Nothing is created that could outlive a process: no shared-memory segment to unlink, no
// mapping to undo. The sender holds a reference to the tensor until the receiver releases it,
// the step is cleaned up, or the service goes away; the receiver trusts a copy only once the
// sender confirms it still held the tensor (see RecvTensorRequest.SAME_HOST_RELEASE).
//
//   request.set_same_host_id(SameHostId());                  // receiver: offer
//   if (request.same_host_id() == SameHostId()) ...          // sender: answer with the source
//   absl::Status s = ReadFromSameHost(source.pid(), source.address(), dst, bytes);  // receiver
#ifndef SLUICE_RPC_SAME_HOST_TRANSFER_H_
#define SLUICE_RPC_SAME_HOST_TRANSFER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace sluice {

// Tensors smaller than this go over gRPC even on one machine: the same-host path costs an
// extra round trip (the release). At 512 KB that is already cheaper than gRPC's TLS frames:
// ResNet-50's 800 KB cut tensor between two pipeline stages took 1.28 ms of the sending
// stage's run through gRPC and 0.74 ms this way (0.25-0.74 over runs), and two stages at
// --concurrency 2 went 1-3% faster in alternating rounds; latency at --concurrency 1 did not
// move (33.5-33.8 against 33.7-34.1 ms). Below this, nothing measured a gain.
inline constexpr uint64_t kSameHostMinBytes = uint64_t{1} << 19;

// Names this process's machine (its boot id) and pid namespace: two processes with the same
// id can name each other by pid. "" where either cannot be read (then nothing matches it).
const std::string& SameHostId();

// Whether same-host transfers are on unless a program says otherwise: yes, except where the
// environment sets SLUICE_SAME_HOST_RECV_TENSOR=0 (to measure or test the gRPC path).
bool SameHostTransfersEnabledByDefault();

// Copies `bytes` from `address` in process `pid` to `dst`. PERMISSION_DENIED or UNIMPLEMENTED
// where this process may not read the other's memory (ptrace rules, seccomp), UNAVAILABLE when
// the process is gone, DATA_LOSS when the range is not mapped there.
absl::Status ReadFromSameHost(int64_t pid, uint64_t address, void* dst, uint64_t bytes);

// Whether process `pid` is the one listening on `address`'s TCP port in this network
// namespace, as the kernel tells (/proc/net/tcp{,6} and /proc/PID/fd), not as any message
// claims. A receiver reads a sender's memory only after this: a process that took over a dead
// task's address can then only make it read that process's own memory. PERMISSION_DENIED
// otherwise (and for an address without a port).
// A verdict is reused for 250 ms, for the same process only (pid and start time): the check
// reads every socket of the namespace, and a step makes one transfer per tensor.
absl::Status VerifySameHostListener(int64_t pid, const std::string& address);
// The same, always looking.
absl::Status VerifySameHostListenerNow(int64_t pid, const std::string& address);

}  // namespace sluice

#endif  // SLUICE_RPC_SAME_HOST_TRANSFER_H_
