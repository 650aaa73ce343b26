#include "rpc/tensor_coding.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/bool_bytes.h"
#include "framework/status.h"
#include "proto/worker.pb.h"

namespace sluice {
namespace {

// Protobuf wire types and the field numbers this file writes and reads.
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
constexpr int kResponseTensor = 1, kResponseIsDead = 2, kResponseSendStartMicros = 3;
constexpr int kResponseContentTotalBytes = 1001, kResponseContentOffset = 1002;
constexpr int kResponseSameHostSource = 1003;
constexpr int kTensorContent = 4;

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void AppendTag(int field, int wire_type, std::string* out) {
  AppendVarint(static_cast<uint64_t>(field) << 3 | wire_type, out);
}

// Big receive buffers are recycled: a fresh buffer's page faults cost as much as copying into
// it (a cold 256 MiB copy runs at 2 GB/s on a 2-core EPYC, a warm one at 11 GB/s), and a
// pipeline receives tensors of the same sizes every step. Buffers below kPooledMinBytes come
// from the allocator as usual; at most kPoolMaxBytes wait idle, per process, the least
// recently released going first to make room (a buffer just released is the likeliest to be
// wanted again next step). Buffers of kHugePageBytes and more are advised onto transparent
// huge pages, as framework/tensor.cc does for tensors: a fresh one then faults 512 times less.
constexpr uint64_t kPooledMinBytes = uint64_t{1} << 20;
constexpr uint64_t kPoolMaxBytes = uint64_t{1} << 30;
constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;

class ReceiveBufferPool {
 public:
  static ReceiveBufferPool& Get() {
    static ReceiveBufferPool* pool = new ReceiveBufferPool();
    return *pool;
  }

  // A buffer of `bytes`, backed by an idle one of at most twice that size when there is one.
  std::shared_ptr<TensorBuffer> Allocate(uint64_t bytes) {
    if (bytes < kPooledMinBytes) return TensorBuffer::Allocate(DT_UINT8, static_cast<int64_t>(bytes));
    Idle found{0, nullptr};
    {
      absl::MutexLock lock(&mu_);
      auto best = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (it->capacity >= bytes && it->capacity <= 2 * bytes &&
            (best == idle_.end() || it->capacity < best->capacity)) {
          best = it;
        }
      }
      if (best != idle_.end()) {
        found = *best;
        idle_bytes_ -= found.capacity;
        idle_.erase(best);
      }
    }
    if (found.data == nullptr) {
      const uint64_t align = bytes >= kHugePageBytes ? kHugePageBytes : kTensorAlignment;
      found.capacity = (bytes + align - 1) / align * align;
      found.data = std::aligned_alloc(align, found.capacity);
      if (found.data == nullptr) return nullptr;
      if (align == kHugePageBytes) madvise(found.data, found.capacity, MADV_HUGEPAGE);  // Advice only.
    }
    const size_t capacity = found.capacity;
    return TensorBuffer::Wrap(found.data, bytes,
                              [capacity](void* p, size_t) { Get().Release(p, capacity); });
  }

 private:
  struct Idle {
    size_t capacity;
    void* data;
  };

  void Release(void* data, size_t capacity) {
    std::vector<void*> evicted;  // Freed outside the lock.
    {
      absl::MutexLock lock(&mu_);
      if (capacity > kPoolMaxBytes) {
        evicted.push_back(data);
      } else {
        idle_.push_front({capacity, data});
        idle_bytes_ += capacity;
        while (idle_bytes_ > kPoolMaxBytes) {
          evicted.push_back(idle_.back().data);
          idle_bytes_ -= idle_.back().capacity;
          idle_.pop_back();
        }
      }
    }
    for (void* p : evicted) std::free(p);
  }

  absl::Mutex mu_;
  std::list<Idle> idle_ ABSL_GUARDED_BY(mu_);  // The most recently released first.
  uint64_t idle_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

void ReleaseBufferRef(void* ref) { delete static_cast<std::shared_ptr<TensorBuffer>*>(ref); }

// Reads a byte stream spread over gRPC slices without joining them.
class SliceReader {
 public:
  explicit SliceReader(std::vector<grpc::Slice> slices) : slices_(std::move(slices)) {
    for (const auto& s : slices_) size_ += s.size();
  }
  size_t position() const { return pos_; }
  size_t size() const { return size_; }

