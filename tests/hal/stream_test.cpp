#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include <tessera/core/thread_pool.hpp>
#include <tessera/hal/hal.hpp>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::value_or_fail;

std::unique_ptr<hal::Stream> new_stream() {
  return value_or_fail(hal::cpu_device().create_stream());
}
std::unique_ptr<hal::Event> new_event() {
  return value_or_fail(hal::cpu_device().create_event());
}

TEST(CpuStream, RunsTasksInOrder) {
  auto s = new_stream();
  std::vector<int> order;
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(s->enqueue([&order, i] {
                   order.push_back(i);
                   return Status::ok();
                 }).is_ok());
  ASSERT_TRUE(s->synchronize().is_ok());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(CpuStream, TasksUseTheThreadPool) {
  auto s = new_stream();
  std::atomic<std::int64_t> n{0};
  ASSERT_TRUE(s->enqueue([&] {
                 thread_pool().parallel_for(0, 1000, 1,
                                            [&](std::int64_t b, std::int64_t e) { n += e - b; });
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(s->synchronize().is_ok());
  EXPECT_EQ(n.load(), 1000);
}

TEST(CpuStream, FailureSkipsLaterTasksUntilReported) {
  auto s = new_stream();
  bool ran_after = false;
  ASSERT_TRUE(s->enqueue([] { return invalid_argument("task 1 failed"); }).is_ok());
  ASSERT_TRUE(s->enqueue([&] {
                 ran_after = true;
                 return Status::ok();
               }).is_ok());
  Status st = s->synchronize();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "task 1 failed");
  EXPECT_FALSE(ran_after);
  EXPECT_TRUE(s->synchronize().is_ok()) << "the error is cleared once reported";
  ASSERT_TRUE(s->enqueue([]() -> Status { throw std::runtime_error("boom"); }).is_ok());
  st = s->synchronize();
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("boom"), std::string::npos);
  EXPECT_EQ(s->enqueue(nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(CpuStream, CopyAndZeroSize) {
  auto s = new_stream();
  std::vector<int> a{1, 2, 3}, b(3, 0);
  ASSERT_TRUE(s->copy(b.data(), a.data(), 3 * sizeof(int)).is_ok());
  ASSERT_TRUE(s->copy(nullptr, nullptr, 0).is_ok());
  EXPECT_EQ(s->copy(nullptr, a.data(), 4).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(s->synchronize().is_ok());
  EXPECT_EQ(b, a);
}

TEST(CpuEvent, RecordQueryElapsed) {
  auto s = new_stream();
  auto start = new_event(), stop = new_event();
  EXPECT_TRUE(start->query()) << "an event never recorded counts as complete";
  EXPECT_FALSE(stop->elapsed_ms_since(*start).is_ok());
  std::atomic<bool> release{false};
  ASSERT_TRUE(s->record(*start).is_ok());
  ASSERT_TRUE(s->enqueue([&] {
                 while (!release) std::this_thread::yield();
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(s->record(*stop).is_ok());
  EXPECT_FALSE(stop->query()) << "the task before it has not finished";
  release = true;
  ASSERT_TRUE(stop->synchronize().is_ok());
  EXPECT_TRUE(stop->query());
  double ms = value_or_fail(stop->elapsed_ms_since(*start));
  EXPECT_GE(ms, 0.0);
}

TEST(CpuEvent, StreamWaitOrdersTwoStreams) {
  auto producer = new_stream(), consumer = new_stream();
  auto ready = new_event();
  std::atomic<bool> release{false};
  int value = 0, seen = -1;
  ASSERT_TRUE(producer
                  ->enqueue([&] {
                    while (!release) std::this_thread::yield();
                    value = 42;
                    return Status::ok();
                  })
                  .is_ok());
  ASSERT_TRUE(producer->record(*ready).is_ok());
  ASSERT_TRUE(consumer->wait(*ready).is_ok());
  ASSERT_TRUE(consumer
                  ->enqueue([&] {
                    seen = value;
                    return Status::ok();
                  })
                  .is_ok());
  release = true;
  ASSERT_TRUE(consumer->synchronize().is_ok());
  EXPECT_EQ(seen, 42);
  ASSERT_TRUE(producer->synchronize().is_ok());
}

TEST(CpuEvent, MarkersCompleteEvenWhenTheStreamFailed) {
  auto s = new_stream();
  auto e = new_event();
  ASSERT_TRUE(s->enqueue([] { return internal_error("x"); }).is_ok());
  ASSERT_TRUE(s->record(*e).is_ok());
  ASSERT_TRUE(e->synchronize().is_ok());
  EXPECT_EQ(s->synchronize().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace tessera
