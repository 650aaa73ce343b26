// TensorFlow's collective ops on CPU: CollectiveReduceV2 (ring all-reduce), CollectiveGatherV2
// (ring all-gather along dim 0) and CollectiveBcastSendV2/RecvV2, between the members the
// master resolved for the step (master/collectives.h: `_collective_devices`, `_collective_rank`).
// Chunks travel as tensors through the step's rendezvous, under keys
// "collective/<group>/<instance>/<phase>/<round>" from one member's device to the next one's:
// on one machine a local hand-over, across tasks the workers' RecvTensor, like any cut edge.
//
// Reduction order is fixed: chunk c is merged along the ring starting at rank c, finished
// (final_op) once by its owner and copied to the others, so every member gets the same bits
// and reruns give the same result. A member whose shape differs fails the step naming it; a
// member that does not answer within timeout_seconds fails it with DEADLINE_EXCEEDED naming
// the device it waited for; cancellation and the step's deadline abort the rendezvous, which
// ends every pending receive.
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

std::string ShapeString(const Tensor& shape) {
  std::vector<int64_t> dims(shape.flat<int64_t>().begin(), shape.flat<int64_t>().end());
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

Tensor ShapeTensor(const TensorShape& shape) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return Tensor::FromVector<int64_t>(dims, TensorShape({static_cast<int64_t>(dims.size())}));
}

// a mod n in [0, n), for ring positions that step backwards.
int Mod(int a, int n) { return ((a % n) + n) % n; }

// What every collective kernel knows of its group once the master resolved it.
struct Group {
  std::vector<std::string> devices;
  std::vector<int64_t> incarnations;
  int64_t rank = 0;
  int64_t source = -1;  // Broadcasts: the sender's rank.
  float timeout_seconds = 0;
};

absl::Status ReadGroup(OpKernelConstruction* ctx, Group* g) {
  if (!ctx->def().attr().contains("_collective_devices")) {
    return absl::FailedPreconditionError(absl::StrCat(
        ctx->def().op(), " '", ctx->def().name(),
        "': its group was not resolved; collective ops run in a session's step, where the master finds their groups"));
  }
  SL_RETURN_IF_ERROR(ctx->GetAttr("_collective_devices", &g->devices));
  SL_RETURN_IF_ERROR(ctx->GetAttr("_collective_incarnations", &g->incarnations));
  SL_RETURN_IF_ERROR(ctx->GetAttr("_collective_rank", &g->rank));
  if (ctx->def().attr().contains("_collective_source")) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("_collective_source", &g->source));
  }
  SL_RETURN_IF_ERROR(ctx->GetAttr("timeout_seconds", &g->timeout_seconds));
  if (g->devices.empty() || g->incarnations.size() != g->devices.size() || g->rank < 0 ||
      g->rank >= static_cast<int64_t>(g->devices.size()) ||
      (g->source != -1 && (g->source < 0 || g->source >= static_cast<int64_t>(g->devices.size())))) {
    return absl::InvalidArgumentError(absl::StrCat(ctx->def().op(), " '", ctx->def().name(), "': a damaged group"));
  }
  // A graph registered on a worker directly carries whatever attrs its sender wrote: every
  // device must make a rendezvous key (Exchange::Key relies on it).
  for (const std::string& d : g->devices) {
    if (!Rendezvous::ParseKey(Rendezvous::CreateKey(d, 0, d, "collective", FrameAndIter{})).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->def().op(), " '", ctx->def().name(),
                                                     "': group device '", d, "' is not a device name"));
    }
  }
  return absl::OkStatus();
}