  bool ReadVarint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Read(&b, 1)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  // Copies the next `n` bytes to `dst` (or skips them when `dst` is null).
  bool Read(void* dst, size_t n) {
    if (n > size_ - pos_) return false;
    char* out = static_cast<char*>(dst);
    while (n > 0) {
      const grpc::Slice& s = slices_[slice_];
      size_t take = std::min(n, s.size() - offset_);
      if (out != nullptr) {
        std::memcpy(out, s.begin() + offset_, take);
        out += take;
      }
      n -= take;
      pos_ += take;
      offset_ += take;
      if (offset_ == s.size()) {
        ++slice_;
        offset_ = 0;
      }
    }
    return true;
  }
  bool Append(size_t n, std::string* out) {
    if (n > size_ - pos_) return false;
    size_t old = out->size();
    out->resize(old + n);
    return Read(out->data() + old, n);
  }

 private:
  std::vector<grpc::Slice> slices_;
  size_t size_ = 0, pos_ = 0, slice_ = 0, offset_ = 0;
};

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed RecvTensorResponse: ", what));
}

// Copies the field whose tag was just read to `out` (tag included), or skips it if `out` is null.
absl::Status CopyField(SliceReader* in, uint64_t tag, std::string* out) {
  if (out != nullptr) AppendVarint(tag, out);
  uint64_t v;
  switch (tag & 7) {
    case kVarint:
      if (!in->ReadVarint(&v)) return Malformed("truncated varint");
      if (out != nullptr) AppendVarint(v, out);
      return absl::OkStatus();
    case kFixed64:
    case kFixed32: {
      size_t n = (tag & 7) == kFixed64 ? 8 : 4;
      bool ok = out != nullptr ? in->Append(n, out) : in->Read(nullptr, n);
      return ok ? absl::OkStatus() : Malformed("truncated fixed-width field");
    }
    case kLengthDelimited:
      if (!in->ReadVarint(&v)) return Malformed("truncated length");
      if (out != nullptr) AppendVarint(v, out);
      if (!(out != nullptr ? in->Append(v, out) : in->Read(nullptr, v))) {
        return Malformed("a field runs past the end");
      }
      return absl::OkStatus();
    default:
      return Malformed(absl::StrCat("unsupported wire type ", tag & 7));
  }
}

}  // namespace

