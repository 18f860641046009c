// FFT C API: tsr_fft_desc to fft::PlanDesc, and the plan handle over fft::Plan.
#include "tessera/c/fft.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "capi.hpp"
#include "tessera/fft.hpp"

namespace fft = tessera::fft;

struct tsr_fft_plan_s {
  fft::Plan plan;
};

namespace tessera::capi {
namespace {

// The C enumerators mirror the C++ ones value for value; the conversion relies on it.
static_assert(static_cast<int>(fft::Kind::kC2C) == TSR_FFT_C2C &&
              static_cast<int>(fft::Kind::kR2C) == TSR_FFT_R2C &&
              static_cast<int>(fft::Kind::kC2R) == TSR_FFT_C2R);
static_assert(static_cast<int>(fft::Precision::kSingle) == TSR_FFT_SINGLE &&
              static_cast<int>(fft::Precision::kDouble) == TSR_FFT_DOUBLE);
static_assert(static_cast<int>(fft::Direction::kForward) == TSR_FFT_FORWARD &&
              static_cast<int>(fft::Direction::kInverse) == TSR_FFT_INVERSE);
static_assert(static_cast<int>(fft::Planning::kEstimate) == TSR_FFT_PLANNING_ESTIMATE &&
              static_cast<int>(fft::Planning::kMeasure) == TSR_FFT_PLANNING_MEASURE);

// `name` = `value` when value is in [0, count): "desc->kind = 7 is not a tsr_fft_kind (0 to 2)".
Status check_range(std::string_view name, int value, int count, const char* type_name) {
  if (value >= 0 && value < count) return Status::ok();
  return invalid_argument(std::string(name) + " = " + std::to_string(value) + " is not a " +
                          type_name + " (0 to " + std::to_string(count - 1) + ")");
}

Status check_direction(std::string_view name, int value) {
  if (value == TSR_FFT_FORWARD || value == TSR_FFT_INVERSE) return Status::ok();
  return invalid_argument(std::string(name) + " = " + std::to_string(value) +
                          " is not a tsr_fft_direction (-1 forward, 1 inverse)");
}

Status check_rank(std::string_view name, std::int32_t rank) {
  if (rank >= 1 && rank <= TSR_FFT_MAX_RANK) return Status::ok();
  return invalid_argument(std::string(name) + " = " + std::to_string(rank) + " must be 1, 2 or 3");
}

// All-zero strides are the packed default (an empty vector in C++).
fft::Layout layout_of(const std::int64_t* strides, std::int64_t distance, int rank) {
  fft::Layout l;
  if (std::any_of(strides, strides + rank, [](std::int64_t s) { return s != 0; }))
    l.strides.assign(strides, strides + rank);
  l.distance = distance;
  return l;
}

Result<fft::PlanDesc> to_cpp(const tsr_fft_desc* d) {
  if (d == nullptr) return invalid_argument("desc is null");
  TESSERA_RETURN_IF_ERROR(check_range("desc->kind", d->kind, 3, "tsr_fft_kind"));
  TESSERA_RETURN_IF_ERROR(check_range("desc->precision", d->precision, 2, "tsr_fft_precision"));
  TESSERA_RETURN_IF_ERROR(check_direction("desc->direction", d->direction));
  TESSERA_RETURN_IF_ERROR(check_rank("desc->rank", d->rank));
  TESSERA_RETURN_IF_ERROR(check_range("desc->planning", d->planning, 2, "tsr_fft_planning"));
  if (d->threads < 0)
    return invalid_argument("desc->threads = " + std::to_string(d->threads) + " must be >= 0");
  fft::PlanDesc p;
  p.kind = static_cast<fft::Kind>(static_cast<int>(d->kind));
  p.precision = static_cast<fft::Precision>(static_cast<int>(d->precision));
  p.direction = static_cast<fft::Direction>(static_cast<int>(d->direction));
  p.lengths.assign(d->lengths, d->lengths + d->rank);
  p.batch = d->batch;
  p.in = layout_of(d->in_strides, d->in_distance, d->rank);
  p.out = layout_of(d->out_strides, d->out_distance, d->rank);
  p.in_place = d->in_place != 0;
  p.scale = d->scale;
  p.planning = static_cast<fft::Planning>(static_cast<int>(d->planning));
  return p;
}

Status check_plan(tsr_fft_plan plan) {
  return plan != nullptr ? Status::ok() : invalid_argument("plan is null");
}

}  // namespace
}  // namespace tessera::capi

using tessera::Status;
using tessera::capi::check_result;
using tessera::capi::guard;
namespace capi = tessera::capi;

extern "C" {

TSR_API tsr_status tsr_fft_desc_init(tsr_fft_kind kind, tsr_fft_precision precision, int32_t rank,
                                     const int64_t* lengths, tsr_fft_desc* desc) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_range("kind", kind, 3, "tsr_fft_kind"));
    TESSERA_RETURN_IF_ERROR(capi::check_range("precision", precision, 2, "tsr_fft_precision"));
    TESSERA_RETURN_IF_ERROR(capi::check_rank("rank", rank));
    TESSERA_RETURN_IF_ERROR(check_result(lengths, "lengths"));
    TESSERA_RETURN_IF_ERROR(check_result(desc, "desc"));
    tsr_fft_desc d{};
    d.kind = kind;
    d.precision = precision;
    d.direction = kind == TSR_FFT_C2R ? TSR_FFT_INVERSE : TSR_FFT_FORWARD;
    d.rank = rank;
    std::copy(lengths, lengths + rank, d.lengths);
    d.batch = 1;
    d.scale = 1.0;
    d.planning = TSR_FFT_PLANNING_ESTIMATE;
    *desc = d;
    return Status::ok();
  });
}

TSR_API tsr_status tsr_fft_plan_create(tsr_fft_plan* plan, const tsr_fft_desc* desc) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(plan, "plan"));
    TESSERA_ASSIGN_OR_RETURN(fft::PlanDesc d, capi::to_cpp(desc));
    fft::PlanOptions options;
    options.threads = desc->threads;
    TESSERA_ASSIGN_OR_RETURN(fft::Plan made, fft::Plan::create(d, options));
    *plan = new tsr_fft_plan_s{std::move(made)};
    return Status::ok();
  });
}

TSR_API tsr_status tsr_fft_plan_destroy(tsr_fft_plan plan) {
  delete plan;
  return TSR_STATUS_OK;
}

TSR_API tsr_status tsr_fft_execute(tsr_fft_plan plan, const void* in, void* out) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_plan(plan));
    TESSERA_RETURN_IF_ERROR(check_result(in, "in"));
    TESSERA_RETURN_IF_ERROR(check_result(out, "out"));
    return plan->plan.execute(in, out);
  });
}

TSR_API tsr_status tsr_fft_plan_get_spans(tsr_fft_plan plan, int64_t* input_span,
                                          int64_t* output_span) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_plan(plan));
    TESSERA_RETURN_IF_ERROR(check_result(input_span, "input_span"));
    TESSERA_RETURN_IF_ERROR(check_result(output_span, "output_span"));
    *input_span = plan->plan.input_span();
    *output_span = plan->plan.output_span();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_fft_plan_describe(tsr_fft_plan plan, char* buffer, size_t capacity,
                                         size_t* length) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_plan(plan));
    if (capacity > 0) TESSERA_RETURN_IF_ERROR(check_result(buffer, "buffer"));
    const std::string text = plan->plan.describe();
    if (capacity > 0) {
      const std::size_t n = std::min(capacity - 1, text.size());
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    if (length != nullptr) *length = text.size();
    return Status::ok();
  });
}

}  // extern "C"