// One run of a collective kernel: its context, its done callback (called once) and the
// rendezvous exchanges, kept alive by the receives' callbacks.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(OpKernelContext* ctx, AsyncOpKernel::DoneCallback done, const Group& group)
      : ctx_(ctx), done_(std::move(done)), group_(group) {
    const int first = ctx->kernel().type_string() == "CollectiveBcastRecvV2" ? 0 : 1;
    group_key_ = ctx->input(first + 1).flat<int32_t>()[0];
    instance_key_ = ctx->input(first + 2).flat<int32_t>()[0];
  }

  int n() const { return static_cast<int>(group_.devices.size()); }
  int rank() const { return static_cast<int>(group_.rank); }
  int next() const { return (rank() + 1) % n(); }
  int prev() const { return (rank() + n() - 1) % n(); }
  OpKernelContext* ctx() const { return ctx_; }
  const Group& group() const { return group_; }

  std::string Where() const {
    return absl::StrCat(ctx_->kernel().type_string(), " '", ctx_->kernel().name(), "' (group ", group_key_,
                        ", instance ", instance_key_, ", rank ", rank(), " on ", group_.devices[rank()], ")");
  }

  Rendezvous::ParsedKey Key(int from, int to, absl::string_view tag) const {
    auto key = Rendezvous::ParseKey(Rendezvous::CreateKey(
        group_.devices[from], static_cast<uint64_t>(group_.incarnations[from]), group_.devices[to],
        absl::StrCat("collective/", group_key_, "/", instance_key_, "/", tag), FrameAndIter{}));
    return *key;  // Devices come from the master's placement: always a well-formed key.
  }

  absl::Status Send(int to, absl::string_view tag, const Tensor& value) {
    if (ctx_->rendezvous() == nullptr) return absl::InternalError(absl::StrCat(Where(), ": no rendezvous"));
    return ctx_->rendezvous()->Send(Key(rank(), to, tag), value);
  }

  // Receives `tag` from rank `from`, then calls `next` with it (unless the run already ended).
  void Recv(int from, absl::string_view tag, std::function<void(const Tensor&)> next) {
    if (ctx_->rendezvous() == nullptr) {
      Finish(absl::InternalError(absl::StrCat(Where(), ": no rendezvous")));
      return;
    }
    auto self = shared_from_this();
    auto arrived = std::make_shared<absl::Notification>();
    ctx_->rendezvous()->RecvAsync(Key(from, rank(), tag), [self, arrived, next = std::move(next)](
                                                                const absl::Status& s, const Tensor& value) {
      arrived->Notify();
      if (self->finished_.load()) return;
      if (!s.ok()) {
        self->Finish(s);
        return;
      }
      next(value);
    });
    if (group_.timeout_seconds > 0 && !arrived->HasBeenNotified()) {
      const std::string waiting = absl::StrCat(Where(), ": nothing from ", group_.devices[from], " (rank ", from,
                                               ") within timeout_seconds = ", group_.timeout_seconds);
      const absl::Duration timeout = absl::Seconds(group_.timeout_seconds);
      std::thread([self, arrived, waiting, timeout] {
        if (!arrived->WaitForNotificationWithTimeout(timeout)) self->Finish(absl::DeadlineExceededError(waiting));
      }).detach();
    }
  }

  void Finish(const absl::Status& s) {
    if (finished_.exchange(true)) return;
    done_(s);
  }

 private:
  OpKernelContext* ctx_;
  AsyncOpKernel::DoneCallback done_;
  Group group_;
  int32_t group_key_ = 0, instance_key_ = 0;
  std::atomic<bool> finished_{false};
};

// Calls fn with a null pointer of the element type of `dt` (one of the collectives' types).
template <typename Fn>
bool ForCollectiveType(DataType dt, Fn&& fn) {
  switch (dt) {
    case DT_FLOAT: fn(static_cast<float*>(nullptr)); return true;
    case DT_DOUBLE: fn(static_cast<double*>(nullptr)); return true;
    case DT_INT32: fn(static_cast<int32_t*>(nullptr)); return true;
    case DT_INT64: fn(static_cast<int64_t*>(nullptr)); return true;
    case DT_HALF: fn(static_cast<half*>(nullptr)); return true;
    case DT_BFLOAT16: fn(static_cast<bfloat16*>(nullptr)); return true;
    case DT_BOOL: fn(static_cast<bool*>(nullptr)); return true;
    default: return false;
  }
}

