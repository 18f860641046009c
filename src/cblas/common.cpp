#include "common.hpp"

#include <cstdarg>
#include <cstdio>

// The default error handler: weak, so a program's own cblas_xerbla replaces it.
extern "C" __attribute__((weak, visibility("default"))) void cblas_xerbla(CBLAS_INT p,
                                                                          const char* rout,
                                                                          const char* form, ...) {
  if (p > 0)
    std::fprintf(stderr, "tessera cblas: parameter %d to %s was invalid: ", p, rout);
  else
    std::fprintf(stderr, "tessera cblas: %s failed: ", rout);
  std::va_list args;
  va_start(args, form);
  std::vfprintf(stderr, form, args);
  va_end(args);
}

namespace tessera::cblas {
namespace {

// Builds the message (which may allocate) without letting an exception escape.
template <typename Msg>
bool report(const Args& args, int p, Msg&& msg) noexcept {
  try {
    const std::string text = msg();
    return args.fail(p, text.c_str());
  } catch (...) {
    return args.fail(p, "invalid value");
  }
}

std::string str(int v) {
  return std::to_string(v);
}

}  // namespace

blas::Handle& thread_handle() {
  thread_local blas::Handle handle;
  return handle;
}

bool Args::fail(int p, const char* message) const noexcept {
  cblas_xerbla(p, routine_, "%s\n", message);
  return false;
}

bool Args::layout(int p, CBLAS_LAYOUT v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasRowMajor || x == CblasColMajor) return true;
  return report(*this, p, [&] {
    return "layout = " + str(x) + " is not CblasRowMajor (101) or CblasColMajor (102)";
  });
}

bool Args::trans(int p, const char* name, CBLAS_TRANSPOSE v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasNoTrans || x == CblasTrans || x == CblasConjTrans) return true;
  return report(*this, p, [&] {
    return std::string(name) + " = " + str(x) +
           " is not CblasNoTrans (111), CblasTrans (112) or CblasConjTrans (113)";
  });
}

bool Args::trans_no_conj(int p, const char* name, CBLAS_TRANSPOSE v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasNoTrans || x == CblasTrans) return true;
  return report(*this, p, [&] {
    return std::string(name) + " = " + str(x) + " is not CblasNoTrans (111) or CblasTrans (112)";
  });
}

bool Args::uplo(int p, CBLAS_UPLO v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasUpper || x == CblasLower) return true;
  return report(*this, p, [&] {
    return "Uplo = " + str(x) + " is not CblasUpper (121) or CblasLower (122)";
  });
}

bool Args::diag(int p, CBLAS_DIAG v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasNonUnit || x == CblasUnit) return true;
  return report(*this, p, [&] {
    return "Diag = " + str(x) + " is not CblasNonUnit (131) or CblasUnit (132)";
  });
}

bool Args::side(int p, CBLAS_SIDE v) const noexcept {
  const int x = static_cast<int>(v);
  if (x == CblasLeft || x == CblasRight) return true;
  return report(*this, p,
                [&] { return "Side = " + str(x) + " is not CblasLeft (141) or CblasRight (142)"; });
}

bool Args::size(int p, const char* name, int v) const noexcept {
  if (v >= 0) return true;
  return report(*this, p, [&] { return std::string(name) + " = " + str(v) + " must be >= 0"; });
}

bool Args::ld(int p, const char* name, int v, CBLAS_LAYOUT layout, const char* rows_name, int rows,
              const char* cols_name, int cols) const noexcept {
  const bool row = row_major(layout);
  const int need = std::max(1, row ? cols : rows);
  if (v >= need) return true;
  return report(*this, p, [&] {
    return std::string(name) + " = " + str(v) + " must be >= max(1, " +
           (row ? cols_name : rows_name) + ") = " + str(need) +
           (row ? " (row-major)" : " (column-major)");
  });
}

bool Args::inc(int p, const char* name, int v) const noexcept {
  if (v != 0) return true;
  return report(*this, p, [&] { return std::string(name) + " must not be 0"; });
}

bool Args::ptr(int p, const char* name, const void* v, bool needed) const noexcept {
  if (v != nullptr || !needed) return true;
  return report(*this, p, [&] { return std::string(name) + " is null"; });
}

}  // namespace tessera::cblas
