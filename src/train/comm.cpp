// The collectives of data parallelism over a Communicator's exchange (train.hpp): ring
// all-reduce and broadcast; a single-process communicator and a group whose ranks are threads.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>

#include "tessera/train.hpp"

namespace tessera::train {
namespace {

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "single process"; }
  Status exchange(int to, std::span<const std::byte> send, int from, std::span<std::byte> recv) override {
    if (to < 0 && from < 0) return Status::ok();
    if (to != 0 || from != 0) return invalid_argument("exchange: a single process sends to itself only with a receive from itself");
    if (send.size() != recv.size()) return invalid_argument("exchange: " + std::to_string(send.size()) + " bytes sent to itself, " + std::to_string(recv.size()) + " expected");
    if (!send.empty()) std::memmove(recv.data(), send.data(), send.size());
    return Status::ok();
  }
  void abort(const std::string&) override {}
};

// Messages between the threads of a group: a queue per (from, to) pair. A send never waits
// (the message is queued), so a ring of exchanges cannot deadlock.
struct Mailboxes {
  explicit Mailboxes(int ranks) : n(ranks), queues(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)) {}
  int n;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::deque<std::vector<std::byte>>> queues;  // [from * n + to]
  std::string aborted;                                      // why, once a rank aborted
};

class ThreadRank final : public Communicator {
 public:
  ThreadRank(std::shared_ptr<Mailboxes> m, int rank) : m_(std::move(m)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return m_->n; }
  std::string name() const override { return "thread group of " + std::to_string(m_->n); }
  Status exchange(int to, std::span<const std::byte> send, int from, std::span<std::byte> recv) override {
    if (to >= m_->n || from >= m_->n)
      return invalid_argument("exchange: rank " + std::to_string(to >= m_->n ? to : from) + " is not in a group of " + std::to_string(m_->n));
    std::unique_lock<std::mutex> lock(m_->mu);
    if (!m_->aborted.empty()) return internal_error("exchange: " + m_->aborted);
    if (to >= 0) {
      m_->queues[index(rank_, to)].emplace_back(send.begin(), send.end());
      m_->cv.notify_all();
    }
    if (from < 0) return Status::ok();
    auto& q = m_->queues[index(from, rank_)];
    m_->cv.wait(lock, [&] { return !q.empty() || !m_->aborted.empty(); });
    if (q.empty()) return internal_error("exchange: " + m_->aborted);
    std::vector<std::byte> msg = std::move(q.front());
    q.pop_front();
    if (msg.size() != recv.size())
      return internal_error("exchange: rank " + std::to_string(from) + " sent " + std::to_string(msg.size()) + " bytes to rank " + std::to_string(rank_) +
                            ", which expected " + std::to_string(recv.size()));
    if (!msg.empty()) std::memcpy(recv.data(), msg.data(), msg.size());
    return Status::ok();
  }
  void abort(const std::string& why) override {
    const std::lock_guard<std::mutex> lock(m_->mu);
    if (m_->aborted.empty()) m_->aborted = "rank " + std::to_string(rank_) + " aborted: " + why;
    m_->cv.notify_all();
  }

 private:
  std::size_t index(int from, int to) const { return static_cast<std::size_t>(from) * static_cast<std::size_t>(m_->n) + static_cast<std::size_t>(to); }
  std::shared_ptr<Mailboxes> m_;
  int rank_;
};

// Ring all-reduce: chunk c is [len c / n, len (c + 1) / n). Reduce-scatter: at step s rank r
// sends its partial sum of chunk (r - s) to r + 1 and adds the one of chunk (r - s - 1) from
// r - 1, so after n - 1 steps rank r holds the whole sum of chunk (r + 1); all-gather passes
// the finished chunks round the ring.
template <class T>
Status ring_all_reduce(Communicator& c, std::span<T> data) {
  const int n = c.size(), r = c.rank();
  if (n == 1) return Status::ok();
  const std::size_t len = data.size();
  const auto chunk = [&](int k) {
    const std::size_t kk = static_cast<std::size_t>((k % n + n) % n), nn = static_cast<std::size_t>(n);
    const std::size_t b = len * kk / nn, e = len * (kk + 1) / nn;
    return data.subspan(b, e - b);
  };
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  std::vector<T> tmp(len / static_cast<std::size_t>(n) + 1);
  for (int s = 0; s + 1 < n; ++s) {
    const std::span<T> out = chunk(r - s), in = chunk(r - s - 1);
    TESSERA_RETURN_IF_ERROR(c.exchange(next, std::as_bytes(out), prev, std::as_writable_bytes(std::span<T>(tmp.data(), in.size()))));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = tmp[i] + in[i];
  }
  for (int s = 0; s + 1 < n; ++s) {
    const std::span<T> out = chunk(r + 1 - s), in = chunk(r - s);
    TESSERA_RETURN_IF_ERROR(c.exchange(next, std::as_bytes(out), prev, std::as_writable_bytes(in)));
  }
  return Status::ok();
}

}  // namespace

std::unique_ptr<Communicator> single_process() { return std::make_unique<SingleProcess>(); }

std::vector<std::unique_ptr<Communicator>> thread_group(int n) {
  std::vector<std::unique_ptr<Communicator>> g;
  if (n < 1) return g;
  auto m = std::make_shared<Mailboxes>(n);
  for (int r = 0; r < n; ++r) g.push_back(std::make_unique<ThreadRank>(m, r));
  return g;
}

Status all_reduce_sum(Communicator& c, std::span<float> data) { return ring_all_reduce(c, data).with_context("all_reduce_sum"); }
Status all_reduce_sum(Communicator& c, std::span<double> data) { return ring_all_reduce(c, data).with_context("all_reduce_sum"); }

Status broadcast(Communicator& c, std::span<std::byte> data, int root) {
  const int n = c.size(), r = c.rank();
  if (root < 0 || root >= n) return invalid_argument("broadcast: root " + std::to_string(root) + " is not in a group of " + std::to_string(n));
  if (n == 1) return Status::ok();
  // Rank root + k receives from root + k - 1 and passes on to root + k + 1.
  const int k = (r - root + n) % n, next = (r + 1) % n, prev = (r + n - 1) % n;
  if (k > 0) TESSERA_RETURN_IF_ERROR(c.exchange(-1, {}, prev, data).with_context("broadcast"));
  if (k + 1 < n) TESSERA_RETURN_IF_ERROR(c.exchange(next, data, -1, {}).with_context("broadcast"));
  return Status::ok();
}

}  // namespace tessera::train