enum class MergeOp { kMin, kMax, kMul, kAdd };

template <typename T>
void Merge(MergeOp op, T* dst, const T* src, int64_t n) {
  using A = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;
  for (int64_t i = 0; i < n; ++i) {
    const A a = static_cast<A>(dst[i]), b = static_cast<A>(src[i]);
    A r = a;
    switch (op) {
      case MergeOp::kMin: r = b < a ? b : a; break;
      case MergeOp::kMax: r = b > a ? b : a; break;
      case MergeOp::kMul: r = a * b; break;
      case MergeOp::kAdd: r = a + b; break;
    }
    dst[i] = static_cast<T>(r);
  }
}

template <typename T>
void DivideBy(T* p, int64_t n, int divisor) {
  using A = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<A>(p[i]) / static_cast<A>(divisor));
}

// A copy of elements [begin, end) of `t` as a 1-D tensor.
Tensor Slice(const Tensor& t, int64_t begin, int64_t end) {
  Tensor out(t.dtype(), TensorShape({end - begin}));
  const size_t size = DataTypeSize(t.dtype());
  if (end > begin) {
    std::memcpy(static_cast<char*>(out.raw_data()), static_cast<const char*>(t.raw_data()) + begin * size,
                (end - begin) * size);
  }
  return out;
}

