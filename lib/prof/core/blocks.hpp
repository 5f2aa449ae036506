// blocks<T>: values appended in blocks that never move (what a profile's per-model times are
// collected in).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace prof {

// Values appended in blocks that never move: a growing vector copies every value at each
// doubling and holds both copies meanwhile. Blocks grow with the count, 256 to 65536 values.
// An append is a store through a cursor into the last block, which is allocated whole and
// not zero-filled (its values are written before they are read); a block's size is set when
// it is full or the values are read.
template <class T>
class blocks {
public:
    blocks() = default;
    blocks(blocks&& o) noexcept { *this = std::move(o); }
    blocks& operator=(blocks&& o) noexcept {
        o.seal();
        blocks_ = std::move(o.blocks_);
        size_ = o.size_;
        cur_ = end_ = nullptr;
        o.blocks_.clear();
        o.size_ = 0;
        return *this;
    }
    // Inline with the growth out of line: called a few times per row by the harvest.
    [[gnu::always_inline]] void push_back(T d) {
        if (cur_ == end_) [[unlikely]] grow();
        *cur_++ = d;
        ++size_;
    }
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    // Appends each block's values to `out` (median_of_parts' parts).
    void parts(std::vector<std::span<const T>>& out) const {
        seal();
        for (const auto& b : blocks_) out.emplace_back(b.values.get(), b.size);
    }
    // fn(value, other's value at the same index) for every index; `other` holds as many values.
    template <class U, class Fn>
    void for_each_with(const blocks<U>& other, Fn fn) const {
        seal();
        other.seal();
        std::size_t ob = 0, oi = 0;
        for (const auto& b : blocks_)
            for (std::size_t i = 0; i < b.size; ++i) {
                while (oi == other.blocks_[ob].size) ++ob, oi = 0;
                fn(b.values[i], other.blocks_[ob].values[oi++]);
            }
    }
    // Moves other's blocks after these (no value is copied); `other` is left empty.
    void splice(blocks&& other) {
        seal();
        other.seal();
        cur_ = end_ = nullptr;
        for (auto& b : other.blocks_) blocks_.push_back(std::move(b));
        size_ += other.size_;
        other.blocks_.clear();
        other.size_ = 0;
    }

private:
    template <class>
    friend class blocks;  // for_each_with reads the other's blocks too
    struct block {
        std::unique_ptr<T[]> values;
        std::size_t size = 0;
    };
    // The last block's size set to the values it holds. Appends after it start a new block.
    // (Logically const: the values do not change.)
    void seal() const {
        if (!cur_) return;
        block& last = blocks_.back();
        last.size = static_cast<std::size_t>(cur_ - last.values.get());
        cur_ = end_ = nullptr;
    }
    [[gnu::noinline]] void grow() {
        seal();
        const std::size_t n = std::clamp<std::size_t>(size_, 256, 65536);
        blocks_.push_back({std::unique_ptr<T[]>(new T[n]), 0});  // default-initialised: not zeroed
        cur_ = blocks_.back().values.get();
        end_ = cur_ + n;
    }
    mutable std::vector<block> blocks_;
    std::size_t size_ = 0;
    mutable T* cur_ = nullptr;
    mutable T* end_ = nullptr;
};
using value_blocks = blocks<double>;

}  // namespace prof
