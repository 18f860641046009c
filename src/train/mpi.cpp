// mpi_world() and launched_by_mpi() (train.hpp): MPI_COMM_WORLD as a Communicator. Built with
// MPI when CMake found it (TESSERA_WITH_MPI); otherwise mpi_world() says so.
#include <climits>
#include <cstdlib>
#include <mutex>

#include "tessera/train.hpp"

#if TESSERA_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only: no MPI C++ bindings to link
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tessera::train {

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#if TESSERA_WITH_MPI
namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld(int rank, int size, std::string library) : rank_(rank), size_(size), library_(std::move(library)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "MPI (" + library_ + "), " + std::to_string(size_) + " rank" + (size_ == 1 ? "" : "s"); }
  Status exchange(int to, std::span<const std::byte> send, int from, std::span<std::byte> recv) override {
    if (to >= size_ || from >= size_)
      return invalid_argument("exchange: rank " + std::to_string(to >= size_ ? to : from) + " is not in a world of " + std::to_string(size_));
    // MPI counts are ints: messages over 1 GiB go in pieces.
    constexpr std::size_t kPiece = std::size_t{1} << 30;
    std::size_t sent = 0, got = 0;
    do {
      const std::size_t ns = to < 0 ? 0 : std::min(kPiece, send.size() - sent), nr = from < 0 ? 0 : std::min(kPiece, recv.size() - got);
      const int rc = MPI_Sendrecv(send.data() + sent, static_cast<int>(ns), MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 0, recv.data() + got,
                                  static_cast<int>(nr), MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return internal_error("exchange: MPI_Sendrecv: " + mpi_error(rc));
      sent += ns;
      got += nr;
    } while ((to >= 0 && sent < send.size()) || (from >= 0 && got < recv.size()));
    return Status::ok();
  }
  void abort(const std::string&) override { MPI_Abort(MPI_COMM_WORLD, 1); }

 private:
  int rank_, size_;
  std::string library_;
};

}  // namespace

Result<std::unique_ptr<Communicator>> mpi_world() {
  static std::once_flag once;
  static Status init;
  std::call_once(once, [] {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
      int provided = 0;
      // The gradient buckets are reduced on a thread of their own while the main thread runs
      // the backward pass; never two MPI calls at once (fit waits for the reducer first).
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        init = unavailable("mpi_world: MPI_Init_thread failed");
        return;
      }
      if (provided < MPI_THREAD_SERIALIZED) {
        init = unsupported("mpi_world: the MPI library gives thread level " + std::to_string(provided) + ", below MPI_THREAD_SERIALIZED");
        return;
      }
      std::atexit([] {
        int done = 0;
        MPI_Finalized(&done);
        if (!done) MPI_Finalize();
      });
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  });
  TESSERA_RETURN_IF_ERROR(init);
  int rank = 0, size = 1, len = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Get_library_version(version, &len);
  std::string library(version, static_cast<std::size_t>(len));
  if (const auto comma = library.find(','); comma != std::string::npos) library.resize(comma);
  return std::unique_ptr<Communicator>(std::make_unique<MpiWorld>(rank, size, library));
}

#else

Result<std::unique_ptr<Communicator>> mpi_world() {
  return unsupported("mpi_world: tessera was built without MPI (install libopenmpi-dev and reconfigure)");
}

#endif

}  // namespace tessera::train