class CollectiveReduceOp : public AsyncOpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ReadGroup(ctx, &group_));
    std::string merge, final_op;
    SL_RETURN_IF_ERROR(ctx->GetAttr("merge_op", &merge));
    SL_RETURN_IF_ERROR(ctx->GetAttr("final_op", &final_op));
    merge_ = merge == "Min" ? MergeOp::kMin : merge == "Max" ? MergeOp::kMax : merge == "Mul" ? MergeOp::kMul : MergeOp::kAdd;
    divide_ = final_op == "Div";
    return absl::OkStatus();
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const override {
    auto ex = std::make_shared<Exchange>(ctx, std::move(done), group_);
    Tensor* out = nullptr;
    absl::Status s = ctx->allocate_output(0, ctx->input(0).shape(), &out);
    if (!s.ok()) return ex->Finish(s);
    if (out->NumElements() > 0) {
      std::memcpy(out->raw_data(), ctx->input(0).raw_data(), out->NumElements() * DataTypeSize(out->dtype()));
    }
    if (ex->n() == 1) return Finalize(ex, 0);
    // First the shapes: each member checks its predecessor's against its own.
    s = ex->Send(ex->next(), "shape", ShapeTensor(out->shape()));
    if (!s.ok()) return ex->Finish(s);
    ex->Recv(ex->prev(), "shape", [this, ex](const Tensor& theirs) {
      Tensor* out = &ex->ctx()->output(0);
      if (ShapeString(theirs) != ShapeString(ShapeTensor(out->shape()))) {
        return ex->Finish(absl::InvalidArgumentError(absl::StrCat(
            ex->Where(), ": member ", ex->group().devices[ex->prev()], " reduces a tensor of shape ",
            ShapeString(theirs), ", this one ", out->shape().DebugString())));
      }
      ReduceScatter(ex, 0);
    });
  }

 private:
  // Chunk k of the output: elements [begin, end).
  // OK when `part`, from the previous member, is the chunk [b, e) of the output.
  static absl::Status CheckChunk(const Exchange& ex, const Tensor& part, int64_t b, int64_t e) {
    const Tensor& out = ex.ctx()->output(0);
    if (part.dtype() == out.dtype() && part.NumElements() == e - b) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(ex.Where(), ": member ", ex.group().devices[ex.prev()], " sent ",
                                                   part.NumElements(), " ", DataTypeString(part.dtype()),
                                                   " values for a chunk of ", e - b));
  }

  static std::pair<int64_t, int64_t> Chunk(const Exchange& ex, int k) {
    const int64_t total = ex.ctx()->output(0).NumElements();
    return {total * k / ex.n(), total * (k + 1) / ex.n()};
  }

  void ReduceScatter(const std::shared_ptr<Exchange>& ex, int round) const {
    const int n = ex->n(), r = ex->rank();
    if (round == n - 1) return Finalize(ex, 0);
    Tensor* out = &ex->ctx()->output(0);
    const int send = Mod(r - round, n), recv = Mod(r - round - 1, n);
    auto [sb, se] = Chunk(*ex, send);
    absl::Status s = ex->Send(ex->next(), absl::StrCat("rs/", round), Slice(*out, sb, se));
    if (!s.ok()) return ex->Finish(s);
    ex->Recv(ex->prev(), absl::StrCat("rs/", round), [this, ex, round, recv](const Tensor& part) {
      Tensor* out = &ex->ctx()->output(0);
      auto [b, e] = Chunk(*ex, recv);
      if (absl::Status s = CheckChunk(*ex, part, b, e); !s.ok()) return ex->Finish(s);
      ForCollectiveType(out->dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if constexpr (!std::is_same_v<T, bool>) Merge(merge_, out->data<T>() + b, part.data<T>(), e - b);
      });
      ReduceScatter(ex, round + 1);
    });
  }

  // The owned chunk finished, then passed around the ring.
  void Finalize(const std::shared_ptr<Exchange>& ex, int) const {
    Tensor* out = &ex->ctx()->output(0);
    if (divide_) {
      auto [b, e] = ex->n() == 1 ? std::pair<int64_t, int64_t>{0, out->NumElements()} : Chunk(*ex, ex->next());
      ForCollectiveType(out->dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if constexpr (!std::is_same_v<T, bool>) DivideBy(out->data<T>() + b, e - b, ex->n());
      });
    }
    if (ex->n() == 1) return ex->Finish(absl::OkStatus());
    AllGather(ex, 0);
  }

  void AllGather(const std::shared_ptr<Exchange>& ex, int round) const {
    const int n = ex->n(), r = ex->rank();
    if (round == n - 1) return ex->Finish(absl::OkStatus());
    Tensor* out = &ex->ctx()->output(0);
    const int send = Mod(r + 1 - round, n), recv = Mod(r - round, n);
    auto [sb, se] = Chunk(*ex, send);
    absl::Status s = ex->Send(ex->next(), absl::StrCat("ag/", round), Slice(*out, sb, se));
    if (!s.ok()) return ex->Finish(s);
    ex->Recv(ex->prev(), absl::StrCat("ag/", round), [this, ex, round, recv](const Tensor& part) {
      Tensor* out = &ex->ctx()->output(0);
      auto [b, e] = Chunk(*ex, recv);
      if (absl::Status s = CheckChunk(*ex, part, b, e); !s.ok()) return ex->Finish(s);
      const size_t size = DataTypeSize(out->dtype());
      if (e > b) std::memcpy(static_cast<char*>(out->raw_data()) + b * size, part.raw_data(), (e - b) * size);
      AllGather(ex, round + 1);
    });
  }

  Group group_;
  MergeOp merge_ = MergeOp::kAdd;
  bool divide_ = false;
};