grpc::ByteBuffer EncodeRecvTensorResponse(const RecvTensorResponse& response, uint64_t offset,
                                          uint64_t max_chunk_bytes) {
  const Tensor& t = response.tensor;
  std::string trailer;
  if (response.is_dead) {
    AppendTag(kResponseIsDead, kVarint, &trailer);
    AppendVarint(1, &trailer);
  }
  if (response.send_start_micros != 0) {
    AppendTag(kResponseSendStartMicros, kVarint, &trailer);
    AppendVarint(static_cast<uint64_t>(response.send_start_micros), &trailer);
  }
  if (t.dtype() == DT_STRING || t.dtype() == DT_VARIANT || !t.IsInitialized()) {
    // No flat bytes to point at: an ordinary message.
    rpc::RecvTensorResponse proto;
    if (t.IsInitialized()) t.AsProtoTensorContent(proto.mutable_tensor());
    std::string bytes = proto.SerializeAsString() + trailer;
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
  }
  const uint64_t total = t.AllocatedBytes();
  offset = std::min(offset, total);
  const uint64_t n = std::min(total - offset, std::max<uint64_t>(max_chunk_bytes, 1));
  const char* data = static_cast<const char*>(t.raw_data()) + offset;
  TensorProto meta;
  meta.set_dtype(t.dtype());
  t.shape().AsProto(meta.mutable_tensor_shape());
  const std::string meta_bytes = meta.SerializeAsString();
  const uint64_t tensor_length =
      meta_bytes.size() + (n > 0 ? VarintSize(uint64_t{kTensorContent} << 3) + VarintSize(n) + n : 0);
  std::string header;
  if (n < total) {  // Chunked: say where this piece goes, before the tensor.
    AppendTag(kResponseContentTotalBytes, kVarint, &header);
    AppendVarint(total, &header);
    if (offset > 0) {
      AppendTag(kResponseContentOffset, kVarint, &header);
      AppendVarint(offset, &header);
    }
  }
  AppendTag(kResponseTensor, kLengthDelimited, &header);
  AppendVarint(tensor_length, &header);
  header += meta_bytes;
  if (n > 0) {
    AppendTag(kTensorContent, kLengthDelimited, &header);
    AppendVarint(n, &header);
  }
  if (n > 0 && n < kZeroCopyMinBytes) {
    header.append(data, n);
    header += trailer;
    grpc::Slice slice(header);
    return grpc::ByteBuffer(&slice, 1);
  }
  std::vector<grpc::Slice> slices;
  slices.emplace_back(header);
  if (n > 0) {
    slices.emplace_back(const_cast<char*>(data), n, &ReleaseBufferRef,
                        new std::shared_ptr<TensorBuffer>(t.buffer()));
  }
  if (!trailer.empty()) slices.emplace_back(trailer);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

namespace {

// An answer whose bytes come another way than in it: `source` says how.
grpc::ByteBuffer EncodeOutOfBandAnswer(const RecvTensorResponse& response, const rpc::SameHostSource& source) {
  const Tensor& t = response.tensor;
  const std::string source_bytes = source.SerializeAsString();
  TensorProto meta;
  meta.set_dtype(t.dtype());
  t.shape().AsProto(meta.mutable_tensor_shape());
  const std::string meta_bytes = meta.SerializeAsString();
  // Field order as EncodeRecvTensorResponse writes it: what the decoder needs before `tensor`.
  std::string bytes;
  AppendTag(kResponseContentTotalBytes, kVarint, &bytes);
  AppendVarint(t.AllocatedBytes(), &bytes);
  AppendTag(kResponseSameHostSource, kLengthDelimited, &bytes);
  AppendVarint(source_bytes.size(), &bytes);
  bytes += source_bytes;
  AppendTag(kResponseTensor, kLengthDelimited, &bytes);
  AppendVarint(meta_bytes.size(), &bytes);
  bytes += meta_bytes;
  if (response.is_dead) {
    AppendTag(kResponseIsDead, kVarint, &bytes);
    AppendVarint(1, &bytes);
  }
  if (response.send_start_micros != 0) {
    AppendTag(kResponseSendStartMicros, kVarint, &bytes);
    AppendVarint(static_cast<uint64_t>(response.send_start_micros), &bytes);
  }
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

grpc::ByteBuffer EncodeSameHostAnswer(const RecvTensorResponse& response, uint64_t lease) {
  rpc::SameHostSource source;
  source.set_pid(getpid());
  source.set_address(reinterpret_cast<uint64_t>(response.tensor.raw_data()));
  source.set_lease(lease);
  return EncodeOutOfBandAnswer(response, source);
}

grpc::ByteBuffer EncodeSealedStreamAnswer(const RecvTensorResponse& response, uint64_t lease,
                                          const rpc::SealedStream& stream) {
  rpc::SameHostSource source;
  source.set_lease(lease);
  *source.mutable_sealed_stream() = stream;
  return EncodeOutOfBandAnswer(response, source);
}

void RecvTensorDecoder::SetReceivedFromSameHost() {
  if (same_host_ && started_) received_ = total_;
}

void RecvTensorDecoder::SetReceivedFromStream() {
  if (!same_host_ || !started_) return;
  received_ = total_;
  if (response_.tensor.dtype() == DT_BOOL) {
    CanonicalizeBoolBytes(response_.tensor.raw_data(), response_.tensor.AllocatedBytes());
  }
}

absl::Status RecvTensorDecoder::Add(const grpc::ByteBuffer& buffer) {
  if (done()) return Malformed("more chunks than the tensor has");
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return Malformed("unreadable buffer");
  SliceReader in(std::move(slices));
  bool has_tensor = false, chunked = false;
  uint64_t total = 0, offset = 0;
  while (in.position() < in.size()) {
    uint64_t tag, v;
    if (!in.ReadVarint(&tag)) return Malformed("truncated tag");
    const uint64_t field = tag >> 3;
    const int wire_type = tag & 7;
    if (field == kResponseTensor && wire_type == kLengthDelimited) {
      if (!in.ReadVarint(&v)) return Malformed("truncated length");
      if (v > in.size() - in.position()) return Malformed("the tensor runs past the end");
      if (started_ && !chunked) return Malformed("a second answer that is not a chunk");
      if (started_ && total != total_) return Malformed("chunks of tensors of different sizes");
      if (started_ && offset != received_) {
        return Malformed(absl::StrCat("a chunk at byte ", offset, " where ", received_, " was expected"));
      }
      if (chunked && !started_ && offset != 0) return Malformed("the first chunk does not start at 0");
      if (same_host_ && (started_ || !chunked)) {
        return Malformed("a same-host source without the tensor's size, or after its first answer");
      }
      // Reads a TensorProto of `v` bytes; tensor_content goes straight into the tensor's buffer.
      const size_t end = in.position() + v;
      std::string rest;  // Every field but tensor_content, for protobuf to parse.
      uint64_t content_bytes = 0;
      bool has_content = false;
      while (in.position() < end) {
        if (!in.ReadVarint(&tag)) return Malformed("truncated tag");
        if (tag >> 3 != kTensorContent || (tag & 7) != kLengthDelimited) {
          SL_RETURN_IF_ERROR(CopyField(&in, tag, &rest));
          continue;
        }
        if (!in.ReadVarint(&content_bytes)) return Malformed("truncated length");
        if (content_bytes > end - in.position()) return Malformed("tensor_content runs past the end");
        if (same_host_) return Malformed("tensor_content in a same-host answer");
        const uint64_t capacity = chunked ? total : content_bytes;
        if (content_ == nullptr) {
          content_ = ReceiveBufferPool::Get().Allocate(capacity);
          if (content_ == nullptr) {
            return absl::ResourceExhaustedError(
                absl::StrCat("out of memory receiving a tensor of ", capacity, " bytes"));
          }
        }
        if (offset + content_bytes > content_->size()) return Malformed("a chunk past the tensor's end");
        if (!in.Read(static_cast<char*>(content_->data()) + offset, content_bytes)) {
          return Malformed("truncated tensor_content");
        }
        has_content = true;
      }
      if (in.position() != end) return Malformed("a field of the tensor runs past its end");
      has_tensor = true;
      if (started_) {  // A later chunk: the header was checked with the first.
        received_ += content_bytes;
        continue;
      }
      TensorProto meta;
      if (!meta.ParseFromString(rest)) return Malformed("bad TensorProto fields");
      started_ = true;
      if (!has_content && !chunked) {
        SL_ASSIGN_OR_RETURN(response_.tensor, Tensor::FromProto(meta));
        continue;
      }
      const DataType dt = meta.dtype();
      if (!DataTypeIsSupported(dt) || dt == DT_STRING) {
        return Malformed(absl::StrCat("tensor_content for dtype ", DataTypeString(dt)));
      }
      SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(meta.tensor_shape()));
      const uint64_t expected = static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dt);
      total_ = chunked ? total : content_bytes;
      received_ = content_bytes;
      if (expected != total_) {
        return Malformed(absl::StrCat("a ", DataTypeString(dt), " tensor of shape ",
                                      shape.DebugString(), " needs ", expected, " bytes but has ",
                                      total_));
      }
      if (content_ == nullptr && same_host_) {  // To be filled by the caller.
        content_ = ReceiveBufferPool::Get().Allocate(total_);
        if (content_ == nullptr) {
          return absl::ResourceExhaustedError(
              absl::StrCat("out of memory receiving a tensor of ", total_, " bytes"));
        }
      }
      if (content_ == nullptr) content_ = TensorBuffer::Allocate(DT_UINT8, 0);
      response_.tensor = Tensor(dt, shape, content_);
    } else if (field == kResponseIsDead && wire_type == kVarint) {
      if (!in.ReadVarint(&v)) return Malformed("truncated varint");
      response_.is_dead = v != 0;
    } else if (field == kResponseSendStartMicros && wire_type == kVarint) {
      if (!in.ReadVarint(&v)) return Malformed("truncated varint");
      response_.send_start_micros = static_cast<int64_t>(v);
    } else if ((field == kResponseContentTotalBytes || field == kResponseContentOffset) &&
               wire_type == kVarint) {
      if (has_tensor) return Malformed("chunk fields after the tensor");
      if (!in.ReadVarint(&v)) return Malformed("truncated varint");
      (field == kResponseContentTotalBytes ? total : offset) = v;
      chunked = true;
    } else if (field == kResponseSameHostSource && wire_type == kLengthDelimited) {
      if (has_tensor) return Malformed("a same-host source after the tensor");
      std::string bytes;
      if (!in.ReadVarint(&v) || !in.Append(v, &bytes) || !same_host_source_.ParseFromString(bytes)) {
        return Malformed("bad same-host source");
      }
      same_host_ = true;
    } else {
      if (field == 0) return Malformed("field number 0");
      SL_RETURN_IF_ERROR(CopyField(&in, tag, nullptr));
    }
  }
  if (!has_tensor && !response_.is_dead) return Malformed("no tensor");
  if (!has_tensor) started_ = true;  // A dead tensor has no value to wait for.
  // The last chunk of a bool tensor's bytes from the network: 0 or 1 each from here on.
  if (has_tensor && done() && !same_host_ && response_.tensor.dtype() == DT_BOOL) {
    CanonicalizeBoolBytes(response_.tensor.raw_data(), response_.tensor.AllocatedBytes());
  }
  return absl::OkStatus();
}

absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, RecvTensorResponse* response) {
  RecvTensorDecoder decoder;
  SL_RETURN_IF_ERROR(decoder.Add(buffer));
  if (!decoder.done()) return Malformed("the first of several chunks");
  *response = std::move(decoder.response());
  return absl::OkStatus();
}

}  // namespace sluice
