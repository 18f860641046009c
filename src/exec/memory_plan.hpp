// Memory planning: one arena for the tensors the nodes write, with offsets chosen so that
// tensors whose lifetimes overlap never share bytes and the others do.
//
// What a value needs is learned from a run (the sizes of that input signature, which outputs
// are views of an input, which kernels write into the output they are given), then:
//   - lifetimes: a value lives from the node that writes it to the last node that reads it or
//     any view of it, itself or through its subgraphs (a view of a graph output, or a graph
//     output itself, to the end);
//   - in place: a node's output takes the slot of an input of the same bytes that dies at that
//     node, where the op's kernel allows it (elementwise ops, the fused convolution's residual);
//   - placement: slots by size, largest first, each at the lowest 64-byte aligned offset that
//     overlaps no placed slot live at the same time (greedy by size).
// Graph outputs are never planned (they are handed to the caller); neither are values a kernel
// allocates itself, nor views (they live in their root's slot).
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::exec::detail {

// What a run showed about one value.
struct ValueUse {
  std::size_t bytes = 0;                    // the tensor's bytes (packed)
  graph::ValueId view_of = graph::kNoValue;  // the value whose memory this one is a view of
  bool plannable = false;                   // written by a node into the output it was given
};

struct MemoryPlan {
  static constexpr std::int64_t kNone = -1;
  std::vector<std::int64_t> offset;  // per value: its slot's byte offset in the arena, or kNone
  std::vector<int> slot;             // per value: its slot, or -1 (several values share one in place)
  std::vector<std::size_t> slot_bytes;
  std::size_t arena_bytes = 0;
  std::size_t naive_bytes = 0;      // the sum of every tensor the nodes write (views excluded)
  std::size_t unplanned_bytes = 0;  // ... of those, allocated by their kernels, outside the arena
  int planned = 0, in_place = 0, views = 0;
};

// Whether node n's kernel may write its output over input k (the same bytes, exactly).
bool may_overwrite(const graph::Node& n, std::size_t k);

// The plan for graph g given what a run showed per value (`use`, indexed by value id). With
// `wave_of` (per node: its wave, when the nodes of a wave run at once), lifetimes count in
// waves, both ends included, so values of one wave never share memory, and a node writes in
// place only over an input no other node of its wave reads.
MemoryPlan plan_memory(const graph::Graph& g, const std::vector<ValueUse>& use, std::span<const int> wave_of = {});

}  // namespace tessera::exec::detail