// All-gather along dim 0: the members' first dims may differ, the rest must agree.
class CollectiveGatherOp : public AsyncOpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ReadGroup(ctx, &group_); }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const override {
    auto ex = std::make_shared<Exchange>(ctx, std::move(done), group_);
    const Tensor& in = ctx->input(0);
    if (in.dims() < 1) {
      return ex->Finish(absl::InvalidArgumentError(
          absl::StrCat(ex->Where(), ": gathers along dim 0, so its input needs rank >= 1, got a scalar")));
    }
    auto state = std::make_shared<State>();
    state->shapes.resize(ex->n());
    state->shapes[ex->rank()] = ShapeTensor(in.shape());
    ShapeRound(ex, state, 0);
  }

 private:
  struct State {
    std::vector<Tensor> shapes;  // Per rank.
    std::vector<int64_t> offsets;  // Per rank: the first element of its block in the output.
  };

  // Shapes go around the ring: in round k each member passes on rank (r - k)'s.
  void ShapeRound(const std::shared_ptr<Exchange>& ex, const std::shared_ptr<State>& st, int round) const {
    const int n = ex->n(), r = ex->rank();
    if (round == n - 1) return Allocate(ex, st);
    const int send = Mod(r - round, n), recv = Mod(r - round - 1, n);
    absl::Status s = ex->Send(ex->next(), absl::StrCat("shape/", round), st->shapes[send]);
    if (!s.ok()) return ex->Finish(s);
    ex->Recv(ex->prev(), absl::StrCat("shape/", round), [this, ex, st, round, recv](const Tensor& shape) {
      if (shape.dtype() != DT_INT64) return ex->Finish(absl::InternalError(absl::StrCat(ex->Where(), ": a bad shape")));
      st->shapes[recv] = shape;
      ShapeRound(ex, st, round + 1);
    });
  }

  void Allocate(const std::shared_ptr<Exchange>& ex, const std::shared_ptr<State>& st) const {
    const Tensor& in = ex->ctx()->input(0);
    const Tensor mine = ShapeTensor(in.shape());
    int64_t rows = 0;
    int64_t row_elements = 1;
    for (int d = 1; d < in.dims(); ++d) row_elements *= in.dim_size(d);
    for (int m = 0; m < ex->n(); ++m) {
      const Tensor& s = st->shapes[m];
      bool same_rest = s.NumElements() == mine.NumElements();
      for (int64_t d = 1; same_rest && d < s.NumElements(); ++d) same_rest = s.flat<int64_t>()[d] == mine.flat<int64_t>()[d];
      if (!same_rest || s.flat<int64_t>()[0] < 0) {
        return ex->Finish(absl::InvalidArgumentError(absl::StrCat(
            ex->Where(), ": member ", ex->group().devices[m], " gathers a tensor of shape ", ShapeString(s),
            ", this one ", in.shape().DebugString(), "; all but the first dim must agree")));
      }
      int64_t offset = 0;
      if (!CheckedMul(rows, row_elements, &offset) || !CheckedAdd(rows, s.flat<int64_t>()[0], &rows)) {
        return ex->Finish(absl::InvalidArgumentError(absl::StrCat(
            ex->Where(), ": the gathered rows overflow (member ", ex->group().devices[m], " has shape ", ShapeString(s),
            ")")));
      }
      st->offsets.push_back(offset);
    }
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    dims[0] = rows;
    auto shape = TensorShape::FromDims(dims);
    if (!shape.ok()) return ex->Finish(AddContext(shape.status(), ex->Where()));
    Tensor* out = nullptr;
    absl::Status s = ex->ctx()->allocate_output(0, *shape, &out);
    if (!s.ok()) return ex->Finish(s);
    const size_t size = DataTypeSize(in.dtype());
    if (in.NumElements() > 0) {
      std::memcpy(static_cast<char*>(out->raw_data()) + st->offsets[ex->rank()] * size, in.raw_data(),
                  in.NumElements() * size);
    }
    DataRound(ex, st, 0);
  }

  void DataRound(const std::shared_ptr<Exchange>& ex, const std::shared_ptr<State>& st, int round) const {
    const int n = ex->n(), r = ex->rank();
    if (round == n - 1) return ex->Finish(absl::OkStatus());
    Tensor* out = &ex->ctx()->output(0);
    auto block = [&](int m) {
      const int64_t b = st->offsets[m];
      return std::pair<int64_t, int64_t>{b, m + 1 < n ? st->offsets[m + 1] : out->NumElements()};
    };
    const int send = Mod(r - round, n), recv = Mod(r - round - 1, n);
    auto [sb, se] = block(send);
    absl::Status s = ex->Send(ex->next(), absl::StrCat("data/", round), Slice(*out, sb, se));
    if (!s.ok()) return ex->Finish(s);
    auto [rb, re] = block(recv);
    ex->Recv(ex->prev(), absl::StrCat("data/", round), [this, ex, st, round, rb = rb, re = re](const Tensor& part) {
      Tensor* out = &ex->ctx()->output(0);
      if (part.dtype() != out->dtype() || part.NumElements() != re - rb) {
        return ex->Finish(absl::InvalidArgumentError(absl::StrCat(ex->Where(), ": member ",
                                                                  ex->group().devices[ex->prev()],
                                                                  " sent a block of the wrong size or type")));
      }
      const size_t size = DataTypeSize(out->dtype());
      if (re > rb) std::memcpy(static_cast<char*>(out->raw_data()) + rb * size, part.raw_data(), (re - rb) * size);
      DataRound(ex, st, round + 1);
    });
  }

  Group group_;
};

