#pragma once
// A flat hash index from 64-bit block keys to cache-entry ids (open addressing, linear probing, backward-shift
// deletion): the KV block manager's lookup for blocks cached by content hash. It grows by doubling and never
// shrinks, so once it holds as many keys as the run caches at once (at most the KV blocks) inserting and erasing
// allocate nothing — unlike std::unordered_map, which allocates a node per insertion.
#include <cstdint>
#include <vector>

namespace llmsim::engine {

class BlockHashIndex {
 public:
  /// The id stored for `key`, or -1.
  std::int32_t find(std::uint64_t key) const noexcept {
    if (slots_.empty()) return -1;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.key == key) return s.id;
    }
  }
  /// Stores `id` (>= 0) for `key`, which must be absent.
  void insert(std::uint64_t key, std::int32_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    while (slots_[i].id >= 0) i = (i + 1) & mask_;
    slots_[i] = Slot{key, id};
    ++size_;
  }
  /// Removes `key` if present.
  void erase(std::uint64_t key) noexcept {
    if (slots_.empty()) return;
    std::size_t i = home(key);
    while (slots_[i].id >= 0 && slots_[i].key != key) i = (i + 1) & mask_;
    if (slots_[i].id < 0) return;
    // Backward shift: move later members of the probe run into the hole so every lookup still finds them.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].id >= 0; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      // Move j to the hole unless its home lies cyclically in (hole, j].
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].id = -1;
    --size_;
  }
  std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::int32_t id = -1;
  };
  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask_;  // keys are hashes; spread anyway
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.id >= 0) insert(s.key, s.id);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
};

}  // namespace llmsim::engine