class CollectiveBcastSendOp : public AsyncOpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ReadGroup(ctx, &group_); }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const override {
    auto ex = std::make_shared<Exchange>(ctx, std::move(done), group_);
    for (int m = 0; m < ex->n(); ++m) {
      if (m == ex->rank()) continue;
      absl::Status s = ex->Send(m, "bcast", ctx->input(0));
      if (!s.ok()) return ex->Finish(s);
    }
    ex->Finish(ctx->set_output(0, ctx->input(0)));
  }

 private:
  Group group_;
};

class CollectiveBcastRecvOp : public AsyncOpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ReadGroup(ctx, &group_));
    return ctx->GetAttr("T", &dtype_);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const override {
    auto ex = std::make_shared<Exchange>(ctx, std::move(done), group_);
    if (group_.source < 0 || group_.source >= ex->n()) {
      return ex->Finish(absl::InvalidArgumentError(absl::StrCat(ex->Where(), ": no sender resolved")));
    }
    const Tensor& shape = ctx->input(3);
    std::vector<int64_t> want;
    for (int64_t i = 0; i < shape.NumElements(); ++i) {
      want.push_back(shape.dtype() == DT_INT32 ? shape.flat<int32_t>()[i] : shape.flat<int64_t>()[i]);
    }
    ex->Recv(static_cast<int>(group_.source), "bcast", [this, ex, want](const Tensor& value) {
      std::vector<int64_t> got(value.shape().dim_sizes().begin(), value.shape().dim_sizes().end());
      if (value.dtype() != dtype_ || got != want) {
        return ex->Finish(absl::InvalidArgumentError(absl::StrCat(
            ex->Where(), ": the sender on ", ex->group().devices[ex->group().source], " broadcasts ",
            DataTypeString(value.dtype()), " ", value.shape().DebugString(), ", this member expects ",
            DataTypeString(dtype_), " [", absl::StrJoin(want, ","), "]")));
      }
      ex->Finish(ex->ctx()->set_output(0, value));
    });
  }

 private:
  Group group_;
  DataType dtype_ = DT_INVALID;
};

REGISTER_KERNEL_BUILDER(Name("CollectiveReduceV2").Device(DEVICE_CPU), CollectiveReduceOp);
REGISTER_KERNEL_BUILDER(Name("CollectiveGatherV2").Device(DEVICE_CPU), CollectiveGatherOp);
REGISTER_KERNEL_BUILDER(Name("CollectiveBcastSendV2").Device(DEVICE_CPU), CollectiveBcastSendOp);
REGISTER_KERNEL_BUILDER(Name("CollectiveBcastRecvV2").Device(DEVICE_CPU), CollectiveBcastRecvOp);

}  // namespace
}  // namespace sluice
